//! Durations described for the report, and the t-based confidence interval of a mean; the
//! figures themselves come from arum-stats.

use serde::{Deserialize, Serialize};

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
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Summary {
            count: v.len(),
            min_ns: *v.first()?,
            median_ns: arum_stats::quantile_sorted(&v, 0.5)?,
            mean_ns: arum_stats::mean(&v),
            p99_ns: arum_stats::quantile_sorted(&v, 0.99)?,
            max_ns: *v.last()?,
            total_ns: v.iter().sum(),
        })
    }
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
        let ci = arum_stats::mean_interval(values, level)?;
        Some(MeanCi {
            n: values.len(),
            mean: arum_stats::mean(values),
            half_width: ci.half_width(),
            level,
            std_dev: arum_stats::std_dev(values),
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
        // Interpolated between order statistics, as numpy's np.quantile(range(1, 101),
        // [0.5, 0.99]) = [50.5, 99.01].
        assert_eq!(s.median_ns, 50.5);
        assert!((s.p99_ns - 99.01).abs() < 1e-9, "{s:?}");
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
