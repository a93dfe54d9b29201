//! A CAMP-like accessor library for the ambient environment: stateless functions that return
//! raw counters; enumerations whose every output is a valid input of the matching accessor;
//! a CPU-utilisation call that samples over an interval. Every accessor has a `_from` twin that
//! parses captured bytes, which the sampler uses after the run.

#![forbid(unsafe_code)]

use std::time::Duration;

use procfs::{FromBufRead, FromRead};
use serde::{Deserialize, Serialize};

mod parse;

pub use parse::{CpuTimes, IrqLine, Stat};

pub type Result<T> = std::result::Result<T, String>;

fn read(path: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| format!("{path}: {e}"))
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or("")
}

// --- CPUs -----------------------------------------------------------------------------------

/// The CPUs /proc/stat reports (online CPUs), by number.
pub fn cpus() -> Result<Vec<u32>> {
    Ok(stat()?.cpus.into_iter().map(|(id, _)| id).collect())
}

/// Raw time counters of one CPU, in clock ticks.
pub fn cpu_times(cpu: u32) -> Result<CpuTimes> {
    stat()?
        .cpus
        .into_iter()
        .find(|(id, _)| *id == cpu)
        .map(|(_, t)| t)
        .ok_or_else(|| format!("CPU {cpu} is not online"))
}

/// Share of each state over `interval` on `cpu`, in percent (CAMP's sampling utilisation call).
pub fn cpu_utilisation(cpu: u32, interval: Duration) -> Result<Utilisation> {
    let a = cpu_times(cpu)?;
    std::thread::sleep(interval);
    Ok(Utilisation::between(&a, &cpu_times(cpu)?))
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Utilisation {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub idle: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
    /// Everything but idle and iowait.
    pub busy: f64,
}

impl Utilisation {
    pub fn between(a: &CpuTimes, b: &CpuTimes) -> Utilisation {
        let d = b.delta(a);
        let t = d.total().max(1) as f64;
        let p = |v: u64| 100.0 * v as f64 / t;
        Utilisation {
            user: p(d.user),
            nice: p(d.nice),
            system: p(d.system),
            idle: p(d.idle),
            iowait: p(d.iowait),
            irq: p(d.irq),
            softirq: p(d.softirq),
            steal: p(d.steal),
            busy: p(d.busy()),
        }
    }
}

/// /proc/stat: CPU times, interrupts, context switches, process creations, run queue.
pub fn stat() -> Result<Stat> {
    Ok(stat_from(&read("/proc/stat")?))
}

pub fn stat_from(bytes: &[u8]) -> Stat {
    parse::stat(text(bytes))
}

// --- interrupts ------------------------------------------------------------------------------

/// Every interrupt source, with per-CPU counts and the kernel's description.
pub fn interrupts() -> Result<Vec<IrqLine>> {
    Ok(interrupts_from(&read("/proc/interrupts")?))
}

pub fn interrupts_from(bytes: &[u8]) -> Vec<IrqLine> {
    parse::irq_table(text(bytes))
}

/// The names of all interrupt sources (each a valid input of [`interrupt`]).
pub fn interrupt_names() -> Result<Vec<String>> {
    Ok(interrupts()?.into_iter().map(|l| l.name).collect())
}

pub fn interrupt(name: &str) -> Result<IrqLine> {
    interrupts()?
        .into_iter()
        .find(|l| l.name == name)
        .ok_or_else(|| format!("no interrupt named {name}"))
}

/// Interrupt source `name`'s count on each CPU, by CPU number (the table's columns are the CPUs
/// online, which need not be numbered from 0 without gaps).
pub fn interrupt_per_cpu(name: &str) -> Result<Vec<(u32, u64)>> {
    interrupt_per_cpu_from(&read("/proc/interrupts")?, name)
        .ok_or_else(|| format!("no interrupt named {name}"))
}

pub fn interrupt_per_cpu_from(bytes: &[u8], name: &str) -> Option<Vec<(u32, u64)>> {
    let text = text(bytes);
    let line = parse::irq_table(text)
        .into_iter()
        .find(|l| l.name == name)?;
    Some(
        parse::irq_cpus(text)
            .into_iter()
            .zip(line.per_cpu)
            .collect(),
    )
}

/// Softirqs by kind, per CPU.
pub fn softirqs() -> Result<Vec<IrqLine>> {
    Ok(softirqs_from(&read("/proc/softirqs")?))
}

pub fn softirqs_from(bytes: &[u8]) -> Vec<IrqLine> {
    parse::irq_table(text(bytes))
}

// --- memory, paging, load, pressure ------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    pub total_bytes: u64,
    pub free_bytes: u64,
    pub available_bytes: u64,
    pub cached_bytes: u64,
    pub buffers_bytes: u64,
    pub dirty_bytes: u64,
    pub swap_total_bytes: u64,
    pub swap_free_bytes: u64,
}

