//! The text of the ambient section: what the machine did during the run.

use std::fmt::Write;

use arum_units::{duration, size};

use super::model::{AmbientReport, AmbientSummary, CpuUtilisation};
use crate::render::fold;
use crate::render::text::{indented, row, section};
use arum_camp::Utilisation;
use arum_grid::Grid;

/// What the machine did during the run: deltas and rates, then notes on likely interference.
/// Beyond `cpu_rows` CPUs the CPU table shows their mean and the busiest CPUs.
pub fn render(out: &mut String, a: &AmbientReport, cpu_rows: Option<usize>) {
    title(out, a);
    let cpus = &a.summary.cpu_utilisation;
    if fold::folds(cpus.len(), cpu_rows) {
        folded_cpu_table(out, cpus);
    } else {
        cpu_table(out, cpus.iter().map(|c| (c.cpu.to_string(), &c.percent)));
    }
    let mut rows = activity_rows(&a.summary);
    if let Some(l) = a.samples.last() {
        rows.push(row(
            "load average (end)",
            format!("{:.2} {:.2} {:.2}", l.load.one, l.load.five, l.load.fifteen),
        ));
    }
    rows.extend(tree_and_device_rows(&a.summary));
    section(out, None, &rows);
    for n in &a.notes {
        let _ = writeln!(out, " note: {n}");
    }
}

/// How often the machine was sampled, over how long, and what the sampling cost.
fn title(out: &mut String, a: &AmbientReport) {
    let every = if a.interval_ms == 0 {
        "at start and end".to_string()
    } else {
        format!("every {}", duration::format_ns(a.interval_ms as f64 * 1e6))
    };
    let _ = writeln!(
        out,
        "\nAmbient environment ({} samples {every} over {}; the sampler used {} of CPU)",
        a.samples.len(),
        duration::format_ns(a.summary.duration_ns as f64),
        duration::format_ns(a.sampler_cpu_ns as f64)
    );
}

/// Rows of CPU time by kind, in percent, each under its name.
fn cpu_table<'a>(out: &mut String, rows: impl Iterator<Item = (String, &'a Utilisation)>) {
    let mut cpu = Grid::new();
    cpu.push_record([
        "CPU", "user%", "nice%", "sys%", "iowait%", "irq%", "soft%", "steal%", "idle%",
    ]);
    for (name, p) in rows {
        cpu.push_record(
            std::iter::once(name).chain(
                [
                    p.user, p.nice, p.system, p.iowait, p.irq, p.softirq, p.steal, p.idle,
                ]
                .map(|v| format!("{v:.1}")),
            ),
        );
    }
    let t = cpu.align_right(1..);
    indented(out, &t);
}

/// Many CPUs: their mean, the busiest CPUs, and the spread of the busy share.
fn folded_cpu_table(out: &mut String, cpus: &[CpuUtilisation]) {
    let n = cpus.len() as f64;
    let mean = |f: fn(&Utilisation) -> f64| cpus.iter().map(|c| f(&c.percent)).sum::<f64>() / n;
    let means = Utilisation {
        user: mean(|p| p.user),
        nice: mean(|p| p.nice),
        system: mean(|p| p.system),
        iowait: mean(|p| p.iowait),
        irq: mean(|p| p.irq),
        softirq: mean(|p| p.softirq),
        steal: mean(|p| p.steal),
        idle: mean(|p| p.idle),
        busy: mean(|p| p.busy),
    };
    let busy: Vec<(u32, f64)> = cpus.iter().map(|c| (c.cpu, c.percent.busy)).collect();
    let Some(spread) = fold::spread(&busy, fold::BUSIEST) else {
        return;
    };
    let busiest = spread.busiest.iter().filter_map(|&(cpu, _)| {
        let c = cpus.iter().find(|c| c.cpu == cpu)?;
        Some((cpu.to_string(), &c.percent))
    });
    cpu_table(
        out,
        std::iter::once((format!("mean of {}", cpus.len()), &means)).chain(busiest),
    );
    let _ = writeln!(
        out,
        " busy (not idle or iowait) per CPU: min {:.1}%, median {:.1}%, max {:.1}%",
        spread.min, spread.median, spread.max
    );
    let _ = writeln!(out, "{}", fold::folded_note("rows", cpus.len()));
}

/// The machine's activity during the run: interrupts, switches, memory, paging, other CPU time
/// and pressure stalls.
fn activity_rows(s: &AmbientSummary) -> Vec<[String; 2]> {
    let bytes = |b: u64| size::format(b as f64);
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
            memory_change(s.memory_start.available_bytes, s.memory_end.available_bytes),
        ),
        row(
            "page cache / dirty (end)",
            format!(
                "{} / {}",
                bytes(s.memory_end.cached_bytes),
                bytes(s.memory_end.dirty_bytes)
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
        row("other CPU time", duration::format_ns(s.other_cpu_ns as f64)),
    ];
    if let Some([c, m, i]) = s.pressure_stall_us {
        rows.push(row(
            "stalls cpu / memory / io",
            [c, m, i]
                .map(|us| duration::format_ns(us as f64 * 1e3))
                .join(" / "),
        ));
    }
    rows
}

/// Both ends, and the change itself, which four digits of each end may not show.
fn memory_change(start: u64, end: u64) -> String {
    let change = end as f64 - start as f64;
    let sign = if change < 0.0 { "-" } else { "+" };
    format!(
        "{} -> {} ({sign}{})",
        size::format(start as f64),
        size::format(end as f64),
        size::format(change.abs())
    )
}

