//! The text of the per-task section: the process tree, the top threads, the summaries.

use std::fmt::Write;

use arum_units::quantity::grouped;
use arum_units::{duration, size};

use super::model::{
    Delays, ProcessRecord, RecordSource, RusageCheck, TaskCounters, TaskUsage, TasksReport,
    ThreadRecord,
};
use crate::render::text::{abbreviated, indented, row, section};
use arum_grid::Grid;

/// Threads in each top list of the per-task section, unless every one is asked for.
pub const TOP_THREADS: usize = 10;

/// Per-task records: the process tree with each process's totals, the threads with the most CPU
/// time, run-queue delay and I/O, and the summaries (imbalance, waiting for a CPU, the check
/// against rusage).
pub fn render(out: &mut String, t: &TasksReport, top: Option<usize>) {
    title(out, t);
    tree_table(out, &t.processes);
    top_lists(out, &t.threads, top);
    let _ = writeln!(out, "\n Summary");
    let mut rows = imbalance_rows(&t.processes);
    rows.extend(waiting_row(t));
    rows.extend(delay_rows(&t.totals.delays));
    rows.extend(rusage_rows(&t.rusage_check));
    section(out, None, &rows);
    if let Some(c) = &t.counters {
        task_counters(out, c, top);
    }
}

/// The title, how delays were accounted, and what could not be recorded.
fn title(out: &mut String, t: &TasksReport) {
    let _ = writeln!(
        out,
        "\nPer-task records ({}; {} processes, {} threads)",
        t.method.describe(),
        t.processes.len(),
        t.threads.len()
    );
    if t.cpu_from_switches {
        let _ = writeln!(
            out,
            " CPU: the scheduler's time of each task to its last switch (counted in the kernel by BPF)"
        );
    }
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
}

