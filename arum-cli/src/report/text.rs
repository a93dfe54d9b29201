//! The human report: "ARUM REPORT", then one aligned section per facility.

use std::fmt::Write;

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Alignment, Modify, Style};

use super::model::{Report, Usage};

pub fn render(r: &Report, show_self_timing: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ARUM REPORT");
    section(&mut out, None, &header_rows(r));
    section(&mut out, Some("Resource usage"), &usage_rows(&r.usage));
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
    vec![
        row("command", shell_words::join(&r.command.argv)),
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
    ]
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
    for line in table.to_string().lines() {
        let _ = writeln!(out, " {}", line.trim_end());
    }
}