pub fn memory() -> Result<Memory> {
    memory_from(&read("/proc/meminfo")?)
}

pub fn memory_from(bytes: &[u8]) -> Result<Memory> {
    let m = procfs::Meminfo::from_read(bytes).map_err(|e| e.to_string())?;
    Ok(Memory {
        total_bytes: m.mem_total,
        free_bytes: m.mem_free,
        available_bytes: m.mem_available.unwrap_or(m.mem_free),
        cached_bytes: m.cached,
        buffers_bytes: m.buffers,
        dirty_bytes: m.dirty,
        swap_total_bytes: m.swap_total,
        swap_free_bytes: m.swap_free,
    })
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paging {
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub pswpin: u64,
    pub pswpout: u64,
}

pub fn paging() -> Result<Paging> {
    paging_from(&read("/proc/vmstat")?)
}

pub fn paging_from(bytes: &[u8]) -> Result<Paging> {
    let v = procfs::VmStat::from_read(bytes).map_err(|e| e.to_string())?;
    let get = |k: &str| v.0.get(k).copied().unwrap_or(0).max(0) as u64;
    Ok(Paging {
        pgfault: get("pgfault"),
        pgmajfault: get("pgmajfault"),
        pswpin: get("pswpin"),
        pswpout: get("pswpout"),
    })
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub one: f32,
    pub five: f32,
    pub fifteen: f32,
}

pub fn load() -> Result<Load> {
    load_from(&read("/proc/loadavg")?)
}

pub fn load_from(bytes: &[u8]) -> Result<Load> {
    let l = procfs::LoadAverage::from_read(bytes).map_err(|e| e.to_string())?;
    Ok(Load {
        one: l.one,
        five: l.five,
        fifteen: l.fifteen,
    })
}

/// Pressure stall information of one resource: share of time some (or all) tasks stalled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    pub some_avg10: f32,
    pub some_total_us: u64,
    pub full_avg10: f32,
    pub full_total_us: u64,
}

/// The PSI resources (each a valid input of [`pressure`], where the kernel has PSI).
pub const PSI_RESOURCES: [&str; 3] = ["cpu", "memory", "io"];

/// `None` where the kernel has no PSI (or it is disabled).
pub fn pressure(resource: &str) -> Option<Pressure> {
    pressure_from(&std::fs::read(format!("/proc/pressure/{resource}")).ok()?)
}

pub fn pressure_from(bytes: &[u8]) -> Option<Pressure> {
    let (some, full) = procfs::get_pressure(bytes).ok()?;
    Some(Pressure {
        some_avg10: some.avg10,
        some_total_us: some.total,
        full_avg10: full.avg10,
        full_total_us: full.total,
    })
}

// --- disks and partitions ----------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub reads: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    /// Time the device had I/O in flight (its busy time).
    pub busy_ms: u64,
}

