//! The calls of a function after its probes were removed, estimated from sampling windows: for a
//! short window every period the entry probe counts the calls of each thread again. Inside a
//! window each call costs a probe hit, which slows the thread down, so a thread that made `n` calls
//! in `w` ns of its CPU time made them in `w - n × cost` ns of its own work: its rate is
//! `n / (w - n × cost)` calls per ns of CPU time. Each window's rate stands for the unprobed time
//! around it, up to halfway to the neighbouring windows.
//!
//! Every throttled function is sampled in the same windows, so the hits of the others slow the
//! thread down there too: their count is subtracted at the same cost (a window probe of one
//! function costs what a window probe of another does), else each function's rate would be too
//! low by the others' share of the window.
//!
//! Time here is the program's CPU time (all its threads together), not wall time: a program's
//! progress, and so its calls, follow the CPU time it gets, which on a busy machine is far less than
//! the wall time that passes. Where the program's CPU time cannot be read, wall time is used. Where
//! a hardware counter counts the program's user-mode cycles, they are the axis (the `_ns` fields
//! then hold cycles) and `cost` is the calibrated cycles a hit adds in user mode: the kernel's
//! part of a hit, microseconds, is then not on the axis at all, and calls as fast as hits can be
//! counted.
//!
//! The interval combines the spread of the window rates (a systematic sample, treated as random),
//! the counting noise inside each window (Poisson) and the uncertainty of the probe cost (the
//! estimate is redone with the cost ± its spread). When a window is saturated — the calls came as
//! fast as the probe could take them, so the thread's own time in the window is lost in the
//! uncertainty of the cost — no rate can be told from it: the result is then a lower bound only.

/// One count in one window: of a thread, or of the whole program.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreadCount {
    pub calls: u64,
    /// Hits of the other functions' window probes in the same time and threads.
    pub others: u64,
    /// The time the count covers (ns), on the axis of the spans: the CPU time of what was
    /// counted while the probes were on, or wall time where CPU time is not known.
    pub enabled_ns: u64,
}

/// One sampling window, placed on the program's CPU-time axis (or the wall clock).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
    pub threads: Vec<ThreadCount>,
}

impl Window {
    pub fn calls(&self) -> u64 {
        self.threads.iter().map(|t| t.calls).sum()
    }

    /// Calls per unit of the program's own time in this window at probe cost `cost`; None when
    /// saturated.
    pub fn rate(&self, cost: f64) -> Option<f64> {
        self.threads
            .iter()
            .filter(|t| t.calls > 0)
            .map(|t| own_time(t, cost).map(|own| t.calls as f64 / own))
            .sum()
    }
}

/// The estimate for the time from `from_ns` (probes removed) to `to_ns` (the program ended).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Calls counted inside the windows.
    pub sampled: u64,
    /// Estimated calls in the whole span (the sampled ones included); None when saturated.
    pub calls: Option<f64>,
    /// 95% interval; `high` None when no upper bound can be given.
    pub low: f64,
    pub high: Option<f64>,
    pub windows: usize,
    pub saturated: bool,
}

/// Whether any thread of `w` spent nearly all the window in probe hits at cost `cost`.
pub fn saturated(w: &Window, cost: f64) -> bool {
    w.threads
        .iter()
        .any(|t| t.calls > 0 && own_time(t, cost).is_none())
}

/// A count's own (unprobed) time in a window at probe cost `cost`, every window probe's hits
/// taken out; None when the probes took a fifth of the window or more at that cost. A hit in the program can cost several times what the
/// calibration measured (its cache and TLB state, other load: 4x has been seen with tests running
/// beside it), and for calls that come back to back a window's own time is then all error: at 4x,
/// the calibrated cost accounts for a quarter of the window and the rest looks like the program's
/// own time. Below a fifth, the cost would have to be 5x off to make a saturated window look
/// like a sparse one.
fn own_time(t: &ThreadCount, cost: f64) -> Option<f64> {
    let own = t.enabled_ns as f64 - (t.calls + t.others) as f64 * cost;
    (own >= 0.8 * t.enabled_ns as f64).then_some(own)
}

