//! The clock every measurement reads: the TSC, fenced, converted to nanoseconds by a calibration
//! against CLOCK_MONOTONIC, with its own cost and the batch loop's cost measured once so that
//! measurements can subtract them.

use std::hint::black_box;
use std::time::Duration;

use arum_tsc::{begin, end, Calibration};

use crate::model::Tsc;

#[derive(Debug, Clone)]
pub struct Clock {
    pub calibration: Calibration,
    /// Ticks of an empty begin/end pair.
    pub timer_overhead: f64,
    /// Ticks per iteration of an empty batch loop.
    pub loop_overhead: f64,
}

impl Clock {
    /// Calibrates the TSC (`rounds` windows of `window`) and measures the timer's and the batch
    /// loop's own costs.
    pub fn calibrate(window: Duration, rounds: usize) -> Clock {
        let calibration = Calibration::measure(window, rounds);
        let mut clock = Clock {
            calibration,
            timer_overhead: 0.0,
            loop_overhead: 0.0,
        };
        // Both samples are never empty; an overhead of 0 would subtract nothing.
        clock.timer_overhead = arum_stats::median(&timer_pairs(20_000)).unwrap_or(0.0);
        let loops: Vec<f64> = (0..200)
            .map(|_| {
                let t0 = begin();
                empty_loop(1000);
                let t1 = end();
                ((t1 - t0) as f64 - clock.timer_overhead).max(0.0) / 1000.0
            })
            .collect();
        clock.loop_overhead = arum_stats::median(&loops).unwrap_or(0.0);
        clock
    }

    pub fn ns_per_tick(&self) -> f64 {
        1e9 / self.calibration.hz
    }

    pub fn ticks_to_ns(&self, ticks: f64) -> f64 {
        ticks * self.ns_per_tick()
    }

    /// TSC cycles per nanosecond (for showing `ns` figures in cycles).
    pub fn cycles_per_ns(&self) -> f64 {
        self.calibration.hz / 1e9
    }

    /// Times one operation; nanoseconds net of the timer's own cost (never below 0).
    #[inline(always)]
    pub fn single<R>(&self, f: impl FnOnce() -> R) -> (f64, R) {
        let t0 = begin();
        let r = f();
        let t1 = end();
        let ticks = ((t1 - t0) as f64 - self.timer_overhead).max(0.0);
        (self.ticks_to_ns(ticks), r)
    }

    /// Times `k` repetitions of `f`; nanoseconds per repetition, net of the timer's cost and
    /// the loop's per-iteration cost.
    #[inline(always)]
    pub fn batch(&self, k: u64, mut f: impl FnMut()) -> f64 {
        let t0 = begin();
        for i in 0..k {
            f();
            black_box(i);
        }
        let t1 = end();
        let ticks = ((t1 - t0) as f64 - self.timer_overhead) / k as f64 - self.loop_overhead;
        self.ticks_to_ns(ticks.max(0.0))
    }

    /// Raw nanoseconds between two TSC reads (long operations, nothing subtracted).
    pub fn elapsed_ns(&self, t0: u64, t1: u64) -> f64 {
        self.ticks_to_ns(t1.wrapping_sub(t0) as f64)
    }

    pub fn facts(&self) -> Tsc {
        Tsc {
            hz: self.calibration.hz,
            spread: self.calibration.spread,
            invariant: self.calibration.invariant,
            rdtscp: arum_tsc::has_rdtscp(),
            timer_overhead_ticks: self.timer_overhead,
            loop_overhead_ticks: self.loop_overhead,
        }
    }
}

/// Runs `f` until a run is not preempted (no involuntary context switch of this thread while it
/// ran), at most `tries` times; returns the last result and how many runs were preempted.
/// Samples of a millisecond or more are often cut by another process's turn on a busy machine;
/// such a sample measures the other process, not the operation.
pub fn unpreempted<T>(tries: usize, mut f: impl FnMut() -> T) -> (T, usize) {
    let mut preempted = 0;
    loop {
        let before = crate::sys::cpu::thread_preemptions();
        let r = f();
        if crate::sys::cpu::thread_preemptions() == before || preempted + 1 >= tries {
            return (r, preempted);
        }
        preempted += 1;
    }
}

/// `n` samples of an empty fenced begin/end pair, in ticks.
pub fn timer_pairs(n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let t0 = begin();
            let t1 = end();
            (t1 - t0) as f64
        })
        .collect()
}

/// The loop the batches run, with nothing in it.
#[inline(never)]
pub fn empty_loop(k: u64) {
    for i in 0..k {
        black_box(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_of_known_work_is_timed_near_its_length() {
        let clock = Clock::calibrate(Duration::from_millis(10), 3);
        assert!(clock.timer_overhead > 0.0 && clock.timer_overhead < 10_000.0);
        // A 2 ms sleep, timed singly, is at least 2 ms and (allowing for a loaded machine)
        // well under 50 ms.
        let (ns, ()) = clock.single(|| std::thread::sleep(Duration::from_millis(2)));
        assert!((2e6..5e7).contains(&ns), "{ns} ns");
        let per = clock.batch(10, || std::thread::sleep(Duration::from_micros(500)));
        assert!((5e5..2e7).contains(&per), "{per} ns");
    }
}
