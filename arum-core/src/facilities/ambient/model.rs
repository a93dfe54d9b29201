//! The ambient section of the report: what the rest of the machine did during the run.

use serde::{Deserialize, Serialize};

/// What the rest of the machine did during the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmbientReport {
    /// Sampling interval; 0 = only at the start and at the end.
    pub interval_ms: u64,
    /// Clock ticks per second of the CPU time counters.
    pub ticks_per_second: u64,
    /// CPU time the sampler thread itself used.
    pub sampler_cpu_ns: u64,
    pub samples: Vec<AmbientSample>,
    /// The launched process tree at the same instants.
    pub tree: Vec<TreeSample>,
    pub summary: AmbientSummary,
    /// Likely interference, one line each.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmbientSample {
    /// Since the program was released.
    pub t_ns: u64,
    pub cpus: Vec<CpuSample>,
    pub interrupts: u64,
    pub softirqs: u64,
    /// Softirqs by kind (NET_RX, TIMER, ...) per CPU.
    pub softirq_kinds: Vec<arum_camp::IrqLine>,
    pub context_switches: u64,
    pub processes_created: u64,
    pub procs_running: u64,
    pub procs_blocked: u64,
    pub load: arum_camp::Load,
    pub memory: arum_camp::Memory,
    pub paging: arum_camp::Paging,
    pub pressure_cpu: Option<arum_camp::Pressure>,
    pub pressure_memory: Option<arum_camp::Pressure>,
    pub pressure_io: Option<arum_camp::Pressure>,
    pub irqs: Vec<arum_camp::IrqLine>,
    pub disks: Vec<Named<arum_camp::DiskCounters>>,
    pub net: Vec<Named<arum_camp::NetCounters>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuSample {
    pub cpu: u32,
    pub times: arum_camp::CpuTimes,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Named<T> {
    pub name: String,
    #[serde(flatten)]
    pub counters: T,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSample {
    pub t_ns: u64,
    pub processes: u64,
    pub threads: u64,
    pub rss_bytes: u64,
    pub vsize_bytes: u64,
    /// User + system CPU time of the processes alive at that instant.
    pub cpu_ns: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AmbientSummary {
    pub duration_ns: u64,
    pub cpu_utilisation: Vec<CpuUtilisation>,
    pub interrupts: u64,
    pub interrupts_per_second: f64,
    /// The busiest interrupt sources during the run.
    pub busiest_irqs: Vec<IrqDelta>,
    pub softirqs: u64,
    pub context_switches: u64,
    pub context_switches_per_second: f64,
    pub processes_created: u64,
    pub max_procs_running: u64,
    pub max_procs_blocked: u64,
    pub paging: arum_camp::Paging,
    pub memory_start: arum_camp::Memory,
    pub memory_end: arum_camp::Memory,
    /// Microseconds some task stalled on cpu, memory, io (PSI "some" totals), during the run.
    pub pressure_stall_us: Option<[u64; 3]>,
    pub disks: Vec<Named<arum_camp::DiskCounters>>,
    pub net: Vec<Named<arum_camp::NetCounters>>,
    pub tree_peak_threads: u64,
    pub tree_peak_rss_bytes: u64,
    pub tree_peak_vsize_bytes: u64,
    /// CPU time used by everything except the launched tree, on the CPUs the tree was seen
    /// running on (`program_cpus`; all CPUs when it was never sampled).
    pub other_cpu_ns: u64,
    pub program_cpus: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuUtilisation {
    pub cpu: u32,
    #[serde(flatten)]
    pub percent: arum_camp::Utilisation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IrqDelta {
    pub name: String,
    pub desc: String,
    pub count: u64,
    pub per_cpu: Vec<u64>,
}
