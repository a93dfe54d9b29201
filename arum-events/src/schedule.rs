//! Placing events on the counters that may hold them: general counters with per-event
//! restrictions (Core 2 PMC0/PMC1-only events), fixed counters (32+i, as Linux numbers them),
//! AMD Zen counter pairs, and NetBurst's ESCR/CCCR pairing, where each event needs one of two
//! ESCRs and a counter fed by that ESCR. An impossible set gets a message naming the conflict.

use serde::{Deserialize, Serialize};

use crate::resolve::HwEvent;
use crate::table::PmuInfo;

/// Index of the first fixed counter, as in Linux (INTEL_PMC_IDX_FIXED).
pub const FIXED_BASE: u32 = 32;
/// Index of the first PERF_METRICS pseudo counter (Linux INTEL_PMC_IDX_METRIC_BASE): the
/// topdown-* events of Ice Lake and later, read from the slots fixed counter's companion MSR.
pub const METRIC_BASE: u32 = 48;
const METRIC_COUNT: u32 = 8;

/// Where one event goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// General counter 0.., or fixed counter 32+i. NetBurst: counter 0..17.
    pub counter: u32,
    /// NetBurst: the ESCR MSR that feeds the counter.
    pub escr_msr: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScheduleError(pub String);

/// Human name of a counter index.
pub fn counter_name(c: u32) -> String {
    if c >= METRIC_BASE {
        format!("PERF_METRICS field {}", c - METRIC_BASE)
    } else if c >= FIXED_BASE {
        format!("fixed counter {}", c - FIXED_BASE)
    } else {
        format!("counter {c}")
    }
}

/// One candidate placement of an event: the counters it occupies and the ESCR it uses.
#[derive(Debug, Clone)]
struct Option_ {
    counters: Vec<u32>,
    escr: Option<u32>,
}

fn options(e: &HwEvent, pmu: &PmuInfo) -> Vec<Option_> {
    if let Some(nb) = &e.netburst {
        return nb
            .escr_msrs
            .iter()
            .zip(&nb.escr_counters)
            .flat_map(|(&msr, counters)| {
                counters.iter().map(move |&c| Option_ {
                    counters: vec![c],
                    escr: Some(msr),
                })
            })
            .collect();
    }
    let metrics = if pmu.fixed_counters >= 4 {
        METRIC_COUNT
    } else {
        0
    };
    let exists = |c: &u32| {
        *c < pmu.general_counters
            || (FIXED_BASE..FIXED_BASE + pmu.fixed_counters).contains(c)
            || (METRIC_BASE..METRIC_BASE + metrics).contains(c)
    };
    let allowed: Vec<u32> = match &e.counters {
        Some(list) => list.iter().copied().filter(exists).collect(),
        None => (0..pmu.general_counters).collect(),
    };
    if e.pair {
        return allowed
            .iter()
            .filter(|&&c| c % 2 == 0 && c + 1 < pmu.general_counters)
            .map(|&c| Option_ {
                counters: vec![c, c + 1],
                escr: None,
            })
            .collect();
    }
    allowed
        .into_iter()
        .map(|c| Option_ {
            counters: vec![c],
            escr: None,
        })
        .collect()
}

/// Places `events` (with their display names) on the counters of `pmu`.
pub fn schedule(
    events: &[(&str, &HwEvent)],
    pmu: &PmuInfo,
) -> Result<Vec<Placement>, ScheduleError> {
    let opts: Vec<Vec<Option_>> = events.iter().map(|(_, e)| options(e, pmu)).collect();
    if let Some(i) = opts.iter().position(Vec::is_empty) {
        return Err(ScheduleError(format!(
            "{} cannot be placed on any counter of this CPU ({} general, {} fixed)",
            events[i].0, pmu.general_counters, pmu.fixed_counters
        )));
    }
    let needed: usize = opts
        .iter()
        .filter(|o| o[0].counters[0] < METRIC_BASE)
        .map(|o| o[0].counters.len())
        .sum();
    let capacity = (pmu.general_counters + pmu.fixed_counters) as usize;
    if needed > capacity {
        return Err(ScheduleError(format!(
            "too many events: {} need {needed} counters, this CPU has {} general and {} fixed counters; count fewer events at once",
            events.len(),
            pmu.general_counters,
            pmu.fixed_counters
        )));
    }
    // Tightest-constrained events first.
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by_key(|&i| opts[i].len());
    let mut chosen = vec![None; events.len()];
    if place(
        &order,
        0,
        &opts,
        &mut chosen,
        &mut Vec::new(),
        &mut Vec::new(),
    ) {
        return Ok(chosen
            .into_iter()
            .map(|c: Option<&Option_>| {
                let o = c.expect("every event placed");
                Placement {
                    counter: o.counters[0],
                    escr_msr: o.escr,
                }
            })
            .collect());
    }
    Err(ScheduleError(explain(events, &opts)))
}

fn place<'a>(
    order: &[usize],
    k: usize,
    opts: &'a [Vec<Option_>],
    chosen: &mut [Option<&'a Option_>],
    used: &mut Vec<u32>,
    escrs: &mut Vec<u32>,
) -> bool {
    let Some(&i) = order.get(k) else {
        return true;
    };
    for o in &opts[i] {
        if o.counters.iter().any(|c| used.contains(c)) || o.escr.is_some_and(|e| escrs.contains(&e))
        {
            continue;
        }
        used.extend(&o.counters);
        escrs.extend(o.escr);
        chosen[i] = Some(o);
        if place(order, k + 1, opts, chosen, used, escrs) {
            return true;
        }
        used.truncate(used.len() - o.counters.len());
        if o.escr.is_some() {
            escrs.pop();
        }
        chosen[i] = None;
    }
    false
}

/// Names the first event that cannot join the ones before it, and those it competes with.
fn explain(events: &[(&str, &HwEvent)], opts: &[Vec<Option_>]) -> String {
    for n in 1..=events.len() {
        let order: Vec<usize> = (0..n).collect();
        let mut chosen = vec![None; n];
        if place(
            &order,
            0,
            &opts[..n],
            &mut chosen,
            &mut Vec::new(),
            &mut Vec::new(),
        ) {
            continue;
        }
        let last = n - 1;
        let resources = |o: &[Option_]| {
            let mut r: Vec<String> = o
                .iter()
                .flat_map(|x| x.counters.iter().map(|c| counter_name(*c)))
                .collect();
            r.extend(
                o.iter()
                    .filter_map(|x| x.escr)
                    .map(|e| format!("ESCR {e:#x}")),
            );
            r.sort();
            r.dedup();
            r
        };
        let mine = resources(&opts[last]);
        let rivals: Vec<&str> = (0..last)
            .filter(|&j| resources(&opts[j]).iter().any(|r| mine.contains(r)))
            .map(|j| events[j].0)
            .collect();
        return format!(
            "cannot count {} together with {}: they compete for {}",
            events[last].0,
            rivals.join(", "),
            mine.join(", ")
        );
    }
    "the events cannot be placed on the counters together".into()
}
