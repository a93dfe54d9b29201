//! Statistics of one measurement's samples: the summary every figure is reported with, and the
//! distribution-free confidence interval of the median that decides when to stop repeating.

pub mod histogram;
pub mod repeat;

use serde::{Deserialize, Serialize};

/// The summary of a measurement's samples, in the measurement's unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    /// The 90% confidence interval of the median (order statistics, no distribution assumed).
    pub ci90_low: f64,
    pub ci90_high: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Summarises `samples` (at least one). NaNs are not expected: the measurements never produce
    /// them, and they would sort last.
    pub fn of(samples: &[f64]) -> Summary {
        assert!(!samples.is_empty(), "a summary needs at least one sample");
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Self::of_sorted(&sorted)
    }

    pub fn of_sorted(sorted: &[f64]) -> Summary {
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let (lo, hi) = median_ci_indices(n, 0.90);
        Summary {
            n,
            median: median_of_sorted(sorted),
            ci90_low: sorted[lo],
            ci90_high: sorted[hi],
            mean,
            sd: var.sqrt(),
            min: sorted[0],
            max: sorted[n - 1],
        }
    }

    /// The larger distance from the median to an end of its confidence interval, relative to
    /// the median: the precision the repetition engine drives below its target.
    pub fn relative_ci(&self) -> f64 {
        if self.median == 0.0 {
            return if self.ci90_low == self.ci90_high {
                0.0
            } else {
                f64::INFINITY
            };
        }
        (self.median - self.ci90_low)
            .max(self.ci90_high - self.median)
            .abs()
            / self.median.abs()
    }

    /// The same summary in another unit (a linear map such as ns → cycles).
    pub fn scaled(&self, k: f64) -> Summary {
        Summary {
            n: self.n,
            median: self.median * k,
            ci90_low: self.ci90_low * k,
            ci90_high: self.ci90_high * k,
            mean: self.mean * k,
            sd: self.sd * k.abs(),
            min: self.min * k,
            max: self.max * k,
        }
    }
}

pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Zero-based indices (j, n-1-j) into the sorted samples such that [x_j, x_(n-1-j)] covers the
/// population median with probability at least `level`. With B ~ Binomial(n, 1/2) the number of
/// samples below the median, x_j ≤ m exactly when B > j, so the coverage is 1 - 2·P(B ≤ j).
/// The narrowest such interval; with too few samples to reach `level`, the whole range.
pub fn median_ci_indices(n: usize, level: f64) -> (usize, usize) {
    if n < 2 {
        return (0, n.saturating_sub(1));
    }
    // The lower end is x_i (zero-based) for the largest i with P(B ≤ i) ≤ (1 - level) / 2; the
    // cdf is accumulated in the log domain so that large n does not underflow.
    let alpha = (1.0 - level) / 2.0;
    let mut ln_pmf = -(n as f64) * std::f64::consts::LN_2; // ln P(B = 0)
    let mut cdf = ln_pmf.exp();
    let mut lower = 0usize;
    for i in 0..n / 2 {
        if cdf > alpha {
            break;
        }
        lower = i;
        // P(B = i + 1) = P(B = i) · (n - i) / (i + 1)
        ln_pmf += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        cdf += ln_pmf.exp();
    }
    (lower, n - 1 - lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_ci_indices_match_binomial_tables() {
        // n = 10: P(B ≤ 1) = 11/1024 ≈ 0.0107 ≤ 0.05 < P(B ≤ 2) = 56/1024, so the 90% interval
        // is [x_(2), x_(9)] one-based: coverage 1 - 2·11/1024 = 0.979.
        assert_eq!(median_ci_indices(10, 0.90), (1, 8));
        // n = 5: P(B = 0) = 1/32 ≈ 0.031 ≤ 0.05 < P(B ≤ 1) = 6/32: the whole range, 0.9375.
        assert_eq!(median_ci_indices(5, 0.90), (0, 4));
        // n = 20: P(B ≤ 5) = 0.0207 ≤ 0.05 < P(B ≤ 6) = 0.0577: [x_(6), x_(15)] one-based.
        assert_eq!(median_ci_indices(20, 0.90), (5, 14));
        // n = 4: P(B = 0) = 1/16 > 0.05: no order statistic pair inside reaches 90%.
        assert_eq!(median_ci_indices(4, 0.90), (0, 3));
        // Large n: the normal approximation n/2 ± 1.645·√n/2 (n = 10 000: 4918 .. 5082).
        let (lo, hi) = median_ci_indices(10_000, 0.90);
        assert!((4915..=4920).contains(&lo), "{lo}");
        assert_eq!(lo + hi, 9_999);
    }

    #[test]
    fn summary_of_a_known_vector() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!(
            (s.n, s.median, s.mean, s.min, s.max),
            (5, 3.0, 3.0, 1.0, 5.0)
        );
        assert!((s.sd - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!((s.ci90_low, s.ci90_high), (1.0, 5.0));
        assert!((s.relative_ci() - 2.0 / 3.0).abs() < 1e-12);
        let even = Summary::of(&[1.0, 2.0, 3.0, 10.0]);
        assert_eq!(even.median, 2.5);
    }

    #[test]
    fn identical_samples_have_a_zero_width_interval() {
        let s = Summary::of(&[7.0; 50]);
        assert_eq!(s.relative_ci(), 0.0);
        assert_eq!(s.sd, 0.0);
    }
}
