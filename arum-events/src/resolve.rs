//! Event names → encodings: software events, aliases, native names with unit masks, raw codes
//! and perf-style terms, with `:u`/`:k` modifiers.

use serde::{Deserialize, Serialize};

use crate::cpu::CpuIdent;
use crate::table::{Event, Style, Table};

/// perf_event_attr.type values (linux/perf_event.h).
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_TYPE_RAW: u32 = 4;

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
    /// Canonical name: `task-clock`, `EVENT:MASK`, `r1000001f0`.
    pub name: String,
    /// The alias it was given by, if any.
    pub alias: Option<String>,
    pub kind: EventKind,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    Software { config: u64 },
    Hardware(HwEvent),
}

/// A hardware event, encoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HwEvent {
    /// perf_event_attr.config for PERF_TYPE_RAW.
    pub config: u64,
    pub config1: u64,
    /// The select fields (AMD and Intel layouts); None for NetBurst.
    pub fields: Option<Fields>,
    /// Counters that may hold it (general 0.., fixed 32+i); None = any general counter.
    pub counters: Option<Vec<u32>>,
    /// Needs an even/odd counter pair (AMD Zen).
    pub pair: bool,
    pub netburst: Option<NetburstEncoding>,
    pub desc: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fields {
    pub event_select: u32,
    pub umask: u32,
    pub cmask: u32,
    pub inv: bool,
    pub edge: bool,
    pub any: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetburstEncoding {
    /// ESCR value without the T0/T1 OS/USR bits (the counting layer sets those).
    pub escr: u32,
    /// CCCR value: enable, ESCR select, active-thread "any".
    pub cccr: u32,
    pub p4_index: u32,
    pub escrs: Vec<String>,
    pub escr_msrs: Vec<u32>,
    pub escr_counters: Vec<Vec<u32>>,
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
            _ => c |= u64::from(self.any) << 21,
        }
        c
    }

    pub fn from_config(style: Style, c: u64) -> Fields {
        let mut event_select = (c & 0xFF) as u32;
        if style == Style::Amd {
            event_select |= (((c >> 32) & 0xF) as u32) << 8;
        }
        Fields {
            event_select,
            umask: ((c >> 8) & 0xFF) as u32,
            cmask: ((c >> 24) & 0xFF) as u32,
            inv: c >> 23 & 1 == 1,
            edge: c >> 18 & 1 == 1,
            any: style == Style::Intel && c >> 21 & 1 == 1,
        }
    }
}

/// The CCCR bits every NetBurst event uses: enable (12) and active thread "any" (17:16).
const P4_CCCR_BASE: u32 = 1 << 12 | 3 << 16;

/// Encodes a NetBurst event with the given ESCR event-mask bits.
pub fn netburst_encoding(e: &Event, emask: u32) -> NetburstEncoding {
    NetburstEncoding {
        escr: e.escr_select << 25 | emask << 9,
        cccr: P4_CCCR_BASE | e.cccr_select << 13,
        p4_index: e.p4_index,
        escrs: e.escrs.clone(),
        escr_msrs: e.escr_msrs.clone(),
        escr_counters: e.escr_counters.clone(),
    }
}

