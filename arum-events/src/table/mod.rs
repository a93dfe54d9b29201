//! Event tables: the built-in ones, compiled into the binary at build time (see blob.rs), and the
//! user's own (`--event-tables DIR` or `ARUM_EVENT_TABLES=DIR`, TOML, which take precedence).
//!
//! A [`Table`] is a handle on compiled records: looking up a name is a binary search over a sorted
//! index, reading a field one bounds-checked load, and nothing is parsed or allocated at start-up.

pub mod blob;
pub mod compile;
pub mod file;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::cpu::CpuIdent;
use blob::layout::*;

/// How a family encodes its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// AMD PerfEvtSel: 12-bit event select (bits 35:32 hold the upper nibble).
    Amd,
    /// Intel IA32_PERFEVTSELx, fixed counters, architectural perfmon.
    Intel,
    /// Intel NetBurst: ESCR + CCCR pairs.
    Netburst,
}

/// Counters of one logical CPU (or of one core type of a hybrid part).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PmuInfo {
    pub general_counters: u32,
    pub counter_width: u32,
    pub fixed_counters: u32,
    pub fixed_width: u32,
}

/// The core type of a hybrid Intel part, named as its PMU in /sys/bus/event_source/devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Not a hybrid part: the one core PMU (`cpu`).
    Core,
    CpuCore,
    CpuAtom,
    CpuLowpower,
}

impl Unit {
    fn from_code(c: u32) -> Unit {
        match c {
            1 => Unit::CpuCore,
            2 => Unit::CpuAtom,
            3 => Unit::CpuLowpower,
            _ => Unit::Core,
        }
    }

    pub fn from_name(name: &str) -> Option<Unit> {
        match name {
            "cpu" => Some(Unit::Core),
            "cpu_core" => Some(Unit::CpuCore),
            "cpu_atom" => Some(Unit::CpuAtom),
            "cpu_lowpower" => Some(Unit::CpuLowpower),
            _ => None,
        }
    }

    /// The PMU's name in sysfs.
    pub fn pmu_name(self) -> &'static str {
        match self {
            Unit::Core => "cpu",
            Unit::CpuCore => "cpu_core",
            Unit::CpuAtom => "cpu_atom",
            Unit::CpuLowpower => "cpu_lowpower",
        }
    }
}

/// A family with model (and optionally stepping) ranges, inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchRule {
    pub family: u32,
    pub models: Vec<[u32; 2]>,
    pub steppings: Option<Vec<[u32; 2]>>,
}

impl MatchRule {
    pub fn matches(&self, cpu: &CpuIdent) -> bool {
        self.family == cpu.family
            && in_ranges(cpu.model, &self.models)
            && self
                .steppings
                .as_deref()
                .is_none_or(|s| in_ranges(cpu.stepping, s))
    }
}

fn in_ranges(v: u32, ranges: &[[u32; 2]]) -> bool {
    ranges.iter().any(|[lo, hi]| (*lo..=*hi).contains(&v))
}

/// One compiled blob: the built-in tables, or one directory of the user's.
#[derive(Debug)]
pub struct Blob {
    words: &'static [u8],
    /// UTF-8 (checked when the writer built it); each string is checked again when read, which
    /// costs nothing measurable for short names and spares start-up a pass over the whole pool.
    strings: &'static [u8],
}

impl Blob {
    fn from_bytes(bytes: &'static [u8]) -> Result<Blob, String> {
        let bad = || "not an ARUM table blob".to_string();
        if bytes.len() < 16 || &bytes[..8] != blob::MAGIC {
            return Err(bad());
        }
        let n = u32::from_le_bytes(bytes[8..12].try_into().map_err(|_| bad())?) as usize;
        let s = u32::from_le_bytes(bytes[12..16].try_into().map_err(|_| bad())?) as usize;
        let words = bytes.get(16..16 + n * 4).ok_or_else(bad)?;
        let strings = bytes.get(16 + n * 4..16 + n * 4 + s).ok_or_else(bad)?;
        Ok(Blob { words, strings })
    }

    fn w(&self, at: u32) -> u32 {
        let i = at as usize * 4;
        u32::from_le_bytes([
            self.words[i],
            self.words[i + 1],
            self.words[i + 2],
            self.words[i + 3],
        ])
    }

