//! The report section of the functions facility, from what the reader gathered.

use crate::facilities::functions::model::{
    below_resolution, CallEstimate, ClassCostInfo, DurationSummary, EstimateAxis, FunctionInterval,
    FunctionTiming, FunctionsReport, Perturbation, ProbeCostInfo, ProcessHits, RecordStats,
    TargetProbe, ThreadTiming, Throttled,
};
use crate::perf::records::stats::Durations;

use super::calibrate::ProbeCost;
use super::estimate::estimate;
use super::live::{FunctionState, Live, Phase};
use super::settings::Settings;

/// How a run's function timing ended.
pub enum Outcome<'a> {
    /// Nothing was timed, and why.
    Off(&'a str),
    /// The probes ran: what their reader gathered.
    Timed(&'a Live),
}

/// The section of a run: the calibrated cost, then one timing per function, largest total first.
pub fn build(
    settings: &Settings,
    outcome: Outcome<'_>,
    cost: Option<ProbeCost>,
    program_cpu_ns: u64,
) -> FunctionsReport {
    let probe_cost = cost.map_or_else(ProbeCostInfo::default, probe_cost_info);
    let live = match outcome {
        Outcome::Off(why) => return not_timed(settings, why, probe_cost),
        Outcome::Timed(live) => live,
    };
    let open = live.open_frames();
    let mut functions = Vec::new();
    let mut hits_total = 0u64;
    let mut overhead_total = 0f64;
    for (i, st) in live.state.iter().enumerate() {
        let hits = Hits::of(st);
        let overhead = hits.overhead_ns(&live.costs[i]);
        hits_total += hits.count();
        overhead_total += overhead;
        let mut timing = timing(live, i, st, hits, overhead);
        timing.unfinished = open.iter().filter(|(f, _, _)| *f == i).count() as u64;
        functions.push(timing);
    }
    // Intervals are gathered in target order, then reordered with the functions.
    let intervals = live.interval_ns.map(|iv| intervals(live, iv));
    let order = by_total_time(&functions);
    let intervals = intervals.map(|ivs| ivs.iter().map(|iv| reordered(iv, &order)).collect());
    let mut sorted: Vec<Option<FunctionTiming>> = functions.into_iter().map(Some).collect();
    let functions = order.iter().filter_map(|&i| sorted[i].take()).collect();
    FunctionsReport {
        off_reason: None,
        probe_cost,
        policy: settings.policy,
        functions,
        records: RecordStats {
            records: live.records,
            bytes: live.bytes(),
            lost: live.lost,
            ring_buffers: live.sideband_open as u64,
        },
        perturbation: perturbation(hits_total, overhead_total, program_cpu_ns),
        interval_ms: live.interval_ns.map(|iv| iv / 1_000_000),
        intervals: intervals.unwrap_or_default(),
        estimate_axis: live.axis_kind(),
        engine: Some("perf".into()),
        engine_note: None,
        classes: classes(&live.costs),
        first_call_ns: None,
        first_call_spread_ns: None,
        unrecorded: 0,
    }
}

fn probe_cost_info(c: ProbeCost) -> ProbeCostInfo {
    ProbeCostInfo {
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
    }
}

/// The classes calibrated, each once, in class order.
fn classes(costs: &[ProbeCost]) -> Vec<ClassCostInfo> {
    let mut by_class: Vec<&ProbeCost> = costs.iter().collect();
    by_class.sort_by_key(|c| c.class);
    by_class.dedup_by_key(|c| c.class);
    by_class
        .into_iter()
        .map(|c| ClassCostInfo {
            class: c.class.name().to_string(),
            pair_ns: c.pair_ns,
            entry_ns: c.entry_ns,
            inside_ns: c.inside_ns,
            spread_ns: c.spread_ns,
            // The records path takes out one inside part whatever the caches held.
            ..Default::default()
        })
        .collect()
}

/// The section of a run whose functions were not timed.
fn not_timed(settings: &Settings, why: &str, probe_cost: ProbeCostInfo) -> FunctionsReport {
    FunctionsReport {
        off_reason: Some(why.to_string()),
        probe_cost,
        policy: settings.policy,
        functions: Vec::new(),
        records: RecordStats::default(),
        perturbation: Perturbation::default(),
        interval_ms: None,
        intervals: Vec::new(),
        estimate_axis: EstimateAxis::default(),
        engine: None,
        engine_note: None,
        classes: Vec::new(),
        first_call_ns: None,
        first_call_spread_ns: None,
        unrecorded: 0,
    }
}

/// The probe hits one function cost: every entry while probed costs a pair; while counting,
/// an entry hit; sampling windows too.
#[derive(Clone, Copy)]
struct Hits {
    pairs: u64,
    entries: u64,
}

impl Hits {
    fn of(st: &FunctionState) -> Hits {
        let probed_entries = st.counted.unwrap_or(st.entries).max(st.entries);
        let (pairs, entries) = match (st.phase, &st.throttle) {
            (Phase::Counting, Some(t)) => (t.timed, probed_entries.saturating_sub(t.timed)),
            _ => (probed_entries, st.window_hits),
        };
        Hits { pairs, entries }
    }

    fn count(self) -> u64 {
        2 * self.pairs + self.entries
    }

    fn overhead_ns(self, c: &ProbeCost) -> f64 {
        self.pairs as f64 * c.pair_ns + self.entries as f64 * c.entry_ns
    }
}

/// Function `index`'s timing (its unfinished calls left at 0 for the caller).
fn timing(
    live: &Live,
    index: usize,
    st: &FunctionState,
    hits: Hits,
    overhead_ns: f64,
) -> FunctionTiming {
    let cost = &live.costs[index];
    let inclusive = summary(&st.inclusive);
    let too_short = st.inclusive.count > 0 && below_resolution(inclusive.p50_ns, cost.inside_ns);
    let (calls, calls_exact, estimate) = calls(live, st);
    let target = &live.targets[index];
    FunctionTiming {
        name: target.name.clone(),
        symbol: target.symbol.clone(),
        file: target.file.display().to_string(),
        offset: target.offset,
        calls,
        calls_exact,
        timed_calls: st.inclusive.count,
        inclusive,
        exclusive: summary(&st.exclusive),
        too_short,
        throttled: st.throttle.as_ref().map(|t| Throttled {
            reason: t.reason,
            at_ns: t.at_ns.saturating_sub(live.base_ns),
            timed_calls: t.timed,
            mean_ns: t.mean_ns,
            unprobed: false,
            exact_counts_cost_ns: None,
            exact_counts_cost_at_least: false,
        }),
        estimate,
        unfinished: 0,
        unwound: st.unwound,
        orphan_returns: st.orphans,
        lost_entries: st.counted.map_or(0, |k| k.saturating_sub(st.entries)),
        probe_hits: hits.count(),
        overhead_ns: overhead_ns as u64,
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
        probe: Some(TargetProbe {
            class: cost.class.name().to_string(),
            pair_ns: cost.pair_ns,
            entry_ns: cost.entry_ns,
            inside_ns: cost.inside_ns,
        }),
    }
}

/// A function's calls in all, whether they were counted exactly, and the estimate of a sampled
/// one's (its counted calls before the sampling plus the windows' estimate).
fn calls(live: &Live, st: &FunctionState) -> (u64, bool, Option<CallEstimate>) {
    let before = st.counted.unwrap_or(st.entries).max(st.entries);
    if st.phase != Phase::Sampled {
        return (before, true, None);
    }
    let from = st.throttle.as_ref().map_or(0, |t| t.axis);
    let (cost, spread) = live.estimate_cost();
    let e = estimate(&st.windows, from, live.ended_axis, cost, spread);
    let b = before as f64;
    let call_estimate = CallEstimate {
        counted_before: before,
        sampled: e.sampled,
        windows: e.windows as u64,
        calls: e.calls.map(|x| x + b),
        low: e.low + b,
        high: e.high.map(|h| h + b),
        saturated: e.saturated,
    };
    (
        e.calls.map_or(e.low, |x| x) as u64 + before,
        false,
        Some(call_estimate),
    )
}

pub(super) fn summary(d: &Durations) -> DurationSummary {
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

/// Calls per `-I` interval of `iv` ns, in target order; a count is estimated once its function
/// was sampled before the interval's end.
fn intervals(live: &Live, iv: u64) -> Vec<FunctionInterval> {
    let n = live
        .state
        .iter()
        .map(|s| s.intervals.len())
        .max()
        .unwrap_or(0);
    (0..n)
        .map(|k| {
            let end = (k as u64 + 1) * iv;
            FunctionInterval {
                t_end_ns: end,
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
                                .is_some_and(|t| t.at_ns < live.base_ns + end)
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The order of the report: largest total inclusive time first, then most calls.
pub(super) fn by_total_time(functions: &[FunctionTiming]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..functions.len()).collect();
    order.sort_by(|&a, &b| {
        functions[b]
            .inclusive
            .total_ns
            .cmp(&functions[a].inclusive.total_ns)
            .then(functions[b].calls.cmp(&functions[a].calls))
    });
    order
}

/// An interval's columns in `order`.
pub(super) fn reordered(iv: &FunctionInterval, order: &[usize]) -> FunctionInterval {
    FunctionInterval {
        t_end_ns: iv.t_end_ns,
        calls: order.iter().map(|&i| iv.calls[i]).collect(),
        estimated: order.iter().map(|&i| iv.estimated[i]).collect(),
    }
}

/// The probes' hits and cost against the program's CPU time (at most 100%).
pub(super) fn perturbation(probe_hits: u64, overhead_ns: f64, program_cpu_ns: u64) -> Perturbation {
    let cpu = (program_cpu_ns as f64).max(1.0);
    Perturbation {
        probe_hits,
        overhead_ns: overhead_ns as u64,
        program_cpu_ns,
        percent_of_cpu: (100.0 * overhead_ns / cpu).min(100.0),
    }
}
