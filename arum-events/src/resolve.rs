//! Event names → encodings. In order: software events; raw codes (`r1a3`); PMU terms
//! (`cpu/event=0x3c,umask=0/`, `cpu_atom/INST_RETIRED.ANY/`, `msr/tsc/`, and the metric files'
//! `PMU@terms@`); the table's aliases (perf's generic names and ARUM's, mapped to the model's own
//! events); the table's events (`EVENT`, `EVENT:MASK[:MASK]`, `EVENT.MASK`); the kernel's generic
//! events (`cycles`, `L1-dcache-load-misses`), with Intel's architectural or AMD's legacy
//! encoding for the register back-end. `:u`/`:k` modifiers apply to all.
//!
//! A resolved event carries what to open (`targets`: perf_event_attr type, config, config1 per
//! PMU, with the CPUs each applies to on hybrid parts) and where the encoding came from.

use serde::{Deserialize, Serialize};

use crate::cpu::{ArchPerfmon, CpuIdent, AMD_LEGACY_EVENTS, ARCH_EVENTS};
use crate::generic::{self, PERF_PMU_TYPE_SHIFT};
use crate::sysfs::Pmus;
use crate::table::{Style, Table, Unit};

pub use crate::generic::{
    PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE,
};

mod pmu_terms;
mod table_events;

use pmu_terms::pmu_terms;

/// The software events every Linux kernel has: (name, other names, PERF_COUNT_SW_* config).
pub const SOFTWARE_EVENTS: &[(&str, &[&str], u64)] = &[
    ("cpu-clock", &[], 0),
    ("task-clock", &[], 1),
    ("page-faults", &["faults"], 2),
    ("context-switches", &["cs"], 3),
    ("cpu-migrations", &["migrations"], 4),
    ("minor-faults", &[], 5),
    ("major-faults", &[], 6),
    ("alignment-faults", &[], 7),
    ("emulation-faults", &[], 8),
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResolvedEvent {
    /// The name as the user wrote it.
    pub spec: String,
    /// Canonical name: `task-clock`, `EVENT:MASK`, `INST_RETIRED.ANY`, `cycles`, `r1000001f0`.
    pub name: String,
    /// The alias it was given by, if any.
    pub alias: Option<String>,
    pub kind: EventKind,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
    /// Where the encoding that perf opens came from.
    pub source: EncodingSource,
    /// What to open with perf_event_open: one per PMU (per core type on hybrid parts).
    pub targets: Vec<PmuTarget>,
}

// A plan holds a few dozen events: boxing the hardware encoding would save nothing that matters
// and would change every match on it in the counting back-ends.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    Software { config: u64 },
    Hardware(HwEvent),
}

/// Where an encoding came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EncodingSource {
    /// A software event (PERF_TYPE_SOFTWARE).
    Software,
    /// The model's event table: `table` its name, `src` which of its sources gave the value
    /// (`k` kernel list, `p` libpfm4, `k,p` both...; empty: the table's only source), `origin`
    /// what that source is.
    Table {
        table: String,
        src: String,
        origin: String,
    },
    /// The kernel's generic event (PERF_TYPE_HARDWARE or PERF_TYPE_HW_CACHE): the kernel picks
    /// the model's event.
    Generic,
    /// Intel's architectural event, present per CPUID leaf 0xA.
    Architectural,
    /// An AMD core event every family has.
    AmdLegacy,
    /// Given by the user as a raw code or as event fields.
    Raw,
    /// A PMU's named event in /sys/bus/event_source/devices.
    Sysfs { pmu: String },
}

impl EncodingSource {
    /// One line for reports: `table intel-skylakex (k,p)`, `generic`, `architectural`...
    pub fn describe(&self) -> String {
        match self {
            EncodingSource::Software => "software".into(),
            EncodingSource::Table { table, src, .. } if src.is_empty() => format!("table {table}"),
            EncodingSource::Table { table, src, .. } => format!("table {table} ({src})"),
            EncodingSource::Generic => "generic (the kernel's mapping)".into(),
            EncodingSource::Architectural => "architectural (CPUID leaf 0xA)".into(),
            EncodingSource::AmdLegacy => "AMD legacy core event".into(),
            EncodingSource::Raw => "raw".into(),
            EncodingSource::Sysfs { pmu } => format!("sysfs PMU {pmu}"),
        }
    }
}

