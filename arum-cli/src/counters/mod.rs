//! The performance-counter facility: the planned events opened on the held child through one
//! back-end (perf_event_open or /dev/arum), read during (`-I`) and after the run, and turned into
//! the report's counters section.

mod backend;
#[cfg(test)]
mod fake;
mod intervals;
pub mod kmod;
mod opening;
mod perf;
mod summary;
pub mod sys;

use std::time::Duration;

use arum_events::metrics::{RunFacts, ToolValues};
use arum_events::plan::Plan;

pub use backend::{Backend, BackendFacts, EventSetup, Opened, Snapshot};
pub use sys::Reading;

use crate::error::ArumError;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::report::model::{
    BackendKind, CountersReport, CpuCoreType, EventStatus, NotCounted, Report, Scope,
};
use intervals::IntervalSampler;
use opening::Multiplexing;
use summary::Scaling;

/// Where and how to count, decided once from the command line.
#[derive(Debug, Clone)]
pub struct Request {
    pub scope: Scope,
    pub cpus: Vec<u32>,
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

/// How a back-end is opened (tests substitute a fake).
type OpenFn = fn(&Plan, &Request, nix::unistd::Pid) -> Result<Opened, ArumError>;

/// The counters facility for one run.
pub struct Counters<'s> {
    settings: &'s Settings,
    open: OpenFn,
    opened: Option<Opened>,
    sampler: Option<IntervalSampler>,
    finals: Vec<Vec<Option<Reading>>>,
    series: Option<Vec<Snapshot>>,
}

impl<'s> Counters<'s> {
    pub fn new(settings: &'s Settings) -> Self {
        Counters {
            settings,
            open: |plan, req, pid| req.backend.open(plan, req, pid),
            opened: None,
            sampler: None,
            finals: Vec::new(),
            series: None,
        }
    }
}

impl Facility for Counters<'_> {
    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        let Settings { plan, request, .. } = self.settings;
        let mut opened = (self.open)(plan, request, run.pid)?;
        for (i, why) in opened.backend.start()? {
            opened.events[i].error = Some(why);
        }
        for e in &opened.events {
            if let Some(why) = &e.error {
                if request.strict {
                    return Err(ArumError::NotCounted {
                        event: e.planned.event.name.clone(),
                        why: why.clone(),
                    });
                }
                // The event's own line of the report says why.
                run.warnings
                    .echo(&format!("{} not counted: {why}", e.planned.event.name));
            }
        }
        self.opened = Some(opened);
        Ok(())
    }

    fn released(&mut self) {
        let (Some(opened), Some(ms)) = (&self.opened, self.settings.request.interval_ms) else {
            return;
        };
        if opened.backend.takes_own_readings() {
            return;
        }
        let names = self.settings.request.print_intervals.then(|| {
            opened
                .events
                .iter()
                .map(|e| e.planned.event.name.clone())
                .collect()
        });
        self.sampler = Some(IntervalSampler::start(
            opened.backend.clone(),
            Duration::from_millis(ms),
            names,
        ));
    }

    fn stop(&mut self, run: &mut Stopped<'_>) {
        let Some(opened) = &self.opened else { return };
        if let Err(why) = opened.backend.stop() {
            run.warnings.add(why);
        }
        self.finals = opened.backend.read();
        self.series = match self.sampler.take() {
            Some(s) => Some(s.finish(&self.finals)),
            None if self.settings.request.interval_ms.is_some() => {
                let series = opened.backend.own_readings();
                if self.settings.request.print_intervals {
                    let names: Vec<String> = opened
                        .events
                        .iter()
                        .map(|e| e.planned.event.name.clone())
                        .collect();
                    intervals::print_series(&names, &series);
                }
                Some(series)
            }
            None => None,
        };
    }

    fn finish(self: Box<Self>, reaped: &Reaped, report: &mut Report) {
        let Some(opened) = &self.opened else { return };
        report.counters = Some(section(
            self.settings,
            opened,
            &self.finals,
            self.series.as_deref(),
            reaped,
        ));
    }
}

/// The report section from the final readings and, with `-I`, the series of readings.
fn section(
    settings: &Settings,
    opened: &Opened,
    finals: &[Vec<Option<Reading>>],
    series: Option<&[Snapshot]>,
    reaped: &Reaped,
) -> CountersReport {
    let Settings {
        plan,
        facts,
        request: req,
        left_out,
    } = settings;
    let reference = opened.backend.reference();
    let facts_of = opened.backend.facts();
    let scaling = match (opened.opening.multiplexing, &reference) {
        (Multiplexing::AgainstTaskClock, Some(r)) => Scaling::Reference(r),
        (Multiplexing::EnabledVsRunning | Multiplexing::ModuleEnabledVsRunning, _) => {
            Scaling::EnabledRunning
        }
        _ => Scaling::Unscaled,
    };
    let events = summary::events(&opened.events, finals, scaling, &req.cpus);
    let ratios = summary::ratios(&events);
    let metrics = if plan.metrics.is_empty() {
        Vec::new()
    } else {
        let counts: Vec<Result<f64, String>> = events
            .iter()
            .map(|e| match e.status {
                EventStatus::Counted => Ok(e.total_scaled as f64),
                _ => Err(e.reason.clone().unwrap_or_else(|| "not counted".into())),
            })
            .collect();
        let usage = crate::usage::from_rusage(&reaped.rusage, reaped.wall);
        let tools = ToolValues {
            duration_ns: usage.wall_ns as f64,
            user_ns: usage.user_ns as f64,
            system_ns: usage.system_ns as f64,
        };
        arum_events::metrics::evaluate(&plan.metrics, &counts, &tools, facts, Some(&plan.events))
    };
    CountersReport {
        backend: req.backend,
        scope: req.scope,
        cpus: req.cpus.clone(),
        cpu_key: plan.cpu_key.clone(),
        table: plan.table.clone(),
        microarchitecture: plan.microarchitecture.clone(),
        hardware_counting: plan.hardware_off.is_none(),
        hardware_off_reason: plan.hardware_off.clone(),
        user_only: opened.user_only_reason.is_some(),
        user_only_reason: opened.user_only_reason.clone(),
        opened_as: opened.opening.describe(),
        multiplexing_detection: opened.opening.multiplexing.describe().into(),
        events,
        not_counted: left_out
            .iter()
            .map(|spec| NotCounted {
                spec: spec.clone(),
                reason: plan.hardware_off.clone().unwrap_or_default(),
            })
            .collect(),
        core_types: plan
            .core_types
            .iter()
            .flat_map(|t| &t.cpus)
            .filter(|c| req.cpus.contains(&c.cpu))
            .map(|c| CpuCoreType {
                cpu: c.cpu,
                core_type: c.unit.pmu_name().into(),
            })
            .collect(),
        metrics,
        notes: plan.notes.iter().chain(&facts_of.notes).cloned().collect(),
        start_spread_ns: facts_of.start_spread_ns,
        stop_spread_ns: facts_of.stop_spread_ns,
        ratios,
        interval_ms: series.and(req.interval_ms),
        intervals: series.map(intervals::deltas).unwrap_or_default(),
    }
}
