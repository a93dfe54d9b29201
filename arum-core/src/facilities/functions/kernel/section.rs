//! The report section from the in-kernel engine's maps: the same section as the records' path
//! (`super::super::section`), with every count exact while its function was probed and each
//! function's probe cost its class's.

use std::collections::BTreeMap;

use arum_bpf::functions::{FunctionTotals, Totals};
use arum_bpf::hist;

use super::live::{exact_counting_cost, Function, KernelLive, Phase};
use crate::facilities::functions::model::{
    below_resolution, ClassCostInfo, DurationSummary, EstimateAxis, FunctionInterval,
    FunctionTiming, FunctionsReport, ProbeCostInfo, ProcessHits, RecordStats, TargetProbe,
    ThreadTiming, Throttled,
};
use crate::facilities::functions::section::{by_total_time, perturbation, reordered, summary};
use crate::facilities::functions::settings::Settings;
use crate::perf::records::stats::Durations;

/// The section of a run timed by the in-kernel engine: `totals` read after the reap,
/// `program_cpu_ns` the tree's CPU time.
pub fn build(
    settings: &Settings,
    live: &KernelLive,
    totals: &Totals,
    program_cpu_ns: u64,
) -> FunctionsReport {
    let mut functions = Vec::new();
    let (mut hits, mut overhead) = (0u64, 0f64);
    for (i, (target, f)) in settings.targets.iter().zip(&live.functions).enumerate() {
        let t = &totals.functions[i];
        let progress = arum_bpf::functions::Progress {
            calls: t.calls,
            timed: t.timed,
            inclusive_ns: t.inclusive_ns,
        };
        let cost = f.overhead_ns(progress);
        hits += 2 * t.timed + t.calls.saturating_sub(t.timed);
        overhead += cost;
        let inclusive = durations(t, 0);
        functions.push(FunctionTiming {
            name: target.name.clone(),
            symbol: target.symbol.clone(),
            file: target.file.display().to_string(),
            offset: target.offset,
            calls: t.calls,
            calls_exact: f.phase != Phase::Unprobed,
            timed_calls: t.timed,
            too_short: t.timed > 0 && below_resolution(inclusive.p50_ns, f.cost.inside_ns),
            inclusive,
            exclusive: durations(t, 1),
            throttled: throttled(f, program_cpu_ns),
            estimate: None,
            unfinished: t.unfinished,
            unwound: t.unwound,
            orphan_returns: 0,
            lost_entries: 0,
            probe_hits: 2 * t.timed + t.calls.saturating_sub(t.timed),
            overhead_ns: cost as u64,
            threads: threads(totals, i as u32),
            processes: processes(totals, i as u32, live),
            probe: Some(TargetProbe {
                class: f.cost.class.name().to_string(),
                pair_ns: f.cost.pair_ns,
                entry_ns: f.cost.entry_ns,
                inside_ns: f.cost.inside_ns,
            }),
        });
    }
    let intervals = live
        .interval_ns
        .map(|iv| intervals(&live.functions, totals, iv))
        .unwrap_or_default();
    let order = by_total_time(&functions);
    let intervals = intervals.iter().map(|iv| reordered(iv, &order)).collect();
    let mut sorted: Vec<Option<FunctionTiming>> = functions.into_iter().map(Some).collect();
    FunctionsReport {
        off_reason: None,
        probe_cost: ProbeCostInfo {
            calibration_calls: super::super::calibrate::CALLS as u64,
            calibration_rounds: super::super::calibrate::ROUNDS as u64,
            ..ProbeCostInfo::default()
        },
        policy: settings.policy,
        functions: order.iter().filter_map(|&i| sorted[i].take()).collect(),
        records: RecordStats::default(),
        perturbation: perturbation(hits, overhead, program_cpu_ns),
        interval_ms: live.interval_ns.map(|iv| iv / 1_000_000),
        intervals,
        estimate_axis: EstimateAxis::default(),
        engine: Some("bpf".into()),
        engine_note: None,
        classes: live
            .kernel
            .classes
            .iter()
            .map(|c| ClassCostInfo {
                class: c.class.name().to_string(),
                pair_ns: c.pair_ns,
                entry_ns: c.entry_ns,
                inside_ns: c.inside_ns,
                spread_ns: c.spread_ns,
                entry_run_warm_ns: c.cold.run_warm_ns,
                entry_run_cold_ns: c.cold.run_cold_ns,
                inside_cold_ns: c.cold.inside_cold_ns,
                cold_slope: c.cold.slope,
            })
            .collect(),
        first_call_ns: live.kernel.first_call.map(|f| f.median_ns),
        first_call_spread_ns: live.kernel.first_call.map(|f| f.spread_ns),
        unrecorded: totals.unrecorded + totals.unbinned,
    }
}

