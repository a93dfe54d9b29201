//! The usage section of the report: rusage of the tree, and its peak memory.

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Lower, Neither};
use crate::fields::{each, group, label, measured, setting, Field, Unit};

/// The fields of [`Usage`] (see `crate::fields`).
pub const FIELDS: &[Field] = &[
    measured("wall_ns", Unit::Nanoseconds, Lower),
    measured("user_ns", Unit::Nanoseconds, Lower),
    measured("system_ns", Unit::Nanoseconds, Lower),
    // CPUs busy on average (shown as 150% for one and a half): how parallel the program was,
    // not how well it did.
    measured("cpu_utilisation", Unit::Fraction, Neither),
    measured("minor_faults", Unit::Count, Lower),
    measured("major_faults", Unit::Count, Lower),
    measured("voluntary_context_switches", Unit::Count, Lower),
    measured("involuntary_context_switches", Unit::Count, Lower),
    measured("block_input_ops", Unit::Count, Lower),
    measured("block_output_ops", Unit::Count, Lower),
    // Signals are how the program talks to its children and timers, not a cost.
    measured("signals_received", Unit::Count, Neither),
    measured("rusage_maxrss_bytes", Unit::Bytes, Lower),
    group("peak_memory", PEAK_MEMORY),
    each("estimates", ESTIMATE),
];

const PEAK_MEMORY: &[Field] = &[
    measured("peak_rss_bytes", Unit::Bytes, Lower),
    measured("samples", Unit::Count, Neither),
    measured("peak_threads", Unit::Count, Neither),
    measured("peak_processes", Unit::Count, Neither),
    // arum's own memory, not the program's.
    measured("launcher_rss_at_fork_bytes", Unit::Bytes, Neither),
];

/// `arum_calibrate::saved::Estimate`.
const ESTIMATE: &[Field] = &[
    label("event"),
    measured("count", Unit::Count, Lower),
    // The calibrated cost of one event on this machine: what the estimate is computed with.
    setting("cost_ns", Unit::Nanoseconds),
    measured("estimated_ns", Unit::Nanoseconds, Lower),
    measured("estimated_low_ns", Unit::Nanoseconds, Lower),
    measured("estimated_high_ns", Unit::Nanoseconds, Lower),
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub wall_ns: u64,
    pub user_ns: u64,
    pub system_ns: u64,
    /// (user + system) / wall; above 1 when the program used several CPUs at once.
    pub cpu_utilisation: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_context_switches: u64,
    pub involuntary_context_switches: u64,
    pub block_input_ops: u64,
    pub block_output_ops: u64,
    pub signals_received: u64,
    /// The kernel's ru_maxrss for the program: its largest single process, possibly inflated
    /// by the launcher's memory before exec. `peak_memory` is the tree's real peak.
    pub rusage_maxrss_bytes: u64,
    pub peak_memory: Option<PeakMemory>,
    /// Time the counts above probably cost on this machine (count × the cost `arum calibrate
    /// --save` measured here): estimates, present when a calibration was saved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub estimates: Vec<arum_calibrate::saved::Estimate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakMemory {
    /// Peak resident memory of the launched process tree.
    pub peak_rss_bytes: u64,
    /// How `peak_rss_bytes` was obtained.
    pub method: PeakMethod,
    /// Whether page cache the tree caused (file data read or written) counts (memory.peak
    /// does; sampled sizes count only mapped pages).
    #[serde(default)]
    pub includes_page_cache: bool,
    /// Samples of the tree taken while it ran.
    pub samples: u64,
    pub peak_threads: u64,
    pub peak_processes: u64,
    /// The child's resident high-water mark before exec: arum's memory, which the child shares
    /// until exec (or its copy, where it is forked), and which ru_maxrss includes (ru_maxrss counts towards the peak only above it).
    pub launcher_rss_at_fork_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeakMethod {
    /// `memory.peak` of a cgroup v2 group holding only the launched tree: exact.
    CgroupV2MemoryPeak,
    /// Resident set sizes (VmRSS/VmHWM) of the tree's processes sampled while it ran, with
    /// ru_maxrss where it is known not to include the launcher; pages shared between processes
    /// count once per process.
    ProcfsSampling,
    /// Proportional set sizes (smaps_rollup) of the tree's processes sampled while it ran, with
    /// VmHWM and ru_maxrss as floors: shared pages count once in all.
    PssSampling,
    /// The program ended before the first sample and its ru_maxrss may be arum's own memory as
    /// the child inherited it: the peak was at most this.
    RusageUpperBound,
    /// Sampling was off (`--no-memory-sampling`): ru_maxrss, the largest process alone, which
    /// holds arum's copy where the program stayed smaller than it.
    Rusage,
}

impl PeakMethod {
    pub fn includes_page_cache(self) -> bool {
        self == PeakMethod::CgroupV2MemoryPeak
    }

    pub fn describe(self) -> &'static str {
        match self {
            PeakMethod::CgroupV2MemoryPeak => "cgroup v2 memory.peak, page cache included",
            PeakMethod::ProcfsSampling => "sampled VmRSS/VmHWM of the tree",
            PeakMethod::PssSampling => "sampled proportional set size of the tree",
            PeakMethod::Rusage => {
                "ru_maxrss of the largest process (--no-memory-sampling); it holds arum's copy where the program stayed smaller"
            }
            PeakMethod::RusageUpperBound => {
                "at most: ru_maxrss, which may hold arum's copy; the program ended before the first sample"
            }
        }
    }
}
