//! The usage section's HTML: times, memory, faults, switches, I/O, and what they cost here.

use arum_units::quantity::grouped;
use arum_units::{duration, size};

use super::model::Usage;
use crate::render::html::page::{facts, para, table};

pub fn render(u: &Usage) -> String {
    let ns = |v: u64| duration::format_ns(v as f64);
    let bytes = |v: u64| size::format(v as f64);
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
        ("minor faults", grouped(u.minor_faults)),
        ("major faults", grouped(u.major_faults)),
        (
            "voluntary context switches",
            grouped(u.voluntary_context_switches),
        ),
        (
            "involuntary context switches",
            grouped(u.involuntary_context_switches),
        ),
        ("block input operations", grouped(u.block_input_ops)),
        ("block output operations", grouped(u.block_output_ops)),
        ("signals received", grouped(u.signals_received)),
    ]);
    let mut body = facts(&rows);
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
                    grouped(est.count),
                    duration::format_ns(est.estimated_ns),
                    format!(
                        "{} – {}",
                        duration::format_ns(est.estimated_low_ns),
                        duration::format_ns(est.estimated_high_ns)
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
    body
}
