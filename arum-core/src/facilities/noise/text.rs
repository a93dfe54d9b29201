//! The text of the noise probe's section: a row per CPU (beyond `cpu_rows` CPUs, all of them
//! in one row and the noisiest CPUs' rows), then each CPU's periodic-gap finding, CPUs with the
//! same finding on one line.

use std::fmt::Write;

use arum_grid::Grid;
use arum_hourglass::noise::{CpuNoise, GapStats};
use arum_units::duration;

use crate::render::fold;
use crate::render::text::indented;

/// Findings printed when the CPUs are folded; the rest are in the JSON report.
const FINDINGS: usize = 3;

/// The noise probe's table, its findings, and what its own CPU time means for the other figures.
pub fn render(
    out: &mut String,
    n: &arum_hourglass::NoiseReport,
    with_ambient: bool,
    cpu_rows: Option<usize>,
) {
    let window = n.cpus.iter().map(|c| c.seconds).fold(0.0, f64::max);
    let _ = writeln!(
        out,
        "\nNoise probe (a SCHED_IDLE gap detector on each CPU for {}; gaps above {})",
        ns(window * 1e9),
        ns(n.gap_ns)
    );
    let folded = fold::folds(n.cpus.len(), cpu_rows);
    if !n.cpus.is_empty() {
        table(out, n, folded);
    }
    findings(out, &n.cpus, folded);
    for f in &n.failed {
        let _ = writeln!(out, " noise probe failed on {f}");
    }
    if with_ambient {
        let used: f64 = n.cpus.iter().map(|c| c.probe_cpu_seconds).sum();
        let _ = writeln!(
            out,
            " note: the ambient CPU figures include the probe's own {used:.3} s of CPU (it runs only when a CPU would idle)"
        );
    }
}

/// A row per CPU: how long the probe ran, its interrupt gaps and the gaps in which tasks ran.
fn table(out: &mut String, n: &arum_hourglass::NoiseReport, folded: bool) {
    let mut t = Grid::new();
    t.push_record([
        "CPU",
        "probe ran",
        "irq gaps",
        "per s",
        "median",
        "p99",
        "max",
        "in all",
        "task gaps",
        "in all",
        "probe CPU",
    ]);
    if folded {
        t.push_record(all_row(&n.cpus));
        let noise: Vec<(u32, f64)> = n.cpus.iter().map(|c| (c.cpu as u32, lost(c))).collect();
        for (cpu, _) in fold::spread(&noise, fold::BUSIEST).map_or_else(Vec::new, |s| s.busiest) {
            if let Some(c) = n.cpus.iter().find(|c| c.cpu as u32 == cpu) {
                t.push_record(row(c.cpu.to_string(), c));
            }
        }
    } else {
        for c in &n.cpus {
            t.push_record(row(c.cpu.to_string(), c));
        }
    }
    indented(out, &t.align_right(1..));
    if folded {
        let _ = writeln!(
            out,
            " the noisiest CPUs (most time lost to gaps) under the sum of all;"
        );
        let _ = writeln!(out, "{}", fold::folded_note("rows", n.cpus.len()));
    }
}

/// Time the probe lost to gaps of either kind.
fn lost(c: &CpuNoise) -> f64 {
    c.interrupts.total_ns + c.tasks.total_ns
}

fn row(name: String, c: &CpuNoise) -> [String; 11] {
    let i = &c.interrupts;
    let ran = c.ran_seconds / c.seconds.max(1e-9) * 100.0;
    [
        name,
        format!("{} {ran:.1}%", ns(c.ran_seconds * 1e9)),
        i.count.to_string(),
        format!("{:.1}", i.per_second),
        ns(i.median_ns),
        ns(i.p99_ns),
        ns(i.max_ns),
        ns(i.total_ns),
        c.tasks.count.to_string(),
        ns(c.tasks.total_ns),
        ns(c.probe_cpu_seconds * 1e9),
    ]
}

/// Every CPU in one row: sums, the longest gap, the mean rate; no median or p99, which the
/// CPUs' own do not make.
fn all_row(cpus: &[CpuNoise]) -> [String; 11] {
    let sum = |f: fn(&CpuNoise) -> f64| cpus.iter().map(f).sum::<f64>();
    let irq = |f: fn(&GapStats) -> f64| cpus.iter().map(move |c| f(&c.interrupts));
    let ran = sum(|c| c.ran_seconds) / sum(|c| c.seconds).max(1e-9) * 100.0;
    [
        format!("all {}", cpus.len()),
        format!("{} {ran:.1}%", ns(sum(|c| c.ran_seconds) * 1e9)),
        cpus.iter()
            .map(|c| c.interrupts.count)
            .sum::<u64>()
            .to_string(),
        format!(
            "{:.1}",
            irq(|g| g.per_second).sum::<f64>() / cpus.len() as f64
        ),
        String::new(),
        String::new(),
        ns(irq(|g| g.max_ns).fold(0.0, f64::max)),
        ns(irq(|g| g.total_ns).sum()),
        cpus.iter().map(|c| c.tasks.count).sum::<u64>().to_string(),
        ns(sum(|c| c.tasks.total_ns)),
        ns(sum(|c| c.probe_cpu_seconds) * 1e9),
    ]
}

