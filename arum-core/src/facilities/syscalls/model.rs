//! The system-calls section of the report.

use serde::{Deserialize, Serialize};

use crate::fields::Better::{Lower, Neither};
use crate::fields::{each, label, measured, Field, Unit};

/// The fields of [`SyscallsReport`] (see `crate::fields`). As for functions, how many calls the
/// program made is its work and goes neither way; their time and errors are the cost.
pub const FIELDS: &[Field] = &[
    measured("records", Unit::Count, Neither),
    measured("lost", Unit::Count, Lower),
    measured("orphan_exits", Unit::Count, Neither),
    measured("uncounted", Unit::Count, Lower),
    measured("unbinned", Unit::Count, Lower),
    measured("unrecorded", Unit::Count, Lower),
    each(
        "unfinished",
        &[label("name"), measured("count", Unit::Count, Neither)],
    ),
    // What tracing cost the program.
    measured("probe_cost_ns", Unit::Nanoseconds, Lower),
    measured("overhead_ns", Unit::Nanoseconds, Lower),
    measured("probe_inside_ns", Unit::Nanoseconds, Lower),
    each("calls", SYSCALL_STATS),
    each("categories", SYSCALL_STATS),
];

const SYSCALL_STATS: &[Field] = &[
    label("name"),
    measured("calls", Unit::Count, Neither),
    measured("errors", Unit::Count, Lower),
    each(
        "errnos",
        &[label("errno"), measured("count", Unit::Count, Lower)],
    ),
    measured("total_ns", Unit::Nanoseconds, Lower),
    measured("mean_ns", Unit::Nanoseconds, Lower),
    measured("p50_ns", Unit::Nanoseconds, Lower),
    measured("p99_ns", Unit::Nanoseconds, Lower),
    measured("max_ns", Unit::Nanoseconds, Lower),
    // Bytes moved are the work the calls did.
    measured("bytes", Unit::Bytes, Neither),
];

/// System calls of the launched tree, from raw_syscalls:sys_enter/sys_exit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SyscallsReport {
    /// What `--syscalls` asked for: categories or call names (`all`).
    pub selection: Vec<String>,
    /// Why no call was traced (permissions, no tracepoints), when none was.
    pub off_reason: Option<String>,
    /// Where the calls were counted: `bpf` (in the kernel, complete) or `perf records` (paired
    /// in user space; a full buffer loses records).
    #[serde(default)]
    pub engine: Option<String>,
    /// Why the in-kernel engine did not count, or what it could not do (the views).
    #[serde(default)]
    pub engine_note: Option<String>,
    /// The tracepoint filter set in the kernel (ftrace syntax), when a subset was asked.
    pub filter: Option<String>,
    /// Whether tracefs was mounted nowhere and the tracepoints were read through a private,
    /// detached mount of arum's own.
    pub private_tracefs: bool,
    /// Records read, lost by the kernel (full buffers), exits without an entry. With the `bpf`
    /// engine the records feed the views only (none without them).
    pub records: u64,
    pub lost: u64,
    pub orphan_exits: u64,
    /// `bpf` engine: calls not counted because a map was full, and calls counted whose
    /// duration is not in the percentiles (the histogram map was full).
    #[serde(default)]
    pub uncounted: u64,
    #[serde(default)]
    pub unbinned: u64,
    /// `perf records` engine: the calls the kernel's sys_enter events counted (each call the
    /// filter passed, recorded or not) that have no record, so are missing from the counts. A
    /// full ring's loss reaches arum only with the ring's next record, so `lost` can fall
    /// short of it. None where the events' counts could not be read (and with `bpf`, whose
    /// counts miss nothing).
    #[serde(default)]
    pub unrecorded: Option<u64>,
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
