//! The report section of the functions facility, from what the reader gathered.

use crate::facilities::functions::model::{
    CallEstimate, DurationSummary, EstimateAxis, FunctionInterval, FunctionTiming, FunctionsReport,
    Perturbation, ProbeCostInfo, ProcessHits, RecordStats, ThreadTiming, Throttled,
};
use crate::perf::records::stats::Durations;

use super::calibrate::ProbeCost;
use super::estimate::estimate;
use super::live::{Live, Phase};
use super::settings::Settings;

fn summary(d: &Durations) -> DurationSummary {
    DurationSummary {
        total_ns: d.total_ns,
        mean_ns: d.mean_ns(),
        min_ns: d.min(),
        max_ns: d.max_ns,
        p50_ns: d.quantile_ns(0.5),
        p90_ns: d.quantile_ns(0.9),
        p99_ns: d.quantile_ns(0.99),
    }
}

pub fn build(
    settings: &Settings,
    off: Option<&str>,
    cost: Option<ProbeCost>,
    live: Option<&Live>,
    program_cpu_ns: u64,
) -> FunctionsReport {
    let p = settings.policy;
    let policy = p;
    let probe_cost = cost.map_or_else(ProbeCostInfo::default, |c| ProbeCostInfo {
        pair_ns: c.pair_ns,
        entry_ns: c.entry_ns,
        inside_ns: c.inside_ns,
        spread_ns: c.spread_ns,
        entry_user_cycles: c.entry_user_cycles.map(|h| h.per_hit),
        back_to_back_intervals: c.back_to_back.intervals as u64,
        back_to_back_mean_ns: c.back_to_back.mean_ns,
        back_to_back_sd_ns: c.back_to_back.sd_ns,
        back_to_back_median_ns: c.back_to_back.median_ns,
        calibration_calls: c.calls as u64,
        calibration_rounds: c.rounds as u64,
    });
    let Some(live) = live else {
        return FunctionsReport {
            off_reason: Some(off.unwrap_or("no probe was opened").to_string()),
            probe_cost,
            policy,
            functions: Vec::new(),
            records: RecordStats::default(),
            perturbation: Perturbation::default(),
            interval_ms: None,
            intervals: Vec::new(),
            estimate_axis: EstimateAxis::default(),
        };
    };
    let c = live.cost;
    let open = live.open_frames();
    let mut functions = Vec::new();
    let mut hits_total = 0u64;
    let mut overhead_total = 0f64;
    for (i, (t, st)) in live.targets.iter().zip(&live.state).enumerate() {
        // Hits: every entry while probed costs a pair; while counting, an entry hit; windows too.
        let probed_entries = st.counted.unwrap_or(st.entries).max(st.entries);
        let (pair_calls, entry_hits) = match (st.phase, &st.throttle) {
            (Phase::Counting, Some(t)) => (t.timed, probed_entries.saturating_sub(t.timed)),
            _ => (probed_entries, st.window_hits),
        };
        let overhead = pair_calls as f64 * c.pair_ns + entry_hits as f64 * c.entry_ns;
        hits_total += 2 * pair_calls + entry_hits;
        overhead_total += overhead;

        let too_short =
            st.inclusive.count > 0 && st.inclusive.mean_ns() < p.short_factor * c.pair_ns;
        let mut est = None;
        let (calls, exact) = match st.phase {
            Phase::Sampled => {
                let before = st.counted.unwrap_or(st.entries).max(st.entries);
                let from = st.throttle.as_ref().map_or(0, |t| t.axis);
                let (cost, spread) = live.estimate_cost();
                let e = estimate(&st.windows, from, live.ended_axis, cost, spread);
                let b = before as f64;
                est = Some(CallEstimate {
                    counted_before: before,
                    sampled: e.sampled,
                    windows: e.windows as u64,
                    calls: e.calls.map(|x| x + b),
                    low: e.low + b,
                    high: e.high.map(|h| h + b),
                    saturated: e.saturated,
                });
                (e.calls.map_or(e.low, |x| x) as u64 + before, false)
            }
            _ => (st.counted.unwrap_or(st.entries).max(st.entries), true),
        };
        let lost_entries = st.counted.map_or(0, |k| k.saturating_sub(st.entries));
        functions.push(FunctionTiming {
            name: t.name.clone(),
            symbol: t.symbol.clone(),
            file: t.file.display().to_string(),
            offset: t.offset,
            calls,
            calls_exact: exact,
            timed_calls: st.inclusive.count,
            inclusive: summary(&st.inclusive),
            exclusive: summary(&st.exclusive),
            too_short,
            throttled: st.throttle.as_ref().map(|t| Throttled {
                reason: t.reason,
                at_ns: t.at_ns.saturating_sub(live.base_ns),
                timed_calls: t.timed,
                mean_ns: t.mean_ns,
            }),
            estimate: est,
            unfinished: open.iter().filter(|(f, _, _)| *f == i).count() as u64,
            unwound: st.unwound,
            orphan_returns: st.orphans,
            lost_entries,
            probe_hits: 2 * pair_calls + entry_hits,
            overhead_ns: overhead as u64,
            threads: st
                .threads
                .iter()
                .map(|(&tid, a)| ThreadTiming {
                    tid,
                    pid: a.pid,
                    calls: a.calls,
                    timed_calls: a.timed,
                    inclusive_ns: a.inclusive,
                    exclusive_ns: a.exclusive,
                })
                .collect(),
            processes: st
                .processes
                .iter()
                .map(|(&pid, &n)| ProcessHits {
                    pid,
                    name: live.names.get(&pid).cloned(),
                    calls: n,
                })
                .collect(),
        });
    }
    // Intervals before sorting, in target order; then reorder with the functions.
    let intervals = live.interval_ns.map(|iv| {
        let n = live
            .state
            .iter()
            .map(|s| s.intervals.len())
            .max()
            .unwrap_or(0);
        (0..n)
            .map(|k| FunctionInterval {
                t_end_ns: (k as u64 + 1) * iv,
                calls: live
                    .state
                    .iter()
                    .map(|s| s.intervals.get(k).copied().unwrap_or(0))
                    .collect(),
                estimated: live
                    .state
                    .iter()
                    .map(|s| {
                        s.phase == Phase::Sampled
                            && s.throttle
                                .as_ref()
                                .is_some_and(|t| t.at_ns < live.base_ns + (k as u64 + 1) * iv)
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    });
    let mut order: Vec<usize> = (0..functions.len()).collect();
    order.sort_by(|&a, &b| {
        functions[b]
            .inclusive
            .total_ns
            .cmp(&functions[a].inclusive.total_ns)
            .then(functions[b].calls.cmp(&functions[a].calls))
    });
    let intervals = intervals.map(|ivs| {
        ivs.into_iter()
            .map(|iv| FunctionInterval {
                t_end_ns: iv.t_end_ns,
                calls: order.iter().map(|&i| iv.calls[i]).collect(),
                estimated: order.iter().map(|&i| iv.estimated[i]).collect(),
            })
            .collect()
    });
    let mut sorted: Vec<Option<FunctionTiming>> = functions.into_iter().map(Some).collect();
    let functions = order.iter().filter_map(|&i| sorted[i].take()).collect();
    let cpu = (program_cpu_ns as f64).max(1.0);
    FunctionsReport {
        off_reason: None,
        probe_cost,
        policy,
        functions,
        records: RecordStats {
            records: live.records,
            bytes: live.bytes(),
            lost: live.lost,
            ring_buffers: live.sideband_open as u64,
        },
        perturbation: Perturbation {
            probe_hits: hits_total,
            overhead_ns: overhead_total as u64,
            program_cpu_ns,
            percent_of_cpu: (100.0 * overhead_total / cpu).min(100.0),
        },
        interval_ms: live.interval_ns.map(|iv| iv / 1_000_000),
        intervals: intervals.unwrap_or_default(),
        estimate_axis: live.axis_kind(),
    }
}
