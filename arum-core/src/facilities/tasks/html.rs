//! `--per-task`: a record for every process and thread of the tree, the totals against the
//! run's rusage, and per-thread counts.

use super::model::{
    ProcessRecord, RusageCheck, TaskCounters, TaskUsage, TasksReport, ThreadRecord,
};
use crate::render::html::page::{figure, list, para, section, table};
use crate::render::html::plot::{self, Series};
use arum_units::{duration, size};

pub fn render(t: &TasksReport) -> String {
    let mut body = para(&format!(
        "{}; {} processes, {} threads{}.",
        t.method.describe(),
        t.processes.len(),
        t.threads.len(),
        if t.records_dropped {
            "; the kernel dropped records"
        } else {
            ""
        }
    ));
    body.push_str(&list("notes warn", &t.limits));
    body.push_str(&processes_table(&t.processes));
    let mut threads: Vec<_> = t.threads.iter().collect();
    threads.sort_by_key(|x| std::cmp::Reverse(x.usage.cpu_ns));
    body.push_str(&threads_table(&threads));
    body.push_str(&lifetimes(&threads));
    if !t.rusage_check.is_empty() {
        body.push_str(&rusage_table(&t.rusage_check));
    }
    if let Some(c) = &t.counters {
        body.push_str(&counters_table(c));
    }
    section("tasks", "Processes and threads (--per-task)", &body)
}

fn processes_table(processes: &[ProcessRecord]) -> String {
    let rows: Vec<Vec<String>> = processes
        .iter()
        .map(|p| {
            let mut row = vec![
                format!("{} {}", p.pid, p.comm),
                p.parent.to_string(),
                p.threads.to_string(),
            ];
            row.extend(usage_cells(&p.usage));
            row.push(p.imbalance.map_or(String::new(), |x| format!("{x:.2}")));
            row
        })
        .collect();
    table(
        &headers(&["process", "parent", "threads"], "imbalance"),
        &rows,
    )
}

/// `threads`, in the order given (the largest CPU users first).
fn threads_table(threads: &[&ThreadRecord]) -> String {
    let rows: Vec<Vec<String>> = threads
        .iter()
        .map(|x| {
            let mut row = vec![format!("{} {}", x.tid, x.comm), x.pid.to_string()];
            row.extend(usage_cells(&x.usage));
            row.push(
                x.cpu_wait_share
                    .map_or(String::new(), |w| format!("{:.1}", w * 100.0)),
            );
            row
        })
        .collect();
    table(
        &headers(&["thread", "process"], "% waiting for a CPU"),
        &rows,
    )
}

/// The lives of the first twelve `threads` whose start and end are known, on the run's time
/// line, one row each, the first on top (empty when there is none).
fn lifetimes(threads: &[&ThreadRecord]) -> String {
    let ns = |v: u64| duration::format_ns(v as f64);
    let shown: Vec<_> = threads
        .iter()
        .filter(|x| x.start_ns.is_some() && x.end_ns.is_some())
        .take(12)
        .collect();
    let lives: Vec<Series> = shown
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let row = (shown.len() - i) as f64;
            let (s, e) = (x.start_ns.unwrap_or(0), x.end_ns.unwrap_or(0));
            Series {
                name: format!("{} {} ({} CPU)", x.tid, x.comm, ns(x.usage.cpu_ns)),
                points: vec![(s as f64 / 1e9, row), (e as f64 / 1e9, row)],
            }
        })
        .collect();
    if lives.is_empty() {
        return String::new();
    }
    figure(plot::lines(
        "Thread lifetimes (the largest CPU users, from the top)",
        "seconds since the program started",
        "thread",
        &lives,
        None,
        plot::YAxis::Linear,
    ))
}

fn rusage_table(check: &[RusageCheck]) -> String {
    let rows: Vec<Vec<String>> = check
        .iter()
        .map(|c| {
            vec![
                c.field.clone(),
                c.tasks_total.to_string(),
                c.rusage.to_string(),
                if c.agrees { "yes" } else { "no" }.into(),
                c.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    table(
        &["field", "tasks' total", "rusage", "agrees", "note"],
        &rows,
    )
}

/// Each thread's count of each event.
fn counters_table(c: &TaskCounters) -> String {
    let mut headers = vec!["thread"];
    headers.extend(c.events.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = c
        .threads
        .iter()
        .map(|x| {
            std::iter::once(format!("{} (pid {})", x.tid, x.pid))
                .chain(x.counts.iter().map(u64::to_string))
                .collect()
        })
        .collect();
    table(&headers, &rows)
}

/// The columns of `usage_cells`, after `first` and before `last`.
fn headers<'a>(first: &[&'a str], last: &'a str) -> Vec<&'a str> {
    let mut h = first.to_vec();
    h.extend([
        "CPU",
        "user",
        "system",
        "minor faults",
        "vol. switches",
        "invol. switches",
        "read",
        "written",
        "peak memory",
        last,
    ]);
    h
}

fn usage_cells(u: &TaskUsage) -> Vec<String> {
    let ns = |v: u64| duration::format_ns(v as f64);
    let bytes = |v: u64| size::format(v as f64);
    vec![
        ns(u.cpu_ns),
        ns(u.user_ns),
        ns(u.system_ns),
        u.minor_faults.to_string(),
        u.voluntary_context_switches.to_string(),
        u.involuntary_context_switches.to_string(),
        bytes(u.read_chars),
        bytes(u.write_chars),
        bytes(u.peak_rss_bytes),
    ]
}
