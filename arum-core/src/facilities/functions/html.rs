//! `-F`: function timing by uprobes: the table of functions, the quantiles of their durations
//! as a plot, and each function's threads and processes.

use super::model::FunctionsReport;
use crate::facilities::functions::model::{
    DurationSummary, FunctionTiming, ThrottleMode, ThrottleReason,
};
use crate::render::html::page::{facts, figure, item, para, section, table};
use crate::render::html::plot::{self, Series};
use arum_units::duration;
use arum_units::quantity::grouped;

pub fn render(f: &FunctionsReport) -> String {
    let mut body = String::new();
    if let Some(why) = &f.off_reason {
        body.push_str(&para(&format!("No function was timed: {why}")));
    }
    body.push_str(&cost_facts(f));
    let rows: Vec<Vec<String>> = f.functions.iter().map(row).collect();
    body.push_str(&table(
        &[
            "function",
            "calls",
            "timed",
            "total",
            "mean",
            "min",
            "median",
            "p90",
            "p99",
            "max",
            "exclusive total",
            "state",
        ],
        &rows,
    ));
    let timed: Vec<&FunctionTiming> = f.functions.iter().filter(|x| x.timed_calls > 0).collect();
    if !timed.is_empty() {
        body.push_str(&quantile_plot(&timed));
    }
    for x in &f.functions {
        body.push_str(&item(&x.name, &function_detail(x)));
    }
    section("functions", "Function timing (-F)", &body)
}

