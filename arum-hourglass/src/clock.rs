//! The run's time line: TSC ticks, anchored to CLOCK_MONOTONIC at the start and converted with
//! the calibrated rate; and the measured cost of one gap-detection loop iteration, from which
//! GAP is chosen.

use serde::{Deserialize, Serialize};

/// A TSC reading and a CLOCK_MONOTONIC reading taken together, and the TSC's rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timebase {
    pub tsc0: u64,
    pub mono0_ns: u64,
    /// TSC ticks per second (calibrated against CLOCK_MONOTONIC).
    pub hz: f64,
}

impl Timebase {
    /// Anchors now, with a rate measured before.
    pub fn anchor(hz: f64) -> Timebase {
        let (mono0_ns, tsc0) = arum_tsc::paired();
        Timebase { tsc0, mono0_ns, hz }
    }

    /// Ticks to nanoseconds.
    pub fn ns(&self, ticks: u64) -> f64 {
        ticks as f64 * 1e9 / self.hz
    }

    /// Nanoseconds to ticks.
    pub fn ticks(&self, ns: f64) -> u64 {
        (ns * self.hz / 1e9).round().max(0.0) as u64
    }

    /// A TSC value as nanoseconds since the anchor (negative before it).
    pub fn since_ns(&self, tsc: u64) -> f64 {
        (tsc as i128 - self.tsc0 as i128) as f64 * 1e9 / self.hz
    }

    /// The TSC value at a CLOCK_MONOTONIC time near the anchor.
    pub fn tsc_at(&self, mono_ns: u64) -> u64 {
        let d = mono_ns as i128 - self.mono0_ns as i128;
        (self.tsc0 as i128 + (d as f64 * self.hz / 1e9) as i128).max(0) as u64
    }

    /// The same rate, re-anchored now: converting times within a period of a fresh anchor keeps
    /// the rate's error to that period, not the run's length.
    pub fn reanchor(&self) -> Timebase {
        Timebase::anchor(self.hz)
    }
}

/// CPU time of the calling thread, in ns (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// How long one iteration of a gap-detection loop takes, from a distribution of successive
/// TSC deltas (deltas above 20 µs, which are gaps, left out).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoopTiming {
    pub iterations: u64,
    pub median_ns: f64,
    pub p99_ns: f64,
}

/// Collects successive-read deltas into a fine histogram of ticks, cheaply enough to sit inside
/// the loop being measured.
pub struct LoopMeter {
    counts: Vec<u64>,
    bucket_ticks: u64,
    n: u64,
}

impl LoopMeter {
    /// A histogram covering deltas up to `max_ns`, in buckets of about 1 ns.
    pub fn new(timebase: &Timebase, max_ns: f64) -> LoopMeter {
        let bucket_ticks = timebase.ticks(1.0).max(1);
        let buckets = (timebase.ticks(max_ns) / bucket_ticks + 1) as usize;
        LoopMeter {
            counts: vec![0; buckets],
            bucket_ticks,
            n: 0,
        }
    }

    #[inline(always)]
    pub fn add(&mut self, delta_ticks: u64) {
        if let Some(c) = self
            .counts
            .get_mut((delta_ticks / self.bucket_ticks) as usize)
        {
            *c += 1;
            self.n += 1;
        }
    }

    /// The iterations' median and 99th percentile, each bucket standing for its iterations by
    /// its middle; NaN when no iteration was seen.
    pub fn timing(&self, timebase: &Timebase) -> LoopTiming {
        let buckets = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let middle = i as u64 * self.bucket_ticks + self.bucket_ticks / 2;
                (timebase.ns(middle), c)
            });
        let q = |p: f64| arum_stats::quantile_of_buckets(buckets.clone(), p).unwrap_or(f64::NAN);
        LoopTiming {
            iterations: self.n,
            median_ns: q(0.5),
            p99_ns: q(0.99),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip_around_the_anchor() {
        let _one = crate::exclusive();
        let tb = Timebase {
            tsc0: 1_000_000,
            mono0_ns: 5_000_000_000,
            hz: 2e9,
        };
        assert_eq!(tb.ticks(1000.0), 2000);
        assert_eq!(tb.ns(2000), 1000.0);
        assert_eq!(tb.tsc_at(5_000_001_000), 1_002_000);
        assert_eq!(tb.since_ns(1_002_000), 1000.0);
        assert_eq!(tb.since_ns(998_000), -1000.0);
    }

    #[test]
    fn the_meter_finds_the_median_of_what_it_saw() {
        let _one = crate::exclusive();
        let tb = Timebase {
            tsc0: 0,
            mono0_ns: 0,
            hz: 1e9,
        };
        let mut m = LoopMeter::new(&tb, 1000.0);
        for _ in 0..90 {
            m.add(20);
        }
        for _ in 0..10 {
            m.add(200);
        }
        m.add(5000); // a gap: not an iteration
        let t = m.timing(&tb);
        assert_eq!(t.iterations, 100);
        assert!((t.median_ns - 20.0).abs() <= 1.0, "{t:?}");
        assert!((t.p99_ns - 200.0).abs() <= 1.0, "{t:?}");
    }
}
