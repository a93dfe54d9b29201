//! The merged view for people: the ranks, the spread of each metric, the slowest rank.

use std::fmt::Write;

use arum_grid::Grid;
use arum_units::Unit;

use super::model::{additive, Merged};
use crate::report::metrics;

pub fn render(m: &Merged, all: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ARUM MERGE: {} rank{}{}{} on {} host{} ({})",
        m.ranks.len(),
        if m.ranks.len() == 1 { "" } else { "s" },
        m.size.map_or(String::new(), |n| format!(" of {n}")),
        m.job_id
            .as_ref()
            .map_or(String::new(), |j| format!(", job {j},")),
        m.hosts.len(),
        if m.hosts.len() == 1 { "" } else { "s" },
        m.hosts.join(", ")
    );
    for n in &m.notes {
        let _ = writeln!(out, "  note: {n}");
    }

    let _ = writeln!(out, "\nRanks");
    let mut b = Grid::new();
    b.push_record([
        "rank",
        "host",
        "exit",
        "wall",
        "user",
        "sys",
        "peak memory",
        "report",
    ]);
    for r in &m.ranks {
        b.push_record([
            r.rank.to_string(),
            r.host.clone(),
            r.exit_status.to_string(),
            Unit::Nanoseconds.format(r.wall_ns as f64),
            Unit::Nanoseconds.format(r.user_ns as f64),
            Unit::Nanoseconds.format(r.system_ns as f64),
            r.peak_rss_bytes
                .map_or("-".into(), |p| Unit::Bytes.format(p as f64)),
            r.file.clone(),
        ]);
    }
    table(&mut out, b, 2..7);

    let _ = writeln!(out, "\nSpread over the ranks (imbalance = max / mean)");
    let mut b = Grid::new();
    b.push_record([
        "metric",
        "total",
        "mean",
        "min (rank)",
        "max (rank)",
        "imbalance",
    ]);
    for s in &m.metrics {
        if !(all || metrics::shown(&s.metric, false)) || (s.min == 0.0 && s.max == 0.0) {
            continue;
        }
        let unit = metrics::unit_of(&s.metric);
        b.push_record([
            s.metric.clone(),
            if additive(&s.metric) {
                unit.format(s.total)
            } else {
                "-".into()
            },
            unit.format(s.mean),
            format!("{} ({})", unit.format(s.min), s.min_rank),
            format!("{} ({})", unit.format(s.max), s.max_rank),
            s.imbalance.map_or("-".into(), |i| format!("{i:.3}")),
        ]);
    }
    table(&mut out, b, 1..6);

    if let Some(s) = &m.slowest {
        let _ = writeln!(
            out,
            "\nSlowest rank: {} on {} ({}, {:.1}% above the mean)",
            s.rank,
            s.host,
            Unit::Nanoseconds.format(s.wall_ns as f64),
            s.above_mean_percent
        );
        for n in &s.notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    out
}

fn table(out: &mut String, b: Grid, right: std::ops::Range<usize>) {
    let t = b.align_right(right);
    t.write_to(out, "  ");
}
