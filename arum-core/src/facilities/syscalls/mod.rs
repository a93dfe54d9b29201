//! `--syscalls`: the system calls of the launched tree, counted and timed through the kernel's
//! raw_syscalls tracepoints (ALMT's kernel probe points on an unmodified kernel).
//!
//! Two engines count them. In the kernel (`kernel`, BPF programs on the tracepoints, where arum
//! may load them): per call the count, errors, bytes and a histogram of durations in BPF maps,
//! complete at any rate. From perf records (`tracepoints` + `collect`, everywhere else): every
//! call's entry and exit written to per-CPU ring buffers and paired in user space; a full buffer
//! loses records, and the report says how many. The views (`--views`, `--task-begin/--task-end`)
//! need every call in order, so they always read the records; with the kernel engine, a lost
//! record then costs the views only, never the counts.
//!
//! ```text
//!  prepare   the engine (and why not the other), the cost of a traced call; for records: the
//!            tracepoints' ids (tracefs, privately if mounted nowhere)
//!  arm       kernel: the held child entered in the programs' tree map (its exec starts them);
//!            records: per CPU a sys_enter event owning a ring buffer and a sys_exit event
//!            writing into it, on the held child (inherited, enabled by exec), filtered on the
//!            call number in the kernel when a subset is asked
//!  released  —  (the reader starts at arm: records flow from the exec on)
//!  stop      the programs detached and their maps read; the last drain of the records
//!  finish    per call and per category (`section`), and the views (`views`)
//! ```
//!
//! `select` resolves categories and names, `tracepoints` opens the events, `collect` pairs enter
//! and exit per thread (records layer) and keeps the statistics and the journal of calls.

mod collect;
mod cost;
pub mod html;
mod kernel;
pub mod model;
mod section;
pub mod select;
pub mod text;
mod tracepoints;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::ArumError;
use crate::facilities::syscalls::model::SyscallsReport;
use crate::facilities::views::model::ViewsReport;
use crate::facilities::views::TaskProbes;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::perf::records::event::SharedJournal;
use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::request::ProbeEngine;
use crate::system::perms::Permissions;

use collect::{CallStats, Collector};
use cost::Cost;
use kernel::{Counted, Kernel};
use section::Counts;
pub use select::Selection;
use tracepoints::{Events, Ids};

/// What `--syscalls` and the task options asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub selection: Selection,
    pub tasks: Option<TaskProbes>,
    /// Whether the views are built (they need the records).
    pub views: bool,
    pub engine: ProbeEngine,
    /// Whether functions are timed: their return probes' trampoline calls are arum's.
    pub uretprobes: bool,
}

/// Whether this process may open tracepoints on the launched tree, and if not, why.
pub fn permission_problem(perms: &Permissions) -> Option<String> {
    // The kernel gives a tracepoint's raw record (the call number, the return value) only to
    // CAP_PERFMON or CAP_SYS_ADMIN, or everyone when perf_event_paranoid is -1
    // (perf_trace_event_perm).
    let privileged = perms.cap_sys_admin || perms.cap_perfmon;
    let paranoid = perms.perf_event_paranoid;
    (!privileged && paranoid.is_none_or(|p| p > -1)).then(|| {
        format!(
            "system call tracing needs CAP_PERFMON or CAP_SYS_ADMIN, or kernel.perf_event_paranoid = -1 (it is {}): run arum as root, {}, or `sudo sysctl kernel.perf_event_paranoid=-1`",
            paranoid.map_or("unknown".into(), |p| p.to_string()),
            crate::system::perms::GRANT
        )
    })
}

/// The in-kernel engine for `settings`, or why the records are used instead.
fn kernel_engine(
    settings: &Settings,
    perms: &Permissions,
) -> Result<(Kernel, Option<Cost>), String> {
    if settings.engine == ProbeEngine::Perf {
        return Err("--probe-engine perf was given".into());
    }
    if !perms.bpf_allowed() {
        return Err("BPF needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)".into());
    }
    let kernel = Kernel::start(&settings.selection, settings.uretprobes).map_err(|u| u.0)?;
    let cost = kernel.calibrate().ok();
    Ok((kernel, cost))
}

pub struct Syscalls<'s> {
    settings: &'s Settings,
    ids: Option<Ids>,
    cost: Option<Cost>,
    off: Option<String>,
    /// The in-kernel engine, when it counts; else why not.
    kernel: Option<Kernel>,
    not_kernel: Option<String>,
    counted: Option<Counted>,
    events: Option<Events>,
    reader: Option<Sampler<Collector>>,
    collector: Option<Collector>,
    /// The records' engine: the calls the kernel's events counted that have no record.
    unrecorded: Option<u64>,
    /// Other probes' events (function timing), added to the views.
    others: SharedJournal,
}

impl<'s> Syscalls<'s> {
    /// `others`: the journal other probing facilities add their events to by `stop`.
    pub fn new(settings: &'s Settings, others: SharedJournal) -> Self {
        Syscalls {
            others,
            settings,
            ids: None,
            cost: None,
            off: None,
            kernel: None,
            not_kernel: None,
            counted: None,
            unrecorded: None,
            events: None,
            reader: None,
            collector: None,
        }
    }

