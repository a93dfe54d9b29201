//! The text of the noise probe's section.

use std::fmt::Write;

use arum_units::duration;

/// The noise probe's lines, one per CPU, and what its own CPU time means for the other figures.
pub fn render(out: &mut String, n: &arum_hourglass::NoiseReport, with_ambient: bool) {
    let _ = writeln!(
        out,
        "\nNoise probe (a SCHED_IDLE gap detector on each CPU; gaps above {})",
        duration::format_ns(n.gap_ns)
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
