//! The counters section of the report: every event with its per-CPU counts, metrics and ratios.

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Higher, Lower, Neither};
use crate::fields::{
    detail, each, identity, instant, label, measured, series, setting, when, Field, Unit,
};
pub use crate::request::Scope;

/// The fields of [`CountersReport`] (see `crate::fields`).
pub const FIELDS: &[Field] = &[
    identity("cpus"),
    each("events", EVENT_COUNTS),
    each("not_counted", NOT_COUNTED),
    each("core_types", &[label("cpu")]),
    each("metrics", METRIC_VALUE),
    // How far apart the module's CPUs started and stopped: the precision of the counts.
    measured("start_spread_ns", Unit::Nanoseconds, Neither),
    measured("stop_spread_ns", Unit::Nanoseconds, Neither),
    each("ratios", RATIO),
    setting("interval_ms", Unit::Milliseconds),
    series(
        "intervals",
        &[
            instant("t_end_ns", Unit::Nanoseconds),
            measured("counts", Unit::Count, Lower),
        ],
    ),
];

/// An event's counts are occurrences, except the software clocks', which are nanoseconds.
const EVENT_COUNTS: &[Field] = &[
    label("spec"),
    label("name"),
    when("task-clock", CLOCK_COUNTS),
    when("cpu-clock", CLOCK_COUNTS),
    identity("perf_type"),
    identity("counter"),
    each("per_cpu", CPU_COUNT),
    measured("total_raw", Unit::Count, Lower),
    measured("total_scaled", Unit::Count, Lower),
    // How long the event could count and did: the coverage of the counts, not the program.
    measured("time_enabled_ns", Unit::Nanoseconds, Neither),
    measured("time_running_ns", Unit::Nanoseconds, Neither),
    measured("percent_running", Unit::Percent, Neither),
];

const CLOCK_COUNTS: &[Field] = &[
    each("per_cpu", CLOCK_CPU_COUNT),
    measured("total_raw", Unit::Nanoseconds, Lower),
    measured("total_scaled", Unit::Nanoseconds, Lower),
];

const CPU_COUNT: &[Field] = &[
    label("cpu"),
    measured("raw", Unit::Count, Lower),
    measured("scaled", Unit::Count, Lower),
    measured("time_enabled_ns", Unit::Nanoseconds, Neither),
    measured("time_running_ns", Unit::Nanoseconds, Neither),
    measured("percent_running", Unit::Percent, Neither),
];

const CLOCK_CPU_COUNT: &[Field] = &[
    measured("raw", Unit::Nanoseconds, Lower),
    measured("scaled", Unit::Nanoseconds, Lower),
    crate::fields::inline(CPU_COUNT),
];

/// Also the per-task section's events not split per thread.
pub const NOT_COUNTED: &[Field] = &[label("spec")];

/// `arum_events::metrics::MetricValue`: a derived metric of the event tables, in the unit its
/// `unit_label` names; the tables say nothing of which way is better.
const METRIC_VALUE: &[Field] = &[
    label("name"),
    measured("value", Unit::Ratio, Neither),
    measured("raw", Unit::Ratio, Neither),
    detail("inputs"),
];

/// One `when` per ratio of `summary::RATIOS` (a test there checks that each has one).
const RATIO: &[Field] = &[
    label("name"),
    when("data cache miss rate", MISS_RATE),
    when("instructions per cycle (IPC)", PER_CYCLE),
    when("branch miss rate", MISS_RATE),
    when("last-level cache miss rate", MISS_RATE),
    when("DTLB miss rate, L1 miss / L2 hit", MISS_RATE),
    when("DTLB miss rate, both levels", MISS_RATE),
];

const MISS_RATE: &[Field] = &[measured("value", Unit::Fraction, Lower)];

const PER_CYCLE: &[Field] = &[measured("value", Unit::Ratio, Higher)];

/// Performance-counter events of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountersReport {
    pub backend: BackendKind,
    pub scope: Scope,
    /// The CPUs counted on; with the `totals` breakdown, the CPUs the program could run on.
    pub cpus: Vec<u32>,
    /// Counts per CPU (`per_cpu` of each event) or only per event (an older report: per CPU).
    #[serde(default)]
    pub breakdown: Breakdown,
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
    /// `-I`: readings during the run; `counts[e][c]` is event e on `cpus[c]` in that interval
    /// (with the `totals` breakdown, `counts[e]` holds one value: the whole program's).
    pub interval_ms: Option<u64>,
    pub intervals: Vec<Interval>,
}

/// How finely the counts are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Breakdown {
    /// One counter per event and CPU: every event's count on each CPU.
    #[default]
    PerCpu,
    /// One counter per event, inherited by the whole program wherever it runs (as perf stat):
    /// totals only, at a set-up cost that does not grow with the CPU count.
    Totals,
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

impl EventCounts {
    /// The software clocks count nanoseconds of CPU time, not occurrences.
    pub fn is_clock(&self) -> bool {
        matches!(self.name.as_str(), "task-clock" | "cpu-clock")
    }

    /// One of its counts for people, as the event measures: a time for the software clocks,
    /// occurrences grouped by thousands otherwise.
    pub fn format_count(&self, value: u64) -> String {
        if self.is_clock() {
            Unit::Nanoseconds.format(value as f64)
        } else {
            arum_units::quantity::grouped(value)
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::counters::summary::RATIOS;
    use crate::fields::{find, Is};

    #[test]
    fn every_ratio_has_a_unit_and_a_direction() {
        for (name, _, _) in RATIOS {
            assert!(
                matches!(find(RATIO, "value", Some(name)), Some(Is::Measured(..))),
                "{name} has no `when` row in RATIO"
            );
        }
    }
}
