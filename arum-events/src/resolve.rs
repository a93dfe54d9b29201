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
use crate::sysfs::{parse_num, Pmus};
use crate::table::{EventRef, MaskRef, ReplayRef, Style, Table, Unit};

pub use crate::generic::{
    PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE,
};

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

/// The CCCR bits every NetBurst event uses: enable (12) and active thread "any" (17:16).
const P4_CCCR_BASE: u32 = 1 << 12 | 3 << 16;
/// ESCR tag enable (bit 4) and the tag value's lowest bit (5).
const P4_ESCR_TAG_ENABLE: u32 = 1 << 4;
const P4_ESCR_TAG_SHIFT: u32 = 5;

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

    /// `PMU/terms/`: a core PMU with fields or a named event, `software/NAME/`, or any PMU in
    /// sysfs by its named events and formats.
    fn pmu_event(&self, body: &str, pmu: &str, terms: &str) -> Result<ResolvedEvent, ResolveError> {
        let (named, parts) = split_terms(terms);
        if pmu == "software" {
            return software_pmu_event(body, named);
        }
        let unit = Unit::from_name(pmu);
        if self.is_core_pmu(unit, pmu) {
            return self.core_pmu_event(body, unit, named, &parts);
        }
        if unit.is_none() && self.names_a_table_event(pmu) {
            return self.core_pmu_event(body, None, Some(pmu.to_string()), &parts);
        }
        self.sysfs_pmu_event(body, pmu, named, &parts)
    }

    /// Whether `pmu` names a core PMU this CPU has: `cpu` on a part that is not hybrid, or a
    /// core type of a hybrid part.
    fn is_core_pmu(&self, unit: Option<Unit>, pmu: &str) -> bool {
        match unit {
            Some(Unit::Core) => {
                !self.table.is_some_and(|t| t.is_hybrid()) || self.units().contains(&Unit::Core)
            }
            Some(u) => self.units().contains(&u) || self.pmus.and_then(|p| p.get(pmu)).is_some(),
            None => false,
        }
    }

    /// Whether `pmu` is no PMU but the table's event or alias: `EVENT/terms/` (the metric files'
    /// `OCR.X@offcore_rsp=..@`).
    fn names_a_table_event(&self, pmu: &str) -> bool {
        self.pmus.is_none_or(|p| p.get(pmu).is_none())
            && self.table.is_some_and(|t| {
                let head = pmu.split([':', '.']).next().unwrap_or(pmu);
                !t.find(pmu).is_empty() || !t.find(head).is_empty() || !t.alias(pmu).is_empty()
            })
    }

    /// An event on the core PMU of `unit` (None or [`Unit::Core`]: of every core type): the
    /// event `named`, or one given by its fields, with the `terms` applied.
    fn core_pmu_event(
        &self,
        body: &str,
        unit: Option<Unit>,
        named: Option<String>,
        terms: &[&str],
    ) -> Result<ResolvedEvent, ResolveError> {
        let wanted: Vec<Unit> = match unit {
            Some(Unit::Core) | None => self.units(),
            Some(u) => vec![u],
        };
        let per_unit = match named {
            Some(n) => wanted
                .iter()
                .map(|u| self.named_unit(&n, *u))
                .collect::<Result<Vec<_>, _>>()?,
            None => {
                let hw = self.raw(0, 0, "event given by its fields");
                wanted
                    .iter()
                    .map(|u| (*u, String::new(), hw.clone()))
                    .collect()
            }
        };
        let mut targets = Vec::new();
        let mut source = EncodingSource::Raw;
        for (i, (u, _, hw)) in per_unit.into_iter().enumerate() {
            let hw = self.apply_terms(body, hw, terms)?;
            // Terms change the encoding: where it came from is then the user.
            if i == 0 && terms.is_empty() {
                source = hw.register_source.clone().unwrap_or(EncodingSource::Raw);
            }
            targets.push(self.raw_target(u, hw));
        }
        Ok(self.hardware(body.to_string(), None, source, targets))
    }

    /// An event of any other PMU in sysfs: its named event and terms through its formats.
    fn sysfs_pmu_event(
        &self,
        body: &str,
        pmu: &str,
        named: Option<String>,
        terms: &[&str],
    ) -> Result<ResolvedEvent, ResolveError> {
        let Some(pmus) = self.pmus else {
            return Err(ResolveError::NoPmu {
                pmu: pmu.into(),
                why: "is known only on the machine itself (its sysfs entry), not for a CPU named with --cpu".into(),
            });
        };
        let Some(p) = pmus.get(pmu) else {
            return Err(ResolveError::NoPmu {
                pmu: pmu.into(),
                why: format!(
                    "is not on this machine ({}/{pmu} is missing)",
                    crate::sysfs::DEVICES
                ),
            });
        };
        let mut all_terms = Vec::new();
        if let Some(n) = &named {
            all_terms.push(p.event(n).ok_or_else(|| ResolveError::NoPmu {
                pmu: pmu.into(),
                why: format!(
                    "has no event '{n}' (see {}/{pmu}/events)",
                    crate::sysfs::DEVICES
                ),
            })?);
        }
        // `cpu=cpu_core` restricts a system PMU's event to one core type (metric files).
        let mut cpus = p.cpus.clone();
        for t in terms {
            match t.split_once('=') {
                Some(("cpu", core)) => {
                    cpus = Unit::from_name(core)
                        .and_then(|u| pmus.get(u.pmu_name()))
                        .and_then(|c| c.cpus.clone())
                        .or(cpus);
                }
                _ => all_terms.push(t.to_string()),
            }
        }
        let encoded = p.encode(&all_terms.join(","));
        let [config, config1, _] = encoded.map_err(|why| ResolveError::Bad {
            spec: body.into(),
            why,
        })?;
        let hw = HwEvent::opened_as(p.perf_type, config, config1, format!("{pmu} PMU event"));
        let target = PmuTarget {
            pmu: pmu.into(),
            perf_type: p.perf_type,
            config,
            config1,
            cpus,
            unit: Unit::Core,
            hw: Some(hw),
            placement: None,
            note: None,
        };
        Ok(self.hardware(
            body.into(),
            None,
            EncodingSource::Sysfs { pmu: pmu.into() },
            vec![target],
        ))
    }

    /// An event by name for one core type: the table's (or its alias), else the core PMU's
    /// sysfs event (`topdown-retiring`), else a generic event.
    fn named_unit(&self, name: &str, unit: Unit) -> Result<(Unit, String, HwEvent), ResolveError> {
        if let Some(t) = self.table {
            let alias = t
                .alias(name)
                .into_iter()
                .find(|a| a.unit() == Unit::Core || a.unit() == unit);
            let target = alias.map_or(name, |a| a.target());
            match self.native_unit(t, target, Some(unit)) {
                Ok((n, hw)) => return Ok((unit, n, hw)),
                Err(ResolveError::Unknown { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(p) = self.pmus.and_then(|p| p.get(unit.pmu_name())) {
            if let Some(terms) = p.event(name) {
                let [config, config1, _] = p.encode(&terms).map_err(|why| ResolveError::Bad {
                    spec: name.into(),
                    why,
                })?;
                let mut hw = self.raw(config, config1, &format!("{} PMU event {name}", p.name));
                hw.register_source = Some(EncodingSource::Sysfs {
                    pmu: p.name.clone(),
                });
                return Ok((unit, name.into(), hw));
            }
        }
        if let Some(g) = generic::lookup(name) {
            if let Some(hw) = self.register_encoding(&g) {
                return Ok((unit, g.name, hw));
            }
        }
        Err(ResolveError::Unknown {
            name: name.into(),
            suggestion: best_match(name, self.candidates()),
        })
    }

    /// Applies perf terms (`event=`, `umask=`, `cmask=`, `inv`, `edge`, `any`, `config=`,
    /// `config1=`, `offcore_rsp=`, `ldlat=`, `frontend=`) to a register-level encoding.
    fn apply_terms(
        &self,
        spec: &str,
        hw: HwEvent,
        terms: &[&str],
    ) -> Result<HwEvent, ResolveError> {
        let bad = |why: String| ResolveError::Bad {
            spec: spec.into(),
            why,
        };
        if terms.is_empty() {
            return Ok(hw);
        }
        let style = self.style();
        if style == Style::Netburst {
            return Err(bad("NetBurst events are named natively or as raw rNNNN codes, not with event=/umask= terms".into()));
        }
        let mut f = hw.fields.unwrap_or(Fields {
            event_select: 0,
            umask: 0,
            cmask: 0,
            inv: false,
            edge: false,
            any: false,
        });
        let (mut config, mut config1) = (None, hw.config1);
        for term in terms {
            let (key, value) = term.split_once('=').unwrap_or((term, "1"));
            let num =
                || parse_num(value).ok_or_else(|| bad(format!("{key}={value} is not a number")));
            match key {
                "event" => f.event_select = num()? as u32,
                "umask" => f.umask = num()? as u32,
                "cmask" => f.cmask = num()? as u32,
                "inv" => f.inv = num()? != 0,
                "edge" => f.edge = num()? != 0,
                "any" => f.any = num()? != 0,
                "config" => config = Some(num()?),
                "config1" | "offcore_rsp" | "ldlat" | "frontend" => config1 = num()?,
                // Sampling and grouping terms change nothing in what is counted.
                "period" | "freq" | "name" | "metric-id" | "percore" | "pebs" => {}
                other => return Err(bad(format!("unknown term '{other}' (known: event, umask, cmask, inv, edge, any, config, config1, offcore_rsp, ldlat, frontend)"))),
            }
        }
        let max_event = if style == Style::Amd { 0xFFF } else { 0xFF };
        let max_umask = if style == Style::Amd { 0xFF } else { 0xFFFF };
        if f.event_select > max_event || f.umask > max_umask || f.cmask > 0xFF {
            return Err(bad(format!(
                "a field is out of range (event ≤ {max_event:#x}, umask ≤ {max_umask:#x}, cmask ≤ 0xff)"
            )));
        }
        let config = config.unwrap_or_else(|| f.config(style));
        Ok(HwEvent {
            config,
            config1,
            perf_type: PERF_TYPE_RAW,
            raw: true,
            fields: Some(Fields::from_config(style, config)),
            desc: if hw.desc.is_empty() {
                "event given by its fields".into()
            } else {
                hw.desc
            },
            ..hw
        })
    }

    /// `EVENT`, `EVENT:MASK[:MASK...]`, or `EVENT.MASK`, for every core type that has it.
    fn native(
        &self,
        table: Table,
        body: &str,
    ) -> Result<Vec<(Unit, String, HwEvent)>, ResolveError> {
        let mut out = Vec::new();
        let mut first_err = None;
        for unit in self.units() {
            match self.native_unit(table, body, Some(unit)) {
                Ok((n, hw)) => out.push((unit, n, hw)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if out.is_empty() {
            return Err(first_err.unwrap_or(ResolveError::Unknown {
                name: body.into(),
                suggestion: None,
            }));
        }
        Ok(out)
    }

    fn native_unit(
        &self,
        table: Table,
        body: &str,
        unit: Option<Unit>,
    ) -> Result<(String, HwEvent), ResolveError> {
        let pick = |name: &str| {
            table
                .find(name)
                .into_iter()
                .find(|e| unit.is_none_or(|u| e.unit() == u || e.unit() == Unit::Core))
        };
        let mut parts: Vec<&str> = body.split(':').collect();
        let mut event = pick(parts[0]);
        if event.is_none() {
            if let Some((e, m)) = parts[0].split_once('.') {
                if let Some(found) = pick(e) {
                    event = Some(found);
                    parts.splice(0..1, [e, m]);
                }
            }
        }
        let Some(event) = event else {
            return Err(ResolveError::Unknown {
                name: body.into(),
                suggestion: None,
            });
        };
        self.encode(table, event, &parts[1..])
    }

    /// Encodes a table event with the named unit masks (or its defaults).
    fn encode(
        &self,
        table: Table,
        event: EventRef,
        asked: &[&str],
    ) -> Result<(String, HwEvent), ResolveError> {
        let model = self.cpu.model;
        if !event.on_model(model) {
            return Err(ResolveError::NotOnModel {
                name: event.name().into(),
                family: self.cpu.family,
                model,
            });
        }
        let available: Vec<MaskRef> = event.masks().filter(|m| m.on_model(model)).collect();
        let chosen = chosen_masks(event, &available, asked)?;
        let name = qualified_name(table, event, &chosen, asked);
        let source = table_source(table, event, &chosen);
        let hw = match event.netburst() {
            Some(nb) => self.encode_netburst(event, nb, &chosen, asked)?,
            None => encode_select(table.style(), event, &available, &chosen, &name)?,
        };
        Ok((
            name,
            HwEvent {
                register_source: Some(source),
                ..hw
            },
        ))
    }

    fn encode_netburst(
        &self,
        event: EventRef,
        nb: crate::table::NetburstRef,
        chosen: &[MaskRef],
        asked: &[&str],
    ) -> Result<HwEvent, ResolveError> {
        let emask = chosen
            .iter()
            .filter_map(|m| m.bit())
            .fold(0u32, |acc, b| acc | 1 << b);
        let tags = chosen
            .iter()
            .filter_map(|m| m.tag())
            .fold(0u32, |acc, t| acc | 1 << t);
        let mut escr = nb.escr_select() << 25 | emask << 9;
        if tags != 0 {
            escr |= P4_ESCR_TAG_ENABLE | tags << P4_ESCR_TAG_SHIFT;
        }
        let replays = asked_replays(event, asked);
        let pebs_enable = replays.iter().fold(0, |a, r| a | r.pebs_enable());
        let pebs_matrix_vert = replays.iter().fold(0, |a, r| a | r.matrix_vert());
        let (perf_metric, perf_unsupported) = match replays.as_slice() {
            [] => (None, None),
            [one] => match one.perf_metric() {
                Some(m) => (Some(m), None),
                None => (None, Some(format!("Linux's P4 PMU has no replay metric for {}", one.name()))),
            },
            many => (
                None,
                Some(format!(
                    "Linux's P4 PMU takes one replay-tagging metric per event, not {} ({}); the module's register back-end programs the combination",
                    many.len(),
                    many.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
                )),
            ),
        };
        let enc = NetburstEncoding {
            escr,
            cccr: P4_CCCR_BASE | nb.cccr_select() << 13,
            p4_index: nb.p4_index(),
            escrs: nb.escrs(),
            escr_msrs: nb.escr_msrs(),
            escr_counters: nb.escr_counters(),
            pebs_enable,
            pebs_matrix_vert,
            perf_metric,
            perf_unsupported,
        };
        Ok(HwEvent {
            config: enc.perf_config(),
            config1: 0,
            perf_type: PERF_TYPE_RAW,
            raw: true,
            fields: None,
            counters: None,
            pair: false,
            netburst: Some(enc),
            msr: 0,
            desc: event.desc().into(),
            register_source: None,
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

/// The unit masks `asked` names, or the event's defaults when it names none. On NetBurst, a
/// replay-tagging kind (`replay_event:L1_LD_MISS`) is not a mask and is passed over here.
fn chosen_masks(
    event: EventRef,
    available: &[MaskRef],
    asked: &[&str],
) -> Result<Vec<MaskRef>, ResolveError> {
    let mut chosen = Vec::new();
    for q in asked {
        match available.iter().find(|m| m.name().eq_ignore_ascii_case(q)) {
            Some(m) => chosen.push(*m),
            None if event.netburst().is_some() && is_replay(event, q) => {}
            None => {
                return Err(ResolveError::UnknownMask {
                    event: event.name().into(),
                    mask: q.to_string(),
                    valid: mask_names(available),
                })
            }
        }
    }
    if chosen.is_empty() && !available.is_empty() && !event.plain() {
        return default_masks(event, available, asked);
    }
    Ok(chosen)
}

/// The masks an event counts when none is named; an event without defaults needs one named.
fn default_masks(
    event: EventRef,
    available: &[MaskRef],
    asked: &[&str],
) -> Result<Vec<MaskRef>, ResolveError> {
    let mut chosen: Vec<MaskRef> = available
        .iter()
        .filter(|m| {
            event
                .defaults()
                .iter()
                .any(|d| d.eq_ignore_ascii_case(m.name()))
        })
        .copied()
        .collect();
    if chosen.is_empty() && asked.iter().any(|q| is_replay(event, q)) {
        // Replay tagging counts non-bogus replays (SDM: replay_event with NBOGUS).
        chosen.extend(available.iter().find(|m| m.name() == "NBOGUS"));
    }
    if chosen.is_empty() {
        return Err(ResolveError::NeedsMask {
            event: event.name().into(),
            valid: mask_names(available),
        });
    }
    Ok(chosen)
}

fn mask_names(masks: &[MaskRef]) -> Vec<String> {
    masks.iter().map(|m| m.name().to_string()).collect()
}

fn is_replay(event: EventRef, asked: &str) -> bool {
    event
        .replays()
        .any(|r| r.name().eq_ignore_ascii_case(asked))
}

/// The replay-tagging kinds `asked` names, in its order.
fn asked_replays(event: EventRef, asked: &[&str]) -> Vec<ReplayRef> {
    asked
        .iter()
        .filter_map(|q| event.replays().find(|r| r.name().eq_ignore_ascii_case(q)))
        .collect()
}

/// The canonical name: the event with its masks and replay kinds as the table spells them
/// (`INST_RETIRED.ANY_P`, `DATA_CACHE_REFILLS:L2_SHARED:SYSTEM`).
fn qualified_name(table: Table, event: EventRef, chosen: &[MaskRef], asked: &[&str]) -> String {
    let mut qualifiers: Vec<&str> = chosen.iter().map(|m| m.name()).collect();
    qualifiers.extend(asked_replays(event, asked).iter().map(|r| r.name()));
    if qualifiers.is_empty() {
        event.name().to_string()
    } else {
        format!(
            "{}{}{}",
            event.name(),
            table.separator(),
            qualifiers.join(":")
        )
    }
}

/// Which of the table's sources gave the encoding: the first chosen mask's, else the event's.
fn table_source(table: Table, event: EventRef, chosen: &[MaskRef]) -> EncodingSource {
    let src = chosen
        .first()
        .map(|m| m.src())
        .filter(|s| !s.is_empty())
        .unwrap_or(event.src());
    let origin = src
        .split([',', '!', '~'])
        .next()
        .and_then(|k| table.sources().into_iter().find(|(key, _)| *key == k))
        .or_else(|| table.sources().into_iter().next())
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    EncodingSource::Table {
        table: table.name().into(),
        src: src.into(),
        origin,
    }
}

/// An AMD or Intel table event's select fields with the unit masks `chosen` (none: the event's
/// own unit mask). A mask's event select, counter mask, invert, edge and MSR value replace the
/// event's; its `any`, pair and counters add to the event's.
fn encode_select(
    style: Style,
    event: EventRef,
    available: &[MaskRef],
    chosen: &[MaskRef],
    name: &str,
) -> Result<HwEvent, ResolveError> {
    let mut f = Fields {
        event_select: event.event(),
        umask: event.umask(),
        cmask: event.cmask(),
        inv: event.inv(),
        edge: event.edge(),
        any: event.any(),
    };
    let mut hw = HwEvent {
        config: 0,
        config1: event.config1(),
        perf_type: PERF_TYPE_RAW,
        raw: true,
        fields: None,
        counters: common_counters(event.counters(), chosen),
        pair: event.pair() || chosen.iter().any(|m| m.pair()),
        netburst: None,
        msr: event.msr(),
        desc: event.desc().to_string(),
        register_source: None,
    };
    if let Some(first) = chosen.first() {
        check_combinable(event, chosen, name)?;
        f.event_select = first.event().unwrap_or(event.event());
        f.umask = combined_umask(available, chosen);
        (f.cmask, f.inv, f.edge) = (first.cmask(), first.inv(), first.edge());
        f.any |= chosen.iter().any(|m| m.any());
        hw.config1 = first.config1();
        if let Some(msr) = chosen.iter().rev().map(|m| m.msr()).find(|&m| m != 0) {
            hw.msr = msr;
        }
        if let [only] = chosen {
            hw.desc = format!("{} — {}", event.desc(), only.desc());
        }
    }
    hw.config = f.config(style);
    hw.fields = Some(f);
    Ok(hw)
}

/// Masks combine only when they agree on everything but their unit-mask value: the first one
/// that does not is refused.
fn check_combinable(event: EventRef, chosen: &[MaskRef], name: &str) -> Result<(), ResolveError> {
    let own = |m: &MaskRef| {
        (
            m.event().unwrap_or(event.event()),
            m.cmask(),
            m.inv(),
            m.edge(),
            m.config1(),
        )
    };
    let Some(first) = chosen.first() else {
        return Ok(());
    };
    match chosen[1..].iter().find(|m| own(m) != own(first)) {
        Some(odd) => Err(ResolveError::Bad {
            spec: name.into(),
            why: format!("unit mask {} has its own event select, counter mask, invert, edge or MSR value and cannot be combined", odd.name()),
        }),
        None => Ok(()),
    }
}

/// The OR of the masks' values; an `all` mask is every other mask this model has.
fn combined_umask(available: &[MaskRef], chosen: &[MaskRef]) -> u32 {
    let all_value = available
        .iter()
        .filter(|m| !m.all())
        .fold(0, |acc, m| acc | m.value().unwrap_or(0));
    chosen.iter().fold(0, |acc, m| {
        acc | if m.all() {
            all_value
        } else {
            m.value().unwrap_or(0)
        }
    })
}

/// The counters the event and every chosen mask allow (None: any general counter).
fn common_counters(event: Option<Vec<u32>>, chosen: &[MaskRef]) -> Option<Vec<u32>> {
    chosen
        .iter()
        .filter_map(|m| m.counters())
        .fold(event, |acc, c| {
            Some(match acc {
                Some(prev) => prev.into_iter().filter(|x| c.contains(x)).collect(),
                None => c,
            })
        })
}

/// A `PMU/terms/` list: the event a first term without `=` names (`cpu/INST_RETIRED.ANY,cmask=1/`),
/// and the other terms but `name=`.
fn split_terms(terms: &str) -> (Option<String>, Vec<&str>) {
    let mut parts: Vec<&str> = terms
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let named = parts
        .first()
        .filter(|t| !t.contains('=') && !is_flag_term(t))
        .map(|t| t.to_string());
    if named.is_some() {
        parts.remove(0);
    }
    parts.retain(|t| !t.starts_with("name="));
    (named, parts)
}

/// `software/NAME/`.
fn software_pmu_event(body: &str, named: Option<String>) -> Result<ResolvedEvent, ResolveError> {
    let bad = |why: String| ResolveError::Bad {
        spec: body.into(),
        why,
    };
    let n = named.ok_or_else(|| bad("software/NAME/ needs an event name".into()))?;
    let (name, config) =
        software(&n).ok_or_else(|| bad(format!("'{n}' is not a software event")))?;
    Ok(software_event(name, config))
}

fn is_flag_term(t: &str) -> bool {
    matches!(t, "inv" | "edge" | "any" | "pebs" | "percore")
}

/// `PMU/terms/` or the metric files' `PMU@terms@` (with `\,` `\=` `\-` unescaped already).
fn pmu_terms(body: &str) -> Option<(&str, &str)> {
    for sep in ['/', '@'] {
        if let Some(rest) = body.strip_suffix(sep) {
            if let Some((pmu, terms)) = rest.split_once(sep) {
                if !pmu.is_empty() && !terms.contains(sep) {
                    return Some((pmu, terms));
                }
            }
        }
    }
    None
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
