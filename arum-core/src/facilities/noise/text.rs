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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::testing::{has_line, line};
    use arum_hourglass::noise::{CpuNoise, GapStats};

    fn noise() -> arum_hourglass::NoiseReport {
        let cpu = |cpu, probe_cpu_seconds| CpuNoise {
            cpu,
            seconds: 1.0,
            ran_seconds: 0.5,
            probe_cpu_seconds,
            interrupts: GapStats::default(),
            tasks: GapStats::default(),
            tick: None,
        };
        arum_hourglass::NoiseReport {
            gap_ns: 2000.0,
            tsc_hz: 2.4e9,
            kernel_hz: Some(250),
            cpus: vec![cpu(0, 0.25), cpu(1, 0.125)],
            failed: Vec::new(),
            lines: vec!["cpu 0: quiet".into(), "cpu 1: 250 Hz tick".into()],
        }
    }

    #[test]
    fn one_line_per_cpu_under_the_gap_threshold() {
        let mut out = String::new();
        render(&mut out, &noise(), false);
        assert_eq!(
            out,
            "\nNoise probe (a SCHED_IDLE gap detector on each CPU; gaps above 2 µs)\n \
             cpu 0: quiet\n cpu 1: 250 Hz tick\n"
        );
    }

    #[test]
    fn with_ambient_figures_the_probes_own_cpu_time_is_noted() {
        let mut out = String::new();
        render(&mut out, &noise(), true);
        assert!(has_line(&out, "cpu 1: 250 Hz tick"), "{out}");
        assert_eq!(
            line(&out, "note:"),
            "note: the ambient CPU figures include the probe's own 0.375 s of CPU \
             (it runs only when a CPU would idle)"
        );
    }
}