/// Durations from the program's histogram (`kind` 0 inclusive, 1 exclusive).
fn durations(t: &FunctionTotals, kind: u8) -> DurationSummary {
    let (hist, total, max) = if kind == 0 {
        (&t.inclusive_hist, t.inclusive_ns, t.inclusive_max_ns)
    } else {
        (&t.exclusive_hist, t.exclusive_ns, t.exclusive_max_ns)
    };
    summary(&Durations::from_buckets(
        hist.iter().map(|&(b, n)| {
            let (low, high) = hist::bounds(b);
            (low, high, n)
        }),
        t.timed,
        total,
        max,
    ))
}

fn throttled(f: &Function, program_cpu_ns: u64) -> Option<Throttled> {
    let s = f.step_down?;
    let predicted = exact_counting_cost(f, program_cpu_ns);
    Some(Throttled {
        reason: s.reason,
        at_ns: s.at_ns,
        timed_calls: s.timed,
        mean_ns: s.mean_ns,
        unprobed: f.phase == Phase::Unprobed,
        exact_counts_cost_ns: predicted.map(|(ns, _)| ns as u64),
        exact_counts_cost_at_least: predicted.is_some_and(|(_, at_least)| at_least),
    })
}

fn threads(totals: &Totals, func: u32) -> Vec<ThreadTiming> {
    totals
        .threads
        .range((func, 0)..=(func, u32::MAX))
        .map(|(&(_, tid), t)| ThreadTiming {
            tid,
            pid: t.pid,
            calls: t.calls,
            timed_calls: t.timed,
            inclusive_ns: t.inclusive_ns,
            exclusive_ns: t.exclusive_ns,
        })
        .collect()
}

fn processes(totals: &Totals, func: u32, live: &KernelLive) -> Vec<ProcessHits> {
    let mut by_pid: BTreeMap<u32, u64> = BTreeMap::new();
    for (_, t) in totals.threads.range((func, 0)..=(func, u32::MAX)) {
        *by_pid.entry(t.pid).or_default() += t.calls;
    }
    by_pid
        .into_iter()
        .map(|(pid, calls)| ProcessHits {
            pid,
            name: live.names.get(&pid).cloned(),
            calls,
        })
        .collect()
}

/// Calls per `-I` interval of `iv` ns, in target order: differences of the cumulative counts
/// read at each interval's end, the last interval's up to the final totals.
fn intervals(functions: &[Function], totals: &Totals, iv: u64) -> Vec<FunctionInterval> {
    let n = functions
        .iter()
        .map(|f| f.intervals.len())
        .max()
        .unwrap_or(0);
    (0..=n)
        .map(|k| FunctionInterval {
            t_end_ns: (k as u64 + 1) * iv,
            calls: functions
                .iter()
                .zip(&totals.functions)
                .map(|(f, t)| {
                    let at = |j: usize| f.intervals.get(j).copied().unwrap_or(t.calls);
                    let before = if k == 0 { 0 } else { at(k - 1) };
                    at(k).saturating_sub(before)
                })
                .collect(),
            estimated: vec![false; functions.len()],
        })
        .collect()
}
