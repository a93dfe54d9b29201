//! The functions facility while the program runs: drains the ring buffers, pairs entries and
//! returns, keeps the statistics, throttles functions not worth probing and runs the sampling
//! windows of throttled ones. Owned by the reader thread (`reader`), or by the facility itself
//! when the program ended before the thread started.

use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use crate::facilities::functions::model::{EstimateAxis, ThrottleMode, ThrottleReason};
use crate::launch::monotonic;
use crate::perf::records::event::{Journal, ProbeEvent};
use crate::perf::records::pairing::{Paired, Pairing};
use crate::perf::records::parse::{Sample, SP_REGISTER};
use crate::perf::records::source::{RecordSource, HOLD_BACK};
use crate::perf::records::stats::Durations;
use crate::perf::sys;
use crate::tree::{PidReader, Tree};

use super::calibrate::ProbeCost;
use super::estimate::{self, ThreadCount, Window};
use super::probes::{FunctionProbes, Kind, Probes};
use super::settings::Policy;
use super::targets::Target;
use super::uprobe::{self, Probe, TraceFs};

/// How often the buffers are drained when nothing else is due.
pub const DRAIN_EVERY: Duration = Duration::from_millis(10);
/// Calls a sampling window should count before it closes (see `sample_windows`).
const WINDOW_CALLS: u64 = 32;
/// The share of a window's time the hits of the functions sampled together may be expected to
/// take: more functions wait for a later window (see `window_group`).
const WINDOW_SHARE: f64 = 0.05;
/// How often the probe budget is judged: every 2 ms of the program's CPU time (a function called
/// back to back costs a probe hit per call until it is throttled).
const BUDGET_EVERY_NS: u64 = 2_000_000;

/// Per-thread totals of one function.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadAcc {
    pub pid: u32,
    pub calls: u64,
    pub timed: u64,
    pub inclusive: u64,
    pub exclusive: u64,
}

/// Where a function stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    Probed,
    /// Throttled with --exact-counts: only the entry probes remain (recording, and counting).
    Counting,
    /// Throttled: calls are sampled in windows.
    Sampled,
}

#[derive(Debug, Clone)]
pub struct Throttle {
    pub reason: ThrottleReason,
    pub at_ns: u64,
    /// Where on the estimate's axis (see `Live::axis`).
    pub axis: u64,
    pub timed: u64,
    pub mean_ns: f64,
}

/// Everything known about one function.
pub struct FunctionState {
    pub entries: u64,
    pub inclusive: Durations,
    pub exclusive: Durations,
    pub threads: BTreeMap<u32, ThreadAcc>,
    pub processes: BTreeMap<u32, u64>,
    pub unwound: u64,
    pub orphans: u64,
    pub phase: Phase,
    pub throttle: Option<Throttle>,
    /// The exact count when the counting probe was closed (or read at the end).
    pub counted: Option<u64>,
    /// Entries seen before the probes were removed (records with earlier times).
    pub forgotten: bool,
    pub windows: Vec<Window>,
    pub window_hits: u64,
    pub saturated_windows: u32,
    /// Per `-I` interval (from `base_ns`): entries seen, and counter deltas while counting.
    pub intervals: Vec<u64>,
}

impl FunctionState {
    fn new() -> Self {
        FunctionState {
            entries: 0,
            inclusive: Durations::default(),
            exclusive: Durations::default(),
            threads: BTreeMap::new(),
            processes: BTreeMap::new(),
            unwound: 0,
            orphans: 0,
            phase: Phase::Probed,
            throttle: None,
            counted: None,
            forgotten: false,
            windows: Vec::new(),
            window_hits: 0,
            saturated_windows: 0,
            intervals: Vec::new(),
        }
    }
}

/// A sampling window in progress: per throttled function, per thread, a counting probe; where it
/// starts on the estimate's axis (`Live::axis`) and on the wall clock.
struct OpenWindow {
    start: u64,
    wall_start: u64,
    probes: Vec<(usize, OwnedFd)>,
}

