//! The confidence interval of a median from order statistics alone, assuming no distribution:
//! of n independent values, the number B below the population median is Binomial(n, 1/2), and
//! the sorted values x_0 ≤ … ≤ x_(n-1) have x_j ≤ median exactly when B > j. So [x_j, x_(n-1-j)]
//! covers the median with probability 1 - 2·P(B ≤ j), and the narrowest interval at a level is
//! the one with the largest j for which that is at least the level. (Conover, "Practical
//! Nonparametric Statistics", section 3.2.)

use crate::confidence::Interval;

/// The zero-based ranks (j, n-1-j) of the narrowest order-statistic interval that covers the
/// median of `n` values with probability at least `level`; with too few values to reach
/// `level` (n < 5 at 90%, n < 6 at 95%), the whole range (0, n - 1). None for no values.
pub fn median_interval_ranks(n: usize, level: f64) -> Option<(usize, usize)> {
    if n == 0 {
        return None;
    }
    // The lower end is x_j for the largest j with P(B ≤ j) ≤ (1 - level) / 2. The binomial
    // probabilities are accumulated in the log domain: 2^-n underflows beyond n = 1074.
    let alpha = (1.0 - level) / 2.0;
    let mut ln_pmf = -(n as f64) * std::f64::consts::LN_2; // ln P(B = 0)
    let mut cdf = ln_pmf.exp();
    let mut lower = 0;
    for i in 0..n / 2 {
        if cdf > alpha {
            break;
        }
        lower = i;
        // P(B = i + 1) = P(B = i) · (n - i) / (i + 1)
        ln_pmf += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        cdf += ln_pmf.exp();
    }
    Some((lower, n - 1 - lower))
}

/// The confidence interval of the median of `xs` (any order) at `level`, as
/// [`median_interval_ranks`] gives it; none for no values.
pub fn median_interval(xs: &[f64], level: f64) -> Option<Interval> {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    median_interval_sorted(&sorted, level)
}

/// [`median_interval`] of values sorted ascending (by `f64::total_cmp`).
pub fn median_interval_sorted(sorted: &[f64], level: f64) -> Option<Interval> {
    debug_assert!(
        sorted.is_sorted_by(|a, b| a.total_cmp(b).is_le()),
        "median_interval_sorted needs sorted values"
    );
    let (lo, hi) = median_interval_ranks(sorted.len(), level)?;
    Some(Interval {
        level,
        low: sorted[lo],
        high: sorted[hi],
        method: crate::confidence::Method::OrderStatistics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // The lower ranks as scipy 1.17.1 finds them: the largest j with
    // scipy.stats.binom.cdf(j, n, 0.5) <= (1 - level) / 2, zero-based. n = 10: cdf(1) =
    // 0.0107 (coverage 0.9785); n = 20: cdf(5) = 0.0207; n = 100 at 95%: j = 39, one-based
    // ranks 40 and 61 as in Campbell and Gardner's table (BMJ 1988); n = 10 000 at 90%:
    // j = 4917 (the normal approximation 5000 - 1.645·50 - 0.5 ≈ 4917).
    #[test]
    fn ranks_as_the_binomial_distribution_gives_them() {
        let cases = [
            (10, 0.90, 1),
            (10, 0.95, 1),
            (20, 0.90, 5),
            (50, 0.90, 18),
            (50, 0.95, 17),
            (100, 0.90, 41),
            (100, 0.95, 39),
            (1000, 0.90, 473),
            (1000, 0.95, 468),
            (10_000, 0.90, 4917),
            (10_000, 0.95, 4901),
        ];
        for (n, level, j) in cases {
            assert_eq!(
                median_interval_ranks(n, level),
                Some((j, n - 1 - j)),
                "{n} {level}"
            );
        }
    }

    // n = 5: P(B = 0) = 1/32 = 0.031 ≤ 0.05, the whole range covers 0.9375; n = 4: P(B = 0) =
    // 1/16 > 0.05, no pair reaches 90% and the whole range (0.875) is all there is.
    #[test]
    fn small_samples_have_the_whole_range() {
        assert_eq!(median_interval_ranks(5, 0.90), Some((0, 4)));
        assert_eq!(median_interval_ranks(4, 0.90), Some((0, 3)));
        assert_eq!(median_interval_ranks(1, 0.90), Some((0, 0)));
        assert_eq!(median_interval_ranks(0, 0.90), None);
        assert_eq!(median_interval(&[], 0.9), None);
    }

    #[test]
    fn the_interval_takes_the_order_statistics() {
        // Ten values in any order: x_1 and x_8 of the sorted ones at 90%.
        let xs = [9.0, 2.0, 7.0, 0.0, 5.0, 3.0, 8.0, 1.0, 6.0, 4.0];
        let ci = median_interval(&xs, 0.90).unwrap();
        assert_eq!((ci.low, ci.high, ci.level), (1.0, 8.0, 0.90));
    }

    proptest! {
        #[test]
        fn the_interval_holds_the_median_and_widens_with_the_level(
            xs in proptest::collection::vec(-1e3..1e3f64, 1..300),
            level in 0.5..0.99f64,
        ) {
            let m = crate::median(&xs).unwrap();
            let ci = median_interval(&xs, level).unwrap();
            prop_assert!(ci.contains(m), "{:?} misses the median {}", ci, m);
            let wider = median_interval(&xs, (level + 1.0) / 2.0).unwrap();
            prop_assert!(wider.low <= ci.low && ci.high <= wider.high);
        }
    }
}