impl NetburstEncoding {
    /// Linux's P4 PERF_TYPE_RAW config: the ESCR with the kernel's event index in bits 30:25
    /// (instead of the hardware event select) in the upper half, the CCCR in the lower half.
    pub fn perf_config(&self) -> u64 {
        let emask = (self.escr >> 9) & 0xFFFF;
        u64::from(self.p4_index << 25 | emask << 9) << 32 | u64::from(self.cccr)
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
    #[error("no event table for CPU {cpu}, so '{name}' is unknown; use a raw code (rUUEE) or --cpu to name a supported CPU (`arum list --cpus`)")]
    NoTable { name: String, cpu: String },
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

/// Resolves names against one CPU and its table (if ARUM has one for it).
pub struct Resolver<'a> {
    pub cpu: &'a CpuIdent,
    pub table: Option<&'a Table>,
}

impl Resolver<'_> {
    fn style(&self) -> Style {
        match self.table {
            Some(t) => t.table.style,
            None if self.cpu.vendor == "AuthenticAMD" || self.cpu.vendor == "HygonGenuine" => {
                Style::Amd
            }
            None if self.cpu.vendor == "GenuineIntel" && self.cpu.family == 15 => Style::Netburst,
            None => Style::Intel,
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
        let done = |name: String, alias: Option<String>, kind| ResolvedEvent {
            spec: body.to_string(),
            name,
            alias,
            kind,
            exclude_user: false,
            exclude_kernel: false,
        };
        if let Some((name, config)) = software(body) {
            return Ok(done(name.to_string(), None, EventKind::Software { config }));
        }
        if let Some(hex) = body
            .strip_prefix('r')
            .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        {
            let config = u64::from_str_radix(hex, 16).map_err(|_| ResolveError::Bad {
                spec: body.into(),
                why: "raw code does not fit in 64 bits".into(),
            })?;
            return Ok(done(
                body.to_string(),
                None,
                EventKind::Hardware(self.raw(config)),
            ));
        }
        if let Some(terms) = body.strip_prefix("cpu/").and_then(|t| t.strip_suffix('/')) {
            let hw = self.perf_terms(body, terms)?;
            return Ok(done(body.to_string(), None, EventKind::Hardware(hw)));
        }
        let Some(table) = self.table else {
            return Err(
                if self.looks_like_alias(body) || body.chars().any(|c| c.is_ascii_uppercase()) {
                    ResolveError::NoTable {
                        name: body.into(),
                        cpu: self.cpu.key(),
                    }
                } else {
                    ResolveError::Unknown {
                        name: body.into(),
                        suggestion: best_match(body, software_names()),
                    }
                },
            );
        };
        if let Some(target) = table.aliases.get(body).or_else(|| {
            table
                .aliases
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(body))
                .map(|(_, v)| v)
        }) {
            let (name, hw) = self.native(table, target)?;
            return Ok(done(name, Some(body.to_string()), EventKind::Hardware(hw)));
        }
        match self.native(table, body) {
            Ok((name, hw)) => Ok(done(name, None, EventKind::Hardware(hw))),
            Err(ResolveError::Unknown { name, .. }) => Err(ResolveError::Unknown {
                suggestion: best_match(&name, candidates(table)),
                name,
            }),
            Err(e) => Err(e),
        }
    }

    fn looks_like_alias(&self, body: &str) -> bool {
        const ALIASES: &[&str] = &[
            "dcache_accesses",
            "dcache_misses",
            "L1_DTLBmiss_L2_DTLBhit",
            "L1_L2_DTLBmiss",
            "cycles",
            "instructions",
            "branches",
            "branch_misses",
            "llc_references",
            "llc_misses",
            "dtlb_load_misses",
            "icache_misses",
        ];
        ALIASES.iter().any(|a| a.eq_ignore_ascii_case(body))
    }

    fn raw(&self, config: u64) -> HwEvent {
        let style = self.style();
        HwEvent {
            config,
            config1: 0,
            fields: (style != Style::Netburst).then(|| Fields::from_config(style, config)),
            counters: None,
            pair: false,
            netburst: None,
            desc: "raw event code".into(),
        }
    }