pub struct Live {
    pub targets: Vec<Target>,
    functions: Vec<FunctionProbes>,
    defined: Vec<(u64, u64)>,
    ids: HashMap<u64, (usize, Kind)>,
    source: RecordSource,
    pairing: Pairing<usize>,
    pub state: Vec<FunctionState>,
    pub policy: Policy,
    /// The cost of the sampling windows' hits (the calibration of the targets' commonest class).
    pub cost: ProbeCost,
    /// Per target: its class's cost.
    pub costs: Vec<ProbeCost>,
    task_clock: Option<OwnedFd>,
    /// The program's user-mode cycles (hardware counter), where there is one: the estimate's axis.
    user_cycles: Option<OwnedFd>,
    pids: PidReader,
    window: Option<OpenWindow>,
    next_window_ns: Option<u64>,
    /// The function the next sampling window starts its group with.
    window_cursor: usize,
    /// arum's clock (CLOCK_MONOTONIC ns) when the probes were armed: the origin of `-I`.
    pub base_ns: u64,
    pub interval_ns: Option<u64>,
    pub lost: u64,
    pub records: u64,
    pub names: HashMap<u32, String>,
    /// Every timed call, when the views want them (`--syscalls`): probe `i` is function `i`.
    pub journal: Option<Journal>,
    budget_mark: Option<(u64, Vec<u64>)>,
    batch: Vec<Sample>,
    pub sideband_open: usize,
    /// When the last tick ran (the program had ended).
    pub ended_ns: u64,
    pub ended_axis: u64,
    _sideband: Vec<OwnedFd>,
    /// See `probes::Probes::anchors`; closed on drop.
    anchors: Vec<OwnedFd>,
    /// Last: the definitions go after every event that uses them.
    _tracefs: TraceFs,
}

fn now_ns() -> u64 {
    monotonic().as_nanos() as u64
}

/// Reads the tree's CPU time so far (task-clock of every thread and process, inherited).
fn read_clock(fd: &Option<OwnedFd>) -> Option<u64> {
    fd.as_ref()
        .and_then(|f| sys::read(f.as_fd()).ok())
        .map(|r| r.value)
}