    fn str_at(&'static self, at: u32) -> &'static str {
        self.str_of(self.w(at), self.w(at + 1))
    }

    fn str_of(&'static self, o: u32, l: u32) -> &'static str {
        let bytes = &self.strings[o as usize..(o + l) as usize];
        std::str::from_utf8(bytes).unwrap_or("\u{fffd}")
    }

    fn list_at(&'static self, at: u32) -> List {
        List {
            blob: self,
            at: self.w(at),
            len: self.w(at + 1),
        }
    }

    fn tables(&'static self) -> impl Iterator<Item = Table> {
        self.list_at(ROOT_TABLES)
            .iter()
            .map(move |rec| Table { blob: self, rec })
    }
}

/// A list of words in a blob.
#[derive(Clone, Copy)]
struct List {
    blob: &'static Blob,
    at: u32,
    len: u32,
}

impl List {
    fn get(&self, i: u32) -> u32 {
        self.blob.w(self.at + i)
    }
    fn iter(self) -> impl Iterator<Item = u32> {
        (0..self.len).map(move |i| self.get(i))
    }
    fn to_vec(self) -> Vec<u32> {
        self.iter().collect()
    }
    fn ranges(self) -> Vec<[u32; 2]> {
        (0..self.len / 2)
            .map(|i| [self.get(2 * i), self.get(2 * i + 1)])
            .collect()
    }
    fn strings(self) -> Vec<&'static str> {
        (0..self.len / 2)
            .map(|i| self.blob.str_of(self.get(2 * i), self.get(2 * i + 1)))
            .collect()
    }
}

/// The built-in tables' index, compiled by build.rs: each table's record and match rules, without
/// its events, in the order of the pack.
fn index() -> &'static Blob {
    // The blobs are read as bytes (no alignment needed); build.rs wrote them from event-tables/
    // in this very build.
    static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tables-index.bin"));
    static BLOB: OnceLock<Blob> = OnceLock::new();
    BLOB.get_or_init(|| Blob::from_bytes(BYTES).expect("build.rs wrote a valid index"))
}

/// The built-in table at `i` in the index: its own blob, decompressed the first time it is needed
/// and kept for the life of the process.
fn builtin(i: usize) -> Table {
    static PACK: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/tables.pack"));
    static FULL: OnceLock<Vec<OnceLock<Blob>>> = OnceLock::new();
    let u32_at =
        |at: usize| u32::from_le_bytes(PACK[at..at + 4].try_into().expect("4 bytes")) as usize;
    let slots = FULL.get_or_init(|| (0..u32_at(0)).map(|_| OnceLock::new()).collect());
    let blob = slots[i].get_or_init(|| {
        let (offset, len, raw) = (u32_at(4 + 12 * i), u32_at(8 + 12 * i), u32_at(12 + 12 * i));
        let bytes = lz4_flex::block::decompress(&PACK[offset..offset + len], raw)
            .expect("build.rs compressed every table");
        Blob::from_bytes(Box::leak(bytes.into_boxed_slice())).expect("build.rs wrote a valid blob")
    });
    let blob: &'static Blob = blob;
    blob.tables().next().expect("one table in each blob")
}

/// The index positions and records of the built-in tables.
fn builtin_headers() -> impl Iterator<Item = (usize, Table)> {
    index().tables().enumerate()
}

/// One event table.
#[derive(Clone, Copy)]
pub struct Table {
    blob: &'static Blob,
    rec: u32,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({})", self.name())
    }
}

impl PartialEq for Table {
    fn eq(&self, other: &Table) -> bool {
        std::ptr::eq(self.blob, other.blob) && self.rec == other.rec
    }
}

