//! Running an experiment: one OS thread per Hourglass thread, all started together.
//!
//! ```text
//!  main                                   thread i
//!  calibrate the TSC, read kernel facts
//!  allocate the trace, mlockall
//!  spawn ───────────────────────────────▶ pin, priority, timer slack, timer, working set
//!                                         measure its own loop iteration
//!  ◀──────────────────────────────────── ready (or why not)
//!  GAP = factor × slowest loop; t0
//!  go(t0, GAP) / abort ─────────────────▶ sleep until t0 + start
//!  sleep until t0 + duration              run the model until t0 + finish (records only)
//!  join ◀─────────────────────────────── CPU time, switches, work
//!  munlockall; records → RunResult
//! ```
//!
//! Nothing is printed while threads run. A real-time thread that would spin past its finish is
//! stopped by the kernel: RLIMIT_RTTIME's soft limit is set to the run's length plus a margin,
//! and SIGXCPU ends the process.

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use nix::sys::mman::{mlockall, munlockall, MlockAllFlags};
use nix::sys::resource::{getrlimit, getrusage, setrlimit, Resource, UsageWho};
use serde::{Deserialize, Serialize};

use crate::clock::{thread_cpu_ns, LoopTiming, Timebase};
use crate::error::Error;
use crate::experiment::{Experiment, GapChoice, ThreadSpec};
use crate::kernel::{self, KernelFacts};
use crate::models::{self, Scan, Window, Work};
use crate::priority;
use crate::timer::Timer;
use crate::trace::{Record, Trace};

/// What the TSC is and how it was calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TscFacts {
    pub hz: f64,
    /// Relative spread of the calibration rounds.
    pub spread: f64,
    pub invariant: bool,
    pub rdtscp: bool,
}

/// What one thread reported when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadOutcome {
    pub index: usize,
    /// The CPUs it was allowed (after pinning).
    pub cpus: Vec<usize>,
    pub loop_timing: LoopTiming,
    pub work: Work,
    /// CPU time the kernel accounted to the thread while its model ran (CLOCK_THREAD_CPUTIME_ID).
    pub cpu_time_ns: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

/// Everything a run produced, before analysis.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub tsc: TscFacts,
    /// Anchored at the common start (t0).
    pub timebase: Timebase,
    pub gap_ticks: u64,
    pub gap_ns: f64,
    pub threads: Vec<ThreadOutcome>,
    pub records: Vec<Record>,
    /// Records that did not fit in the trace buffer.
    pub dropped: u64,
    pub kernel: KernelFacts,
    /// Warnings about the run's conditions (memory not locked, TSC not invariant, ...).
    pub notes: Vec<String>,
}

impl RunResult {
    /// Seconds since the start for a TSC value.
    pub fn secs(&self, tsc: u64) -> f64 {
        self.timebase.since_ns(tsc) / 1e9
    }
}

/// Time the threads get between the go and the common start.
const START_MARGIN_NS: u64 = 50_000_000;

/// The TSC's rate, checked: gap detection needs RDTSCP and warns if the TSC is not invariant.
pub fn calibrate(notes: &mut Vec<String>) -> Result<TscFacts, Error> {
    if !arum_tsc::has_rdtscp() {
        return Err(Error::Machine(
            "this processor has no RDTSCP, which gap detection reads on every iteration".into(),
        ));
    }
    let cal = arum_tsc::Calibration::measure(Duration::from_millis(20), 5);
    if !cal.invariant {
        notes.push(
            "the TSC is not invariant (CPUID 0x80000007): its rate follows the CPU's frequency, \
             so times are only right while the frequency stays at the calibrated one"
                .into(),
        );
    }
    if cal.spread > 0.01 {
        notes.push(format!(
            "TSC calibration rounds disagree by {:.2}%: times may be off by as much",
            cal.spread * 100.0
        ));
    }
    Ok(TscFacts {
        hz: cal.hz,
        spread: cal.spread,
        invariant: cal.invariant,
        rdtscp: true,
    })
}

