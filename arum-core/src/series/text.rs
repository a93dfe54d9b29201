//! A series for people: per command, every metric's statistics; the outlier runs and what the
//! machine was doing in them; warnings said once; the comparisons.

use std::fmt::Write;

use arum_grid::Grid;

use super::result::{Benchmark, MetricSummary, RunSet};
use super::summary::PRIMARY;
use crate::report::metrics;
use crate::series::compare::cells;

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
    let pct = arum_units::percent::format_level(set.confidence_level);
    let mut t = Grid::new();
    t.push_record([
        "metric".to_string(),
        "mean ± σ".into(),
        format!("{pct} CI of the mean"),
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
            s.ci.map_or("-".into(), |c| cells::interval(u, &c)),
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

/// A line per run that is an outlier in wall time, with what the machine was doing; one line for
/// the outliers of the other metrics a person reads.
fn outliers(out: &mut String, b: &Benchmark) {
    for o in &b.outliers {
        let _ = writeln!(
            out,
            "  Warning: run {} is an outlier in wall time (modified z-score above {}): {}",
            o.run,
            arum_stats::OUTLIER_THRESHOLD,
            o.notes.join("; ")
        );
    }
    let others: Vec<&MetricSummary> = b
        .metrics
        .iter()
        .filter(|m| m.metric != PRIMARY && metrics::shown(&m.metric, false))
        .filter(|m| !m.outlier_runs.is_empty())
        .collect();
    if !others.is_empty() {
        let mut runs: Vec<u64> = others.iter().flat_map(|m| m.outlier_runs.clone()).collect();
        runs.sort_unstable();
        runs.dedup();
        let _ = writeln!(
            out,
            "  other metrics: {} of {} have outlier runs ({} run{} in all; the table's last column)",
            others.len(),
            b.metrics
                .iter()
                .filter(|m| metrics::shown(&m.metric, false))
                .count(),
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
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
