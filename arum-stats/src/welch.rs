//! Two samples compared: Welch's t-test (no equal-variance assumption), the difference of the
//! means with its confidence interval, and the ratio of the means with its interval.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::confidence::{t_critical, Interval, Method};
use crate::summary::{mean, variance};

/// Welch's t-test of `new` against `base`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// mean(new) - mean(base).
    pub difference: f64,
    pub difference_ci: Interval,
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value of "the means are equal".
    pub p_value: f64,
}

impl Welch {
    /// Whether the difference is significant at the test's level.
    pub fn significant(&self) -> bool {
        self.p_value < 1.0 - self.difference_ci.level
    }
}

/// Welch's t-test of `new` against `base` at `level`; none when either has fewer than two
/// values. When neither sample varies at all the means are compared exactly: p = 1 when they
/// are equal, 0 when they differ.
pub fn welch(base: &[f64], new: &[f64], level: f64) -> Option<Welch> {
    if base.len() < 2 || new.len() < 2 {
        return None;
    }
    let (nb, nn) = (base.len() as f64, new.len() as f64);
    let (vb, vn) = (variance(base) / nb, variance(new) / nn);
    let difference = mean(new) - mean(base);
    let se2 = vb + vn;
    if se2 == 0.0 {
        let p_value = if difference == 0.0 { 1.0 } else { 0.0 };
        return Some(Welch {
            difference,
            difference_ci: Interval {
                level,
                low: difference,
                high: difference,
                method: Method::StudentT,
            },
            t: if difference == 0.0 {
                0.0
            } else {
                difference.signum() * f64::INFINITY
            },
            df: nb + nn - 2.0,
            p_value,
        });
    }
    let se = se2.sqrt();
    let df = se2 * se2 / (vb * vb / (nb - 1.0) + vn * vn / (nn - 1.0));
    let t = difference / se;
    let dist = StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom");
    let p_value = (2.0 * dist.sf(t.abs())).min(1.0);
    let half = t_critical(level, df) * se;
    Some(Welch {
        difference,
        difference_ci: Interval {
            level,
            low: difference - half,
            high: difference + half,
            method: Method::StudentT,
        },
        t,
        df,
        p_value,
    })
}

/// mean(new) / mean(base), with its interval when both samples have two values or more.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub ratio: f64,
    pub ci: Option<Interval>,
}

/// The ratio of the means, with Welch's degrees of freedom for its interval. Where both samples
/// are ≥ 0 and both means > 0 (times, counts, sizes), the interval is on the log scale:
/// se(ln r) = sqrt(se_new² / mean_new² + se_base² / mean_base²), and r·exp(±t·se) is positive as
/// a ratio of such quantities is. Where a sample has negative values, the delta method on r
/// itself: se(r) = |r|·se(ln r). When every new value is 0 (and none negative) the ratio is 0
/// exactly. None when the base mean is 0.
pub fn ratio_of_means(base: &[f64], new: &[f64], level: f64) -> Option<Ratio> {
    if base.is_empty() || new.is_empty() {
        return None;
    }
    let (mb, mn) = (mean(base), mean(new));
    if mb == 0.0 {
        return None;
    }
    let ratio = mn / mb;
    let non_negative = base.iter().chain(new).all(|x| *x >= 0.0);
    let ci = welch(base, new, level).map(|w| {
        let (vb, vn) = (
            variance(base) / base.len() as f64,
            variance(new) / new.len() as f64,
        );
        let interval = |low: f64, high: f64, method: Method| Interval {
            level,
            low,
            high,
            method,
        };
        if mn == 0.0 {
            // r = 0: only the new sample's spread is known, relative to the base.
            let half = t_half(level, w.df, (vn / (mb * mb)).sqrt());
            return interval(-half, half, Method::Delta);
        }
        let rel = (vn / (mn * mn) + vb / (mb * mb)).sqrt();
        let half = t_half(level, w.df, rel);
        if non_negative && mb > 0.0 && mn > 0.0 {
            interval(ratio * (-half).exp(), ratio * half.exp(), Method::LogScale)
        } else {
            let half = ratio.abs() * half;
            interval(ratio - half, ratio + half, Method::Delta)
        }
    });
    Some(Ratio { ratio, ci })
}