/// Runs the experiment and returns its records.
pub fn run(exp: &Experiment) -> Result<RunResult, Error> {
    let mut notes = Vec::new();
    let tsc = calibrate(&mut notes)?;
    let mut kernel = KernelFacts::read();
    let trace = Arc::new(Trace::new(exp.records));
    let latency = exp
        .threads
        .iter()
        .any(|t| matches!(t.workload, crate::experiment::Workload::Lat { .. }));
    let _shallow = match (latency, exp.deep_idle) {
        (true, false) => match crate::idle::ShallowIdle::hold() {
            Ok(held) => {
                notes.push(
                    "CPU idle states held shallow for the run (/dev/cpu_dma_latency at 0 µs, \
                     as cyclictest does; --deep-idle leaves them alone)"
                        .into(),
                );
                Some(held)
            }
            Err(why) => {
                notes.push(format!(
                    "CPU idle states could not be held shallow ({why}): wake-ups from idle add \
                     the idle state's exit latency, which cyclictest avoids as root"
                ));
                None
            }
        },
        _ => None,
    };
    let locked = mlockall(lock_flags());
    if let Err(e) = locked {
        notes.push(format!(
            "memory not locked (mlockall: {e}): the trace and working sets were written \
             beforehand, but page faults may still show as gaps; run as root or raise ulimit -l"
        ));
    }
    let rt_limit = exp
        .threads
        .iter()
        .any(|t| t.priority.is_realtime())
        .then(|| limit_realtime(exp.duration + Duration::from_secs(2)));
    let result = run_threads(exp, &trace, tsc, &mut notes);
    if let Some(Some(old)) = rt_limit {
        let _ = setrlimit(Resource::RLIMIT_RTTIME, old.0, old.1);
    }
    if locked.is_ok() {
        let _ = munlockall();
    }
    let (timebase, gap_ticks, threads, ticked) = result?;
    kernel.hz_from_jiffies(ticked.jiffies, exp.duration.as_secs_f64());
    kernel.timer_rates(&ticked.timers[0], &ticked.timers[1], ticked.seconds);
    kernel.stolen(
        &ticked.steal[0],
        &ticked.steal[1],
        arum_camp::ticks_per_second(),
    );
    let dropped = trace.dropped();
    if dropped > 0 {
        notes.push(format!(
            "the trace buffer ({} records) filled up: {dropped} records were lost; raise -e",
            trace.capacity()
        ));
    }
    Ok(RunResult {
        tsc,
        timebase,
        gap_ticks,
        gap_ns: timebase.ns(gap_ticks),
        threads,
        records: trace.records(),
        dropped,
        kernel,
        notes,
    })
}

/// Lock what is mapped now, and what will be (thread stacks, working sets) only when the
/// locked-memory limit cannot make those later allocations fail: with MCL_FUTURE, a mapping
/// over RLIMIT_MEMLOCK fails, and an allocation failure would end the process. Without it, the
/// working sets are still written through before the run.
fn lock_flags() -> MlockAllFlags {
    let unlimited = getrlimit(Resource::RLIMIT_MEMLOCK)
        .is_ok_and(|(soft, _)| soft == nix::sys::resource::RLIM_INFINITY);
    // Root is not bound by RLIMIT_MEMLOCK (CAP_IPC_LOCK).
    let root = nix::unistd::geteuid().is_root();
    if unlimited || root {
        MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE
    } else {
        MlockAllFlags::MCL_CURRENT
    }
}

/// Lowers RLIMIT_RTTIME's soft limit to `d` (SIGXCPU then ends the process); returns the old
/// limits to restore.
fn limit_realtime(d: Duration) -> Option<(u64, u64)> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_RTTIME).ok()?;
    let want = (d.as_micros() as u64).min(hard);
    if want < soft {
        setrlimit(Resource::RLIMIT_RTTIME, want, hard).ok()?;
    }
    Some((soft, hard))
}

/// What main tells each thread once all are ready.
#[derive(Clone, Copy)]
struct Go {
    timebase: Timebase,
    gap_ticks: u64,
}

type Ran = (Timebase, u64, Vec<ThreadOutcome>, Ticked);

/// The kernel's tick counters read before the go and after the threads ended.
struct Ticked {
    jiffies: u64,
    /// Local timer interrupts per CPU, before and after (empty where not listed).
    timers: [Vec<(u32, u64)>; 2],
    /// Time the host took each CPU away (steal, in clock ticks), before and after.
    steal: [Vec<(u32, u64)>; 2],
    seconds: f64,
}

/// Each CPU's local timer interrupts so far (none where /proc/interrupts has no `LOC` line).
fn local_timers() -> Vec<(u32, u64)> {
    arum_camp::interrupt_per_cpu("LOC").unwrap_or_default()
}

/// Each CPU's steal time so far, in clock ticks (/proc/stat).
fn steal() -> Vec<(u32, u64)> {
    arum_camp::stat()
        .map(|s| s.cpus.iter().map(|(cpu, t)| (*cpu, t.steal)).collect())
        .unwrap_or_default()
}

