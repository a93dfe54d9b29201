//! What the counters facility needs, decided once before anything runs and shared by every run
//! of a series.

use arum_events::metrics::RunFacts;
use arum_events::plan::Plan;

use super::model::{BackendKind, Breakdown, Scope};

/// Where and how to count, decided once from the command line.
#[derive(Debug, Clone)]
pub struct Request {
    pub scope: Scope,
    pub cpus: Vec<u32>,
    /// Counts per CPU of `cpus`, or per event for the whole program.
    pub breakdown: Breakdown,
    pub no_multiplex: bool,
    pub strict: bool,
    pub backend: BackendKind,
    /// `-I`: the reading interval.
    pub interval_ms: Option<u64>,
    /// Print each `-I` reading on stderr as it is taken.
    pub print_intervals: bool,
}

/// Everything the facility needs, shared by every run of a series.
#[derive(Debug, Clone)]
pub struct Settings {
    pub plan: Plan,
    /// What the metrics' expressions read about the machine (SMT, CPUs, the TSC's rate).
    pub facts: RunFacts,
    pub request: Request,
    /// Events asked for but left out of the plan (hardware counting is off), as given.
    pub left_out: Vec<String>,
}
