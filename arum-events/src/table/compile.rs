//! Compiles parsed tables (file.rs) into the blob (blob.rs). Used by build.rs for the built-in
//! tables and at run time for the user's own (`--event-tables DIR`).

use super::blob::{layout::*, Writer};
use super::file::{AliasTarget, StyleName, TableFile};

pub const STYLE_AMD: u32 = 0;
pub const STYLE_INTEL: u32 = 1;
pub const STYLE_NETBURST: u32 = 2;

/// Core types of hybrid parts, by the name of their PMU; 0 is "not a hybrid unit".
pub const UNIT_NAMES: [&str; 4] = ["", "cpu_core", "cpu_atom", "cpu_lowpower"];

pub fn unit_code(name: Option<&str>) -> Result<u32, String> {
    match name {
        None => Ok(0),
        Some(n) => UNIT_NAMES
            .iter()
            .position(|u| *u == n && !n.is_empty())
            .map(|i| i as u32)
            .ok_or_else(|| format!("unknown unit {n:?} (known: cpu_core, cpu_atom, cpu_lowpower)")),
    }
}

fn ranges(r: &[[u32; 2]]) -> Vec<u32> {
    r.iter().flat_map(|p| [p[0], p[1]]).collect()
}

fn bit(cond: bool, flag: u32) -> u32 {
    if cond {
        flag
    } else {
        0
    }
}

/// Compiles tables: first every table's record, names and match rules, together at the start of
/// the blob (finding the CPU's table then touches a page or two, not one per table), then each
/// table's events, aliases and metrics. Returns the table records' offsets.
pub fn compile_all(w: &mut Writer, tables: &[TableFile]) -> Result<Vec<u32>, String> {
    let recs = tables
        .iter()
        .map(|t| header(w, t))
        .collect::<Result<Vec<u32>, String>>()?;
    for (t, rec) in tables.iter().zip(&recs) {
        body(w, t, *rec)?;
    }
    Ok(recs)
}

/// The table record with what finding a table reads: names, vendor, style, match rules, counters.
fn header(w: &mut Writer, t: &TableFile) -> Result<u32, String> {
    let what = |e: String| format!("table {}: {e}", t.table.name);
    let rec = w.record(T_WORDS);
    let v = w.string(&t.table.name);
    w.set2(rec, T_NAME, v);
    let v = w.string(&t.table.title);
    w.set2(rec, T_TITLE, v);
    let v = w.string(&t.table.vendor);
    w.set2(rec, T_VENDOR, v);
    let style = match t.table.style {
        StyleName::Amd => STYLE_AMD,
        StyleName::Intel => STYLE_INTEL,
        StyleName::Netburst => STYLE_NETBURST,
    };
    w.set(rec, T_STYLE, style);
    let sep = match t.table.separator.as_deref() {
        None | Some(":") => ':',
        Some(".") => '.',
        Some(other) => return Err(what(format!("separator {other:?} is neither ':' nor '.'"))),
    };
    w.set(rec, T_SEPARATOR, sep as u32);
    let sources: Vec<&str> = t
        .table
        .sources
        .iter()
        .flat_map(|(k, v)| [k.as_str(), v.as_str()])
        .collect();
    let v = w.strings_list(&sources);
    w.set2(rec, T_SOURCES, v);
    let mut matches = Vec::new();
    for m in &t.table.matches {
        let models = w.list(&ranges(&m.models));
        let steps = match &m.steppings {
            Some(s) => w.list(&ranges(s)),
            None => [0, u32::MAX],
        };
        matches.extend([m.family, models[0], models[1], steps[0], steps[1]]);
    }
    let v = w.list(&matches);
    w.set2(rec, T_MATCHES, v);
    let p = t.pmu;
    for (i, x) in [
        p.general_counters,
        p.counter_width,
        p.fixed_counters,
        p.fixed_width,
    ]
    .into_iter()
    .enumerate()
    {
        w.set(rec, T_PMU + i as u32, x);
    }
    let mut units = Vec::new();
    for u in &t.units {
        unit_code(Some(&u.name)).map_err(what)?;
        let n = w.string(&u.name);
        units.extend([
            n[0],
            n[1],
            u.general_counters,
            u.counter_width,
            u.fixed_counters,
            u.fixed_width,
        ]);
    }
    let v = w.list(&units);
    w.set2(rec, T_UNITS, v);
    Ok(rec)
}

