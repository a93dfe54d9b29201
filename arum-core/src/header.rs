//! What every report says of its run: the machine, the command, how it ended, arum's own
//! phases and the rank of a parallel job. A leaf: the launcher, the system facts and every
//! renderer use these types.

use serde::{Deserialize, Serialize};

use crate::fields::{
    each, group, identity, instant, label, measured, setting, Better, Field, Unit,
};

/// The fields of [`Metadata`] (see `crate::fields`): the machine and when the run started.
pub const METADATA: &[Field] = &[
    group(
        "cpu",
        &[identity("family"), identity("model"), identity("stepping")],
    ),
    setting("online_cpus", Unit::Count),
    instant("start_time_unix_ns", Unit::Nanoseconds),
];

/// The fields of [`ExitInfo`]: how the program ended, which identifies the run's outcome.
pub const EXIT: &[Field] = &[identity("status"), identity("code"), identity("signal")];

/// The fields of [`RankInfo`].
pub const RANK: &[Field] = &[identity("rank"), identity("size"), identity("local_rank")];

/// The fields of [`SelfTiming`]: arum's own time, a cost of measuring.
pub const SELF_TIMING: &[Field] = &[
    measured("setup_phase1_us", Unit::Microseconds, Better::Lower),
    measured("setup_phase2_us", Unit::Microseconds, Better::Lower),
    measured("post_phase1_us", Unit::Microseconds, Better::Lower),
    measured("post_phase2_us", Unit::Microseconds, Better::Lower),
    measured("post_phase3_us", Unit::Microseconds, Better::Lower),
    each(
        "samplers",
        &[
            label("name"),
            measured("ticks", Unit::Count, Better::Neither),
            measured("cpu_ns", Unit::Nanoseconds, Better::Lower),
            measured("stretched_to_ns", Unit::Nanoseconds, Better::Neither),
            measured("budget_percent", Unit::Percent, Better::Neither),
        ],
    ),
];

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

impl Metadata {
    /// The description with the run's start: when the program was released.
    pub fn started_at(self, started: std::time::SystemTime) -> Metadata {
        Metadata {
            start_time_utc: humantime::format_rfc3339_nanos(started).to_string(),
            start_time_unix_ns: started
                .duration_since(std::time::SystemTime::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0),
            ..self
        }
    }
}

/// A run's place in a parallel job, from the launcher's environment (the host is
/// `metadata.host`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankInfo {
    pub rank: u32,
    /// Ranks in the job, when the launcher says.
    pub size: Option<u32>,
    /// Rank among those on this host.
    pub local_rank: Option<u32>,
    /// The batch system's job id (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID).
    pub job_id: Option<String>,
    /// Whose variables gave the rank: `openmpi`, `pmix`, `pmi`, `slurm`.
    pub launcher: String,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchHow {
    /// `-- CMD ARGS...`: taken word for word.
    Argv,
    /// `--launch "CMD ARGS"`: split as a POSIX shell splits words.
    Split,
    /// `--launch "..." --shell`: run by /bin/sh -c.
    Shell,
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

/// arum's own phases, in microseconds, as in the original ARUM paper's Tables 1 and 2, and what
/// its sampler threads cost while the program ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfTiming {
    /// Set-up phase 1: argument parsing and data structures (the machine's description among
    /// them).
    pub setup_phase1_us: u64,
    /// Set-up phase 2: event verification and counter configuration.
    pub setup_phase2_us: u64,
    /// Post-processing phase 1: reading the counters.
    pub post_phase1_us: u64,
    /// Post-processing phase 2: resource usage and the report.
    pub post_phase2_us: u64,
    /// Post-processing phase 3: rendering and writing the reports, up to the last write (the
    /// file's rename included). Written into the report as its last act; none in reports that
    /// are parts of a series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post_phase3_us: Option<u64>,
    /// Each sampler thread of the run (memory, -I, ambient...): its samples and CPU time, and
    /// how far apart its CPU budget (1% of a CPU) spaced them when it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samplers: Vec<SamplerCost>,
}

/// What one sampler thread cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplerCost {
    /// Its thread's name (arum-tree, arum-interval, arum-ambient...).
    pub name: String,
    pub ticks: u64,
    pub cpu_ns: u64,
    pub stretched_to_ns: Option<u64>,
    /// The share of a CPU its ticks were allowed (reports before it was recorded: 0, read as
    /// the 1% every sampler had then).
    #[serde(default)]
    pub budget_percent: u32,
}

impl SelfTiming {
    /// What phase 3 holds while the report is rendered: as wide as any figure it can get (up
    /// to 999 s), and found by its label in the rendered text.
    pub const PHASE3_PLACEHOLDER: u64 = 987_654_321;
}
