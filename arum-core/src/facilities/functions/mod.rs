//! Function-level timing of the unmodified program (ARUM's application-level measurement): entry
//! and return uprobes on chosen functions of the executable and its libraries, every call timed
//! from the records they write, and self-throttling so that measuring does not perturb the run.
//!
//! ```text
//!  prepare   the uprobe PMU; the cost of a probe hit, calibrated per class of first instruction
//!            on arum's own function of that class (`classes`)
//!  arm       per CPU a ring buffer; per function entry + return probes on the held child
//!            (inherited, enabled by exec) and an exact counting entry probe
//!  released  the reader thread (`live`): drain → pair per thread → statistics; functions too
//!            short to time (mean < K × cost after N calls) or over the probe budget lose both
//!            probes; their calls are then counted exactly (--exact-counts) or sampled in windows
//!  stop      the last drain after the reap: nothing in flight is lost
//!  finish    the report section (`section`), estimates from the windows (`estimate`)
//! ```
//!
//! `targets` turns `-F` names into probe sites (via arum-symbols), `uprobe` and `probes` open the
//! events, `calibrate` measures the cost. The records layer under it (`records`) is shared with
//! other probing facilities.
//!
//! Where BPF may be loaded, the in-kernel engine (`kernel`) replaces all of the above: counts and
//! times in BPF maps, attaches and detaches each file's functions at once, and calibrates the
//! probe cost per class of first instruction (`classes`). The records' path remains for the
//! ALMT views (which need every call in order) and where BPF cannot run; the report names the
//! engine and why.

mod calibrate;
mod classes;
mod estimate;
pub mod html;
mod kernel;
mod live;
pub mod model;
mod probes;
mod section;
mod settings;
pub mod targets;
pub mod text;
mod uprobe;

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::Duration;

use crate::error::ArumError;
use crate::facilities::functions::model::{FunctionsReport, ThrottleMode};
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::perf::records::event::{Journal, SharedJournal};
use crate::perf::sys::{self, Attr};
use crate::periodic::{Cadence, FirstTick, Sampler};
use crate::request::ProbeEngine;
use crate::system::perms::Permissions;

pub use calibrate::ProbeCost;
use classes::Class;
pub use kernel::first_call_if_asked;
use kernel::live::KernelLive;
use kernel::Kernel;
use live::Live;
pub use settings::{Policy, Settings};
use uprobe::UprobePmu;

/// The reader's ticks may take a tenth of the time to the next, where other samplers take a
/// hundredth (`periodic::BUDGET`): it governs the probes, and each tick it is late leaves their
/// far larger cost on the program (its first ticks, a map lookup per function and the threads'
/// names, cost hundreds of µs; the throttling figures of benchmarks/functions.sh measure it).
const READER_BUDGET: u32 = 10;

/// The reader's budget under `mode`: `--no-throttle` judges nothing, so there it keeps every
/// sampler's hundredth, since its ticks also slow the program's probe hits (docs/functions.md).
fn reader_budget(mode: ThrottleMode) -> u32 {
    match mode {
        ThrottleMode::NoThrottle => crate::periodic::BUDGET,
        ThrottleMode::Throttle | ThrottleMode::ExactCounts => READER_BUDGET,
    }
}

/// Whether this process may open uprobes, and if not, the one line saying what to do.
pub fn permission_problem(perms: &Permissions) -> Option<String> {
    // The kernel's uprobe PMU asks for CAP_SYS_ADMIN itself (perf_uprobe_event_init), whatever
    // perf_event_paranoid says; CAP_PERFMON is not enough for it.
    (!perms.cap_sys_admin).then(|| {
        if perms.bpf_allowed() {
            // The in-kernel engine was not taken (--views, --probe-engine perf, or it cannot run
            // here): a capability more for the records' path would not be the fix for a group.
            return "function timing from probe records (--views, --probe-engine perf, or where the in-kernel engine cannot run) needs CAP_SYS_ADMIN, which the uprobe PMU asks for: run arum as root, or leave them out to time in the kernel".to_string();
        }
        format!(
            "function timing needs CAP_BPF and CAP_PERFMON (the in-kernel engine) or CAP_SYS_ADMIN (the uprobe PMU's records, which accept no less): run arum as root, {}",
            crate::system::perms::GRANT
        )
    })
}

