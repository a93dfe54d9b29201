//! Quantiles of values kept only as counts in buckets (an hdrhistogram, a fixed-width
//! histogram), by the rule of [`crate::quantile`]: the bucketed sample is taken as each bucket's
//! count of copies of one value standing for the bucket, and interpolated as a sample would be.
//!
//! A bucket's value is not a value that was recorded: the top of hdrhistogram's bucket (what
//! its `value_at_quantile` returns) can exceed the largest recorded value, so a p99 above the
//! maximum. Where the caller keeps the exact extremes, the quantile is clamped into them:
//! whatever the buckets' resolution, a quantile then never lies outside [min, max].

use hdrhistogram::{Counter, Histogram};

use crate::quantile::{between, position};

/// The q-quantile of a bucketed sample: `buckets` yields (value, count) with the values
/// ascending, each bucket's values all taken as its value. None when the counts add up to 0 or
/// q is outside [0, 1].
pub fn quantile_of_buckets<I>(buckets: I, q: f64) -> Option<f64>
where
    I: IntoIterator<Item = (f64, u64)>,
    I::IntoIter: Clone,
{
    let buckets = buckets.into_iter();
    let n: u64 = buckets.clone().map(|(_, c)| c).sum();
    let (j, t) = position(n, q)?;
    // The order statistics x_j and x_(j+1): the values of the buckets holding them.
    let (mut below, mut at_j, mut at_next) = (0u64, None, None);
    for (value, count) in buckets {
        below += count;
        if at_j.is_none() && below > j {
            at_j = Some(value);
        }
        if below > (j + 1).min(n - 1) {
            at_next = Some(value);
            break;
        }
    }
    Some(between(at_j?, at_next?, t))
}

/// `value` brought into [min, max], the extremes of what was recorded: a quantile read from
/// buckets, moved back inside the sample it describes.
pub fn clamp_to_observed(value: f64, min: f64, max: f64) -> f64 {
    debug_assert!(min <= max, "clamp_to_observed: min {min} above max {max}");
    value.max(min).min(max)
}

/// The q-quantile of the values recorded in `histogram`, each bucket standing for its values
/// by its middle (hdrhistogram's `median_equivalent`, as its `mean` takes it), clamped into
/// [min, max]: the smallest and largest values recorded, which the caller keeps exactly. None
/// when nothing was recorded or q is outside [0, 1].
pub fn histogram_quantile<T: Counter>(
    histogram: &Histogram<T>,
    q: f64,
    min: u64,
    max: u64,
) -> Option<f64> {
    let buckets = histogram.iter_recorded().map(|v| {
        (
            histogram.median_equivalent(v.value_iterated_to()) as f64,
            v.count_at_value().as_u64(),
        )
    });
    // The iterator borrows the histogram and is not Clone: the non-empty buckets are few.
    let buckets: Vec<(f64, u64)> = buckets.collect();
    quantile_of_buckets(buckets, q).map(|v| clamp_to_observed(v, min as f64, max as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile::tests::any_q;
    use proptest::prelude::*;

    fn histogram() -> Histogram<u64> {
        // arum's duration histograms: 1 ns to an hour, 3 significant digits.
        Histogram::new_with_bounds(1, 3_600_000_000_000, 3).unwrap()
    }

    #[test]
    fn buckets_of_single_values_are_the_sample_itself() {
        // Each value in a bucket of its own: the same figures as numpy 2.4.6's
        // np.quantile([5, 1, 5, 5, 2, 9], [.1, .25, .5, .9, .99]) = [1.5, 2.75, 5, 7, 8.8].
        let buckets = [(1.0, 1), (2.0, 1), (5.0, 3), (9.0, 1)];
        for (q, want) in [
            (0.1, 1.5),
            (0.25, 2.75),
            (0.5, 5.0),
            (0.9, 7.0),
            (0.99, 8.8),
        ] {
            let got = quantile_of_buckets(buckets, q).unwrap();
            assert!((got - want).abs() < 1e-12, "q {q}: {got} != {want}");
        }
        assert_eq!(quantile_of_buckets([(3.0, 0)], 0.5), None);
        assert_eq!(quantile_of_buckets(buckets, 1.5), None);
    }

    #[test]
    fn a_bucket_above_the_largest_value_is_brought_back_to_it() {
        // 99,970 falls in the bucket 99,968..=100,031 (64 wide near 100,000 at 3 significant
        // digits): hdrhistogram's 99th percentile is the bucket's top, its middle is 100,000,
        // both above anything recorded.
        let mut h = histogram();
        for v in 1..=90u64 {
            h.record(v * 1000).unwrap();
        }
        h.record_n(99_970, 10).unwrap();
        assert_eq!(h.value_at_quantile(0.99), 100_031);
        assert_eq!(h.median_equivalent(99_970), 100_000);
        assert_eq!(histogram_quantile(&h, 0.99, 1000, 99_970), Some(99_970.0));
        assert_eq!(histogram_quantile(&h, 1.0, 1000, 99_970), Some(99_970.0));
        // Below the top bucket, the buckets' middles interpolated: halfway from x_49 = 50,000
        // to x_50 = 51,000, each within half a bucket (16) at this magnitude.
        let p50 = histogram_quantile(&h, 0.5, 1000, 99_970).unwrap();
        assert!((p50 - 50_500.0).abs() <= 16.0, "{p50}");
        assert_eq!(histogram_quantile(&histogram(), 0.5, 0, 0), None);
    }

    #[test]
    fn a_histogram_median_is_within_its_resolution() {
        // 1..=1000 µs: the median 500.5 µs, to 3 significant digits.
        let mut h = histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let p50 = histogram_quantile(&h, 0.5, 1000, 1_000_000).unwrap();
        assert!((p50 - 500_500.0).abs() / 500_500.0 < 1e-3, "{p50}");
    }

    proptest! {
        #[test]
        fn histogram_quantiles_lie_within_the_recorded_values_and_rise_with_q(
            values in proptest::collection::vec(1u64..3_600_000_000_000, 1..200),
            mut qs in proptest::collection::vec(any_q(), 1..12),
        ) {
            let mut h = histogram();
            for &v in &values {
                h.record(v).unwrap();
            }
            let (min, max) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
            qs.sort_by(f64::total_cmp);
            let got: Vec<f64> =
                qs.iter().map(|&q| histogram_quantile(&h, q, min, max).unwrap()).collect();
            for v in &got {
                prop_assert!(min as f64 <= *v && *v <= max as f64, "{} outside [{}, {}]", v, min, max);
            }
            for w in got.windows(2) {
                prop_assert!(w[0] <= w[1], "not monotone: {:?} at {:?}", got, qs);
            }
            // Within the histogram's resolution (3 digits) of the sample's own quantile.
            let exact: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            for (q, v) in qs.iter().zip(&got) {
                let want = crate::quantile(&exact, *q).unwrap();
                prop_assert!((v - want).abs() <= 1e-3 * want, "q {}: {} against {}", q, v, want);
            }
        }
    }
}
