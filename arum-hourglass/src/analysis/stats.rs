//! Order statistics of a sample, and the t-based confidence interval of a mean.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Order statistics of durations, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub min_ns: f64,
    pub median_ns: f64,
    pub mean_ns: f64,
    pub p99_ns: f64,
    pub max_ns: f64,
    pub total_ns: f64,
}

impl Summary {
    /// `None` for an empty sample.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let total: f64 = v.iter().sum();
        Some(Summary {
            count: v.len(),
            min_ns: v[0],
            median_ns: quantile_sorted(&v, 0.5),
            mean_ns: total / v.len() as f64,
            p99_ns: quantile_sorted(&v, 0.99),
            max_ns: v[v.len() - 1],
            total_ns: total,
        })
    }
}

/// The q-quantile of sorted values (nearest rank: a value that occurred).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of unsorted values.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_sorted(&v, 0.5)
}

/// A mean with its two-sided confidence interval from Student's t distribution (the paper's
/// Figure 5 method, after Jain).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanCi {
    pub n: usize,
    pub mean: f64,
    /// Half-width of the interval: the mean is in [mean - half, mean + half] at `level`.
    pub half_width: f64,
    pub level: f64,
    pub std_dev: f64,
}

impl MeanCi {
    /// `None` with fewer than two values.
    pub fn of(values: &[f64], level: f64) -> Option<MeanCi> {
        let n = values.len();
        if n < 2 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .ok()?
            .inverse_cdf(1.0 - (1.0 - level) / 2.0);
        Some(MeanCi {
            n,
            mean,
            half_width: t * sd / (n as f64).sqrt(),
            level,
            std_dev: sd,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_known_sample() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&v).unwrap();
        assert_eq!(s.count, 100);
        assert_eq!(s.min_ns, 1.0);
        assert_eq!(s.median_ns, 50.0);
        assert_eq!(s.p99_ns, 99.0);
        assert_eq!(s.max_ns, 100.0);
        assert_eq!(s.mean_ns, 50.5);
        assert_eq!(s.total_ns, 5050.0);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn confidence_interval_matches_the_t_table() {
        // 15 trials: t(0.975, 14) = 2.1448 (Jain, Table A.4).
        let v: Vec<f64> = (0..15)
            .map(|i| if i % 2 == 0 { 9.0 } else { 11.0 })
            .collect();
        let ci = MeanCi::of(&v, 0.95).unwrap();
        let sd = ci.std_dev;
        assert!(
            (ci.half_width - 2.1448 * sd / 15f64.sqrt()).abs() < 1e-3,
            "{ci:?}"
        );
        assert!(MeanCi::of(&[1.0], 0.95).is_none());
    }
}