/// Each CPU's periodic-gap finding, CPUs with the same finding on one line; folded, only the
/// findings of the most CPUs.
fn findings(out: &mut String, cpus: &[CpuNoise], folded: bool) {
    let mut groups = super::findings::grouped(cpus);
    if folded {
        groups.sort_by_key(|g| std::cmp::Reverse(g.cpus.len()));
    }
    let shown = if folded { FINDINGS } else { groups.len() };
    for g in groups.iter().take(shown) {
        let _ = writeln!(out, " {}: {}", g.which(), g.statement);
    }
    if groups.len() > shown {
        let _ = writeln!(
            out,
            " {} other findings on the other CPUs: in the JSON report",
            groups.len() - shown
        );
    }
}

fn ns(v: f64) -> String {
    duration::format_ns(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::testing::{has_line, line};
    use arum_hourglass::analysis::TickVerdict;

    fn cpu(cpu: usize, probe_cpu_seconds: f64, irq_ns: f64, statement: &str) -> CpuNoise {
        CpuNoise {
            cpu,
            seconds: 1.0,
            ran_seconds: 0.5,
            probe_cpu_seconds,
            interrupts: GapStats {
                count: 10,
                per_second: 20.0,
                total_ns: irq_ns,
                median_ns: irq_ns / 10.0,
                p99_ns: irq_ns / 5.0,
                max_ns: irq_ns / 4.0,
            },
            tasks: GapStats::default(),
            tick: Some(TickVerdict {
                thread: 0,
                cpu,
                inferred_hz: None,
                sources_hz: Vec::new(),
                kernel_hz: Some(250),
                agrees: None,
                statement: statement.into(),
            }),
        }
    }

    fn noise(cpus: Vec<CpuNoise>) -> arum_hourglass::NoiseReport {
        arum_hourglass::NoiseReport {
            gap_ns: 2000.0,
            tsc_hz: 2.4e9,
            kernel_hz: Some(250),
            cpus,
            failed: vec!["CPU 7: no such CPU".into()],
            lines: Vec::new(),
        }
    }

    #[test]
    fn a_row_per_cpu_and_one_line_per_finding() {
        let n = noise(vec![
            cpu(0, 0.25, 4000.0, "quiet"),
            cpu(1, 0.125, 8000.0, "quiet"),
        ]);
        let mut out = String::new();
        render(&mut out, &n, false, Some(8));
        assert_eq!(
            line(&out, "Noise probe"),
            "Noise probe (a SCHED_IDLE gap detector on each CPU for 1 s; gaps above 2 µs)"
        );
        assert_eq!(
            line(&out, "0 "),
            "0 500 ms 50.0% 10 20.0 400 ns 800 ns 1 µs 4 µs 0 0 ns 250 ms"
        );
        assert!(has_line(&out, "1 500 ms 50.0% 10 20.0 800 ns"), "{out}");
        assert!(has_line(&out, "CPUs 0,1: quiet"), "{out}");
        assert!(
            has_line(&out, "noise probe failed on CPU 7: no such CPU"),
            "{out}"
        );
        assert!(!out.contains("note:"), "{out}");
    }

    #[test]
    fn with_ambient_figures_the_probes_own_cpu_time_is_noted() {
        let n = noise(vec![
            cpu(0, 0.25, 4000.0, "quiet"),
            cpu(1, 0.125, 8000.0, "quiet"),
        ]);
        let mut out = String::new();
        render(&mut out, &n, true, Some(8));
        assert_eq!(
            line(&out, "note:"),
            "note: the ambient CPU figures include the probe's own 0.375 s of CPU \
             (it runs only when a CPU would idle)"
        );
    }

    // 64 CPUs: one row for all, the three noisiest, and the most common findings; every row with
    // --per-cpu (no limit).
    #[test]
    fn many_cpus_fold_into_the_sum_and_the_noisiest() {
        let cpus: Vec<CpuNoise> = (0..64)
            .map(|c| {
                let finding = format!("finding {}", c % 5);
                cpu(c, 0.01, 1000.0 * (c as f64 + 1.0), &finding)
            })
            .collect();
        let n = noise(cpus);
        let mut out = String::new();
        render(&mut out, &n, false, Some(8));
        assert!(out.lines().count() < 16, "{out}");
        assert!(
            has_line(
                &out,
                "all 64 32 s 50.0% 640 20.0 16 µs 2.08 ms 0 0 ns 640 ms"
            ),
            "{out}"
        );
        let rows: Vec<&str> = ["63 ", "62 ", "61 "]
            .iter()
            .map(|r| {
                out.lines()
                    .map(str::trim)
                    .find(|l| l.starts_with(r))
                    .unwrap_or("")
            })
            .collect();
        assert!(rows.iter().all(|r| !r.is_empty()), "{out}");
        assert!(!has_line(&out, "60 "), "{out}");
        assert!(has_line(&out, "CPUs 0,5,10,15"), "{out}");
        assert!(
            has_line(&out, "2 other findings on the other CPUs"),
            "{out}"
        );
        let mut all = String::new();
        render(&mut all, &n, false, None);
        assert!(has_line(&all, "60 "), "{all}");
        assert_eq!(all.lines().filter(|l| l.contains("finding")).count(), 5);
    }
}
