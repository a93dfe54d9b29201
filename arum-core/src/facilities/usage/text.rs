//! The text of the usage section: times, memory, faults, switches, I/O.

use arum_units::{duration, percent, size};

use super::model::Usage;
use crate::render::text::{row, section};

/// The usage section: one aligned row per figure.
pub fn render(out: &mut String, u: &Usage) {
    section(out, Some("Resource usage"), &rows(u));
}

fn rows(u: &Usage) -> Vec<[String; 2]> {
    let mut rows = vec![
        row("user time", duration::format_ns(u.user_ns as f64)),
        row("system time", duration::format_ns(u.system_ns as f64)),
        row(
            "application elapsed time",
            duration::format_ns(u.wall_ns as f64),
        ),
        row(
            "cpu utilisation",
            percent::format_fraction(u.cpu_utilisation),
        ),
    ];
    if let Some(p) = &u.peak_memory {
        rows.push(row(
            "peak resident memory",
            format!(
                "{} ({})",
                size::format(p.peak_rss_bytes as f64),
                p.method.describe()
            ),
        ));
        rows.push(row(
            "peak threads / processes",
            format!("{} / {}", p.peak_threads, p.peak_processes),
        ));
    }
    rows.extend([
        row(
            "ru_maxrss (largest process)",
            size::format(u.rusage_maxrss_bytes as f64),
        ),
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
