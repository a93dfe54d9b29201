//! The one periodic-sampler helper behind every thread that watches a run (the tree's peak
//! memory, `-I` counter readings, the ambient sampler): a named thread that calls a tick function
//! on a cadence until it is stopped, then hands back what it gathered. Stopping is prompt (the
//! thread parks between ticks and is unparked), and dropping a sampler that was never finished
//! stops and joins it, so no failure path leaves a thread running.
//!
//! Every sampler keeps to a CPU budget: a tick that took more than 1/`BUDGET` of the time to the
//! next one of its cadence (many CPUs to read, thousands of threads) moves the next tick out to
//! `BUDGET` times its own CPU time, and the sampler's [`Load`] says so for the report's note.
//! benchmarks/scale.sh prints the samplers' CPU share at 2 to 64 CPUs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A tick's CPU time may be at most this fraction's inverse of the time to the next: 1%.
pub const BUDGET: u32 = 100;

/// What sampling cost: the sampler thread's ticks, their CPU time, and the longest time between
/// ticks that the budget imposed beyond the cadence (None: the cadence held).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    pub ticks: u64,
    pub cpu_ns: u64,
    pub stretched_to: Option<Duration>,
    /// The share of a CPU its ticks were allowed, in percent.
    pub budget_percent: u32,
}

impl Load {
    /// The report's note when the budget stretched the cadence, naming what was sampled.
    pub fn note(&self, what: &str) -> Option<String> {
        let to = self.stretched_to?;
        Some(format!(
            "{what}: samples were taken up to {} apart, not as often as asked, to keep the sampler within {}% of a CPU ({} of CPU over {} samples)",
            arum_units::duration::format_ns(to.as_nanos() as f64),
            self.budget_percent,
            arum_units::duration::format_ns(self.cpu_ns as f64),
            self.ticks
        ))
    }
}

/// Each sampler thread's load as it ended, by its thread's name, until `take_loads` collects
/// them for the run's self-timing. (Process-wide: a run's samplers end before its report is made,
/// and runs of a series follow one another.)
static LOADS: std::sync::Mutex<Vec<(String, Load)>> = std::sync::Mutex::new(Vec::new());

/// The loads of the sampler threads that ended since the last call.
pub fn take_loads() -> Vec<(String, Load)> {
    std::mem::take(&mut *LOADS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// This thread's CPU time so far, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// A sampler's schedule and what its ticks cost.
struct Pace {
    due: Schedule,
    load: Load,
    started: Instant,
    /// The inverse of the CPU share its ticks may take ([`BUDGET`] unless spawned with another).
    budget: u32,
}

impl Pace {
    /// Runs one tick at `elapsed` and charges its CPU time; unless it is the `last`, the next
    /// deadline follows the cadence, the tick's back-off and the budget, whichever is latest.
    fn run<S>(
        &mut self,
        state: &mut S,
        tick: &mut impl FnMut(&mut S, Tick) -> Duration,
        elapsed: Duration,
        last: bool,
    ) {
        let cpu = thread_cpu_ns();
        let back_off = tick(state, Tick { elapsed, last });
        let cost = thread_cpu_ns().saturating_sub(cpu);
        self.load.ticks += 1;
        self.load.cpu_ns += cost;
        if last {
            return;
        }
        let floor = Duration::from_nanos(cost.saturating_mul(u64::from(self.budget)));
        if floor > self.due.gap_now() && floor > back_off {
            self.load.stretched_to = self.load.stretched_to.max(Some(floor));
        }
        self.due
            .advance(self.started.elapsed(), back_off.max(floor));
    }
}

/// When ticks happen, relative to the sampler's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cadence {
    /// At the start, then every `first`, the interval growing by 1/4 per tick up to `max`: dense
    /// for short programs, light for long ones.
    Growing { first: Duration, max: Duration },
    /// At start + k × `period` (absolute deadlines, so the cadence does not drift); the first
    /// tick at the start when `at_start`.
    Fixed { period: Duration, at_start: bool },
    /// Only at the start (and at the stop, with [`Sampler::finish`]'s final tick).
    AtStartOnly,
}

/// Where the first tick at the start runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstTick {
    /// On the sampler's own thread, soon after the spawn.
    Thread,
    /// On the caller's thread, before `spawn` returns: the sample is known to precede whatever
    /// the caller does next (the ambient sampler's first sample precedes the release).
    Caller,
}

