//! From the names the user gave to what will be counted: resolve every name, add the events the
//! requested metrics need, place the hardware events on counters (per core type on hybrid
//! parts), and when a named event fails, switch hardware counting off with one reason (as the
//! original ARUM does), keeping the software events. A metric whose events cannot be counted
//! is kept with the reason and gets no value.

use serde::{Deserialize, Serialize};

use crate::cpu::{ArchPerfmon, CpuIdent, PmuFacts, PmuSource};
use crate::hybrid::CoreTypes;
use crate::metrics::{self, PlannedMetric, RunFacts};
use crate::resolve::{EventKind, HwEvent, ResolveError, ResolvedEvent, Resolver};
use crate::schedule::{schedule, Placement};
use crate::sysfs::Pmus;
use crate::table::{PmuInfo, Table, TableSource, Unit};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Events that will be counted: those named (in order), then those only metrics need.
    /// Software ones always, hardware ones only while hardware counting is on.
    pub events: Vec<PlannedEvent>,
    /// Why hardware counting is off, if it is.
    pub hardware_off: Option<String>,
    /// The CPU the names were resolved for (`VENDOR-FAMILY-MODEL`).
    pub cpu_key: String,
    /// The event table used (`name`), if the CPU has one.
    pub table: Option<String>,
    pub microarchitecture: Option<String>,
    /// The counters the placement used (the main core type's on hybrid parts).
    pub pmu: Option<PmuFacts>,
    /// Which CPU is which core type, on a hybrid part arum runs on.
    pub core_types: Option<CoreTypes>,
    /// The metrics asked for with -M, with the events each reads or why it cannot be computed.
    pub metrics: Vec<PlannedMetric>,
    /// Things the user should know that are not errors (assumed PMU types, a likely typo in --cpu).
    pub notes: Vec<String>,
    /// The names this CPU's table and the kernel do not know, with the message saying so: the
    /// caller tells a misspelling (no table knows the name) from another CPU's event.
    #[serde(skip)]
    pub unknown: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedEvent {
    pub event: ResolvedEvent,
    /// The counter of the main core type's encoding (the module's register back-end); each of
    /// `event.targets` has its own.
    pub placement: Option<Placement>,
    /// Named by the user (-e); false for events only metrics need.
    pub requested: bool,
}

/// The machine (or the CPU named with --cpu) names are resolved for.
pub struct Machine<'a> {
    pub cpu: &'a CpuIdent,
    pub table: Option<Table>,
    /// CPUID's counter facts of the machine arum runs on; None for a CPU named with --cpu.
    pub cpuid_pmu: Option<PmuFacts>,
    pub arch: Option<ArchPerfmon>,
    /// The kernel's PMUs; None for a CPU named with --cpu.
    pub pmus: Option<&'a Pmus>,
    pub core_types: Option<CoreTypes>,
    /// The metrics every CPU has (perf's common metrics): decompressed when a metric is
    /// looked up, not for every run.
    common: std::cell::OnceCell<Option<Table>>,
}

impl<'a> Machine<'a> {
    /// The machine arum runs on: CPUID's counters and architectural events, the kernel's PMUs
    /// and, on hybrid parts, each CPU's core type.
    pub fn this(cpu: &'a CpuIdent, table: Option<Table>, pmus: &'a Pmus) -> Machine<'a> {
        let core_types = table.filter(Table::is_hybrid).and_then(|t| {
            let units: Vec<Unit> = t.units().into_iter().map(|(u, _)| u).collect();
            crate::hybrid::detect(pmus, &units)
        });
        Machine {
            cpu,
            table,
            cpuid_pmu: cpu.detect_pmu(),
            arch: ArchPerfmon::detect(cpu),
            pmus: Some(pmus),
            core_types,
            common: std::cell::OnceCell::new(),
        }
    }

    /// The machine arum runs on, for software events only: they use no counter, so CPUID's
    /// counter leaf (0xA) is not asked (on a virtual machine every CPUID instruction is an exit
    /// to the hypervisor), nor the kernel's PMUs read.
    pub fn software_only(cpu: &'a CpuIdent) -> Machine<'a> {
        Machine {
            cpu,
            table: None,
            cpuid_pmu: None,
            arch: None,
            pmus: None,
            core_types: None,
            common: std::cell::OnceCell::new(),
        }
    }

    /// A CPU named with --cpu: its table only; architectural events assumed for Intel.
    pub fn named(cpu: &'a CpuIdent, table: Option<Table>) -> Machine<'a> {
        Machine {
            cpu,
            table,
            cpuid_pmu: None,
            arch: (cpu.vendor == "GenuineIntel" && cpu.family != 15).then(ArchPerfmon::assumed),
            pmus: None,
            core_types: None,
            common: std::cell::OnceCell::new(),
        }
    }

    /// The metrics every CPU has (perf's common metrics).
    pub fn common(&self) -> Option<Table> {
        *self.common.get_or_init(|| TableSource::default().common())
    }

    pub fn resolver(&self) -> Resolver<'a> {
        Resolver::new(self.cpu, self.table)
            .with_arch(self.arch)
            .with_pmus(self.pmus)
    }

    /// The counters of one core type: the table's, narrowed by what CPUID reports on the
    /// machine arum runs on (e.g. 8 general counters on Skylake-SP with Hyper-Threading off);
    /// without a table, CPUID's alone.
    fn counters_of(&self, unit: Unit) -> Option<PmuInfo> {
        match self.table {
            Some(t) if t.is_hybrid() => Some(t.pmu_of(unit)),
            Some(t) => Some(facts_info(&counters(&t, self.cpuid_pmu))),
            None => self
                .cpuid_pmu
                .filter(|c| c.general_counters > 0)
                .map(|c| facts_info(&c)),
        }
    }
}

