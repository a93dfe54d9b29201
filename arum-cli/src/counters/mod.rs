//! Performance-counter events: one small trait that counting back-ends implement, arming them
//! while the child waits, reading them during (`-I`) and after the run, and the report section.

mod intervals;
pub mod kmod;
mod perf;
mod summary;
pub mod sys;

use std::sync::Arc;

use arum_events::plan::{Plan, PlannedEvent};
use nix::unistd::Pid;

pub use intervals::IntervalSampler;
pub use perf::PerfBackend;
pub use sys::Reading;

use crate::cli::Scope;
use crate::error::ArumError;
use crate::report::model::CountersReport;

/// A counting back-end, armed for one run.
pub trait Backend: Send + Sync {
    /// Cumulative readings: `[event][cpu]`, `None` where the event is not counted.
    fn read_all(&self) -> Vec<Vec<Option<Reading>>>;
    /// Per CPU, how long the launched tree ran there (app scope), to tell multiplexing apart
    /// from the task simply running elsewhere. `None` in system scope.
    fn reference(&self) -> Option<Vec<Reading>>;
    /// Called just before the program is released.
    fn start(&self) -> Result<(), ArumError>;
    /// Called once the program has ended.
    fn stop(&self);
    /// Readings the back-end took itself during the run (the module's timer), as intervals.
    fn intervals(&self) -> Option<Vec<crate::report::model::Interval>> {
        None
    }
}

/// What was asked for, and where.
#[derive(Debug, Clone)]
pub struct Request {
    pub scope: Scope,
    pub cpus: Vec<u32>,
    pub no_multiplex: bool,
    pub strict: bool,
    /// Count through /dev/arum (whole CPUs) instead of perf_event_open.
    pub kmod: bool,
    /// `-I`: the reading interval.
    pub interval_ms: Option<u64>,
}

/// Per-event outcome of arming: counted, or why not.
#[derive(Debug, Clone)]
pub struct EventSetup {
    pub planned: PlannedEvent,
    pub perf_type: u32,
    pub config: u64,
    pub config1: u64,
    pub error: Option<String>,
}

impl EventSetup {
    /// One setup per planned event, with its perf_event_attr type and config.
    pub fn from_plan(plan: &Plan) -> Vec<EventSetup> {
        use arum_events::resolve::{EventKind, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
        plan.events
            .iter()
            .map(|p| {
                let (perf_type, config, config1) = match &p.event.kind {
                    EventKind::Software { config } => (PERF_TYPE_SOFTWARE, *config, 0),
                    EventKind::Hardware(h) => (PERF_TYPE_RAW, h.config, h.config1),
                };
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
}

/// An armed back-end and what it set up.
pub struct Armed {
    pub backend: Arc<dyn Backend>,
    pub name: &'static str,
    pub events: Vec<EventSetup>,
    pub user_only_reason: Option<String>,
    pub opened_as: String,
    pub multiplexing_detection: String,
}

/// Arms the chosen back-end for the held child `pid`.
pub fn arm(plan: &Plan, req: &Request, pid: Pid) -> Result<Armed, ArumError> {
    let armed = if req.kmod {
        kmod::KmodBackend::arm(plan, req)?
    } else {
        PerfBackend::arm(plan, req, pid)?
    };
    if req.strict {
        if let Some(e) = armed.events.iter().find(|e| e.error.is_some()) {
            return Err(ArumError::Events(format!(
                "cannot count {}: {} (--strict)",
                e.planned.event.name,
                e.error.as_deref().unwrap_or_default()
            )));
        }
    }
    Ok(armed)
}

/// Builds the report section from the final readings.
pub fn report(
    armed: &Armed,
    plan: &Plan,
    req: &Request,
    finals: &[Vec<Option<Reading>>],
    intervals: Option<(u64, Vec<crate::report::model::Interval>)>,
) -> CountersReport {
    let reference = armed.backend.reference();
    let events = summary::events(&armed.events, finals, reference.as_deref(), &req.cpus);
    let ratios = summary::ratios(&events);
    let (interval_ms, intervals) = match intervals {
        Some((ms, list)) => (Some(ms), list),
        None => (None, Vec::new()),
    };
    CountersReport {
        backend: armed.name.into(),
        scope: match req.scope {
            Scope::App => "app",
            Scope::System => "system",
        }
        .into(),
        cpus: req.cpus.clone(),
        cpu_key: plan.cpu_key.clone(),
        table: plan.table.clone(),
        microarchitecture: plan.microarchitecture.clone(),
        hardware_counting: plan.hardware_off.is_none(),
        hardware_off_reason: plan.hardware_off.clone(),
        user_only: armed.user_only_reason.is_some(),
        user_only_reason: armed.user_only_reason.clone(),
        opened_as: armed.opened_as.clone(),
        multiplexing_detection: armed.multiplexing_detection.clone(),
        events,
        ratios,
        interval_ms,
        intervals,
    }
}