/// The launched tree's peak, then the busiest interrupts, the disks and the interfaces.
fn tree_and_device_rows(s: &AmbientSummary) -> Vec<[String; 2]> {
    let bytes = |b: u64| size::format(b as f64);
    let mut rows = vec![row(
        "launched tree (peak)",
        format!(
            "{} threads, RSS {}, virtual {}",
            s.tree_peak_threads,
            bytes(s.tree_peak_rss_bytes),
            bytes(s.tree_peak_vsize_bytes)
        ),
    )];
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
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::ambient::model::Named;
    use crate::render::testing::{has_line, line, line_number};
    use crate::report::testing::fixture;

    fn ambient() -> AmbientReport {
        fixture().ambient.expect("the fixture sampled the machine")
    }

    fn text(a: &AmbientReport) -> String {
        let mut out = String::new();
        render(&mut out, a, Some(crate::render::fold::CPU_ROWS));
        out
    }

    // 16 CPUs, CPU c busy c·5%: their mean, the three busiest, the spread; every row without a
    // limit.
    #[test]
    fn many_cpus_fold_into_their_mean_and_the_busiest() {
        let mut a = ambient();
        let template = a.summary.cpu_utilisation[0].clone();
        a.summary.cpu_utilisation = (0..16)
            .map(|cpu| {
                let busy = f64::from(cpu) * 5.0;
                let mut c = template.clone();
                c.cpu = cpu;
                c.percent = Utilisation {
                    user: busy,
                    nice: 0.0,
                    system: 0.0,
                    idle: 100.0 - busy,
                    iowait: 0.0,
                    irq: 0.0,
                    softirq: 0.0,
                    steal: 0.0,
                    busy,
                };
                c
            })
            .collect();
        let out = text(&a);
        assert_eq!(
            line(&out, "mean of 16"),
            "mean of 16 37.5 0.0 0.0 0.0 0.0 0.0 0.0 62.5"
        );
        assert_eq!(line(&out, "15 "), "15 75.0 0.0 0.0 0.0 0.0 0.0 0.0 25.0");
        assert!(has_line(&out, "14 70.0"), "{out}");
        assert!(has_line(&out, "13 65.0"), "{out}");
        assert!(!has_line(&out, "12 60.0"), "{out}");
        assert_eq!(
            line(&out, "busy (not idle"),
            "busy (not idle or iowait) per CPU: min 0.0%, median 37.5%, max 75.0%"
        );
        let mut all = String::new();
        render(&mut all, &a, None);
        assert!(has_line(&all, "12 60.0"), "{all}");
        assert!(!has_line(&all, "mean of"), "{all}");
    }

    #[test]
    fn the_fixture_shows_the_cpus_the_counts_and_the_interference_note() {
        let out = text(&ambient());
        assert_eq!(
            line(&out, "Ambient environment"),
            "Ambient environment (2 samples at start and end over 255.6 ms; \
             the sampler used 335.8 µs of CPU)"
        );
        assert_eq!(
            line(&out, "CPU user%"),
            "CPU user% nice% sys% iowait% irq% soft% steal% idle%"
        );
        assert_eq!(line(&out, "1 4.0"), "1 4.0 84.0 12.0 0.0 0.0 0.0 0.0 0.0");
        assert_eq!(line(&out, "interrupts"), "interrupts 192 (751/s)");
        // A change too small to show in four digits of either end is shown by itself.
        assert_eq!(
            line(&out, "memory available"),
            "memory available 22.35 GiB -> 22.35 GiB (-32 KiB)"
        );
        assert_eq!(
            line(&out, "stalls"),
            "stalls cpu / memory / io 175.3 ms / 0 ns / 530 µs"
        );
        assert_eq!(
            line(&out, "load average"),
            "load average (end) 6.49 7.41 6.24"
        );
        assert_eq!(
            line(&out, "irq LOC"),
            "irq LOC 151 (Local timer interrupts)"
        );
        assert_eq!(
            line(&out, "disk vda"),
            "disk vda 0 reads, 3 writes, 0 / 64 sectors, busy 0 ms"
        );
        assert!(
            line_number(&out, "note: other processes") > line_number(&out, "disk vda"),
            "{out}"
        );
    }

    #[test]
    fn periodic_samples_growth_and_interfaces_read_as_such() {
        let mut a = ambient();
        a.interval_ms = 100;
        a.summary.memory_end.available_bytes += 3 << 20;
        a.summary.pressure_stall_us = None;
        a.summary.net = vec![Named {
            name: "eth0".into(),
            counters: arum_camp::NetCounters {
                rx_bytes: 1500,
                rx_packets: 1,
                rx_errors: 1,
                tx_errors: 2,
                tx_drops: 4,
                ..Default::default()
            },
        }];
        a.notes.clear();
        let out = text(&a);
        assert!(
            line(&out, "Ambient environment").contains("2 samples every 100 ms over"),
            "{out}"
        );
        assert!(
            line(&out, "memory available").ends_with("(+2.969 MiB)"),
            "{out}"
        );
        assert!(
            !has_line(&out, "stalls") && !has_line(&out, "note:"),
            "{out}"
        );
        assert_eq!(
            line(&out, "net eth0"),
            "net eth0 rx 1500 B / 1 pkts, tx 0 B / 0 pkts, errors 3, drops 4"
        );
    }
}
