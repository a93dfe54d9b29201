//! A series for people: per command, every metric's statistics; the outlier runs and what the
//! machine was doing in them; warnings said once; the comparisons.

use std::fmt::Write;

use arum_grid::Grid;

use super::result::{Benchmark, RunSet};
use crate::report::metrics;

/// Metric names listed in one outlier line before "and N more".
const OUTLIER_METRICS_LISTED: usize = 4;

pub fn render(set: &RunSet, self_timing: bool) -> String {
    let mut out = String::new();
    for (i, b) in set.benchmarks.iter().enumerate() {
        heading(&mut out, set, i, b);
        metrics_table(set, b, self_timing).write_to(&mut out, "  ");
        outliers(&mut out, b);
        warnings(&mut out, b);
        out.push('\n');
    }
    if let Some(why) = &set.stopped_early {
        let _ = writeln!(out, "The series stopped early: {why}\n");
    }
    for c in &set.comparisons {
        out.push_str(&crate::series::compare::text::render(c, &[]));
        out.push('\n');
    }
    out
}

/// The benchmark's number and label, its runs, warm-up runs and failed runs.
fn heading(out: &mut String, set: &RunSet, i: usize, b: &Benchmark) {
    let failed = b.runs.iter().filter(|r| r.exit_status != 0).count();
    let _ = writeln!(
        out,
        "Benchmark {}: {}\n  {} run{}{}{}",
        i + 1,
        b.label,
        b.runs.len(),
        if b.runs.len() == 1 { "" } else { "s" },
        if set.warmup_runs > 0 {
            format!(" after {} warm-up", set.warmup_runs)
        } else {
            String::new()
        },
        if failed > 0 {
            format!(", {failed} failed (non-zero exit status)")
        } else {
            String::new()
        }
    );
}

/// Every shown metric that was not always zero: its statistics and number of outlier runs.
fn metrics_table(set: &RunSet, b: &Benchmark, self_timing: bool) -> Grid {
    let pct = set.confidence_level * 100.0;
    let mut t = Grid::new();
    t.push_record([
        "metric".to_string(),
        "mean ± σ".into(),
        format!("{pct:.0}% CI of the mean"),
        "median".into(),
        "min … max".into(),
        "outliers".into(),
    ]);
    for m in &b.metrics {
        let s = &m.stats;
        if !metrics::shown(&m.metric, self_timing) || (s.min == 0.0 && s.max == 0.0) {
            continue;
        }
        let u = metrics::unit_of(&m.metric);
        t.push_record([
            m.metric.clone(),
            format!("{} ± {}", u.format(s.mean), u.format(s.std_dev)),
            s.ci.map_or("-".into(), |c| {
                format!("{} … {}", u.format(c.low), u.format(c.high))
            }),
            u.format(s.median),
            format!("{} … {}", u.format(s.min), u.format(s.max)),
            if m.outlier_runs.is_empty() {
                String::new()
            } else {
                m.outlier_runs.len().to_string()
            },
        ]);
    }
    t.align_right(1..6)
}

/// A line per outlier run: the metrics it is an outlier in, and what the machine was doing.
fn outliers(out: &mut String, b: &Benchmark) {
    for o in &b.outliers {
        let listed: Vec<&str> = o
            .metrics
            .iter()
            .take(OUTLIER_METRICS_LISTED)
            .map(String::as_str)
            .collect();
        let more = o.metrics.len().saturating_sub(OUTLIER_METRICS_LISTED);
        let _ = writeln!(
            out,
            "  Warning: run {} is an outlier (modified z-score above {}) in {}{}: {}",
            o.run,
            arum_stats::OUTLIER_THRESHOLD,
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            o.notes.join("; ")
        );
    }
}

/// Each warning of the runs' reports once, with the number of runs that gave it.
fn warnings(out: &mut String, b: &Benchmark) {
    let mut warnings: Vec<(&str, usize)> = Vec::new();
    for r in &b.runs {
        for w in &r.report.warnings {
            match warnings.iter_mut().find(|(x, _)| *x == w) {
                Some((_, n)) => *n += 1,
                None => warnings.push((w, 1)),
            }
        }
    }
    for (w, n) in warnings {
        let _ = writeln!(out, "  warning ({n} of {} runs): {w}", b.runs.len());
    }
}
