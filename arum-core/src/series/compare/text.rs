//! A comparison for people: one row per metric, the change, its interval and significance.

use std::fmt::Write;

use arum_grid::Grid;

use super::analysis::{Change, Comparison, MetricComparison};
use super::gate::GateResult;
use crate::report::metrics;

pub fn render(c: &Comparison, gates: &[GateResult]) -> String {
    let mut out = String::new();
    let pct = c.confidence_level * 100.0;
    let _ = writeln!(
        out,
        "Comparison at {pct:.0}% confidence\n  base: {} ({} run{})\n  new:  {} ({} run{})",
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
    metrics_table(c, pct).write_to(&mut out, "  ");
    if c.tested {
        let _ = writeln!(
            out,
            "  * significant at {pct:.0}% (Welch's t-test), ** at 99%, *** at 99.9%; ~ no significant difference"
        );
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
fn metrics_table(c: &Comparison, pct: f64) -> Grid {
    let mut b = Grid::new();
    b.push_record([
        "metric".to_string(),
        "base".into(),
        "new".into(),
        "change".into(),
        format!("ratio [{pct:.0}% CI]"),
        "p".into(),
        String::new(),
    ]);
    for m in &c.metrics {
        b.push_record(row(m));
    }
    b.align_right(1..6)
}

/// One metric's cells.
fn row(m: &MetricComparison) -> [String; 7] {
    let unit = metrics::unit_of(&m.metric);
    let change = match m.percent() {
        Some(p) => format!("{p:+.2}%"),
        None => unit.format(m.difference),
    };
    let ratio = match (m.ratio, m.ratio_ci) {
        (Some(r), Some(ci)) => format!("{r:.3} [{:.3}, {:.3}]", ci.low, ci.high),
        (Some(r), None) => format!("{r:.3}"),
        _ => "-".into(),
    };
    let p = m.p_value.map_or("-".into(), |p| {
        if p < 0.001 {
            "<0.001".into()
        } else {
            format!("{p:.3}")
        }
    });
    let verdict = match (m.change, m.significant) {
        (Change::Same, _) => "same".to_string(),
        (_, Some(false)) => "~".to_string(),
        (Change::Better, _) => format!("better {}", m.marks()),
        (Change::Worse, _) => format!("worse {}", m.marks()),
        (Change::Higher, _) => format!("higher {}", m.marks()),
        (Change::Lower, _) => format!("lower {}", m.marks()),
    };
    [
        m.metric.clone(),
        unit.format(m.base_mean),
        unit.format(m.new_mean),
        change,
        ratio,
        p,
        verdict.trim_end().to_string(),
    ]
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