impl Table {
    fn w(&self, field: u32) -> u32 {
        self.blob.w(self.rec + field)
    }
    pub fn name(&self) -> &'static str {
        self.blob.str_at(self.rec + T_NAME)
    }
    pub fn title(&self) -> &'static str {
        self.blob.str_at(self.rec + T_TITLE)
    }
    pub fn vendor(&self) -> &'static str {
        self.blob.str_at(self.rec + T_VENDOR)
    }
    pub fn style(&self) -> Style {
        match self.w(T_STYLE) {
            compile::STYLE_AMD => Style::Amd,
            compile::STYLE_NETBURST => Style::Netburst,
            _ => Style::Intel,
        }
    }
    /// Between an event and its unit mask in canonical names.
    pub fn separator(&self) -> char {
        char::from_u32(self.w(T_SEPARATOR)).unwrap_or(':')
    }
    /// Source keys (as used in `src`) and what they stand for.
    pub fn sources(&self) -> Vec<(&'static str, &'static str)> {
        let s = self.blob.list_at(self.rec + T_SOURCES).strings();
        s.chunks(2).map(|c| (c[0], c[1])).collect()
    }
    pub fn matches(&self) -> Vec<MatchRule> {
        let l = self.blob.list_at(self.rec + T_MATCHES);
        (0..l.len / 5)
            .map(|i| {
                let at = l.at + 5 * i;
                MatchRule {
                    family: self.blob.w(at),
                    models: self.blob.list_at(at + 1).ranges(),
                    steppings: (self.blob.w(at + 4) != u32::MAX)
                        .then(|| self.blob.list_at(at + 3).ranges()),
                }
            })
            .collect()
    }
    pub fn matches_cpu(&self, cpu: &CpuIdent) -> bool {
        self.vendor() == cpu.vendor && self.matches().iter().any(|m| m.matches(cpu))
    }
    /// The counters of the table's main core type.
    pub fn pmu(&self) -> PmuInfo {
        PmuInfo {
            general_counters: self.w(T_PMU),
            counter_width: self.w(T_PMU + 1),
            fixed_counters: self.w(T_PMU + 2),
            fixed_width: self.w(T_PMU + 3),
        }
    }
    /// The core types of a hybrid part and their counters; empty for other parts.
    pub fn units(&self) -> Vec<(Unit, PmuInfo)> {
        let l = self.blob.list_at(self.rec + T_UNITS);
        (0..l.len / 6)
            .filter_map(|i| {
                let at = l.at + 6 * i;
                let unit = Unit::from_name(self.blob.str_at(at))?;
                Some((
                    unit,
                    PmuInfo {
                        general_counters: self.blob.w(at + 2),
                        counter_width: self.blob.w(at + 3),
                        fixed_counters: self.blob.w(at + 4),
                        fixed_width: self.blob.w(at + 5),
                    },
                ))
            })
            .collect()
    }
    pub fn is_hybrid(&self) -> bool {
        self.blob.w(self.rec + T_UNITS + 1) > 0
    }
    /// The counters of one core type (the table's main ones when it is not a hybrid part).
    pub fn pmu_of(&self, unit: Unit) -> PmuInfo {
        self.units()
            .into_iter()
            .find(|(u, _)| *u == unit)
            .map_or(self.pmu(), |(_, p)| p)
    }
    /// Every event, in the table's order.
    pub fn events(&self) -> impl Iterator<Item = EventRef> {
        let blob = self.blob;
        self.blob
            .list_at(self.rec + T_EVENTS)
            .iter()
            .map(move |rec| EventRef { blob, rec })
    }
    pub fn event_count(&self) -> usize {
        self.blob.w(self.rec + T_EVENTS + 1) as usize
    }
    /// The events named `name` (case-insensitive): one, or one per core type of a hybrid part.
    pub fn find(&self, name: &str) -> Vec<EventRef> {
        let index = self.blob.list_at(self.rec + T_INDEX);
        let n = index.len / 3;
        let key = |i: u32| self.blob.str_of(index.get(3 * i), index.get(3 * i + 1));
        let first = partition_point(n, |i| lt_ci(key(i), name));
        (first..n)
            .take_while(|&i| key(i).eq_ignore_ascii_case(name))
            .map(|i| EventRef {
                blob: self.blob,
                rec: index.get(3 * i + 2),
            })
            .collect()
    }
    /// The first event named `name` (for tables without core types).
    pub fn event(&self, name: &str) -> Option<EventRef> {
        self.find(name).into_iter().next()
    }
    pub fn aliases(&self) -> impl Iterator<Item = AliasRef> {
        let blob = self.blob;
        self.blob
            .list_at(self.rec + T_ALIASES)
            .iter()
            .map(move |rec| AliasRef { blob, rec })
    }
    /// The alias `name` (case-insensitive): one target, or one per core type.
    pub fn alias(&self, name: &str) -> Vec<AliasRef> {
        let list = self.blob.list_at(self.rec + T_ALIASES);
        let key = |i: u32| AliasRef {
            blob: self.blob,
            rec: list.get(i),
        };
        let first = partition_point(list.len, |i| lt_ci(key(i).name(), name));
        (first..list.len)
            .map(key)
            .take_while(|a| a.name().eq_ignore_ascii_case(name))
            .collect()
    }
    pub fn alias_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&str> = self.aliases().map(|a| a.name()).collect();
        names.dedup();
        names
    }
    pub fn metrics(&self) -> impl Iterator<Item = MetricRef> {
        let blob = self.blob;
        self.blob
            .list_at(self.rec + T_METRICS)
            .iter()
            .map(move |rec| MetricRef { blob, rec })
    }
}

