//! From the captured bytes to the report: parse every sample with the CAMP parsers, compute the
//! deltas and rates over the run, and write notes on likely interference.

use std::collections::HashMap;
use std::time::Duration;

use super::sampler::{Capture, SYSTEM_FILES};
use crate::facilities::ambient::model::{
    AmbientReport, AmbientSample, AmbientSummary, CpuSample, CpuUtilisation, IrqDelta, Named,
    TreeSample,
};
use arum_camp::{self as camp, Utilisation};

/// Interference is worth a note above these.
const OTHER_CPU_NOTE: f64 = 0.05;
const IRQ_RATE_NOTE: f64 = 20_000.0;
const STEAL_NOTE: f64 = 1.0;

fn idx(path: &str) -> usize {
    SYSTEM_FILES
        .iter()
        .position(|p| *p == path)
        .expect("a sampled file")
}

fn sample(c: &Capture, s: &super::sampler::SystemSample) -> AmbientSample {
    let b = |p: &str| c.bytes(s.spans[idx(p)]);
    let stat = camp::stat_from(b("/proc/stat"));
    let disks = camp::disk_table_from(b("/proc/diskstats"));
    AmbientSample {
        t_ns: s.t_ns,
        cpus: stat
            .cpus
            .iter()
            .map(|(cpu, times)| CpuSample {
                cpu: *cpu,
                times: *times,
            })
            .collect(),
        interrupts: stat.interrupts,
        softirqs: stat.softirqs,
        softirq_kinds: camp::softirqs_from(b("/proc/softirqs")),
        context_switches: stat.context_switches,
        processes_created: stat.processes_created,
        procs_running: stat.procs_running,
        procs_blocked: stat.procs_blocked,
        load: camp::load_from(b("/proc/loadavg")).unwrap_or_default(),
        memory: camp::memory_from(b("/proc/meminfo")).unwrap_or_default(),
        paging: camp::paging_from(b("/proc/vmstat")).unwrap_or_default(),
        pressure_cpu: camp::pressure_from(b("/proc/pressure/cpu")),
        pressure_memory: camp::pressure_from(b("/proc/pressure/memory")),
        pressure_io: camp::pressure_from(b("/proc/pressure/io")),
        irqs: camp::interrupts_from(b("/proc/interrupts")),
        disks: disks
            .into_iter()
            .map(|(name, counters)| Named { name, counters })
            .collect(),
        net: camp::net_table_from(b("/proc/net/dev"))
            .into_iter()
            .map(|(name, counters)| Named { name, counters })
            .collect(),
    }
}

/// The tree's samples, and the CPUs its processes were seen running on.
fn tree(c: &Capture, hz: u64) -> (Vec<TreeSample>, Vec<u32>) {
    let mut out: Vec<TreeSample> = Vec::new();
    let mut cpus: Vec<u32> = Vec::new();
    for p in &c.tree {
        let Ok(v) = camp::process_from(c.bytes(p.stat), c.bytes(p.io)) else {
            continue;
        };
        if out.last().is_none_or(|t| t.t_ns != p.t_ns) {
            out.push(TreeSample {
                t_ns: p.t_ns,
                processes: 0,
                threads: 0,
                rss_bytes: 0,
                vsize_bytes: 0,
                cpu_ns: 0,
                read_bytes: 0,
                write_bytes: 0,
            });
        }
        if let Some(cpu) = v.last_cpu.filter(|c| !cpus.contains(c)) {
            cpus.push(cpu);
        }
        let t = out.last_mut().expect("pushed above");
        t.processes += 1;
        t.threads += v.threads;
        t.rss_bytes += v.rss_bytes;
        t.vsize_bytes += v.vsize_bytes;
        t.cpu_ns += (v.utime_ticks + v.stime_ticks) * 1_000_000_000 / hz.max(1);
        t.read_bytes += v.read_bytes;
        t.write_bytes += v.write_bytes;
    }
    cpus.sort_unstable();
    (out, cpus)
}

/// A CPU's share of the tree's CPU time below which it is not one of the program's CPUs.
const PROGRAM_CPU_SHARE: f64 = 0.01;

/// The CPUs the program ran on, from the tree's CPU time on each (its counters): those with at
/// least 1% of it. The counters count from the fork, so a launcher that pins the program
/// (`taskset -c 0 prog`) runs its moment before exec on another CPU; that CPU is not the
/// program's, and counting it would charge the program for what others did there.
fn program_cpus(per_cpu: &[(u32, u64)]) -> Vec<u32> {
    let total: u64 = per_cpu.iter().map(|(_, ns)| ns).sum();
    per_cpu
        .iter()
        .filter(|(_, ns)| *ns > 0 && *ns as f64 >= PROGRAM_CPU_SHARE * total as f64)
        .map(|(c, _)| *c)
        .collect()
}

