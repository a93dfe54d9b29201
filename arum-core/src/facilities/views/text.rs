//! The text of the views section: ALMT's overview, tasks and elapsed-time table.

use std::fmt::Write;

use arum_units::duration;
use arum_units::quantity::grouped;

use super::model::{TasksView, ViewsReport};
use crate::render::text::right_aligned;
use arum_grid::Grid;

/// Rows of the elapsed-time table in the text.
const TABLE_ROWS: usize = 40;

pub fn render(out: &mut String, v: &ViewsReport) {
    let o = &v.overview;
    let _ = writeln!(
        out,
        "\nOverview ({} of probe events, {} per column)",
        duration::format_ns(o.duration_ns as f64),
        duration::format_ns(o.interval_ns as f64)
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
            duration::format_ns(p.first_ns as f64),
            duration::format_ns(p.last_ns as f64)
        );
    }
    let busiest: Vec<String> = o
        .busiest
        .iter()
        .map(|b| format!("{} {}", b.probe, duration::format_ns(b.total_ns as f64)))
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
    if v.missing_calls > 0 {
        let _ = writeln!(
            out,
            " {} system calls counted in the kernel are not in the views (their records were lost)",
            grouped(v.missing_calls)
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
        duration::format_ns(d.mean_ns),
        duration::format_ns(d.p50_ns as f64),
        duration::format_ns(d.p99_ns as f64),
        duration::format_ns(d.max_ns as f64)
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
            duration::format_ns(n.duration.mean_ns),
            duration::format_ns(n.duration.p99_ns as f64),
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
            .map(|n| format!("{}@{}", n.probe, duration::format_ns(n.offset_ns as f64)))
            .collect();
        let _ = writeln!(
            out,
            " slow task: pid {} tid {}{} {}: {}{}",
            s.pid,
            s.tid,
            s.fd.map_or_else(String::new, |fd| format!(" fd {fd}")),
            duration::format_ns(s.duration_ns as f64),
            calls.join(" "),
            if s.nested.len() > 8 { " ..." } else { "" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::views::model::{NestedCall, ProcessLine, TableRow};
    use crate::render::testing::{has_line, line};

    #[test]
    fn the_views_show_the_rate_the_tasks_and_the_table() {
        let v = crate::facilities::views::testing::views();
        let mut out = String::new();
        render(&mut out, &v);
        assert!(out.contains("| ▄█|"), "{out}");
        assert!(
            out.contains("Tasks accept4 .. close (by descriptor): 10 tasks"),
            "{out}"
        );
        assert!(out.contains("12.5%") && out.contains("87.5%"), "{out}");
        assert!(out.contains("7 nginx") && out.contains("60,000"), "{out}");
    }

    #[test]
    fn processes_slow_tasks_and_the_table_read_as_lines() {
        let mut v = crate::facilities::views::testing::views();
        v.overview.processes = vec![ProcessLine {
            pid: 7,
            name: "nginx".into(),
            threads: 2,
            events: 12_345,
            first_ns: 1000,
            last_ns: 2_500_000,
        }];
        let out = {
            let mut out = String::new();
            render(&mut out, &v);
            out
        };
        assert_eq!(
            line(&out, "Overview"),
            "Overview (3 ms of probe events, 1 ms per column)"
        );
        assert_eq!(
            line(&out, "process 7"),
            "process 7 nginx: 2 threads, 12,345 events, 1 µs .. 2.5 ms"
        );
        assert_eq!(line(&out, "busiest:"), "busiest: sendfile 50 µs");
        assert_eq!(
            line(&out, "slow task:"),
            "slow task: pid 7 tid 8 fd 6 40 µs: send<file>@1 µs"
        );
        assert_eq!(line(&out, "7 nginx"), "7 nginx sendfile 10 25.0 60,000");
        assert!(!has_line(&out, "..."), "{out}");
    }

    #[test]
    fn long_tables_and_dropped_events_are_said_and_tasks_are_optional() {
        let mut v = crate::facilities::views::testing::views();
        v.tasks.as_mut().unwrap().slowest[0].nested = (0..9)
            .map(|i| NestedCall {
                probe: format!("p{i}"),
                offset_ns: i * 1000,
                duration_ns: 10,
            })
            .collect();
        v.table = (0..45)
            .map(|i| TableRow {
                pid: 7,
                process: "nginx".into(),
                probe: format!("probe{i}"),
                calls: 1,
                elapsed_us: 1.0,
                elapsed_cycles: None,
            })
            .collect();
        v.dropped_events = 1500;
        v.missing_calls = 2001;
        let mut out = String::new();
        render(&mut out, &v);
        let slow = line(&out, "slow task:");
        assert!(
            slow.ends_with("p6@6 µs p7@7 µs ...") && !slow.contains("p8"),
            "{slow}"
        );
        assert_eq!(line(&out, "7 nginx probe39"), "7 nginx probe39 1 1.0 -");
        assert!(!has_line(&out, "7 nginx probe40"), "{out}");
        assert_eq!(
            line(&out, "... 5 more rows"),
            "... 5 more rows in the JSON and CSV reports"
        );
        assert_eq!(
            line(&out, "1,500 probe events"),
            "1,500 probe events were not kept (memory limit) and are not in the views"
        );
        assert_eq!(
            line(&out, "2,001 system calls"),
            "2,001 system calls counted in the kernel are not in the views (their records were lost)"
        );

        v.tasks = None;
        let mut out = String::new();
        render(&mut out, &v);
        assert!(
            !has_line(&out, "Tasks ") && !has_line(&out, "slow task"),
            "{out}"
        );
        assert!(
            has_line(&out, "Elapsed time per process and probe"),
            "{out}"
        );
    }
}
