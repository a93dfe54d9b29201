//! The text of the functions section: one row per function, then what needs saying.

use std::fmt::Write;

use arum_units::duration;
use arum_units::quantity::grouped;

use super::model::{EstimateAxis, FunctionTiming, FunctionsReport, ThrottleMode, ThrottleReason};
use crate::render::text::indented;
use arum_grid::Grid;

/// Function timing: one row per function, largest total first, then what needs saying.
pub fn render(out: &mut String, f: &FunctionsReport) {
    let c = &f.probe_cost;
    let _ = writeln!(
        out,
        "\nFunctions (uprobes; a probed call costs {} here, an entry hit {}; calibrated on {}×{} calls)",
        duration::format_ns(c.pair_ns),
        duration::format_ns(c.entry_ns),
        c.calibration_rounds,
        c.calibration_calls
    );
    if let Some(why) = &f.off_reason {
        let _ = writeln!(out, " not timed: {why}");
        return;
    }
    if c.back_to_back_intervals > 0 {
        let _ = writeln!(
            out,
            " back to back: a probed call every {} (median {}, sd {}, {} intervals between probe records)",
            duration::format_ns(c.back_to_back_mean_ns),
            duration::format_ns(c.back_to_back_median_ns),
            duration::format_ns(c.back_to_back_sd_ns),
            c.back_to_back_intervals
        );
    }
    if let (Some(cycles), EstimateAxis::UserCycles) = (c.entry_user_cycles, f.estimate_axis) {
        let _ = writeln!(
            out,
            " an entry hit adds {cycles:.0} user-mode cycles: sampled calls are counted against the program's user-mode cycles"
        );
    }
    let mut b = Grid::new();
    b.push_record([
        "Function", "Calls", "Timed", "Total", "Mean", "Min", "p50", "p90", "p99", "Max", "Self",
    ]);
    for t in &f.functions {
        let i = &t.inclusive;
        let calls = if t.calls_exact {
            grouped(t.calls)
        } else {
            format!("~{}", grouped(t.calls))
        };
        let timed = t.timed_calls > 0;
        let d = |v: f64| {
            if timed {
                duration::format_ns(v)
            } else {
                "-".into()
            }
        };
        b.push_record([
            t.name.clone(),
            calls,
            grouped(t.timed_calls),
            d(i.total_ns as f64),
            d(i.mean_ns),
            d(i.min_ns as f64),
            d(i.p50_ns as f64),
            d(i.p90_ns as f64),
            d(i.p99_ns as f64),
            d(i.max_ns as f64),
            d(t.exclusive.total_ns as f64),
        ]);
    }
    let table = b.align_right(1..);
    indented(out, &table);
    for t in &f.functions {
        for line in function_notes(t, f) {
            let _ = writeln!(out, " {}: {line}", t.name);
        }
    }
    let p = &f.perturbation;
    let _ = writeln!(
        out,
        " perturbation: {} probe hits, about {} of probe time, {:.2}% of the program's CPU time (budget {}%{})",
        grouped(p.probe_hits),
        duration::format_ns(p.overhead_ns as f64),
        p.percent_of_cpu,
        f.policy.budget_percent,
        match f.policy.mode {
            ThrottleMode::Throttle => "",
            ThrottleMode::ExactCounts => "; --exact-counts",
            ThrottleMode::NoThrottle => "; --no-throttle: not applied",
        }
    );
    let r = &f.records;
    let _ = writeln!(
        out,
        " records: {} read from {} ring buffers, {} lost",
        grouped(r.records),
        r.ring_buffers,
        grouped(r.lost)
    );
    if let Some(ms) = f.interval_ms {
        if !f.intervals.is_empty() {
            let mut b = Grid::new();
            b.push_record(
                std::iter::once("t (s)".to_string())
                    .chain(f.functions.iter().map(|t| t.name.clone())),
            );
            for iv in &f.intervals {
                b.push_record(
                    std::iter::once(format!("{:.3}", iv.t_end_ns as f64 / 1e9)).chain(
                        iv.calls.iter().zip(&iv.estimated).map(|(n, e)| {
                            if *e {
                                format!("~{}", grouped(*n))
                            } else {
                                grouped(*n)
                            }
                        }),
                    ),
                );
            }
            let _ = writeln!(
                out,
                " calls per {ms} ms interval (~: sampled, counts since the last window):"
            );
            let t = b.align_right(1..);
            indented(out, &t);
        }
    }
}

