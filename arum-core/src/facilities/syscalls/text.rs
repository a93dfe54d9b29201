//! The text of the system-calls section: the per-call and per-category tables.

use std::fmt::Write;

use arum_grid::Grid;

use arum_units::duration;
use arum_units::quantity::grouped;

use super::model::{SyscallStats, SyscallsReport};
use crate::render::text::right_aligned;

/// Calls listed in the text (JSON and CSV have them all).
const CALLS_SHOWN: usize = 25;

pub(crate) fn stats_table(out: &mut String, first: &str, rows: &[SyscallStats]) {
    let mut b = Grid::new();
    b.push_record([
        first, "Calls", "Errors", "Total", "Mean", "p50", "p99", "Max", "Bytes", "Errno",
    ]);
    for s in rows {
        let ns = |v: u64| duration::format_ns(v as f64);
        b.push_record([
            s.name.clone(),
            grouped(s.calls),
            grouped(s.errors),
            ns(s.total_ns),
            duration::format_ns(s.mean_ns),
            ns(s.p50_ns),
            ns(s.p99_ns),
            ns(s.max_ns),
            s.bytes.map_or_else(String::new, grouped),
            s.errnos
                .iter()
                .map(|e| format!("{} {}", e.errno, grouped(e.count)))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    right_aligned(out, b);
}

pub fn render(out: &mut String, s: &SyscallsReport) {
    let engine = match s.engine.as_deref() {
        Some("bpf") => ", counted in the kernel by BPF",
        Some(_) => ", perf records",
        None => "",
    };
    let _ = writeln!(
        out,
        "\nSystem calls (raw_syscalls tracepoints{engine}; {})",
        s.selection.join(", ")
    );
    if let Some(note) = &s.engine_note {
        let _ = writeln!(out, " note: {note}");
    }
    if let Some(why) = &s.off_reason {
        let _ = writeln!(out, " not traced: {why}");
        return;
    }
    stats_table(out, "Category", &s.categories);
    let _ = writeln!(out);
    stats_table(out, "Call", &s.calls[..s.calls.len().min(CALLS_SHOWN)]);
    if s.calls.len() > CALLS_SHOWN {
        let _ = writeln!(
            out,
            " ... {} more calls in the JSON and CSV reports",
            s.calls.len() - CALLS_SHOWN
        );
    }
    let unfinished = s.unfinished.iter().map(|c| c.count).sum::<u64>();
    if s.engine.as_deref() == Some("bpf") {
        let _ = writeln!(
            out,
            " complete: {} calls not counted (full maps), {} exits without an entry, {} calls unfinished at the end",
            grouped(s.uncounted),
            grouped(s.orphan_exits),
            unfinished
        );
        if s.records > 0 || s.lost > 0 {
            let _ = writeln!(
                out,
                " records for the views: {} read, {} lost",
                grouped(s.records),
                grouped(s.lost)
            );
        }
    } else {
        let _ = writeln!(
            out,
            " records: {} read, {} lost, {} exits without an entry, {} calls unfinished at the end",
            grouped(s.records),
            grouped(s.lost),
            grouped(s.orphan_exits),
            unfinished
        );
    }
    if let (Some(cost), Some(total)) = (s.probe_cost_ns, s.overhead_ns) {
        let _ = writeln!(
            out,
            " perturbation: a traced call costs {} here, about {} in all",
            duration::format_ns(cost),
            duration::format_ns(total as f64)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::syscalls::model::{CallCount, ErrnoCount};
    use crate::render::testing::{has_line, line, line_number};

    #[test]
    fn the_section_shows_calls_errnos_and_the_probe_cost() {
        let openat = SyscallStats {
            name: "openat".into(),
            category: "file".into(),
            calls: 1200,
            errors: 300,
            errnos: vec![ErrnoCount {
                errno: "ENOENT".into(),
                count: 300,
            }],
            total_ns: 2_400_000,
            mean_ns: 2000.0,
            bytes: None,
            ..SyscallStats::default()
        };
        let s = SyscallsReport {
            selection: vec!["file".into()],
            calls: vec![openat.clone()],
            categories: vec![openat],
            records: 2400,
            engine: Some("perf records".into()),
            probe_cost_ns: Some(1000.0),
            overhead_ns: Some(1_200_000),
            ..SyscallsReport::default()
        };
        let mut out = String::new();
        render(&mut out, &s);
        assert!(
            out.contains("System calls (raw_syscalls tracepoints, perf records; file)"),
            "{out}"
        );
        assert!(out.contains("records: 2,400 read, 0 lost"), "{out}");
        // The kernel engine: complete counts, its note, and no records line without views.
        let kernel = SyscallsReport {
            engine: Some("bpf".into()),
            engine_note: Some("the views are off: tracefs".into()),
            records: 0,
            uncounted: 3,
            ..s.clone()
        };
        let mut out = String::new();
        render(&mut out, &kernel);
        assert!(
            out.contains("tracepoints, counted in the kernel by BPF; file)"),
            "{out}"
        );
        assert!(
            out.contains("complete: 3 calls not counted (full maps)"),
            "{out}"
        );
        assert!(out.contains(" note: the views are off: tracefs"), "{out}");
        assert!(!out.contains("records"), "{out}");
        assert!(out.contains("1,200") && out.contains("ENOENT 300"), "{out}");
        assert!(out.contains("a traced call costs 1 µs"), "{out}");
        let off = SyscallsReport {
            off_reason: Some("no permission".into()),
            ..SyscallsReport::default()
        };
        let mut out = String::new();
        render(&mut out, &off);
        assert!(out.contains("not traced: no permission"), "{out}");
    }

    #[test]
    fn the_call_table_stops_at_its_length_and_counts_the_rest() {
        let call = |i: u64| SyscallStats {
            name: format!("call{i}"),
            category: "other".into(),
            calls: 100 - i,
            total_ns: 1000,
            bytes: (i == 0).then_some(65536),
            ..SyscallStats::default()
        };
        let s = SyscallsReport {
            selection: vec!["all".into()],
            calls: (0..30).map(call).collect(),
            categories: vec![SyscallStats {
                name: "other".into(),
                ..call(0)
            }],
            records: 12_000,
            lost: 2,
            orphan_exits: 1,
            unfinished: vec![CallCount {
                name: "wait4".into(),
                count: 1,
            }],
            ..SyscallsReport::default()
        };
        let mut out = String::new();
        render(&mut out, &s);
        // The categories, then the calls, each under its header.
        assert!(line_number(&out, "Category Calls") < line_number(&out, "Call Calls"));
        assert_eq!(
            line(&out, "call0 "),
            "call0 100 0 1 µs 0 ns 0 ns 0 ns 0 ns 65,536"
        );
        assert!(
            has_line(&out, "call24 76") && !has_line(&out, "call25"),
            "{out}"
        );
        assert_eq!(
            line(&out, "..."),
            "... 5 more calls in the JSON and CSV reports"
        );
        assert_eq!(
            line(&out, "records:"),
            "records: 12,000 read, 2 lost, 1 exits without an entry, 1 calls unfinished at the end"
        );
        assert!(
            !has_line(&out, "perturbation"),
            "no probe cost, no line: {out}"
        );
    }
}
