//! Parsers from the bytes of /proc files, used both by the live CAMP accessors and, after the
//! run, on the bytes the sampler captured. The procfs crate parses what it covers; /proc/stat
//! (procfs drops the CPU numbers) and /proc/interrupts and /proc/softirqs are parsed here.

use serde::{Deserialize, Serialize};

/// Raw CPU time counters of one CPU, in clock ticks (USER_HZ), as /proc/stat has them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
    /// Ticks not idle (iowait counts as idle: the CPU had nothing to run).
    pub fn busy(&self) -> u64 {
        self.total() - self.idle - self.iowait
    }
    pub fn delta(&self, before: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(before.user),
            nice: self.nice.saturating_sub(before.nice),
            system: self.system.saturating_sub(before.system),
            idle: self.idle.saturating_sub(before.idle),
            iowait: self.iowait.saturating_sub(before.iowait),
            irq: self.irq.saturating_sub(before.irq),
            softirq: self.softirq.saturating_sub(before.softirq),
            steal: self.steal.saturating_sub(before.steal),
        }
    }
}

/// The whole-machine counters of /proc/stat.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub cpus: Vec<(u32, CpuTimes)>,
    pub interrupts: u64,
    pub context_switches: u64,
    pub processes_created: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub softirqs: u64,
}

fn nums(rest: &str) -> impl Iterator<Item = u64> + '_ {
    rest.split_ascii_whitespace()
        .map(|v| v.parse().unwrap_or(0))
}

pub fn stat(text: &str) -> Stat {
    let mut s = Stat::default();
    for line in text.lines() {
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let first = || nums(rest).next().unwrap_or(0);
        match key {
            "intr" => s.interrupts = first(),
            "ctxt" => s.context_switches = first(),
            "processes" => s.processes_created = first(),
            "procs_running" => s.procs_running = first(),
            "procs_blocked" => s.procs_blocked = first(),
            "softirq" => s.softirqs = first(),
            k if k.starts_with("cpu") && k.len() > 3 => {
                if let Ok(id) = k[3..].parse() {
                    let v: Vec<u64> = nums(rest).collect();
                    let at = |i: usize| v.get(i).copied().unwrap_or(0);
                    s.cpus.push((
                        id,
                        CpuTimes {
                            user: at(0),
                            nice: at(1),
                            system: at(2),
                            idle: at(3),
                            iowait: at(4),
                            irq: at(5),
                            softirq: at(6),
                            steal: at(7),
                        },
                    ));
                }
            }
            _ => {}
        }
    }
    s
}

/// One line of /proc/interrupts or /proc/softirqs: its name, per-CPU counts, description.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqLine {
    pub name: String,
    pub per_cpu: Vec<u64>,
    pub desc: String,
}

impl IrqLine {
    pub fn total(&self) -> u64 {
        self.per_cpu.iter().sum()
    }
}

/// The CPU numbers of the columns of /proc/interrupts or /proc/softirqs (`CPU0 CPU2 ...`).
pub fn irq_cpus(text: &str) -> Vec<u32> {
    text.lines()
        .next()
        .unwrap_or("")
        .split_ascii_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect()
}

/// /proc/interrupts and /proc/softirqs: a header of CPU names, then `NAME: counts... desc`.
pub fn irq_table(text: &str) -> Vec<IrqLine> {
    let mut lines = text.lines();
    let ncpus = lines
        .next()
        .map_or(0, |h| h.split_ascii_whitespace().count());
    lines
        .filter_map(|line| {
            let (name, rest) = line.split_once(':')?;
            let mut per_cpu = Vec::with_capacity(ncpus);
            let mut words = rest.split_ascii_whitespace().peekable();
            while per_cpu.len() < ncpus {
                match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                    Some(v) => {
                        per_cpu.push(v);
                        words.next();
                    }
                    None => break,
                }
            }
            Some(IrqLine {
                name: name.trim().to_string(),
                per_cpu,
                desc: words.collect::<Vec<_>>().join(" "),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_keeps_cpu_numbers_even_with_gaps() {
        let s = stat("cpu  10 0 5 100 1 0 0 0 0 0\ncpu0 5 0 2 50 1 0 0 0 0 0\ncpu2 5 0 3 50 0 0 0 2 0 0\nintr 1234 1 2\nctxt 99\nprocesses 7\nprocs_running 2\nprocs_blocked 1\nsoftirq 55 1 2\n");
        assert_eq!(s.cpus.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(s.cpus[1].1.steal, 2);
        assert_eq!(
            (
                s.interrupts,
                s.context_switches,
                s.processes_created,
                s.softirqs
            ),
            (1234, 99, 7, 55)
        );
        assert_eq!((s.procs_running, s.procs_blocked), (2, 1));
    }

    #[test]
    fn irq_lines_split_counts_from_descriptions() {
        let t = irq_table("           CPU0       CPU1\n  1:          9          0   IO-APIC   1-edge      i8042\nNMI:          0          0   Non-maskable interrupts\nERR:          0\n");
        assert_eq!(t[0].name, "1");
        assert_eq!(t[0].per_cpu, [9, 0]);
        assert_eq!(t[0].desc, "IO-APIC 1-edge i8042");
        assert_eq!(t[1].desc, "Non-maskable interrupts");
        assert_eq!(t[2].per_cpu, [0]);
    }

    #[test]
    fn irq_columns_are_the_online_cpus_by_number() {
        assert_eq!(irq_cpus("    CPU0    CPU2   CPU13\n"), [0, 2, 13]);
        assert_eq!(irq_cpus(""), Vec::<u32>::new());
    }
}
