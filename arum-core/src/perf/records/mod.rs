//! Records written by probes into perf ring buffers, and what they become: the layer under
//! function timing (uprobes) and any other facility that probes entries and exits (syscalls,
//! ALMT probe points). Reading is separated from meaning:
//!
//! - `ring`: one memory-mapped perf ring buffer (the only unsafe code here),
//! - `parse`: the bytes of a buffer as records (samples with id, pid/tid, time, CPU, stack pointer;
//!   lost-record notices; task names, forks and exits),
//! - `source`: a set of rings (one per CPU) drained together, samples released in time order,
//! - `pairing`: entries and returns paired per thread on a stack (recursion, unwinding, threads),
//! - `stats`: durations as counts, totals and percentiles.

pub mod event;
pub mod pairing;
pub mod parse;
pub mod ring;
pub mod source;
pub mod stats;
