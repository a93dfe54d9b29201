//! The one report model: every facility fills its part, every output format renders it.
//! Field names carry their units (`_ns`, `_us`, `_bytes`); counts are plain integers.

use serde::{Deserialize, Serialize};

/// The version tag of this JSON layout; bump it when a field changes meaning or is removed.
pub const SCHEMA: &str = "arum.report/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub metadata: Metadata,
    pub command: CommandInfo,
    pub exit: ExitInfo,
    pub usage: Usage,
    /// Performance-counter events, when any were asked for.
    pub counters: Option<CountersReport>,
    /// The ambient environment, with `--ambient`.
    pub ambient: Option<AmbientReport>,
    /// Function-level timing, with `-F/--functions`.
    #[serde(default)]
    pub functions: Option<FunctionsReport>,
    /// What a gap-detecting probe beside the program saw, with `--noise-probe`.
    #[serde(default)]
    pub noise: Option<arum_hourglass::NoiseReport>,
    /// A record for every process and thread of the tree, with `--per-task`.
    #[serde(default)]
    pub tasks: Option<TasksReport>,
    /// System calls of the tree through the kernel's tracepoints, with `--syscalls`.
    #[serde(default)]
    pub syscalls: Option<SyscallsReport>,
    /// The ALMT views of the probe records (overview, tasks, shares, table), with `--syscalls`.
    #[serde(default)]
    pub views: Option<ViewsReport>,
    pub self_timing: SelfTiming,
    /// Things the user should know about how the values were obtained, one line each.
    pub warnings: Vec<String>,
    /// The rank of a parallel job this run was, when a launcher (mpirun, srun) started arum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<RankInfo>,
}

impl Report {
    /// A report of a run that ended with `exit`, before the facilities add their sections.
    pub fn new(metadata: Metadata, command: CommandInfo, exit: ExitInfo) -> Report {
        Report {
            schema: SCHEMA.into(),
            metadata,
            command,
            exit,
            usage: Usage::default(),
            counters: None,
            ambient: None,
            functions: None,
            noise: None,
            tasks: None,
            syscalls: None,
            views: None,
            self_timing: SelfTiming::default(),
            warnings: Vec::new(),
            rank: None,
        }
    }
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

/// Performance-counter events of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountersReport {
    pub backend: BackendKind,
    pub scope: Scope,
    pub cpus: Vec<u32>,
    /// The CPU the events were resolved for, and its event table.
    pub cpu_key: String,
    pub table: Option<String>,
    pub microarchitecture: Option<String>,
    /// Whether hardware events were counted, and why not.
    pub hardware_counting: bool,
    pub hardware_off_reason: Option<String>,
    /// Kernel-mode counting was not allowed, so only user space was counted.
    pub user_only: bool,
    pub user_only_reason: Option<String>,
    /// How the counters were opened (grouping per CPU, pinning).
    pub opened_as: String,
    /// How multiplexing was detected for the per-CPU values.
    pub multiplexing_detection: String,
    pub events: Vec<EventCounts>,
    /// Events asked for but not opened at all, because hardware counting is off.
    #[serde(default)]
    pub not_counted: Vec<NotCounted>,
    /// On a hybrid part, the core type of each counted CPU (its PMU: cpu_core, cpu_atom).
    #[serde(default)]
    pub core_types: Vec<CpuCoreType>,
    /// Derived metrics (-M): each with its value and unit, its inputs, or why it has none.
    #[serde(default)]
    pub metrics: Vec<arum_events::metrics::MetricValue>,
    /// Things to know about how the names were resolved (assumed PMU types, a likely typo) and
    /// how counting went (a CPU that went offline, a late read of the module's counters).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The /dev/arum module: how far apart the CPUs started counting, and stopped.
    #[serde(default)]
    pub start_spread_ns: Option<u64>,
    #[serde(default)]
    pub stop_spread_ns: Option<u64>,
    /// Derived ratios whose inputs were all counted.
    pub ratios: Vec<Ratio>,
    /// `-I`: readings during the run; `counts[e][c]` is event e on `cpus[c]` in that interval.
    pub interval_ms: Option<u64>,
    pub intervals: Vec<Interval>,
}