/// The engine, the probes' cost, the throttling, the records read and the overhead.
fn cost_facts(f: &FunctionsReport) -> String {
    let ns = |v: f64| duration::format_ns(v);
    let mut rows = vec![(
        "engine",
        match f.engine.as_deref() {
            Some("bpf") => "uprobes counted in the kernel (BPF)".to_string(),
            _ => match &f.engine_note {
                Some(note) => format!("probe records ({note})"),
                None => "probe records".to_string(),
            },
        },
    )];
    if f.classes.is_empty() {
        rows.push((
            "probe cost (entry and return)",
            format!(
                "{} ± {}",
                ns(f.probe_cost.pair_ns),
                ns(f.probe_cost.spread_ns)
            ),
        ));
    } else {
        rows.push((
            "probe cost by first instruction (timed call / entry hit)",
            f.classes
                .iter()
                .map(|c| format!("{} {} / {}", c.class, ns(c.pair_ns), ns(c.entry_ns)))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    rows.push(("throttling", mode_words(f.policy.mode).to_string()));
    if f.engine.as_deref() != Some("bpf") {
        rows.push((
            "records",
            format!(
                "{} ({} lost, {} ring buffers)",
                f.records.records, f.records.lost, f.records.ring_buffers
            ),
        ));
    }
    rows.push((
        "probe overhead",
        format!(
            "{} ({:.2}% of the program's CPU time)",
            ns(f.perturbation.overhead_ns as f64),
            f.perturbation.percent_of_cpu
        ),
    ));
    facts(&rows)
}

/// The throttling mode as the options that choose it.
fn mode_words(mode: ThrottleMode) -> &'static str {
    match mode {
        ThrottleMode::Throttle => "functions too short or over the budget are throttled (default)",
        ThrottleMode::ExactCounts => "every call counted (--exact-counts)",
        ThrottleMode::NoThrottle => "every call timed (--no-throttle)",
    }
}

/// The quantiles of each timed function's inclusive durations, one line each, on a log scale.
fn quantile_plot(timed: &[&FunctionTiming]) -> String {
    let quantiles: Vec<String> = ["min", "median", "p90", "p99", "max"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let series: Vec<Series> = timed
        .iter()
        .map(|x| Series {
            name: x.name.clone(),
            points: profile(&x.inclusive)
                .into_iter()
                .enumerate()
                .map(|(i, v)| (i as f64, v))
                .collect(),
        })
        .collect();
    figure(plot::lines(
        "Distribution of inclusive durations (quantiles, log scale)",
        "quantile",
        "ns",
        &series,
        Some(&quantiles),
        plot::YAxis::Log,
    ))
}

/// Threads in a function's table: the busiest, so that a page of a 2,000-thread run stays
/// readable.
const THREADS_SHOWN: usize = 50;

/// One function's site, its threads, and the estimate of its calls when it was sampled.
fn function_detail(x: &FunctionTiming) -> String {
    let ns = |v: f64| duration::format_ns(v);
    let mut busiest: Vec<_> = x.threads.iter().collect();
    busiest.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.tid.cmp(&b.tid)));
    let threads: Vec<Vec<String>> = busiest
        .iter()
        .take(THREADS_SHOWN)
        .map(|t| {
            vec![
                format!("{} (pid {})", t.tid, t.pid),
                grouped(t.calls),
                grouped(t.timed_calls),
                ns(t.inclusive_ns as f64),
                ns(t.exclusive_ns as f64),
            ]
        })
        .collect();
    let mut inner = para(&format!("{} in {} at {:#x}", x.symbol, x.file, x.offset));
    inner.push_str(&table(
        &["thread", "calls", "timed", "inclusive", "exclusive"],
        &threads,
    ));
    if x.threads.len() > THREADS_SHOWN {
        inner.push_str(&para(&format!(
            "The {THREADS_SHOWN} busiest of {} threads; the JSON report has every one.",
            x.threads.len()
        )));
    }
    if let Some(est) = &x.estimate {
        inner.push_str(&para(&format!(
            "Calls estimated from {} sampling windows: {} (95% {} – {}){}",
            est.windows,
            est.calls.map_or("none".into(), |c| format!("{c:.0}")),
            est.low,
            est.high.map_or("unbounded".into(), |h| format!("{h:.0}")),
            if est.saturated { ", saturated" } else { "" }
        )));
    }
    inner
}

fn row(x: &FunctionTiming) -> Vec<String> {
    let ns = |v: f64| duration::format_ns(v);
    let i = &x.inclusive;
    let state = match (&x.throttled, x.too_short) {
        (Some(t), _) => match t.reason {
            ThrottleReason::TooShort => "throttled: too short".into(),
            ThrottleReason::Budget => "throttled: probe budget".into(),
        },
        (None, true) => "below the probes' resolution".into(),
        (None, false) => String::new(),
    };
    vec![
        x.name.clone(),
        format!("{}{}", x.calls, calls_note(x)),
        grouped(x.timed_calls),
        ns(i.total_ns as f64),
        ns(i.mean_ns),
        ns(i.min_ns as f64),
        ns(i.p50_ns as f64),
        ns(i.p90_ns as f64),
        ns(i.p99_ns as f64),
        ns(i.max_ns as f64),
        ns(x.exclusive.total_ns as f64),
        state,
    ]
}

/// min, median, p90, p99, max in ns.
fn profile(d: &DurationSummary) -> [f64; 5] {
    [d.min_ns, d.p50_ns, d.p90_ns, d.p99_ns, d.max_ns].map(|v| v as f64)
}

/// What a function's call count is when it is not exact: an estimate, or a lower bound.
fn calls_note(x: &FunctionTiming) -> &'static str {
    match (&x.estimate, x.calls_exact) {
        (_, true) => "",
        (Some(e), false) if e.calls.is_some() => " (est.)",
        _ => " (at least)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facilities::functions::model::{ClassCostInfo, ThrottlePolicy};

    fn report(mode: ThrottleMode) -> FunctionsReport {
        FunctionsReport {
            off_reason: None,
            probe_cost: Default::default(),
            policy: ThrottlePolicy {
                mode,
                ..ThrottlePolicy::default()
            },
            functions: Vec::new(),
            records: Default::default(),
            perturbation: Default::default(),
            interval_ms: None,
            intervals: Vec::new(),
            estimate_axis: Default::default(),
            engine: Some("bpf".into()),
            engine_note: None,
            classes: vec![ClassCostInfo {
                class: "push".into(),
                pair_ns: 1900.0,
                entry_ns: 850.0,
                inside_ns: 700.0,
                spread_ns: 50.0,
                ..Default::default()
            }],
            first_call_ns: None,
            first_call_spread_ns: None,
            unrecorded: 0,
        }
    }

    #[test]
    fn the_facts_speak_of_options_and_classes_not_of_rust_names() {
        let html = cost_facts(&report(ThrottleMode::ExactCounts));
        assert!(
            html.contains("every call counted (--exact-counts)"),
            "{html}"
        );
        assert!(!html.contains("ExactCounts"), "{html}");
        assert!(html.contains("push 1.9 µs / 850 ns"), "{html}");
        assert!(html.contains("in the kernel (BPF)"), "{html}");
        // No ring buffers in the kernel engine.
        assert!(!html.contains("ring buffers"), "{html}");
    }
}