/// t·se, or 0 where the degrees of freedom are not finite (no spread at all) or se is 0.
fn t_half(level: f64, df: f64, se: f64) -> f64 {
    if df.is_finite() && se > 0.0 {
        t_critical(level, df) * se
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    // R's `sleep` data (Student 1908): t.test(extra ~ group, data = sleep) is Welch's test:
    // t = -1.8608, df = 17.776, p-value = 0.07939. Here new = group 2, base = group 1, so t is
    // positive; scipy 1.17's ttest_ind(equal_var=False) gives the 90% interval of the difference
    // [0.1066185, 3.0533815].
    const SLEEP1: [f64; 10] = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
    const SLEEP2: [f64; 10] = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

    #[test]
    fn sleep_data_as_r_tests_it() {
        let w = welch(&SLEEP1, &SLEEP2, 0.90).unwrap();
        assert!(close(w.t, 1.860_813_467, 1e-8), "{w:?}");
        assert!(close(w.df, 17.776_473_516, 1e-8), "{w:?}");
        assert!(close(w.p_value, 0.079_394_140_19, 1e-6), "{w:?}");
        assert!(close(w.difference, 1.58, 1e-12));
        assert!(close(w.difference_ci.low, 0.106_618_503, 1e-6), "{w:?}");
        assert!(close(w.difference_ci.high, 3.053_381_497, 1e-6), "{w:?}");
        // p = 0.079 < 0.10: significant at 90%, not at 95%.
        assert!(w.significant());
        assert!(!welch(&SLEEP1, &SLEEP2, 0.95).unwrap().significant());
    }

    // Two samples of 15 with unequal spread, computed once with scipy 1.17 here:
    // ttest_ind(b, a, equal_var=False): t = 2.455356398, p = 0.021378001, df = 24.98852929,
    // 90% interval of the difference [0.6593347836, 3.6739985498].
    #[test]
    fn fifteen_trials_as_scipy_tests_them() {
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let w = welch(&a, &b, 0.90).unwrap();
        assert!(close(w.t, 2.455_356_398, 1e-8), "{w:?}");
        assert!(close(w.df, 24.988_529_29, 1e-8), "{w:?}");
        assert!(close(w.p_value, 0.021_378_001, 1e-6), "{w:?}");
        assert!(close(w.difference_ci.low, 0.659_334_784, 1e-6), "{w:?}");
        assert!(close(w.difference_ci.high, 3.673_998_55, 1e-6), "{w:?}");
    }

    #[test]
    fn samples_without_spread_are_compared_exactly() {
        let same = welch(&[3.0, 3.0], &[3.0, 3.0, 3.0], 0.9).unwrap();
        assert_eq!((same.p_value, same.significant()), (1.0, false));
        let other = welch(&[3.0, 3.0], &[4.0, 4.0], 0.9).unwrap();
        assert_eq!((other.p_value, other.significant()), (0.0, true));
        assert!(welch(&[1.0], &[2.0, 3.0], 0.9).is_none());
    }

    #[test]
    fn ratio_interval_covers_the_ratio_and_narrows_with_less_noise() {
        let base = [10.0, 10.2, 9.8, 10.1, 9.9];
        let new = [12.0, 12.3, 11.8, 12.1, 11.8];
        let r = ratio_of_means(&base, &new, 0.9).unwrap();
        assert!(close(r.ratio, 12.0 / 10.0, 1e-12));
        let ci = r.ci.unwrap();
        assert!(ci.contains(1.2) && ci.low > 1.0, "{ci:?}");
        let quiet = ratio_of_means(&[10.0, 10.01, 9.99], &[12.0, 12.01, 11.99], 0.9).unwrap();
        assert!(quiet.ci.unwrap().half_width() < ci.half_width());
        // A single run each: the ratio, but no interval.
        let single = ratio_of_means(&[2.0], &[3.0], 0.9).unwrap();
        assert_eq!((single.ratio, single.ci), (1.5, None));
        assert!(ratio_of_means(&[0.0, 0.0], &[1.0, 1.0], 0.9).is_none());
    }

    // Two noisy samples of a count: the delta method on r gives a negative lower bound; the
    // log-scale interval is positive, and ln of its ends is symmetric about ln r.
    #[test]
    fn a_noisy_ratio_of_counts_stays_positive() {
        let base = [1.0, 3.0, 0.0, 2.0, 1.0];
        let new = [0.0, 6.0, 1.0, 0.0, 5.0];
        let r = ratio_of_means(&base, &new, 0.9).unwrap();
        let ci = r.ci.unwrap();
        assert_eq!(ci.method, Method::LogScale);
        assert!(ci.low > 0.0 && ci.contains(r.ratio), "{ci:?}");
        let (l, h, m) = (ci.low.ln(), ci.high.ln(), r.ratio.ln());
        assert!(((m - l) - (h - m)).abs() < 1e-9);
        // With a negative value the log scale does not apply.
        let neg = ratio_of_means(&[-1.0, 3.0, 2.0], &[1.0, 2.0, 2.5], 0.9).unwrap();
        assert_eq!(neg.ci.unwrap().method, Method::Delta);
    }

    proptest::proptest! {
        // Any two samples of non-negative values with positive means: the ratio's interval is
        // positive and covers the ratio.
        #[test]
        fn ratios_of_non_negative_samples_have_positive_bounds(
            base in proptest::collection::vec(0.0f64..1e6, 2..30),
            new in proptest::collection::vec(0.0f64..1e6, 2..30),
        ) {
            proptest::prop_assume!(mean(&base) > 0.0 && mean(&new) > 0.0);
            let r = ratio_of_means(&base, &new, 0.9).unwrap();
            let ci = r.ci.unwrap();
            proptest::prop_assert!(ci.low > 0.0, "{:?}", ci);
            proptest::prop_assert!(ci.low <= r.ratio * (1.0 + 1e-12) && r.ratio <= ci.high * (1.0 + 1e-12));
        }
    }
}
