//! The functions section of the report: function-level timing by uprobes.

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Lower, Neither};
use crate::fields::{
    each, group, identity, instant, label, measured, series, setting, Field, Unit,
};

/// The fields of [`FunctionsReport`] (see `crate::fields`). How often a function is called is
/// the program's work, not its cost: counts of calls go neither way; their time is the cost.
pub const FIELDS: &[Field] = &[
    group("probe_cost", PROBE_COST),
    group("policy", POLICY),
    each("functions", FUNCTION_TIMING),
    each("classes", CLASS_COST),
    measured("first_call_ns", Unit::Nanoseconds, Lower),
    measured("first_call_spread_ns", Unit::Nanoseconds, Lower),
    measured("unrecorded", Unit::Count, Lower),
    group("records", RECORD_STATS),
    group("perturbation", PERTURBATION),
    setting("interval_ms", Unit::Milliseconds),
    series(
        "intervals",
        &[
            instant("t_end_ns", Unit::Nanoseconds),
            measured("calls", Unit::Count, Neither),
        ],
    ),
];

/// What a probe hit costs is what the probes add to the program.
const PROBE_COST: &[Field] = &[
    measured("pair_ns", Unit::Nanoseconds, Lower),
    measured("entry_ns", Unit::Nanoseconds, Lower),
    measured("inside_ns", Unit::Nanoseconds, Lower),
    // The calibration's precision.
    measured("spread_ns", Unit::Nanoseconds, Neither),
    measured("entry_user_cycles", Unit::Count, Lower),
    measured("back_to_back_intervals", Unit::Count, Neither),
    measured("back_to_back_mean_ns", Unit::Nanoseconds, Lower),
    measured("back_to_back_sd_ns", Unit::Nanoseconds, Neither),
    measured("back_to_back_median_ns", Unit::Nanoseconds, Lower),
    setting("calibration_calls", Unit::Count),
    setting("calibration_rounds", Unit::Count),
];

/// The probe cost of a class of first instructions (the in-kernel engine's calibration).
const CLASS_COST: &[Field] = &[
    label("class"),
    measured("pair_ns", Unit::Nanoseconds, Lower),
    measured("entry_ns", Unit::Nanoseconds, Lower),
    measured("inside_ns", Unit::Nanoseconds, Lower),
    measured("spread_ns", Unit::Nanoseconds, Neither),
    // The inside part with the caches evicted, and the entry runs that tell coldness.
    measured("entry_run_warm_ns", Unit::Nanoseconds, Lower),
    measured("entry_run_cold_ns", Unit::Nanoseconds, Lower),
    measured("inside_cold_ns", Unit::Nanoseconds, Lower),
    measured("cold_slope", Unit::Ratio, Neither),
];

const POLICY: &[Field] = &[
    setting("judge_after_calls", Unit::Count),
    setting("short_factor", Unit::Ratio),
    setting("budget_percent", Unit::Percent),
    setting("window_ms", Unit::Milliseconds),
    setting("period_ms", Unit::Milliseconds),
];

const FUNCTION_TIMING: &[Field] = &[
    label("name"),
    label("symbol"),
    identity("offset"),
    measured("calls", Unit::Count, Neither),
    measured("timed_calls", Unit::Count, Neither),
    group("inclusive", DURATION_SUMMARY),
    group("exclusive", DURATION_SUMMARY),
    group(
        "throttled",
        &[
            instant("at_ns", Unit::Nanoseconds),
            measured("timed_calls", Unit::Count, Neither),
            measured("mean_ns", Unit::Nanoseconds, Lower),
            // A prediction, not what this run paid.
            measured("exact_counts_cost_ns", Unit::Nanoseconds, Neither),
        ],
    ),
    group("estimate", CALL_ESTIMATE),
    group(
        "probe",
        &[
            label("class"),
            measured("pair_ns", Unit::Nanoseconds, Lower),
            measured("entry_ns", Unit::Nanoseconds, Lower),
            measured("inside_ns", Unit::Nanoseconds, Lower),
        ],
    ),
    measured("unfinished", Unit::Count, Neither),
    measured("unwound", Unit::Count, Neither),
    measured("orphan_returns", Unit::Count, Neither),
    // Records lost are calls not timed.
    measured("lost_entries", Unit::Count, Lower),
    measured("probe_hits", Unit::Count, Lower),
    measured("overhead_ns", Unit::Nanoseconds, Lower),
    each(
        "threads",
        &[
            label("tid"),
            identity("pid"),
            measured("calls", Unit::Count, Neither),
            measured("timed_calls", Unit::Count, Neither),
            measured("inclusive_ns", Unit::Nanoseconds, Lower),
            measured("exclusive_ns", Unit::Nanoseconds, Lower),
        ],
    ),
    each(
        "processes",
        &[
            label("name"),
            label("pid"),
            measured("calls", Unit::Count, Neither),
        ],
    ),
];

