//! Quantiles of a sample, the median among them, by one rule everywhere: linear interpolation
//! between order statistics, Hyndman and Fan's definition 7 ("Sample Quantiles in Statistical
//! Packages", 1996). With the n values sorted as x_0 ≤ … ≤ x_(n-1), the q-quantile is
//! x_j + (h - j)(x_(j+1) - x_j) where h = (n - 1)q and j = ⌊h⌋.
//!
//! It is R's `quantile` default (type 7) and numpy's (`method="linear"`), so any figure here can
//! be checked against either; quantile 0 is the minimum and 1 the maximum, every quantile lies
//! between two values that occurred, it moves continuously with q, and quantile 0.5 is the
//! textbook median (the middle value, or the mean of the two middle ones).
//!
//! A q outside [0, 1] (or NaN) has no quantile: `None`, as for an empty sample, rather than a
//! clamped figure that would hide the caller's mistake. Values are ordered by `f64::total_cmp`;
//! the samples measured here are finite.

/// The q-quantile of `xs` (any order); none when `xs` is empty or q is outside [0, 1].
pub fn quantile(xs: &[f64], q: f64) -> Option<f64> {
    if xs.is_empty() || !valid(q) {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile_sorted(&sorted, q)
}

/// The q-quantile of values sorted ascending (by `f64::total_cmp`); none when `sorted` is empty
/// or q is outside [0, 1].
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    debug_assert!(
        sorted.is_sorted_by(|a, b| a.total_cmp(b).is_le()),
        "quantile_sorted needs sorted values"
    );
    let (j, t) = position(sorted.len() as u64, q)?;
    let j = j as usize;
    let next = (j + 1).min(sorted.len() - 1);
    Some(between(sorted[j], sorted[next], t))
}

/// The median of `xs` (any order): quantile 0.5, the middle value or the mean of the two middle
/// ones; none when `xs` is empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    quantile(xs, 0.5)
}

fn valid(q: f64) -> bool {
    (0.0..=1.0).contains(&q)
}

/// Where the q-quantile of `n` sorted values lies: the zero-based index j of the order statistic
/// at or below it, and the fraction t of the way to the next one. None for no values or q
/// outside [0, 1].
pub(crate) fn position(n: u64, q: f64) -> Option<(u64, f64)> {
    if n == 0 || !valid(q) {
        return None;
    }
    let h = (n - 1) as f64 * q;
    let j = h.floor();
    // (n - 1)q never exceeds n - 1 for q ≤ 1; the min guards the index all the same.
    Some(((j as u64).min(n - 1), h - j))
}

