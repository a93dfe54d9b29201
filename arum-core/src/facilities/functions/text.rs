//! The text of the functions section: one row per function, then what needs saying.

use std::fmt::Write;

use arum_units::duration;
use arum_units::quantity::grouped;

use super::model::{
    EstimateAxis, FunctionTiming, FunctionsReport, ThrottleMode, ThrottleReason, Throttled,
};
use crate::render::text::indented;
use arum_grid::Grid;

/// Function timing: one row per function, largest total first, then what needs saying.
pub fn render(out: &mut String, f: &FunctionsReport) {
    let c = &f.probe_cost;
    if f.classes.is_empty() {
        let _ = writeln!(
            out,
            "\nFunctions (uprobes; a probed call costs {} here, an entry hit {}; calibrated on {}×{} calls)",
            duration::format_ns(c.pair_ns),
            duration::format_ns(c.entry_ns),
            c.calibration_rounds,
            c.calibration_calls
        );
    } else {
        // A process's first timed call holds the making of its return probes' page too.
        let first = f.first_call_ns.map_or(String::new(), |ns| {
            format!("; a process's first call {} more", duration::format_ns(ns))
        });
        let _ = writeln!(
            out,
            "\nFunctions ({}; probe cost by first instruction, a timed call / an entry hit:{}{first}; calibrated on {}×{} calls each)",
            if f.engine.as_deref() == Some("bpf") {
                "uprobes counted in the kernel (BPF)"
            } else {
                "uprobes, probe records"
            },
            class_costs(f),
            c.calibration_rounds,
            c.calibration_calls
        );
    }
    if let Some(note) = &f.engine_note {
        let _ = writeln!(out, " {note}; probe records were read instead");
    }
    if let Some(why) = &f.off_reason {
        let _ = writeln!(out, " not timed: {why}");
        return;
    }
    probe_cost_lines(out, f);
    timing_table(out, &f.functions);
    for t in &f.functions {
        for line in function_notes(t, f) {
            let _ = writeln!(out, " {}: {line}", t.name);
        }
    }
    footer(out, f);
    if let Some(ms) = f.interval_ms {
        if !f.intervals.is_empty() {
            intervals_table(out, f, ms);
        }
    }
}

