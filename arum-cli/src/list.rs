//! `arum list`: the events of a processor (aliases, native events and unit masks with their
//! encodings), or the supported processors. JSON lines are for scripts and tests.

use std::fmt::Write;

use arum_events::resolve::{EventKind, Resolver};
use arum_events::table::{Style, Table, TableSource};
use serde::Serialize;

use crate::cli::{InfoFormat, ListArgs};
use crate::error::ArumError;
use crate::events;

/// One line of `arum list --format json`.
#[derive(Debug, Serialize)]
struct Line<'a> {
    table: &'a str,
    name: String,
    alias: Option<&'a str>,
    desc: String,
    event_select: Option<u32>,
    umask: Option<u32>,
    cmask: Option<u32>,
    inv: Option<u32>,
    edge: Option<u32>,
    counters: Vec<u32>,
    perf_config: String,
    config1: Option<String>,
    escr: Option<String>,
    cccr: Option<String>,
    escrs: Option<&'a [String]>,
    p4_index: Option<u32>,
}

pub fn run(args: &ListArgs) -> Result<i32, ArumError> {
    let source = TableSource::new(args.cpu.event_tables.as_deref());
    let text = if args.cpus {
        list_cpus(&source, args.format)?
    } else {
        let (cpu, _) = events::cpu(&args.cpu)?;
        let table = events::table(&args.cpu, &cpu)?.ok_or_else(|| ArumError::NoTable {
            key: cpu.key(),
            what: if cpu.model_name.is_empty() {
                "given with --cpu".into()
            } else {
                cpu.model_name.clone()
            },
        })?;
        let resolver = Resolver {
            cpu: &cpu,
            table: Some(&table),
        };
        let lines = lines(&table, &resolver);
        let pattern = args.pattern.as_deref().map(str::to_ascii_lowercase);
        let keep = |l: &Line| {
            pattern.as_deref().is_none_or(|p| {
                l.name.to_ascii_lowercase().contains(p)
                    || l.alias.is_some_and(|a| a.to_ascii_lowercase().contains(p))
                    || l.desc.to_ascii_lowercase().contains(p)
            })
        };
        let lines: Vec<Line> = lines.into_iter().filter(keep).collect();
        match args.format {
            InfoFormat::Json => lines
                .iter()
                .map(|l| serde_json::to_string(l).expect("serialises") + "\n")
                .collect(),
            InfoFormat::Text => text_listing(&table, &lines),
        }
    };
    print!("{text}");
    Ok(0)
}

/// Every event and unit mask available on the CPU, plus aliases that combine several masks.
fn lines<'a>(table: &'a Table, resolver: &Resolver) -> Vec<Line<'a>> {
    let mut out = Vec::new();
    let mut names = Vec::new();
    for e in table
        .events
        .iter()
        .filter(|e| e.on_model(resolver.cpu.model))
    {
        let masks: Vec<_> = e
            .masks
            .iter()
            .filter(|m| m.on_model(resolver.cpu.model))
            .collect();
        if masks.is_empty() {
            names.push(e.name.clone());
        }
        names.extend(masks.iter().map(|m| format!("{}:{}", e.name, m.name)));
    }
    let alias_of = |canonical: &str| {
        table
            .aliases
            .keys()
            .find(|a| resolver.resolve(a).is_ok_and(|r| r.name == canonical))
    };
    for name in &names {
        if let Some(l) = line(table, resolver, name, alias_of(name).map(String::as_str)) {
            out.push(l);
        }
    }
    for alias in table.aliases.keys() {
        if let Ok(r) = resolver.resolve(alias) {
            if !names.contains(&r.name) {
                out.extend(line(table, resolver, alias, Some(alias.as_str())));
            }
        }
    }
    out
}

