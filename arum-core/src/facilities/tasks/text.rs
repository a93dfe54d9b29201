//! The text of the per-task section: the process tree, the top threads, the summaries.

use std::fmt::Write;

use arum_units::quantity::grouped;
use arum_units::{duration, size};

use super::model::{
    ProcessRecord, RecordSource, TaskCounters, TaskUsage, TasksReport, ThreadRecord,
};
use crate::render::text::{abbreviated, indented, row, section};
use arum_grid::Grid;

/// Threads in each top list of the per-task section, unless every one is asked for.
pub const TOP_THREADS: usize = 10;

/// Per-task records: the process tree with each process's totals, the threads with the most CPU
/// time, run-queue delay and I/O, and the summaries (imbalance, waiting for a CPU, the check
/// against rusage).
pub fn render(out: &mut String, t: &TasksReport, top: Option<usize>) {
    let _ = writeln!(
        out,
        "\nPer-task records ({}; {} processes, {} threads)",
        t.method.describe(),
        t.processes.len(),
        t.threads.len()
    );
    if let Some(note) = &t.delay_accounting.note {
        let _ = writeln!(out, " delays: {note}");
    } else if t.delay_accounting.enabled_for_run {
        let _ = writeln!(
            out,
            " delays: accounted (kernel.task_delayacct turned on for the run, then restored)"
        );
    }
    for l in &t.limits {
        let _ = writeln!(out, " limit: {l}");
    }

    let mut tree = Grid::new();
    tree.push_record([
        "Process",
        "threads",
        "CPU s",
        "user s",
        "sys s",
        "run-queue",
        "read",
        "written",
        "peak RSS",
        "exit",
        "command",
    ]);
    for (depth, p) in process_tree(&t.processes) {
        let u = &p.usage;
        tree.push_record([
            format!("{}{}", "  ".repeat(depth), p.pid),
            p.threads.to_string(),
            format!("{:.3}", u.cpu_ns as f64 / 1e9),
            format!("{:.3}", u.user_ns as f64 / 1e9),
            format!("{:.3}", u.system_ns as f64 / 1e9),
            delay_ms(u),
            size::format(u.read_chars as f64),
            size::format(u.write_chars as f64),
            size::format(u.peak_rss_bytes as f64),
            exit_of(p.exit_code, p.exit_signal),
            abbreviated(
                &p.argv
                    .as_ref()
                    .map_or_else(|| format!("[{}]", p.comm), shell_words::join),
            )
            .chars()
            .take(60)
            .collect(),
        ]);
    }
    let _ = writeln!(out);
    let table = tree.align_right(1..9);
    indented(out, &table);

    let lists: [(&str, ThreadKey); 3] = [
        ("CPU time", |t| t.usage.cpu_ns),
        ("run-queue delay", |t| {
            t.usage.delays.run_queue.map_or(0, |d| d.total_ns)
        }),
        ("I/O (bytes read and written)", |t| {
            t.usage.read_chars + t.usage.write_chars
        }),
    ];
    for (what, key) in lists {
        let mut ranked: Vec<&ThreadRecord> = t.threads.iter().filter(|t| key(t) > 0).collect();
        if ranked.is_empty() {
            continue;
        }
        ranked.sort_by_key(|t| std::cmp::Reverse(key(t)));
        let shown = top.unwrap_or(ranked.len()).min(ranked.len());
        let scope = if shown < ranked.len() {
            format!(
                "top {shown} of {}; --per-task=all for every one",
                ranked.len()
            )
        } else {
            format!("all {}", ranked.len())
        };
        let _ = writeln!(out, "\n Threads by {what} ({scope})");
        threads_table(out, &ranked[..shown]);
    }

    let _ = writeln!(out, "\n Summary");
    let mut rows = Vec::new();
    for p in t.processes.iter().filter(|p| p.imbalance.is_some()) {
        rows.push(row(
            &format!("imbalance of {} [{}]", p.pid, p.comm),
            format!(
                "{:.2} (busiest thread / mean CPU time of {} threads)",
                p.imbalance.unwrap_or(0.0),
                p.threads
            ),
        ));
    }
    if let Some(d) = t.totals.delays.run_queue {
        let lived: i64 = t
            .threads
            .iter()
            .filter_map(|t| Some(t.end_ns? - t.start_ns?))
            .sum();
        if lived > 0 {
            rows.push(row(
                "waiting for a CPU",
                format!(
                    "{:.1}% of the threads' lifetime ({:.3} s in {} waits)",
                    100.0 * d.total_ns as f64 / lived as f64,
                    d.total_ns as f64 / 1e9,
                    d.count
                ),
            ));
        }
    }
    for (name, d) in [
        ("block I/O delay", t.totals.delays.block_io),
        ("swap-in delay", t.totals.delays.swap_in),
        ("reclaim delay", t.totals.delays.reclaim),
        ("thrashing delay", t.totals.delays.thrashing),
    ] {
        if let Some(d) = d {
            rows.push(row(
                name,
                format!(
                    "{} in {} waits",
                    duration::format_ns(d.total_ns as f64),
                    d.count
                ),
            ));
        }
    }
    let disagree: Vec<_> = t.rusage_check.iter().filter(|c| !c.agrees).collect();
    if disagree.is_empty() && !t.rusage_check.is_empty() {
        rows.push(row(
            "totals vs rusage",
            format!("all {} fields agree", t.rusage_check.len()),
        ));
    }
    for c in disagree {
        rows.push(row(
            &format!("totals vs rusage: {}", c.field),
            format!(
                "{} in the records, {} in rusage ({})",
                c.tasks_total,
                c.rusage,
                c.note.as_deref().unwrap_or("")
            ),
        ));
    }
    section(out, None, &rows);
    if let Some(c) = &t.counters {
        task_counters(out, c, top);
    }
}