/// The in-kernel engine's calibration: per class, a timed call's and an entry hit's cost.
fn class_costs(f: &FunctionsReport) -> String {
    f.classes
        .iter()
        .map(|c| {
            format!(
                " {} {} / {}",
                c.class,
                duration::format_ns(c.pair_ns),
                duration::format_ns(c.entry_ns)
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The probe cost of a timed call of `t`: its class's, or the one calibration's.
fn pair_cost(t: &FunctionTiming, f: &FunctionsReport) -> f64 {
    t.probe.as_ref().map_or(f.probe_cost.pair_ns, |p| p.pair_ns)
}

/// The probes' own time inside a timed call of this function, as taken out of its durations.
fn inside_cost(t: &FunctionTiming, f: &FunctionsReport) -> f64 {
    t.probe
        .as_ref()
        .map_or(f.probe_cost.inside_ns, |p| p.inside_ns)
}

/// What the calibration found beyond a probed call's cost: back-to-back calls, and the cycles
/// an entry hit adds where the estimates count against user-mode cycles.
fn probe_cost_lines(out: &mut String, f: &FunctionsReport) {
    let c = &f.probe_cost;
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
}

/// One row per function: its calls (`~` when estimated, `≥` when only a lower bound is known) and
/// durations (`-` when none was timed).
fn timing_table(out: &mut String, functions: &[FunctionTiming]) {
    let mut b = Grid::new();
    b.push_record([
        "Function", "Calls", "Timed", "Total", "Mean", "Min", "p50", "p90", "p99", "Max", "Self",
    ]);
    for t in functions {
        let i = &t.inclusive;
        let calls = match (&t.estimate, t.calls_exact) {
            (_, true) => grouped(t.calls),
            (Some(e), false) if e.calls.is_some() => format!("~{}", grouped(t.calls)),
            _ => format!("≥{}", grouped(t.calls)),
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
}

/// The probes' cost against the budget, and the records read.
fn footer(out: &mut String, f: &FunctionsReport) {
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
    if f.engine.as_deref() == Some("bpf") {
        if f.unrecorded > 0 {
            let _ = writeln!(
                out,
                " {} calls counted but not timed: a map of the in-kernel engine was full",
                grouped(f.unrecorded)
            );
        }
        return;
    }
    let r = &f.records;
    let _ = writeln!(
        out,
        " records: {} read from {} ring buffers, {} lost",
        grouped(r.records),
        r.ring_buffers,
        grouped(r.lost)
    );
}

/// Calls per `-I` interval of `ms`, one column per function; `~` marks sampled counts.
fn intervals_table(out: &mut String, f: &FunctionsReport, ms: u64) {
    let mut b = Grid::new();
    b.push_record(
        std::iter::once("t (s)".to_string()).chain(f.functions.iter().map(|t| t.name.clone())),
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

/// What the table cannot say about one function.
fn function_notes(t: &FunctionTiming, f: &FunctionsReport) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(th) = &t.throttled {
        notes.push(format!(
            "{}; timed the first {} calls; {}",
            throttled_because(th, t, f),
            grouped(th.timed_calls),
            calls_after_throttling(t, f)
        ));
    } else if t.too_short {
        notes.push(format!(
            "below the probes' resolution: median {}, the probes' own time in each timed call \
             {} (taken out of every duration; timed anyway: not throttled)",
            duration::format_ns(t.inclusive.p50_ns as f64),
            duration::format_ns(inside_cost(t, f))
        ));
    }
    notes.extend(where_called(t));
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

/// Why a function's probes were removed.
fn throttled_because(th: &Throttled, t: &FunctionTiming, f: &FunctionsReport) -> String {
    let cost = duration::format_ns(pair_cost(t, f));
    match th.reason {
        ThrottleReason::TooShort => format!(
            "throttled as too short for its probes (mean {}, under {} probe costs of {cost})",
            duration::format_ns(th.mean_ns),
            f.policy.short_factor
        ),
        ThrottleReason::Budget => format!(
            "throttled to keep the probes within the {}% budget (mean {}, probe cost {cost})",
            f.policy.budget_percent,
            duration::format_ns(th.mean_ns)
        ),
    }
}

/// How a throttled function's calls were counted once its probes were removed: exactly by the
/// entry probe, or estimated from sampling windows (an interval, or a lower bound).
fn calls_after_throttling(t: &FunctionTiming, f: &FunctionsReport) -> String {
    let entry_ns = t
        .probe
        .as_ref()
        .map_or(f.probe_cost.entry_ns, |p| p.entry_ns);
    if let Some(th) = t.throttled.as_ref().filter(|th| th.unprobed) {
        let predicted = match th.exact_counts_cost_ns {
            Some(ns) => format!(
                "; counting them all (--exact-counts) would cost {}{} of probe time",
                if th.exact_counts_cost_at_least {
                    "at least "
                } else {
                    "about "
                },
                duration::format_ns(ns as f64)
            ),
            None => String::new(),
        };
        return format!(
            "then counted until its probe was removed: at least {} calls in all{predicted}",
            grouped(t.calls)
        );
    }
    let Some(e) = &t.estimate else {
        return format!(
            "{} calls in all, counted exactly by the entry probe (about {} a call)",
            grouped(t.calls),
            duration::format_ns(entry_ns)
        );
    };
    match (e.calls, e.high) {
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
    }
}

/// Threads listed by name in a function's calls per thread; beyond them, the busiest few and
/// the spread (the JSON has every thread).
const THREADS_LISTED: usize = 8;

/// The calls per thread and per process, where there were several (or a process is unnamed).
fn where_called(t: &FunctionTiming) -> Vec<String> {
    let mut notes = Vec::new();
    if t.threads.len() > THREADS_LISTED {
        notes.push(threads_summary(t));
    } else if t.threads.len() > 1 {
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
    notes
}

/// Many threads: how many, the spread of their calls, and the busiest few.
fn threads_summary(t: &FunctionTiming) -> String {
    let mut calls: Vec<f64> = t.threads.iter().map(|th| th.calls as f64).collect();
    calls.sort_by(f64::total_cmp);
    let quantile = |q| arum_stats::quantile_sorted(&calls, q).unwrap_or(0.0);
    let mut busiest: Vec<_> = t.threads.iter().collect();
    busiest.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.tid.cmp(&b.tid)));
    let top: Vec<String> = busiest
        .iter()
        .take(3)
        .map(|th| format!("{} ({})", grouped(th.calls), th.tid))
        .collect();
    format!(
        "calls in {} threads: per thread min {}, median {}, p90 {}, max {}; busiest (tid): {}",
        t.threads.len(),
        grouped(calls[0] as u64),
        grouped(quantile(0.5).round() as u64),
        grouped(quantile(0.9).round() as u64),
        grouped(calls[calls.len() - 1] as u64),
        top.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::functions::model::{
        CallEstimate, ClassCostInfo, DurationSummary, FunctionInterval, Perturbation,
        ProbeCostInfo, ProcessHits, RecordStats, TargetProbe, ThreadTiming, ThrottlePolicy,
    };
    use crate::render::testing::{has_line, line, line_number};

    fn timing(name: &str, calls: u64, mean_ns: f64) -> FunctionTiming {
        FunctionTiming {
            name: name.into(),
            symbol: name.into(),
            file: "/bin/x".into(),
            offset: 0x1000,
            calls,
            calls_exact: true,
            timed_calls: calls,
            inclusive: DurationSummary {
                total_ns: (mean_ns * calls as f64) as u64,
                mean_ns,
                min_ns: mean_ns as u64 / 2,
                max_ns: mean_ns as u64 * 4,
                p50_ns: mean_ns as u64,
                p90_ns: mean_ns as u64 * 2,
                p99_ns: mean_ns as u64 * 3,
            },
            exclusive: DurationSummary {
                total_ns: (mean_ns * calls as f64) as u64 / 2,
                ..DurationSummary::default()
            },
            too_short: false,
            throttled: None,
            estimate: None,
            unfinished: 0,
            unwound: 0,
            orphan_returns: 0,
            lost_entries: 0,
            probe_hits: 2 * calls,
            overhead_ns: 0,
            threads: Vec::new(),
            processes: Vec::new(),
            probe: None,
        }
    }

    fn report(functions: Vec<FunctionTiming>) -> FunctionsReport {
        FunctionsReport {
            off_reason: None,
            probe_cost: ProbeCostInfo {
                pair_ns: 1000.0,
                entry_ns: 400.0,
                inside_ns: 600.0,
                calibration_calls: 1000,
                calibration_rounds: 5,
                ..ProbeCostInfo::default()
            },
            policy: ThrottlePolicy::default(),
            functions,
            records: RecordStats {
                records: 2400,
                bytes: 0,
                lost: 3,
                ring_buffers: 2,
            },
            perturbation: Perturbation {
                probe_hits: 2400,
                overhead_ns: 1_200_000,
                program_cpu_ns: 100_000_000,
                percent_of_cpu: 1.2,
            },
            interval_ms: None,
            intervals: Vec::new(),
            estimate_axis: EstimateAxis::CpuTime,
            engine: Some("perf".into()),
            engine_note: None,
            classes: Vec::new(),
            first_call_ns: None,
            first_call_spread_ns: None,
            unrecorded: 0,
        }
    }

    fn text(f: &FunctionsReport) -> String {
        let mut out = String::new();
        render(&mut out, f);
        out
    }

    /// `compute` throttled for `reason` after 100 calls of 50 ns, with `estimate`.
    fn throttled(reason: ThrottleReason, estimate: Option<CallEstimate>) -> FunctionTiming {
        let mut t = timing("compute", 100, 50.0);
        t.throttled = Some(Throttled {
            reason,
            at_ns: 1_000_000,
            timed_calls: 100,
            mean_ns: 50.0,
            unprobed: false,
            exact_counts_cost_ns: None,
            exact_counts_cost_at_least: false,
        });
        t.estimate = estimate;
        t
    }

    fn estimate(calls: Option<f64>, high: Option<f64>, saturated: bool) -> CallEstimate {
        CallEstimate {
            counted_before: 100,
            sampled: 70,
            windows: 7,
            calls,
            low: 9000.0,
            high,
            saturated,
        }
    }

    #[test]
    fn the_title_rows_and_footer_carry_the_probe_cost_and_the_figures() {
        let mut sampled = timing("parse", 1200, 2500.0);
        sampled.calls_exact = false;
        sampled.estimate = Some(estimate(Some(1200.0), Some(1300.0), false));
        let mut bound = timing("scan", 900, 2500.0);
        bound.calls_exact = false;
        bound.estimate = Some(estimate(None, None, true));
        let mut untimed = timing("idle", 4, 0.0);
        untimed.timed_calls = 0;
        let out = text(&report(vec![
            timing("main", 1, 5e6),
            sampled,
            bound,
            untimed,
        ]));
        assert_eq!(
            line(&out, "Functions"),
            "Functions (uprobes; a probed call costs 1 µs here, an entry hit 400 ns; \
             calibrated on 5×1000 calls)"
        );
        assert_eq!(
            line(&out, "Function Calls"),
            "Function Calls Timed Total Mean Min p50 p90 p99 Max Self"
        );
        assert_eq!(
            line(&out, "main"),
            "main 1 1 5 ms 5 ms 2.5 ms 5 ms 10 ms 15 ms 20 ms 2.5 ms"
        );
        // An estimated count is marked, a lower bound said as one; a function never timed has
        // no durations.
        assert!(line(&out, "parse").starts_with("parse ~1,200 1,200 3 ms 2.5 µs"));
        assert!(line(&out, "scan").starts_with("scan ≥900 900"), "{out}");
        assert_eq!(line(&out, "idle"), "idle 4 0 - - - - - - - -");
        assert_eq!(
            line(&out, "perturbation"),
            "perturbation: 2,400 probe hits, about 1.2 ms of probe time, \
             1.20% of the program's CPU time (budget 2%)"
        );
        assert_eq!(
            line(&out, "records"),
            "records: 2,400 read from 2 ring buffers, 3 lost"
        );
        assert!(!has_line(&out, "calls per"), "no intervals asked: {out}");
    }

    #[test]
    fn a_reason_not_to_time_replaces_the_table() {
        let mut f = report(vec![timing("main", 1, 5e6)]);
        f.off_reason = Some("uprobes need root: run arum as root".into());
        let out = text(&f);
        assert_eq!(
            out.lines().filter(|l| !l.is_empty()).count(),
            2,
            "the title and the reason only: {out}"
        );
        assert_eq!(
            line(&out, "not timed"),
            "not timed: uprobes need root: run arum as root"
        );
    }

    #[test]
    fn a_throttled_function_says_why_and_how_its_calls_were_counted() {
        let bounded = throttled(
            ThrottleReason::TooShort,
            Some(estimate(Some(10_000.0), Some(11_000.0), false)),
        );
        assert_eq!(
            function_notes(&bounded, &report(Vec::new())),
            [
                "throttled as too short for its probes (mean 50 ns, under 10 probe costs of 1 \
              µs); timed the first 100 calls; about 10,000 calls in all (sampled in 7 windows; \
              95% interval 9,000–11,000)"
            ]
        );
        let exact = throttled(ThrottleReason::Budget, None);
        assert_eq!(
            function_notes(&exact, &report(Vec::new())),
            [
                "throttled to keep the probes within the 2% budget (mean 50 ns, probe cost 1 µs); \
              timed the first 100 calls; 100 calls in all, counted exactly by the entry probe \
              (about 400 ns a call)"
            ]
        );
        let ended = throttled(ThrottleReason::Budget, Some(estimate(None, None, false)));
        assert!(function_notes(&ended, &report(Vec::new()))[0]
            .ends_with("at least 9,000 calls in all (the program ended before a sampling window)"));
    }

    #[test]
    fn a_saturated_estimate_names_the_missing_cycle_counter_only_without_one() {
        let t = throttled(ThrottleReason::TooShort, Some(estimate(None, None, true)));
        let mut f = report(Vec::new());
        let note = function_notes(&t, &f).remove(0);
        assert!(
            note.ends_with("cannot be estimated without a hardware cycle counter (none here)"),
            "{note}"
        );
        f.estimate_axis = EstimateAxis::UserCycles;
        let note = function_notes(&t, &f).remove(0);
        assert!(note.ends_with("cannot be estimated"), "{note}");
    }

    // 2,000 threads: one line with the spread and the busiest, not 2,000 entries.
    #[test]
    fn many_threads_are_summarised() {
        let mut t = timing("work", 2_004, 3000.0);
        t.threads = (0..2000u64)
            .map(|i| ThreadTiming {
                tid: 100 + i as u32,
                pid: 10,
                calls: if i == 7 { 5 } else { 1 },
                timed_calls: 1,
                inclusive_ns: 0,
                exclusive_ns: 0,
            })
            .collect();
        let out = text(&report(vec![t]));
        assert_eq!(
            line(&out, "work: calls in"),
            "work: calls in 2000 threads: per thread min 1, median 1, p90 1, max 5; busiest (tid): \
             5 (107), 1 (100), 1 (101)"
        );
        assert!(!out.contains("1 (2099)"), "{out}");
    }

    #[test]
    fn notes_name_threads_processes_and_lost_calls_under_the_table() {
        // A median below the probes' time inside each call (600 ns).
        let mut t = timing("work", 7, 300.0);
        t.too_short = true;
        t.threads = [(11, 3), (12, 4)]
            .map(|(tid, calls)| ThreadTiming {
                tid,
                pid: 10,
                calls,
                timed_calls: calls,
                inclusive_ns: 0,
                exclusive_ns: 0,
            })
            .to_vec();
        t.processes = vec![ProcessHits {
            pid: 10,
            name: None,
            calls: 7,
        }];
        t.unfinished = 1;
        t.lost_entries = 2;
        let mut f = report(vec![t]);
        f.policy.mode = ThrottleMode::NoThrottle;
        let out = text(&f);
        assert_eq!(
            line(&out, "work: below"),
            "work: below the probes' resolution: median 300 ns, the probes' own time in each \
             timed call 600 ns (taken out of every duration; timed anyway: not throttled)"
        );
        assert_eq!(
            line(&out, "work: calls per thread"),
            "work: calls per thread (tid): 3 (11), 4 (12)"
        );
        // One process is named only when its name is unknown.
        assert_eq!(
            line(&out, "work: hit in"),
            "work: hit in processes: ? 10 (7)"
        );
        assert_eq!(
            line(&out, "work: 1 calls never"),
            "work: 1 calls never returned before the program ended"
        );
        assert_eq!(
            line(&out, "work: 2 entries"),
            "work: 2 entries lost, 0 returns without an entry"
        );
        assert!(line_number(&out, "work: below") > line_number(&out, "work 7"));
        assert!(line(&out, "perturbation").ends_with("(budget 2%; --no-throttle: not applied)"));
    }

    #[test]
    fn intervals_mark_sampled_counts() {
        let mut f = report(vec![timing("a", 10, 100.0), timing("b", 5, 100.0)]);
        f.interval_ms = Some(100);
        f.intervals = vec![FunctionInterval {
            t_end_ns: 100_000_000,
            calls: vec![10, 1500],
            estimated: vec![false, true],
        }];
        let out = text(&f);
        assert_eq!(
            line(&out, "calls per"),
            "calls per 100 ms interval (~: sampled, counts since the last window):"
        );
        assert_eq!(line(&out, "t (s)"), "t (s) a b");
        assert_eq!(line(&out, "0.100"), "0.100 10 ~1,500");
    }

    #[test]
    fn the_kernel_engine_names_its_class_costs_and_an_unprobed_function_is_a_lower_bound() {
        let mut t = throttled(ThrottleReason::Budget, None);
        t.calls = 5000;
        t.calls_exact = false;
        t.probe = Some(TargetProbe {
            class: "stepped".into(),
            pair_ns: 11_000.0,
            entry_ns: 9_000.0,
            inside_ns: 7_000.0,
        });
        if let Some(th) = &mut t.throttled {
            th.unprobed = true;
            th.exact_counts_cost_ns = Some(90_000_000);
        }
        let mut f = report(vec![t]);
        f.engine = Some("bpf".into());
        f.classes = vec![ClassCostInfo {
            class: "stepped".into(),
            pair_ns: 11_000.0,
            entry_ns: 9_000.0,
            inside_ns: 500.0,
            spread_ns: 100.0,
            ..Default::default()
        }];
        let out = text(&f);
        assert!(
            out.contains("an entry hit: stepped 11 µs / 9 µs;"),
            "the class's costs in the title: {out}"
        );
        assert!(line(&out, "compute").starts_with("compute ≥5,000"), "{out}");
        assert!(
            out.contains("probe cost 11 µs")
                && out.contains("at least 5,000 calls in all")
                && out.contains("would cost about 90 ms"),
            "{out}"
        );
        // No ring buffers: the records line is the records' path's alone.
        assert!(!out.contains("ring buffers"), "{out}");
    }
}