/// The facility for one run.
pub struct Functions<'s> {
    settings: &'s Settings,
    cost: Option<ProbeCost>,
    /// Per target: its class's calibrated cost (the records' path).
    costs: Vec<ProbeCost>,
    off: Option<String>,
    live: Option<Live>,
    reader: Option<Sampler<Live>>,
    /// The calibration's events, closed with the run's (see `calibrate`).
    calibration: Vec<OwnedFd>,
    program_cpu_ns: Option<u64>,
    /// Where the timed calls go for the views (`--syscalls`), if anywhere.
    journal: Option<SharedJournal>,
    /// The in-kernel engine, when it runs; else why not.
    kernel: Option<Kernel>,
    kernel_reader: Option<Sampler<KernelLive>>,
    kernel_live: Option<KernelLive>,
    kernel_totals: Option<arum_bpf::functions::Totals>,
    not_kernel: Option<String>,
}

impl<'s> Functions<'s> {
    /// `journal`: where every timed call goes for the views, when they are built.
    pub fn new(settings: &'s Settings, journal: Option<SharedJournal>) -> Self {
        Functions {
            journal,
            settings,
            cost: None,
            costs: Vec::new(),
            off: None,
            live: None,
            reader: None,
            calibration: Vec::new(),
            program_cpu_ns: None,
            kernel: None,
            kernel_reader: None,
            kernel_live: None,
            kernel_totals: None,
            not_kernel: None,
        }
    }

    /// The in-kernel engine for this run, or why not.
    fn kernel_engine(&self, perms: &Permissions) -> Result<Kernel, String> {
        if self.settings.engine == ProbeEngine::Perf {
            return Err("--probe-engine perf was given".into());
        }
        if self.journal.is_some() {
            return Err("the views need every call's record in order".into());
        }
        if !perms.bpf_allowed() {
            return Err("loading BPF needs CAP_BPF and CAP_PERFMON (or root)".into());
        }
        Kernel::start(&self.settings.targets).map_err(|e| e.0)
    }

    /// Function timing is off for this run: an error with --strict, else a warning.
    fn turn_off(&mut self, why: String) -> Result<(), ArumError> {
        if self.settings.strict {
            return Err(ArumError::Functions(format!("{why} (--strict)")));
        }
        self.off = Some(why);
        Ok(())
    }
}

/// The tree's CPU time: task-clock of the held child.
fn open_task_clock(pid: i32) -> Option<OwnedFd> {
    open_on_tree(
        pid,
        Attr {
            type_: 1,  // PERF_TYPE_SOFTWARE
            config: 1, // PERF_COUNT_SW_TASK_CLOCK
            ..Attr::default()
        },
    )
}

/// The tree's user-mode cycles: a hardware counter; None without a PMU (our VMs).
fn open_user_cycles(pid: i32) -> Option<OwnedFd> {
    open_on_tree(
        pid,
        Attr {
            type_: 0,  // PERF_TYPE_HARDWARE
            config: 0, // PERF_COUNT_HW_CPU_CYCLES
            exclude_kernel: true,
            ..Attr::default()
        },
    )
}

/// A counter on the held child and everything it starts, counting from its exec on.
fn open_on_tree(pid: i32, event: Attr) -> Option<OwnedFd> {
    let attr = Attr {
        disabled: true,
        inherit: true,
        enable_on_exec: true,
        ..event
    };
    sys::open(&attr, pid, -1, None).ok()
}