/// What a top list of threads is ranked by.
type ThreadKey = fn(&ThreadRecord) -> u64;

fn threads_table(out: &mut String, threads: &[&ThreadRecord]) {
    let mut b = Grid::new();
    b.push_record([
        "TID",
        "PID",
        "comm",
        "CPU s",
        "run-queue",
        "wait %",
        "read",
        "written",
        "start s",
        "end s",
        "",
    ]);
    for t in threads {
        let secs = |ns: Option<i64>| ns.map_or("-".into(), |n| format!("{:.3}", n as f64 / 1e9));
        b.push_record([
            t.tid.to_string(),
            t.pid.to_string(),
            t.comm.clone(),
            format!("{:.3}", t.usage.cpu_ns as f64 / 1e9),
            delay_ms(&t.usage),
            t.cpu_wait_share
                .map_or("-".into(), |s| format!("{:.1}", s * 100.0)),
            size::format(t.usage.read_chars as f64),
            size::format(t.usage.write_chars as f64),
            secs(t.start_ns),
            secs(t.end_ns),
            if t.source == RecordSource::ProcSample {
                "sampled".into()
            } else {
                String::new()
            },
        ]);
    }
    let table = b.align_right(3..10);
    indented(out, &table);
}

fn task_counters(out: &mut String, c: &TaskCounters, top: Option<usize>) {
    if !c.threads.is_empty() {
        let mut b = Grid::new();
        b.push_record(
            ["TID", "PID"]
                .into_iter()
                .map(String::from)
                .chain(c.events.iter().cloned()),
        );
        let shown = top.unwrap_or(c.threads.len()).min(c.threads.len());
        let mut rows: Vec<_> = c.threads.iter().collect();
        rows.sort_by_key(|t| std::cmp::Reverse(t.counts.first().copied().unwrap_or(0)));
        for t in &rows[..shown] {
            b.push_record(
                [t.tid.to_string(), t.pid.to_string()]
                    .into_iter()
                    .chain(t.counts.iter().map(|&v| grouped(v))),
            );
        }
        let _ = writeln!(
            out,
            "\n Events per thread ({shown} of {} threads)",
            c.threads.len()
        );
        let table = b.align_right(2..);
        indented(out, &table);
    }
    for n in &c.not_split {
        let _ = writeln!(out, " not split per thread: {}: {}", n.spec, n.reason);
    }
}

/// Processes in tree order (each after its parent), with their depth.
fn process_tree(processes: &[ProcessRecord]) -> Vec<(usize, &ProcessRecord)> {
    let pids: std::collections::HashSet<u32> = processes.iter().map(|p| p.pid).collect();
    let mut out = Vec::with_capacity(processes.len());
    fn visit<'a>(
        p: &'a ProcessRecord,
        depth: usize,
        all: &'a [ProcessRecord],
        out: &mut Vec<(usize, &'a ProcessRecord)>,
    ) {
        out.push((depth, p));
        for c in all.iter().filter(|c| c.parent == p.pid && c.pid != p.pid) {
            visit(c, depth + 1, all, out);
        }
    }
    for root in processes.iter().filter(|p| !pids.contains(&p.parent)) {
        visit(root, 0, processes, &mut out);
    }
    out
}

fn delay_ms(u: &TaskUsage) -> String {
    u.delays
        .run_queue
        .map_or("-".into(), |d| duration::format_ns(d.total_ns as f64))
}

fn exit_of(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => format!("sig {s}"),
        (Some(c), None) => c.to_string(),
        (None, None) => "-".into(),
    }
}
