//! The counting back-end: one trait that perf_event_open and the /dev/arum module implement, the
//! choice between them (made once), and what opening them produced.
//!
//! Lifecycle of an open back-end: `start` (counting begins, just before the program is released)
//! → `read` any number of times while it runs (unless it `takes_own_readings`) → `stop` (after
//! the program ended) → `read` for the final values.

use std::sync::Arc;

use arum_events::plan::{Plan, PlannedEvent};
use arum_events::resolve::PmuTarget;

use super::opening::Opening;
use crate::error::ArumError;
use crate::perf::sys::Reading;

/// Cumulative values `[event][cpu]` at `t_ns` since counting started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub t_ns: u64,
    pub values: Vec<Vec<u64>>,
}

pub trait Backend: Send + Sync {
    /// Counting begins. Returns the events (by index) that could not be started, and why.
    fn start(&self) -> Result<Vec<(usize, String)>, ArumError>;
    /// Cumulative readings `[event][cpu]`; `None` where an event is not counted.
    fn read(&self) -> Vec<Vec<Option<Reading>>>;
    /// Counting ends. An error here is reported as a warning (the values may be missing).
    fn stop(&self) -> Result<(), String>;
    /// Per CPU, how long the launched tree ran there (app scope), to tell multiplexing apart
    /// from the task simply running elsewhere. `None` in system scope.
    fn reference(&self) -> Option<Vec<Reading>>;
    /// The back-end reads itself at the `-I` interval (the module's timer): no sampler thread.
    fn takes_own_readings(&self) -> bool {
        false
    }
    /// Those readings, after `stop`.
    fn own_readings(&self) -> Vec<Snapshot> {
        Vec::new()
    }
    /// What the back-end knows about how counting went, after `stop`.
    fn facts(&self) -> BackendFacts {
        BackendFacts::default()
    }
}

/// How counting went, as a back-end knows it (the module measures these; perf_event_open
/// does not say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendFacts {
    /// How far apart the CPUs started counting, and stopped.
    pub start_spread_ns: Option<u64>,
    pub stop_spread_ns: Option<u64>,
    /// Things the report should say about the counts (a CPU that went offline, a late read).
    pub notes: Vec<String>,
}

/// Per-event outcome of opening: counted, or why not.
#[derive(Debug, Clone)]
pub struct EventSetup {
    pub planned: PlannedEvent,
    /// The perf_event_attr of the main target (the one the report names).
    pub perf_type: u32,
    pub config: u64,
    pub config1: u64,
    pub error: Option<String>,
}

impl EventSetup {
    /// One setup per planned event.
    pub fn from_plan(plan: &Plan) -> Vec<EventSetup> {
        plan.events
            .iter()
            .map(|p| {
                let (perf_type, config, config1) = p
                    .event
                    .targets
                    .first()
                    .map_or((0, 0, 0), |t| (t.perf_type, t.config, t.config1));
                EventSetup {
                    planned: p.clone(),
                    perf_type,
                    config,
                    config1,
                    error: None,
                }
            })
            .collect()
    }

    /// What to open on `cpu`: the target (PMU, type, config) that counts this event there. On a
    /// hybrid part an event of one core type has none on the other type's CPUs.
    pub fn target_for(&self, cpu: u32) -> Option<&PmuTarget> {
        self.planned
            .event
            .targets
            .iter()
            .find(|t| t.cpus.as_ref().is_none_or(|c| c.contains(&cpu)))
    }
}

/// An open back-end and what opening it produced.
pub struct Opened {
    pub backend: Arc<dyn Backend>,
    pub events: Vec<EventSetup>,
    /// Kernel-mode counting was refused, so only user space is counted.
    pub user_only_reason: Option<String>,
    pub opening: Opening,
}
