//! The in-kernel engine while the program runs: every tick reads each probed function's calls
//! from the maps, notes the calls per `-I` interval, and judges the functions against the
//! policy. A function timed too short to time is counted only; when the probes' cost over the
//! last judgement's span is above the budget, the costliest functions step down, timed to
//! counted only, counted only to unprobed (without --exact-counts), until the rest fits.
//!
//! The budget is judged every 50 ms, and probes that took over half of a 2 ms span at once;
//! each against the larger of the program's CPU time and the elapsed time over its span: the threads of a program that mostly waits are not slowed by a probe cost that is
//! small beside its waits, those of one that computes are by any.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use arum_bpf::functions::Progress;
use arum_bpf::Unavailable;

use super::{ClassCost, Kernel};
use crate::facilities::functions::model::{ThrottleMode, ThrottleReason};
use crate::facilities::functions::settings::Policy;
use crate::perf::sys;

/// How often the maps are read: every millisecond while the program starts (a function called
/// back to back pays a hit per call until it is judged: a hundred calls at 10 µs take 1 ms), then
/// every 5 ms (a read costs a system call per function).
pub const TICK: Duration = Duration::from_millis(1);
const EARLY_TICKS: u64 = 50;
const LATER_TICK: Duration = Duration::from_millis(5);

/// A span of the program shorter than this is not judged against the budget: the rate of calls
/// in a start-up burst does not say what counting them all will cost.
const JUDGE_SPAN_NS: u64 = 50_000_000;
/// Probes that took more than this share of a shorter span are judged at once: the program
/// spent more time in them than in itself, which no burst of a start-up excuses.
const FAST_SPAN_NS: u64 = 2_000_000;
const FAST_SHARE: f64 = 0.5;

/// The two judgements: against the budget over `JUDGE_SPAN_NS`, against `FAST_SHARE` over
/// `FAST_SPAN_NS`; each keeps where its span started.
const BUDGET: usize = 0;
const FAST: usize = 1;

/// Where a function stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Timed,
    /// Entry probe only: every call counted, none timed.
    Counted,
    /// No probe: the calls after this are not counted.
    Unprobed,
}

/// Why and when a function stepped down from being timed, or was unprobed.
#[derive(Debug, Clone, Copy)]
pub struct StepDown {
    pub reason: ThrottleReason,
    /// Since the probes were armed.
    pub at_ns: u64,
    pub timed: u64,
    pub mean_ns: f64,
}

/// What an unprobed function's calls were doing when its probe went: for the predicted cost of
/// counting them all.
#[derive(Debug, Clone, Copy)]
pub struct Unprobing {
    /// The program's CPU time then.
    pub cpu_ns: u64,
    /// Over the last span while counted: calls, and the program's CPU time.
    pub span_calls: u64,
    pub span_cpu_ns: u64,
}

/// One function's state.
#[derive(Debug, Clone)]
pub struct Function {
    pub phase: Phase,
    pub cost: ClassCost,
    pub progress: Progress,
    /// The progress at the start of each judgement's span.
    judged: [Progress; 2],
    pub step_down: Option<StepDown>,
    pub unprobed: Option<Unprobing>,
    /// Cumulative calls at each `-I` interval's end.
    pub intervals: Vec<u64>,
}

impl Function {
    /// The probes' cost of `p`'s calls: timed calls a pair each, the others an entry.
    pub fn overhead_ns(&self, p: Progress) -> f64 {
        p.timed as f64 * self.cost.pair_ns
            + p.calls.saturating_sub(p.timed) as f64 * self.cost.entry_ns
    }
}

pub struct KernelLive {
    pub kernel: Kernel,
    pub functions: Vec<Function>,
    policy: Policy,
    task_clock: Option<OwnedFd>,
    started: Instant,
    /// Where each judgement's span started: wall and CPU ns since the start.
    judged_at: [(u64, u64); 2],
    pub interval_ns: Option<u64>,
    /// The first failure to read or change the maps (the run goes on with what was counted).
    pub trouble: Option<String>,
    /// Process names, read while they run.
    pub names: HashMap<u32, String>,
    pub cpu_ns: u64,
    ticks: u64,
}