impl Facility for Functions<'_> {
    type Section = FunctionsReport;

    fn lists_the_tree(&self) -> bool {
        // Sampling windows open probes on every thread of the tree.
        self.settings.policy.mode == ThrottleMode::Throttle
    }

    fn prepare(&mut self) -> Result<(), ArumError> {
        let perms = Permissions::current();
        match self.kernel_engine(&perms) {
            Ok(kernel) => {
                self.kernel = Some(kernel);
                return Ok(());
            }
            // The views' records are the records' path's whatever the engine asked for.
            Err(why) if self.settings.engine == ProbeEngine::Bpf && self.journal.is_none() => {
                return Err(ArumError::Engine(format!(
                    "--probe-engine bpf: the in-kernel engine cannot time functions here: {why}; use --probe-engine auto to fall back to probe records"
                )));
            }
            Err(why) => self.not_kernel = Some(format!("the in-kernel engine is off: {why}")),
        }
        if let Some(why) = permission_problem(&perms) {
            return self.turn_off(why);
        }
        let pmu = match UprobePmu::detect() {
            Ok(p) => p,
            Err(why) => return self.turn_off(why),
        };
        // Each class of first instruction among the targets calibrated on its own.
        let class_of: Vec<Class> = self
            .settings
            .targets
            .iter()
            .map(|t| Class::of_file(&t.file, t.offset))
            .collect();
        let mut by_class: BTreeMap<Class, ProbeCost> = BTreeMap::new();
        for &class in &class_of {
            if by_class.contains_key(&class) {
                continue;
            }
            match calibrate::calibrate(&pmu, class) {
                Ok((cost, events)) => {
                    by_class.insert(class, cost);
                    self.calibration.extend(events);
                }
                Err(why) => return self.turn_off(format!("function timing is off: {why}")),
            }
        }
        self.costs = class_of.iter().map(|c| by_class[c]).collect();
        // The sampling windows' hits: the commonest class's.
        self.cost = by_class
            .keys()
            .max_by_key(|c| class_of.iter().filter(|k| k == c).count())
            .map(|c| by_class[c]);
        Ok(())
    }

    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        for note in &self.settings.notes {
            run.warnings.add(note.clone());
        }
        if let Some(why) = &self.off {
            run.warnings.add(why.clone());
            return Ok(());
        }
        if let Some(kernel) = self.kernel.take() {
            return self.arm_kernel(kernel, run);
        }
        let Some(cost) = self.cost else {
            return Ok(());
        };
        let cpus = crate::system::cpulist::online().unwrap_or_else(|| vec![0]);
        let pid = run.pid.as_raw();
        // Without throttling nothing reads the exact counters: every hit is recorded anyway.
        let counting = self.settings.policy.mode != ThrottleMode::NoThrottle;
        let mut opened = match probes::open(&self.settings.targets, pid, &cpus, counting) {
            Ok(p) => p,
            Err(e) => {
                let why = format!("cannot open {}: {}", e.what, e.why);
                if self.settings.strict {
                    return Err(ArumError::Functions(format!("{why} (--strict)")));
                }
                run.warnings.add(format!("function timing is off: {why}"));
                self.off = Some(why);
                return Ok(());
            }
        };
        for w in opened.warnings.drain(..) {
            run.warnings.add(w);
        }
        let mut live = Live::new(
            self.settings.targets.clone(),
            opened,
            std::mem::take(&mut self.calibration),
            self.settings.policy,
            (cost, std::mem::take(&mut self.costs)),
            open_task_clock(pid),
            // Only where the calibration could count a hit in the same cycles.
            cost.entry_user_cycles.and_then(|_| open_user_cycles(pid)),
            Arc::clone(run.tree),
            self.settings.interval_ms.map(|ms| ms * 1_000_000),
        );
        if self.journal.is_some() {
            live.journal = Some(Journal {
                names: self
                    .settings
                    .targets
                    .iter()
                    .map(|t| t.name.clone())
                    .collect(),
                ..Journal::default()
            });
        }
        // The reader starts now, not after the launch's grace: a short function called back to
        // back costs a probe hit per call until the reader throttles it.
        // Ticks on a 1 ms grid; each tick says how long it can wait (windows need 1 ms).
        self.reader = Sampler::spawn_with_budget(
            "arum-functions",
            (
                Cadence::Fixed {
                    period: Duration::from_millis(1),
                    at_start: true,
                },
                FirstTick::Thread,
                false,
            ),
            reader_budget(self.settings.policy.mode),
            live,
            |live, tick| {
                if tick.elapsed.is_zero() {
                    live::prefer_this_thread();
                }
                live.tick(false).saturating_sub(Duration::from_micros(500))
            },
            |live| live,
        );
        if self.reader.is_none() {
            return Err(ArumError::Functions(
                "cannot start the function-timing reader thread; check the process limits (ulimit -u)".into(),
            ));
        }
        Ok(())
    }

    fn stop(&mut self, run: &mut Stopped<'_>) {
        if let Some(reader) = self.kernel_reader.take() {
            self.kernel_live = reader.finish();
        }
        if let Some(live) = &mut self.kernel_live {
            // The last read: the calls counted to the end, for -I's last interval.
            live.tick();
            self.program_cpu_ns = Some(live.cpu_ns).filter(|&ns| ns > 0);
            live.kernel.counter.stop();
            match live.kernel.counter.totals(self.settings.targets.len()) {
                Ok(t) => {
                    if let Some(w) = crate::system::setid::left_at_exec(t.left_tree, "the calls") {
                        run.warnings.add(w);
                    }
                    self.kernel_totals = Some(t);
                }
                Err(e) => run.warnings.add(format!(
                    "function timing: cannot read the in-kernel engine's maps: {e}"
                )),
            }
            if let Some(why) = &live.trouble {
                run.warnings.add(format!("function timing: {why}"));
            }
            return;
        }
        if let Some(reader) = self.reader.take() {
            self.live = reader.finish();
        }
        let Some(live) = &mut self.live else { return };
        live.tick(true);
        self.program_cpu_ns = live.final_counts();
        if let (Some(shared), Some(mine)) = (&self.journal, live.journal.take()) {
            shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .append(mine);
        }
        if live.lost > 0 {
            run.warnings.add(format!(
                "{} probe records were lost (a ring buffer was full): some calls are counted but not timed",
                live.lost
            ));
        }
    }

    fn finish(self, reaped: &Reaped) -> FunctionsReport {
        let program_cpu_ns = self
            .program_cpu_ns
            .unwrap_or_else(|| rusage_cpu_ns(&reaped.rusage));
        if let (Some(live), Some(totals)) = (&self.kernel_live, &self.kernel_totals) {
            return kernel::section::build(self.settings, live, totals, program_cpu_ns);
        }
        let outcome = match (&self.live, &self.off) {
            (Some(live), _) => section::Outcome::Timed(live),
            (None, off) => section::Outcome::Off(off.as_deref().unwrap_or("no probe was opened")),
        };
        let mut report = section::build(self.settings, outcome, self.cost, program_cpu_ns);
        report.engine_note = self.not_kernel;
        report
    }
}

