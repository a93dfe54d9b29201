//! The TOML format of event-tables/*.toml (and of the user's own tables), as serde reads it.
//! Shared with build.rs, which compiles the built-in tables into static data: only the user's
//! own tables (`--event-tables DIR`) are ever read at run time.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableFile {
    pub table: TableInfo,
    pub pmu: PmuInfo,
    /// Per core type counters of a hybrid part.
    #[serde(rename = "unit", default)]
    pub units: Vec<UnitInfo>,
    /// ARUM's names and perf's generic names for events of this table.
    #[serde(default)]
    pub aliases: BTreeMap<String, AliasTarget>,
    #[serde(rename = "event", default)]
    pub events: Vec<Event>,
    #[serde(rename = "metric", default)]
    pub metrics: Vec<Metric>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableInfo {
    pub name: String,
    pub title: String,
    pub vendor: String,
    pub style: StyleName,
    /// Between an event and its unit mask in canonical names: `:` (libpfm style) or `.` (perf).
    #[serde(default)]
    pub separator: Option<String>,
    /// The core types (PMU names) of a hybrid part.
    #[serde(default)]
    pub units: Vec<String>,
    /// Source keys used by `src` fields, and what they stand for.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    #[serde(rename = "match", default)]
    pub matches: Vec<MatchRule>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StyleName {
    Amd,
    Intel,
    Netburst,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRule {
    pub family: u32,
    pub models: Vec<[u32; 2]>,
    #[serde(default)]
    pub steppings: Option<Vec<[u32; 2]>>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
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
pub struct UnitInfo {
    pub name: String,
    pub general_counters: u32,
    pub counter_width: u32,
    #[serde(default)]
    pub fixed_counters: u32,
    #[serde(default)]
    pub fixed_width: u32,
}

/// An alias names one event for every core type, or one per core type.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AliasTarget {
    One(String),
    PerUnit(BTreeMap<String, String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub name: String,
    pub desc: String,
    /// Event select (AMD: up to 12 bits). Absent for NetBurst.
    #[serde(default)]
    pub event: u32,
    #[serde(default)]
    pub models: Option<Vec<[u32; 2]>>,
    /// Unit mask of an event without named masks (bits 15:8, where present, are Intel's UMASK2).
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
    /// The MSR config1 goes to (offcore response, load latency, frontend).
    #[serde(default)]
    pub msr: u32,
    #[serde(default)]
    pub counters: Option<Vec<u32>>,
    #[serde(default)]
    pub pair: bool,
    #[serde(default)]
    pub default: Vec<String>,
    /// The event has masks but can also be named alone, with its own encoding.
    #[serde(default)]
    pub plain: bool,
    /// Core type (PMU) of a hybrid part.
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub src: Option<String>,
    #[serde(default)]
    pub deprecated: bool,
    #[serde(rename = "mask", default)]
    pub masks: Vec<Mask>,
    #[serde(rename = "replay", default)]
    pub replays: Vec<Replay>,
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
    #[serde(default)]
    pub all: bool,
    /// NetBurst: the ESCR event-mask bit.
    #[serde(default)]
    pub bit: Option<u32>,
    /// NetBurst execution tagging: the tag-value bit (ESCR bits 8:5) this mask sets.
    #[serde(default)]
    pub tag: Option<u32>,
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
    pub msr: u32,
    #[serde(default)]
    pub models: Option<Vec<[u32; 2]>>,
    #[serde(default)]
    pub counters: Option<Vec<u32>>,
    #[serde(default)]
    pub pair: bool,
    #[serde(default)]
    pub src: Option<String>,
    #[serde(default)]
    pub deprecated: bool,
}

/// NetBurst replay tagging: the kind of replay `replay_event` counts, chosen through
/// IA32_PEBS_ENABLE and MSR_PEBS_MATRIX_VERT rather than the ESCR event mask.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    pub name: String,
    pub desc: String,
    pub pebs_enable: u32,
    pub matrix_vert: u32,
    /// Linux's P4_PEBS_METRIC index for this kind, if the perf back-end can express it.
    #[serde(default)]
    pub perf_metric: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    pub name: String,
    pub expr: String,
    #[serde(default)]
    pub groups: Option<String>,
    /// perf's ScaleUnit: a scale factor followed by a unit, e.g. `100%`, `1GHz`, `6.4e-5MB/s`.
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub threshold: Option<String>,
    /// The core type whose events the metric uses, on a hybrid part.
    #[serde(default)]
    pub pmu: Option<String>,
    #[serde(default)]
    pub desc: String,
}
