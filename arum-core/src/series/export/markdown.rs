//! Markdown: a table of the commands' wall times (as hyperfine's), then each command's metrics,
//! then the comparisons.

use std::fmt::Write;

use arum_units::Unit;

use crate::report::metrics;
use crate::series::compare::analysis::Comparison;
use crate::series::compare::cells;
use crate::series::result::{Benchmark, MetricSummary, RunSet};

pub fn render(set: &RunSet) -> String {
    let mut out = String::new();
    let pct = arum_units::percent::format_level(set.confidence_level);
    wall_times(&mut out, set, &pct);
    for b in &set.benchmarks {
        metrics_table(&mut out, b, &pct);
    }
    for c in &set.comparisons {
        comparison_table(&mut out, c, &pct);
    }
    out
}

/// A command's wall time statistics.
fn wall(b: &Benchmark) -> Option<&MetricSummary> {
    b.metrics.iter().find(|m| m.metric == "usage.wall_ns")
}

/// Every command's wall time, and its mean relative to the fastest command's (hyperfine's table).
fn wall_times(out: &mut String, set: &RunSet, pct: &str) {
    let fastest = set
        .benchmarks
        .iter()
        .filter_map(|b| wall(b).map(|m| m.stats.mean))
        .fold(f64::INFINITY, f64::min);
    let _ = writeln!(
        out,
        "| Command | Runs | Wall mean ± σ | {pct} CI | Min | Max | Relative |\n|:---|---:|---:|---:|---:|---:|---:|"
    );
    for b in &set.benchmarks {
        let Some(w) = wall(b) else { continue };
        let s = &w.stats;
        let t = Unit::Nanoseconds;
        let _ = writeln!(
            out,
            "| `{}` | {} | {} ± {} | {} | {} | {} | {:.2} |",
            escape(&b.label),
            s.n,
            t.format(s.mean),
            t.format(s.std_dev),
            s.ci.map_or("-".into(), |c| cells::interval(t, &c)),
            t.format(s.min),
            t.format(s.max),
            s.mean / fastest
        );
    }
}

/// A command's shown metrics that were not always zero.
fn metrics_table(out: &mut String, b: &Benchmark, pct: &str) {
    let _ = writeln!(out, "\n### `{}`\n", escape(&b.label));
    let _ = writeln!(
        out,
        "| Metric | Mean ± σ | {pct} CI | Median | Min | Max | Outlier runs |\n|:---|---:|---:|---:|---:|---:|---:|"
    );
    for m in &b.metrics {
        let s = &m.stats;
        if !metrics::shown(&m.metric, false) || (s.min == 0.0 && s.max == 0.0) {
            continue;
        }
        let u = metrics::unit_of(&m.metric);
        let _ = writeln!(
            out,
            "| {} | {} ± {} | {} | {} | {} | {} | {} |",
            escape(&m.metric),
            u.format(s.mean),
            u.format(s.std_dev),
            s.ci.map_or("-".into(), |c| cells::interval(u, &c)),
            u.format(s.median),
            u.format(s.min),
            u.format(s.max),
            m.outlier_runs
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// One comparison of a command against the base: every metric's change, ratio and p-value.
fn comparison_table(out: &mut String, c: &Comparison, pct: &str) {
    let _ = writeln!(
        out,
        "\n### `{}` against `{}`\n\n| Metric | Base | New | Change | Ratio [{pct} CI] | p (Welch) | p adj. (BH) | |\n|:---|---:|---:|---:|---:|---:|---:|:---|",
        escape(&c.new),
        escape(&c.base)
    );
    for m in &c.metrics {
        let u = metrics::unit_of(&m.metric);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            escape(&m.metric),
            u.format(m.base_mean),
            u.format(m.new_mean),
            m.percent().map_or("-".into(), |p| format!("{p:+.2}%")),
            cells::ratio(m),
            cells::p(m.p_value),
            cells::p(m.p_adjusted),
            cells::verdict(m)
        );
    }
}

/// A table cell: pipes would end the cell, backticks the code span.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace('`', "'")
}
