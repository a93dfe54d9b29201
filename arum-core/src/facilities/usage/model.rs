//! The usage section of the report: rusage of the tree, and its peak memory.

use serde::{Deserialize, Serialize};

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
            PeakMethod::RusageUpperBound => {
                "at most: ru_maxrss, which may hold arum's copy; the program ended before the first sample"
            }
        }
    }
}
