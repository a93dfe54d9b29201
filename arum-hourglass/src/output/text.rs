//! The text output: one line per finding, each starting with a tag (`hourglass:`, `thread N:`,
//! `share:`, `ctxsw:`, `irq:`, `tick:`, `deadline:`, `latency:`, `trace:`, `latlate:`, `raw:`,
//! `note:`, `switchcost:`) so scripts can pick what they need, as the original's output did.
//! Inferences are stated as such, with the paper's reasoning.

use std::fmt::Write;
use std::time::Duration;

use crate::analysis::stats::Summary;
use crate::analysis::switches::SwitchKind;
use crate::analysis::Analysis;
use crate::experiment::{Experiment, GapChoice};
use crate::kernel::{HzSource, TickMode};
use crate::switch_cost::{Plan, SizeResult};
use crate::threads::RunResult;
use crate::trace::{End, Record};
use arum_units::{duration, size};

/// What to print besides the findings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras {
    /// Every interval and latency sample, in ms/µs from the start.
    pub trace: bool,
    /// Every record in raw TSC cycles.
    pub raw: bool,
}

pub fn render(exp: &Experiment, run: &RunResult, a: &Analysis, extras: Extras) -> String {
    let mut o = String::new();
    header(&mut o, exp, run);
    // Notes first: a full trace buffer changes how every finding below reads.
    for n in &run.notes {
        let _ = writeln!(o, "note: {n}");
    }
    findings(&mut o, exp, a, run.dropped > 0);
    cpu_lines(&mut o, run, a);
    if extras.trace {
        trace_lines(&mut o, run);
    }
    if extras.raw {
        raw_lines(&mut o, run);
    }
    o
}

