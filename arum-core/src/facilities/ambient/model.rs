//! The ambient section of the report: what the rest of the machine did during the run.

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Lower, Neither};
use crate::fields::{
    each, group, identity, inline, instant, label, measured, series, setting, Field, Unit,
};

/// The fields of [`AmbientReport`] (see `crate::fields`). What the rest of the machine did is
/// interference: less is better, except where the figure includes the program itself or
/// describes the machine's state.
pub const FIELDS: &[Field] = &[
    setting("interval_ms", Unit::Milliseconds),
    setting("ticks_per_second", Unit::PerSecond),
    // arum's own sampler: overhead.
    measured("sampler_cpu_ns", Unit::Nanoseconds, Lower),
    series("samples", AMBIENT_SAMPLE),
    series("tree", TREE_SAMPLE),
    group("summary", SUMMARY),
];

const AMBIENT_SAMPLE: &[Field] = &[
    instant("t_ns", Unit::Nanoseconds),
    each("cpus", &[label("cpu"), group("times", CPU_TIMES)]),
    measured("interrupts", Unit::Count, Lower),
    measured("softirqs", Unit::Count, Lower),
    each("softirq_kinds", IRQ_LINE),
    measured("context_switches", Unit::Count, Lower),
    measured("processes_created", Unit::Count, Lower),
    measured("procs_running", Unit::Count, Neither),
    measured("procs_blocked", Unit::Count, Neither),
    group("load", LOAD),
    group("memory", MEMORY),
    group("paging", PAGING),
    group("pressure_cpu", PRESSURE),
    group("pressure_memory", PRESSURE),
    group("pressure_io", PRESSURE),
    each("irqs", IRQ_LINE),
    each("disks", NAMED_DISK),
    each("net", NAMED_NET),
];

const TREE_SAMPLE: &[Field] = &[
    instant("t_ns", Unit::Nanoseconds),
    measured("processes", Unit::Count, Neither),
    measured("threads", Unit::Count, Neither),
    measured("rss_bytes", Unit::Bytes, Lower),
    measured("vsize_bytes", Unit::Bytes, Lower),
    measured("cpu_ns", Unit::Nanoseconds, Lower),
    measured("read_bytes", Unit::Bytes, Lower),
    measured("write_bytes", Unit::Bytes, Lower),
];

const SUMMARY: &[Field] = &[
    // The span the figures cover: the run as the sampler saw it.
    measured("duration_ns", Unit::Nanoseconds, Neither),
    each("cpu_utilisation", &[label("cpu"), inline(UTILISATION)]),
    measured("interrupts", Unit::Count, Lower),
    measured("interrupts_per_second", Unit::PerSecond, Lower),
    each("busiest_irqs", IRQ_DELTA),
    measured("softirqs", Unit::Count, Lower),
    measured("context_switches", Unit::Count, Lower),
    measured("context_switches_per_second", Unit::PerSecond, Lower),
    measured("processes_created", Unit::Count, Lower),
    // The program's own tasks count here too.
    measured("max_procs_running", Unit::Count, Neither),
    measured("max_procs_blocked", Unit::Count, Neither),
    group("paging", PAGING),
    group("memory_start", MEMORY),
    group("memory_end", MEMORY),
    measured("pressure_stall_us", Unit::Microseconds, Lower),
    each("disks", NAMED_DISK),
    each("net", NAMED_NET),
    measured("tree_peak_threads", Unit::Count, Neither),
    measured("tree_peak_rss_bytes", Unit::Bytes, Lower),
    measured("tree_peak_vsize_bytes", Unit::Bytes, Lower),
    measured("other_cpu_ns", Unit::Nanoseconds, Lower),
    identity("program_cpus"),
];