    /// Whether the records are read: for the counts (no kernel engine) or for the views.
    fn records_wanted(&self) -> bool {
        self.kernel.is_none() || self.settings.views
    }

    fn prepare_records(&mut self) {
        match tracepoints::ids() {
            Ok(ids) => {
                if self.kernel.is_none() {
                    self.cost = tracepoints::calibrate(&ids).ok();
                }
                self.ids = Some(ids);
            }
            Err(why) if self.kernel.is_none() => self.off = Some(why),
            Err(why) => self.not_kernel = Some(format!("the views are off: {why}")),
        }
    }

    /// Opens the tracepoints on the held child and starts their reader.
    fn arm_records(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        let Some(ids) = &self.ids else { return Ok(()) };
        let cpus = crate::system::cpulist::online().unwrap_or_else(|| vec![0]);
        let filter = self.settings.selection.filter();
        let mut events = match tracepoints::open(ids, run.pid.as_raw(), &cpus, filter.as_deref()) {
            Ok(e) => e,
            Err(why) => {
                run.warnings
                    .add(format!("system call records are off: {why}"));
                if self.kernel.is_none() {
                    self.off = Some(why);
                }
                return Ok(());
            }
        };
        // With the kernel engine the records serve the views: their durations stay as measured.
        let inside = match self.kernel {
            None => self.cost.map_or(0, |c| c.inside_ns as u64),
            Some(_) => 0,
        };
        let collector = Collector::new(std::mem::take(&mut events.rings), &events.ids, inside);
        self.events = Some(events);
        self.reader = Sampler::spawn(
            "arum-syscalls",
            (
                Cadence::Fixed {
                    period: Duration::from_millis(10),
                    at_start: false,
                },
                FirstTick::Thread,
                false,
            ),
            collector,
            |c, _| {
                c.tick(false);
                Duration::ZERO
            },
            |c| c,
        );
        if self.reader.is_none() {
            return Err(ArumError::Usage(
                "cannot start the system-call reader thread; check the process limits (ulimit -u)"
                    .into(),
            ));
        }
        Ok(())
    }

    fn stop_kernel(&mut self, run: &mut Stopped<'_>) {
        let Some(kernel) = self.kernel.take() else {
            return;
        };
        let inside = self.cost.map_or(0, |c| c.inside_ns as u64);
        match kernel.finish(inside) {
            Ok(c) => {
                if c.uncounted > 0 {
                    run.warnings.add(format!(
                        "{} system calls were not counted: the in-kernel statistics map was full",
                        c.uncounted
                    ));
                }
                if let Some(w) = crate::system::setid::left_at_exec(c.left_tree, "the system calls")
                {
                    run.warnings.add(w);
                }
                self.counted = Some(c);
            }
            Err(why) => {
                run.warnings
                    .add(format!("the in-kernel system call counts are lost: {why}"));
                self.off = Some(why.0);
            }
        }
    }
}