/// All block devices with statistics, as (name, counters).
pub fn disk_table_from(bytes: &[u8]) -> Vec<(String, DiskCounters)> {
    text(bytes)
        .lines()
        .filter_map(|l| procfs::DiskStat::from_line(l).ok())
        .map(|d| {
            (
                d.name,
                DiskCounters {
                    reads: d.reads,
                    sectors_read: d.sectors_read,
                    read_ms: d.time_reading,
                    writes: d.writes,
                    sectors_written: d.sectors_written,
                    write_ms: d.time_writing,
                    busy_ms: d.time_in_progress,
                },
            )
        })
        .collect()
}

fn disk_table() -> Result<Vec<(String, DiskCounters)>> {
    Ok(disk_table_from(&read("/proc/diskstats")?))
}

fn is_partition(name: &str) -> bool {
    std::path::Path::new("/sys/class/block")
        .join(name)
        .join("partition")
        .exists()
}

/// Whole disks (not partitions) that have statistics.
pub fn disks() -> Result<Vec<String>> {
    Ok(disk_table()?
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !is_partition(n))
        .collect())
}

/// Partitions that have statistics.
pub fn partitions() -> Result<Vec<String>> {
    Ok(disk_table()?
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| is_partition(n))
        .collect())
}

/// Counters of one disk or partition.
pub fn disk(name: &str) -> Result<DiskCounters> {
    disk_table()?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, c)| c)
        .ok_or_else(|| format!("no block device named {name}"))
}

/// The disk holding `path`'s file system, if it is on a block device (tmpfs, overlay: none).
pub fn disk_of(path: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return None;
    }
    let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let name = link.file_name()?.to_string_lossy().into_owned();
    if is_partition(&name) {
        // A partition's sysfs directory sits inside its disk's.
        return link
            .parent()?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
    }
    Some(name)
}

// --- network -----------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetCounters {
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_errors: u64,
    pub rx_drops: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    pub tx_drops: u64,
}

pub fn net_table_from(bytes: &[u8]) -> Vec<(String, NetCounters)> {
    let Ok(t) = procfs::net::InterfaceDeviceStatus::from_buf_read(bytes) else {
        return Vec::new();
    };
    let mut v: Vec<(String, NetCounters)> =
        t.0.into_iter()
            .map(|(name, d)| {
                (
                    name,
                    NetCounters {
                        rx_bytes: d.recv_bytes,
                        rx_packets: d.recv_packets,
                        rx_errors: d.recv_errs,
                        rx_drops: d.recv_drop,
                        tx_bytes: d.sent_bytes,
                        tx_packets: d.sent_packets,
                        tx_errors: d.sent_errs,
                        tx_drops: d.sent_drop,
                    },
                )
            })
            .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Network interfaces with statistics.
pub fn interfaces() -> Result<Vec<String>> {
    Ok(net_table_from(&read("/proc/net/dev")?)
        .into_iter()
        .map(|(n, _)| n)
        .collect())
}

pub fn interface(name: &str) -> Result<NetCounters> {
    net_table_from(&read("/proc/net/dev")?)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, c)| c)
        .ok_or_else(|| format!("no network interface named {name}"))
}

// --- processes -------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcCounters {
    pub threads: u64,
    pub rss_bytes: u64,
    pub vsize_bytes: u64,
    /// User and system CPU time, in clock ticks.
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    /// Bytes the process made the storage layer read and write (/proc/PID/io); 0 without
    /// task I/O accounting.
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// The CPU it last ran on.
    pub last_cpu: Option<u32>,
}

/// Processes whose executable's file name is `exe` (each pid a valid input of [`process`]).
pub fn processes_named(exe: &str) -> Vec<i32> {
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    all.filter_map(|p| p.ok())
        .filter(|p| {
            p.exe()
                .ok()
                .and_then(|e| e.file_name().map(|n| n == exe))
                .unwrap_or(false)
        })
        .map(|p| p.pid)
        .collect()
}

pub fn process(pid: i32) -> Result<ProcCounters> {
    let stat = read(&format!("/proc/{pid}/stat"))?;
    let io = std::fs::read(format!("/proc/{pid}/io")).unwrap_or_default();
    process_from(&stat, &io)
}

