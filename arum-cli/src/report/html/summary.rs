//! The run at a glance: the command, how it ended, the machine, and the resource usage.

use super::page::{esc, facts, para, section, table};
use crate::metrics::Unit;
use crate::report::model::Report;

pub fn render(r: &Report) -> Option<String> {
    let u = &r.usage;
    let ns = |v: u64| Unit::Nanoseconds.format(v as f64);
    let bytes = |v: u64| Unit::Bytes.format(v as f64);
    let mut rows = vec![
        ("wall time", ns(u.wall_ns)),
        ("user time", ns(u.user_ns)),
        ("system time", ns(u.system_ns)),
        ("CPU utilisation", format!("{:.3}", u.cpu_utilisation)),
    ];
    match &u.peak_memory {
        Some(p) => {
            rows.push(("peak memory", bytes(p.peak_rss_bytes)));
            rows.push(("peak memory method", p.method.describe().into()));
            rows.push(("peak threads", p.peak_threads.to_string()));
            rows.push(("peak processes", p.peak_processes.to_string()));
        }
        None => rows.push(("ru_maxrss", bytes(u.rusage_maxrss_bytes))),
    }
    rows.extend([
        ("minor faults", u.minor_faults.to_string()),
        ("major faults", u.major_faults.to_string()),
        (
            "voluntary context switches",
            u.voluntary_context_switches.to_string(),
        ),
        (
            "involuntary context switches",
            u.involuntary_context_switches.to_string(),
        ),
        ("block input operations", u.block_input_ops.to_string()),
        ("block output operations", u.block_output_ops.to_string()),
        ("signals received", u.signals_received.to_string()),
    ]);
    let m = &r.metadata;
    let mut body = format!(
        "<p>Command: <code>{}</code>, {}.</p>\n",
        esc(&shell_words::join(&r.command.argv)),
        esc(&r.exit.describe())
    );
    body.push_str(&para(&format!(
        "{} on {} ({} {}, {} online CPUs, {} {}), started {}.",
        m.arum_version,
        m.host,
        m.cpu.vendor,
        m.cpu.model_name,
        m.online_cpus,
        m.arch,
        m.kernel_release,
        m.start_time_utc
    )));
    if let Some(rank) = &r.rank {
        body.push_str(&para(&format!(
            "Rank {} of {} ({}).",
            rank.rank,
            rank.size.map_or("?".into(), |s| s.to_string()),
            rank.launcher
        )));
    }
    body.push_str(&facts(&rows));
    if !u.estimates.is_empty() {
        body.push_str(&para(
            "Estimated time these counts cost on this machine (arum calibrate --save):",
        ));
        let rows: Vec<Vec<String>> = u
            .estimates
            .iter()
            .map(|est| {
                vec![
                    est.label.clone(),
                    est.count.to_string(),
                    Unit::Nanoseconds.format(est.estimated_ns),
                    format!(
                        "{} – {}",
                        Unit::Nanoseconds.format(est.estimated_low_ns),
                        Unit::Nanoseconds.format(est.estimated_high_ns)
                    ),
                    est.source.clone(),
                ]
            })
            .collect();
        body.push_str(&table(
            &["estimate", "count", "time", "interval", "cost from"],
            &rows,
        ));
    }
    let s = &r.self_timing;
    body.push_str(&para(&format!(
        "arum's own phases: set-up {} µs + {} µs, post-processing {} µs + {} µs.",
        s.setup_phase1_us, s.setup_phase2_us, s.post_phase1_us, s.post_phase2_us
    )));
    Some(section("usage", "Resource usage", &body))
}