/// One perf_event_open of an event: the attr's type, config and config1, on which CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PmuTarget {
    /// The PMU's name: `cpu`, `cpu_core`, `cpu_atom`, `software`, `msr`...
    pub pmu: String,
    pub perf_type: u32,
    pub config: u64,
    pub config1: u64,
    /// The CPUs this target counts on; None: every CPU.
    pub cpus: Option<Vec<u32>>,
    /// The core type (hybrid parts), or [`Unit::Core`].
    pub unit: Unit,
    /// The register-level encoding for this core type (the module's register back-end).
    pub hw: Option<HwEvent>,
    /// The counter the register back-end places it on (set by the plan).
    pub placement: Option<crate::schedule::Placement>,
    /// Something the user should know (e.g. the PMU type was assumed, not read from sysfs).
    pub note: Option<String>,
}

/// A hardware event's register-level encoding (what the module's register back-end programs,
/// and perf's PERF_TYPE_RAW config when `raw`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HwEvent {
    /// PERF_TYPE_RAW config when `raw`; else the generic event's config (perf_type says which).
    pub config: u64,
    pub config1: u64,
    /// The perf_event_attr type the event opens with on the core PMU (non-hybrid parts).
    pub perf_type: u32,
    /// `config` is a register-level encoding (PerfEvtSel / ESCR+CCCR layout).
    pub raw: bool,
    /// The select fields (AMD and Intel layouts); None for NetBurst and generic events.
    pub fields: Option<Fields>,
    /// Counters that may hold it (general 0.., fixed 32+i, PERF_METRICS 48+i); None = any general.
    pub counters: Option<Vec<u32>>,
    /// Needs an even/odd counter pair (AMD Zen).
    pub pair: bool,
    pub netburst: Option<NetburstEncoding>,
    /// The MSR `config1` is written to (offcore response 1A6H/1A7H, load latency 3F6H, frontend 3F7H).
    pub msr: u32,
    pub desc: String,
    /// Where the register-level encoding came from, if there is one.
    pub register_source: Option<EncodingSource>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fields {
    pub event_select: u32,
    /// Bits 7:0 go to the unit mask; on Intel, bits 15:8 to UMASK2 (config bits 47:40).
    pub umask: u32,
    pub cmask: u32,
    pub inv: bool,
    pub edge: bool,
    pub any: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetburstEncoding {
    /// ESCR value without the T0/T1 OS/USR bits (the counting layer sets those): event select,
    /// event mask, and for execution tagging the tag-enable bit (4) and tag value (8:5).
    pub escr: u32,
    /// CCCR value: enable, ESCR select, active-thread "any".
    pub cccr: u32,
    pub p4_index: u32,
    pub escrs: Vec<String>,
    pub escr_msrs: Vec<u32>,
    pub escr_counters: Vec<Vec<u32>>,
    /// Replay tagging: bits for IA32_PEBS_ENABLE (3F1H) and MSR_PEBS_MATRIX_VERT (3F2H); 0 when
    /// the event does not use it.
    pub pebs_enable: u32,
    pub pebs_matrix_vert: u32,
    /// Linux's P4_PEBS_METRIC index for the replay kind (perf config bits 6:0).
    pub perf_metric: Option<u32>,
    /// Why the perf back-end cannot count this encoding as asked, if it cannot.
    pub perf_unsupported: Option<String>,
}

/// IA32_PEBS_ENABLE and MSR_PEBS_MATRIX_VERT (SDM vol. 4, NetBurst MSRs).
pub const MSR_IA32_PEBS_ENABLE: u32 = 0x3F1;
pub const MSR_PEBS_MATRIX_VERT: u32 = 0x3F2;

impl HwEvent {
    /// An event known only by what perf_event_open takes (a generic event, another PMU's, a
    /// tracepoint): no register-level encoding.
    fn opened_as(perf_type: u32, config: u64, config1: u64, desc: String) -> HwEvent {
        HwEvent {
            config,
            config1,
            perf_type,
            raw: false,
            fields: None,
            counters: None,
            pair: false,
            netburst: None,
            msr: 0,
            desc,
            register_source: None,
        }
    }
}

impl Fields {
    /// PERF_TYPE_RAW config (the PerfEvtSel layout less EN/INT/USR/OS).
    pub fn config(&self, style: Style) -> u64 {
        let mut c = u64::from(self.event_select & 0xFF)
            | u64::from(self.umask & 0xFF) << 8
            | u64::from(self.edge) << 18
            | u64::from(self.inv) << 23
            | u64::from(self.cmask & 0xFF) << 24;
        match style {
            Style::Amd => c |= u64::from((self.event_select >> 8) & 0xF) << 32,
            _ => c |= u64::from(self.any) << 21 | u64::from((self.umask >> 8) & 0xFF) << 40,
        }
        c
    }

    pub fn from_config(style: Style, c: u64) -> Fields {
        let mut event_select = (c & 0xFF) as u32;
        let mut umask = ((c >> 8) & 0xFF) as u32;
        if style == Style::Amd {
            event_select |= (((c >> 32) & 0xF) as u32) << 8;
        } else {
            umask |= (((c >> 40) & 0xFF) as u32) << 8;
        }
        Fields {
            event_select,
            umask,
            cmask: ((c >> 24) & 0xFF) as u32,
            inv: c >> 23 & 1 == 1,
            edge: c >> 18 & 1 == 1,
            any: style == Style::Intel && c >> 21 & 1 == 1,
        }
    }
}

impl NetburstEncoding {
    /// Linux's P4 PERF_TYPE_RAW config: the ESCR with the kernel's event index in bits 30:25
    /// (instead of the hardware event select) in the upper half, the CCCR in the lower half,
    /// whose reserved bits 6:0 carry the replay-tagging metric.
    pub fn perf_config(&self) -> u64 {
        let escr_low = self.escr & 0x1FF_FFF0; // event mask, tag value, tag enable
        u64::from(self.p4_index << 25 | escr_low) << 32
            | u64::from(self.cccr)
            | u64::from(self.perf_metric.unwrap_or(0) & 0x7F)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("unknown event '{name}'{}; `arum list` shows the names for this CPU", suggest(.suggestion))]
    Unknown {
        name: String,
        suggestion: Option<String>,
    },
    #[error("event '{event}' has no unit mask '{mask}' on this CPU; valid: {}", .valid.join(", "))]
    UnknownMask {
        event: String,
        mask: String,
        valid: Vec<String>,
    },
    #[error("event '{event}' needs a unit mask, e.g. {event}:{}; valid: {}", .valid[0], .valid.join(", "))]
    NeedsMask { event: String, valid: Vec<String> },
    #[error(
        "event '{name}' does not exist on this CPU model (family {family:#x}, model {model:#x})"
    )]
    NotOnModel {
        name: String,
        family: u32,
        model: u32,
    },
    #[error("PMU '{pmu}' {why}")]
    NoPmu { pmu: String, why: String },
    #[error("bad event '{spec}': {why}")]
    Bad { spec: String, why: String },
}