/// Events, aliases and metrics of a table whose record `header` wrote.
fn body(w: &mut Writer, t: &TableFile, rec: u32) -> Result<(), String> {
    let what = |e: String| format!("table {}: {e}", t.table.name);
    let mut events = Vec::with_capacity(t.events.len());
    for e in &t.events {
        events.push(event(w, e).map_err(what)?);
    }
    let v = w.list(&events);
    w.set2(rec, T_EVENTS, v);
    let mut order: Vec<usize> = (0..t.events.len()).collect();
    order.sort_by_key(|&i| t.events[i].name.to_ascii_lowercase());
    let mut index = Vec::with_capacity(3 * order.len());
    for &i in &order {
        let name = w.string_here(&t.events[i].name);
        index.extend([name[0], name[1], events[i]]);
    }
    let v = w.list(&index);
    w.set2(rec, T_INDEX, v);

    let mut aliases: Vec<(String, u32, &str)> = Vec::new();
    for (name, target) in &t.aliases {
        match target {
            AliasTarget::One(to) => aliases.push((name.clone(), 0, to)),
            AliasTarget::PerUnit(map) => {
                for (unit, to) in map {
                    aliases.push((name.clone(), unit_code(Some(unit)).map_err(what)?, to));
                }
            }
        }
    }
    aliases.sort_by_key(|(n, u, _)| (n.to_ascii_lowercase(), *u));
    let mut alias_recs = Vec::new();
    for (name, unit, to) in aliases {
        let a = w.record(A_WORDS);
        let v = w.string(&name);
        w.set2(a, A_NAME, v);
        w.set(a, A_UNIT, unit);
        let v = w.string(to);
        w.set2(a, A_TARGET, v);
        alias_recs.push(a);
    }
    let v = w.list(&alias_recs);
    w.set2(rec, T_ALIASES, v);

    let mut metrics = Vec::new();
    for m in &t.metrics {
        let x = w.record(X_WORDS);
        let v = w.string(&m.name);
        w.set2(x, X_NAME, v);
        let v = w.string(&m.expr);
        w.set2(x, X_EXPR, v);
        let v = w.string(m.groups.as_deref().unwrap_or(""));
        w.set2(x, X_GROUPS, v);
        let v = w.string(m.unit.as_deref().unwrap_or(""));
        w.set2(x, X_UNIT, v);
        let v = w.string(m.threshold.as_deref().unwrap_or(""));
        w.set2(x, X_THRESHOLD, v);
        w.set(x, X_PMU, unit_code(m.pmu.as_deref()).map_err(what)?);
        let v = w.string(&m.desc);
        w.set2(x, X_DESC, v);
        metrics.push(x);
    }
    let v = w.list(&metrics);
    w.set2(rec, T_METRICS, v);
    Ok(())
}

fn event(w: &mut Writer, e: &super::file::Event) -> Result<u32, String> {
    let rec = w.record(E_WORDS);
    let v = w.string(&e.name);
    w.set2(rec, E_NAME, v);
    let v = w.string(&e.desc);
    w.set2(rec, E_DESC, v);
    w.set(rec, E_EVENT, e.event);
    w.set(rec, E_UMASK, e.umask);
    w.set(rec, E_CMASK, e.cmask);
    let flags = bit(e.inv != 0, EF_INV)
        | bit(e.edge != 0, EF_EDGE)
        | bit(e.any != 0, EF_ANY)
        | bit(e.pair, EF_PAIR)
        | bit(e.deprecated, EF_DEPRECATED)
        | bit(e.plain, EF_PLAIN)
        | bit(e.counters.is_some(), EF_COUNTERS)
        | bit(e.models.is_some(), EF_MODELS);
    w.set(rec, E_FLAGS, flags);
    w.set(rec, E_UNIT, unit_code(e.unit.as_deref())?);
    let v = w.string(e.src.as_deref().unwrap_or(""));
    w.set2(rec, E_SRC, v);
    w.set64(rec, E_CONFIG1, e.config1);
    w.set(rec, E_MSR, e.msr);
    let v = w.list(&ranges(e.models.as_deref().unwrap_or(&[])));
    w.set2(rec, E_MODELS, v);
    let v = w.list(e.counters.as_deref().unwrap_or(&[]));
    w.set2(rec, E_COUNTERS, v);
    let defaults: Vec<&str> = e.default.iter().map(String::as_str).collect();
    for d in &defaults {
        if !e.masks.iter().any(|m| m.name.eq_ignore_ascii_case(d)) {
            return Err(format!(
                "event {}: default {d} is not one of its masks",
                e.name
            ));
        }
    }
    let v = w.strings_list(&defaults);
    w.set2(rec, E_DEFAULTS, v);
    let masks = e
        .masks
        .iter()
        .map(|m| mask(w, e, m))
        .collect::<Result<Vec<u32>, String>>()?;
    let v = w.list(&masks);
    w.set2(rec, E_MASKS, v);
    let replays: Vec<u32> = e.replays.iter().map(|r| replay(w, r)).collect();
    let v = w.list(&replays);
    w.set2(rec, E_REPLAYS, v);
    if !e.escrs.is_empty() {
        let n = netburst(w, e)?;
        w.set(rec, E_NETBURST, n);
    }
    Ok(rec)
}