fn lt_ci(a: &str, b: &str) -> bool {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .lt(b.bytes().map(|c| c.to_ascii_lowercase()))
}

fn partition_point(len: u32, pred: impl Fn(u32) -> bool) -> u32 {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One event of a table.
#[derive(Clone, Copy)]
pub struct EventRef {
    blob: &'static Blob,
    rec: u32,
}

impl std::fmt::Debug for EventRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({})", self.name())
    }
}

impl EventRef {
    fn w(&self, field: u32) -> u32 {
        self.blob.w(self.rec + field)
    }
    fn flag(&self, f: u32) -> bool {
        self.w(E_FLAGS) & f != 0
    }
    pub fn name(&self) -> &'static str {
        self.blob.str_at(self.rec + E_NAME)
    }
    pub fn desc(&self) -> &'static str {
        self.blob.str_at(self.rec + E_DESC)
    }
    pub fn event(&self) -> u32 {
        self.w(E_EVENT)
    }
    pub fn umask(&self) -> u32 {
        self.w(E_UMASK)
    }
    pub fn cmask(&self) -> u32 {
        self.w(E_CMASK)
    }
    pub fn inv(&self) -> bool {
        self.flag(EF_INV)
    }
    pub fn edge(&self) -> bool {
        self.flag(EF_EDGE)
    }
    pub fn any(&self) -> bool {
        self.flag(EF_ANY)
    }
    pub fn pair(&self) -> bool {
        self.flag(EF_PAIR)
    }
    pub fn deprecated(&self) -> bool {
        self.flag(EF_DEPRECATED)
    }
    /// Has masks, but can also be named alone with its own encoding.
    pub fn plain(&self) -> bool {
        self.flag(EF_PLAIN)
    }
    pub fn unit(&self) -> Unit {
        Unit::from_code(self.w(E_UNIT))
    }
    /// Where the encoding came from (keys of [`Table::sources`]); empty: the table's only source.
    pub fn src(&self) -> &'static str {
        self.blob.str_at(self.rec + E_SRC)
    }
    pub fn config1(&self) -> u64 {
        u64::from(self.w(E_CONFIG1)) | u64::from(self.w(E_CONFIG1 + 1)) << 32
    }
    pub fn msr(&self) -> u32 {
        self.w(E_MSR)
    }
    pub fn on_model(&self, model: u32) -> bool {
        !self.flag(EF_MODELS) || in_ranges(model, &self.blob.list_at(self.rec + E_MODELS).ranges())
    }
    pub fn models(&self) -> Option<Vec<[u32; 2]>> {
        self.flag(EF_MODELS)
            .then(|| self.blob.list_at(self.rec + E_MODELS).ranges())
    }
    /// Counters that may hold it (general 0.., fixed 32+i); None: any general counter.
    pub fn counters(&self) -> Option<Vec<u32>> {
        self.flag(EF_COUNTERS)
            .then(|| self.blob.list_at(self.rec + E_COUNTERS).to_vec())
    }
    pub fn defaults(&self) -> Vec<&'static str> {
        self.blob.list_at(self.rec + E_DEFAULTS).strings()
    }
    pub fn masks(&self) -> impl Iterator<Item = MaskRef> {
        let blob = self.blob;
        self.blob
            .list_at(self.rec + E_MASKS)
            .iter()
            .map(move |rec| MaskRef { blob, rec })
    }
    pub fn has_masks(&self) -> bool {
        self.w(E_MASKS + 1) > 0
    }
    pub fn mask(&self, name: &str) -> Option<MaskRef> {
        self.masks().find(|m| m.name().eq_ignore_ascii_case(name))
    }
    pub fn replays(&self) -> impl Iterator<Item = ReplayRef> {
        let blob = self.blob;
        self.blob
            .list_at(self.rec + E_REPLAYS)
            .iter()
            .map(move |rec| ReplayRef { blob, rec })
    }
    pub fn netburst(&self) -> Option<NetburstRef> {
        let n = self.w(E_NETBURST);
        (n != 0).then_some(NetburstRef {
            blob: self.blob,
            rec: n,
        })
    }
}

