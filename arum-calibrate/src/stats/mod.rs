//! Statistics of one measurement's samples: the summary every figure is reported with, and the
//! relative width of the median's distribution-free confidence interval that decides when to
//! stop repeating. The figures themselves come from arum-stats.

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

    /// [`Summary::of`] of samples sorted ascending.
    pub fn of_sorted(sorted: &[f64]) -> Summary {
        const NONE: &str = "a summary needs at least one sample";
        let ci = arum_stats::median_interval_sorted(sorted, 0.90).expect(NONE);
        Summary {
            n: sorted.len(),
            median: arum_stats::quantile_sorted(sorted, 0.5).expect(NONE),
            ci90_low: ci.low,
            ci90_high: ci.high,
            mean: arum_stats::mean(sorted),
            sd: arum_stats::std_dev(sorted),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
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

#[cfg(test)]
mod tests {
    use super::*;

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
