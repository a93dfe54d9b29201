//! A comparison for people: one row per metric, the change, its interval and significance.

use std::fmt::Write;

use arum_grid::Grid;

use super::analysis::{Comparison, MetricComparison};
use super::cells;
use super::gate::GateResult;
use crate::report::metrics;

pub fn render(c: &Comparison, gates: &[GateResult]) -> String {
    let mut out = String::new();
    let pct = arum_units::percent::format_level(c.confidence_level);
    let _ = writeln!(
        out,
        "Comparison at {pct} confidence\n  base: {} ({} run{})\n  new:  {} ({} run{})",
        c.base,
        c.base_runs,
        plural(c.base_runs),
        c.new,
        c.new_runs,
        plural(c.new_runs)
    );
    if !c.tested {
        let _ = writeln!(
            out,
            "  no significance: a single run on a side has no spread to test against; repeat the runs (-r N) for a t-test"
        );
    }
    metrics_table(c, &pct).write_to(&mut out, "  ");
    if c.tested {
        let family = c.metrics.iter().filter(|m| m.p_value.is_some()).count();
        for line in cells::legend(&pct, family).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    for g in gates {
        let _ = writeln!(
            out,
            "  --fail-if-worse {}: {} ({})",
            g.gate,
            if g.failed { "FAILED" } else { "passed" },
            g.reason
        );
    }
    out
}

/// A row per metric compared: both means, the change, the ratio, p and the verdict.
fn metrics_table(c: &Comparison, pct: &str) -> Grid {
    let mut b = Grid::new();
    b.push_record([
        "metric".to_string(),
        "base".into(),
        "new".into(),
        "change".into(),
        format!("ratio [{pct} CI]"),
        "p".into(),
        "p adj.".into(),
        String::new(),
    ]);
    for m in &c.metrics {
        b.push_record(row(m));
    }
    b.align_right(1..7)
}

/// One metric's cells.
fn row(m: &MetricComparison) -> [String; 8] {
    let unit = metrics::unit_of(&m.metric);
    let change = match m.percent() {
        Some(p) => format!("{p:+.2}%"),
        None => unit.format(m.difference),
    };
    [
        m.metric.clone(),
        unit.format(m.base_mean),
        unit.format(m.new_mean),
        change,
        cells::ratio(m),
        cells::p(m.p_value),
        cells::p(m.p_adjusted),
        cells::verdict(m),
    ]
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
