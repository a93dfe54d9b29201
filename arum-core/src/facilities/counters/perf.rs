//! Counting through perf_event_open: one counter per event per CPU, bound to the launched task
//! (inherited by all its threads and children, enabled at exec) or, in system scope, to the CPU;
//! or, for totals only, one counter per event bound to the task on every CPU (as perf stat).

use std::os::fd::{AsFd, OwnedFd};

use arum_events::plan::Plan;
use arum_events::resolve::{PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
use nix::errno::Errno;
use nix::unistd::Pid;

use super::backend::{Backend, EventSetup, Opened};
use super::opening::{Grouping, Multiplexing, Opening};
use super::settings::Request;
use crate::error::ArumError;
use crate::facilities::counters::model::{Breakdown, Scope};
use crate::perf::sys::{self, Attr, Reading};
use crate::system::perms::Permissions;

/// PERF_COUNT_SW_TASK_CLOCK: nanoseconds the task ran, counted on whichever CPU it ran on.
const TASK_CLOCK: u64 = 1;

/// Where one set of counters is opened: on a CPU, or for the task wherever it runs through
/// the event's target of this index (a hybrid part has one per core type).
#[derive(Debug, Clone, Copy)]
enum Slot {
    Cpu(u32),
    Task(usize),
}

impl Slot {
    /// perf_event_open's `cpu` argument.
    fn cpu(self) -> i32 {
        match self {
            Slot::Cpu(c) => c as i32,
            Slot::Task(_) => -1,
        }
    }
}

pub struct PerfBackend {
    /// `[event][slot]`.
    fds: Vec<Vec<Option<OwnedFd>>>,
    /// App scope: a task-clock per CPU, outside any group.
    reference: Option<Vec<OwnedFd>>,
    scope: Scope,
    /// Totals: an event's slots (one per core type) are read as one.
    totals: bool,
}

impl PerfBackend {
    /// Opens every event on every requested CPU: bound to the held child `pid` (inherited,
    /// enabled by its exec) in app scope, to the whole CPU in system scope.
    pub fn open(plan: &Plan, req: &Request, pid: Pid) -> Result<Opened, ArumError> {
        let app = req.scope == Scope::App;
        // App scope needs no permission check first: the kernel's refusal of kernel-mode
        // counting is handled where it happens (see `open_one`).
        let mut user_only_reason = if app { None } else { system_scope_permitted()? };
        let whom = if app { pid.as_raw() } else { -1 };
        let mut setups = EventSetup::from_plan(plan);
        let mut fds: Vec<Vec<Option<OwnedFd>>> = setups.iter().map(|_| Vec::new()).collect();
        let mut ungrouped: Option<String> = None;
        let totals = app && req.breakdown == Breakdown::Totals;
        let slots: Vec<Slot> = if totals {
            let kinds = setups
                .iter()
                .map(|s| s.planned.event.targets.len())
                .max()
                .unwrap_or(1);
            (0..kinds.max(1)).map(Slot::Task).collect()
        } else {
            req.cpus.iter().map(|&c| Slot::Cpu(c)).collect()
        };
        for &slot in &slots {
            open_on_slot(
                slot,
                whom,
                req,
                &mut setups,
                &mut fds,
                &mut ungrouped,
                &mut user_only_reason,
            );
        }
        // Events that failed on a later CPU are dropped everywhere: a partial count would mislead.
        for (i, s) in setups.iter().enumerate() {
            if s.error.is_some() {
                fds[i].iter_mut().for_each(|f| *f = None);
            }
        }
        // Software events never compete for PMU counters, so only hardware events need the
        // reference that tells multiplexing apart.
        let hardware = setups.iter().any(|s| s.perf_type != PERF_TYPE_SOFTWARE);
        // Task-wide counters (totals) are enabled only while the task runs, so their own
        // enabled and running times tell multiplexing apart.
        let reference = if app && hardware && !totals {
            task_clocks(req, whom)
        } else {
            None
        };
        let opening = opening(req, ungrouped, hardware, reference.is_some(), totals);
        Ok(Opened {
            backend: std::sync::Arc::new(PerfBackend {
                fds,
                reference,
                scope: req.scope,
                totals,
            }),
            events: setups,
            user_only_reason,
            opening,
        })
    }
}

/// System scope: refused without the right to count whole CPUs; without the right to count
/// the kernel, user space only (and why).
fn system_scope_permitted() -> Result<Option<String>, ArumError> {
    let perms = Permissions::current();
    if !perms.system_wide_allowed() {
        return Err(ArumError::SystemScopeDenied {
            paranoid: paranoid(&perms),
        });
    }
    Ok((!perms.kernel_allowed()).then(|| user_only(&perms)))
}

/// Opens every event of `setups` on `slot`, each counter's descriptor (or None) pushed on its
/// event's list in `fds`; an event that fails records why in its setup.
fn open_on_slot(
    slot: Slot,
    whom: i32,
    req: &Request,
    setups: &mut [EventSetup],
    fds: &mut [Vec<Option<OwnedFd>>],
    ungrouped: &mut Option<String>,
    user_only_reason: &mut Option<String>,
) {
    let app = req.scope == Scope::App;
    let mut leader: Option<usize> = None;
    for (i, s) in setups.iter_mut().enumerate() {
        if s.error.is_some() {
            fds[i].push(None);
            continue;
        }
        // The encoding for this CPU's PMU; none where the event's core type has no
        // counters (the other core type of a hybrid part).
        let target = match slot {
            Slot::Cpu(cpu) => s.target_for(cpu),
            Slot::Task(k) => s.planned.event.targets.get(k),
        };
        let Some(target) = target else {
            fds[i].push(None);
            continue;
        };
        let core_pmu = arum_events::table::Unit::from_name(&target.pmu).is_some();
        let ev = &s.planned.event;
        let mut attr = Attr {
            type_: target.perf_type,
            config: target.config,
            config1: target.config1,
            exclude_user: ev.exclude_user,
            exclude_kernel: ev.exclude_kernel || user_only_reason.is_some(),
            disabled: true,
            inherit: app,
            enable_on_exec: app,
            pinned: req.no_multiplex,
        };
        // Hardware events of a CPU form one group, so they are scheduled together and
        // their ratios are consistent. Software events never compete for counters and
        // stay alone: a CPU-wide group led by task-clock never runs its members.
        // Only the core PMU's events can share a group (another PMU's, such as msr or
        // an uncore one, cannot).
        let software = s.perf_type == PERF_TYPE_SOFTWARE || !core_pmu;
        let group = if software {
            None
        } else {
            leader.and_then(|l| fds[l].last().and_then(Option::as_ref))
        };
        let opened = open_one(
            &mut attr,
            whom,
            slot.cpu(),
            group.map(|g| g.as_fd()),
            ungrouped,
            user_only_reason,
        );
        match opened {
            Ok(fd) => {
                if leader.is_none() && !software && !req.no_multiplex {
                    leader = Some(i);
                }
                fds[i].push(Some(fd));
            }
            Err(e) => {
                s.error = Some(describe(e, s.perf_type));
                fds[i].push(None);
            }
        }
    }
}

/// App scope: a task-clock on every requested CPU, outside any group, that tells multiplexing
/// apart; None if any fails to open.
fn task_clocks(req: &Request, whom: i32) -> Option<Vec<OwnedFd>> {
    let attr = Attr {
        type_: PERF_TYPE_SOFTWARE,
        config: TASK_CLOCK,
        disabled: true,
        inherit: true,
        enable_on_exec: true,
        ..Attr::default()
    };
    req.cpus
        .iter()
        .map(|&cpu| sys::open(&attr, whom, cpu as i32, None))
        .collect::<Result<Vec<_>, _>>()
        .ok()
}

/// How the counters were opened: grouped or not, and how multiplexing is told apart.
fn opening(
    req: &Request,
    ungrouped: Option<String>,
    hardware: bool,
    referenced: bool,
    totals: bool,
) -> Opening {
    let app = req.scope == Scope::App;
    let grouping = match (ungrouped, req.no_multiplex, hardware) {
        (_, true, _) => Grouping::Pinned,
        (_, false, false) => Grouping::Separate,
        (None, false, true) => Grouping::PerCpuGroups,
        (Some(why), false, true) => Grouping::Ungrouped { why },
    };
    let multiplexing = match (referenced, app && !totals, hardware) {
        (true, _, _) => Multiplexing::AgainstTaskClock,
        (false, _, false) => Multiplexing::SoftwareOnly,
        (false, true, true) => Multiplexing::Unscaled,
        (false, false, true) => Multiplexing::EnabledVsRunning,
    };
    Opening {
        grouping,
        multiplexing,
        scope: req.scope,
        per_cpu: !totals,
    }
}

/// Opens one counter, falling back to an ungrouped counter when the kernel refuses the group,
/// and to user-only counting when kernel counting is refused.
fn open_one(
    attr: &mut Attr,
    pid: i32,
    cpu: i32,
    group: Option<std::os::fd::BorrowedFd<'_>>,
    ungrouped: &mut Option<String>,
    user_only: &mut Option<String>,
) -> Result<OwnedFd, Errno> {
    match sys::open(attr, pid, cpu, group) {
        Err(Errno::EINVAL) if group.is_some() => {
            let fd = sys::open(attr, pid, cpu, None)?;
            ungrouped
                .get_or_insert_with(|| "the kernel refused to group some events (EINVAL)".into());
            Ok(fd)
        }
        Err(Errno::EACCES | Errno::EPERM) if !attr.exclude_kernel => {
            attr.exclude_kernel = true;
            let fd = sys::open(attr, pid, cpu, group)?;
            user_only.get_or_insert_with(|| self::user_only(&Permissions::current()));
            Ok(fd)
        }
        other => other,
    }
}

fn paranoid(perms: &Permissions) -> String {
    perms
        .perf_event_paranoid
        .map_or("absent".into(), |p| p.to_string())
}

/// Why only user space is counted.
fn user_only(perms: &Permissions) -> String {
    format!(
        "kernel-mode counting needs perf_event_paranoid <= 1 or CAP_PERFMON (paranoid is {}); counting user space only",
        paranoid(perms)
    )
}

fn describe(e: Errno, perf_type: u32) -> String {
    let what = match e {
        Errno::ENOENT | Errno::EOPNOTSUPP if perf_type == PERF_TYPE_RAW => {
            "this machine exposes no hardware PMU for it (a VM?) or the CPU lacks the event"
        }
        Errno::ENOENT | Errno::EOPNOTSUPP => "the kernel does not support this event",
        Errno::EINVAL => "the kernel rejected the encoding",
        Errno::EACCES | Errno::EPERM => "permission denied (perf_event_paranoid, CAP_PERFMON)",
        Errno::EMFILE => "too many open files: raise `ulimit -n` or count fewer events or CPUs",
        Errno::EBUSY => "the counter is in use by someone else",
        _ => "",
    };
    let kernel = format!("{} ({e:?})", e.desc());
    if what.is_empty() {
        kernel
    } else {
        format!("{what}: {kernel}")
    }
}

impl Backend for PerfBackend {
    fn start(&self) -> Result<Vec<(usize, String)>, ArumError> {
        // App scope: the child's exec enables the counters (enable_on_exec).
        if self.scope == Scope::System {
            for fd in self.fds.iter().flatten().flatten() {
                sys::enable(fd.as_fd()).map_err(ArumError::CountingStart)?;
            }
        }
        Ok(Vec::new())
    }

    fn read(&self) -> Vec<Vec<Option<Reading>>> {
        self.fds
            .iter()
            .map(|slots| {
                let readings = slots
                    .iter()
                    .map(|fd| fd.as_ref().and_then(|fd| sys::read(fd.as_fd()).ok()));
                if self.totals {
                    vec![readings.flatten().reduce(Reading::plus)]
                } else {
                    readings.collect()
                }
            })
            .collect()
    }

    fn stop(&self) -> Result<(), String> {
        // App scope: the counters stopped when the tree exited.
        if self.scope == Scope::System {
            for fd in self.fds.iter().flatten().flatten() {
                let _ = sys::disable(fd.as_fd());
            }
        }
        Ok(())
    }

    fn reference(&self) -> Option<Vec<Reading>> {
        self.reference.as_ref().map(|fds| {
            fds.iter()
                .map(|fd| sys::read(fd.as_fd()).unwrap_or_default())
                .collect()
        })
    }
}