/// `arum_camp::CpuTimes`: clock ticks (`ticks_per_second`).
const CPU_TIMES: &[Field] = &[
    measured("user", Unit::Count, Neither),
    measured("nice", Unit::Count, Neither),
    measured("system", Unit::Count, Neither),
    measured("idle", Unit::Count, Neither),
    measured("iowait", Unit::Count, Neither),
    measured("irq", Unit::Count, Neither),
    measured("softirq", Unit::Count, Neither),
    measured("steal", Unit::Count, Neither),
];

/// `arum_camp::Utilisation`: how the CPU's time was spent, program included.
const UTILISATION: &[Field] = &[
    measured("user", Unit::Percent, Neither),
    measured("nice", Unit::Percent, Neither),
    measured("system", Unit::Percent, Neither),
    measured("idle", Unit::Percent, Neither),
    measured("iowait", Unit::Percent, Neither),
    measured("irq", Unit::Percent, Neither),
    measured("softirq", Unit::Percent, Neither),
    // Time the hypervisor gave to other guests: interference.
    measured("steal", Unit::Percent, Lower),
    measured("busy", Unit::Percent, Neither),
];

/// `arum_camp::IrqLine`.
const IRQ_LINE: &[Field] = &[label("name"), measured("per_cpu", Unit::Count, Lower)];

const IRQ_DELTA: &[Field] = &[
    label("name"),
    measured("count", Unit::Count, Lower),
    measured("per_cpu", Unit::Count, Lower),
];

/// `arum_camp::Load`: load averages.
const LOAD: &[Field] = &[
    measured("one", Unit::Ratio, Neither),
    measured("five", Unit::Ratio, Neither),
    measured("fifteen", Unit::Ratio, Neither),
];

/// `arum_camp::Memory`: the machine's memory at an instant.
const MEMORY: &[Field] = &[
    setting("total_bytes", Unit::Bytes),
    measured("free_bytes", Unit::Bytes, Neither),
    measured("available_bytes", Unit::Bytes, Neither),
    measured("cached_bytes", Unit::Bytes, Neither),
    measured("buffers_bytes", Unit::Bytes, Neither),
    measured("dirty_bytes", Unit::Bytes, Neither),
    setting("swap_total_bytes", Unit::Bytes),
    measured("swap_free_bytes", Unit::Bytes, Neither),
];

/// `arum_camp::Paging`: the machine's page faults and swapping.
const PAGING: &[Field] = &[
    measured("pgfault", Unit::Count, Lower),
    measured("pgmajfault", Unit::Count, Lower),
    measured("pswpin", Unit::Count, Lower),
    measured("pswpout", Unit::Count, Lower),
];

/// `arum_camp::Pressure`: pressure stall information.
const PRESSURE: &[Field] = &[
    measured("some_avg10", Unit::Percent, Lower),
    measured("some_total_us", Unit::Microseconds, Lower),
    measured("full_avg10", Unit::Percent, Lower),
    measured("full_total_us", Unit::Microseconds, Lower),
];

/// [`Named`] `arum_camp::DiskCounters`.
const NAMED_DISK: &[Field] = &[
    label("name"),
    measured("reads", Unit::Count, Lower),
    measured("sectors_read", Unit::Count, Lower),
    measured("read_ms", Unit::Milliseconds, Lower),
    measured("writes", Unit::Count, Lower),
    measured("sectors_written", Unit::Count, Lower),
    measured("write_ms", Unit::Milliseconds, Lower),
    measured("busy_ms", Unit::Milliseconds, Lower),
];

/// [`Named`] `arum_camp::NetCounters`.
const NAMED_NET: &[Field] = &[
    label("name"),
    measured("rx_bytes", Unit::Bytes, Lower),
    measured("rx_packets", Unit::Count, Lower),
    measured("rx_errors", Unit::Count, Lower),
    measured("rx_drops", Unit::Count, Lower),
    measured("tx_bytes", Unit::Bytes, Lower),
    measured("tx_packets", Unit::Count, Lower),
    measured("tx_errors", Unit::Count, Lower),
    measured("tx_drops", Unit::Count, Lower),
];

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
