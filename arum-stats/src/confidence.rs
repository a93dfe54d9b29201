//! The confidence interval of a mean from a small sample: Student's t, n - 1 degrees of freedom,
//! or, where that interval would leave the values' support (a count or a time whose t interval
//! reaches below 0), the percentile bootstrap of the mean, which stays inside it.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A two-sided interval at a confidence level (0.9 = 90%).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub level: f64,
    pub low: f64,
    pub high: f64,
    /// How it was computed (older files have none: Student's t).
    #[serde(default)]
    pub method: Method,
}

/// How an interval was computed, so that a reader knows which assumptions it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Student's t (Welch's degrees of freedom for two samples): symmetric about the estimate.
    #[default]
    StudentT,
    /// The percentile bootstrap of the mean (resampled with a fixed seed, so the same values
    /// give the same interval): used where Student's t would leave the values' support.
    Bootstrap,
    /// A ratio's interval on the log scale (the delta method on log(new/base)): positive when
    /// both means are, and as far below the ratio, proportionally, as above.
    LogScale,
    /// A ratio's interval by the delta method on the ratio itself: only where a sample has
    /// negative values and the log scale does not apply.
    Delta,
    /// Order statistics, distribution-free (the median's interval).
    OrderStatistics,
}

impl Method {
    /// A few words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Method::StudentT => "Student's t",
            Method::Bootstrap => "bootstrap",
            Method::LogScale => "log scale",
            Method::Delta => "delta method",
            Method::OrderStatistics => "order statistics",
        }
    }
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

/// Resamples of the bootstrap: the percentile interval's ends then move by well under 1% of its
/// width between seeds.
const RESAMPLES: usize = 4000;
/// Any fixed seed: a report's interval must not change when the same values are summarised again.
const SEED: u64 = 0x00A2_0AC0;

/// The interval of the mean of `xs` at `level`; none for fewer than two values. Student's t,
/// unless every value is ≥ 0 and the t interval reaches below 0: then the percentile bootstrap,
/// whose ends are means of resampled values and so never negative.
pub fn mean_interval(xs: &[f64], level: f64) -> Option<Interval> {
    let t = student_interval(xs, level)?;
    if t.low >= 0.0 || xs.iter().any(|x| *x < 0.0) {
        return Some(t);
    }
    bootstrap_mean_interval(xs, level)
}

/// Student's t interval of the mean of `xs` at `level`; none for fewer than two values.
pub fn student_interval(xs: &[f64], level: f64) -> Option<Interval> {
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
        method: Method::StudentT,
    })
}

/// The percentile bootstrap interval of the mean of `xs` at `level` (Efron and Tibshirani, "An
/// Introduction to the Bootstrap", 1993, ch. 13); none for fewer than two values.
pub fn bootstrap_mean_interval(xs: &[f64], level: f64) -> Option<Interval> {
    if xs.len() < 2 {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(SEED);
    let n = xs.len();
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| xs[rng.usize(..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(Interval {
        level,
        low: crate::quantile_sorted(&means, tail)?,
        high: crate::quantile_sorted(&means, 1.0 - tail)?,
        method: Method::Bootstrap,
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
        assert_eq!(bootstrap_mean_interval(&[1.0], 0.9), None);
    }

    // Context switches of ten runs, mostly 0: Student's t gives [-0.09, 0.69]; a count's mean
    // cannot be negative, and the bootstrap's interval is not.
    #[test]
    fn a_count_near_zero_gets_an_interval_inside_its_support() {
        let x = [0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        assert!(student_interval(&x, 0.9).unwrap().low < 0.0);
        let ci = mean_interval(&x, 0.9).unwrap();
        assert_eq!(ci.method, Method::Bootstrap);
        assert!(
            ci.low >= 0.0 && ci.contains(0.3) && ci.high <= 2.0,
            "{ci:?}"
        );
        // The same values, the same interval.
        assert_eq!(mean_interval(&x, 0.9), Some(ci));
        // Values that may be negative keep Student's t.
        assert_eq!(
            mean_interval(&[-1.0, 0.5, 0.2], 0.9).unwrap().method,
            Method::StudentT
        );
    }

    proptest::proptest! {
        // Any sample of non-negative values: the interval stays at or above 0 and covers the
        // mean; where Student's t stays inside the support, it is Student's t.
        #[test]
        fn non_negative_values_never_get_a_negative_bound(
            xs in proptest::collection::vec(0.0f64..1e6, 2..40),
            level in 0.5f64..0.999,
        ) {
            let ci = mean_interval(&xs, level).unwrap();
            let m = crate::mean(&xs);
            proptest::prop_assert!(ci.low >= 0.0, "{:?}", ci);
            proptest::prop_assert!(ci.low <= m * (1.0 + 1e-9) && m <= ci.high * (1.0 + 1e-9) + 1e-9);
            let t = student_interval(&xs, level).unwrap();
            if t.low >= 0.0 {
                proptest::prop_assert_eq!(ci, t);
            }
        }
    }
}