const DURATION_SUMMARY: &[Field] = &[
    measured("total_ns", Unit::Nanoseconds, Lower),
    measured("mean_ns", Unit::Nanoseconds, Lower),
    measured("min_ns", Unit::Nanoseconds, Lower),
    measured("max_ns", Unit::Nanoseconds, Lower),
    measured("p50_ns", Unit::Nanoseconds, Lower),
    measured("p90_ns", Unit::Nanoseconds, Lower),
    measured("p99_ns", Unit::Nanoseconds, Lower),
];

const CALL_ESTIMATE: &[Field] = &[
    measured("counted_before", Unit::Count, Neither),
    measured("sampled", Unit::Count, Neither),
    measured("windows", Unit::Count, Neither),
    measured("calls", Unit::Count, Neither),
    measured("low", Unit::Count, Neither),
    measured("high", Unit::Count, Neither),
];

const RECORD_STATS: &[Field] = &[
    measured("records", Unit::Count, Neither),
    measured("bytes", Unit::Bytes, Neither),
    measured("lost", Unit::Count, Lower),
    setting("ring_buffers", Unit::Count),
];

const PERTURBATION: &[Field] = &[
    measured("probe_hits", Unit::Count, Lower),
    measured("overhead_ns", Unit::Nanoseconds, Lower),
    measured("program_cpu_ns", Unit::Nanoseconds, Lower),
    measured("percent_of_cpu", Unit::Percent, Lower),
];

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
    /// `bpf` (counted in the kernel) or `perf` (probe records read by arum).
    #[serde(default)]
    pub engine: Option<String>,
    /// Why the in-kernel engine was not used, when it was not.
    #[serde(default)]
    pub engine_note: Option<String>,
    /// The in-kernel engine's probe cost per class of first instruction.
    #[serde(default)]
    pub classes: Vec<ClassCostInfo>,
    /// In-kernel engine: what more a process's first timed call held (the kernel makes the page
    /// its return probes go through then), measured on fresh processes and taken out of that
    /// call, and half the range of those processes' figures.
    #[serde(default)]
    pub first_call_ns: Option<f64>,
    #[serde(default)]
    pub first_call_spread_ns: Option<f64>,
    /// Calls the in-kernel engine counted but could not time or record (a map was full).
    #[serde(default)]
    pub unrecorded: u64,
}

/// What a probe costs on functions whose first instruction is of one class, calibrated on a
/// function of arum's own that starts the same way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassCostInfo {
    /// `push`, `nop`, `branch` (emulated by the kernel), `endbr64`, `stepped` (out of line).
    pub class: String,
    pub pair_ns: f64,
    pub entry_ns: f64,
    pub inside_ns: f64,
    pub spread_ns: f64,
    /// The program's run at a call's entry, median, with the caches warm and evicted; the
    /// inside part with them evicted; and how much the inside part moves per nanosecond of a
    /// call's entry run (0: the runs were too close to tell, the inside part stays).
    #[serde(default)]
    pub entry_run_warm_ns: f64,
    #[serde(default)]
    pub entry_run_cold_ns: f64,
    #[serde(default)]
    pub inside_cold_ns: f64,
    #[serde(default)]
    pub cold_slope: f64,
}

/// The probe cost used for one function (its class's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetProbe {
    pub class: String,
    pub pair_ns: f64,
    pub entry_ns: f64,
    /// The probes' own time inside each timed interval, taken out of every duration.
    #[serde(default)]
    pub inside_ns: f64,
}

/// Whether a function's typical call, its median duration, is below what the probes resolve:
/// under the probes' own time inside each timed interval, which is taken out of every duration
/// and known no better than its calibration, what is left is more correction than measurement.
/// The median, not the mean: a few long calls (the nested calls of a recursive function, a
/// malloc that maps memory) carry a mean above it while most calls are unresolved. Longer calls
/// are timed within the calibration's accuracy however they compare with the probes' whole cost
/// (a 20 µs function within 2% under a 2.4 µs pair: benchmarks/durations.sh); that cost decides
/// only the throttling (`ThrottlePolicy::short_factor`).
pub fn below_resolution(median_ns: u64, inside_ns: f64) -> bool {
    (median_ns as f64) < inside_ns
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
    /// A function whose mean is below this many probe costs is throttled as too short for its
    /// probes: each probed call would be slowed by a tenth or more.
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
    /// The in-kernel engine removed its probe: calls after that were not counted.
    #[serde(default)]
    pub unprobed: bool,
    /// For an unprobed function: the predicted cost of counting every call (--exact-counts),
    /// and whether it is only a lower bound (the calls came as fast as the probe's hits).
    #[serde(default)]
    pub exact_counts_cost_ns: Option<u64>,
    #[serde(default)]
    pub exact_counts_cost_at_least: bool,
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
    /// The median call is below the probes' resolution ([`below_resolution`]): durations are
    /// not reliable.
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
    /// The probe cost used for this function (in-kernel engine: its class's).
    #[serde(default)]
    pub probe: Option<TargetProbe>,
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