impl Live {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        targets: Vec<Target>,
        opened: Probes,
        calibration: Vec<OwnedFd>,
        policy: Policy,
        (cost, costs): (ProbeCost, Vec<ProbeCost>),
        task_clock: Option<OwnedFd>,
        user_cycles: Option<OwnedFd>,
        tree: Arc<Tree>,
        interval_ns: Option<u64>,
    ) -> Live {
        let n = targets.len();
        let pids = tree.reader();
        Live {
            targets,
            functions: opened.functions,
            defined: opened.defined,
            ids: opened.ids,
            source: RecordSource::new(opened.rings, SP_REGISTER.is_some()),
            pairing: Pairing::new(cost.pairing_costs(), SP_REGISTER.map_or(0, |r| r.1)),
            state: (0..n).map(|_| FunctionState::new()).collect(),
            policy,
            cost,
            costs,
            task_clock,
            user_cycles,
            pids,
            window: None,
            next_window_ns: None,
            window_cursor: 0,
            base_ns: now_ns(),
            interval_ns,
            lost: 0,
            records: 0,
            names: HashMap::new(),
            // Before exec: nothing counted, no CPU time yet.
            budget_mark: Some((0, vec![0; n])),
            batch: Vec::new(),
            journal: None,
            sideband_open: opened.sideband.len(),
            ended_ns: 0,
            ended_axis: 0,
            _sideband: opened.sideband,
            anchors: opened.anchors.into_iter().chain(calibration).collect(),
            _tracefs: opened.tracefs,
        }
    }

    pub fn bytes(&self) -> u64 {
        self.source.bytes
    }

    /// One round: drain, pair, judge, sample. `last` after the program was reaped (everything
    /// is released). Returns how long until the next round is needed.
    pub fn tick(&mut self, last: bool) -> Duration {
        let now = now_ns();
        let watermark = (!last).then(|| now.saturating_sub(HOLD_BACK.as_nanos() as u64));
        let mut batch = std::mem::take(&mut self.batch);
        let read =
            self.source
                .drain_ordered(&mut self.lost, &mut self.names, watermark, &mut batch);
        for s in batch.drain(..) {
            self.on_sample(s);
        }
        self.batch = batch;
        // Frames of functions whose probes are gone: every record before the removal is in.
        for (i, st) in self.state.iter_mut().enumerate() {
            if let Some(t) = &st.throttle {
                if !st.forgotten && (last || watermark.is_some_and(|w| w > t.at_ns)) {
                    self.pairing.forget(i);
                    st.forgotten = true;
                }
            }
        }
        if last {
            self.ended_ns = now;
            self.ended_axis = self.axis(now);
            self.close_window(now);
            return Duration::ZERO;
        }
        if self.policy.mode != ThrottleMode::NoThrottle {
            self.judge(now);
        }
        // While functions are timed, or records flow fast, come back soon: throttling decisions are
        // prompt (a short function costs a probe hit per call until then) and buffers stay empty.
        let due = self.sample_windows(now);
        let probing = self.state.iter().any(|s| s.phase == Phase::Probed);
        if read > 16 << 10 || (probing && self.policy.mode != ThrottleMode::NoThrottle) {
            due.min(Duration::from_millis(1))
        } else {
            due
        }
    }

    fn on_sample(&mut self, s: Sample) {
        let Some(&(f, kind)) = self.ids.get(&s.id) else {
            return;
        };
        self.records += 1;
        let st = &mut self.state[f];
        match kind {
            Kind::Entry => {
                st.entries += 1;
                *st.processes.entry(s.pid).or_default() += 1;
                let t = st.threads.entry(s.tid).or_default();
                t.pid = s.pid;
                t.calls += 1;
                if let Some(iv) = self.interval_ns {
                    let k = (s.time.saturating_sub(self.base_ns) / iv) as usize;
                    bump(&mut st.intervals, k, 1);
                }
                let after = st.throttle.as_ref().is_some_and(|t| s.time > t.at_ns);
                if !st.forgotten && !after {
                    let costs = self.costs[f].pairing_costs();
                    self.pairing.enter_costing(s.tid, f, s.time, s.sp, costs);
                }
            }
            Kind::Return => {
                // After the throttling the entries are not paired: neither are their returns.
                if st.forgotten || st.throttle.as_ref().is_some_and(|t| s.time > t.at_ns) {
                    return;
                }
                let state = &mut self.state;
                let journal = &mut self.journal;
                self.pairing
                    .leave(s.tid, f, s.time, s.sp, &mut |p| match p {
                        Paired::Call {
                            key,
                            tid,
                            start,
                            inclusive,
                            exclusive,
                            ..
                        } => {
                            if let Some(j) = journal {
                                j.push(ProbeEvent {
                                    probe: key as u32,
                                    pid: s.pid,
                                    tid,
                                    start,
                                    duration: inclusive,
                                    arg: 0,
                                    ret: 0,
                                    syscall: false,
                                });
                            }
                            let st = &mut state[key];
                            st.inclusive.record(inclusive);
                            st.exclusive.record(exclusive);
                            let t = st.threads.entry(tid).or_default();
                            t.timed += 1;
                            t.inclusive += inclusive;
                            t.exclusive += exclusive;
                        }
                        Paired::Unwound { key, .. } => state[key].unwound += 1,
                        Paired::Orphan { key, .. } => state[key].orphans += 1,
                    });
            }
        }
    }

    /// Throttles functions too short to time, then the costliest while over the budget.
    fn judge(&mut self, now: u64) {
        for f in 0..self.state.len() {
            let st = &self.state[f];
            if st.phase == Phase::Probed
                && st.inclusive.count >= self.policy.judge_after_calls
                && st.inclusive.mean_ns() < self.policy.short_factor * self.costs[f].pair_ns
            {
                self.throttle(f, ThrottleReason::TooShort, now);
            }
        }
        // The budget, from the exact counters (records may lag behind on a busy machine, the
        // counters never do) against the program's CPU time, over every 5 ms of it.
        let Some(cpu) = read_clock(&self.task_clock) else {
            return;
        };
        let counts: Vec<u64> = self
            .functions
            .iter()
            .map(|p| {
                p.counter
                    .as_ref()
                    .and_then(|c| uprobe::count(c.as_fd()))
                    .map_or(0, |r| r.value)
            })
            .collect();
        let Some((cpu_before, before)) = &self.budget_mark else {
            self.budget_mark = Some((cpu, counts));
            return;
        };
        if cpu < cpu_before + BUDGET_EVERY_NS {
            return;
        }
        let cpu_delta = (cpu - cpu_before) as f64;
        let mut costs: Vec<(f64, usize)> = (0..self.state.len())
            .filter(|&f| self.state[f].phase == Phase::Probed)
            .map(|f| {
                let hits = counts[f].saturating_sub(before[f]);
                (hits as f64 * self.costs[f].pair_ns, f)
            })
            .collect();
        let budget = self.policy.budget_percent / 100.0 * cpu_delta;
        let mut total: f64 = costs.iter().map(|c| c.0).sum();
        costs.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (cost, f) in costs {
            if total <= budget || cost == 0.0 {
                break;
            }
            self.throttle(f, ThrottleReason::Budget, now);
            total -= cost;
        }
        self.budget_mark = Some((cpu, counts));
    }

    /// Removes both probes of `f` (closing them takes the breakpoint out of the program).
    fn throttle(&mut self, f: usize, reason: ThrottleReason, now: u64) {
        let exact = self.policy.mode == ThrottleMode::ExactCounts;
        let axis = self.axis(now);
        let st = &mut self.state[f];
        st.throttle = Some(Throttle {
            reason,
            axis,
            at_ns: now,
            timed: st.inclusive.count,
            mean_ns: st.inclusive.mean_ns(),
        });
        let probes = &mut self.functions[f];
        if exact {
            // The entry probe stays and keeps recording: every call counted, per thread too.
            st.phase = Phase::Counting;
            probes.ret.clear();
            return;
        }
        st.counted = probes
            .counter
            .as_ref()
            .and_then(|c| uprobe::count(c.as_fd()))
            .map(|r| r.value);
        st.phase = Phase::Sampled;
        // Both probes' events: the breakpoint leaves the program as the last goes (the probes
        // stay registered, see `probes::Probes::anchors`, so this does not wait).
        probes.ret.clear();
        probes.entry.clear();
        probes.counter = None;
        if self.next_window_ns.is_none() {
            // The first window right away: short programs still get one.
            self.next_window_ns = Some(now);
        }
    }

    /// Opens and closes sampling windows; returns the time until the next thing is due.
    fn sample_windows(&mut self, now: u64) -> Duration {
        let window = (self.policy.window_ms * 1e6) as u64;
        let period = (self.policy.period_ms * 1e6) as u64;
        if let Some(w) = &self.window {
            let end = w.wall_start + window;
            if now < end {
                return Duration::from_nanos(end - now).min(DRAIN_EVERY);
            }
            // Sparse calls: a window stays open (up to 20 times its length) until it has counted
            // enough calls for a rate; the probe costs little when it is rarely hit.
            let counted: u64 = w
                .probes
                .iter()
                .filter_map(|(_, fd)| uprobe::count(fd.as_fd()))
                .map(|r| r.value)
                .sum();
            if counted < WINDOW_CALLS && now < w.wall_start + 20 * window {
                return Duration::from_millis(1);
            }
            self.close_window(now);
        }
        let Some(next) = self.next_window_ns else {
            return DRAIN_EVERY;
        };
        if now < next {
            return Duration::from_nanos(next - now).min(DRAIN_EVERY);
        }
        let (group, of) = self.window_group();
        self.open_window(&group);
        // Each function has a window about once a period, whatever the number of groups.
        let share = group.len().max(1) as f64 / of.max(1) as f64;
        self.next_window_ns = Some(now + (period as f64 * share) as u64);
        Duration::from_nanos(window)
    }

    /// The functions the next window samples, and how many are sampled in all. Functions sampled
    /// in one window slow each other down there (see `estimate`): the correction for it rests on
    /// the calibrated cost, and when their hits together fill the window nothing is left to
    /// measure. So a window takes functions in turn while their hits are expected to take at most
    /// `WINDOW_SHARE` of it (always at least one), by each one's rate in its last window.
    fn window_group(&mut self) -> (Vec<usize>, usize) {
        // A saturated window shows the calls come faster than probe hits: more windows would cost
        // the program a millisecond each and tell nothing new.
        let sampled: Vec<usize> = (0..self.state.len())
            .filter(|&f| {
                let st = &self.state[f];
                st.phase == Phase::Sampled && st.saturated_windows == 0
            })
            .collect();
        let cost = self.estimate_cost().0;
        let first = sampled
            .iter()
            .position(|&f| f >= self.window_cursor)
            .unwrap_or(0);
        let mut group = Vec::new();
        let mut share = 0.0;
        for &f in sampled[first..].iter().chain(&sampled[..first]) {
            // Before its first window a function's rate is not known (the calls counted before
            // its throttling may be a handful at start-up): it has a window of its own.
            let expected = self.rate(f).map_or(WINDOW_SHARE, |r| r * cost);
            if !group.is_empty() && share + expected > WINDOW_SHARE {
                break;
            }
            share += expected;
            group.push(f);
        }
        self.window_cursor = group.last().map_or(0, |&f| f + 1);
        (group, sampled.len())
    }

    /// Calls of `f` per unit of the program's own time on the estimate's axis, in its last
    /// window; None before its first.
    fn rate(&self, f: usize) -> Option<f64> {
        let w = self.state[f].windows.last()?;
        Some(w.rate(self.estimate_cost().0).unwrap_or(f64::INFINITY))
    }

    fn open_window(&mut self, group: &[usize]) {
        let mut pids = Vec::new();
        self.pids.read(&mut pids);
        let tids: Vec<i32> = pids.iter().flat_map(|&p| threads_of(p)).collect();
        let mut opened = Vec::new();
        for &f in group {
            let entry = Probe::Defined(self.defined[f].0);
            for &tid in &tids {
                if let Ok(fd) = uprobe::open_counting_held(entry, tid) {
                    opened.push((f, fd));
                }
            }
        }
        // The window starts once its probes are in place: opening them can take milliseconds.
        let start = self.axis(now_ns());
        opened.retain(|(_, fd)| sys::enable(fd.as_fd()).is_ok());
        self.window = Some(OpenWindow {
            start,
            wall_start: now_ns(),
            probes: opened,
        });
    }

    fn close_window(&mut self, now: u64) {
        let Some(w) = self.window.take() else { return };
        // The window ends when its probes stop counting; its length and the spans around it are
        // on one axis (the program's user cycles or CPU time, all threads), so calls per unit of
        // it carry over.
        for (_, fd) in &w.probes {
            let _ = sys::disable(fd.as_fd());
        }
        let end = self.axis(now_ns());
        let mut calls: BTreeMap<usize, u64> = BTreeMap::new();
        for (f, fd) in &w.probes {
            if let Some(r) = uprobe::count(fd.as_fd()) {
                *calls.entry(*f).or_default() += r.value;
            }
        }
        drop(w.probes);
        let cost = self.estimate_cost().0;
        let hits: u64 = calls.values().sum();
        for (f, n) in calls {
            let st = &mut self.state[f];
            let w = Window {
                start_ns: w.start,
                end_ns: end,
                threads: vec![ThreadCount {
                    calls: n,
                    others: hits - n,
                    enabled_ns: end.saturating_sub(w.start),
                }],
            };
            st.window_hits += n;
            if let Some(iv) = self.interval_ns {
                let k = (now.saturating_sub(self.base_ns) / iv) as usize;
                bump(&mut st.intervals, k, n);
            }
            if estimate::saturated(&w, cost) {
                let mut alone = w.clone();
                alone.threads[0].others = 0;
                if !estimate::saturated(&alone, cost) {
                    // Filled by the others' hits, more than their rates foretold: this window
                    // tells nothing of this function, and its neighbours stand for its time.
                    continue;
                }
                st.saturated_windows += 1;
            }
            st.windows.push(w);
        }
    }

    /// What the estimate's axis measures: the program's user-mode cycles where a hardware
    /// counter counts them, else its CPU time, else wall time.
    pub fn axis_kind(&self) -> EstimateAxis {
        if self.user_cycles.is_some() {
            EstimateAxis::UserCycles
        } else if self.task_clock.is_some() {
            EstimateAxis::CpuTime
        } else {
            EstimateAxis::WallTime
        }
    }

    /// A point on the estimate's axis (see `axis_kind`).
    pub fn axis(&self, wall_ns: u64) -> u64 {
        match self.axis_kind() {
            EstimateAxis::UserCycles => read_clock(&self.user_cycles).unwrap_or(0),
            EstimateAxis::CpuTime => read_clock(&self.task_clock).unwrap_or(0),
            EstimateAxis::WallTime => wall_ns,
        }
    }

    /// What a sampling-window hit adds on the axis, and how much that varies: the calibrated
    /// user-mode cycles on the cycle axis (the kernel's part of a hit is not the program's own
    /// time), the calibrated CPU time of a hit otherwise.
    pub fn estimate_cost(&self) -> (f64, f64) {
        match (self.axis_kind(), self.cost.entry_user_cycles) {
            (EstimateAxis::UserCycles, Some(h)) => (h.per_hit, h.spread),
            _ => (self.cost.entry_ns, self.cost.spread_ns),
        }
    }

    /// After the last tick: the exact counts still open, the CPU time of the program.
    pub fn final_counts(&mut self) -> Option<u64> {
        for (i, st) in self.state.iter_mut().enumerate() {
            if let Some(c) = self.functions[i]
                .counter
                .as_ref()
                .and_then(|c| uprobe::count(c.as_fd()))
            {
                st.counted = Some(c.value);
            }
        }
        read_clock(&self.task_clock)
    }

    pub fn open_frames(&self) -> Vec<(usize, u32, u64)> {
        self.pairing.open_frames()
    }
}