/// The estimate at one probe cost: (calls, variance), None when a window is saturated.
fn at_cost(windows: &[Window], from: u64, to: u64, cost: f64) -> Option<(f64, f64)> {
    let m = windows.len();
    let mut total = 0.0;
    let mut poisson = 0.0;
    let mut rates = Vec::with_capacity(m);
    let mut unprobed_total = 0.0;
    for (k, w) in windows.iter().enumerate() {
        // The span this window stands for: halfway to its neighbours, the ends at from/to.
        let lo = if k == 0 {
            from
        } else {
            (windows[k - 1].end_ns + w.start_ns) / 2
        };
        let hi = if k + 1 == m {
            to
        } else {
            (w.end_ns + windows[k + 1].start_ns) / 2
        };
        let span = hi.saturating_sub(lo) as f64;
        let unprobed = (span - (w.end_ns - w.start_ns) as f64).max(0.0);
        let mut rate = 0.0;
        for t in &w.threads {
            if t.calls == 0 {
                continue;
            }
            let own = own_time(t, cost)?;
            rate += t.calls as f64 / own;
            // Counting noise of this thread's count, carried to the unprobed span.
            poisson += (unprobed / own).powi(2) * t.calls as f64;
        }
        rates.push(rate);
        unprobed_total += unprobed;
        total += w.calls() as f64 + rate * unprobed;
    }
    let spread = if m >= 2 {
        let mean = rates.iter().sum::<f64>() / m as f64;
        let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (m - 1) as f64;
        unprobed_total.powi(2) * var / m as f64
    } else {
        0.0
    };
    Some((total, spread + poisson))
}

/// Student's t at 97.5% for `dof` degrees of freedom (1.96 for many).
fn t975(dof: usize) -> f64 {
    const T: [f64; 10] = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23];
    match dof {
        0 => T[0],
        1..=10 => T[dof - 1],
        11..=20 => 2.09,
        21..=30 => 2.04,
        _ => 1.96,
    }
}

