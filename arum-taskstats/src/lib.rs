//! The kernel's own accounting of every task, as a measuring tool needs it: exact at exit, however
//! short a task lived.
//!
//! Two netlink interfaces, each read from a socket the caller polls:
//! - [`ExitListener`]: taskstats (generic netlink family `TASKSTATS`). Registered for a set of
//!   CPUs, it receives one record for every task that exits on them: CPU times, faults, context
//!   switches, I/O, peak memory, delays ([`TaskStats`]).
//! - [`ProcEvents`]: the proc connector. Every fork, exec and exit on the machine, each stamped
//!   with the kernel's CLOCK_MONOTONIC, with the parent of every new task ([`ProcEvent`]).
//!
//! Both need CAP_NET_ADMIN in the initial namespaces on most kernels (registering for exit
//! records always does). Neither filters by process: the caller keeps what belongs to the tree it
//! watches. A socket that overflowed (the reader fell behind) reports [`Received::overflowed`],
//! so the caller knows records are missing.
//!
//! Messages are framed and their attributes walked by `netlink-packet-core`; the sockets are
//! `netlink-sys`'s. The taskstats record itself is a versioned C structure read field by field
//! at the offsets of the kernel's `linux/taskstats.h` (see [`stats`]).

#![forbid(unsafe_code)]

mod connector;
mod exits;
mod genl;
mod socket;
pub mod stats;

pub use connector::{ProcEvent, ProcEvents};
pub use exits::{ExitListener, ExitRecord};
pub use socket::Received;
pub use stats::TaskStats;
