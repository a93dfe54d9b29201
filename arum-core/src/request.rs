//! What a measured run asks for, as the user wrote it: names, words and paths not yet resolved.
//! The command line (the `arum` binary) and `arum suite` fill it in; `Settings::from_request`
//! decides everything from it once, before anything runs. Plain data: no parser's types.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One measured run (or each run of a series).
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub program: ProgramRequest,
    /// `-o`: the report goes to this file (atomically) instead of stderr.
    pub output: Option<PathBuf>,
    pub format: Format,
    /// `--html`: the report as a page too.
    pub html: Option<PathBuf>,
    pub self_timing: bool,
    pub events: EventRequest,
    /// `--ambient`: the sampling interval (zero: at the start and the end only).
    pub ambient: Option<Duration>,
    pub functions: FunctionRequest,
    pub syscalls: SyscallRequest,
    /// `--noise-probe`: the CPUs to probe (empty: every CPU).
    pub noise_probe: Option<Vec<usize>>,
    /// `--per-task`: which threads the text lists.
    pub per_task: Option<PerTask>,
    /// `--enable-delayacct`: turn delay accounting on for the run.
    pub enable_delayacct: bool,
    /// `--no-memory-sampling`: no sampler of the tree's memory; the peak is ru_maxrss (or
    /// cgroup v2's memory.peak where there is one).
    pub no_memory_sampling: bool,
    /// `arum suite`: where the client copies append their counts (not an option of its own).
    pub client_counts: Option<PathBuf>,
    /// `--strict`: a problem with the events or functions is an error, not a warning.
    pub strict: bool,
    /// `--probe-engine`: where the system calls and the tasks' CPU times are counted.
    pub probe_engine: ProbeEngine,
}

/// The program: `--launch` strings or the words after `--`.
#[derive(Debug, Clone, Default)]
pub struct ProgramRequest {
    /// `-l/--launch`: each a command line, split as a shell would (or run by one with `shell`).
    pub launch: Vec<String>,
    pub shell: bool,
    /// The words after `--`.
    pub argv: Vec<String>,
    /// `--compare`: the words after `--` hold several commands separated by `:::`.
    pub compare: bool,
    /// `--env NAME=VALUE` for the program's environment.
    pub env: Vec<String>,
}

/// Performance-counter events and where to count them.
#[derive(Debug, Clone, Default)]
pub struct EventRequest {
    /// `-e`: lists of event names (space- or comma-separated).
    pub events: Vec<String>,
    /// `-M`: metric names and groups (comma-separated).
    pub metrics: Vec<String>,
    pub events_file: Option<PathBuf>,
    pub cpu: CpuChoice,
    pub scope: Scope,
    /// `-C`: a Linux cpulist.
    pub cpus: Option<String>,
    /// `--per-cpu`: open the per-CPU breakdown whatever the CPU count, and show every row.
    pub per_cpu: bool,
    /// `--totals`: one counter per event for the program, whatever the CPU count.
    pub totals: bool,
    pub no_multiplex: bool,
    /// `-I`: read the counters every this many milliseconds.
    pub interval_ms: Option<u64>,
    pub backend: BackendChoice,
}

/// Which processor's event tables to use.
#[derive(Debug, Clone, Default)]
pub struct CpuChoice {
    /// `--cpu`: a CPU spec or a table's name instead of the detected processor.
    pub cpu: Option<String>,
    /// `--event-tables`: read tables from this directory first.
    pub event_tables: Option<PathBuf>,
}

/// The counting back-end asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// The module for system scope when it is usable, else perf_event_open.
    #[default]
    Auto,
    Perf,
    Kmod,
}

/// Function timing (`-F`).
#[derive(Debug, Clone, Default)]
pub struct FunctionRequest {
    pub functions: Vec<String>,
    pub functions_file: Option<PathBuf>,
    pub exact_counts: bool,
    /// `--probe-budget`, in percent of the program's CPU time.
    pub probe_budget: Option<f64>,
    pub no_throttle: bool,
}

/// System calls (`--syscalls`) and the task probes of the views.
#[derive(Debug, Clone, Default)]
pub struct SyscallRequest {
    /// The categories and calls to trace (`all` when the option has no value).
    pub syscalls: Option<String>,
    pub task_begin: Option<String>,
    pub task_end: Option<String>,
    /// `--views`: the ALMT views, which need every call in order (records, not only counts).
    pub views: bool,
}

/// Where the probe facilities count: in the kernel (BPF maps, lossless), or from perf records
/// read in user space (needs no CAP_BPF, loses records when its buffers fill).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProbeEngine {
    /// BPF where this process may load it and the kernel has what it needs, else perf.
    #[default]
    Auto,
    Bpf,
    Perf,
}

/// Which threads the per-task text lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerTask {
    /// The process tree and the top threads.
    Top,
    /// Every thread.
    All,
}

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    Csv,
}

/// Where events are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Only the launched program, its threads and children, per CPU.
    #[default]
    App,
    /// Everything on the selected CPUs.
    System,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::App => "app",
            Scope::System => "system",
        }
    }
}