/// One unit mask of an event.
#[derive(Clone, Copy)]
pub struct MaskRef {
    blob: &'static Blob,
    rec: u32,
}

impl MaskRef {
    fn w(&self, field: u32) -> u32 {
        self.blob.w(self.rec + field)
    }
    fn flag(&self, f: u32) -> bool {
        self.w(M_FLAGS) & f != 0
    }
    pub fn name(&self) -> &'static str {
        self.blob.str_at(self.rec + M_NAME)
    }
    pub fn desc(&self) -> &'static str {
        self.blob.str_at(self.rec + M_DESC)
    }
    pub fn value(&self) -> Option<u32> {
        self.flag(MF_VALUE).then(|| self.w(M_VALUE))
    }
    /// "All of the other masks available on this model" (its value grew across revisions).
    pub fn all(&self) -> bool {
        self.flag(MF_ALL)
    }
    /// NetBurst: the ESCR event-mask bit.
    pub fn bit(&self) -> Option<u32> {
        self.flag(MF_BIT).then(|| self.w(M_BIT))
    }
    /// NetBurst execution tagging: the tag-value bit.
    pub fn tag(&self) -> Option<u32> {
        self.flag(MF_TAG).then(|| self.w(M_TAG))
    }
    /// A mask that changes the event select itself.
    pub fn event(&self) -> Option<u32> {
        self.flag(MF_EVENT).then(|| self.w(M_EVENT))
    }
    pub fn cmask(&self) -> u32 {
        self.w(M_CMASK)
    }
    pub fn inv(&self) -> bool {
        self.flag(MF_INV)
    }
    pub fn edge(&self) -> bool {
        self.flag(MF_EDGE)
    }
    pub fn any(&self) -> bool {
        self.flag(MF_ANY)
    }
    pub fn pair(&self) -> bool {
        self.flag(MF_PAIR)
    }
    pub fn deprecated(&self) -> bool {
        self.flag(MF_DEPRECATED)
    }
    pub fn config1(&self) -> u64 {
        u64::from(self.w(M_CONFIG1)) | u64::from(self.w(M_CONFIG1 + 1)) << 32
    }
    pub fn msr(&self) -> u32 {
        self.w(M_MSR)
    }
    pub fn on_model(&self, model: u32) -> bool {
        !self.flag(MF_MODELS) || in_ranges(model, &self.blob.list_at(self.rec + M_MODELS).ranges())
    }
    pub fn counters(&self) -> Option<Vec<u32>> {
        self.flag(MF_COUNTERS)
            .then(|| self.blob.list_at(self.rec + M_COUNTERS).to_vec())
    }
    pub fn src(&self) -> &'static str {
        self.blob.str_at(self.rec + M_SRC)
    }
}

/// A NetBurst replay-tagging kind of `replay_event`.
#[derive(Clone, Copy)]
pub struct ReplayRef {
    blob: &'static Blob,
    rec: u32,
}

impl ReplayRef {
    pub fn name(&self) -> &'static str {
        self.blob.str_at(self.rec + R_NAME)
    }
    pub fn desc(&self) -> &'static str {
        self.blob.str_at(self.rec + R_DESC)
    }
    /// Bits to set in IA32_PEBS_ENABLE (MSR 3F1H).
    pub fn pebs_enable(&self) -> u32 {
        self.blob.w(self.rec + R_PEBS)
    }
    /// Bits to set in MSR_PEBS_MATRIX_VERT (MSR 3F2H).
    pub fn matrix_vert(&self) -> u32 {
        self.blob.w(self.rec + R_VERT)
    }
    /// Linux's P4_PEBS_METRIC index, if the perf back-end can express this kind.
    pub fn perf_metric(&self) -> Option<u32> {
        let m = self.blob.w(self.rec + R_METRIC);
        (m != u32::MAX).then_some(m)
    }
}

