//! The merged view for people: the ranks, the spread of each metric, the slowest rank.

use std::fmt::Write;

use arum_grid::Grid;
use arum_units::Unit;

use super::model::{additive, Merged, Slowest};
use crate::report::metrics;

pub fn render(m: &Merged, all: bool) -> String {
    let mut out = String::new();
    heading(&mut out, m);

    let _ = writeln!(out, "\nRanks");
    table(&mut out, ranks(m), 2..7);

    let _ = writeln!(out, "\nSpread over the ranks (imbalance = max / mean)");
    table(&mut out, spreads(m, all), 1..6);

    if let Some(s) = &m.slowest {
        slowest(&mut out, s);
    }
    out
}

/// The ranks, of how many, the job and the hosts; then the notes.
fn heading(out: &mut String, m: &Merged) {
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
}

/// A row per rank: its host, exit status, times, peak memory and report.
fn ranks(m: &Merged) -> Grid {
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
    b
}

/// A row per metric shown (every one with `all`) that was not always zero: its spread.
fn spreads(m: &Merged, all: bool) -> Grid {
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
    b
}

/// The slowest rank, how far above the mean, and its notes.
fn slowest(out: &mut String, s: &Slowest) {
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

fn table(out: &mut String, b: Grid, right: std::ops::Range<usize>) {
    let t = b.align_right(right);
    t.write_to(out, "  ");
}
