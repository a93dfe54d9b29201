//! The human report: "ARUM REPORT", then one aligned section per facility.

mod probes;

use std::fmt::Write;

use crate::report::grid::Grid;

use super::model::{
    AmbientReport, CountersReport, EstimateAxis, EventStatus, FunctionTiming, FunctionsReport,
    ProcessRecord, RecordSource, Report, TaskUsage, TasksReport, ThreadRecord, ThrottleMode,
    ThrottleReason, Usage,
};

/// Threads in each top list of the per-task section, unless every one is asked for.
pub const TOP_THREADS: usize = 10;

pub fn render(r: &Report, show_self_timing: bool) -> String {
    render_with(
        r,
        &super::TextOptions {
            show_self_timing,
            top_threads: Some(TOP_THREADS),
        },
    )
}

pub fn render_with(r: &Report, options: &super::TextOptions) -> String {
    let show_self_timing = options.show_self_timing;
    let mut out = String::new();
    let _ = writeln!(out, "ARUM REPORT");
    section(&mut out, None, &header_rows(r));
    section(&mut out, Some("Resource usage"), &usage_rows(&r.usage));
    if let Some(c) = &r.counters {
        counters(&mut out, c);
    }
    if let Some(a) = &r.ambient {
        ambient(&mut out, a);
    }
    if let Some(f) = &r.functions {
        functions(&mut out, f);
    }
    if let Some(n) = &r.noise {
        noise(&mut out, n, r.ambient.is_some());
    }
    if let Some(t) = &r.tasks {
        tasks(&mut out, t, options.top_threads);
    }
    if let Some(s) = &r.syscalls {
        probes::syscalls(&mut out, s);
    }
    if let Some(v) = &r.views {
        probes::views(&mut out, v);
    }
    if show_self_timing {
        let t = &r.self_timing;
        section(
            &mut out,
            Some("arum self-timing (microseconds)"),
            &[
                row(
                    "set-up phase 1 (arguments, data structures)",
                    t.setup_phase1_us,
                ),
                row(
                    "set-up phase 2 (events, counter configuration)",
                    t.setup_phase2_us,
                ),
                row(
                    "post-processing phase 1 (reading counters)",
                    t.post_phase1_us,
                ),
                row(
                    "post-processing phase 2 (resource usage, report)",
                    t.post_phase2_us,
                ),
            ],
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

fn row(name: &str, value: impl ToString) -> [String; 2] {
    [name.to_string(), value.to_string()]
}

fn header_rows(r: &Report) -> Vec<[String; 2]> {
    let m = &r.metadata;
    let mut rows = vec![
        row("command", abbreviated(&shell_words::join(&r.command.argv))),
        row(
            "exit status",
            format!("{} ({})", r.exit.status, r.exit.describe()),
        ),
        row("started (UTC)", &m.start_time_utc),
        row(
            "host",
            format!("{} ({} {})", m.host, m.arch, m.kernel_release),
        ),
        row(
            "cpu",
            format!(
                "{} [{}, stepping {}], {} online",
                m.cpu.model_name,
                m.cpu.key(),
                m.cpu.stepping,
                m.online_cpus
            ),
        ),
    ];
    if let Some(rank) = &r.rank {
        let size = rank.size.map_or(String::new(), |n| format!(" of {n}"));
        let job = rank
            .job_id
            .as_ref()
            .map_or(String::new(), |j| format!(", job {j}"));
        rows.push(row(
            "rank",
            format!("{}{size} ({}{job})", rank.rank, rank.launcher),
        ));
    }
    rows
}

/// Longest command line the text report prints whole (the JSON always has all of it).
const COMMAND_WIDTH: usize = 200;

fn abbreviated(command: &str) -> String {
    if command.len() <= COMMAND_WIDTH {
        return command.to_string();
    }
    let mut cut = COMMAND_WIDTH;
    while !command.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}… ({} bytes in all; the JSON report has the whole command)",
        &command[..cut],
        command.len()
    )
}

/// An event as the report names it: as the user wrote it (with `:u`/`:k`), and what it
/// resolved to where that differs.
fn label(e: &super::model::EventCounts) -> String {
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

fn usage_rows(u: &Usage) -> Vec<[String; 2]> {
    let mut rows = vec![
        row("user time", seconds(u.user_ns)),
        row("system time", seconds(u.system_ns)),
        row("application elapsed time", seconds(u.wall_ns)),
        row(
            "cpu utilisation",
            format!("{:.1}%", u.cpu_utilisation * 100.0),
        ),
    ];
    if let Some(p) = &u.peak_memory {
        rows.push(row(
            "peak resident memory",
            format!("{} ({})", mib(p.peak_rss_bytes), p.method.describe()),
        ));
        rows.push(row(
            "peak threads / processes",
            format!("{} / {}", p.peak_threads, p.peak_processes),
        ));
    }
    rows.extend([
        row("ru_maxrss (largest process)", mib(u.rusage_maxrss_bytes)),
        row("minor page faults", u.minor_faults),
        row("major page faults", u.major_faults),
        row("voluntary context switches", u.voluntary_context_switches),
        row(
            "involuntary context switches",
            u.involuntary_context_switches,
        ),
        row("block input operations", u.block_input_ops),
        row("block output operations", u.block_output_ops),
        row("signals received", u.signals_received),
    ]);
    for e in &u.estimates {
        rows.push(row(&e.label, e.describe()));
    }
    rows
}

fn seconds(ns: u64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// An aligned two-column block, indented under an optional title.
fn section(out: &mut String, title: Option<&str>, rows: &[[String; 2]]) {
    if let Some(t) = title {
        let _ = writeln!(out, "\n{t}");
    }
    let mut table = Grid::new();
    for r in rows {
        table.push_record(r.iter().cloned());
    }
    indented(out, &table);
}

/// Appends a rendered table, each line indented by one space and without trailing blanks.
fn indented(out: &mut String, table: &Grid) {
    table.write_to(out, " ");
}

/// The original report's per-CPU table (Event, CPU, Count), then totals and ratios.
fn counters(out: &mut String, c: &CountersReport) {
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
            " the CPUs started counting within {:.1} µs of each other, and stopped within {:.1} µs",
            start as f64 / 1e3,
            stop as f64 / 1e3
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

/// 1234567 -> "1,234,567" (the original report's style; C-locale digits).
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The noise probe's lines, one per CPU, and what its own CPU time means for the other figures.
fn noise(out: &mut String, n: &arum_hourglass::NoiseReport, with_ambient: bool) {
    let _ = writeln!(
        out,
        "\nNoise probe (a SCHED_IDLE gap detector on each CPU; gaps above {:.1} µs)",
        n.gap_ns / 1e3
    );
    for line in &n.lines {
        let _ = writeln!(out, " {line}");
    }
    if with_ambient {
        let used: f64 = n.cpus.iter().map(|c| c.probe_cpu_seconds).sum();
        let _ = writeln!(
            out,
            " note: the ambient CPU figures include the probe's own {used:.3} s of CPU (it runs only when a CPU would idle)"
        );
    }
}

/// What the machine did during the run: deltas and rates, then notes on likely interference.
fn ambient(out: &mut String, a: &AmbientReport) {
    let s = &a.summary;
    let secs = (s.duration_ns as f64 / 1e9).max(1e-9);
    let every = if a.interval_ms == 0 {
        "at start and end".to_string()
    } else {
        format!("every {} ms", a.interval_ms)
    };
    let _ = writeln!(
        out,
        "\nAmbient environment ({} samples {every} over {secs:.3} s; the sampler used {:.2} ms of CPU)",
        a.samples.len(),
        a.sampler_cpu_ns as f64 / 1e6
    );
    let mut cpu = Grid::new();
    cpu.push_record([
        "CPU", "user%", "nice%", "sys%", "iowait%", "irq%", "soft%", "steal%", "idle%",
    ]);
    for c in &s.cpu_utilisation {
        let p = &c.percent;
        cpu.push_record(
            std::iter::once(c.cpu.to_string()).chain(
                [
                    p.user, p.nice, p.system, p.iowait, p.irq, p.softirq, p.steal, p.idle,
                ]
                .map(|v| format!("{v:.1}")),
            ),
        );
    }
    let t = cpu.align_right(1..);
    indented(out, &t);
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / 1048576.0);
    let mut rows = vec![
        row(
            "interrupts",
            format!("{} ({:.0}/s)", s.interrupts, s.interrupts_per_second),
        ),
        row("softirqs", s.softirqs),
        row(
            "context switches",
            format!(
                "{} ({:.0}/s)",
                s.context_switches, s.context_switches_per_second
            ),
        ),
        row("processes created", s.processes_created),
        row(
            "runnable / blocked (max)",
            format!("{} / {}", s.max_procs_running, s.max_procs_blocked),
        ),
        row(
            "memory available",
            format!(
                "{} -> {}",
                mib(s.memory_start.available_bytes),
                mib(s.memory_end.available_bytes)
            ),
        ),
        row(
            "page cache / dirty (end)",
            format!(
                "{} / {}",
                mib(s.memory_end.cached_bytes),
                mib(s.memory_end.dirty_bytes)
            ),
        ),
        row(
            "page faults / major",
            format!("{} / {}", s.paging.pgfault, s.paging.pgmajfault),
        ),
        row(
            "swap in / out (pages)",
            format!("{} / {}", s.paging.pswpin, s.paging.pswpout),
        ),
        row(
            "other CPU time",
            format!("{:.3} s", s.other_cpu_ns as f64 / 1e9),
        ),
    ];
    if let Some([c, m, i]) = s.pressure_stall_us {
        rows.push(row(
            "stalls cpu / memory / io",
            format!(
                "{:.1} / {:.1} / {:.1} ms",
                c as f64 / 1e3,
                m as f64 / 1e3,
                i as f64 / 1e3
            ),
        ));
    }
    if let Some(l) = a.samples.last() {
        rows.push(row(
            "load average (end)",
            format!("{:.2} {:.2} {:.2}", l.load.one, l.load.five, l.load.fifteen),
        ));
    }
    rows.push(row(
        "launched tree (peak)",
        format!(
            "{} threads, RSS {}, virtual {}",
            s.tree_peak_threads,
            mib(s.tree_peak_rss_bytes),
            mib(s.tree_peak_vsize_bytes)
        ),
    ));
    for irq in &s.busiest_irqs {
        rows.push(row(
            &format!("irq {}", irq.name),
            format!("{} ({})", irq.count, irq.desc),
        ));
    }
    for d in &s.disks {
        let c = &d.counters;
        rows.push(row(
            &format!("disk {}", d.name),
            format!(
                "{} reads, {} writes, {} / {} sectors, busy {} ms",
                c.reads, c.writes, c.sectors_read, c.sectors_written, c.busy_ms
            ),
        ));
    }
    for n in &s.net {
        let c = &n.counters;
        rows.push(row(
            &format!("net {}", n.name),
            format!(
                "rx {} B / {} pkts, tx {} B / {} pkts, errors {}, drops {}",
                c.rx_bytes,
                c.rx_packets,
                c.tx_bytes,
                c.tx_packets,
                c.rx_errors + c.tx_errors,
                c.rx_drops + c.tx_drops
            ),
        ));
    }
    section(out, None, &rows);
    for n in &a.notes {
        let _ = writeln!(out, " note: {n}");
    }
}

/// Per-task records: the process tree with each process's totals, the threads with the most CPU
/// time, run-queue delay and I/O, and the summaries (imbalance, waiting for a CPU, the check
/// against rusage).
fn tasks(out: &mut String, t: &TasksReport, top: Option<usize>) {
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
            bytes(u.read_chars),
            bytes(u.write_chars),
            mib(u.peak_rss_bytes),
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
                format!("{:.3} ms in {} waits", d.total_ns as f64 / 1e6, d.count),
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
            bytes(t.usage.read_chars),
            bytes(t.usage.write_chars),
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

fn task_counters(out: &mut String, c: &super::model::TaskCounters, top: Option<usize>) {
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
        .map_or("-".into(), |d| format!("{:.1} ms", d.total_ns as f64 / 1e6))
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / 1048576.0),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn exit_of(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => format!("sig {s}"),
        (Some(c), None) => c.to_string(),
        (None, None) => "-".into(),
    }
}

/// A duration in the unit that suits it: 25 ns, 1.23 µs, 1.002 ms, 1.234 s.
fn duration(ns: f64) -> String {
    match ns {
        n if n < 1e3 => format!("{n:.0} ns"),
        n if n < 1e6 => format!("{:.2} µs", n / 1e3),
        n if n < 1e9 => format!("{:.3} ms", n / 1e6),
        n => format!("{:.3} s", n / 1e9),
    }
}

/// Function timing: one row per function, largest total first, then what needs saying.
fn functions(out: &mut String, f: &FunctionsReport) {
    let c = &f.probe_cost;
    let _ = writeln!(
        out,
        "\nFunctions (uprobes; a probed call costs {} here, an entry hit {}; calibrated on {}×{} calls)",
        duration(c.pair_ns),
        duration(c.entry_ns),
        c.calibration_rounds,
        c.calibration_calls
    );
    if let Some(why) = &f.off_reason {
        let _ = writeln!(out, " not timed: {why}");
        return;
    }
    if c.back_to_back_intervals > 0 {
        let _ = writeln!(
            out,
            " back to back: a probed call every {} (median {}, sd {}, {} intervals between probe records)",
            duration(c.back_to_back_mean_ns),
            duration(c.back_to_back_median_ns),
            duration(c.back_to_back_sd_ns),
            c.back_to_back_intervals
        );
    }
    if let (Some(cycles), EstimateAxis::UserCycles) = (c.entry_user_cycles, f.estimate_axis) {
        let _ = writeln!(
            out,
            " an entry hit adds {cycles:.0} user-mode cycles: sampled calls are counted against the program's user-mode cycles"
        );
    }
    let mut b = Grid::new();
    b.push_record([
        "Function", "Calls", "Timed", "Total", "Mean", "Min", "p50", "p90", "p99", "Max", "Self",
    ]);
    for t in &f.functions {
        let i = &t.inclusive;
        let calls = if t.calls_exact {
            grouped(t.calls)
        } else {
            format!("~{}", grouped(t.calls))
        };
        let timed = t.timed_calls > 0;
        let d = |v: f64| if timed { duration(v) } else { "-".into() };
        b.push_record([
            t.name.clone(),
            calls,
            grouped(t.timed_calls),
            d(i.total_ns as f64),
            d(i.mean_ns),
            d(i.min_ns as f64),
            d(i.p50_ns as f64),
            d(i.p90_ns as f64),
            d(i.p99_ns as f64),
            d(i.max_ns as f64),
            d(t.exclusive.total_ns as f64),
        ]);
    }
    let table = b.align_right(1..);
    indented(out, &table);
    for t in &f.functions {
        for line in function_notes(t, f) {
            let _ = writeln!(out, " {}: {line}", t.name);
        }
    }
    let p = &f.perturbation;
    let _ = writeln!(
        out,
        " perturbation: {} probe hits, about {} of probe time, {:.2}% of the program's CPU time (budget {}%{})",
        grouped(p.probe_hits),
        duration(p.overhead_ns as f64),
        p.percent_of_cpu,
        f.policy.budget_percent,
        match f.policy.mode {
            ThrottleMode::Throttle => "",
            ThrottleMode::ExactCounts => "; --exact-counts",
            ThrottleMode::NoThrottle => "; --no-throttle: not applied",
        }
    );
    let r = &f.records;
    let _ = writeln!(
        out,
        " records: {} read from {} ring buffers, {} lost",
        grouped(r.records),
        r.ring_buffers,
        grouped(r.lost)
    );
    if let Some(ms) = f.interval_ms {
        if !f.intervals.is_empty() {
            let mut b = Grid::new();
            b.push_record(
                std::iter::once("t (s)".to_string())
                    .chain(f.functions.iter().map(|t| t.name.clone())),
            );
            for iv in &f.intervals {
                b.push_record(
                    std::iter::once(format!("{:.3}", iv.t_end_ns as f64 / 1e9)).chain(
                        iv.calls.iter().zip(&iv.estimated).map(|(n, e)| {
                            if *e {
                                format!("~{}", grouped(*n))
                            } else {
                                grouped(*n)
                            }
                        }),
                    ),
                );
            }
            let _ = writeln!(
                out,
                " calls per {ms} ms interval (~: sampled, counts since the last window):"
            );
            let t = b.align_right(1..);
            indented(out, &t);
        }
    }
}

/// What the table cannot say about one function.
fn function_notes(t: &FunctionTiming, f: &FunctionsReport) -> Vec<String> {
    let mut notes = Vec::new();
    let cost = duration(f.probe_cost.pair_ns);
    if let Some(th) = &t.throttled {
        let why = match th.reason {
            ThrottleReason::TooShort => format!(
                "too short to time reliably: mean {}, probe cost {cost}",
                duration(th.mean_ns)
            ),
            ThrottleReason::Budget => format!(
                "throttled to keep the probes within the {}% budget (mean {}, probe cost {cost})",
                f.policy.budget_percent,
                duration(th.mean_ns)
            ),
        };
        let rest = match &t.estimate {
            Some(e) => match (e.calls, e.high) {
                (Some(calls), Some(high)) => format!(
                    "about {} calls in all (sampled in {} windows; 95% interval {}–{})",
                    grouped(calls as u64),
                    e.windows,
                    grouped(e.low as u64),
                    grouped(high as u64)
                ),
                _ if e.saturated => format!(
                    "at least {} calls in all: the sampled calls came as fast as probe hits, so the calls between them cannot be estimated{}",
                    grouped(e.low as u64),
                    match f.estimate_axis {
                        EstimateAxis::UserCycles => "",
                        // What would tell them: the program's own time inside a window.
                        _ => " without a hardware cycle counter (none here)",
                    }
                ),
                _ => format!(
                    "at least {} calls in all (the program ended before a sampling window)",
                    grouped(e.low as u64)
                ),
            },
            None => format!(
                "{} calls in all, counted exactly by the entry probe (about {} a call)",
                grouped(t.calls),
                duration(f.probe_cost.entry_ns)
            ),
        };
        notes.push(format!(
            "{why}; timed the first {} calls; {rest}",
            grouped(th.timed_calls)
        ));
    } else if t.too_short {
        notes.push(format!(
            "too short to time reliably: mean {}, probe cost {cost} (timed anyway: not throttled)",
            duration(t.inclusive.mean_ns)
        ));
    }
    if t.threads.len() > 1 {
        let per: Vec<String> = t
            .threads
            .iter()
            .map(|th| format!("{} ({})", grouped(th.calls), th.tid))
            .collect();
        notes.push(format!("calls per thread (tid): {}", per.join(", ")));
    }
    if t.processes.len() > 1
        || t.processes.iter().any(|p| p.name.is_none()) && !t.processes.is_empty()
    {
        let per: Vec<String> = t
            .processes
            .iter()
            .map(|p| {
                format!(
                    "{} {} ({})",
                    p.name.as_deref().unwrap_or("?"),
                    p.pid,
                    grouped(p.calls)
                )
            })
            .collect();
        notes.push(format!("hit in processes: {}", per.join(", ")));
    }
    if t.unfinished > 0 {
        notes.push(format!(
            "{} calls never returned before the program ended",
            t.unfinished
        ));
    }
    if t.unwound > 0 {
        notes.push(format!(
            "{} calls were left without a return (longjmp, exception)",
            t.unwound
        ));
    }
    if t.lost_entries > 0 || t.orphan_returns > 0 {
        notes.push(format!(
            "{} entries lost, {} returns without an entry",
            t.lost_entries, t.orphan_returns
        ));
    }
    notes
}
