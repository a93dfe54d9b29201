//! The thread execution models (the paper's §3.2), each a loop around the gap detector. Every
//! model stops by itself at its thread's finish time; nothing here allocates, prints or takes a
//! lock once the run started.

use std::io;

use serde::{Deserialize, Serialize};

use crate::clock::{LoopMeter, LoopTiming, Timebase};
use crate::experiment::Workload;
use crate::gap::{Detector, Sink};
use crate::timer::Timer;
use crate::trace::{End, Job, Record, Trace, Wake};

/// What a thread did besides its trace records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    /// Gap-detection loop iterations.
    pub iterations: u64,
    /// Passes over the working set (scan models): the paper's unit of work for Figure 5.
    pub passes: f64,
    /// Jobs served (periodic models) or wake-ups (latency test).
    pub jobs: u64,
    /// Times the thread yielded.
    pub yields: u64,
}

/// A working set walked one cache line per loop iteration.
pub struct Scan {
    data: Vec<u64>,
    at: usize,
    lines: u64,
    sum: u64,
}

const WORDS_PER_LINE: usize = 8;

impl Scan {
    /// Allocates and writes the whole working set, so no page faults later. An allocation the
    /// system refuses is an error, not an abort.
    pub fn new(bytes: usize) -> Result<Scan, String> {
        let words = (bytes / 8).max(WORDS_PER_LINE);
        let mut data = Vec::new();
        data.try_reserve_exact(words).map_err(|_| {
            format!(
                "the system refused {} for a thread's working set; choose a smaller size or fewer threads",
                arum_units::size::format(bytes as f64)
            )
        })?;
        data.extend(0..words as u64);
        Ok(Scan {
            data,
            at: 0,
            lines: 0,
            sum: 0,
        })
    }

    #[inline(always)]
    pub fn step(&mut self) {
        // `at` stays below `data.len()` by the wrap below.
        self.sum = self.sum.wrapping_add(self.data[self.at]);
        self.at += WORDS_PER_LINE;
        if self.at >= self.data.len() {
            self.at = 0;
        }
        self.lines += 1;
    }

    /// Starts counting work again (after the loop was measured with this working set).
    pub fn restart(&mut self) {
        self.at = 0;
        self.lines = 0;
    }

    pub fn passes(&self) -> f64 {
        let per_pass = self.data.len().div_ceil(WORDS_PER_LINE) as f64;
        std::hint::black_box(self.sum);
        self.lines as f64 / per_pass
    }
}

/// The times that bound one thread's run.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub timebase: Timebase,
    /// CLOCK_MONOTONIC ns at which the thread started and must stop.
    pub start_mono: u64,
    pub finish_mono: u64,
    /// The finish as a TSC value.
    pub finish_tsc: u64,
}

/// Measures the model's own loop iteration (a gap-detection read, plus a working-set step for
/// scan models) for `ms` milliseconds.
pub fn measure_loop(timebase: &Timebase, mut scan: Option<&mut Scan>, ms: f64) -> LoopTiming {
    let mut meter = LoopMeter::new(timebase, 20_000.0);
    let until = arum_tsc::read() + timebase.ticks(ms * 1e6);
    let (mut last, _) = arum_tsc::read_ordered();
    loop {
        let (now, _) = arum_tsc::read_ordered();
        meter.add(now.wrapping_sub(last));
        last = now;
        if let Some(s) = scan.as_deref_mut() {
            s.step();
        }
        if now >= until {
            break;
        }
    }
    meter.timing(timebase)
}

/// Runs `workload` from now until the window's finish, recording into `trace`.
pub fn run(
    workload: Workload,
    thread: u16,
    trace: &Trace,
    gap_ticks: u64,
    window: Window,
    timer: &Timer,
    scan: Option<&mut Scan>,
) -> io::Result<Work> {
    let tb = window.timebase;
    let ticks = |d: std::time::Duration| tb.ticks(d.as_nanos() as f64);
    let mut det = Detector::new(trace, thread, gap_ticks);
    let work = match (workload, scan) {
        (Workload::Cpu, _) => cpu(&mut det, window, None),
        (Workload::CpuScan { .. }, scan) => cpu(&mut det, window, scan),
        (Workload::CpuYield { amount }, _) => yielding(&mut det, window, ticks(amount), None),
        (Workload::CpuScanYield { amount, .. }, scan) => {
            yielding(&mut det, window, ticks(amount), scan)
        }
        (Workload::Periodic { amount, period }, _) => periodic(
            &mut det,
            window,
            ticks(amount),
            period.as_nanos() as u64,
            timer,
        )?,
        (Workload::CpuPeriodic { amount, period }, _) => {
            cpu_periodic(&mut det, window, ticks(amount), ticks(period))
        }
        (Workload::Lat { period }, _) => {
            return latency(trace, thread, window, period.as_nanos() as u64, timer)
        }
    };
    det.stop(End::Finish);
    Ok(work)
}

/// CPU and CPU_SCAN: run whenever possible.
fn cpu<S: Sink>(det: &mut Detector<S>, w: Window, scan: Option<&mut Scan>) -> Work {
    let mut work = Work::default();
    match scan {
        None => {
            while det.poll() < w.finish_tsc {
                work.iterations += 1;
            }
        }
        Some(s) => {
            while det.poll() < w.finish_tsc {
                s.step();
                work.iterations += 1;
            }
            work.passes = s.passes();
        }
    }
    work
}

