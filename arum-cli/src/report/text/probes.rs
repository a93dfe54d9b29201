//! The text of `--syscalls`: the per-call and per-category tables, and the ALMT views.

use std::fmt::Write;

use crate::report::grid::Grid;

use super::{duration, grouped, indented};
use crate::report::model::{SyscallStats, SyscallsReport, TasksView, ViewsReport};

/// Calls listed in the text (JSON and CSV have them all).
const CALLS_SHOWN: usize = 25;
/// Rows of the elapsed-time table in the text.
const TABLE_ROWS: usize = 40;

fn right_aligned(out: &mut String, b: Grid) {
    let table = b.align_right(1..);
    indented(out, &table);
}

fn stats_table(out: &mut String, first: &str, rows: &[SyscallStats]) {
    let mut b = Grid::new();
    b.push_record([
        first, "Calls", "Errors", "Total", "Mean", "p50", "p99", "Max", "Bytes", "Errno",
    ]);
    for s in rows {
        let ns = |v: u64| duration(v as f64);
        b.push_record([
            s.name.clone(),
            grouped(s.calls),
            grouped(s.errors),
            ns(s.total_ns),
            duration(s.mean_ns),
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

pub fn syscalls(out: &mut String, s: &SyscallsReport) {
    let _ = writeln!(
        out,
        "\nSystem calls (raw_syscalls tracepoints; {})",
        s.selection.join(", ")
    );
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
    let _ = writeln!(
        out,
        " records: {} read, {} lost, {} exits without an entry, {} calls unfinished at the end",
        grouped(s.records),
        grouped(s.lost),
        grouped(s.orphan_exits),
        s.unfinished.iter().map(|c| c.count).sum::<u64>()
    );
    if let (Some(cost), Some(total)) = (s.probe_cost_ns, s.overhead_ns) {
        let _ = writeln!(
            out,
            " perturbation: a traced call costs {} here, about {} in all",
            duration(cost),
            duration(total as f64)
        );
    }
}

pub fn views(out: &mut String, v: &ViewsReport) {
    let o = &v.overview;
    let _ = writeln!(
        out,
        "\nOverview ({} of probe events, {} per column)",
        duration(o.duration_ns as f64),
        duration(o.interval_ns as f64)
    );
    let peak = o.rate.iter().copied().max().unwrap_or(0).max(1);
    let bars: String = o
        .rate
        .iter()
        .map(|&n| {
            const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
            LEVELS[((n * 8).div_ceil(peak)) as usize]
        })
        .collect();
    let _ = writeln!(
        out,
        " system calls |{bars}| peak {} per column",
        grouped(peak)
    );
    for p in &o.processes {
        let _ = writeln!(
            out,
            " process {} {}: {} threads, {} events, {} .. {}",
            p.pid,
            p.name,
            p.threads,
            grouped(p.events),
            duration(p.first_ns as f64),
            duration(p.last_ns as f64)
        );
    }
    let busiest: Vec<String> = o
        .busiest
        .iter()
        .map(|b| format!("{} {}", b.probe, duration(b.total_ns as f64)))
        .collect();
    let _ = writeln!(out, " busiest: {}", busiest.join(", "));
    if let Some(t) = &v.tasks {
        tasks(out, t);
    }
    let _ = writeln!(out, "\nElapsed time per process and probe");
    let mut b = Grid::new();
    b.push_record(["Process", "Probe", "Calls", "µs", "TSC cycles"]);
    for r in v.table.iter().take(TABLE_ROWS) {
        b.push_record([
            format!("{} {}", r.pid, r.process),
            r.probe.clone(),
            grouped(r.calls),
            format!("{:.1}", r.elapsed_us),
            r.elapsed_cycles.map_or_else(|| "-".into(), grouped),
        ]);
    }
    right_aligned(out, b);
    if v.table.len() > TABLE_ROWS {
        let _ = writeln!(
            out,
            " ... {} more rows in the JSON and CSV reports",
            v.table.len() - TABLE_ROWS
        );
    }
    if v.dropped_events > 0 {
        let _ = writeln!(
            out,
            " {} probe events were not kept (memory limit) and are not in the views",
            grouped(v.dropped_events)
        );
    }
}

fn tasks(out: &mut String, t: &TasksView) {
    let d = &t.duration;
    let _ = writeln!(
        out,
        "\nTasks {} .. {} (by {}): {} tasks ({} still open), mean {}, p50 {}, p99 {}, max {}",
        t.begin,
        t.end,
        t.keyed_by,
        grouped(t.tasks),
        grouped(t.open),
        duration(d.mean_ns),
        duration(d.p50_ns as f64),
        duration(d.p99_ns as f64),
        duration(d.max_ns as f64)
    );
    let mut b = Grid::new();
    b.push_record([
        "Nested probe",
        "Tasks",
        "Calls/task",
        "Mean",
        "p99",
        "Share",
    ]);
    for n in &t.nested {
        b.push_record([
            n.probe.clone(),
            grouped(n.tasks),
            format!("{:.2}", n.calls_per_task),
            duration(n.duration.mean_ns),
            duration(n.duration.p99_ns as f64),
            format!("{:.1}%", n.share_pct),
        ]);
    }
    b.push_record([
        "(in no nested probe)".to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        format!("{:.1}%", t.unaccounted_pct),
    ]);
    right_aligned(out, b);
    for s in &t.slowest {
        let calls: Vec<String> = s
            .nested
            .iter()
            .take(8)
            .map(|n| format!("{}@{}", n.probe, duration(n.offset_ns as f64)))
            .collect();
        let _ = writeln!(
            out,
            " slow task: pid {} tid {}{} {}: {}{}",
            s.pid,
            s.tid,
            s.fd.map_or_else(String::new, |fd| format!(" fd {fd}")),
            duration(s.duration_ns as f64),
            calls.join(" "),
            if s.nested.len() > 8 { " ..." } else { "" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::ErrnoCount;

    #[test]
    fn the_sections_show_calls_errnos_tasks_and_the_table() {
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
            probe_cost_ns: Some(1000.0),
            overhead_ns: Some(1_200_000),
            ..SyscallsReport::default()
        };
        let mut out = String::new();
        syscalls(&mut out, &s);
        assert!(
            out.contains("System calls (raw_syscalls tracepoints; file)"),
            "{out}"
        );
        assert!(out.contains("1,200") && out.contains("ENOENT 300"), "{out}");
        assert!(out.contains("a traced call costs 1.00 µs"), "{out}");
        let off = SyscallsReport {
            off_reason: Some("no permission".into()),
            ..SyscallsReport::default()
        };
        let mut out = String::new();
        syscalls(&mut out, &off);
        assert!(out.contains("not traced: no permission"), "{out}");

        let v = crate::views::testing::views();
        let mut out = String::new();
        views(&mut out, &v);
        assert!(out.contains("| ▄█|"), "{out}");
        assert!(
            out.contains("Tasks accept4 .. close (by descriptor): 10 tasks"),
            "{out}"
        );
        assert!(out.contains("12.5%") && out.contains("87.5%"), "{out}");
        assert!(out.contains("7 nginx") && out.contains("60,000"), "{out}");
    }
}
