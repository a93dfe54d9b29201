//! The confidence interval of a mean from a small sample: Student's t, n - 1 degrees of freedom.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A two-sided interval at a confidence level (0.9 = 90%).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub level: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// Half the width: the `±` of `mean ± error`.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }
}

/// The two-sided critical value of Student's t with `df` degrees of freedom at `level`:
/// the t with P(|T| <= t) = level.
pub fn t_critical(level: f64, df: f64) -> f64 {
    let t = StudentsT::new(0.0, 1.0, df).expect("degrees of freedom are positive");
    t.inverse_cdf(0.5 + level / 2.0)
}

/// Student's t interval of the mean of `xs` at `level`; none for fewer than two values.
pub fn mean_interval(xs: &[f64], level: f64) -> Option<Interval> {
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let m = crate::mean(xs);
    let half = t_critical(level, n - 1.0) * crate::std_dev(xs) / n.sqrt();
    Some(Interval {
        level,
        low: m - half,
        high: m + half,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    // Student's t table (any statistics textbook, e.g. Montgomery & Runger, Table V):
    // t(0.95; 9) = 1.833, t(0.975; 9) = 2.262, t(0.95; 14) = 1.761.
    #[test]
    fn critical_values_as_the_t_table_gives_them() {
        assert!(close(t_critical(0.90, 9.0), 1.833_113, 1e-6));
        assert!(close(t_critical(0.95, 9.0), 2.262_157, 1e-6));
        assert!(close(t_critical(0.90, 14.0), 1.761_310, 1e-6));
    }

    // R's `sleep` data, group 1: t.test(extra[group == 1]) gives the 95% interval
    // [-0.5297804, 2.0297804]; conf.level = 0.9 gives [-0.2870553, 1.7870553].
    #[test]
    fn sleep_group_one_interval_as_r_gives_it() {
        let x = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
        let ci = mean_interval(&x, 0.95).unwrap();
        assert!(close(ci.low, -0.529_780_4, 1e-6), "{ci:?}");
        assert!(close(ci.high, 2.029_780_4, 1e-6), "{ci:?}");
        let ci = mean_interval(&x, 0.90).unwrap();
        assert!(close(ci.low, -0.287_055_3, 1e-6), "{ci:?}");
        assert!(close(ci.high, 1.787_055_3, 1e-6), "{ci:?}");
    }

    #[test]
    fn no_interval_from_one_value() {
        assert_eq!(mean_interval(&[1.0], 0.9), None);
    }
}
