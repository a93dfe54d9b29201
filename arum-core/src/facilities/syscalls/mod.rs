//! `--syscalls`: the system calls of the launched tree, counted and timed through the kernel's
//! raw_syscalls tracepoints (ALMT's kernel probe points on an unmodified kernel).
//!
//! ```text
//!  prepare   the tracepoints' ids (tracefs, privately if mounted nowhere), the cost of a traced call
//!  arm       per CPU a sys_enter event owning a ring buffer and a sys_exit event writing into it,
//!            on the held child (inherited, enabled by exec), filtered on the call number in the
//!            kernel when a subset is asked, so unwanted calls write no record
//!  released  —  (the reader starts at arm: records flow from the exec on)
//!  stop      the last drain after the reap
//!  finish    per call and per category (`section`), and the views (`views`)
//! ```
//!
//! `select` resolves categories and names, `tracepoints` opens the events, `collect` pairs enter
//! and exit per thread (records layer) and keeps the statistics and the journal of calls.

mod collect;
pub mod html;
pub mod model;
mod section;
pub mod select;
pub mod text;
mod tracepoints;

use std::time::Duration;

use crate::error::ArumError;
use crate::facilities::syscalls::model::SyscallsReport;
use crate::facilities::views::model::ViewsReport;
use crate::facilities::views::TaskProbes;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::perf::records::event::SharedJournal;
use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::system::perms::Permissions;

use collect::Collector;
pub use select::Selection;
use tracepoints::{Events, Ids};

/// What `--syscalls` and the task options asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub selection: Selection,
    pub tasks: Option<TaskProbes>,
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
            "system call tracing needs CAP_PERFMON or CAP_SYS_ADMIN, or kernel.perf_event_paranoid = -1 (it is {}): run arum as root, `sudo setcap cap_perfmon+ep $(command -v arum)`, or `sudo sysctl kernel.perf_event_paranoid=-1`",
            paranoid.map_or("unknown".into(), |p| p.to_string())
        )
    })
}

pub struct Syscalls<'s> {
    settings: &'s Settings,
    ids: Option<Ids>,
    cost: Option<tracepoints::Cost>,
    off: Option<String>,
    events: Option<Events>,
    reader: Option<Sampler<Collector>>,
    collector: Option<Collector>,
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
            events: None,
            reader: None,
            collector: None,
        }
    }
}

impl Facility for Syscalls<'_> {
    type Section = (SyscallsReport, Option<ViewsReport>);

    fn prepare(&mut self) -> Result<(), ArumError> {
        if let Some(why) = permission_problem(&Permissions::current()) {
            self.off = Some(why);
            return Ok(());
        }
        match tracepoints::ids() {
            Ok(ids) => {
                self.cost = tracepoints::calibrate(&ids).ok();
                self.ids = Some(ids);
            }
            Err(why) => self.off = Some(why),
        }
        Ok(())
    }

    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        if let Some(why) = &self.off {
            run.warnings
                .add(format!("system call tracing is off: {why}"));
            return Ok(());
        }
        let Some(ids) = &self.ids else { return Ok(()) };
        let cpus = crate::system::cpulist::online().unwrap_or_else(|| vec![0]);
        let filter = self.settings.selection.filter();
        let mut events = match tracepoints::open(ids, run.pid.as_raw(), &cpus, filter.as_deref()) {
            Ok(e) => e,
            Err(why) => {
                run.warnings
                    .add(format!("system call tracing is off: {why}"));
                self.off = Some(why);
                return Ok(());
            }
        };
        let inside = self.cost.map_or(0, |c| c.inside_ns as u64);
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

    fn stop(&mut self, run: &mut Stopped<'_>) {
        let Some(reader) = self.reader.take() else {
            return;
        };
        let mut c = reader.finish();
        if let Some(c) = &mut c {
            c.tick(true);
            if c.lost > 0 {
                run.warnings.add(format!(
                    "{} system call records were lost (a ring buffer was full): those calls are not counted",
                    c.lost
                ));
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
            filter: self.settings.selection.filter(),
            private_tracefs: self.ids.as_ref().is_some_and(|i| i.private_tracefs),
            probe_cost_ns: self.cost.map(|c| c.pair_ns),
            probe_inside_ns: self.cost.map(|c| c.inside_ns),
            ..SyscallsReport::default()
        };
        let mut views = None;
        if let Some(mut c) = self.collector {
            section::fill(&mut section, &c);
            let calls: u64 = section.calls.iter().map(|s| s.calls).sum();
            section.overhead_ns = self.cost.map(|c| (c.pair_ns * calls as f64) as u64);
            let others = std::mem::take(
                &mut *self
                    .others
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            c.journal.append(others);
            views = Some(crate::facilities::views::build(
                &c.journal,
                &c.names,
                self.settings.tasks.as_ref(),
                crate::facilities::views::tsc_hz(),
            ));
        }
        (section, views)
    }
}
