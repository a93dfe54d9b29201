//! Per-task records (`--per-task`): one for every process and thread of the launched tree,
//! exact at exit however short the task lived.
//!
//! ```text
//!  prepare()   --enable-delayacct: kernel.task_delayacct on, so the child is born with delays
//!  arm()       register for taskstats exit records on the CPUs the child may use, subscribe to
//!              the proc connector (fork/exec/exit); the watcher thread reads both (`watch`)
//!  released()  /proc samples of the tree: command lines, and values for missing records
//!  stop()      the watcher drains what is queued; delay accounting back as it was
//!  finish()    records of the tree's tasks (`assemble`), summaries, the rusage check
//! ```
//!
//! Both netlink interfaces need CAP_NET_ADMIN. Without it (or when the kernel dropped records),
//! records come from the /proc samples and say so: values up to each task's last sample, and
//! tasks that lived between two samples are missing.

mod assemble;
mod delayacct;
pub mod html;
pub mod model;
mod sample;
pub mod text;
mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use arum_bpf::runtime::RuntimeCounter;
use arum_taskstats::{ExitListener, ProcEvents};

use crate::error::ArumError;
use crate::facilities::tasks::model::{DelayAccounting, TasksMethod, TasksReport};
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::{monotonic, Reaped};
use crate::periodic::Sampler;
use crate::request::ProbeEngine;
use crate::system::perms::Permissions;
use crate::tree::Tree;
use assemble::{assemble, check_rusage, note_switch_tails, Context};
use sample::Samples;
use watch::{Collected, Watch};

/// What `--per-task` asks for.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Turn kernel.task_delayacct on for the run (`--enable-delayacct`).
    pub enable_delayacct: bool,
    /// Events are counted (`-e`): their per-thread split is not given yet, which is said.
    pub events_counted: bool,
    /// Where the CPU times come from: the scheduler's switches (BPF) or the exit records.
    pub engine: ProbeEngine,
}

/// The per-task facility for one run.
pub struct Tasks<'s> {
    settings: &'s Settings,
    delayacct: Option<delayacct::Enabled>,
    delays: DelayAccounting,
    watch: Option<Watch>,
    tree: Option<Arc<Tree>>,
    root: u32,
    sampler: Option<Sampler<Samples>>,
    collected: Collected,
    samples: Samples,
    /// Why exit records or process events are not there.
    limits: Vec<String>,
    exact_possible: bool,
    /// Each thread's CPU time from the scheduler's switches, when BPF runs.
    runtime: Option<RuntimeCounter>,
    runtimes: BTreeMap<u32, u64>,
}

impl<'s> Tasks<'s> {
    pub fn new(settings: &'s Settings) -> Self {
        Tasks {
            settings,
            delayacct: None,
            delays: DelayAccounting::default(),
            watch: None,
            tree: None,
            root: 0,
            sampler: None,
            collected: Collected::default(),
            samples: Samples::default(),
            limits: Vec::new(),
            exact_possible: false,
            runtime: None,
            runtimes: BTreeMap::new(),
        }
    }
}

/// How to get the delays that are missing.
const DELAYACCT_HOW: &str = "run arum as root with --enable-delayacct (on for the run only), or \
    `sysctl kernel.task_delayacct=1` before the run";

