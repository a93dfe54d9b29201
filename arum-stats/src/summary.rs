//! The usual description of a sample: centre, spread, range.

use serde::{Deserialize, Serialize};

use crate::confidence::{mean_interval, Interval};
use crate::quantile::median;

/// A sample of one quantity described.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1 in the denominator); 0 for a single value.
    pub std_dev: f64,
    pub min: f64,
    pub max: f64,
    /// Student's t interval of the mean; none for fewer than two values.
    pub ci: Option<Interval>,
}

impl Summary {
    /// Describes `xs` (empty: none), with the mean's interval at `level`.
    pub fn of(xs: &[f64], level: f64) -> Option<Summary> {
        if xs.is_empty() {
            return None;
        }
        Some(Summary {
            n: xs.len(),
            mean: mean(xs),
            median: median(xs)?,
            std_dev: std_dev(xs),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ci: mean_interval(xs, level),
        })
    }

    /// Standard deviation relative to the mean (0 when the mean is 0).
    pub fn relative_std_dev(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            self.std_dev / self.mean.abs()
        }
    }
}

/// Arithmetic mean; NaN for an empty sample.
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n - 1 in the denominator); 0 for fewer than two values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
pub fn std_dev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    // Student's 1908 paper, the Cushny-Peebles sleep data (R's `sleep` data set, group 1,
    // extra hours of sleep). R: mean(x) = 0.75, median(x) = 0.35, sd(x) = 1.789010.
    const SLEEP1: [f64; 10] = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];

    #[test]
    fn sleep_group_one_as_r_describes_it() {
        let s = Summary::of(&SLEEP1, 0.95).unwrap();
        assert!(close(s.mean, 0.75, 1e-12));
        assert!(close(s.median, 0.35, 1e-12));
        assert!(close(s.std_dev, 1.789_010, 1e-6), "{}", s.std_dev);
        assert_eq!((s.min, s.max, s.n), (-1.6, 3.7, 10));
    }

    #[test]
    fn one_value_has_no_spread_and_no_interval() {
        let s = Summary::of(&[5.0], 0.9).unwrap();
        assert_eq!((s.mean, s.std_dev, s.ci), (5.0, 0.0, None));
        assert!(Summary::of(&[], 0.9).is_none());
    }
}
