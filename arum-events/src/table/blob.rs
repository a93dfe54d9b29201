//! The compiled form of the event tables: one blob of little-endian 32-bit words and one string
//! pool, with records at fixed word offsets and lists as (offset, length) pairs. build.rs writes
//! it for the built-in tables and the binary embeds it; reading a field is one bounds-checked
//! load, so start-up does not grow with the number of tables and the data needs no relocations.
//! Shared with build.rs: std only.

use std::collections::HashMap;

pub const MAGIC: &[u8; 8] = b"ARUMEVT1";

/// Word offsets inside each record kind. Strings and lists take two words: offset, length.
pub mod layout {
    // Root (at word 0): the list of table records.
    pub const ROOT_TABLES: u32 = 0;
    pub const ROOT_WORDS: usize = 2;

    pub const T_NAME: u32 = 0;
    pub const T_TITLE: u32 = 2;
    pub const T_VENDOR: u32 = 4;
    pub const T_STYLE: u32 = 6;
    pub const T_SEPARATOR: u32 = 7;
    /// Pairs of strings: key, description.
    pub const T_SOURCES: u32 = 8;
    /// Per rule: family, models list, steppings list (length u32::MAX: any stepping).
    pub const T_MATCHES: u32 = 10;
    pub const T_PMU: u32 = 12; // 4 words: general, width, fixed, fixed width
    /// Per unit: name (2 words), general, width, fixed, fixed width.
    pub const T_UNITS: u32 = 16;
    pub const T_EVENTS: u32 = 18;
    /// Triples (name offset, name length, event record), sorted by lower-case name; the names
    /// are together in the pool, so a lookup touches few pages.
    pub const T_INDEX: u32 = 20;
    /// Alias records sorted by lower-case name.
    pub const T_ALIASES: u32 = 22;
    pub const T_METRICS: u32 = 24;
    pub const T_WORDS: usize = 26;

    pub const E_NAME: u32 = 0;
    pub const E_DESC: u32 = 2;
    pub const E_EVENT: u32 = 4;
    pub const E_UMASK: u32 = 5;
    pub const E_CMASK: u32 = 6;
    pub const E_FLAGS: u32 = 7;
    pub const E_UNIT: u32 = 8;
    pub const E_SRC: u32 = 9;
    pub const E_CONFIG1: u32 = 11; // two words, low first
    pub const E_MSR: u32 = 13;
    pub const E_MODELS: u32 = 14; // flat [lo, hi] pairs
    pub const E_COUNTERS: u32 = 16;
    pub const E_DEFAULTS: u32 = 18; // strings
    pub const E_MASKS: u32 = 20;
    pub const E_REPLAYS: u32 = 22;
    pub const E_NETBURST: u32 = 24; // record offset, 0 = none
    pub const E_WORDS: usize = 25;

    pub const M_NAME: u32 = 0;
    pub const M_DESC: u32 = 2;
    pub const M_VALUE: u32 = 4;
    pub const M_FLAGS: u32 = 5;
    pub const M_BIT: u32 = 6;
    pub const M_TAG: u32 = 7;
    pub const M_EVENT: u32 = 8;
    pub const M_CMASK: u32 = 9;
    pub const M_CONFIG1: u32 = 10;
    pub const M_MSR: u32 = 12;
    pub const M_MODELS: u32 = 13;
    pub const M_COUNTERS: u32 = 15;
    pub const M_SRC: u32 = 17;
    pub const M_WORDS: usize = 19;

    pub const N_ESCR_SELECT: u32 = 0;
    pub const N_CCCR_SELECT: u32 = 1;
    pub const N_P4_INDEX: u32 = 2;
    pub const N_ESCRS: u32 = 3; // strings
    pub const N_ESCR_MSRS: u32 = 5;
    pub const N_ESCR_COUNTERS: u32 = 7; // list of (offset, length) lists
    pub const N_WORDS: usize = 9;

    pub const R_NAME: u32 = 0;
    pub const R_DESC: u32 = 2;
    pub const R_PEBS: u32 = 4;
    pub const R_VERT: u32 = 5;
    pub const R_METRIC: u32 = 6; // u32::MAX: none
    pub const R_WORDS: usize = 7;

    pub const A_NAME: u32 = 0;
    pub const A_UNIT: u32 = 2;
    pub const A_TARGET: u32 = 3;
    pub const A_WORDS: usize = 5;