impl Facility for Syscalls<'_> {
    type Section = (SyscallsReport, Option<ViewsReport>);

    fn prepare(&mut self) -> Result<(), ArumError> {
        let perms = Permissions::current();
        match kernel_engine(self.settings, &perms) {
            Ok((kernel, cost)) => {
                self.kernel = Some(kernel);
                self.cost = cost;
            }
            Err(why) if self.settings.engine == ProbeEngine::Bpf => {
                return Err(ArumError::Engine(format!(
                    "--probe-engine bpf: the in-kernel engine cannot run here: {why}; use --probe-engine auto to fall back to perf records"
                )));
            }
            Err(why) => self.not_kernel = Some(format!("the in-kernel engine is off: {why}")),
        }
        if !self.records_wanted() {
            return Ok(());
        }
        if let Some(why) = permission_problem(&perms) {
            if self.kernel.is_none() {
                self.off = Some(why);
            } else {
                self.not_kernel = Some(format!("the views are off: {why}"));
            }
            return Ok(());
        }
        self.prepare_records();
        Ok(())
    }

    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        if let Some(why) = &self.off {
            run.warnings
                .add(format!("system call tracing is off: {why}"));
            return Ok(());
        }
        if let Some(kernel) = &self.kernel {
            if let Err(why) = kernel.follow(run.pid.as_raw() as u32) {
                run.warnings
                    .add(format!("system call tracing is off: {why}"));
                self.off = Some(why.0);
                self.kernel = None;
                return Ok(());
            }
        }
        if self.records_wanted() {
            self.arm_records(run)?;
        }
        Ok(())
    }

    fn stop(&mut self, run: &mut Stopped<'_>) {
        self.stop_kernel(run);
        let Some(reader) = self.reader.take() else {
            return;
        };
        let mut c = reader.finish();
        if let Some(c) = &mut c {
            c.tick(true);
            match self
                .counted
                .as_ref()
                .map(|k| missing_calls(&k.stats, &c.stats))
            {
                Some(0) => {}
                Some(missing) => run.warnings.add(format!(
                    "{missing} system calls have no record (a ring buffer was full; the kernel \
                     reported {} records lost): the views miss them (the counts are complete)",
                    c.lost
                )),
                // The records are the counts. A full ring's loss is reported with its next
                // record, which may never come; the events' own counts tell it regardless.
                None => {
                    let recorded = recorded_calls(c);
                    let entered = self.events.as_ref().and_then(Events::entered);
                    self.unrecorded = entered.map(|e| e.saturating_sub(recorded));
                    match entered {
                        Some(entered) if entered > recorded => run.warnings.add(format!(
                            "{} of the {entered} system calls the kernel counted have no record \
                             (a ring buffer was full; it reported {} records lost): they are not \
                             in the counts",
                            entered - recorded,
                            c.lost
                        )),
                        _ if c.lost > 0 => run.warnings.add(format!(
                            "{} system call records were lost (a ring buffer was full): those \
                             calls are not counted",
                            c.lost
                        )),
                        _ => {}
                    }
                }
            }
        }
        // Nothing more to read: the events go now, not at the end of the run's post-processing.
        self.events = None;
        self.collector = c;
    }

    fn finish(self, _reaped: &Reaped) -> (SyscallsReport, Option<ViewsReport>) {
        let mut section = SyscallsReport {
            selection: self.settings.selection.asked.clone(),
            off_reason: self.off.clone(),
            engine: engine_name(self.counted.is_some(), self.collector.is_some()),
            engine_note: self.not_kernel.clone(),
            filter: self.settings.selection.filter(),
            private_tracefs: self.ids.as_ref().is_some_and(|i| i.private_tracefs),
            probe_cost_ns: self.cost.map(|c| c.pair_ns),
            probe_inside_ns: self.cost.map(|c| c.inside_ns),
            unrecorded: self.unrecorded,
            ..SyscallsReport::default()
        };
        match (&self.counted, &self.collector) {
            (Some(k), c) => {
                section::fill(
                    &mut section,
                    Counts {
                        stats: &k.stats,
                        unfinished: &k.unfinished,
                        records: c.as_ref().map_or(0, |c| c.records),
                        lost: c.as_ref().map_or(0, |c| c.lost),
                        orphans: k.orphans,
                    },
                );
                section.uncounted = k.uncounted;
                section.unbinned = k.unbinned;
            }
            (None, Some(c)) => section::fill(&mut section, Counts::of(c)),
            (None, None) => {}
        }
        let calls: u64 = section.calls.iter().map(|s| s.calls).sum();
        section.overhead_ns = self.cost.map(|c| (c.pair_ns * calls as f64) as u64);
        let views = self.collector.filter(|_| self.settings.views).map(|mut c| {
            let others = std::mem::take(
                &mut *self
                    .others
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            c.journal.append(others);
            let mut views = crate::facilities::views::build(
                &c.journal,
                &c.names,
                self.settings.tasks.as_ref(),
                crate::facilities::views::tsc_hz(),
            );
            if let Some(k) = &self.counted {
                views.missing_calls = missing_calls(&k.stats, &c.stats);
            }
            views
        });
        (section, views)
    }
}

/// The calls the records' counts hold: the paired and the no-return ones, and the entries left
/// open at the end.
fn recorded_calls(c: &Collector) -> u64 {
    c.stats.values().map(calls).sum::<u64>() + c.unfinished.values().sum::<u64>()
}

/// A call number's calls: those timed and those counted without a duration.
fn calls(s: &CallStats) -> u64 {
    s.durations.count + s.untimed
}

/// The calls `counted` in the kernel that have no paired record in `recorded`, per call number:
/// the kernel engine misses none, so the difference is what the records lost, including losses
/// the kernel never got to report.
fn missing_calls(counted: &BTreeMap<u64, CallStats>, recorded: &BTreeMap<u64, CallStats>) -> u64 {
    counted
        .iter()
        .map(|(nr, k)| calls(k).saturating_sub(recorded.get(nr).map_or(0, calls)))
        .sum()
}

/// Which engine the counts came from.
fn engine_name(kernel: bool, records: bool) -> Option<String> {
    match (kernel, records) {
        (true, _) => Some("bpf".into()),
        (false, true) => Some("perf records".into()),
        (false, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(timed: u64, untimed: u64) -> CallStats {
        let mut s = CallStats {
            untimed,
            ..CallStats::default()
        };
        for i in 0..timed {
            s.durations.record(i);
        }
        s
    }

    #[test]
    fn the_views_miss_what_the_kernel_counted_beyond_the_records() {
        let counted = BTreeMap::from([(0, calls(10, 2)), (1, calls(5, 0)), (3, calls(4, 0))]);
        // Call 0: 3 without a record; call 1: more records than counts (the calibration's)
        // hide nothing of another call; call 3: no record at all.
        let recorded = BTreeMap::from([(0, calls(9, 0)), (1, calls(7, 0))]);
        assert_eq!(missing_calls(&counted, &recorded), 3 + 4);
        assert_eq!(missing_calls(&counted, &counted), 0);
    }
}
