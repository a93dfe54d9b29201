//! The views section of the report: ALMT's views of the probe records.

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Lower, Neither};
use crate::fields::{
    each, group, identity, instant, label, measured, samples, setting, Field, Unit,
};
use crate::perf::records::stats::Durations;

/// The fields of [`ViewsReport`] (see `crate::fields`). Counts of calls and tasks are the
/// program's work and go neither way; their time is the cost.
pub const FIELDS: &[Field] = &[
    group("overview", OVERVIEW),
    group("tasks", TASKS_VIEW),
    each("table", TABLE_ROW),
    setting("tsc_hz", Unit::PerSecond),
    // Events not in the views: what the views miss.
    measured("dropped_events", Unit::Count, Lower),
    measured("missing_calls", Unit::Count, Lower),
];

const OVERVIEW: &[Field] = &[
    // The session from its first record to its last: the run as the probes saw it.
    measured("duration_ns", Unit::Nanoseconds, Neither),
    setting("interval_ns", Unit::Nanoseconds),
    samples("rate", Unit::Count),
    each(
        "processes",
        &[
            label("name"),
            identity("pid"),
            measured("threads", Unit::Count, Neither),
            measured("events", Unit::Count, Neither),
            instant("first_ns", Unit::Nanoseconds),
            instant("last_ns", Unit::Nanoseconds),
        ],
    ),
    each(
        "busiest",
        &[
            label("probe"),
            measured("calls", Unit::Count, Neither),
            measured("total_ns", Unit::Nanoseconds, Lower),
        ],
    ),
];

const TASKS_VIEW: &[Field] = &[
    measured("tasks", Unit::Count, Neither),
    measured("open", Unit::Count, Neither),
    group("duration", SPAN_SUMMARY),
    each(
        "nested",
        &[
            label("probe"),
            measured("tasks", Unit::Count, Neither),
            measured("calls", Unit::Count, Neither),
            measured("calls_per_task", Unit::Ratio, Neither),
            group("duration", SPAN_SUMMARY),
            measured("share_pct", Unit::Percent, Neither),
        ],
    ),
    measured("unaccounted_pct", Unit::Percent, Neither),
    // Named by rank, slowest first: the slowest task of one run against that of another.
    each(
        "slowest",
        &[
            identity("tid"),
            identity("pid"),
            instant("start_ns", Unit::Nanoseconds),
            measured("duration_ns", Unit::Nanoseconds, Lower),
            identity("fd"),
            each(
                "nested",
                &[
                    label("probe"),
                    instant("offset_ns", Unit::Nanoseconds),
                    measured("duration_ns", Unit::Nanoseconds, Lower),
                ],
            ),
        ],
    ),
];

const SPAN_SUMMARY: &[Field] = &[
    measured("count", Unit::Count, Neither),
    measured("total_ns", Unit::Nanoseconds, Lower),
    measured("mean_ns", Unit::Nanoseconds, Lower),
    measured("p50_ns", Unit::Nanoseconds, Lower),
    measured("p99_ns", Unit::Nanoseconds, Lower),
    measured("max_ns", Unit::Nanoseconds, Lower),
];

/// A row per probe and process: named by the probe, which is the same in every run.
const TABLE_ROW: &[Field] = &[
    label("probe"),
    identity("pid"),
    measured("calls", Unit::Count, Neither),
    measured("elapsed_us", Unit::Microseconds, Lower),
    measured("elapsed_cycles", Unit::Count, Lower),
];

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
    /// System calls the in-kernel engine counted that have no record in the views: their
    /// records were lost to a full ring buffer, whether or not the kernel could say so (it
    /// reports a loss only with the buffer's next record, which may never come).
    #[serde(default)]
    pub missing_calls: u64,
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

impl SpanSummary {
    /// The summary of a set of durations.
    pub fn of(d: &Durations) -> SpanSummary {
        SpanSummary {
            count: d.count,
            total_ns: d.total_ns,
            mean_ns: d.mean_ns(),
            p50_ns: d.quantile_ns(0.5),
            p99_ns: d.quantile_ns(0.99),
            max_ns: d.max_ns,
        }
    }
}
