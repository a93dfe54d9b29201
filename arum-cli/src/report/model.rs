//! The one report model: every facility fills its part, every output format renders it.
//! Field names carry their units (`_ns`, `_us`, `_bytes`); counts are plain integers.

use serde::{Deserialize, Serialize};

use crate::cli::LaunchHow;

/// The version tag of this JSON layout; bump it when a field changes meaning or is removed.
pub const SCHEMA: &str = "arum.report/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub metadata: Metadata,
    pub command: CommandInfo,
    pub exit: ExitInfo,
    pub usage: Usage,
    pub self_timing: SelfTiming,
    /// Things the user should know about how the values were obtained, one line each.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    pub arum_version: String,
    pub host: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub arch: String,
    pub cpu: arum_events::cpu::CpuIdent,
    pub online_cpus: usize,
    /// RFC 3339, UTC, when the program was released.
    pub start_time_utc: String,
    pub start_time_unix_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// What was executed: program and arguments.
    pub argv: Vec<String>,
    /// How the command line was given: `argv` (after `--`), `split` (--launch), `shell`.
    pub how: LaunchHow,
    /// The --launch string as given, if any.
    pub launch: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExitInfo {
    /// arum's own exit status: the program's code, or 128+N for signal N.
    pub status: i32,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub signal_name: Option<String>,
    pub core_dumped: bool,
}

impl ExitInfo {
    pub fn describe(&self) -> String {
        match (self.code, self.signal) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(sig)) => format!(
                "terminated by signal {sig} ({}){}",
                self.signal_name.as_deref().unwrap_or("unknown"),
                if self.core_dumped {
                    ", core dumped"
                } else {
                    ""
                }
            ),
            (None, None) => "unknown".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakMemory {
    /// Peak resident memory of the launched process tree.
    pub peak_rss_bytes: u64,
    /// How `peak_rss_bytes` was obtained.
    pub method: PeakMethod,
    /// Samples of the tree taken while it ran.
    pub samples: u64,
    pub peak_threads: u64,
    pub peak_processes: u64,
    /// arum's own resident memory when it forked the program.
    pub launcher_rss_at_fork_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeakMethod {
    /// `memory.peak` of a cgroup v2 group holding only the launched tree: exact.
    CgroupV2MemoryPeak,
    /// VmRSS/VmHWM of the tree's processes sampled while it ran, with ru_maxrss where it is
    /// known not to include the launcher.
    ProcfsSampling,
}

impl PeakMethod {
    pub fn describe(self) -> &'static str {
        match self {
            PeakMethod::CgroupV2MemoryPeak => "cgroup v2 memory.peak",
            PeakMethod::ProcfsSampling => "sampled VmRSS/VmHWM of the tree",
        }
    }
}

/// arum's own phases, in microseconds, as in the original ARUM paper's Tables 1 and 2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfTiming {
    /// Set-up phase 1: argument parsing and data structures.
    pub setup_phase1_us: u64,
    /// Set-up phase 2: event verification and counter configuration.
    pub setup_phase2_us: u64,
    /// Post-processing phase 1: reading the counters.
    pub post_phase1_us: u64,
    /// Post-processing phase 2: resource usage and the report.
    pub post_phase2_us: u64,
}