/// Passed to each tick.
#[derive(Debug, Clone, Copy)]
pub struct Tick {
    /// Since the sampler was spawned.
    pub elapsed: Duration,
    /// The tick taken when the sampler was stopped (only with `final_tick`).
    pub last: bool,
}

pub struct Sampler<T> {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<(T, Load)>>,
}

impl<T: Send + 'static> Sampler<T> {
    /// Starts thread `name`. `tick` is called on `cadence`, the tick at the start on the thread
    /// given by `first`, and once more when stopped if `final_tick`; each tick returns the least
    /// time to leave before the next one (a costly tick backs off; zero lets the cadence decide).
    /// `done` turns the state into the sampler's result. `None` if the thread could not be
    /// created (the caller reports the facility's data as missing).
    pub fn spawn<S: Send + 'static>(
        name: &str,
        timing: (Cadence, FirstTick, bool),
        state: S,
        tick: impl FnMut(&mut S, Tick) -> Duration + Send + 'static,
        done: impl FnOnce(S) -> T + Send + 'static,
    ) -> Option<Self> {
        Self::spawn_with_budget(name, timing, BUDGET, state, tick, done)
    }

    /// `spawn`, its ticks allowed 1/`budget` of the time to the next instead of 1/[`BUDGET`].
    pub fn spawn_with_budget<S: Send + 'static>(
        name: &str,
        (cadence, first, final_tick): (Cadence, FirstTick, bool),
        budget: u32,
        mut state: S,
        mut tick: impl FnMut(&mut S, Tick) -> Duration + Send + 'static,
        done: impl FnOnce(S) -> T + Send + 'static,
    ) -> Option<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let started = Instant::now();
        let mut pace = Pace {
            due: Schedule::new(cadence),
            load: Load {
                budget_percent: 100 / budget.max(1),
                ..Load::default()
            },
            started,
            budget,
        };
        if first == FirstTick::Caller && pace.due.next == Some(Duration::ZERO) {
            pace.run(&mut state, &mut tick, Duration::ZERO, false);
        }
        let own_name = name.to_string();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                while let Some(at) = pace.due.next {
                    if !wait_until(&flag, started + at) {
                        break;
                    }
                    pace.run(&mut state, &mut tick, started.elapsed(), false);
                }
                if pace.due.next.is_none() {
                    // Nothing more is due: wait for the stop.
                    while !flag.load(Ordering::SeqCst) {
                        std::thread::park();
                    }
                }
                if final_tick {
                    pace.run(&mut state, &mut tick, started.elapsed(), true);
                }
                LOADS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((own_name, pace.load));
                (done(state), pace.load)
            })
            .ok()?;
        Some(Sampler {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the thread (after its final tick, if it has one) and returns its result.
    pub fn finish(self) -> Option<T> {
        self.finish_with_load().map(|(t, _)| t)
    }

    /// `finish`, with what the sampling cost.
    pub fn finish_with_load(mut self) -> Option<(T, Load)> {
        self.halt()
    }

    fn halt(&mut self) -> Option<(T, Load)> {
        self.stop.store(true, Ordering::SeqCst);
        let thread = self.thread.take()?;
        thread.thread().unpark();
        thread.join().ok()
    }
}

impl<T> Drop for Sampler<T> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// The next tick's time since the start, per cadence.
struct Schedule {
    cadence: Cadence,
    next: Option<Duration>,
    /// Growing: the current gap. Fixed: the index of the next deadline.
    gap: Duration,
    index: u32,
}

impl Schedule {
    fn new(cadence: Cadence) -> Schedule {
        let (next, gap, index) = match cadence {
            Cadence::Growing { first, .. } => (Duration::ZERO, first, 0),
            Cadence::Fixed { period, at_start } => {
                let index = u32::from(!at_start);
                (period * index, Duration::ZERO, index)
            }
            Cadence::AtStartOnly => (Duration::ZERO, Duration::ZERO, 0),
        };
        Schedule {
            cadence,
            next: Some(next),
            gap,
            index,
        }
    }

    /// The time the cadence leaves between this tick and the next.
    fn gap_now(&self) -> Duration {
        match self.cadence {
            Cadence::Growing { .. } => self.gap,
            Cadence::Fixed { period, .. } => period,
            Cadence::AtStartOnly => Duration::MAX,
        }
    }

    /// After a tick that ended at `now` and asked for at least `back_off` before the next.
    fn advance(&mut self, now: Duration, back_off: Duration) {
        self.next = match self.cadence {
            Cadence::Growing { max, .. } => {
                let at = now + self.gap.max(back_off);
                self.gap = (self.gap * 5 / 4).min(max);
                Some(at)
            }
            Cadence::Fixed { period, .. } => {
                // Skip deadlines a slow tick overran (or that come before its back-off) rather
                // than bunching ticks up.
                self.index += 1;
                while period * self.index < now + back_off {
                    self.index += 1;
                }
                Some(period * self.index)
            }
            Cadence::AtStartOnly => None,
        };
    }
}

/// Parks until `deadline` or the stop flag; false when stopped first.
fn wait_until(stop: &AtomicBool, deadline: Instant) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::park_timeout(deadline - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn record(cadence: Cadence, final_tick: bool, run_for: Duration) -> Vec<Tick> {
        let s = Sampler::spawn(
            "test",
            (cadence, FirstTick::Thread, final_tick),
            Vec::new(),
            |v: &mut Vec<Tick>, t| {
                v.push(t);
                Duration::ZERO
            },
            |v| v,
        )
        .unwrap();
        std::thread::sleep(run_for);
        s.finish().unwrap()
    }

    #[test]
    fn fixed_cadence_keeps_absolute_deadlines_and_skips_overrun_ones() {
        let ms = Duration::from_millis;
        let mut s = Schedule::new(Cadence::Fixed {
            period: ms(20),
            at_start: false,
        });
        assert_eq!(s.next, Some(ms(20)));
        // A tick ending 3 ms late keeps the next deadline on the grid.
        s.advance(ms(23), Duration::ZERO);
        assert_eq!(s.next, Some(ms(40)));
        // A tick that overran two deadlines skips them instead of bunching ticks up.
        s.advance(ms(85), Duration::ZERO);
        assert_eq!(s.next, Some(ms(100)));
        // A costly tick's back-off moves the next one to the first deadline after it.
        s.advance(ms(101), ms(30));
        assert_eq!(s.next, Some(ms(140)));
    }

    #[test]
    fn growing_cadence_backs_off_at_least_as_asked() {
        let ms = Duration::from_millis;
        let mut s = Schedule::new(Cadence::Growing {
            first: ms(2),
            max: ms(50),
        });
        assert_eq!(s.next, Some(Duration::ZERO));
        s.advance(ms(1), Duration::ZERO);
        assert_eq!(s.next, Some(ms(3)));
        s.advance(ms(3), ms(40));
        assert_eq!(s.next, Some(ms(43)));
    }

    // A tick that costs 2 ms of CPU on a 10 ms cadence would use 20% of a CPU: the ticks after it
    // come at least 100 × its cost later, and the load says how far apart. A cheap tick on the
    // same cadence keeps it. (CPU time, not wall time: a busy machine only spaces ticks further.)
    #[test]
    fn a_costly_tick_stretches_the_cadence_to_the_budget() {
        let cadence = Cadence::Fixed {
            period: Duration::from_millis(10),
            at_start: true,
        };
        let spin = |v: &mut Vec<Duration>, t: Tick| {
            v.push(t.elapsed);
            let start = thread_cpu_ns();
            while thread_cpu_ns() < start + 2_000_000 {}
            Duration::ZERO
        };
        // The first tick runs here, before spawn returns: there is one to judge, however long
        // a busy machine keeps the sampler's thread waiting.
        let s = Sampler::spawn(
            "test",
            (cadence, FirstTick::Caller, false),
            Vec::new(),
            spin,
            |v| v,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(450));
        let (ticks, load) = s.finish_with_load().unwrap();
        assert!(
            ticks
                .windows(2)
                .all(|w| w[1] - w[0] >= Duration::from_millis(200)),
            "{ticks:?}"
        );
        assert!(
            load.stretched_to >= Some(Duration::from_millis(200)),
            "{load:?}"
        );
        assert!(load.cpu_ns >= 2_000_000 * load.ticks, "{load:?}");
        assert!(load
            .note("the test sampler")
            .unwrap()
            .contains("within 1% of a CPU"));
        let cheap = |v: &mut Vec<Duration>, t: Tick| {
            v.push(t.elapsed);
            Duration::ZERO
        };
        let s = Sampler::spawn(
            "test",
            (cadence, FirstTick::Thread, false),
            Vec::new(),
            cheap,
            |v| v,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let (_, load) = s.finish_with_load().unwrap();
        assert_eq!(load.stretched_to, None, "{load:?}");
        assert_eq!(load.note("x"), None);
    }

    #[test]
    fn a_fixed_sampler_ends_with_its_final_tick() {
        let ticks = record(
            Cadence::Fixed {
                period: Duration::from_millis(20),
                at_start: false,
            },
            true,
            Duration::from_millis(110),
        );
        assert!(ticks.last().unwrap().last);
        assert_eq!(ticks.iter().filter(|t| t.last).count(), 1);
        // Every regular tick on or after a deadline of its own (the thread may be starved on a
        // busy machine: then it skips deadlines, never runs early).
        let slots: Vec<u128> = ticks
            .iter()
            .filter(|t| !t.last)
            .map(|t| t.elapsed.as_millis() / 20)
            .collect();
        assert!(slots.iter().all(|&k| k >= 1), "{ticks:?}");
        assert!(slots.windows(2).all(|w| w[0] < w[1]), "{ticks:?}");
    }

    #[test]
    fn at_start_only_ticks_at_start_and_stop() {
        let ticks = record(Cadence::AtStartOnly, true, Duration::from_millis(30));
        assert_eq!(ticks.len(), 2, "{ticks:?}");
        assert!(!ticks[0].last && ticks[1].last);
        assert!(ticks[1].elapsed >= Duration::from_millis(30));
    }

    #[test]
    fn a_first_tick_on_the_caller_is_done_when_spawn_returns() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let s = Sampler::spawn(
            "test-first",
            (Cadence::AtStartOnly, FirstTick::Caller, true),
            (),
            move |_, t| {
                log.lock().unwrap().push(t.last);
                Duration::ZERO
            },
            |_| (),
        )
        .unwrap();
        assert_eq!(*seen.lock().unwrap(), [false], "the start tick already ran");
        s.finish();
        assert_eq!(*seen.lock().unwrap(), [false, true]);
    }

    #[test]
    fn dropping_an_unfinished_sampler_stops_its_thread() {
        let alive = Arc::new(Mutex::new(0u32));
        let counter = alive.clone();
        let s = Sampler::spawn(
            "test-drop",
            (
                Cadence::Fixed {
                    period: Duration::from_millis(1),
                    at_start: true,
                },
                FirstTick::Thread,
                false,
            ),
            (),
            move |_, _| {
                *counter.lock().unwrap() += 1;
                Duration::ZERO
            },
            |_| (),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(10));
        drop(s);
        let after_drop = *alive.lock().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(*alive.lock().unwrap(), after_drop, "ticks after drop");
    }
}