fn facts_info(c: &PmuFacts) -> PmuInfo {
    PmuInfo {
        general_counters: c.general_counters,
        counter_width: c.counter_width,
        fixed_counters: c.fixed_counters,
        fixed_width: c.fixed_width,
    }
}

/// The counters to place events on: the table's, narrowed by what CPUID reports where it
/// reports anything.
pub fn counters(table: &Table, cpuid: Option<PmuFacts>) -> PmuFacts {
    let t = table.pmu();
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

/// Resolves and places `specs` for `cpu` (named with --cpu, or with the given CPUID facts).
pub fn plan(
    specs: &[String],
    cpu: &CpuIdent,
    table: Option<Table>,
    cpuid_pmu: Option<PmuFacts>,
) -> Plan {
    let mut m = Machine::named(cpu, table);
    m.cpuid_pmu = cpuid_pmu;
    plan_with(specs, &[], &m, &RunFacts::default())
}

/// Resolves and places `specs`, then adds what the metrics named in `metric_names` (names or
/// groups) need.
pub fn plan_with(specs: &[String], metric_names: &[String], m: &Machine, facts: &RunFacts) -> Plan {
    let resolver = m.resolver();
    let mut problems = Vec::new();
    let mut unknown = Vec::new();
    let mut events = Vec::new();
    for spec in specs {
        match resolver.resolve(spec) {
            Ok(ev) => events.push(PlannedEvent {
                event: ev,
                placement: None,
                requested: true,
            }),
            Err(e) => {
                if let ResolveError::Unknown { name, .. } = &e {
                    unknown.push((name.clone(), e.to_string()));
                }
                problems.push(e.to_string())
            }
        }
    }
    let units = units(m);
    if problems.is_empty() {
        if let Err(e) = place(&mut events, m, &units) {
            problems.push(e);
        }
    }
    let hardware_off = (!problems.is_empty()).then(|| problems.join("; "));
    if hardware_off.is_some() {
        events.retain(|e| matches!(e.event.kind, EventKind::Software { .. }));
        for e in &mut events {
            e.placement = None;
        }
    }
    let mut notes = Vec::new();
    let mut planned_metrics = Vec::new();
    if !metric_names.is_empty() {
        match metrics::plan_metrics(
            metric_names,
            m,
            &resolver,
            facts,
            &mut events,
            hardware_off.is_some(),
            &|evs| place(evs, m, &units),
        ) {
            Ok(list) => planned_metrics = list,
            Err(e) => notes.push(e),
        }
    }
    for e in &events {
        for t in &e.event.targets {
            if let Some(n) = &t.note {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
        }
    }
    Plan {
        events,
        hardware_off,
        cpu_key: m.cpu.key(),
        table: m.table.map(|t| t.name().to_string()),
        microarchitecture: m.table.map(|t| t.title().to_string()),
        pmu: m.table.map(|t| counters(&t, m.cpuid_pmu)).or(m.cpuid_pmu),
        core_types: m.core_types.clone(),
        metrics: planned_metrics,
        notes,
        unknown,
    }
}

fn units(m: &Machine) -> Vec<Unit> {
    match m.table {
        Some(t) if t.is_hybrid() => t.units().into_iter().map(|(u, _)| u).collect(),
        _ => vec![Unit::Core],
    }
}

/// Places the hardware events of each core type on its counters; the first core type's
/// placement is also the event's. Events without a register-level encoding (generic events
/// the kernel maps) take a general counter for the count but get no placement; events of other
/// PMUs (msr, cstate...) take none.
pub fn place(events: &mut [PlannedEvent], m: &Machine, units: &[Unit]) -> Result<(), String> {
    for (ui, unit) in units.iter().enumerate() {
        let Some(info) = m.counters_of(*unit) else {
            continue;
        };
        let mut idx = Vec::new();
        let mut list: Vec<(String, HwEvent)> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            for (ti, t) in e.event.targets.iter().enumerate() {
                let core = matches!(
                    t.pmu.as_str(),
                    "cpu" | "cpu_core" | "cpu_atom" | "cpu_lowpower"
                );
                if !core || t.unit != *unit {
                    continue;
                }
                let Some(hw) = &t.hw else { continue };
                let hw = if hw.raw {
                    hw.clone()
                } else {
                    HwEvent {
                        counters: None,
                        netburst: None,
                        ..hw.clone()
                    }
                };
                idx.push((i, ti));
                list.push((e.event.name.clone(), hw));
            }
        }
        if list.is_empty() {
            continue;
        }
        let refs: Vec<(&str, &HwEvent)> = list.iter().map(|(n, h)| (n.as_str(), h)).collect();
        let placed = schedule(&refs, &info).map_err(|e| {
            if units.len() > 1 {
                format!("on the {} cores: {e}", unit.pmu_name())
            } else {
                e.to_string()
            }
        })?;
        for ((i, ti), p) in idx.into_iter().zip(placed) {
            let raw = events[i].event.targets[ti]
                .hw
                .as_ref()
                .is_some_and(|h| h.raw);
            let p = raw.then_some(p);
            events[i].event.targets[ti].placement = p;
            if ui == 0 || events[i].placement.is_none() {
                events[i].placement = p.or(events[i].placement);
            }
        }
    }
    Ok(())
}
