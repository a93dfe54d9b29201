//! ARUM's in-kernel aggregation engine. Programs written in C (`bpf/`), compiled by clang at
//! build time and embedded, count and time what the launched tree does inside the kernel, into
//! BPF maps that user space reads once at the end: no record passes through a buffer that can
//! fill, so nothing is lost at any rate of events.
//!
//! ```text
//!  load     the embedded object, its read-only configuration set, verified by the kernel
//!  follow   the held child entered in the object's `tree` map; its exec starts the counting,
//!           every process it forks joins (programs on sched_process_fork/exec)
//!  stop     the programs detached (the tree has been reaped)
//!  read     the maps summed over CPUs into plain totals
//! ```
//!
//! Loading needs CAP_BPF and CAP_PERFMON (or root), BTF in the kernel, and the program types
//! used; when any is missing, [`Unavailable`] says which, and the caller falls back to the
//! perf_event_open path.

#![forbid(unsafe_code)]

pub mod functions;
pub mod hist;
mod load;
mod percpu;
pub mod runtime;
pub mod syscalls;

pub use load::Unavailable;

/// Whether the engine runs here (for `arum info`): each of its objects loaded and attached for
/// a moment, as a run would. The kernel's verifier judges each program on its own, and a kernel
/// may take one object and refuse another (one built without networking rejects the function
/// and system-call programs, not the run-time one), so none stands for the others.
pub fn probe() -> Result<(), Unavailable> {
    runtime::RuntimeCounter::start()?;
    functions::FunctionCounter::start(&[])?;
    syscalls::SyscallCounter::start(&syscalls::Config::default())?;
    Ok(())
}