/// Where events are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Only the launched program, its threads and children, per CPU.
    App,
    /// Everything on the selected CPUs.
    System,
}

/// The counting back-end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendKind {
    /// perf_event_open(2).
    PerfEventOpen,
    /// The /dev/arum kernel module (counts whole CPUs).
    Kmod,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::PerfEventOpen => "perf_event_open",
            BackendKind::Kmod => "kmod",
        }
    }
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::App => "app",
            Scope::System => "system",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventStatus {
    Counted,
    /// The kernel (or the module) refused it.
    NotSupported,
    /// Pinned, and the kernel could not give it a counter while the program ran.
    NotScheduled,
}

impl EventStatus {
    pub fn describe(self) -> &'static str {
        match self {
            EventStatus::Counted => "counted",
            EventStatus::NotSupported => "not supported",
            EventStatus::NotScheduled => "not scheduled",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventCounts {
    /// As the user wrote it.
    pub spec: String,
    /// Canonical name (`task-clock`, `EVENT:MASK`, `r003c`).
    pub name: String,
    pub alias: Option<String>,
    pub perf_type: u32,
    /// perf_event_attr.config, hex.
    pub config: String,
    pub config1: Option<String>,
    /// Counter it was placed on by ARUM's scheduler (the perf backend lets the kernel choose).
    pub counter: Option<u32>,
    /// Where the encoding came from: `table NAME (sources)`, `generic (the kernel's mapping)`,
    /// `architectural (CPUID leaf 0xA)`, `raw`, `software`...
    #[serde(default)]
    pub encoding: String,
    /// Named by the user; false for events counted only because a metric needs them.
    #[serde(default = "named")]
    pub requested: bool,
    pub status: EventStatus,
    /// The kernel's reason when not counted.
    pub reason: Option<String>,
    pub per_cpu: Vec<CpuCount>,
    pub total_raw: u64,
    /// Total with multiplexed CPUs scaled up; equals total_raw when nothing was multiplexed.
    pub total_scaled: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    /// Share of the time the event could count during which it did count, in percent.
    pub percent_running: f64,
    pub multiplexed: bool,
}

fn named() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuCoreType {
    pub cpu: u32,
    /// The PMU that counts it: `cpu_core`, `cpu_atom`, `cpu_lowpower`.
    pub core_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotCounted {
    /// As the user wrote it.
    pub spec: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuCount {
    pub cpu: u32,
    pub raw: u64,
    pub scaled: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    pub percent_running: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub name: String,
    pub value: f64,
    pub numerator: String,
    pub denominator: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// End of the interval, since the program was released.
    pub t_end_ns: u64,
    pub counts: Vec<Vec<u64>>,
}

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

/// Function-level timing by uprobes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionsReport {
    /// Why no function was timed (no permission, no uprobe PMU), when none was.
    pub off_reason: Option<String>,
    pub probe_cost: ProbeCostInfo,
    pub policy: ThrottlePolicy,
    /// Sorted by total inclusive time, largest first.
    pub functions: Vec<FunctionTiming>,
    pub records: RecordStats,
    pub perturbation: Perturbation,
    /// `-I`: calls per interval; `calls[f]` is function f (in `functions` order) in that interval.
    pub interval_ms: Option<u64>,
    pub intervals: Vec<FunctionInterval>,
    /// What sampling windows measure the program's own time in (see `EstimateAxis`).
    #[serde(default)]
    pub estimate_axis: EstimateAxis,
}

/// The clock the estimates of throttled functions run on. Inside a window every call costs a
/// probe hit; the program's own time there is what the calls are counted against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EstimateAxis {
    /// User-mode cycles of the program (a hardware counter): a hit's kernel part is not on this
    /// axis, so calls as fast as a hit can still be counted against the program's own time.
    UserCycles,
    /// The program's CPU time: the calibrated cost of each hit is taken out, which fails when
    /// the calls come as fast as the hits (the estimate is then a lower bound).
    #[default]
    CpuTime,
    /// Wall time, where the program's CPU time cannot be read.
    WallTime,
}

/// The calibrated cost of probe hits on this machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeCostInfo {
    /// A call with entry and return probes, over the same call unprobed.
    pub pair_ns: f64,
    /// A call with the entry probe only (counting, sampling windows).
    pub entry_ns: f64,
    /// Probe time inside a measured call's own interval (taken out of every duration).
    pub inside_ns: f64,
    /// Half the range of the per-round costs.
    pub spread_ns: f64,
    /// With a hardware cycle counter: the user-mode cycles an entry-probe hit adds to a call.
    #[serde(default)]
    pub entry_user_cycles: Option<f64>,
    /// ALMT's probe-cost test: probed calls back to back, the time between consecutive entry
    /// records: how many intervals, their mean and standard deviation.
    #[serde(default)]
    pub back_to_back_intervals: u64,
    #[serde(default)]
    pub back_to_back_mean_ns: f64,
    #[serde(default)]
    pub back_to_back_sd_ns: f64,
    #[serde(default)]
    pub back_to_back_median_ns: f64,
    pub calibration_calls: u64,
    pub calibration_rounds: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleMode {
    /// Short or costly functions stop being probed; further calls are sampled.
    Throttle,
    /// As `throttle`, but the entry probe keeps counting every call.
    ExactCounts,
    /// Every call is timed.
    NoThrottle,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ThrottlePolicy {
    pub mode: ThrottleMode,
    /// Calls timed before a function is judged.
    pub judge_after_calls: u64,
    /// A function whose mean is below this many probe costs is too short to time.
    pub short_factor: f64,
    /// The most estimated probe overhead allowed, in percent of the program's CPU time.
    pub budget_percent: f64,
    /// Sampling windows: `window_ms` of every `period_ms`.
    pub window_ms: f64,
    pub period_ms: f64,
}

impl Default for ThrottlePolicy {
    /// After 100 calls, below 10 probe costs, 2% of the CPU time, windows of 1 ms every 100 ms.
    fn default() -> Self {
        ThrottlePolicy {
            mode: ThrottleMode::Throttle,
            judge_after_calls: 100,
            short_factor: 10.0,
            budget_percent: 2.0,
            window_ms: 1.0,
            period_ms: 100.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleReason {
    /// Its mean duration was below short_factor × the probe cost.
    TooShort,
    /// Its probe overhead would have taken the run over the probe budget.
    Budget,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throttled {
    pub reason: ThrottleReason,
    /// Since the program was released (approximately: arum's arming of the probes).
    pub at_ns: u64,
    /// Calls timed before.
    pub timed_calls: u64,
    /// Their mean inclusive duration.
    pub mean_ns: f64,
}

/// The calls of a throttled function after its probes were removed, from sampling windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallEstimate {
    /// Calls counted while probed, before the throttling.
    pub counted_before: u64,
    /// Calls counted inside the sampling windows.
    pub sampled: u64,
    pub windows: u64,
    /// Estimated calls in all; None when no estimate could be made (see `saturated`).
    pub calls: Option<f64>,
    /// 95% interval of all calls; `high` None when unbounded.
    pub low: f64,
    pub high: Option<f64>,
    /// The sampled calls came as fast as probe hits: the calls between them cannot be told.
    pub saturated: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DurationSummary {
    pub total_ns: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTiming {
    /// As asked for (`compute`, `libc:malloc`, a demangled name).
    pub name: String,
    pub symbol: String,
    pub file: String,
    pub offset: u64,
    /// Calls in all: exact (`calls_exact`), or the estimate's central value (or lower bound).
    pub calls: u64,
    pub calls_exact: bool,
    /// Calls with both entry and return seen: the ones the durations are of.
    pub timed_calls: u64,
    /// Durations with the probes' own time taken out.
    pub inclusive: DurationSummary,
    /// Inclusive time less the time in probed functions called from it.
    pub exclusive: DurationSummary,
    /// The mean is below short_factor × the probe cost: durations are not reliable.
    pub too_short: bool,
    pub throttled: Option<Throttled>,
    pub estimate: Option<CallEstimate>,
    /// Entries whose return never came before the program ended.
    pub unfinished: u64,
    /// Entries whose frame was left without a return (longjmp, exceptions).
    pub unwound: u64,
    /// Returns without an entry.
    pub orphan_returns: u64,
    /// Entries counted by the kernel whose records were lost.
    pub lost_entries: u64,
    /// Probe hits and their estimated cost.
    pub probe_hits: u64,
    pub overhead_ns: u64,
    pub threads: Vec<ThreadTiming>,
    pub processes: Vec<ProcessHits>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadTiming {
    pub tid: u32,
    pub pid: u32,
    /// Entries seen on this thread.
    pub calls: u64,
    pub timed_calls: u64,
    pub inclusive_ns: u64,
    pub exclusive_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessHits {
    pub pid: u32,
    pub name: Option<String>,
    pub calls: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordStats {
    pub records: u64,
    pub bytes: u64,
    /// Records the kernel dropped because a buffer was full.
    pub lost: u64,
    pub ring_buffers: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Perturbation {
    pub probe_hits: u64,
    /// Hits × their calibrated cost.
    pub overhead_ns: u64,
    /// CPU time of the program (all its threads and processes).
    pub program_cpu_ns: u64,
    /// overhead / program CPU time, in percent (at most 100: the calibrated cost can exceed what
    /// a hit cost in the program).
    pub percent_of_cpu: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionInterval {
    pub t_end_ns: u64,
    pub calls: Vec<u64>,
    /// Per function, whether the count is (partly) estimated.
    pub estimated: Vec<bool>,
}

/// A record for every process and thread of the launched tree (`--per-task`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TasksReport {
    /// Where the records came from.
    pub method: TasksMethod,
    /// Every task of the tree has a record from the kernel at its exit.
    pub exact: bool,
    /// What could not be recorded, and what it would take (root, a sysctl), one line each.
    pub limits: Vec<String>,
    pub delay_accounting: DelayAccounting,
    /// The kernel dropped exit records or process events (a socket overflowed).
    pub records_dropped: bool,
    /// Tasks of the tree whose values come from /proc samples instead of an exit record.
    pub sampled_tasks: u64,
    /// /proc samples of the tree taken while it ran.
    pub samples: u64,
    pub processes: Vec<ProcessRecord>,
    pub threads: Vec<ThreadRecord>,
    /// Sums over every task (peaks: the largest).
    pub totals: TaskUsage,
    /// The totals compared with the run's rusage, field by field.
    pub rusage_check: Vec<RusageCheck>,
    /// With `-e`: per-thread counts where the counting back-end could split them.
    pub counters: Option<TaskCounters>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TasksMethod {
    /// taskstats exit records and the proc connector's fork and exit events: exact.
    #[default]
    ExitRecords,
    /// /proc read while the tree ran: values up to each task's last sample; tasks that lived
    /// between two samples are missing.
    ProcSampling,
}

impl TasksMethod {
    pub fn describe(self) -> &'static str {
        match self {
            TasksMethod::ExitRecords => "taskstats exit records and proc connector events, exact",
            TasksMethod::ProcSampling => "/proc samples while the tree ran, not exact",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DelayAccounting {
    /// Block I/O, swap-in, reclaim and thrashing delays were accounted for the tree.
    pub on: bool,
    /// arum turned `kernel.task_delayacct` on for the run (`--enable-delayacct`) and back off.
    pub enabled_for_run: bool,
    /// Why the delays are missing, and how to get them.
    pub note: Option<String>,
}

/// Where a record's values come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordSource {
    /// The kernel's taskstats record at the task's exit: exact and complete.
    #[default]
    ExitRecord,
    /// The last /proc sample before the task ended: a lower bound.
    ProcSample,
}

/// A count of delays and their total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayTotal {
    pub count: u64,
    pub total_ns: u64,
}

/// Delays of a task; `None` where they were not accounted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delays {
    /// Runnable but waiting on a run queue.
    pub run_queue: Option<DelayTotal>,
    pub block_io: Option<DelayTotal>,
    pub swap_in: Option<DelayTotal>,
    /// Direct memory reclaim.
    pub reclaim: Option<DelayTotal>,
    pub thrashing: Option<DelayTotal>,
}

/// The resource usage of one task, or the sum over several.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskUsage {
    /// The scheduler's exact CPU time.
    pub cpu_ns: u64,
    /// `cpu_ns` split as the kernel's tick samples split it (as getrusage does).
    pub user_ns: u64,
    pub system_ns: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_context_switches: u64,
    pub involuntary_context_switches: u64,
    /// Bytes passed to read- and write-like calls, and those calls (/proc/PID/io rchar,
    /// wchar, syscr, syscw).
    pub read_chars: u64,
    pub write_chars: u64,
    pub read_syscalls: u64,
    pub write_syscalls: u64,
    /// Bytes fetched from and sent to storage (read_bytes, write_bytes).
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cancelled_write_bytes: u64,
    /// The process's peak resident and virtual memory (shared by its threads).
    pub peak_rss_bytes: u64,
    pub peak_vm_bytes: u64,
    pub delays: Delays,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadRecord {
    /// The thread's process.
    pub pid: u32,
    pub tid: u32,
    /// The parent process.
    pub parent: u32,
    pub comm: String,
    pub source: RecordSource,
    /// Since the program was released (the launched process itself was forked just before).
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    #[serde(flatten)]
    pub usage: TaskUsage,
    /// Share of the thread's life spent waiting for a CPU (run-queue delay / lifetime).
    pub cpu_wait_share: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub pid: u32,
    pub parent: u32,
    pub comm: String,
    pub exe: Option<String>,
    pub argv: Option<Vec<String>>,
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    pub threads: u64,
    /// Sums over the process's threads.
    #[serde(flatten)]
    pub usage: TaskUsage,
    /// Largest thread CPU time over the mean, across the threads that used any (1 = balanced).
    pub imbalance: Option<f64>,
    /// Run-queue delay of its threads over their summed lifetimes.
    pub cpu_wait_share: Option<f64>,
}

/// One field of the tree's totals against the run's rusage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RusageCheck {
    pub field: String,
    pub tasks_total: u64,
    pub rusage: u64,
    pub agrees: bool,
    /// Why they may differ, when they do.
    pub note: Option<String>,
}

/// Per-thread event counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskCounters {
    /// Event names, in the order of `counts`.
    pub events: Vec<String>,
    /// One row per thread.
    pub threads: Vec<ThreadCounts>,
    /// Events counted for the run but not split per thread, with why.
    pub not_split: Vec<NotCounted>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadCounts {
    pub pid: u32,
    pub tid: u32,
    pub counts: Vec<u64>,
}

/// System calls of the launched tree, from raw_syscalls:sys_enter/sys_exit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SyscallsReport {
    /// What `--syscalls` asked for: categories or call names (`all`).
    pub selection: Vec<String>,
    /// Why no call was traced (permissions, no tracepoints), when none was.
    pub off_reason: Option<String>,
    /// The tracepoint filter set in the kernel (ftrace syntax), when a subset was asked.
    pub filter: Option<String>,
    /// Whether tracefs was mounted nowhere and the tracepoints were read through a private,
    /// detached mount of arum's own.
    pub private_tracefs: bool,
    /// Records read, lost by the kernel (full buffers), exits without an entry.
    pub records: u64,
    pub lost: u64,
    pub orphan_exits: u64,
    /// Calls entered and never left before the end (calls cut by the end of the run).
    pub unfinished: Vec<CallCount>,
    /// Measured cost of one traced call (enter + exit records) on this machine, and the estimate
    /// of what tracing added to the program: calls × that cost.
    pub probe_cost_ns: Option<f64>,
    pub overhead_ns: Option<u64>,
    /// The part of that cost inside a call's measured interval (from its entry record to its exit
    /// record), measured the same way and taken out of every duration.
    pub probe_inside_ns: Option<f64>,
    /// Per call, sorted by total time, largest first.
    pub calls: Vec<SyscallStats>,
    /// Per category (process, network, file, memory, other), same figures summed.
    pub categories: Vec<SyscallStats>,
}

/// One system call's (or category's) figures. Durations from entry to exit, in ns.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SyscallStats {
    pub name: String,
    pub category: String,
    pub calls: u64,
    /// Calls that returned an error.
    pub errors: u64,
    /// Errors by errno name (ENOENT...), most frequent first.
    pub errnos: Vec<ErrnoCount>,
    pub total_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Bytes moved (the sum of non-negative return values), for the read/write/send/recv families.
    pub bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CallCount {
    pub name: String,
    pub count: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ErrnoCount {
    pub errno: String,
    pub count: u64,
}

/// ALMT's views of the probe records of a run. Times in ns from the first record unless named.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ViewsReport {
    pub overview: OverviewView,
    /// Tasks delimited by `--task-begin`/`--task-end` (hierarchical and percentage views).
    pub tasks: Option<TasksView>,
    /// Elapsed time per process and probe.
    pub table: Vec<TableRow>,
    /// TSC ticks per second used for the cycle column (none where the TSC is not a clock).
    pub tsc_hz: Option<f64>,
    /// Probe events not kept in memory (the journal's limit), so not in the views.
    pub dropped_events: u64,
}

/// The session on a time line.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OverviewView {
    pub duration_ns: u64,
    pub interval_ns: u64,
    /// System calls completed per interval (function probes are not counted here).
    pub rate: Vec<u64>,
    pub processes: Vec<ProcessLine>,
    /// The probes with the most time, largest first (at most 10).
    pub busiest: Vec<ProbeLine>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessLine {
    pub pid: u32,
    pub name: String,
    pub threads: u64,
    pub events: u64,
    pub first_ns: u64,
    pub last_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProbeLine {
    pub probe: String,
    pub calls: u64,
    pub total_ns: u64,
}

/// Tasks between a begin and an end probe, and the probes nested in them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TasksView {
    pub begin: String,
    pub end: String,
    /// `descriptor`: a task is the life of the descriptor the begin call returned (accept4 →
    /// close of it), nested calls are those on it; `thread`: from begin to the next end in the
    /// same thread, every call of the thread nested.
    pub keyed_by: String,
    pub tasks: u64,
    /// Tasks begun and never ended.
    pub open: u64,
    pub duration: SpanSummary,
    /// Per nested probe, aggregated over tasks; `share_pct` is the percentage view: the part of
    /// the tasks' total time in its calls made directly by the task (a call inside another
    /// nested call counts in that call's share).
    pub nested: Vec<NestedProbe>,
    /// Time of the tasks in no nested probe, as a share of their total time.
    pub unaccounted_pct: f64,
    /// The slowest tasks, slowest first (at most 5), with their nested calls.
    pub slowest: Vec<TaskLine>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SpanSummary {
    pub count: u64,
    pub total_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NestedProbe {
    pub probe: String,
    /// Tasks that called it at least once.
    pub tasks: u64,
    pub calls: u64,
    pub calls_per_task: f64,
    pub duration: SpanSummary,
    pub share_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskLine {
    pub pid: u32,
    pub tid: u32,
    pub start_ns: u64,
    pub duration_ns: u64,
    /// The descriptor, for tasks keyed by one.
    pub fd: Option<i64>,
    pub nested: Vec<NestedCall>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NestedCall {
    pub probe: String,
    /// From the task's start.
    pub offset_ns: u64,
    pub duration_ns: u64,
}

/// Elapsed time of one probe in one process.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TableRow {
    pub pid: u32,
    pub process: String,
    pub probe: String,
    pub calls: u64,
    pub elapsed_us: f64,
    /// The same in TSC cycles, where the TSC is a clock.
    pub elapsed_cycles: Option<u64>,
}