fn header(o: &mut String, exp: &Experiment, run: &RunResult) {
    let k = &run.kernel;
    let hz = match (&k.hz, &k.hz_source) {
        (Some(hz), Some(HzSource::Config(p))) => format!("HZ={hz} from {p}"),
        (Some(hz), Some(HzSource::Jiffies)) => format!("HZ={hz} from jiffies"),
        _ => "HZ unknown".into(),
    };
    let mode = match k.tick_mode {
        Some(TickMode::Periodic) => ", periodic tick",
        Some(TickMode::NohzIdle) => ", NO_HZ_IDLE",
        Some(TickMode::NohzFull) => ", NO_HZ_FULL",
        None => "",
    };
    let preempt = k
        .preempt
        .as_deref()
        .map(|p| format!(", {p}"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "hourglass: {} threads for {} on Linux {} ({hz}{mode}{preempt})",
        exp.threads.len(),
        duration::format(exp.duration),
        k.release
    );
    let _ = writeln!(
        o,
        "tsc: {:.4} GHz, {}, calibrated against CLOCK_MONOTONIC (rounds within {:.3}%)",
        run.tsc.hz / 1e9,
        if run.tsc.invariant {
            "invariant"
        } else {
            "NOT invariant"
        },
        run.tsc.spread * 100.0
    );
    let slowest = run
        .threads
        .iter()
        .filter(|t| exp.threads[t.index].workload.traces_intervals())
        .max_by(|a, b| a.loop_timing.median_ns.total_cmp(&b.loop_timing.median_ns));
    match (exp.gap, slowest) {
        (GapChoice::Auto { factor }, Some(t)) => {
            let _ = writeln!(
                o,
                "gap: {} = {factor} x {}, the slowest loop iteration (thread {}: {}; its p99 {})",
                duration::format_ns(run.gap_ns),
                duration::format_ns(t.loop_timing.median_ns),
                t.index,
                exp.threads[t.index].workload,
                duration::format_ns(t.loop_timing.p99_ns)
            );
        }
        (GapChoice::Auto { factor }, None) => {
            let _ = writeln!(
                o,
                "gap: {} = {factor} x 20 ns, a stand-in: no thread measured a loop iteration \
                 (latency threads trace no intervals), so GAP decides nothing here",
                duration::format_ns(run.gap_ns)
            );
        }
        (GapChoice::Fixed { .. }, _) => {
            let _ = writeln!(o, "gap: {} (given)", duration::format_ns(run.gap_ns));
        }
    }
    for (i, t) in exp.threads.iter().enumerate() {
        let (start, finish) = t.window(exp.duration);
        let cpus = match &t.affinity {
            Some(c) => format!("CPUs {c:?}"),
            None => "any CPU".into(),
        };
        let _ = writeln!(
            o,
            "thread {i}: {}, {}, {cpus}, timer {}, from {} to {}",
            t.workload,
            t.priority,
            t.timer,
            duration::format(start),
            duration::format(finish)
        );
    }
}

fn summary(s: &Summary) -> String {
    format!(
        "min {}, median {}, p99 {}, max {}",
        duration::format_ns(s.min_ns),
        duration::format_ns(s.median_ns),
        duration::format_ns(s.p99_ns),
        duration::format_ns(s.max_ns)
    )
}

fn findings(o: &mut String, exp: &Experiment, a: &Analysis, truncated: bool) {
    share_lines(o, a, truncated);
    switch_lines(o, a);
    gap_lines(o, exp, a);
    for v in &a.ticks {
        let _ = writeln!(
            o,
            "tick: thread {} on CPU {}: {}",
            v.thread, v.cpu, v.statement
        );
    }
    deadline_lines(o, exp, a);
    latency_lines(o, exp, a);
}

/// What each thread received of its window, against its peers and its weight. Where the trace
/// buffer filled (`truncated`), the intervals stop early and only the kernel's figure covers the
/// whole window: the line says so.
fn share_lines(o: &mut String, a: &Analysis, truncated: bool) {
    for s in &a.shares {
        let among = s
            .share_among_peers
            .map(|p| {
                format!(
                    "; {:.1}% of what the Hourglass threads on its CPU received",
                    p * 100.0
                )
            })
            .unwrap_or_default();
        let expected = s
            .expected_share
            .map(|e| format!(" (by weight: {:.1}%)", e * 100.0))
            .unwrap_or_default();
        let cut = if truncated {
            format!(
                " ({:.1}% of the window): the recorded intervals stop where the trace buffer \
                 filled, the kernel's figure covers the whole window",
                s.kernel_cpu_ns / s.window_ns.max(1.0) * 100.0
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "share: thread {}: received {} of {} ({:.1}%) in {} intervals, {} migrations; \
             the kernel accounted {} of CPU time{cut}{among}{expected}",
            s.thread,
            duration::format_ns(s.received_ns),
            duration::format_ns(s.window_ns),
            s.share * 100.0,
            s.intervals,
            s.migrations,
            duration::format_ns(s.kernel_cpu_ns),
        );
    }
}

/// The gaps between two threads on one CPU, by kind of switch, and what they tell.
fn switch_lines(o: &mut String, a: &Analysis) {
    for s in &a.switches {
        let kind = match s.kind {
            SwitchKind::Involuntary => "involuntary (preemption)",
            SwitchKind::Yield => "after a yield",
            SwitchKind::Block => "after blocking",
        };
        let g = &s.gaps;
        let _ = writeln!(
            o,
            "ctxsw: {kind}: {} gaps between two threads on one CPU ({:.1}/s): shortest {}, \
             main cluster of {} gaps {}..{} with median {}, {} outliers up to {}",
            g.count,
            s.per_second,
            duration::format_ns(g.shortest_ns),
            g.cluster_count,
            duration::format_ns(g.cluster_low_ns),
            duration::format_ns(g.cluster_high_ns),
            duration::format_ns(g.cluster_median_ns),
            g.outliers,
            duration::format_ns(g.longest_ns)
        );
    }
    if !a.switches.is_empty() {
        let _ = writeln!(
            o,
            "ctxsw: inference (paper §4): a context switch happened in each such gap; the \
             shortest is the fastest path through the switch code, the cluster's median the \
             typical cost, the outliers were lengthened by other activity"
        );
    }
    if a.switches.iter().any(|s| s.kind == SwitchKind::Involuntary) {
        let _ = writeln!(
            o,
            "ctxsw: inference (paper §4): an involuntary switch took the CPU from a thread that \
             did not yield or block, so it was a preemption, and on a busy CPU with a periodic \
             tick a clock interrupt was in the gap too: these cost more than voluntary ones"
        );
    }
}

/// What the kernel counted over the run on each CPU a thread ran on most: its timer interrupts
/// (the tick's and every other timer's) and the time the host took it away.
fn cpu_lines(o: &mut String, run: &RunResult, a: &Analysis) {
    let mut cpus: Vec<usize> = a.ticks.iter().map(|t| t.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    for cpu in cpus {
        let k = &run.kernel;
        let timers = k
            .timer_hz(cpu)
            .map(|hz| format!("{hz:.0} timer interrupts a second"));
        let stolen = k
            .stolen_ms_on(cpu)
            .map(|ms| format!("the host took {ms:.0} ms of it (steal)"));
        let said: Vec<String> = timers.into_iter().chain(stolen).collect();
        if !said.is_empty() {
            let _ = writeln!(o, "cpu {cpu}: over the run, {}", said.join("; "));
        }
    }
}

/// Each thread's own gaps: interrupts, or other tasks running.
fn gap_lines(o: &mut String, exp: &Experiment, a: &Analysis) {
    for g in &a.own_gaps {
        let never_blocks = !exp.threads[g.thread].workload.blocks();
        match &g.interrupts {
            Some(s) => {
                let _ = writeln!(
                    o,
                    "irq: thread {}: {} gaps with no context switch ({:.1}/s), {}; {:.3}% of its window",
                    g.thread,
                    s.count,
                    g.interrupts_per_second,
                    summary(s),
                    g.interrupt_share * 100.0
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "irq: thread {}: no gap without a context switch",
                    g.thread
                );
            }
        }
        if let Some(t) = &g.other_tasks {
            let _ = writeln!(
                o,
                "irq: thread {}: {} gaps in which other tasks ran ({} in all, longest {})",
                g.thread,
                t.count,
                duration::format_ns(t.total_ns),
                duration::format_ns(t.max_ns)
            );
        }
        if never_blocks && g.interrupts.is_some() {
            let _ = writeln!(
                o,
                "irq: thread {}: inference (paper §4): it never blocks, so gaps in which no \
                 other task ran were interrupts, bottom halves and kernel work (or the \
                 hypervisor); its unchanged context-switch count confirms no task ran",
                g.thread
            );
        }
    }
}

/// Each deadline thread's jobs met and missed, and by how much.
fn deadline_lines(o: &mut String, exp: &Experiment, a: &Analysis) {
    for d in &a.deadlines {
        let _ = writeln!(
            o,
            "thread {}: missed {} deadlines, hit {}",
            d.thread, d.missed, d.met
        );
        let mut line = format!(
            "deadline: thread {}: {}: {} jobs, {:.2}% met",
            d.thread,
            exp.threads[d.thread].workload,
            d.jobs,
            d.met_share() * 100.0
        );
        if let Some(l) = &d.lateness {
            let _ = write!(
                line,
                "; missed jobs were abandoned at their deadline lacking {} of CPU (at most {} in a row)",
                summary(l),
                d.longest_miss_run
            );
        }
        if let Some(r) = &d.response {
            let _ = write!(line, "; served jobs took {} from release", summary(r));
        }
        if let Some(j) = &d.release_jitter {
            let _ = write!(line, "; timer wake-ups late by {}", summary(j));
        }
        let _ = writeln!(o, "{line}");
    }
}

/// Each latency thread's lateness, and how many samples were later than each bound.
fn latency_lines(o: &mut String, exp: &Experiment, a: &Analysis) {
    for l in &a.latency {
        let counts: Vec<String> = l
            .later_than
            .iter()
            .map(|c| {
                let at = Duration::from_millis(c.ms);
                format!("{}: {}", duration::format(at), c.samples)
            })
            .collect();
        match &l.lateness {
            Some(s) => {
                let _ = writeln!(
                    o,
                    "latency: thread {}: {}: {} samples, {}, mean {}; later than {}",
                    l.thread,
                    exp.threads[l.thread].workload,
                    s.count,
                    summary(s),
                    duration::format_ns(s.mean_ns),
                    counts.join(", ")
                );
            }
            None => {
                let _ = writeln!(o, "latency: thread {}: no samples", l.thread);
            }
        }
    }
}

fn end_word(e: End) -> &'static str {
    match e {
        End::Gap { switched: false } => "gap",
        End::Gap { switched: true } => "gap-switched",
        End::Yield => "yield",
        End::Block => "block",
        End::Finish => "finish",
    }
}

/// The original's trace lines: thread, start, end, length, gap before (ms from the start); the
/// gap is to the previous interval on the same CPU.
fn trace_lines(o: &mut String, run: &RunResult) {
    let ms = |tsc: u64| run.timebase.since_ns(tsc) / 1e6;
    let mut intervals: Vec<_> = run
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Interval(i) => Some(*i),
            _ => None,
        })
        .collect();
    intervals.sort_by_key(|i| i.start);
    let mut last_end: std::collections::HashMap<u16, u64> = Default::default();
    for i in &intervals {
        let gap = last_end
            .insert(i.cpu, i.end)
            .map_or(0.0, |e| run.timebase.ns(i.start.saturating_sub(e)) / 1e6);
        let _ = writeln!(
            o,
            "trace: {} {:.6} {:.6} {:.6} {:.6} cpu={} end={}",
            i.thread,
            ms(i.start),
            ms(i.end),
            run.timebase.ns(i.end - i.start) / 1e6,
            gap,
            i.cpu,
            end_word(i.ended)
        );
    }
    for r in &run.records {
        if let Record::Wake(w) = r {
            let _ = writeln!(o, "latlate: {:.6}", w.lateness_ns as f64 / 1e3);
        }
    }
}

