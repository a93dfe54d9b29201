//! The text of the counters section: the original report's per-CPU table (Event, CPU, Count),
//! then totals, metrics and ratios.

use std::fmt::Write;

use arum_units::duration;
use arum_units::quantity::grouped;

use super::model::{CountersReport, EventCounts, EventStatus};
use crate::render::text::indented;
use arum_grid::Grid;

/// The original report's per-CPU table (Event, CPU, Count), then totals and ratios.
pub fn render(out: &mut String, c: &CountersReport) {
    let cpus = c
        .cpus
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let _ = writeln!(
        out,
        "\nPerformance counters ({}, {} scope, CPUs {cpus}; {})",
        c.backend.name(),
        c.scope.name(),
        c.microarchitecture.as_deref().unwrap_or(&c.cpu_key)
    );
    if let Some(why) = &c.hardware_off_reason {
        let _ = writeln!(out, " hardware counting off: {why}");
    }
    if let Some(why) = &c.user_only_reason {
        let _ = writeln!(out, " user space only: {why}");
    }
    if let (Some(start), Some(stop)) = (c.start_spread_ns, c.stop_spread_ns) {
        let _ = writeln!(
            out,
            " the CPUs started counting within {} of each other, and stopped within {}",
            duration::format_ns(start as f64),
            duration::format_ns(stop as f64)
        );
    }
    for note in &c.notes {
        let _ = writeln!(out, " note: {note}");
    }
    if !c.core_types.is_empty() {
        let types: Vec<String> = c
            .core_types
            .iter()
            .map(|t| format!("{} {}", t.cpu, t.core_type))
            .collect();
        let _ = writeln!(out, " core types: {}", types.join(", "));
    }
    let mut per_cpu = Grid::new();
    per_cpu.push_record(["Event", "CPU", "Count", "% running"]);
    let mut totals = Grid::new();
    totals.push_record(["Event", "Total", "% running", "Encoding", ""]);
    for e in &c.events {
        let mut label = label(e);
        if !e.requested {
            label.push_str(" [for metrics]");
        }
        if e.status != EventStatus::Counted {
            totals.push_record([
                label,
                e.status.describe().into(),
                String::new(),
                e.encoding.clone(),
                e.reason.clone().unwrap_or_default(),
            ]);
            continue;
        }
        for p in &e.per_cpu {
            per_cpu.push_record([
                label.clone(),
                p.cpu.to_string(),
                grouped(p.scaled),
                format!("{:.1}", p.percent_running),
            ]);
        }
        let note = if e.multiplexed {
            "multiplexed, scaled"
        } else {
            ""
        };
        totals.push_record([
            label,
            grouped(e.total_scaled),
            format!("{:.1}", e.percent_running),
            e.encoding.clone(),
            note.into(),
        ]);
    }
    for n in &c.not_counted {
        totals.push_record([
            n.spec.clone(),
            "not counted".into(),
            String::new(),
            String::new(),
            "hardware counting is off (see above)".into(),
        ]);
    }
    for b in [per_cpu, totals] {
        // A table with nothing under its headers is left out.
        if b.count_records() <= 1 {
            continue;
        }
        let t = b.align_right(1..3);
        let _ = writeln!(out);
        indented(out, &t);
    }
    if !c.metrics.is_empty() {
        let mut m = Grid::new();
        m.push_record(["Metric", "Value", "Unit", ""]);
        for v in &c.metrics {
            let (value, why) = match (v.value, &v.why_not) {
                (Some(x), _) => (format!("{x:.4}"), String::new()),
                (None, why) => ("-".into(), why.clone().unwrap_or_default()),
            };
            let flag = if v.above_threshold == Some(true) {
                "above its threshold".to_string()
            } else {
                why
            };
            m.push_record([v.name.clone(), value, v.unit_label.clone(), flag]);
        }
        let t = m.align_right(1..2);
        let _ = writeln!(out);
        indented(out, &t);
    }
    if !c.ratios.is_empty() {
        let _ = writeln!(out);
        for r in &c.ratios {
            let _ = writeln!(
                out,
                "  {:<34} {:.4}  ({} / {})",
                r.name, r.value, r.numerator, r.denominator
            );
        }
    }
    let _ = writeln!(out, " opened as: {}", c.opened_as);
}

/// An event as the report names it: as the user wrote it (with `:u`/`:k`), and what it
/// resolved to where that differs.
fn label(e: &EventCounts) -> String {
    let bare = e
        .spec
        .strip_suffix(":u")
        .or_else(|| e.spec.strip_suffix(":k"))
        .unwrap_or(&e.spec);
    if bare.eq_ignore_ascii_case(&e.name) {
        e.spec.clone()
    } else {
        format!("{} ({})", e.spec, e.name)
    }
}