/// Builds the report. `tree_cpu_ns` is the launched tree's CPU time from rusage (exact, unlike
/// the samples, which miss processes between ticks); `per_cpu`, where the tree's task-clock
/// counters could be opened, its CPU time on each CPU.
pub fn analyse(
    capture: Capture,
    interval: Duration,
    tree_cpu_ns: u64,
    per_cpu: Option<&[(u32, u64)]>,
) -> AmbientReport {
    let hz = camp::ticks_per_second();
    let samples: Vec<AmbientSample> = capture.system.iter().map(|s| sample(&capture, s)).collect();
    let (tree, sampled_cpus) = tree(&capture, hz);
    let program_cpus = match per_cpu {
        Some(v) => program_cpus(v),
        None => sampled_cpus,
    };
    let summary = summarise(&samples, &tree, &program_cpus, hz, tree_cpu_ns);
    let notes = notes(&summary);
    AmbientReport {
        interval_ms: interval.as_millis() as u64,
        ticks_per_second: hz,
        sampler_cpu_ns: capture.sampler_cpu_ns,
        samples,
        tree,
        summary,
        notes,
    }
}

fn delta_named<T: Copy + PartialEq + Default>(
    a: &[Named<T>],
    b: &[Named<T>],
    sub: impl Fn(&T, &T) -> T,
) -> Vec<Named<T>> {
    let before: HashMap<&str, &T> = a.iter().map(|n| (n.name.as_str(), &n.counters)).collect();
    b.iter()
        .filter_map(|n| {
            let d = sub(&n.counters, before.get(n.name.as_str())?);
            (d != T::default()).then(|| Named {
                name: n.name.clone(),
                counters: d,
            })
        })
        .collect()
}

fn summarise(
    s: &[AmbientSample],
    tree: &[TreeSample],
    program_cpus: &[u32],
    hz: u64,
    tree_cpu_ns: u64,
) -> AmbientSummary {
    let (first, last) = (&s[0], &s[s.len() - 1]);
    let secs = (last.t_ns.saturating_sub(first.t_ns) as f64 / 1e9).max(1e-9);
    let busy_ns = busy_ticks(first, last, program_cpus) * 1_000_000_000 / hz.max(1);
    let d = |f: fn(&AmbientSample) -> u64| f(last).saturating_sub(f(first));
    AmbientSummary {
        duration_ns: last.t_ns - first.t_ns,
        cpu_utilisation: cpu_utilisation(first, last),
        interrupts: d(|x| x.interrupts),
        interrupts_per_second: d(|x| x.interrupts) as f64 / secs,
        busiest_irqs: busiest_irqs(first, last),
        softirqs: d(|x| x.softirqs),
        context_switches: d(|x| x.context_switches),
        context_switches_per_second: d(|x| x.context_switches) as f64 / secs,
        processes_created: d(|x| x.processes_created),
        max_procs_running: s.iter().map(|x| x.procs_running).max().unwrap_or(0),
        max_procs_blocked: s.iter().map(|x| x.procs_blocked).max().unwrap_or(0),
        paging: paging_between(&first.paging, &last.paging),
        memory_start: first.memory,
        memory_end: last.memory,
        pressure_stall_us: pressure_stalls(first, last),
        disks: delta_named(&first.disks, &last.disks, disk_between),
        net: delta_named(&first.net, &last.net, net_between),
        tree_peak_threads: tree.iter().map(|t| t.threads).max().unwrap_or(0),
        tree_peak_rss_bytes: tree.iter().map(|t| t.rss_bytes).max().unwrap_or(0),
        tree_peak_vsize_bytes: tree.iter().map(|t| t.vsize_bytes).max().unwrap_or(0),
        other_cpu_ns: busy_ns.saturating_sub(tree_cpu_ns),
        program_cpus: program_cpus.to_vec(),
    }
}

/// Each CPU's time by kind between the two samples, in percent.
fn cpu_utilisation(first: &AmbientSample, last: &AmbientSample) -> Vec<CpuUtilisation> {
    last.cpus
        .iter()
        .filter_map(|c| {
            let a = first.cpus.iter().find(|x| x.cpu == c.cpu)?;
            Some(CpuUtilisation {
                cpu: c.cpu,
                percent: Utilisation::between(&a.times, &c.times),
            })
        })
        .collect()
}

/// Busy ticks between the two samples on the CPUs the program was seen on (all CPUs if it was
/// never sampled).
fn busy_ticks(first: &AmbientSample, last: &AmbientSample, program_cpus: &[u32]) -> u64 {
    last.cpus
        .iter()
        .filter(|c| program_cpus.is_empty() || program_cpus.contains(&c.cpu))
        .filter_map(|c| {
            Some(
                c.times
                    .delta(&first.cpus.iter().find(|x| x.cpu == c.cpu)?.times)
                    .busy(),
            )
        })
        .sum()
}

/// The five interrupt sources that fired most between the two samples.
fn busiest_irqs(first: &AmbientSample, last: &AmbientSample) -> Vec<IrqDelta> {
    let before: HashMap<&str, &camp::IrqLine> =
        first.irqs.iter().map(|l| (l.name.as_str(), l)).collect();
    let mut busiest: Vec<IrqDelta> = last
        .irqs
        .iter()
        .filter_map(|l| {
            let a = before.get(l.name.as_str())?;
            let per_cpu: Vec<u64> = l
                .per_cpu
                .iter()
                .zip(a.per_cpu.iter().chain(std::iter::repeat(&0)))
                .map(|(x, y)| x.saturating_sub(*y))
                .collect();
            let count = per_cpu.iter().sum();
            (count > 0).then(|| IrqDelta {
                name: l.name.clone(),
                desc: l.desc.clone(),
                count,
                per_cpu,
            })
        })
        .collect();
    busiest.sort_by_key(|d| std::cmp::Reverse(d.count));
    busiest.truncate(5);
    busiest
}