fn line<'a>(
    table: &'a Table,
    resolver: &Resolver,
    spec: &str,
    alias: Option<&'a str>,
) -> Option<Line<'a>> {
    let r = resolver.resolve(spec).ok()?;
    let EventKind::Hardware(hw) = r.kind else {
        return None;
    };
    let f = hw.fields;
    let nb = hw.netburst.as_ref();
    Some(Line {
        table: &table.table.name,
        name: r.name,
        alias,
        desc: hw.desc.clone(),
        event_select: f.map(|f| f.event_select),
        umask: f.map(|f| f.umask),
        cmask: f.map(|f| f.cmask),
        inv: f.map(|f| u32::from(f.inv)),
        edge: f.map(|f| u32::from(f.edge)),
        counters: match (&hw.counters, nb) {
            (_, Some(nb)) => {
                let mut c: Vec<u32> = nb.escr_counters.iter().flatten().copied().collect();
                c.sort_unstable();
                c.dedup();
                c
            }
            (Some(c), None) => c.clone(),
            (None, None) => (0..table.pmu.general_counters).collect(),
        },
        perf_config: format!("{:#x}", hw.config),
        config1: (hw.config1 != 0).then(|| format!("{:#x}", hw.config1)),
        escr: nb.map(|n| format!("{:#x}", n.escr)),
        cccr: nb.map(|n| format!("{:#x}", n.cccr)),
        escrs: table
            .event(spec.split(':').next().unwrap_or(spec))
            .filter(|_| nb.is_some())
            .map(|e| e.escrs.as_slice()),
        p4_index: nb.map(|n| n.p4_index),
    })
}

fn text_listing(table: &Table, lines: &[Line]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} [{}]", table.table.title, table.table.name);
    let p = table.pmu;
    let _ = writeln!(
        out,
        "{} general counters of {} bits{}",
        p.general_counters,
        p.counter_width,
        if p.fixed_counters > 0 {
            format!(", {} fixed of {} bits", p.fixed_counters, p.fixed_width)
        } else {
            String::new()
        }
    );
    let aliased: Vec<&Line> = lines.iter().filter(|l| l.alias.is_some()).collect();
    if !aliased.is_empty() {
        let _ = writeln!(out, "\nAliases");
        for l in &aliased {
            let _ = writeln!(
                out,
                "  {:<24} {}  ({})",
                l.alias.unwrap_or(""),
                l.name,
                l.desc
            );
        }
    }
    let _ = writeln!(out, "\nEvents (name, raw config, description)");
    for l in lines {
        let extra = if table.table.style == Style::Netburst {
            format!(
                " escr={} cccr={}",
                l.escr.as_deref().unwrap_or(""),
                l.cccr.as_deref().unwrap_or("")
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {:<48} {:<12}{extra} {}",
            l.name, l.perf_config, l.desc
        );
    }
    out
}

#[derive(Serialize)]
struct CpuLine {
    table: String,
    title: String,
    keys: Vec<String>,
    events: usize,
}

fn list_cpus(source: &TableSource, format: InfoFormat) -> Result<String, ArumError> {
    let tables = source.all()?;
    let rows: Vec<CpuLine> = tables
        .iter()
        .map(|t| CpuLine {
            table: t.table.name.clone(),
            title: t.table.title.clone(),
            keys: t
                .table
                .matches
                .iter()
                .flat_map(|m| {
                    m.models.iter().map(move |[lo, hi]| {
                        let models = if lo == hi {
                            format!("{lo:X}")
                        } else {
                            format!("{lo:X}..{hi:X}")
                        };
                        format!("{}-{}-{models}", t.table.vendor, m.family)
                    })
                })
                .collect(),
            events: t.events.len(),
        })
        .collect();
    Ok(match format {
        InfoFormat::Json => rows
            .iter()
            .map(|r| serde_json::to_string(r).expect("serialises") + "\n")
            .collect(),
        InfoFormat::Text => rows
            .iter()
            .map(|r| format!("{:<16} {:<70} {}\n", r.table, r.title, r.keys.join(", ")))
            .collect(),
    })
}
