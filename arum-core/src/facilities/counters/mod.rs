//! The performance-counter facility: the planned events opened on the held child through one
//! back-end (perf_event_open or /dev/arum), read during (`-I`) and after the run, and turned into
//! the report's counters section.

mod backend;
pub mod events;
#[cfg(test)]
mod fake;
pub mod html;
mod intervals;
pub mod kmod;
pub mod model;
mod opening;
mod perf;
mod settings;
mod summary;
pub mod text;

use std::time::Duration;

use arum_events::metrics::{MetricValue, RunFacts, ToolValues};
use arum_events::plan::Plan;

pub use crate::perf::sys::Reading;
pub use backend::{Backend, BackendFacts, EventSetup, Opened, Snapshot};

use crate::error::ArumError;
use crate::facilities::counters::model::{
    BackendKind, CountersReport, CpuCoreType, EventCounts, EventStatus, NotCounted,
};
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use intervals::IntervalSampler;
use opening::Multiplexing;
pub use settings::{Request, Settings};
use summary::Scaling;

/// Up to this many CPUs, the program's counts are kept per CPU unless asked otherwise; beyond,
/// per event only, unless `--per-cpu` or `-C` asks for the breakdown. Opening costs one
/// perf_event_open per event and CPU (benchmarks/scale.sh prints the set-up at 2 to 64 CPUs), the
/// exit of each of the program's threads one counter teardown per event and CPU.
pub const PER_CPU_UP_TO: usize = 8;

/// The breakdown for counting in `scope` on `cpus`: whole CPUs are always counted per CPU; the
/// program as `asked`, else per CPU on few CPUs and as totals on many.
pub fn breakdown(
    scope: model::Scope,
    cpus: &[u32],
    asked: Option<model::Breakdown>,
) -> model::Breakdown {
    match asked {
        _ if scope == model::Scope::System => model::Breakdown::PerCpu,
        Some(b) => b,
        None if cpus.len() <= PER_CPU_UP_TO => model::Breakdown::PerCpu,
        None => model::Breakdown::Totals,
    }
}

/// How a back-end is opened (tests substitute a fake).
type OpenFn = fn(&Plan, &Request, nix::unistd::Pid) -> Result<Opened, ArumError>;

/// Opens the back-end `req` names for `plan` on the held child `pid`.
fn open_backend(plan: &Plan, req: &Request, pid: nix::unistd::Pid) -> Result<Opened, ArumError> {
    match req.backend {
        BackendKind::PerfEventOpen => perf::PerfBackend::open(plan, req, pid),
        BackendKind::Kmod => kmod::KmodBackend::open(plan, req),
    }
}

/// The counters facility for one run.
pub struct Counters<'s> {
    settings: &'s Settings,
    open: OpenFn,
    opened: Option<Opened>,
    sampler: Option<IntervalSampler>,
    finals: Vec<Vec<Option<Reading>>>,
    series: Option<Vec<Snapshot>>,
    /// The `-I` sampler's note when its CPU budget spaced the readings out.
    load_note: Option<String>,
}

impl<'s> Counters<'s> {
    pub fn new(settings: &'s Settings) -> Self {
        Counters {
            settings,
            open: open_backend,
            opened: None,
            sampler: None,
            finals: Vec::new(),
            series: None,
            load_note: None,
        }
    }
}

impl Facility for Counters<'_> {
    type Section = Option<CountersReport>;

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
            Some(s) => {
                let (series, note) = s.finish(&self.finals);
                self.load_note = note;
                Some(series)
            }
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

    fn finish(self, reaped: &Reaped) -> Option<CountersReport> {
        let opened = self.opened.as_ref()?;
        let mut report = section(
            self.settings,
            opened,
            &self.finals,
            self.series.as_deref(),
            reaped,
        );
        report.notes.extend(self.load_note);
        Some(report)
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
    let per_cpu = (req.breakdown == model::Breakdown::PerCpu).then_some(req.cpus.as_slice());
    let events = summary::events(&opened.events, finals, scaling, per_cpu);
    let ratios = summary::ratios(&events);
    let metrics = if plan.metrics.is_empty() {
        Vec::new()
    } else {
        metrics(plan, facts, &events, reaped)
    };
    CountersReport {
        backend: req.backend,
        scope: req.scope,
        cpus: req.cpus.clone(),
        breakdown: req.breakdown,
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
        core_types: core_types(plan, &req.cpus),
        metrics,
        notes: plan.notes.iter().chain(&facts_of.notes).cloned().collect(),
        start_spread_ns: facts_of.start_spread_ns,
        stop_spread_ns: facts_of.stop_spread_ns,
        ratios,
        interval_ms: series.and(req.interval_ms),
        intervals: series.map(intervals::deltas).unwrap_or_default(),
    }
}

/// The plan's derived metrics from the events' totals and the run's times.
fn metrics(
    plan: &Plan,
    facts: &RunFacts,
    events: &[EventCounts],
    reaped: &Reaped,
) -> Vec<MetricValue> {
    let counts: Vec<Result<f64, String>> = events
        .iter()
        .map(|e| match e.status {
            EventStatus::Counted => Ok(e.total_scaled as f64),
            _ => Err(e.reason.clone().unwrap_or_else(|| "not counted".into())),
        })
        .collect();
    let usage = crate::facilities::usage::from_rusage(&reaped.rusage, reaped.wall);
    let tools = ToolValues {
        duration_ns: usage.wall_ns as f64,
        user_ns: usage.user_ns as f64,
        system_ns: usage.system_ns as f64,
    };
    arum_events::metrics::evaluate(&plan.metrics, &counts, &tools, facts, Some(&plan.events))
}

/// The core type of each counted CPU, on a hybrid part.
fn core_types(plan: &Plan, cpus: &[u32]) -> Vec<CpuCoreType> {
    plan.core_types
        .iter()
        .flat_map(|t| &t.cpus)
        .filter(|c| cpus.contains(&c.cpu))
        .map(|c| CpuCoreType {
            cpu: c.cpu,
            core_type: c.unit.pmu_name().into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::breakdown;
    use super::model::{Breakdown, Scope};

    // Every CPU count from 1 to 300: whole CPUs always per CPU; the program per CPU up to 8 CPUs,
    // as totals beyond, and as asked whatever the count.
    #[test]
    fn the_breakdown_by_scope_cpus_and_request() {
        for n in 1..=300u32 {
            let cpus: Vec<u32> = (0..n).collect();
            let auto = if n <= 8 {
                Breakdown::PerCpu
            } else {
                Breakdown::Totals
            };
            assert_eq!(breakdown(Scope::App, &cpus, None), auto, "{n} CPUs");
            for asked in [Breakdown::PerCpu, Breakdown::Totals] {
                assert_eq!(breakdown(Scope::App, &cpus, Some(asked)), asked);
                assert_eq!(
                    breakdown(Scope::System, &cpus, Some(asked)),
                    Breakdown::PerCpu
                );
            }
            assert_eq!(breakdown(Scope::System, &cpus, None), Breakdown::PerCpu);
        }
    }
}
