//! Two sets of runs compared metric by metric: difference and ratio of the means with their
//! confidence intervals, Welch's t-test, and which way the change goes.

use serde::{Deserialize, Serialize};

use arum_stats::Interval;

use std::cmp::Ordering;

use crate::fields::Better;
use crate::report::metrics;
use crate::series::samples::Samples;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub base: String,
    pub new: String,
    pub base_runs: usize,
    pub new_runs: usize,
    pub confidence_level: f64,
    /// Whether significance could be tested: both sides need two runs or more.
    pub tested: bool,
    pub metrics: Vec<MetricComparison>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    pub metric: String,
    pub base_mean: f64,
    pub new_mean: f64,
    pub base_n: usize,
    pub new_n: usize,
    /// new - base.
    pub difference: f64,
    pub difference_ci: Option<Interval>,
    /// new / base (none when the base mean is 0).
    pub ratio: Option<f64>,
    pub ratio_ci: Option<Interval>,
    /// Welch's two-sided p-value (none with fewer than two runs on a side).
    pub p_value: Option<f64>,
    /// Significant at the confidence level (none when it could not be tested).
    pub significant: Option<bool>,
    pub change: Change,
}

/// Which way a metric moved, knowing whether more of it is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Better,
    Worse,
    Same,
    /// Moved, for a metric where neither way is better (utilisation, sampling facts).
    Higher,
    Lower,
}

impl MetricComparison {
    /// The change in percent of the base (none when the base mean is 0).
    pub fn percent(&self) -> Option<f64> {
        self.ratio.map(|r| (r - 1.0) * 100.0)
    }

    /// `*` significant at the chosen level, `**` also at 99%, `***` also at 99.9%.
    pub fn marks(&self) -> &'static str {
        match (self.significant, self.p_value) {
            (Some(true), Some(p)) if p < 0.001 => "***",
            (Some(true), Some(p)) if p < 0.01 => "**",
            (Some(true), _) => "*",
            _ => "",
        }
    }
}

/// Compares every metric both sides have and `wanted` accepts; metrics that are 0 on both sides
/// are left out.
pub fn compare(
    base: (&str, &Samples),
    new: (&str, &Samples),
    level: f64,
    wanted: &dyn Fn(&str) -> bool,
) -> Comparison {
    let (b, n) = (base.1, new.1);
    let mut out = Vec::new();
    for name in b.names() {
        if !wanted(name) {
            continue;
        }
        let (bv, nv) = (b.values(name), n.values(name));
        if bv.is_empty() || nv.is_empty() {
            continue;
        }
        let (bm, nm) = (arum_stats::mean(&bv), arum_stats::mean(&nv));
        if bm == 0.0 && nm == 0.0 {
            continue;
        }
        let welch = arum_stats::welch(&bv, &nv, level);
        let ratio = arum_stats::ratio_of_means(&bv, &nv, level);
        let change = match (nm.partial_cmp(&bm), metrics::better(name)) {
            (Some(Ordering::Equal) | None, _) => Change::Same,
            (Some(Ordering::Greater), Better::Lower) | (Some(Ordering::Less), Better::Higher) => {
                Change::Worse
            }
            (Some(Ordering::Greater), Better::Neither) => Change::Higher,
            (Some(Ordering::Less), Better::Neither) => Change::Lower,
            _ => Change::Better,
        };
        out.push(MetricComparison {
            metric: name.clone(),
            base_mean: bm,
            new_mean: nm,
            base_n: bv.len(),
            new_n: nv.len(),
            difference: nm - bm,
            difference_ci: welch.map(|w| w.difference_ci),
            ratio: ratio.map(|r| r.ratio),
            ratio_ci: ratio.and_then(|r| r.ci),
            p_value: welch.map(|w| w.p_value),
            significant: welch.map(|w| w.significant()),
            change,
        });
    }
    Comparison {
        base: base.0.to_string(),
        new: new.0.to_string(),
        base_runs: b.runs(),
        new_runs: n.runs(),
        confidence_level: level,
        tested: b.runs() >= 2 && n.runs() >= 2,
        metrics: out,
    }
}
