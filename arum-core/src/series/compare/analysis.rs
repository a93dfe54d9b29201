//! Two sets of runs compared metric by metric: difference and ratio of the means with their
//! confidence intervals, Welch's t-test, and which way the change goes. The metrics of one
//! comparison are one family of tests: their p-values are adjusted together (Benjamini-Hochberg),
//! and a change is significant only by its adjusted p, so that comparing many metrics does not
//! manufacture findings.

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
    /// The p-value adjusted for the number of metrics compared (Benjamini-Hochberg); what
    /// significance is judged by.
    #[serde(default)]
    pub p_adjusted: Option<f64>,
    /// Significant at the confidence level by the adjusted p (none when it could not be tested).
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

    /// `*` significant at the chosen level, `**` also at 99%, `***` also at 99.9% (by the
    /// adjusted p).
    pub fn marks(&self) -> &'static str {
        match (self.significant, self.p_adjusted.or(self.p_value)) {
            (Some(true), Some(p)) if p < 0.001 => "***",
            (Some(true), Some(p)) if p < 0.01 => "**",
            (Some(true), _) => "*",
            _ => "",
        }
    }
}

/// Compares every metric both sides have and `wanted` accepts; metrics that are 0 on both sides
/// are left out. The tested ones are one family for the adjustment of their p-values.
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
            p_adjusted: None,
            significant: None,
            change,
        });
    }
    adjust(&mut out, level);
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

/// Adjusts the p-values of the tested metrics as one family and judges each by its adjusted p.
fn adjust(metrics: &mut [MetricComparison], level: f64) {
    let tested: Vec<usize> = (0..metrics.len())
        .filter(|&i| metrics[i].p_value.is_some())
        .collect();
    let raw: Vec<f64> = tested.iter().filter_map(|&i| metrics[i].p_value).collect();
    for (&i, q) in tested.iter().zip(arum_stats::benjamini_hochberg(&raw)) {
        metrics[i].p_adjusted = Some(q);
        metrics[i].significant = Some(q < 1.0 - level);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Report;
    use crate::report::testing::report;

    fn samples(walls: &[u64], switches: &[u64]) -> Samples {
        let reports: Vec<Report> = walls
            .iter()
            .zip(switches)
            .map(|(&w, &s)| {
                let mut r = report(w, 0);
                r.usage.user_ns = w / 2;
                r.usage.system_ns = w / 4;
                r.usage.minor_faults = w / 10;
                r.usage.involuntary_context_switches = s;
                r
            })
            .collect();
        Samples::of(reports.iter().enumerate().map(|(i, r)| (i as u64, r)))
    }

    // Five metrics, four unchanged: the switches' raw p (0.03) is below 0.1, but adjusted for
    // the five tests (0.15) it is not, so no change is declared.
    #[test]
    fn a_lone_small_p_among_many_metrics_is_not_a_finding() {
        let walls = [100, 102, 98, 101, 99];
        let base = samples(&walls, &[0, 1, 0, 1, 0]);
        let new = samples(&walls, &[1, 2, 1, 1, 2]);
        let c = compare(("a", &base), ("b", &new), 0.9, &|_| true);
        let sw = c
            .metrics
            .iter()
            .find(|m| m.metric == "usage.involuntary_context_switches")
            .unwrap();
        let (p, q) = (sw.p_value.unwrap(), sw.p_adjusted.unwrap());
        assert!(p < 0.1 && q >= 0.1, "p {p}, adjusted {q}");
        assert_eq!(sw.significant, Some(false));
        assert_eq!(c.metrics.iter().filter(|m| m.p_value.is_some()).count(), 5);
        // Compared alone, the same change is significant.
        let alone = compare(("a", &base), ("b", &new), 0.9, &|n| n.ends_with("switches"));
        assert_eq!(alone.metrics[0].significant, Some(true));
        assert_eq!(alone.metrics[0].p_adjusted, alone.metrics[0].p_value);
    }
}