/// Estimates the calls from `from_ns` to `to_ns` from `windows`, at probe cost `cost` ± `spread`.
pub fn estimate(windows: &[Window], from_ns: u64, to_ns: u64, cost: f64, spread: f64) -> Estimate {
    let sampled: u64 = windows.iter().map(Window::calls).sum();
    let saturated_result = |saturated| Estimate {
        sampled,
        calls: None,
        low: sampled as f64,
        high: None,
        windows: windows.len(),
        saturated,
    };
    if windows.is_empty() {
        return saturated_result(false);
    }
    let mid = at_cost(windows, from_ns, to_ns, cost);
    let high_cost = at_cost(windows, from_ns, to_ns, cost + spread);
    let low_cost = at_cost(windows, from_ns, to_ns, (cost - spread).max(0.0));
    match (mid, high_cost, low_cost) {
        (Some((calls, var)), Some((hi, _)), Some((lo, _))) => {
            let half = t975(windows.len().saturating_sub(1)) * var.sqrt();
            Estimate {
                sampled,
                calls: Some(calls),
                low: (lo.min(calls) - half).max(sampled as f64),
                high: Some(hi.max(calls) + half),
                windows: windows.len(),
                saturated: false,
            }
        }
        _ => saturated_result(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Windows of `w` ns every `period` ns over `span` ns, for threads each making calls every
    /// `gap` ns of their own time, at probe cost `cost`.
    fn steady(threads: usize, gap: f64, cost: f64, w: u64, period: u64, span: u64) -> Vec<Window> {
        let per_thread = (w as f64 / (gap + cost)).floor() as u64;
        (0..span / period)
            .map(|k| Window {
                start_ns: k * period + period / 2,
                end_ns: k * period + period / 2 + w,
                threads: vec![
                    ThreadCount {
                        calls: per_thread,
                        others: 0,
                        enabled_ns: w
                    };
                    threads
                ],
            })
            .collect()
    }

    #[test]
    fn a_steady_rate_is_recovered_with_the_probe_slowdown_corrected() {
        // 2 threads, a call every 50 µs of their own time, probe cost 10 µs, 1.2 ms windows (20
        // probed calls each) every 100 ms over 1 s: 2 × 1e9 / 50e3 = 40,000 calls.
        let w = steady(2, 50_000.0, 10_000.0, 1_200_000, 100_000_000, 1_000_000_000);
        let e = estimate(&w, 0, 1_000_000_000, 10_000.0, 500.0);
        let calls = e.calls.unwrap();
        assert!((calls - 40_000.0).abs() / 40_000.0 < 0.02, "{e:?}");
        assert!(e.low <= 40_000.0 && e.high.unwrap() >= 40_000.0, "{e:?}");
        // Without the correction the rate would be 1/60 µs: 17% low.
        assert!(calls > 40_000.0 * 0.9);
    }

    #[test]
    fn the_other_functions_hits_in_a_window_are_taken_out_too() {
        // Two functions sampled together, each hit 4 µs: in 2 ms of the thread's own time `a` is
        // called 10 times and `b` 90, so a 2.4 ms window holds 0.4 ms of hits. Over 1 s of the
        // program's time with ten windows, its own time is 1 s - 10 × 0.4 ms: `a` made 4980
        // calls, `b` 44,820.
        let span = 1_000_000_000u64;
        let windows = |mine: u64, theirs: u64| -> Vec<Window> {
            (0..10u64)
                .map(|k| Window {
                    start_ns: k * 100_000_000 + 50_000_000,
                    end_ns: k * 100_000_000 + 52_400_000,
                    threads: vec![ThreadCount {
                        calls: mine,
                        others: theirs,
                        enabled_ns: 2_400_000,
                    }],
                })
                .collect()
        };
        for (mine, theirs, truth) in [(10, 90, 4980.0), (90, 10, 44_820.0)] {
            let e = estimate(&windows(mine, theirs), 0, span, 4_000.0, 0.0);
            let calls = e.calls.unwrap();
            assert!((calls - truth).abs() / truth < 0.001, "{e:?}");
        }
        // Leaving `b`'s hits in `a`'s own time would make `a` 15% low.
        let alone = estimate(&windows(10, 0), 0, span, 4_000.0, 0.0);
        assert!(alone.calls.unwrap() < 0.9 * 4980.0, "{alone:?}");
    }

    #[test]
    fn saturated_windows_give_a_lower_bound_only() {
        // A call every 20 ns against a 10 µs probe: the windows see nothing but probe hits.
        let w = steady(1, 20.0, 10_000.0, 1_000_000, 100_000_000, 1_000_000_000);
        let e = estimate(&w, 0, 1_000_000_000, 10_000.0, 300.0);
        assert!(e.saturated);
        assert_eq!(e.calls, None);
        assert_eq!(e.high, None);
        assert_eq!(e.low, e.sampled as f64);
    }

    #[test]
    fn back_to_back_calls_at_four_times_the_calibrated_cost_are_saturated() {
        // The hits really cost 40 µs where the calibration said 10 µs: by the calibrated cost
        // the windows would show 75% own time and a rate four times too low.
        let w = steady(1, 20.0, 40_000.0, 1_000_000, 100_000_000, 1_000_000_000);
        let e = estimate(&w, 0, 1_000_000_000, 10_000.0, 300.0);
        assert!(e.saturated, "{e:?}");
        assert_eq!(e.calls, None);
    }

    #[test]
    fn back_to_back_calls_are_counted_on_the_user_cycle_axis() {
        // The 10-million-call case on a machine with a PMU: a call every 60 user-mode cycles
        // (20 ns at 3 GHz), a hit adding 10 cycles in user mode (the out-of-line step; its
        // microseconds are kernel time, not on this axis), windows of 100,000 user cycles every
        // 10 million, over 600 million: 10,000,000 calls.
        let w = steady(1, 60.0, 10.0, 100_000, 10_000_000, 600_000_000);
        let e = estimate(&w, 0, 600_000_000, 10.0, 1.0);
        let calls = e.calls.expect("not saturated on this axis");
        assert!((calls - 1e7).abs() / 1e7 < 0.10, "{e:?}");
        assert!(e.low <= 1e7 && e.high.unwrap() >= 1e7, "{e:?}");
    }

    #[test]
    fn varying_rates_widen_the_interval() {
        let mut w = steady(1, 50_000.0, 10_000.0, 1_000_000, 100_000_000, 1_000_000_000);
        for (i, win) in w.iter_mut().enumerate() {
            win.threads[0].calls = if i % 2 == 0 { 6 } else { 18 };
        }
        let e = estimate(&w, 0, 1_000_000_000, 10_000.0, 0.0);
        let (lo, hi) = (e.low, e.high.unwrap());
        assert!(hi - lo > 0.2 * e.calls.unwrap(), "{e:?}");
    }

    #[test]
    fn no_window_leaves_only_what_was_counted() {
        let e = estimate(&[], 0, 1000, 10.0, 1.0);
        assert_eq!((e.sampled, e.calls, e.saturated), (0, None, false));
    }
}