/// The ESCR/CCCR facts of a NetBurst event.
#[derive(Clone, Copy)]
pub struct NetburstRef {
    blob: &'static Blob,
    rec: u32,
}

impl NetburstRef {
    pub fn escr_select(&self) -> u32 {
        self.blob.w(self.rec + N_ESCR_SELECT)
    }
    pub fn cccr_select(&self) -> u32 {
        self.blob.w(self.rec + N_CCCR_SELECT)
    }
    pub fn p4_index(&self) -> u32 {
        self.blob.w(self.rec + N_P4_INDEX)
    }
    pub fn escrs(&self) -> Vec<String> {
        self.blob
            .list_at(self.rec + N_ESCRS)
            .strings()
            .into_iter()
            .map(String::from)
            .collect()
    }
    pub fn escr_msrs(&self) -> Vec<u32> {
        self.blob.list_at(self.rec + N_ESCR_MSRS).to_vec()
    }
    pub fn escr_counters(&self) -> Vec<Vec<u32>> {
        let l = self.blob.list_at(self.rec + N_ESCR_COUNTERS);
        (0..l.len / 2)
            .map(|i| {
                List {
                    blob: self.blob,
                    at: l.get(2 * i),
                    len: l.get(2 * i + 1),
                }
                .to_vec()
            })
            .collect()
    }
}

/// An alias: a name for an event of the table, for one core type or all.
#[derive(Clone, Copy)]
pub struct AliasRef {
    blob: &'static Blob,
    rec: u32,
}

impl AliasRef {
    pub fn name(&self) -> &'static str {
        self.blob.str_at(self.rec + A_NAME)
    }
    /// The core type this target is for; [`Unit::Core`]: every core type.
    pub fn unit(&self) -> Unit {
        Unit::from_code(self.blob.w(self.rec + A_UNIT))
    }
    pub fn target(&self) -> &'static str {
        self.blob.str_at(self.rec + A_TARGET)
    }
}

/// A derived metric of a table: a name and an expression over events (perf's metric language).
#[derive(Clone, Copy)]
pub struct MetricRef {
    blob: &'static Blob,
    rec: u32,
}

impl std::fmt::Debug for MetricRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Metric({})", self.name())
    }
}

impl MetricRef {
    pub fn name(&self) -> &'static str {
        self.blob.str_at(self.rec + X_NAME)
    }
    pub fn expr(&self) -> &'static str {
        self.blob.str_at(self.rec + X_EXPR)
    }
    /// The groups it belongs to.
    pub fn groups(&self) -> impl Iterator<Item = &'static str> {
        self.blob
            .str_at(self.rec + X_GROUPS)
            .split(';')
            .filter(|g| !g.is_empty())
    }
    /// perf's ScaleUnit (`100%`, `1GHz`, `6.4e-5MB/s`); empty when the value has no unit.
    pub fn scale_unit(&self) -> &'static str {
        self.blob.str_at(self.rec + X_UNIT)
    }
    /// An expression that is true when the value deserves attention (perf's MetricThreshold).
    pub fn threshold(&self) -> Option<&'static str> {
        Some(self.blob.str_at(self.rec + X_THRESHOLD)).filter(|t| !t.is_empty())
    }
    /// The core type whose events it counts, on a hybrid part.
    pub fn unit(&self) -> Unit {
        Unit::from_code(self.blob.w(self.rec + X_PMU))
    }
    pub fn desc(&self) -> &'static str {
        self.blob.str_at(self.rec + X_DESC)
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

/// Name of the table of metrics every CPU has (perf's common metrics).
pub const COMMON: &str = "common";