    fn perf_terms(&self, spec: &str, terms: &str) -> Result<HwEvent, ResolveError> {
        let bad = |why: String| ResolveError::Bad {
            spec: spec.into(),
            why,
        };
        let style = self.style();
        if style == Style::Netburst {
            return Err(bad("NetBurst events are named natively or as raw rNNNN codes, not with event=/umask= terms".into()));
        }
        let mut f = Fields {
            event_select: 0,
            umask: 0,
            cmask: 0,
            inv: false,
            edge: false,
            any: false,
        };
        let (mut config, mut config1) = (None, 0);
        for term in terms.split(',').filter(|t| !t.is_empty()) {
            let (key, value) = term.split_once('=').unwrap_or((term, "1"));
            let num = || -> Result<u64, ResolveError> {
                let v = value.trim();
                let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(h, 16),
                    None => v.parse(),
                };
                parsed.map_err(|_| bad(format!("{key}={value} is not a number")))
            };
            match key {
                "event" => f.event_select = num()? as u32,
                "umask" => f.umask = num()? as u32,
                "cmask" => f.cmask = num()? as u32,
                "inv" => f.inv = num()? != 0,
                "edge" => f.edge = num()? != 0,
                "any" => f.any = num()? != 0,
                "config" => config = Some(num()?),
                "config1" => config1 = num()?,
                other => return Err(bad(format!("unknown term '{other}' (known: event, umask, cmask, inv, edge, any, config, config1)"))),
            }
        }
        let max_event = if style == Style::Amd { 0xFFF } else { 0xFF };
        if f.event_select > max_event || f.umask > 0xFF || f.cmask > 0xFF {
            return Err(bad(format!(
                "a field is out of range (event ≤ {max_event:#x}, umask and cmask ≤ 0xff)"
            )));
        }
        let mut hw = self.raw(config.unwrap_or_else(|| f.config(style)));
        hw.config1 = config1;
        hw.desc = "event given by its fields".into();
        Ok(hw)
    }

    /// `EVENT`, `EVENT:MASK[:MASK...]`, or Intel's `EVENT.MASK`.
    fn native(&self, table: &Table, body: &str) -> Result<(String, HwEvent), ResolveError> {
        let mut parts: Vec<&str> = body.split(':').collect();
        let mut event = table.event(parts[0]);
        if event.is_none() {
            if let Some((e, m)) = parts[0].split_once('.') {
                if let Some(found) = table.event(e) {
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
        let model = self.cpu.model;
        if !event.on_model(model) {
            return Err(ResolveError::NotOnModel {
                name: event.name.clone(),
                family: self.cpu.family,
                model,
            });
        }
        let available: Vec<&crate::table::Mask> =
            event.masks.iter().filter(|m| m.on_model(model)).collect();
        let names =
            |v: &[&crate::table::Mask]| v.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
        let mut chosen = Vec::new();
        for q in &parts[1..] {
            match available.iter().find(|m| m.name.eq_ignore_ascii_case(q)) {
                Some(m) => chosen.push(*m),
                None => {
                    return Err(ResolveError::UnknownMask {
                        event: event.name.clone(),
                        mask: q.to_string(),
                        valid: names(&available),
                    })
                }
            }
        }
        if chosen.is_empty() && !available.is_empty() {
            chosen = available
                .iter()
                .filter(|m| {
                    event
                        .default
                        .iter()
                        .any(|d| d.eq_ignore_ascii_case(&m.name))
                })
                .copied()
                .collect();
            if chosen.is_empty() {
                return Err(ResolveError::NeedsMask {
                    event: event.name.clone(),
                    valid: names(&available),
                });
            }
        }
        let name = std::iter::once(event.name.as_str())
            .chain(chosen.iter().map(|m| m.name.as_str()))
            .collect::<Vec<_>>()
            .join(":");
        let style = table.table.style;
        if style == Style::Netburst {
            let emask = chosen
                .iter()
                .fold(0, |acc, m| acc | 1 << m.bit.unwrap_or(0));
            let nb = netburst_encoding(event, emask);
            let hw = HwEvent {
                config: nb.perf_config(),
                config1: 0,
                fields: None,
                counters: None,
                pair: false,
                netburst: Some(nb),
                desc: event.desc.clone(),
            };
            return Ok((name, hw));
        }
        let mut f = Fields {
            event_select: event.event,
            umask: event.umask,
            cmask: event.cmask,
            inv: event.inv != 0,
            edge: event.edge != 0,
            any: event.any != 0,
        };
        let mut config1 = event.config1;
        let mut counters = event.counters.clone();
        let mut desc = event.desc.clone();
        if !chosen.is_empty() {
            f.umask = 0;
            let all_value = available
                .iter()
                .filter(|m| !m.all)
                .fold(0, |acc, m| acc | m.value.unwrap_or(0));
            for (i, m) in chosen.iter().enumerate() {
                f.umask |= if m.all {
                    all_value
                } else {
                    m.value.unwrap_or(0)
                };
                if i > 0 && (m.cmask != f.cmask || (m.inv != 0) != f.inv || (m.edge != 0) != f.edge)
                {
                    return Err(ResolveError::Bad {
                        spec: body.into(),
                        why: format!("unit mask {} has its own counter-mask/invert/edge settings and cannot be combined", m.name),
                    });
                }
                f.cmask = m.cmask;
                f.inv = m.inv != 0;
                f.edge = m.edge != 0;
                f.any |= m.any != 0;
                if let Some(e) = m.event {
                    f.event_select = e;
                }
                config1 |= m.config1;
                if let Some(c) = &m.counters {
                    counters = Some(match counters {
                        Some(prev) => prev.into_iter().filter(|x| c.contains(x)).collect(),
                        None => c.clone(),
                    });
                }
            }
            if chosen.len() == 1 {
                desc = format!("{} — {}", event.desc, chosen[0].desc);
            }
        }
        let hw = HwEvent {
            config: f.config(style),
            config1,
            fields: Some(f),
            counters,
            pair: event.pair,
            netburst: None,
            desc,
        };
        Ok((name, hw))
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

fn candidates(table: &Table) -> Vec<String> {
    let mut c = software_names();
    c.extend(table.aliases.keys().cloned());
    for e in &table.events {
        c.push(e.name.clone());
        c.extend(e.masks.iter().map(|m| format!("{}:{}", e.name, m.name)));
    }
    c
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