impl KernelLive {
    pub fn new(
        kernel: Kernel,
        policy: Policy,
        task_clock: Option<OwnedFd>,
        interval_ns: Option<u64>,
    ) -> KernelLive {
        let functions = kernel
            .costs
            .iter()
            .map(|&cost| Function {
                phase: Phase::Timed,
                cost,
                progress: Progress::default(),
                judged: [Progress::default(); 2],
                step_down: None,
                unprobed: None,
                intervals: Vec::new(),
            })
            .collect();
        KernelLive {
            kernel,
            functions,
            policy,
            task_clock,
            started: Instant::now(),
            judged_at: [(0, 0); 2],
            interval_ns,
            trouble: None,
            names: HashMap::new(),
            cpu_ns: 0,
            ticks: 0,
        }
    }

    /// The program's CPU time so far (task-clock of the tree), or 0 where it cannot be read.
    fn program_cpu_ns(&self) -> u64 {
        self.task_clock
            .as_ref()
            .and_then(|fd| sys::read(fd.as_fd()).ok())
            .map_or(0, |r| r.value)
    }

    /// One tick: read, note intervals, judge. Gives how much longer than `TICK` the next can
    /// wait.
    pub fn tick(&mut self) -> Duration {
        self.judge();
        if self.ticks <= EARLY_TICKS {
            Duration::ZERO
        } else {
            LATER_TICK - TICK
        }
    }

    fn judge(&mut self) {
        let wall = self.started.elapsed().as_nanos() as u64;
        self.cpu_ns = self.program_cpu_ns().max(self.cpu_ns);
        if let Err(e) = self.read() {
            self.trouble.get_or_insert(e.0);
            return;
        }
        if let Some(iv) = self.interval_ns {
            let due = (wall / iv) as usize;
            for f in &mut self.functions {
                while f.intervals.len() < due {
                    f.intervals.push(f.progress.calls);
                }
            }
        }
        // Names while the processes live: every tick at first (short programs), then with
        // each judgement (the threads map grows with the tree).
        self.ticks += 1;
        if self.ticks <= 10 {
            self.read_names();
        }
        if self.policy.mode == ThrottleMode::NoThrottle {
            if wall.saturating_sub(self.judged_at[BUDGET].0) >= JUDGE_SPAN_NS {
                self.judged_at[BUDGET] = (wall, self.cpu_ns);
                self.read_names();
            }
            return;
        }
        self.judge_short(wall);
        for (which, span, share) in [
            (FAST, FAST_SPAN_NS, FAST_SHARE),
            (BUDGET, JUDGE_SPAN_NS, self.policy.budget_percent / 100.0),
        ] {
            if wall.saturating_sub(self.judged_at[which].0) < span {
                continue;
            }
            if let Err(e) = self.judge_budget(wall, which, share) {
                self.trouble.get_or_insert(e.0);
            }
            self.judged_at[which] = (wall, self.cpu_ns);
            for f in &mut self.functions {
                f.judged[which] = f.progress;
            }
            if which == BUDGET {
                self.read_names();
            }
        }
    }

    fn read(&mut self) -> Result<(), Unavailable> {
        for (i, f) in self.functions.iter_mut().enumerate() {
            if f.phase != Phase::Unprobed {
                f.progress = self.kernel.counter.progress(i as u32)?;
            }
        }
        Ok(())
    }

    /// Timed functions whose mean, after the calls the policy judges on, is below its factor of
    /// their probes' cost: counted only from now on.
    fn judge_short(&mut self, wall: u64) {
        for i in 0..self.functions.len() {
            let f = &self.functions[i];
            let p = f.progress;
            if f.phase != Phase::Timed || p.timed < self.policy.judge_after_calls {
                continue;
            }
            let mean = p.inclusive_ns as f64 / p.timed as f64;
            if mean < self.policy.short_factor * f.cost.pair_ns {
                self.step_down(i, ThrottleReason::TooShort, wall);
            }
        }
    }