/// CPU_YIELD and CPU_SCAN_YIELD: yield each time `amount` ticks of CPU were received.
fn yielding<S: Sink>(
    det: &mut Detector<S>,
    w: Window,
    amount: u64,
    mut scan: Option<&mut Scan>,
) -> Work {
    let mut work = Work::default();
    det.take_received();
    'run: loop {
        while det.received() < amount {
            if det.poll() >= w.finish_tsc {
                break 'run;
            }
            if let Some(s) = scan.as_deref_mut() {
                s.step();
            }
            work.iterations += 1;
        }
        det.take_received();
        det.stop(End::Yield);
        // It cannot fail on Linux.
        let _ = nix::sched::sched_yield();
        det.resume();
        work.yields += 1;
    }
    if let Some(s) = scan {
        work.passes = s.passes();
    }
    work
}

/// PERIODIC: job k is released at start + k·period and needs `amount` ticks of CPU by the next
/// release, its deadline. Between jobs the thread waits on its timer. A job not served by its
/// deadline is a miss and is abandoned there, as an audio thread drops a late buffer: the next
/// period starts on time, and one stall costs the periods it covers, not a backlog after it.
fn periodic<S: Sink>(
    det: &mut Detector<S>,
    w: Window,
    amount: u64,
    period_ns: u64,
    timer: &Timer,
) -> io::Result<Work> {
    let mut work = Work::default();
    let mut release = w.start_mono;
    while release + period_ns <= w.finish_mono {
        let mut anchor = w.timebase.reanchor();
        if anchor.mono0_ns < release {
            if timer.blocks() {
                det.stop(End::Block);
                timer.sleep_until(release)?;
                det.resume();
            } else {
                let at = anchor.tsc_at(release);
                while det.poll_idle() < at {}
            }
            anchor = w.timebase.reanchor();
            det.wake(anchor.tsc0, anchor.mono0_ns.saturating_sub(release));
        }
        let released = anchor.tsc_at(release);
        let deadline = anchor.tsc_at(release + period_ns);
        let served = serve(det, amount, deadline, &mut work);
        det.job(served.job(released, deadline));
        work.jobs += 1;
        release += period_ns;
    }
    Ok(work)
}

/// How a job ended.
enum Served {
    /// Served at this TSC value.
    At(u64),
    /// Abandoned at the deadline still lacking this many ticks of CPU.
    Short(u64),
}

impl Served {
    /// The job's record. A missed job's finish is its deadline plus the CPU it still lacked:
    /// the earliest it could have been served, so its lateness is a lower bound.
    fn job(&self, release: u64, deadline: u64) -> Job {
        Job {
            thread: 0,
            release,
            deadline,
            finish: match *self {
                Served::At(t) => t,
                Served::Short(lack) => deadline + lack.max(1),
            },
        }
    }
}

/// Runs until `amount` ticks were received or the deadline passed.
fn serve<S: Sink>(det: &mut Detector<S>, amount: u64, deadline: u64, work: &mut Work) -> Served {
    det.take_received();
    while det.received() < amount {
        if det.poll() >= deadline {
            return Served::Short(amount.saturating_sub(det.received()));
        }
        work.iterations += 1;
    }
    Served::At(det.last())
}

/// CPU_PERIODIC: never blocks; a job starts when the previous one ended and is due one period
/// after it started (a frame not produced within the period is a miss, and is abandoned).
fn cpu_periodic<S: Sink>(det: &mut Detector<S>, w: Window, amount: u64, period: u64) -> Work {
    let mut work = Work::default();
    loop {
        let started = det.last();
        let deadline = started + period;
        if deadline > w.finish_tsc {
            break;
        }
        let served = serve(det, amount, deadline, &mut work);
        det.job(served.job(started, deadline));
        work.jobs += 1;
    }
    work
}

/// LAT: sleep until `period` after the last wake-up (re-synchronising to the timer, as the
/// original), record how late the wake-up was. Records no intervals.
fn latency(
    trace: &Trace,
    thread: u16,
    w: Window,
    period_ns: u64,
    timer: &Timer,
) -> io::Result<Work> {
    let mut work = Work::default();
    let mut woke = arum_tsc::monotonic_ns();
    loop {
        let next = woke + period_ns;
        if next > w.finish_mono {
            break;
        }
        timer.sleep_until(next)?;
        // Read the clock first, as cyclictest does, then the TSC (which gives the CPU).
        woke = arum_tsc::monotonic_ns();
        let (at, aux) = arum_tsc::read_ordered();
        trace.push(Record::Wake(Wake {
            thread,
            cpu: arum_tsc::cpu_of_aux(aux) as u16,
            at,
            lateness_ns: woke.saturating_sub(next),
        }));
        work.jobs += 1;
    }
    Ok(work)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_counts_passes_from_its_restart() {
        let _one = crate::exclusive();
        let mut s = Scan::new(8192).unwrap();
        for _ in 0..1000 {
            s.step();
        }
        s.restart();
        for _ in 0..256 {
            s.step();
        }
        // 8 KiB is 128 lines: 256 steps are two passes.
        assert_eq!(s.passes(), 2.0);
    }
}