fn raw_lines(o: &mut String, run: &RunResult) {
    for r in &run.records {
        let _ = match r {
            Record::Interval(i) => writeln!(
                o,
                "raw: interval {} {} {} cpu={} end={}",
                i.thread,
                i.start,
                i.end,
                i.cpu,
                end_word(i.ended)
            ),
            Record::Job(j) => writeln!(
                o,
                "raw: job {} {} {} {}",
                j.thread, j.release, j.deadline, j.finish
            ),
            Record::Wake(w) => writeln!(
                o,
                "raw: wake {} {} {} cpu={}",
                w.thread, w.at, w.lateness_ns, w.cpu
            ),
        };
    }
}

pub fn switch_cost(plan: &Plan, results: &[SizeResult]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "switchcost: 1 thread against {} threads of CPU_SCAN on CPU {}, {} per run, {} trials per size",
        plan.threads,
        plan.cpu,
        duration::format(plan.duration),
        plan.trials
    );
    for r in results {
        let lost = r
            .work_lost
            .map(|w| {
                format!(
                    "{:.3}% ± {:.3}% of the work lost",
                    w.mean * 100.0,
                    w.half_width * 100.0
                )
            })
            .unwrap_or_default();
        match &r.cost_ns {
            Some(c) => {
                let _ = writeln!(
                    o,
                    "switchcost: {}: {} ± {} per switch (95% confidence, {} of {} trials; the \
                     others were switched out more alone than in company), {:.1} switches/s, {lost}",
                    size::format(r.bytes as f64),
                    duration::format_ns(c.mean),
                    duration::format_ns(c.half_width),
                    c.n,
                    r.trials.len(),
                    r.switches_per_second
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "switchcost: {}: no estimate (no context switches were seen)",
                    size::format(r.bytes as f64)
                );
            }
        }
    }
    let _ = writeln!(
        o,
        "switchcost: method (paper §5.2): C = (W1 - W{0}) / W1 x T / N{0}, with work W as passes \
         over the working set; on a shared machine, per CPU second received and with the \
         switches to other tasks of both runs: C = (r1 - r{0}) / (r1 n{0} - r{0} n1); both \
         direct and cache costs",
        plan.threads
    );
    o
}