impl Functions<'_> {
    /// Follows the held child with the in-kernel engine and starts its reader.
    fn arm_kernel(&mut self, kernel: Kernel, run: &mut Armed<'_>) -> Result<(), ArumError> {
        let pid = run.pid.as_raw();
        if let Err(e) = kernel.counter.follow(pid as u32) {
            let why = format!("the in-kernel engine cannot follow the program: {e}");
            if self.settings.strict {
                return Err(ArumError::Functions(format!("{why} (--strict)")));
            }
            run.warnings.add(format!("function timing is off: {why}"));
            self.off = Some(why);
            return Ok(());
        }
        let live = KernelLive::new(
            kernel,
            self.settings.policy,
            open_task_clock(pid),
            self.settings.interval_ms.map(|ms| ms * 1_000_000),
        );
        self.kernel_reader = Sampler::spawn_with_budget(
            "arum-functions",
            (
                Cadence::Fixed {
                    period: kernel::live::TICK,
                    at_start: false,
                },
                FirstTick::Thread,
                false,
            ),
            reader_budget(self.settings.policy.mode),
            live,
            |live, _| live.tick(),
            |live| live,
        );
        if self.kernel_reader.is_none() {
            return Err(ArumError::Functions(
                "cannot start the function-timing reader thread; check the process limits (ulimit -u)".into(),
            ));
        }
        Ok(())
    }
}

fn rusage_cpu_ns(r: &libc::rusage) -> u64 {
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    ns(r.ru_utime) + ns(r.ru_stime)
}