/// The record of one unit mask of event `e`.
fn mask(w: &mut Writer, e: &super::file::Event, m: &super::file::Mask) -> Result<u32, String> {
    if m.value.is_none() && !m.all && m.bit.is_none() && m.tag.is_none() {
        return Err(format!("event {}: mask {} has no value", e.name, m.name));
    }
    let r = w.record(M_WORDS);
    // An event's mask names stay together: looking one up reads them, not the records'
    // shared strings all over the pool (Intel's OCR events have over a thousand masks).
    let v = w.string_here(&m.name);
    w.set2(r, M_NAME, v);
    let v = w.string(&m.desc);
    w.set2(r, M_DESC, v);
    w.set(r, M_VALUE, m.value.unwrap_or(0));
    let flags = bit(m.inv != 0, MF_INV)
        | bit(m.edge != 0, MF_EDGE)
        | bit(m.any != 0, MF_ANY)
        | bit(m.all, MF_ALL)
        | bit(m.value.is_some(), MF_VALUE)
        | bit(m.bit.is_some(), MF_BIT)
        | bit(m.tag.is_some(), MF_TAG)
        | bit(m.event.is_some(), MF_EVENT)
        | bit(m.counters.is_some(), MF_COUNTERS)
        | bit(m.deprecated, MF_DEPRECATED)
        | bit(m.models.is_some(), MF_MODELS)
        | bit(m.pair, MF_PAIR);
    w.set(r, M_FLAGS, flags);
    w.set(r, M_BIT, m.bit.unwrap_or(0));
    w.set(r, M_TAG, m.tag.unwrap_or(0));
    w.set(r, M_EVENT, m.event.unwrap_or(0));
    w.set(r, M_CMASK, m.cmask);
    w.set64(r, M_CONFIG1, m.config1);
    w.set(r, M_MSR, m.msr);
    let v = w.list(&ranges(m.models.as_deref().unwrap_or(&[])));
    w.set2(r, M_MODELS, v);
    let v = w.list(m.counters.as_deref().unwrap_or(&[]));
    w.set2(r, M_COUNTERS, v);
    let v = w.string(m.src.as_deref().unwrap_or(""));
    w.set2(r, M_SRC, v);
    Ok(r)
}

/// The record of one NetBurst replay-tagging kind.
fn replay(w: &mut Writer, r: &super::file::Replay) -> u32 {
    let x = w.record(R_WORDS);
    let v = w.string(&r.name);
    w.set2(x, R_NAME, v);
    let v = w.string(&r.desc);
    w.set2(x, R_DESC, v);
    w.set(x, R_PEBS, r.pebs_enable);
    w.set(x, R_VERT, r.matrix_vert);
    w.set(x, R_METRIC, r.perf_metric.unwrap_or(u32::MAX));
    x
}

/// The NetBurst record of event `e`: its ESCRs, their MSRs and counters, its CCCR.
fn netburst(w: &mut Writer, e: &super::file::Event) -> Result<u32, String> {
    if e.escrs.len() != e.escr_msrs.len() || e.escrs.len() != e.escr_counters.len() {
        return Err(format!(
            "event {}: escrs, escr_msrs and escr_counters differ in length",
            e.name
        ));
    }
    let n = w.record(N_WORDS);
    w.set(n, N_ESCR_SELECT, e.escr_select);
    w.set(n, N_CCCR_SELECT, e.cccr_select);
    w.set(n, N_P4_INDEX, e.p4_index);
    let names: Vec<&str> = e.escrs.iter().map(String::as_str).collect();
    let v = w.strings_list(&names);
    w.set2(n, N_ESCRS, v);
    let v = w.list(&e.escr_msrs);
    w.set2(n, N_ESCR_MSRS, v);
    let lists: Vec<u32> = e.escr_counters.iter().flat_map(|c| w.list(c)).collect();
    let v = w.list(&lists);
    w.set2(n, N_ESCR_COUNTERS, v);
    Ok(n)
}