/// Where tables come from: the built-in set, optionally preceded by a user directory.
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

    /// The table for `cpu`, if any (a user directory's tables win over built-in ones).
    pub fn for_cpu(&self, cpu: &CpuIdent) -> Result<Option<Table>, TableError> {
        if let Some(t) = self.user_tables()?.into_iter().find(|t| t.matches_cpu(cpu)) {
            return Ok(Some(t));
        }
        Ok(builtin_headers()
            .find(|(_, t)| t.matches_cpu(cpu))
            .map(|(i, _)| builtin(i)))
    }

    /// The metrics every CPU has (built on generic and software events).
    pub fn common(&self) -> Option<Table> {
        builtin_headers()
            .find(|(_, t)| t.name() == COMMON)
            .map(|(i, _)| builtin(i))
    }

    /// Every table for a CPU (not the common metrics), user tables first.
    pub fn all(&self) -> Result<Vec<Table>, TableError> {
        self.user_then_builtin(|i, _| builtin(i))
    }

    /// Whether `name` could be right on some machine: an event or alias of any table, or a name
    /// whose meaning depends on the machine (`system:tracepoint`, `EVENT:MASK`, PMU terms, metric files' `PMU@terms@`). A
    /// name for which this is false is misspelt wherever arum runs. Decompresses every table:
    /// for names the machine's own table did not know.
    pub fn could_exist(&self, name: &str) -> bool {
        if name.contains([':', '/', '@']) {
            return true;
        }
        // `EVENT.MASK` may be one event of a table, or a unit mask of EVENT.
        let base = name.split('.').next().unwrap_or(name);
        self.all().is_ok_and(|tables| {
            tables.iter().any(|t| {
                !t.find(name).is_empty() || !t.find(base).is_empty() || !t.alias(name).is_empty()
            })
        })
    }

    /// Every table for a CPU as `all` gives them, but the built-in ones as their index records:
    /// names, titles, vendors and match rules without events, aliases or metrics, so that
    /// choosing a table by name decompresses none.
    pub fn all_headers(&self) -> Result<Vec<Table>, TableError> {
        self.user_then_builtin(|_, header| header)
    }

    /// The user's tables, then each built-in one they do not replace, as `pick` gives it from
    /// its index position and record.
    fn user_then_builtin(
        &self,
        pick: impl Fn(usize, Table) -> Table,
    ) -> Result<Vec<Table>, TableError> {
        let mut tables = self.user_tables()?;
        for (i, t) in builtin_headers() {
            if t.name() != COMMON && !tables.iter().any(|u| u.name() == t.name()) {
                tables.push(pick(i, t));
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
        let mut parsed = Vec::new();
        for p in &paths {
            let text = std::fs::read_to_string(p).map_err(dir_err)?;
            let t: file::TableFile = toml::from_str(&text).map_err(|e| TableError::Parse {
                origin: p.display().to_string(),
                message: e.to_string(),
            })?;
            parsed.push(t);
        }
        if parsed.is_empty() {
            return Ok(Vec::new());
        }
        let mut w = blob::Writer::new();
        let recs = compile::compile_all(&mut w, &parsed).map_err(|message| TableError::Parse {
            origin: dir.display().to_string(),
            message,
        })?;
        // The user's tables live as long as the process, like the built-in ones.
        let bytes: &'static [u8] = Box::leak(w.finish(&recs).into_boxed_slice());
        let blob: &'static Blob = Box::leak(Box::new(
            Blob::from_bytes(bytes).expect("the writer wrote a valid blob"),
        ));
        Ok(blob.tables().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_index_entry_decompresses_to_the_same_table_with_its_events() {
        let mut n = 0;
        for (i, header) in builtin_headers() {
            let full = builtin(i);
            assert_eq!(full.name(), header.name());
            assert_eq!(full.vendor(), header.vendor());
            assert_eq!(
                full.matches().len(),
                header.matches().len(),
                "{}",
                full.name()
            );
            if full.name() != COMMON {
                assert!(
                    full.events().next().is_some(),
                    "{} has no events",
                    full.name()
                );
            }
            let named = TableSource::default()
                .all_headers()
                .unwrap()
                .into_iter()
                .any(|t| t.name() == full.name());
            assert!(named || full.name() == COMMON, "{}", full.name());
            // Decompressed once: the same blob the second time.
            assert_eq!(builtin(i), full);
            n += 1;
        }
        assert!(n > 50, "{n} tables");
    }
}