fn suggest(s: &Option<String>) -> String {
    s.as_ref()
        .map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

/// Splits `-e` values: on white space and commas, except commas inside `cpu/.../` terms.
pub fn split_event_list(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut slashes = 0;
    for ch in list.chars() {
        match ch {
            '/' => {
                slashes += 1;
                cur.push(ch);
            }
            ',' if slashes % 2 == 1 => cur.push(ch),
            c if c == ',' || c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                slashes = 0;
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// ARUM's own names of events that have a generic counterpart, for CPUs whose table lacks them.
const ARUM_GENERIC: &[(&str, &str)] = &[
    ("dcache_accesses", "L1-dcache-loads"),
    ("dcache_misses", "L1-dcache-load-misses"),
    ("L1_L2_DTLBmiss", "dTLB-load-misses"),
    ("dtlb_load_misses", "dTLB-load-misses"),
    ("icache_misses", "L1-icache-load-misses"),
];

/// Resolves names against one CPU, its table (if ARUM has one), and (for the machine arum runs
/// on) CPUID's architectural events and the kernel's PMUs.
pub struct Resolver<'a> {
    pub cpu: &'a CpuIdent,
    pub table: Option<Table>,
    /// CPUID leaf 0xA of this machine, or assumed for a CPU named with --cpu (Intel only).
    pub arch: Option<ArchPerfmon>,
    /// The kernel's PMUs; None when resolving for another CPU than this machine's.
    pub pmus: Option<&'a Pmus>,
}

impl<'a> Resolver<'a> {
    /// A resolver for `cpu` with its table; architectural events assumed for Intel CPUs.
    pub fn new(cpu: &'a CpuIdent, table: Option<Table>) -> Resolver<'a> {
        Resolver {
            cpu,
            table,
            arch: (cpu.vendor == "GenuineIntel" && cpu.family != 15).then(ArchPerfmon::assumed),
            pmus: None,
        }
    }

    pub fn with_arch(mut self, arch: Option<ArchPerfmon>) -> Self {
        self.arch = arch;
        self
    }

    pub fn with_pmus(mut self, pmus: Option<&'a Pmus>) -> Self {
        self.pmus = pmus;
        self
    }

    fn style(&self) -> Style {
        match self.table {
            Some(t) => t.style(),
            None if self.is_amd() => Style::Amd,
            None if self.cpu.vendor == "GenuineIntel" && self.cpu.family == 15 => Style::Netburst,
            None => Style::Intel,
        }
    }

    fn is_amd(&self) -> bool {
        self.cpu.vendor == "AuthenticAMD" || self.cpu.vendor == "HygonGenuine"
    }

    /// The core types events are opened on: the table's units, or the one core PMU.
    fn units(&self) -> Vec<Unit> {
        match self.table {
            Some(t) if t.is_hybrid() => t.units().into_iter().map(|(u, _)| u).collect(),
            _ => vec![Unit::Core],
        }
    }

    pub fn resolve(&self, spec: &str) -> Result<ResolvedEvent, ResolveError> {
        let (body, exclude_user, exclude_kernel) = split_modifiers(spec);
        let mut ev = self.resolve_body(body)?;
        ev.spec = spec.to_string();
        ev.exclude_user = exclude_user;
        ev.exclude_kernel = exclude_kernel;
        Ok(ev)
    }

    fn resolve_body(&self, body: &str) -> Result<ResolvedEvent, ResolveError> {
        if let Some((name, config)) = software(body) {
            return Ok(software_event(name, config));
        }
        if let Some(hex) = body
            .strip_prefix('r')
            .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        {
            let config = u64::from_str_radix(hex, 16).map_err(|_| ResolveError::Bad {
                spec: body.into(),
                why: "raw code does not fit in 64 bits".into(),
            })?;
            let hw = self.raw(config, 0, "raw event code");
            return Ok(self.hardware(body.into(), None, EncodingSource::Raw, self.per_unit(&hw)));
        }
        if let Some((pmu, terms)) = pmu_terms(body) {
            return self.pmu_event(body, pmu, terms);
        }
        if let Some(t) = self.table {
            if let Some(ev) = self.alias_event(t, body)? {
                return Ok(ev);
            }
            match self.native(t, body) {
                Ok(per_unit) => return Ok(self.table_event(t, per_unit, None)),
                Err(ResolveError::Unknown { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(g) = generic::lookup(body) {
            return Ok(self.generic(&g, None));
        }
        if let Some((alias, target)) = ARUM_GENERIC
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(body))
        {
            let g = generic::lookup(target).expect("ARUM_GENERIC names generic events");
            return Ok(self.generic(&g, Some(alias.to_string())));
        }
        if let Some(ev) = self.tracepoint(body)? {
            return Ok(ev);
        }
        Err(ResolveError::Unknown {
            name: body.into(),
            suggestion: best_match(body, self.candidates()),
        })
    }

    /// The table's alias `body` (or of the generic event it names, in perf's other spellings:
    /// `cpu-cycles`, `branch-instructions`), on each core type it has a target for. None when
    /// the table has no such alias, or none for these core types.
    fn alias_event(&self, t: Table, body: &str) -> Result<Option<ResolvedEvent>, ResolveError> {
        let mut aliases = t.alias(body);
        if aliases.is_empty() {
            if let Some(g) = generic::lookup(body) {
                aliases = t.alias(&g.name);
            }
        }
        let Some(first) = aliases.first() else {
            return Ok(None);
        };
        let mut per_unit = Vec::new();
        let mut first_err = None;
        for unit in self.units() {
            let Some(a) = aliases
                .iter()
                .find(|a| a.unit() == unit)
                .or_else(|| aliases.iter().find(|a| a.unit() == Unit::Core))
            else {
                continue;
            };
            match self.native_unit(t, a.target(), Some(unit)) {
                Ok((name, hw)) => per_unit.push((unit, name, hw)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if per_unit.is_empty() {
            return first_err.map_or(Ok(None), Err);
        }
        let alias = first.name().to_string();
        Ok(Some(self.table_event(t, per_unit, Some(alias))))
    }

    /// `SUBSYSTEM:EVENT`, a tracepoint of the running kernel (PERF_TYPE_TRACEPOINT, its id).
    fn tracepoint(&self, body: &str) -> Result<Option<ResolvedEvent>, ResolveError> {
        let Some((sys, name)) = body.split_once(':') else {
            return Ok(None);
        };
        let valid =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if self.pmus.is_none() || !valid(sys) || !valid(name) {
            return Ok(None);
        }
        let Some(dir) = crate::sysfs::tracing_events_dir() else {
            return Ok(None);
        };
        let Some(id) = std::fs::read_to_string(dir.join(sys).join(name).join("id"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
        else {
            return Ok(None);
        };
        let hw = HwEvent::opened_as(
            crate::generic::PERF_TYPE_TRACEPOINT,
            id,
            0,
            format!("tracepoint {sys}:{name}"),
        );
        let target = PmuTarget {
            pmu: "tracepoint".into(),
            perf_type: crate::generic::PERF_TYPE_TRACEPOINT,
            config: id,
            config1: 0,
            cpus: None,
            unit: Unit::Core,
            hw: Some(hw),
            placement: None,
            note: None,
        };
        Ok(Some(self.hardware(
            body.into(),
            None,
            EncodingSource::Sysfs {
                pmu: "tracepoint".into(),
            },
            vec![target],
        )))
    }

    fn hardware(
        &self,
        name: String,
        alias: Option<String>,
        source: EncodingSource,
        targets: Vec<PmuTarget>,
    ) -> ResolvedEvent {
        let hw = targets
            .iter()
            .find_map(|t| t.hw.clone())
            .expect("hardware events have an encoding");
        ResolvedEvent {
            spec: name.clone(),
            name,
            alias,
            kind: EventKind::Hardware(hw),
            exclude_user: false,
            exclude_kernel: false,
            source,
            targets,
        }
    }

    /// The core PMU of each core type, with its perf type and CPUs from sysfs where known.
    fn core_pmu(&self, unit: Unit) -> (String, u32, Option<Vec<u32>>, Option<String>) {
        let name = unit.pmu_name();
        match self.pmus.and_then(|p| p.get(name)) {
            Some(p) => (name.into(), p.perf_type, p.cpus.clone(), None),
            None if unit == Unit::Core => (name.into(), PERF_TYPE_RAW, None, None),
            None => (
                name.into(),
                PERF_TYPE_RAW,
                None,
                Some(format!(
                    "PMU {name} is not in {} here: its perf type and CPUs are known only on the machine itself",
                    crate::sysfs::DEVICES
                )),
            ),
        }
    }

    /// One target per core type for a register-level encoding (raw codes, event fields).
    fn per_unit(&self, hw: &HwEvent) -> Vec<PmuTarget> {
        self.units()
            .into_iter()
            .map(|unit| self.raw_target(unit, hw.clone()))
            .collect()
    }

    fn raw_target(&self, unit: Unit, hw: HwEvent) -> PmuTarget {
        let (pmu, perf_type, cpus, note) = self.core_pmu(unit);
        PmuTarget {
            pmu,
            perf_type,
            config: hw.config,
            config1: hw.config1,
            cpus,
            unit,
            hw: Some(hw),
            placement: None,
            note,
        }
    }

    fn raw(&self, config: u64, config1: u64, desc: &str) -> HwEvent {
        let style = self.style();
        HwEvent {
            config,
            config1,
            perf_type: PERF_TYPE_RAW,
            raw: true,
            fields: (style != Style::Netburst).then(|| Fields::from_config(style, config)),
            counters: None,
            pair: false,
            netburst: None,
            msr: 0,
            desc: desc.into(),
            register_source: Some(EncodingSource::Raw),
        }
    }

    fn table_event(
        &self,
        t: Table,
        per_unit: Vec<(Unit, String, HwEvent)>,
        alias: Option<String>,
    ) -> ResolvedEvent {
        let name = per_unit[0].1.clone();
        let src = per_unit[0].2.register_source.clone();
        let targets = per_unit
            .into_iter()
            .map(|(unit, _, hw)| self.raw_target(unit, hw))
            .collect();
        let source = src.unwrap_or(EncodingSource::Table {
            table: t.name().into(),
            src: String::new(),
            origin: String::new(),
        });
        self.hardware(name, alias, source, targets)
    }

    /// A generic event: opened by its perf type on each core PMU; for the register back-end,
    /// Intel's architectural or AMD's legacy encoding where one exists.
    fn generic(&self, g: &generic::Generic, alias: Option<String>) -> ResolvedEvent {
        let register = self.register_encoding(g);
        let hw = register
            .clone()
            .unwrap_or_else(|| HwEvent::opened_as(g.perf_type, g.config, 0, g.desc.clone()));
        let hybrid = self.table.is_some_and(|t| t.is_hybrid());
        let targets = self
            .units()
            .into_iter()
            .map(|unit| {
                let (pmu, pmu_type, cpus, note) = self.core_pmu(unit);
                // On hybrid parts a generic event names its PMU in the config's upper half.
                let config = if hybrid && note.is_none() {
                    g.config | u64::from(pmu_type) << PERF_PMU_TYPE_SHIFT
                } else {
                    g.config
                };
                PmuTarget {
                    pmu,
                    perf_type: g.perf_type,
                    config,
                    config1: 0,
                    cpus,
                    unit,
                    hw: Some(hw.clone()),
                    placement: None,
                    note,
                }
            })
            .collect();
        self.hardware(g.name.clone(), alias, EncodingSource::Generic, targets)
    }

    /// Intel's architectural event or AMD's legacy event for a generic hardware event.
    fn register_encoding(&self, g: &generic::Generic) -> Option<HwEvent> {
        if g.perf_type != PERF_TYPE_HARDWARE {
            return None;
        }
        let generic_name = generic::HARDWARE[g.config as usize].1;
        let (event, umask, desc, source, counters) = if self.is_amd() {
            let (e, u, d, _) = AMD_LEGACY_EVENTS.iter().find(|a| a.3 == generic_name)?;
            (*e, *u, *d, EncodingSource::AmdLegacy, None)
        } else if let Some(arch) = self.arch.filter(|_| self.style() == Style::Intel) {
            if generic_name == "ref-cycles" && arch.fixed_counters >= 3 {
                // Fixed counter 2 only, by its pseudo encoding (Linux: event 0, umask 3).
                (
                    0x00,
                    0x03,
                    "Reference cycles (fixed counter 2)",
                    EncodingSource::Architectural,
                    Some(vec![34]),
                )
            } else {
                let i = ARCH_EVENTS.iter().position(|a| a.3 == generic_name)?;
                if !arch.has(i) {
                    return None;
                }
                let (e, u, d, _) = ARCH_EVENTS[i];
                // Instructions and core cycles also have fixed counters 0 and 1.
                let fixed = match i {
                    1 if arch.fixed_counters >= 1 => Some(32),
                    0 if arch.fixed_counters >= 2 => Some(33),
                    _ => None,
                };
                let counters = fixed.map(|f| {
                    let mut c: Vec<u32> = (0..arch.general_counters.max(1)).collect();
                    c.push(f);
                    c
                });
                (e, u, d, EncodingSource::Architectural, counters)
            }
        } else {
            return None;
        };
        let style = self.style();
        let f = Fields {
            event_select: event,
            umask,
            cmask: 0,
            inv: false,
            edge: false,
            any: false,
        };
        Some(HwEvent {
            config: f.config(style),
            config1: 0,
            perf_type: PERF_TYPE_RAW,
            raw: true,
            fields: Some(f),
            counters,
            pair: false,
            netburst: None,
            msr: 0,
            desc: desc.into(),
            register_source: Some(source),
        })
    }

    /// Every name this resolver knows, for suggestions.
    pub fn candidates(&self) -> Vec<String> {
        let mut c = software_names();
        c.extend(generic::all().into_iter().map(|g| g.name));
        c.extend(ARUM_GENERIC.iter().map(|(a, _)| a.to_string()));
        if let Some(t) = self.table {
            c.extend(t.alias_names().into_iter().map(String::from));
            let sep = t.separator();
            for e in t.events() {
                if !e.has_masks() || e.plain() {
                    c.push(e.name().into());
                }
                c.extend(e.masks().map(|m| format!("{}{sep}{}", e.name(), m.name())));
            }
        }
        c
    }
}

fn software_event(name: &str, config: u64) -> ResolvedEvent {
    ResolvedEvent {
        spec: name.into(),
        name: name.into(),
        alias: None,
        kind: EventKind::Software { config },
        exclude_user: false,
        exclude_kernel: false,
        source: EncodingSource::Software,
        targets: vec![PmuTarget {
            pmu: "software".into(),
            perf_type: PERF_TYPE_SOFTWARE,
            config,
            config1: 0,
            cpus: None,
            unit: Unit::Core,
            hw: None,
            placement: None,
            note: None,
        }],
    }
}

/// Strips a trailing `:u`, `:k`, `:uk` or `:ku`; returns (body, exclude_user, exclude_kernel).
fn split_modifiers(spec: &str) -> (&str, bool, bool) {
    if let Some((body, m)) = spec.rsplit_once(':') {
        match m {
            "u" => return (body, false, true),
            "k" => return (body, true, false),
            "uk" | "ku" => return (body, false, false),
            _ => {}
        }
    }
    (spec, false, false)
}

/// Whether `spec` names one of the kernel's software events (with or without `:u`/`:k`): the
/// same on every processor, counted without a hardware counter.
pub fn is_software(spec: &str) -> bool {
    let (body, _, _) = split_modifiers(spec);
    software(body).is_some()
}

/// Whether `spec` can be resolved without an event table: software events and raw codes.
pub fn needs_no_table(spec: &str) -> bool {
    let (body, _, _) = split_modifiers(spec);
    software(body).is_some()
        || body
            .strip_prefix('r')
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
}

fn software(name: &str) -> Option<(&'static str, u64)> {
    SOFTWARE_EVENTS
        .iter()
        .find(|(n, others, _)| *n == name || others.contains(&name))
        .map(|(n, _, c)| (*n, *c))
}

fn software_names() -> Vec<String> {
    SOFTWARE_EVENTS
        .iter()
        .map(|(n, _, _)| n.to_string())
        .collect()
}

/// The closest known name, if it is close enough to be a likely misspelling.
fn best_match(name: &str, candidates: Vec<String>) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests;
