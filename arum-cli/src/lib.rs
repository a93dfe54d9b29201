//! ARUM, the Application Resource Usage Monitor: the library behind the `arum` binary.
//!
//! One run, in the order `run.rs` performs it: `cli` (what was asked) → `settings` (the domain
//! view of it, decided once) → `measure::measure_once` (the launch in `launch`, with every
//! facility around it) → `report` (one model, several renderings).
//!
//! A facility implements the run lifecycle of `facility` (prepare, arm, released, stop, finish)
//! and adds its section to the report model; `measure::facilities` lists them:
//! - `usage`: rusage and the tree's peak memory,
//! - `counters`: performance-counter events (perf_event_open or /dev/arum),
//! - `ambient`: what the rest of the machine did,
//! - `functions`: function-level timing by uprobes, with self-throttling,
//! - `tasks`: a record for every process and thread of the tree (`--per-task`),
//! - `syscalls`: system calls of the tree through the kernel's tracepoints (`--syscalls`), with
//!   `views` (ALMT's overview, tasks, shares and table of the probe events).
//!
//! Shared by the facilities: `tree` (which processes are the launched tree), `periodic` (the
//! sampler threads), `warnings`, `records` (probe records from perf ring buffers, paired per
//! thread). `system` holds facts about the machine; `events` plans the events of the command line; `info` and `list` are `arum info` and `arum list`. The report model
//! (`report::model`) imports no facility.
//!
//! Around single runs: `bench` (repeated runs, parameters, several commands interleaved) with
//! `metrics` (every number of a report, by name), `samples`, `export` (JSON, CSV, Markdown);
//! `compare` (`arum compare`, Welch's t-test, CI gates); `merge` (`arum merge`, a parallel job's
//! ranks); `placement` (rank and job from the launcher, `-o run-%r.json`); `completions` (shell
//! completions and the man page); `version` (with the commit).

pub mod ambient;
pub mod bench;
pub mod cli;
pub mod compare;
pub mod completions;
pub mod counters;
pub mod error;
pub mod events;
pub mod export;
pub mod facility;
pub mod functions;
pub mod info;
pub mod launch;
pub mod list;
pub mod measure;
pub mod merge;
pub mod metrics;
pub mod noise;
pub mod periodic;
pub mod placement;
pub mod records;
pub mod report;
pub mod run;
pub mod samples;
pub mod settings;
pub mod stdio;
pub mod suite;
pub mod syscalls;
pub mod system;
pub mod tasks;
pub mod tree;
pub mod usage;
pub mod values;
pub mod version;
pub mod views;
pub mod warnings;