/// Raises the reader thread's scheduling weight (nice -10) where allowed: a short function costs
/// the program a probe hit per call until the reader throttles it, and on a busy machine an
/// ordinary thread can wait tens of milliseconds for a CPU. Only this thread of arum changes; the
/// program, forked before, keeps its own priority.
pub fn prefer_this_thread() {
    // setpriority(PRIO_PROCESS) with a thread id acts on that thread alone. A refusal (no
    // CAP_SYS_NICE) changes nothing and is ignored.
    let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), -10);
}

impl Drop for Live {
    fn drop(&mut self) {
        // Every event closed before the tracefs definitions they use are removed. The last event
        // of each probe (its anchor) waits for the kernel's grace periods as it goes: they are
        // closed on several threads at once, so that many functions do not add up.
        self.functions.clear();
        self.window = None;
        let anchors = std::mem::take(&mut self.anchors);
        let per = anchors.len().div_ceil(8).max(1);
        let mut rest = anchors;
        std::thread::scope(|s| {
            while !rest.is_empty() {
                let chunk: Vec<OwnedFd> = rest.drain(..per.min(rest.len())).collect();
                if std::thread::Builder::new()
                    .spawn_scoped(s, move || drop(chunk))
                    .is_err()
                {
                    // No thread: this one closes them (the chunk was moved into the failed
                    // closure and dropped with it).
                }
            }
        });
    }
}

fn bump(v: &mut Vec<u64>, k: usize, by: u64) {
    if v.len() <= k {
        v.resize(k + 1, 0);
    }
    v[k] += by;
}

/// The threads of process `pid` now.
fn threads_of(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}