/// The point a fraction `t` (0..=1) of the way from `a` to `b` (a ≤ b), never outside [a, b] and
/// never decreasing in t. a + t(b - a) is monotone in t; when b - a overflows (a and b of
/// opposite signs near the largest f64) the weighted form (1 - t)a + tb, whose two terms are
/// each monotone in t for a ≤ 0 ≤ b, stands in for it. Rounding can still step a last bit past
/// an end, which the bounds take back.
pub(crate) fn between(a: f64, b: f64, t: f64) -> f64 {
    if t == 0.0 || a == b {
        return a;
    }
    let d = b - a;
    let x = if d.is_finite() {
        a + t * d
    } else {
        (1.0 - t) * a + t * b
    };
    // max/min rather than clamp: clamp panics on NaN bounds, and a NaN in the sample is the
    // caller's to see, not a panic.
    x.max(a).min(b)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    const QS: [f64; 8] = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0];

    fn assert_quantiles(xs: &[f64], want: [f64; 8]) {
        for (q, w) in QS.into_iter().zip(want) {
            let got = quantile(xs, q).unwrap();
            assert!(
                (got - w).abs() <= 1e-12 * w.abs().max(1.0),
                "q {q}: {got} != {w}"
            );
        }
    }

    // R's `sleep` data, group 1 (Student 1908). numpy 2.4.6:
    // np.quantile(x, [0, .1, .25, .5, .75, .9, .99, 1]) =
    // [-1.6, -1.24, -0.175, 0.35, 1.7, 3.43, 3.673, 3.7]; R's quantile(x, type = 7) agrees.
    #[test]
    fn sleep_group_one_as_numpy_gives_it() {
        let x = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        assert_quantiles(&x, [-1.6, -1.24, -0.175, 0.35, 1.7, 3.43, 3.673, 3.7]);
        assert_eq!(median(&x), Some(0.35));
    }

    // numpy 2.4.6: np.quantile([1, 2, 3, 4], QS) = [1, 1.3, 1.75, 2.5, 3.25, 3.7, 3.97, 4];
    // with ties, np.quantile([5, 1, 5, 5, 2, 9], QS) = [1, 1.5, 2.75, 5, 5, 7, 8.8, 9].
    #[test]
    fn small_samples_and_ties_as_numpy_gives_them() {
        assert_quantiles(
            &[1.0, 2.0, 3.0, 4.0],
            [1.0, 1.3, 1.75, 2.5, 3.25, 3.7, 3.97, 4.0],
        );
        assert_quantiles(
            &[5.0, 1.0, 5.0, 5.0, 2.0, 9.0],
            [1.0, 1.5, 2.75, 5.0, 5.0, 7.0, 8.8, 9.0],
        );
        // 1..=100: np.quantile gives 50.5 and 99.01 (nearest rank would give 50 and 99).
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile_sorted(&v, 0.5), Some(50.5));
        assert!((quantile_sorted(&v, 0.99).unwrap() - 99.01).abs() < 1e-12);
    }

    #[test]
    fn nothing_from_an_empty_sample_or_a_q_outside_zero_to_one() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(median(&[]), None);
        for q in [-0.01, 1.01, f64::NAN, f64::INFINITY] {
            assert_eq!(quantile(&[1.0, 2.0], q), None, "{q}");
        }
        assert_eq!(quantile(&[7.0], 0.99), Some(7.0));
    }

    #[test]
    fn values_near_the_largest_f64_do_not_overflow() {
        let (a, b) = (-f64::MAX, f64::MAX);
        assert_eq!(median(&[a, b]), Some(0.0));
        let q = quantile(&[a, b], 0.75).unwrap();
        assert!(q > 0.0 && q < b, "{q}");
    }

    /// The textbook median: the middle value, or the mean of the two middle ones (halved first,
    /// so that two values near the largest f64 do not overflow); and the larger magnitude of the
    /// values it comes from, the scale of its rounding error.
    fn textbook_median(xs: &[f64]) -> (f64, f64) {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            (v[n / 2], 0.0)
        } else {
            let (a, b) = (v[n / 2 - 1], v[n / 2]);
            (a / 2.0 + b / 2.0, a.abs().max(b.abs()))
        }
    }

    fn finite_sample() -> impl Strategy<Value = Vec<f64>> {
        use proptest::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
        let value = prop_oneof![
            -1e6..1e6f64,
            // Small integers: ties.
            (-5i32..5).prop_map(f64::from),
            POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
        ];
        proptest::collection::vec(value, 1..60)
    }

    /// A q anywhere in [0, 1], often at or next to an end, where a bucket's or an
    /// interpolation's rounding would step outside the sample.
    pub(crate) fn any_q() -> impl Strategy<Value = f64> {
        prop_oneof![
            0.0..=1.0f64,
            Just(0.0),
            Just(1.0),
            (1.0 - 1e-9)..1.0f64,
            0.0..1e-9f64,
        ]
    }

    proptest! {
        #[test]
        fn quantiles_lie_within_the_sample_and_rise_with_q(
            xs in finite_sample(),
            mut qs in proptest::collection::vec(any_q(), 1..12),
        ) {
            let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            qs.sort_by(f64::total_cmp);
            let got: Vec<f64> = qs.iter().map(|&q| quantile(&xs, q).unwrap()).collect();
            for (q, v) in qs.iter().zip(&got) {
                prop_assert!(min <= *v && *v <= max, "q {} gave {} outside [{}, {}]", q, v, min, max);
            }
            for w in got.windows(2) {
                prop_assert!(w[0] <= w[1], "not monotone: {:?} at {:?}", got, qs);
            }
            prop_assert_eq!(quantile(&xs, 0.0), Some(min));
            prop_assert_eq!(quantile(&xs, 1.0), Some(max));
        }

        #[test]
        fn the_median_is_the_textbook_one(xs in finite_sample()) {
            let m = median(&xs).unwrap();
            let (want, scale) = textbook_median(&xs);
            // Interpolating halfway (x_j + (x_(j+1) - x_j) / 2) and averaging round differently:
            // a few ulps of the larger middle value, and a subnormal ulp per halving.
            let tol = 4.0 * f64::EPSILON * scale + 2.0 * f64::from_bits(1);
            prop_assert!((m - want).abs() <= tol, "median {} against {}", m, want);
        }
    }
}