/// Microseconds some task stalled on cpu, memory and io between the two samples, when every
/// one of the three was read at both.
fn pressure_stalls(first: &AmbientSample, last: &AmbientSample) -> Option<[u64; 3]> {
    let psi = |p: &Option<camp::Pressure>, q: &Option<camp::Pressure>| {
        Some(
            q.as_ref()?
                .some_total_us
                .saturating_sub(p.as_ref()?.some_total_us),
        )
    };
    Some([
        psi(&first.pressure_cpu, &last.pressure_cpu)?,
        psi(&first.pressure_memory, &last.pressure_memory)?,
        psi(&first.pressure_io, &last.pressure_io)?,
    ])
}

fn paging_between(a: &camp::Paging, b: &camp::Paging) -> camp::Paging {
    camp::Paging {
        pgfault: b.pgfault.saturating_sub(a.pgfault),
        pgmajfault: b.pgmajfault.saturating_sub(a.pgmajfault),
        pswpin: b.pswpin.saturating_sub(a.pswpin),
        pswpout: b.pswpout.saturating_sub(a.pswpout),
    }
}

fn disk_between(b: &camp::DiskCounters, a: &camp::DiskCounters) -> camp::DiskCounters {
    camp::DiskCounters {
        reads: b.reads.saturating_sub(a.reads),
        sectors_read: b.sectors_read.saturating_sub(a.sectors_read),
        read_ms: b.read_ms.saturating_sub(a.read_ms),
        writes: b.writes.saturating_sub(a.writes),
        sectors_written: b.sectors_written.saturating_sub(a.sectors_written),
        write_ms: b.write_ms.saturating_sub(a.write_ms),
        busy_ms: b.busy_ms.saturating_sub(a.busy_ms),
    }
}

fn net_between(b: &camp::NetCounters, a: &camp::NetCounters) -> camp::NetCounters {
    camp::NetCounters {
        rx_bytes: b.rx_bytes.saturating_sub(a.rx_bytes),
        rx_packets: b.rx_packets.saturating_sub(a.rx_packets),
        rx_errors: b.rx_errors.saturating_sub(a.rx_errors),
        rx_drops: b.rx_drops.saturating_sub(a.rx_drops),
        tx_bytes: b.tx_bytes.saturating_sub(a.tx_bytes),
        tx_packets: b.tx_packets.saturating_sub(a.tx_packets),
        tx_errors: b.tx_errors.saturating_sub(a.tx_errors),
        tx_drops: b.tx_drops.saturating_sub(a.tx_drops),
    }
}

fn notes(s: &AmbientSummary) -> Vec<String> {
    let mut notes = Vec::new();
    let secs = s.duration_ns as f64 / 1e9;
    if secs > 0.0 {
        let share = s.other_cpu_ns as f64 / 1e9 / secs;
        if share >= OTHER_CPU_NOTE {
            let cpus = if s.program_cpus.is_empty() {
                "the machine's CPUs".to_string()
            } else {
                format!(
                    "the CPUs the program ran on ({})",
                    s.program_cpus
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            notes.push(format!(
                "other processes and the kernel used {:.2} s of CPU time on {cpus} during the run ({:.0}% of one CPU): likely interference",
                s.other_cpu_ns as f64 / 1e9,
                share * 100.0
            ));
        }
    }
    if s.interrupts_per_second >= IRQ_RATE_NOTE {
        notes.push(format!(
            "{:.0} interrupts per second: interrupt load may perturb timings",
            s.interrupts_per_second
        ));
    }
    if s.paging.pswpin + s.paging.pswpout > 0 {
        notes.push(format!(
            "the machine swapped during the run ({} pages in, {} out)",
            s.paging.pswpin, s.paging.pswpout
        ));
    }
    let steal = s
        .cpu_utilisation
        .iter()
        .map(|c| c.percent.steal)
        .fold(0.0, f64::max);
    if steal >= STEAL_NOTE {
        notes.push(format!(
            "the hypervisor took up to {steal:.1}% of a CPU (steal time)"
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    // taskset -c 0 on a 2-CPU machine: 0.4 ms on CPU 1 before exec, 2 s on CPU 0 after.
    #[test]
    fn a_launchers_moment_before_exec_is_not_a_program_cpu() {
        assert_eq!(program_cpus(&[(0, 2_000_000_000), (1, 400_000)]), [0]);
        assert_eq!(
            program_cpus(&[(0, 900_000_000), (1, 1_100_000_000)]),
            [0, 1]
        );
        assert_eq!(program_cpus(&[(0, 0), (1, 0)]), Vec::<u32>::new());
    }
}
