//! From the names the user gave to what will be counted: resolve every name, place the hardware
//! events on counters, and when anything fails, switch hardware counting off with one reason
//! (as the original ARUM does), keeping the software events.

use serde::{Deserialize, Serialize};

use crate::cpu::{CpuIdent, PmuFacts, PmuSource};
use crate::resolve::{EventKind, ResolvedEvent, Resolver};
use crate::schedule::{schedule, Placement};
use crate::table::{PmuInfo, Table};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Events that will be counted, in the order given: software ones always, hardware ones
    /// only while hardware counting is on.
    pub events: Vec<PlannedEvent>,
    /// Why hardware counting is off, if it is.
    pub hardware_off: Option<String>,
    /// The CPU the names were resolved for (`VENDOR-FAMILY-MODEL`).
    pub cpu_key: String,
    /// The event table used (`name`), if the CPU has one.
    pub table: Option<String>,
    pub microarchitecture: Option<String>,
    /// The counters the placement used.
    pub pmu: Option<PmuFacts>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedEvent {
    pub event: ResolvedEvent,
    pub placement: Option<Placement>,
}

/// The counters to place events on: the table's, narrowed by what CPUID reports where it
/// reports anything (e.g. 8 general counters on Skylake-SP with Hyper-Threading off).
pub fn counters(table: &Table, cpuid: Option<PmuFacts>) -> PmuFacts {
    let t: PmuInfo = table.pmu;
    match cpuid {
        Some(c) if c.source == PmuSource::Cpuid && c.general_counters > 0 => c,
        _ => PmuFacts {
            arch_perfmon_version: 0,
            general_counters: t.general_counters,
            counter_width: t.counter_width,
            fixed_counters: t.fixed_counters,
            fixed_width: t.fixed_width,
            source: PmuSource::Table,
        },
    }
}

/// Resolves and places `specs` for `cpu`.
pub fn plan(
    specs: &[String],
    cpu: &CpuIdent,
    table: Option<&Table>,
    cpuid_pmu: Option<PmuFacts>,
) -> Plan {
    let resolver = Resolver { cpu, table };
    let mut problems = Vec::new();
    let mut events = Vec::new();
    for spec in specs {
        match resolver.resolve(spec) {
            Ok(ev) => events.push(ev),
            Err(e) => problems.push(e.to_string()),
        }
    }
    let pmu = table.map(|t| counters(t, cpuid_pmu));
    let hw: Vec<(usize, &ResolvedEvent)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.kind, EventKind::Hardware(_)))
        .collect();
    let mut placements = vec![None; events.len()];
    if problems.is_empty() && !hw.is_empty() {
        if let Some(p) = pmu {
            let info = PmuInfo {
                general_counters: p.general_counters,
                counter_width: p.counter_width,
                fixed_counters: p.fixed_counters,
                fixed_width: p.fixed_width,
            };
            let list: Vec<(&str, &crate::resolve::HwEvent)> = hw
                .iter()
                .map(|(_, e)| match &e.kind {
                    EventKind::Hardware(h) => (e.name.as_str(), h),
                    EventKind::Software { .. } => unreachable!("filtered to hardware events"),
                })
                .collect();
            match schedule(&list, &info) {
                Ok(placed) => {
                    for ((i, _), p) in hw.iter().zip(placed) {
                        placements[*i] = Some(p);
                    }
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
    }
    let hardware_off = (!problems.is_empty()).then(|| problems.join("; "));
    let keep_hw = hardware_off.is_none();
    Plan {
        events: events
            .into_iter()
            .zip(placements)
            .filter(|(e, _)| keep_hw || matches!(e.kind, EventKind::Software { .. }))
            .map(|(event, placement)| PlannedEvent { event, placement })
            .collect(),
        hardware_off,
        cpu_key: cpu.key(),
        table: table.map(|t| t.table.name.clone()),
        microarchitecture: table.map(|t| t.table.title.clone()),
        pmu,
    }
}