/// What the table cannot say about one function.
fn function_notes(t: &FunctionTiming, f: &FunctionsReport) -> Vec<String> {
    let mut notes = Vec::new();
    let cost = duration::format_ns(f.probe_cost.pair_ns);
    if let Some(th) = &t.throttled {
        let why = match th.reason {
            ThrottleReason::TooShort => format!(
                "too short to time reliably: mean {}, probe cost {cost}",
                duration::format_ns(th.mean_ns)
            ),
            ThrottleReason::Budget => format!(
                "throttled to keep the probes within the {}% budget (mean {}, probe cost {cost})",
                f.policy.budget_percent,
                duration::format_ns(th.mean_ns)
            ),
        };
        let rest = match &t.estimate {
            Some(e) => match (e.calls, e.high) {
                (Some(calls), Some(high)) => format!(
                    "about {} calls in all (sampled in {} windows; 95% interval {}–{})",
                    grouped(calls as u64),
                    e.windows,
                    grouped(e.low as u64),
                    grouped(high as u64)
                ),
                _ if e.saturated => format!(
                    "at least {} calls in all: the sampled calls came as fast as probe hits, so the calls between them cannot be estimated{}",
                    grouped(e.low as u64),
                    match f.estimate_axis {
                        EstimateAxis::UserCycles => "",
                        // What would tell them: the program's own time inside a window.
                        _ => " without a hardware cycle counter (none here)",
                    }
                ),
                _ => format!(
                    "at least {} calls in all (the program ended before a sampling window)",
                    grouped(e.low as u64)
                ),
            },
            None => format!(
                "{} calls in all, counted exactly by the entry probe (about {} a call)",
                grouped(t.calls),
                duration::format_ns(f.probe_cost.entry_ns)
            ),
        };
        notes.push(format!(
            "{why}; timed the first {} calls; {rest}",
            grouped(th.timed_calls)
        ));
    } else if t.too_short {
        notes.push(format!(
            "too short to time reliably: mean {}, probe cost {cost} (timed anyway: not throttled)",
            duration::format_ns(t.inclusive.mean_ns)
        ));
    }
    if t.threads.len() > 1 {
        let per: Vec<String> = t
            .threads
            .iter()
            .map(|th| format!("{} ({})", grouped(th.calls), th.tid))
            .collect();
        notes.push(format!("calls per thread (tid): {}", per.join(", ")));
    }
    if t.processes.len() > 1
        || t.processes.iter().any(|p| p.name.is_none()) && !t.processes.is_empty()
    {
        let per: Vec<String> = t
            .processes
            .iter()
            .map(|p| {
                format!(
                    "{} {} ({})",
                    p.name.as_deref().unwrap_or("?"),
                    p.pid,
                    grouped(p.calls)
                )
            })
            .collect();
        notes.push(format!("hit in processes: {}", per.join(", ")));
    }
    if t.unfinished > 0 {
        notes.push(format!(
            "{} calls never returned before the program ended",
            t.unfinished
        ));
    }
    if t.unwound > 0 {
        notes.push(format!(
            "{} calls were left without a return (longjmp, exception)",
            t.unwound
        ));
    }
    if t.lost_entries > 0 || t.orphan_returns > 0 {
        notes.push(format!(
            "{} entries lost, {} returns without an entry",
            t.lost_entries, t.orphan_returns
        ));
    }
    notes
}
