//! The per-task section of the report: a record for every process and thread of the tree.

use serde::{Deserialize, Serialize};

use crate::facilities::counters::model::{NotCounted, NOT_COUNTED};
use crate::fields::Better::{Lower, Neither};
use crate::fields::{detail, each, group, identity, inline, instant, label, measured, Field, Unit};

/// The fields of [`TasksReport`] (see `crate::fields`).
pub const FIELDS: &[Field] = &[
    measured("sampled_tasks", Unit::Count, Neither),
    measured("samples", Unit::Count, Neither),
    each("processes", PROCESS_RECORD),
    each("threads", THREAD_RECORD),
    group("totals", TASK_USAGE),
    // The totals and the rusage again, side by side.
    each(
        "rusage_check",
        &[label("field"), detail("tasks_total"), detail("rusage")],
    ),
    group(
        "counters",
        &[
            each(
                "threads",
                &[
                    label("tid"),
                    identity("pid"),
                    measured("counts", Unit::Count, Lower),
                ],
            ),
            each("not_split", NOT_COUNTED),
        ],
    ),
];

const PROCESS_RECORD: &[Field] = &[
    label("comm"),
    identity("pid"),
    identity("parent"),
    instant("start_ns", Unit::Nanoseconds),
    instant("end_ns", Unit::Nanoseconds),
    identity("exit_code"),
    identity("exit_signal"),
    measured("threads", Unit::Count, Neither),
    inline(TASK_USAGE),
    // Largest thread CPU time over the mean: 1 is balanced.
    measured("imbalance", Unit::Ratio, Lower),
    measured("cpu_wait_share", Unit::Fraction, Lower),
];

const THREAD_RECORD: &[Field] = &[
    label("comm"),
    identity("pid"),
    identity("tid"),
    identity("parent"),
    instant("start_ns", Unit::Nanoseconds),
    instant("end_ns", Unit::Nanoseconds),
    identity("exit_code"),
    identity("exit_signal"),
    inline(TASK_USAGE),
    measured("cpu_wait_share", Unit::Fraction, Lower),
];

const TASK_USAGE: &[Field] = &[
    measured("cpu_ns", Unit::Nanoseconds, Lower),
    measured("user_ns", Unit::Nanoseconds, Lower),
    measured("system_ns", Unit::Nanoseconds, Lower),
    measured("minor_faults", Unit::Count, Lower),
    measured("major_faults", Unit::Count, Lower),
    measured("voluntary_context_switches", Unit::Count, Lower),
    measured("involuntary_context_switches", Unit::Count, Lower),
    measured("read_chars", Unit::Bytes, Lower),
    measured("write_chars", Unit::Bytes, Lower),
    measured("read_syscalls", Unit::Count, Lower),
    measured("write_syscalls", Unit::Count, Lower),
    measured("read_bytes", Unit::Bytes, Lower),
    measured("write_bytes", Unit::Bytes, Lower),
    // Written and then truncated away before reaching storage: neither saved nor spent.
    measured("cancelled_write_bytes", Unit::Bytes, Neither),
    measured("peak_rss_bytes", Unit::Bytes, Lower),
    measured("peak_vm_bytes", Unit::Bytes, Lower),
    group(
        "delays",
        &[
            group("run_queue", DELAY_TOTAL),
            group("block_io", DELAY_TOTAL),
            group("swap_in", DELAY_TOTAL),
            group("reclaim", DELAY_TOTAL),
            group("thrashing", DELAY_TOTAL),
        ],
    ),
];

const DELAY_TOTAL: &[Field] = &[
    measured("count", Unit::Count, Lower),
    measured("total_ns", Unit::Nanoseconds, Lower),
];

/// A record for every process and thread of the launched tree (`--per-task`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TasksReport {
    /// Where the records came from.
    pub method: TasksMethod,
    /// Every task of the tree has a record from the kernel at its exit.
    pub exact: bool,
    /// The CPU times are the scheduler's, summed at every switch by the in-kernel engine (to
    /// each task's last switch); else the exit records' (to the start of each exit).
    #[serde(default)]
    pub cpu_from_switches: bool,
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