    pub const X_NAME: u32 = 0;
    pub const X_EXPR: u32 = 2;
    pub const X_GROUPS: u32 = 4;
    pub const X_UNIT: u32 = 6;
    pub const X_THRESHOLD: u32 = 8;
    pub const X_PMU: u32 = 10;
    pub const X_DESC: u32 = 11;
    pub const X_WORDS: usize = 13;

    // Event flags.
    pub const EF_INV: u32 = 1 << 0;
    pub const EF_EDGE: u32 = 1 << 1;
    pub const EF_ANY: u32 = 1 << 2;
    pub const EF_PAIR: u32 = 1 << 3;
    pub const EF_DEPRECATED: u32 = 1 << 4;
    pub const EF_PLAIN: u32 = 1 << 5;
    pub const EF_COUNTERS: u32 = 1 << 6;
    pub const EF_MODELS: u32 = 1 << 7;
    // Mask flags.
    pub const MF_INV: u32 = 1 << 0;
    pub const MF_EDGE: u32 = 1 << 1;
    pub const MF_ANY: u32 = 1 << 2;
    pub const MF_ALL: u32 = 1 << 3;
    pub const MF_VALUE: u32 = 1 << 4;
    pub const MF_BIT: u32 = 1 << 5;
    pub const MF_TAG: u32 = 1 << 6;
    pub const MF_EVENT: u32 = 1 << 7;
    pub const MF_COUNTERS: u32 = 1 << 8;
    pub const MF_DEPRECATED: u32 = 1 << 9;
    pub const MF_MODELS: u32 = 1 << 10;
    pub const MF_PAIR: u32 = 1 << 11;
}

/// Builds a blob: records and lists are appended to one word vector; strings and lists are
/// shared when equal (names, descriptions and counter lists repeat across tables).
#[derive(Default)]
pub struct Writer {
    pub words: Vec<u32>,
    pub strings: String,
    string_at: HashMap<String, [u32; 2]>,
    list_at: HashMap<Vec<u32>, [u32; 2]>,
}

impl Writer {
    pub fn new() -> Writer {
        let mut w = Writer::default();
        w.words.resize(layout::ROOT_WORDS, 0);
        w
    }

    pub fn string(&mut self, s: &str) -> [u32; 2] {
        if let Some(at) = self.string_at.get(s) {
            return *at;
        }
        let at = [self.strings.len() as u32, s.len() as u32];
        self.strings.push_str(s);
        self.string_at.insert(s.to_string(), at);
        at
    }

    /// A string of its own (not shared), so that strings written one after the other stay
    /// together in the pool: a table's sorted names, read by binary search.
    pub fn string_here(&mut self, s: &str) -> [u32; 2] {
        let at = [self.strings.len() as u32, s.len() as u32];
        self.strings.push_str(s);
        at
    }

    pub fn list(&mut self, items: &[u32]) -> [u32; 2] {
        if items.is_empty() {
            return [0, 0];
        }
        if let Some(at) = self.list_at.get(items) {
            return *at;
        }
        let at = [self.words.len() as u32, items.len() as u32];
        self.words.extend_from_slice(items);
        self.list_at.insert(items.to_vec(), at);
        at
    }

    pub fn strings_list(&mut self, items: &[&str]) -> [u32; 2] {
        let flat: Vec<u32> = items.iter().flat_map(|s| self.string(s)).collect();
        self.list(&flat)
    }

    /// Appends a record of `n` words and returns its offset.
    pub fn record(&mut self, n: usize) -> u32 {
        let at = self.words.len() as u32;
        self.words.resize(self.words.len() + n, 0);
        at
    }

    pub fn set(&mut self, rec: u32, field: u32, v: u32) {
        self.words[(rec + field) as usize] = v;
    }

    pub fn set2(&mut self, rec: u32, field: u32, v: [u32; 2]) {
        self.set(rec, field, v[0]);
        self.set(rec, field + 1, v[1]);
    }

    pub fn set64(&mut self, rec: u32, field: u32, v: u64) {
        self.set2(rec, field, [v as u32, (v >> 32) as u32]);
    }

    /// The blob's bytes: magic, word count, string bytes, words (little-endian), strings.
    pub fn finish(self, tables: &[u32]) -> Vec<u8> {
        let mut w = self;
        let list = w.list(tables);
        w.words[layout::ROOT_TABLES as usize] = list[0];
        w.words[layout::ROOT_TABLES as usize + 1] = list[1];
        let mut out = Vec::with_capacity(16 + w.words.len() * 4 + w.strings.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(w.words.len() as u32).to_le_bytes());
        out.extend_from_slice(&(w.strings.len() as u32).to_le_bytes());
        for word in &w.words {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(w.strings.as_bytes());
        out
    }
}
