//! From readings to report values: per-CPU counts, multiplexing and scaling, totals, ratios.

use super::backend::EventSetup;
use crate::facilities::counters::model::{CpuCount, EventCounts, EventStatus, Ratio};
use crate::perf::sys::Reading;

/// Below this share of the reference time an event counts as multiplexed (scheduling jitter
/// between the event and its reference is a few microseconds).
const FULL: f64 = 0.995;

/// How per-CPU readings are scaled for multiplexing.
#[derive(Debug, Clone, Copy)]
pub enum Scaling<'a> {
    /// App scope: per CPU, an event should have run as long as the task ran there (the
    /// reference task-clock of each CPU).
    Reference(&'a [Reading]),
    /// Whole CPUs: an event should have run as long as it was enabled.
    EnabledRunning,
    /// Not scaled: software events (never multiplexed), or no reference to scale against
    /// (task-bound per-CPU values must never be scaled by their own enabled time).
    Unscaled,
}

impl Scaling<'_> {
    /// The time reading `r` on the CPU of index `c` should have counted for.
    fn expected(&self, r: Reading, c: usize) -> u64 {
        match self {
            Scaling::Reference(v) => v.get(c).map_or(r.running_ns, |x| x.value),
            Scaling::EnabledRunning => r.enabled_ns,
            Scaling::Unscaled => r.running_ns,
        }
    }
}

/// Scales one per-CPU reading that should have counted for `expected` ns.
fn scale(r: Reading, expected: u64) -> (u64, f64) {
    if expected == 0 || r.running_ns as f64 >= expected as f64 * FULL {
        return (r.value, 100.0);
    }
    if r.running_ns == 0 {
        return (0, 0.0);
    }
    let scaled = (r.value as u128 * expected as u128 / r.running_ns as u128) as u64;
    (scaled, 100.0 * r.running_ns as f64 / expected as f64)
}

/// Each event's counts from its readings `finals[event][slot]`: per CPU of `cpus`, or with
/// `cpus` None one reading per event (the whole program's), kept as its total only.
pub fn events(
    setups: &[EventSetup],
    finals: &[Vec<Option<Reading>>],
    scaling: Scaling<'_>,
    cpus: Option<&[u32]>,
) -> Vec<EventCounts> {
    setups
        .iter()
        .zip(finals)
        .map(|(s, readings)| {
            let ev = &s.planned.event;
            let mut per_cpu = Vec::new();
            let mut read = false;
            let (mut raw, mut scaled, mut enabled, mut running, mut expected) =
                (0u64, 0u64, 0u64, 0u64, 0u64);
            for (c, reading) in readings.iter().enumerate() {
                let Some(r) = *reading else { continue };
                let should = scaling.expected(r, c);
                let (sc, pct) = scale(r, should);
                raw += r.value;
                scaled += sc;
                enabled += r.enabled_ns;
                running += r.running_ns;
                expected += should;
                read = true;
                let Some(cpus) = cpus else { continue };
                per_cpu.push(CpuCount {
                    cpu: cpus[c],
                    raw: r.value,
                    scaled: sc,
                    time_enabled_ns: r.enabled_ns,
                    time_running_ns: r.running_ns,
                    percent_running: pct,
                });
            }
            let counted = s.error.is_none() && read;
            // A pinned counter the kernel could not place never runs while the task does.
            let unscheduled = counted && running == 0 && expected > 0;
            let percent = if expected == 0 {
                100.0
            } else {
                (100.0 * running as f64 / expected as f64).min(100.0)
            };
            EventCounts {
                spec: ev.spec.clone(),
                name: ev.name.clone(),
                alias: ev.alias.clone(),
                perf_type: s.perf_type,
                config: format!("{:#x}", s.config),
                config1: (s.config1 != 0).then(|| format!("{:#x}", s.config1)),
                counter: s.planned.placement.map(|p| p.counter),
                encoding: ev.source.describe(),
                requested: s.planned.requested,
                status: match (counted, unscheduled) {
                    (true, false) => EventStatus::Counted,
                    (true, true) => EventStatus::NotScheduled,
                    (false, _) => EventStatus::NotSupported,
                },
                reason: s.error.clone().or_else(|| {
                    unscheduled.then(|| "the kernel could not give it a counter while the program ran (pinned: not multiplexed)".into())
                }),
                per_cpu,
                total_raw: raw,
                total_scaled: scaled,
                time_enabled_ns: enabled,
                time_running_ns: running,
                percent_running: if counted { percent } else { 0.0 },
                multiplexed: counted && percent < FULL * 100.0,
            }
        })
        .collect()
}

/// The ratios of two events' totals: name, numerator's names, denominator's names (an alias or
/// perf's generic name). Each has a row in the report's fields (`model::FIELDS`).
pub const RATIOS: &[(&str, &[&str], &[&str])] = &[
    (
        "data cache miss rate",
        &["dcache_misses"],
        &["dcache_accesses"],
    ),
    (
        "instructions per cycle (IPC)",
        &["instructions"],
        &["cycles"],
    ),
    ("branch miss rate", &["branch_misses"], &["branches"]),
    (
        "last-level cache miss rate",
        &["llc_misses"],
        &["llc_references"],
    ),
    (
        "DTLB miss rate, L1 miss / L2 hit",
        &["L1_DTLBmiss_L2_DTLBhit"],
        &["dcache_accesses"],
    ),
    (
        "DTLB miss rate, both levels",
        &["L1_L2_DTLBmiss"],
        &["dcache_accesses"],
    ),
];

/// Ratios whose inputs were both counted, found by alias (or perf's generic names).
pub fn ratios(events: &[EventCounts]) -> Vec<Ratio> {
    let find = |names: &[&str]| {
        events.iter().find(|e| {
            e.status == EventStatus::Counted
                && names
                    .iter()
                    .any(|n| e.alias.as_deref() == Some(*n) || e.name == *n)
        })
    };
    RATIOS
        .iter()
        .filter_map(|(name, num, den)| {
            let (n, d) = (find(num)?, find(den)?);
            (d.total_scaled > 0).then(|| Ratio {
                name: name.to_string(),
                value: n.total_scaled as f64 / d.total_scaled as f64,
                numerator: n.name.clone(),
                denominator: d.name.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(value: u64, enabled_ns: u64, running_ns: u64) -> Reading {
        Reading {
            value,
            enabled_ns,
            running_ns,
        }
    }

    #[test]
    fn per_cpu_task_bound_values_are_not_scaled_by_enabled_time() {
        // The task ran 40 ms on this CPU; the counter counted all of it, though enabled 133 ms.
        let refr = [r(40_000_000, 133_000_000, 40_000_000)];
        let reading = r(1000, 133_000_000, 40_000_000);
        let should = Scaling::Reference(&refr).expected(reading, 0);
        assert_eq!(scale(reading, should), (1000, 100.0));
        // Without a reference, the same reading is left alone.
        let should = Scaling::Unscaled.expected(reading, 0);
        assert_eq!(scale(reading, should), (1000, 100.0));
    }

    #[test]
    fn multiplexed_values_are_scaled_to_the_reference() {
        let refr = [r(40_000_000, 133_000_000, 40_000_000)];
        let reading = r(1000, 133_000_000, 20_000_000);
        let (scaled, pct) = scale(reading, Scaling::Reference(&refr).expected(reading, 0));
        assert_eq!(scaled, 2000);
        assert!((pct - 50.0).abs() < 1e-9);
        // System scope: enabled/running.
        let reading = r(1000, 100, 25);
        assert_eq!(
            scale(reading, Scaling::EnabledRunning.expected(reading, 0)).0,
            4000
        );
    }
}
