//! ARUM, the Application Resource Usage Monitor: the library behind the `arum` binary.
//!
//! One run, in the order `run.rs` performs it: `cli` (what was asked) → `launch` (fork, hold,
//! release, reap) → `usage` (rusage, peak memory of the tree) → `report` (one model, several
//! renderings). `system` holds the facts about the machine; `info` is `arum info`.

pub mod ambient;
pub mod cli;
pub mod counters;
pub mod error;
pub mod events;
pub mod info;
pub mod launch;
pub mod list;
pub mod report;
pub mod run;
pub mod system;
pub mod usage;
