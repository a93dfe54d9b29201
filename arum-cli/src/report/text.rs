//! The human report: "ARUM REPORT", then one aligned section per facility.

use std::fmt::Write;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

use super::model::{AmbientReport, CountersReport, EventStatus, Report, Usage};

pub fn render(r: &Report, show_self_timing: bool) -> String {
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
    let mut b = Builder::default();
    for r in rows {
        b.push_record(r.iter().cloned());
    }
    let mut table = b.build();
    table
        .with(Style::blank())
        .with(Modify::new(Columns::last()).with(Alignment::left()));
    indented(out, &table);
}

/// Appends a rendered table, each line indented by one space and without trailing blanks.
fn indented(out: &mut String, table: &tabled::Table) {
    for line in table.to_string().lines() {
        let _ = writeln!(out, " {}", line.trim_end());
    }
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
    let mut per_cpu = Builder::default();
    per_cpu.push_record(["Event", "CPU", "Count", "% running"]);
    let mut totals = Builder::default();
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
        let mut t = b.build();
        t.with(Style::blank())
            .with(Modify::new(Columns::new(1..3)).with(Alignment::right()));
        let _ = writeln!(out);
        indented(out, &t);
    }
    if !c.metrics.is_empty() {
        let mut m = Builder::default();
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
        let mut t = m.build();
        t.with(Style::blank())
            .with(Modify::new(Columns::new(1..2)).with(Alignment::right()));
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
    let mut cpu = Builder::default();
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
    let mut t = cpu.build();
    t.with(Style::blank())
        .with(Modify::new(Columns::new(1..)).with(Alignment::right()));
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
