//! `--noise-probe`: the gaps a probe beside the program saw on each CPU.

use crate::render::html::page::{list, section, table};
use arum_hourglass::NoiseReport;
use arum_units::duration;
use arum_units::quantity::grouped;

pub fn render(n: &NoiseReport) -> String {
    let ns = |v: f64| duration::format_ns(v);
    let rows: Vec<Vec<String>> = n
        .cpus
        .iter()
        .map(|c| {
            vec![
                format!("CPU {}", c.cpu),
                format!("{:.3}", c.ran_seconds),
                grouped(c.interrupts.count),
                format!("{:.1}", c.interrupts.per_second),
                ns(c.interrupts.median_ns),
                ns(c.interrupts.max_ns),
                grouped(c.tasks.count),
                format!("{:.1}", c.tasks.per_second),
                ns(c.tasks.median_ns),
                ns(c.tasks.max_ns),
            ]
        })
        .collect();
    let mut body = format!(
        "<p>Gaps longer than {} count.</p>\n",
        crate::render::html::page::esc(&ns(n.gap_ns))
    );
    body.push_str(&table(
        &[
            "CPU",
            "probe ran (s)",
            "interrupt gaps",
            "per s",
            "median",
            "max",
            "task gaps",
            "per s",
            "median",
            "max",
        ],
        &rows,
    ));
    // Each periodic-gap finding once, with the CPUs that share it.
    let findings: Vec<String> = super::findings::grouped(&n.cpus)
        .iter()
        .map(|g| format!("{}: {}", g.which(), g.statement))
        .collect();
    body.push_str(&list("notes", &findings));
    body.push_str(&list("notes warn", &n.failed));
    section("noise", "Noise probe (--noise-probe)", &body)
}