impl Facility for Tasks<'_> {
    type Section = TasksReport;

    fn lists_the_tree(&self) -> bool {
        true
    }

    fn prepare(&mut self) -> Result<(), ArumError> {
        match self.start_runtime() {
            Ok(counter) => self.runtime = Some(counter),
            Err(why) => self.limits.push(format!(
                "CPU times from exit records, which miss a task's last moments (a process that never saw a tick shows 0): the in-kernel engine is off: {why}"
            )),
        }
        if self.settings.enable_delayacct {
            match delayacct::Enabled::turn_on() {
                Ok(guard) => {
                    self.delays.enabled_for_run = guard.is_some();
                    if guard.as_ref().is_some_and(|g| !g.marked()) {
                        self.limits.push(
                            "kernel.task_delayacct stays on if arum is killed by SIGKILL:                              arum has no writable cgroup v2 group to record the change in for                              the next run to undo"
                                .into(),
                        );
                    }
                    self.delayacct = guard;
                }
                Err(why) => return Err(ArumError::DelayAccounting(why)),
            }
        }
        match delayacct::is_on() {
            Some(true) => self.delays.on = true,
            Some(false) => {
                self.delays.note = Some(format!(
                    "block I/O, swap-in, reclaim and thrashing delays are not accounted: \
                     kernel.task_delayacct is 0; {DELAYACCT_HOW}"
                ))
            }
            None => {
                self.delays.note = Some(
                    "this kernel has no delay accounting (CONFIG_TASK_DELAY_ACCT): only run-queue delays"
                        .into(),
                )
            }
        }
        Ok(())
    }

    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        self.root = run.pid.as_raw() as u32;
        self.tree = Some(run.tree.clone());
        if let Some(counter) = &self.runtime {
            if let Err(why) = counter.follow(self.root) {
                self.limits
                    .push(format!("CPU times from exit records: {why}"));
                self.runtime = None;
            }
        }
        let cpus = cpus_of(run.pid);
        let exits = match ExitListener::register(&cpus) {
            Ok(l) => Some(l),
            Err(e) => {
                self.limits.push(needs_root("exit records (taskstats)", &e));
                None
            }
        };
        let events = match ProcEvents::listen() {
            Ok(e) => Some(e),
            Err(e) => {
                self.limits.push(needs_root(
                    "process events (proc connector: exact tree and times)",
                    &e,
                ));
                None
            }
        };
        self.exact_possible = exits.is_some() && events.is_some();
        if exits.is_some() || events.is_some() {
            match Watch::start(exits, events, self.root) {
                Ok(w) => self.watch = Some(w),
                Err(e) => run.warnings.add(format!(
                    "per-task records: cannot start the reader thread: {e}"
                )),
            }
        }
        Ok(())
    }

    fn released(&mut self) {
        if let Some(tree) = &self.tree {
            self.sampler = sample::start(tree);
        }
    }

    fn stop(&mut self, _run: &mut Stopped<'_>) {
        if let Some(w) = self.watch.take() {
            self.collected = w.finish();
        }
        if let Some(s) = self.sampler.take() {
            self.samples = s.finish().unwrap_or_default();
        }
        // Delay accounting back as it was, as soon as the tree is gone.
        self.delayacct = None;
        if let Some(mut counter) = self.runtime.take() {
            counter.stop();
            match counter.runtimes() {
                Ok((runtimes, unrecorded)) => {
                    self.runtimes = runtimes.into_iter().map(|(tid, r)| (tid, r.ns)).collect();
                    if unrecorded > 0 {
                        self.limits.push(format!(
                            "{unrecorded} threads have CPU times from exit records only: the in-kernel map was full"
                        ));
                    }
                }
                Err(why) => self
                    .limits
                    .push(format!("CPU times from exit records: {why}")),
            }
        }
    }

    fn finish(self, reaped: &Reaped) -> TasksReport {
        let ctx = Context {
            root: self.root,
            released_ns: reaped.released_at.as_nanos() as u64,
            reaped_ns: reaped.wall.as_nanos() as i64,
            boot_offset_ns: boot_offset_ns(),
            ticks_per_second: procfs::ticks_per_second(),
            delays_on: self.delays.on,
            runtimes: &self.runtimes,
        };
        let a = assemble(&ctx, &self.collected, &self.samples);
        let dropped = self.collected.exits_dropped || self.collected.events_dropped;
        let mut limits = self.limits;
        if self.settings.events_counted {
            limits.push(
                "event counts are not split per thread yet: the counters section has the tree's totals"
                    .into(),
            );
        }
        if dropped {
            limits.push(format!(
                "the kernel dropped records (a netlink socket overflowed): {} tasks from /proc \
                 samples, {} without any record",
                a.sampled, a.unrecorded
            ));
        } else if a.unrecorded > 0 {
            limits.push(format!("{} tasks of the tree have no record", a.unrecorded));
        }
        let exact = self.exact_possible && a.sampled == 0 && a.unrecorded == 0;
        let mut rusage_check = check_rusage(&a.totals, &reaped.rusage, a.processes.len(), exact);
        if !self.runtimes.is_empty() {
            note_switch_tails(&mut rusage_check);
        }
        TasksReport {
            method: if self.exact_possible {
                TasksMethod::ExitRecords
            } else {
                TasksMethod::ProcSampling
            },
            exact,
            cpu_from_switches: !self.runtimes.is_empty(),
            limits,
            delay_accounting: self.delays,
            records_dropped: dropped,
            sampled_tasks: a.sampled,
            samples: self.samples.count,
            processes: a.processes,
            threads: a.threads,
            totals: a.totals,
            rusage_check,
            counters: None,
        }
    }
}

impl Tasks<'_> {
    /// The scheduler-switch counter, or why not.
    fn start_runtime(&self) -> Result<RuntimeCounter, String> {
        if self.settings.engine == ProbeEngine::Perf {
            return Err("--probe-engine perf was given".into());
        }
        if !Permissions::current().bpf_allowed() {
            return Err("BPF needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)".into());
        }
        RuntimeCounter::start().map_err(|u| u.0)
    }
}

/// What is missing for lack of a capability, or another reason.
fn needs_root(what: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        format!("{what} need CAP_NET_ADMIN (run arum as root): values come from /proc samples, up to each task's last sample; tasks shorter than the sampling interval are missing")
    } else {
        format!("{what} unavailable: {e}; values come from /proc samples")
    }
}

/// The CPUs the held child may run on, as a cpulist (exits are reported per CPU).
fn cpus_of(pid: nix::unistd::Pid) -> String {
    let online = crate::system::cpulist::online().unwrap_or_default();
    let allowed: Vec<u32> = match nix::sched::sched_getaffinity(pid) {
        Ok(set) => online
            .iter()
            .copied()
            .filter(|&c| set.is_set(c as usize).unwrap_or(false))
            .collect(),
        Err(_) => online,
    };
    allowed
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// CLOCK_BOOTTIME − CLOCK_MONOTONIC: time the machine spent suspended.
fn boot_offset_ns() -> u64 {
    let boot = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0);
    boot.saturating_sub(monotonic().as_nanos() as u64)
}