/// What a thread gives back when it ends: its outcome, its failure, or nothing (no go).
type Joined = Option<Result<ThreadOutcome, String>>;

/// The experiment's threads, started: each says when it is ready, then waits for its go (None:
/// give up).
struct Spawned {
    ready: mpsc::Receiver<(usize, Result<LoopTiming, String>)>,
    go: Vec<mpsc::Sender<Option<Go>>>,
    handles: Vec<std::thread::JoinHandle<Joined>>,
}

fn run_threads(
    exp: &Experiment,
    trace: &Arc<Trace>,
    tsc: TscFacts,
    notes: &mut Vec<String>,
) -> Result<Ran, Error> {
    let setup_tb = Timebase::anchor(tsc.hz);
    let spawned = spawn_threads(exp, trace, setup_tb)?;
    let (loops, mut failure) = await_ready(&spawned.ready, exp.threads.len());
    let gap_ns = gap_ns(exp, &loops);
    let t0 = arum_tsc::monotonic_ns() + START_MARGIN_NS;
    let timebase = Timebase::anchor(tsc.hz);
    let timebase = Timebase {
        tsc0: timebase.tsc_at(t0),
        mono0_ns: t0,
        hz: tsc.hz,
    };
    let go = failure.is_none().then_some(Go {
        timebase,
        gap_ticks: timebase.ticks(gap_ns).max(1),
    });
    let jiffies0 = kernel::jiffies();
    let (timers0, steal0, since) = (local_timers(), steal(), Instant::now());
    for tx in &spawned.go {
        let _ = tx.send(go);
    }
    if go.is_some() {
        Timer::Nanosleep
            .sleep_until(t0 + exp.duration.as_nanos() as u64)
            .map_err(|e| Error::Machine(format!("clock_nanosleep failed: {e}")))?;
    }
    let outcomes = join_threads(spawned.handles, &mut failure);
    if let Some(f) = failure {
        return Err(f);
    }
    let ticked = Ticked {
        jiffies: match (jiffies0, kernel::jiffies()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => 0,
        },
        timers: [timers0, local_timers()],
        steal: [steal0, steal()],
        seconds: since.elapsed().as_secs_f64(),
    };
    let late: Vec<usize> = outcomes
        .iter()
        .filter(|o| o.work.iterations == 0 && o.work.jobs == 0)
        .map(|o| o.index)
        .collect();
    if !late.is_empty() {
        notes.push(format!("threads {late:?} never ran during their window"));
    }
    Ok((timebase, go.map_or(1, |g| g.gap_ticks), outcomes, ticked))
}

/// Starts a thread per thread of the experiment.
fn spawn_threads(
    exp: &Experiment,
    trace: &Arc<Trace>,
    setup_tb: Timebase,
) -> Result<Spawned, Error> {
    let (ready_tx, ready_rx) = mpsc::channel::<(usize, Result<LoopTiming, String>)>();
    let mut go_txs = Vec::new();
    let mut handles = Vec::new();
    for (index, spec) in exp.threads.iter().enumerate() {
        let (go_tx, go_rx) = mpsc::channel::<Option<Go>>();
        go_txs.push(go_tx);
        let spec = spec.clone();
        let trace = trace.clone();
        let ready = ready_tx.clone();
        let duration = exp.duration;
        let handle = std::thread::Builder::new()
            .name(format!("hourglass-{index}"))
            .stack_size(256 << 10)
            .spawn(move || thread_main(index, spec, duration, &trace, setup_tb, ready, go_rx))
            .map_err(|e| Error::Thread {
                thread: index,
                why: format!("cannot create it: {e}; check ulimit -u"),
            })?;
        handles.push(handle);
    }
    drop(ready_tx);
    Ok(Spawned {
        ready: ready_rx,
        go: go_txs,
        handles,
    })
}

/// Each thread's loop timing as it says it is ready, and the first failure.
fn await_ready(
    ready: &mpsc::Receiver<(usize, Result<LoopTiming, String>)>,
    threads: usize,
) -> (Vec<Option<LoopTiming>>, Option<Error>) {
    let mut loops = vec![None; threads];
    let mut failure = None;
    for _ in 0..threads {
        match ready.recv() {
            Ok((i, Ok(t))) => loops[i] = Some(t),
            Ok((i, Err(why))) => {
                failure.get_or_insert(Error::Thread { thread: i, why });
            }
            Err(_) => break,
        }
    }
    (loops, failure)
}

