//! Event tables: the TOML format, the embedded set, and matching a CPU to its table.
//!
//! Every file of event-tables/ is embedded at build time together with a small index of the CPUs
//! it matches (see build.rs), so start-up parses only the one table the CPU needs.
//! `ARUM_EVENT_TABLES=DIR` (or `--event-tables DIR`) adds tables that take precedence.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cpu::CpuIdent;

/// One embedded table and the CPUs it matches.
pub struct EmbeddedTable {
    pub name: &'static str,
    pub vendor: &'static str,
    pub matches: &'static [TableMatch],
    pub text: &'static str,
}

/// A family with model (and optionally stepping) ranges, inclusive.
#[derive(Debug, Clone, Copy)]
pub struct TableMatch {
    pub family: u32,
    pub models: &'static [[u32; 2]],
    pub steppings: Option<&'static [[u32; 2]]>,
}

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

fn in_ranges(v: u32, ranges: &[[u32; 2]]) -> bool {
    ranges.iter().any(|[lo, hi]| (*lo..=*hi).contains(&v))
}

/// How a family encodes its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// AMD PerfEvtSel: 12-bit event select (bits 35:32 hold the upper nibble).
    Amd,
    /// Intel IA32_PERFEVTSELx, fixed counters, architectural perfmon.
    Intel,
    /// Intel NetBurst: ESCR + CCCR pairs.
    Netburst,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    pub table: TableInfo,
    pub pmu: PmuInfo,
    #[serde(default)]
    pub aliases: BTreeMap<String, String>,
    #[serde(rename = "event", default)]
    pub events: Vec<Event>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableInfo {
    pub name: String,
    pub title: String,
    pub vendor: String,
    pub style: Style,
    #[serde(rename = "match")]
    pub matches: Vec<MatchRule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRule {
    pub family: u32,
    pub models: Vec<[u32; 2]>,
    #[serde(default)]
    pub steppings: Option<Vec<[u32; 2]>>,
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PmuInfo {
    pub general_counters: u32,
    pub counter_width: u32,
    #[serde(default)]
    pub fixed_counters: u32,
    #[serde(default)]
    pub fixed_width: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub name: String,
    pub desc: String,
    /// Event select (AMD: up to 12 bits). Absent for NetBurst.
    #[serde(default)]
    pub event: u32,
    /// Model ranges where the event exists, if not all models of the table.
    #[serde(default)]
    pub models: Option<Vec<[u32; 2]>>,
    /// Unit mask of an event without named masks.
    #[serde(default)]
    pub umask: u32,
    #[serde(default)]
    pub cmask: u32,
    #[serde(default)]
    pub inv: u32,
    #[serde(default)]
    pub edge: u32,
    #[serde(default)]
    pub any: u32,
    #[serde(default)]
    pub config1: u64,
    /// Counters that may hold it: general 0.., fixed 32+i. Absent: any general counter.
    #[serde(default)]
    pub counters: Option<Vec<u32>>,
    /// Needs an even/odd counter pair (AMD Zen MergeEvent).
    #[serde(default)]
    pub pair: bool,
    /// Mask names used when the event is named alone.
    #[serde(default)]
    pub default: Vec<String>,
    #[serde(rename = "mask", default)]
    pub masks: Vec<Mask>,
    // NetBurst only.
    #[serde(default)]
    pub escr_select: u32,
    #[serde(default)]
    pub cccr_select: u32,
    #[serde(default)]
    pub p4_index: u32,
    #[serde(default)]
    pub escrs: Vec<String>,
    #[serde(default)]
    pub escr_msrs: Vec<u32>,
    #[serde(default)]
    pub escr_counters: Vec<Vec<u32>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mask {
    pub name: String,
    pub desc: String,
    #[serde(default)]
    pub value: Option<u32>,
    /// "All of the other masks available on this model" (its value grew across revisions).
    #[serde(default)]
    pub all: bool,
    /// NetBurst: the ESCR event-mask bit.
    #[serde(default)]
    pub bit: Option<u32>,
    /// A mask that changes the event select itself (rare).
    #[serde(default)]
    pub event: Option<u32>,
    #[serde(default)]
    pub cmask: u32,
    #[serde(default)]
    pub inv: u32,
    #[serde(default)]
    pub edge: u32,
    #[serde(default)]
    pub any: u32,
    #[serde(default)]
    pub config1: u64,
    #[serde(default)]
    pub models: Option<Vec<[u32; 2]>>,
    #[serde(default)]
    pub counters: Option<Vec<u32>>,
}

impl Event {
    pub fn on_model(&self, model: u32) -> bool {
        self.models.as_deref().is_none_or(|m| in_ranges(model, m))
    }
    pub fn mask(&self, name: &str) -> Option<&Mask> {
        self.masks
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(name))
    }
}

impl Mask {
    pub fn on_model(&self, model: u32) -> bool {
        self.models.as_deref().is_none_or(|m| in_ranges(model, m))
    }
}

impl MatchRule {
    fn matches(&self, cpu: &CpuIdent) -> bool {
        self.family == cpu.family
            && in_ranges(cpu.model, &self.models)
            && self
                .steppings
                .as_deref()
                .is_none_or(|s| in_ranges(cpu.stepping, s))
    }
}

impl Table {
    pub fn parse(text: &str, origin: &str) -> Result<Table, TableError> {
        toml::from_str(text).map_err(|e| TableError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })
    }

    pub fn matches(&self, cpu: &CpuIdent) -> bool {
        self.table.vendor == cpu.vendor && self.table.matches.iter().any(|m| m.matches(cpu))
    }

    pub fn event(&self, name: &str) -> Option<&Event> {
        self.events
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(name))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("event table {origin}: {message}")]
    Parse { origin: String, message: String },
    #[error("cannot read event tables from {dir}: {source}; point ARUM_EVENT_TABLES/--event-tables at a directory of .toml tables")]
    Dir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Where tables come from: the embedded set, optionally preceded by a user directory.
#[derive(Debug, Clone, Default)]
pub struct TableSource {
    pub override_dir: Option<PathBuf>,
}

impl TableSource {
    /// The tables directory from `--event-tables`, else `ARUM_EVENT_TABLES`, else none.
    pub fn new(flag: Option<&Path>) -> Self {
        TableSource {
            override_dir: flag
                .map(Path::to_path_buf)
                .or_else(|| std::env::var_os("ARUM_EVENT_TABLES").map(PathBuf::from)),
        }
    }

    /// The table for `cpu`, if any (a user directory's tables win over embedded ones).
    pub fn for_cpu(&self, cpu: &CpuIdent) -> Result<Option<Table>, TableError> {
        for table in self.user_tables()? {
            if table.matches(cpu) {
                return Ok(Some(table));
            }
        }
        let hit = EMBEDDED.iter().find(|t| {
            t.vendor == cpu.vendor
                && t.matches.iter().any(|m| {
                    m.family == cpu.family
                        && in_ranges(cpu.model, m.models)
                        && m.steppings.is_none_or(|s| in_ranges(cpu.stepping, s))
                })
        });
        hit.map(|t| Table::parse(t.text, t.name)).transpose()
    }

    /// Every table, parsed (for `arum list --cpus` and tests).
    pub fn all(&self) -> Result<Vec<Table>, TableError> {
        let mut tables = self.user_tables()?;
        for t in EMBEDDED {
            if !tables.iter().any(|u| u.table.name == t.name) {
                tables.push(Table::parse(t.text, t.name)?);
            }
        }
        Ok(tables)
    }

    fn user_tables(&self) -> Result<Vec<Table>, TableError> {
        let Some(dir) = &self.override_dir else {
            return Ok(Vec::new());
        };
        let dir_err = |source| TableError::Dir {
            dir: dir.clone(),
            source,
        };
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map_err(dir_err)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| {
                let text = std::fs::read_to_string(p).map_err(dir_err)?;
                Table::parse(&text, &p.display().to_string())
            })
            .collect()
    }
}