/// The processes in tree order, each indented under its parent, with its totals.
fn tree_table(out: &mut String, processes: &[ProcessRecord]) {
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
    for (depth, p) in process_tree(processes) {
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
}

/// The threads with the most CPU time, run-queue delay and I/O: `top` of each (every one when
/// `None`); a list none of whose threads has any is left out.
fn top_lists(out: &mut String, threads: &[ThreadRecord], top: Option<usize>) {
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
        let mut ranked: Vec<&ThreadRecord> = threads.iter().filter(|t| key(t) > 0).collect();
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
}

fn imbalance_rows(processes: &[ProcessRecord]) -> Vec<[String; 2]> {
    processes
        .iter()
        .filter(|p| p.imbalance.is_some())
        .map(|p| {
            row(
                &format!("imbalance of {} [{}]", p.pid, p.comm),
                format!(
                    "{:.2} (busiest thread / mean CPU time of {} threads)",
                    p.imbalance.unwrap_or(0.0),
                    p.threads
                ),
            )
        })
        .collect()
}

/// Run-queue delay as a share of the threads' summed lifetimes, when both are known.
fn waiting_row(t: &TasksReport) -> Option<[String; 2]> {
    let d = t.totals.delays.run_queue?;
    let lived: i64 = t
        .threads
        .iter()
        .filter_map(|t| Some(t.end_ns? - t.start_ns?))
        .sum();
    (lived > 0).then(|| {
        row(
            "waiting for a CPU",
            format!(
                "{:.1}% of the threads' lifetime ({:.3} s in {} waits)",
                100.0 * d.total_ns as f64 / lived as f64,
                d.total_ns as f64 / 1e9,
                d.count
            ),
        )
    })
}

/// The delays other than the run queue's, where they were accounted.
fn delay_rows(delays: &Delays) -> Vec<[String; 2]> {
    [
        ("block I/O delay", delays.block_io),
        ("swap-in delay", delays.swap_in),
        ("reclaim delay", delays.reclaim),
        ("thrashing delay", delays.thrashing),
    ]
    .into_iter()
    .filter_map(|(name, d)| {
        let d = d?;
        Some(row(
            name,
            format!(
                "{} in {} waits",
                duration::format_ns(d.total_ns as f64),
                d.count
            ),
        ))
    })
    .collect()
}

/// The totals against rusage: one row when every field agrees, else one per disagreement.
fn rusage_rows(check: &[RusageCheck]) -> Vec<[String; 2]> {
    let disagree: Vec<_> = check.iter().filter(|c| !c.agrees).collect();
    if disagree.is_empty() && !check.is_empty() {
        return vec![row(
            "totals vs rusage",
            format!("all {} fields agree", check.len()),
        )];
    }
    disagree
        .into_iter()
        .map(|c| {
            row(
                &format!("totals vs rusage: {}", c.field),
                format!(
                    "{} in the records, {} in rusage ({})",
                    c.tasks_total,
                    c.rusage,
                    c.note.as_deref().unwrap_or("")
                ),
            )
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::counters::model::NotCounted;
    use crate::facilities::tasks::model::{DelayAccounting, DelayTotal, ThreadCounts};
    use crate::render::testing::{collapsed, has_line, line, line_number};

    /// Process 100 (`server`, 12 threads, thread i using i ms of CPU) and its child 101
    /// (`worker`, killed by signal 9).
    fn tasks() -> TasksReport {
        let threads: Vec<ThreadRecord> = (1..=12)
            .map(|i| ThreadRecord {
                pid: 100,
                tid: 1000 + i,
                parent: 1,
                comm: format!("t{i}"),
                start_ns: Some(0),
                end_ns: Some(1_000_000_000),
                usage: TaskUsage {
                    cpu_ns: u64::from(i) * 1_000_000,
                    read_chars: if i == 3 { 4096 } else { 0 },
                    ..TaskUsage::default()
                },
                ..ThreadRecord::default()
            })
            .collect();
        let process = |pid, parent, comm: &str, threads| ProcessRecord {
            pid,
            parent,
            comm: comm.into(),
            threads,
            usage: TaskUsage {
                cpu_ns: 78_000_000,
                user_ns: 70_000_000,
                system_ns: 8_000_000,
                peak_rss_bytes: 8 << 20,
                ..TaskUsage::default()
            },
            ..ProcessRecord::default()
        };
        let mut child = process(101, 100, "worker", 1);
        child.exit_signal = Some(9);
        let mut server = process(100, 1, "server", 12);
        server.argv = Some(vec!["server".into(), "--port".into(), "80".into()]);
        server.exit_code = Some(0);
        server.imbalance = Some(1.85);
        TasksReport {
            processes: vec![child, server],
            threads,
            rusage_check: vec![RusageCheck {
                field: "minor faults".into(),
                tasks_total: 10,
                rusage: 10,
                agrees: true,
                note: None,
            }],
            ..TasksReport::default()
        }
    }

    fn text(t: &TasksReport, top: Option<usize>) -> String {
        let mut out = String::new();
        render(&mut out, t, top);
        out
    }

    #[test]
    fn the_title_and_the_process_tree_in_tree_order() {
        let out = text(&tasks(), Some(TOP_THREADS));
        assert_eq!(
            line(&out, "Per-task records"),
            "Per-task records (taskstats exit records and proc connector events, exact; \
             2 processes, 12 threads)"
        );
        assert_eq!(
            line(&out, "100 "),
            "100 12 0.078 0.070 0.008 - 0 B 0 B 8 MiB 0 server --port 80"
        );
        // The child comes after its parent, one step further in, and says how it ended.
        let raw: Vec<&str> = out.lines().collect();
        let (parent, child) = (line_number(&out, "100 12"), line_number(&out, "101 1"));
        assert_eq!(child, parent + 1, "{out}");
        let indent = |l: &str| l.len() - l.trim_start().len();
        assert_eq!(indent(raw[child]), indent(raw[parent]) + 2, "{out}");
        assert!(line(&out, "101 1").ends_with("sig 9 [worker]"), "{out}");
    }

    #[test]
    fn top_lists_show_n_threads_or_every_one() {
        let out = text(&tasks(), Some(TOP_THREADS));
        assert_eq!(
            line(&out, "Threads by CPU time"),
            "Threads by CPU time (top 10 of 12; --per-task=all for every one)"
        );
        // Largest first; the two smallest are left out.
        let first = line_number(&out, "Threads by CPU time") + 2;
        let rows: Vec<String> = collapsed(&out).skip(first).take(10).collect();
        assert!(rows[0].starts_with("1012 100 t12 0.012"), "{out}");
        assert!(rows[9].starts_with("1003 100 t3 0.003"), "{out}");
        assert!(!has_line(&out, "1001 100"), "{out}");
        // A list of threads none of which has any is left out; one with a single thread shows it.
        assert!(!has_line(&out, "Threads by run-queue delay"), "{out}");
        assert_eq!(
            line(&out, "Threads by I/O"),
            "Threads by I/O (bytes read and written) (all 1)"
        );

        let out = text(&tasks(), None);
        assert_eq!(
            line(&out, "Threads by CPU time"),
            "Threads by CPU time (all 12)"
        );
        assert!(has_line(&out, "1001 100 t1 0.001"), "{out}");
    }

    #[test]
    fn the_summary_names_imbalance_waiting_delays_and_the_rusage_check() {
        let mut t = tasks();
        for th in &mut t.threads {
            th.usage.delays.run_queue = Some(DelayTotal {
                count: 10,
                total_ns: 25_000_000,
            });
        }
        t.totals.delays = Delays {
            run_queue: Some(DelayTotal {
                count: 120,
                total_ns: 300_000_000,
            }),
            block_io: Some(DelayTotal {
                count: 2,
                total_ns: 1_500_000,
            }),
            ..Delays::default()
        };
        t.delay_accounting = DelayAccounting {
            on: true,
            enabled_for_run: true,
            note: None,
        };
        t.limits = vec!["sampled threads miss their last moments: run as root".into()];
        let out = text(&t, Some(TOP_THREADS));
        assert_eq!(
            line(&out, "delays:"),
            "delays: accounted (kernel.task_delayacct turned on for the run, then restored)"
        );
        assert_eq!(
            line(&out, "limit:"),
            "limit: sampled threads miss their last moments: run as root"
        );
        assert!(
            has_line(&out, "Threads by run-queue delay (top 10 of 12"),
            "{out}"
        );
        assert!(line_number(&out, "Summary") > line_number(&out, "Threads by"));
        assert_eq!(
            line(&out, "imbalance of 100"),
            "imbalance of 100 [server] 1.85 (busiest thread / mean CPU time of 12 threads)"
        );
        // 300 ms of waiting in 12 threads' 12 s of life.
        assert_eq!(
            line(&out, "waiting for a CPU"),
            "waiting for a CPU 2.5% of the threads' lifetime (0.300 s in 120 waits)"
        );
        assert_eq!(
            line(&out, "block I/O delay"),
            "block I/O delay 1.5 ms in 2 waits"
        );
        assert!(!has_line(&out, "swap-in delay"), "{out}");
        assert_eq!(
            line(&out, "totals vs rusage"),
            "totals vs rusage all 1 fields agree"
        );

        t.rusage_check[0].agrees = false;
        t.rusage_check[0].rusage = 12;
        t.rusage_check[0].note = Some("rusage counts the launcher".into());
        t.delay_accounting.note = Some("off: --enable-delayacct turns it on".into());
        let out = text(&t, Some(TOP_THREADS));
        assert_eq!(
            line(&out, "totals vs rusage"),
            "totals vs rusage: minor faults 10 in the records, 12 in rusage \
             (rusage counts the launcher)"
        );
        assert_eq!(
            line(&out, "delays:"),
            "delays: off: --enable-delayacct turns it on"
        );
    }

    #[test]
    fn events_per_thread_follow_the_top_and_say_what_was_not_split() {
        let mut t = tasks();
        t.counters = Some(TaskCounters {
            events: vec!["page-faults".into(), "task-clock".into()],
            threads: (1..=12)
                .map(|i| ThreadCounts {
                    pid: 100,
                    tid: 1000 + i,
                    counts: vec![u64::from(i) * 1000, 5],
                })
                .collect(),
            not_split: vec![NotCounted {
                spec: "cycles".into(),
                reason: "counted for the whole CPU".into(),
            }],
        });
        let out = text(&t, Some(3));
        assert_eq!(
            line(&out, "Events per thread"),
            "Events per thread (3 of 12 threads)"
        );
        assert_eq!(
            line(&out, "TID PID page-faults"),
            "TID PID page-faults task-clock"
        );
        assert_eq!(line(&out, "1012 100 12,000"), "1012 100 12,000 5");
        assert!(!has_line(&out, "1009 100 9,000"), "{out}");
        assert_eq!(
            line(&out, "not split"),
            "not split per thread: cycles: counted for the whole CPU"
        );
        let out = text(&t, None);
        assert_eq!(
            line(&out, "Events per thread"),
            "Events per thread (12 of 12 threads)"
        );
    }
}