/// GAP in nanoseconds: as given, or the factor times the slowest loop iteration of the threads
/// that trace intervals.
fn gap_ns(exp: &Experiment, loops: &[Option<LoopTiming>]) -> f64 {
    let slowest = exp
        .threads
        .iter()
        .zip(loops)
        .filter(|(s, _)| s.workload.traces_intervals())
        .filter_map(|(_, l)| l.map(|l| l.median_ns))
        .fold(0.0, f64::max);
    match exp.gap {
        GapChoice::Fixed { gap } => gap.as_nanos() as f64,
        GapChoice::Auto { factor } => {
            // Only latency threads: no interval is traced, GAP matters to none.
            let per_iteration = if slowest > 0.0 { slowest } else { 20.0 };
            factor * per_iteration
        }
    }
}

/// Joins every thread: the outcomes of those that ran; a failure, when none came before, in
/// `failure`.
fn join_threads(
    handles: Vec<std::thread::JoinHandle<Joined>>,
    failure: &mut Option<Error>,
) -> Vec<ThreadOutcome> {
    let mut outcomes = Vec::new();
    for (i, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(Some(Ok(o))) => outcomes.push(o),
            Ok(Some(Err(why))) => {
                failure.get_or_insert(Error::Thread { thread: i, why });
            }
            Ok(None) => {}
            Err(_) => {
                failure.get_or_insert(Error::Thread {
                    thread: i,
                    why: "it panicked".into(),
                });
            }
        }
    }
    outcomes
}

fn switches() -> (u64, u64) {
    getrusage(UsageWho::RUSAGE_THREAD)
        .map(|u| {
            (
                u.voluntary_context_switches() as u64,
                u.involuntary_context_switches() as u64,
            )
        })
        .unwrap_or((0, 0))
}

fn thread_main(
    index: usize,
    spec: ThreadSpec,
    duration: Duration,
    trace: &Trace,
    setup_tb: Timebase,
    ready: mpsc::Sender<(usize, Result<LoopTiming, String>)>,
    go: mpsc::Receiver<Option<Go>>,
) -> Option<Result<ThreadOutcome, String>> {
    let setup = || -> Result<(Timer, Option<Scan>, LoopTiming), String> {
        if let Some(cpus) = &spec.affinity {
            priority::pin(cpus).map_err(|e| {
                format!("cannot run on CPUs {cpus:?}: {e}; name CPUs this process may use")
            })?;
        }
        priority::minimal_timer_slack().map_err(|e| format!("cannot set timer slack: {e}"))?;
        priority::apply(spec.priority).map_err(|e| priority::explain(spec.priority, &e))?;
        let timer = Timer::new(spec.timer).map_err(|e| format!("cannot create its timer: {e}"))?;
        let mut scan = spec.workload.scan_bytes().map(Scan::new).transpose()?;
        let timing = models::measure_loop(&setup_tb, scan.as_mut(), 5.0);
        // The measurement warmed the working set, as a long-running thread's would be; its
        // passes are not the run's work.
        if let Some(s) = scan.as_mut() {
            s.restart();
        }
        Ok((timer, scan, timing))
    };
    let (timer, mut scan, timing) = match setup() {
        Ok(s) => {
            let _ = ready.send((index, Ok(s.2)));
            s
        }
        Err(why) => {
            let _ = ready.send((index, Err(why)));
            return None;
        }
    };
    drop(ready);
    let go = go.recv().ok().flatten()?;
    let (start, finish) = spec.window(duration);
    let t0 = go.timebase.mono0_ns;
    let window = Window {
        timebase: go.timebase,
        start_mono: t0 + start.as_nanos() as u64,
        finish_mono: t0 + finish.as_nanos() as u64,
        finish_tsc: go.timebase.tsc_at(t0 + finish.as_nanos() as u64),
    };
    if let Err(e) = Timer::Nanosleep.sleep_until(window.start_mono) {
        return Some(Err(format!("cannot wait for its start: {e}")));
    }
    let cpu0 = thread_cpu_ns();
    let (v0, i0) = switches();
    let work = match models::run(
        spec.workload,
        index as u16,
        trace,
        go.gap_ticks,
        window,
        &timer,
        scan.as_mut(),
    ) {
        Ok(w) => w,
        Err(e) => return Some(Err(format!("its timer failed: {e}"))),
    };
    let (v1, i1) = switches();
    Some(Ok(ThreadOutcome {
        index,
        cpus: priority::allowed_cpus(),
        loop_timing: timing,
        work,
        cpu_time_ns: thread_cpu_ns() - cpu0,
        voluntary_switches: v1 - v0,
        involuntary_switches: i1 - i0,
    }))
}