    /// Over judgement `which`'s span: while the probes' cost is above `share` of it, the
    /// function that cost most steps down.
    fn judge_budget(&mut self, wall: u64, which: usize, share: f64) -> Result<(), Unavailable> {
        let span = wall.saturating_sub(self.judged_at[which].0);
        let cpu_span = self.cpu_ns.saturating_sub(self.judged_at[which].1);
        let allowed = share * span.max(cpu_span) as f64;
        // Each function's cost over the span, as it would be in its phase from now on.
        let mut costs: Vec<f64> = self
            .functions
            .iter()
            .map(|f| span_cost(f, f.phase, which))
            .collect();
        while costs.iter().sum::<f64>() > allowed {
            let Some((i, _)) = costs
                .iter()
                .enumerate()
                .filter(|&(i, &c)| c > 0.0 && self.can_step_down(i))
                .max_by(|a, b| a.1.total_cmp(b.1))
            else {
                break;
            };
            self.step_down(i, ThrottleReason::Budget, wall);
            if self.functions[i].phase == Phase::Unprobed {
                let f = &self.functions[i];
                let span_calls = f.progress.calls - f.judged[which].calls;
                self.functions[i].unprobed = Some(Unprobing {
                    cpu_ns: self.cpu_ns,
                    span_calls,
                    span_cpu_ns: cpu_span,
                });
                self.kernel.counter.remove(i as u32)?;
            }
            costs[i] = span_cost(&self.functions[i], self.functions[i].phase, which);
        }
        Ok(())
    }

    fn can_step_down(&self, i: usize) -> bool {
        match self.functions[i].phase {
            Phase::Timed => true,
            Phase::Counted => self.policy.mode == ThrottleMode::Throttle,
            Phase::Unprobed => false,
        }
    }

    /// Function `i` one step down: timed to counted only, counted only to unprobed (the
    /// caller removes the probe).
    fn step_down(&mut self, i: usize, reason: ThrottleReason, wall: u64) {
        let f = &mut self.functions[i];
        match f.phase {
            Phase::Timed => {
                let p = f.progress;
                f.step_down = Some(StepDown {
                    reason,
                    at_ns: wall,
                    timed: p.timed,
                    mean_ns: if p.timed > 0 {
                        p.inclusive_ns as f64 / p.timed as f64
                    } else {
                        0.0
                    },
                });
                f.phase = Phase::Counted;
                if let Err(e) = self.kernel.counter.count_only(i as u32, true) {
                    self.trouble.get_or_insert(e.0);
                }
            }
            Phase::Counted => f.phase = Phase::Unprobed,
            Phase::Unprobed => {}
        }
    }

    /// The names of the processes calling the functions, while they run.
    fn read_names(&mut self) {
        let Ok(totals) = self.kernel.counter.thread_pids() else {
            return;
        };
        for pid in totals {
            if let std::collections::hash_map::Entry::Vacant(e) = self.names.entry(pid) {
                if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
                    e.insert(comm.trim_end().to_string());
                }
            }
        }
    }
}

/// What function `f`'s calls over judgement `which`'s span would cost in `phase`.
fn span_cost(f: &Function, phase: Phase, which: usize) -> f64 {
    let calls = f.progress.calls.saturating_sub(f.judged[which].calls) as f64;
    match phase {
        Phase::Timed => calls * f.cost.pair_ns,
        Phase::Counted => calls * f.cost.entry_ns,
        Phase::Unprobed => 0.0,
    }
}

/// The predicted cost of counting every call of an unprobed function, from its rate while
/// counted: its calls per CPU second of the program's own time (the probes' time taken out)
/// carried over the CPU time it ran unprobed. When the hits took half the span or more, the
/// program's own time is a difference too small beside the hits' calibration error to carry:
/// the rate with the hits, slower than without, then gives a lower bound (`true`).
pub fn exact_counting_cost(f: &Function, final_cpu_ns: u64) -> Option<(f64, bool)> {
    let u = f.unprobed?;
    if u.span_calls == 0 || u.span_cpu_ns == 0 {
        return None;
    }
    let hits = u.span_calls as f64 * f.cost.entry_ns;
    let own = u.span_cpu_ns as f64 - hits;
    let after = final_cpu_ns.saturating_sub(u.cpu_ns) as f64;
    let so_far = f.overhead_ns(f.progress);
    if own < 0.5 * u.span_cpu_ns as f64 {
        let at_least = after * u.span_calls as f64 / u.span_cpu_ns as f64;
        return Some((so_far + at_least * f.cost.entry_ns, true));
    }
    let more = after * u.span_calls as f64 / own;
    Some((so_far + more * f.cost.entry_ns, false))
}