pub fn process_from(stat: &[u8], io: &[u8]) -> Result<ProcCounters> {
    let s = procfs::process::Stat::from_read(stat).map_err(|e| e.to_string())?;
    let io = procfs::process::Io::from_read(io).ok();
    Ok(ProcCounters {
        threads: s.num_threads.max(0) as u64,
        rss_bytes: s.rss * procfs::page_size(),
        vsize_bytes: s.vsize,
        utime_ticks: s.utime,
        stime_ticks: s.stime,
        read_bytes: io.as_ref().map_or(0, |i| i.read_bytes),
        write_bytes: io.as_ref().map_or(0, |i| i.write_bytes),
        last_cpu: s.processor.and_then(|c| u32::try_from(c).ok()),
    })
}

/// Clock ticks per second (USER_HZ), for the tick counters above.
pub fn ticks_per_second() -> u64 {
    procfs::ticks_per_second()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cpu_listed_is_accepted() {
        let cpus = cpus().unwrap();
        assert!(!cpus.is_empty());
        for c in cpus {
            assert!(cpu_times(c).unwrap().total() > 0, "cpu {c}");
        }
        assert!(cpu_times(9999).is_err());
    }

    #[test]
    fn every_disk_partition_interface_and_irq_listed_is_accepted() {
        for d in disks().unwrap() {
            disk(&d).unwrap_or_else(|e| panic!("{d}: {e}"));
        }
        for p in partitions().unwrap() {
            disk(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
        let ifaces = interfaces().unwrap();
        assert!(ifaces.iter().any(|i| i == "lo"));
        for i in ifaces {
            interface(&i).unwrap_or_else(|e| panic!("{i}: {e}"));
        }
        for n in interrupt_names().unwrap() {
            interrupt(&n).unwrap_or_else(|e| panic!("{n}: {e}"));
        }
        for r in PSI_RESOURCES {
            // PSI may be absent; where present it parses.
            if std::path::Path::new("/proc/pressure").join(r).exists() {
                assert!(pressure(r).is_some(), "{r}");
            }
        }
    }

    #[test]
    fn an_interrupts_counts_go_to_the_cpus_of_their_columns() {
        let table = b"       CPU0  CPU3\n LOC:   120   7   Local timer interrupts\n NMI: 0 0 Non-maskable\n";
        assert_eq!(
            interrupt_per_cpu_from(table, "LOC"),
            Some(vec![(0, 120), (3, 7)])
        );
        assert_eq!(interrupt_per_cpu_from(table, "TIMER"), None);
        // Where this machine lists a line, a column for every CPU online.
        if let Ok(per_cpu) = interrupt_per_cpu("NMI") {
            assert_eq!(
                per_cpu.iter().map(|c| c.0).collect::<Vec<_>>(),
                cpus().unwrap()
            );
        }
    }

    #[test]
    fn processes_found_by_name_are_accepted() {
        let me = std::env::current_exe().unwrap();
        let name = me.file_name().unwrap().to_str().unwrap();
        let pids = processes_named(name);
        assert!(pids.contains(&(std::process::id() as i32)), "{pids:?}");
        for p in pids {
            let c = process(p).unwrap();
            assert!(c.threads >= 1 && c.rss_bytes > 0);
        }
    }

    #[test]
    fn memory_paging_load_parse() {
        let m = memory().unwrap();
        assert!(m.total_bytes > m.free_bytes && m.available_bytes > 0);
        assert!(paging().unwrap().pgfault > 0);
        load().unwrap();
        assert!(stat().unwrap().context_switches > 0);
    }

    #[test]
    fn utilisation_over_an_interval_adds_up() {
        let u = cpu_utilisation(cpus().unwrap()[0], Duration::from_millis(50)).unwrap();
        let sum = u.user + u.nice + u.system + u.idle + u.iowait + u.irq + u.softirq + u.steal;
        assert!((sum - 100.0).abs() < 0.5 || sum == 0.0, "{u:?}");
    }
}
