//! `arum list`: what can be counted on a processor — its table's aliases, events and unit masks
//! with their encodings (if ARUM has a table for it), the kernel's generic events, Intel's
//! architectural or AMD's legacy events, software events, tracepoints and the kernel's PMUs —
//! or its derived metrics (`--metrics`), or the supported processors (`--cpus`). JSON lines
//! are for scripts and tests.

use std::fmt::Write;

use arum_events::cpu::{ArchPerfmon, CpuIdent, AMD_LEGACY_EVENTS, ARCH_EVENTS};
use arum_events::generic;
use arum_events::resolve::{EventKind, Resolver, SOFTWARE_EVENTS};
use arum_events::sysfs::{self, Pmus};
use arum_events::table::{Table, TableSource, Unit};
use serde::Serialize;

use crate::error::ArumError;
use crate::facilities::counters::events;
use crate::info::InfoFormat;
use crate::request::CpuChoice;

/// One line of `arum list --format json` for a table event or unit mask.
#[derive(Debug, Serialize)]
struct Line {
    kind: &'static str,
    table: Option<String>,
    name: String,
    alias: Option<String>,
    desc: String,
    /// The core type, on hybrid parts.
    unit: Option<String>,
    event_select: Option<u32>,
    umask: Option<u32>,
    cmask: Option<u32>,
    inv: Option<u32>,
    edge: Option<u32>,
    counters: Vec<u32>,
    perf_type: u32,
    perf_config: String,
    config1: Option<String>,
    escr: Option<String>,
    cccr: Option<String>,
    escrs: Option<Vec<String>>,
    p4_index: Option<u32>,
    /// NetBurst replay tagging: IA32_PEBS_ENABLE and MSR_PEBS_MATRIX_VERT bits.
    pebs_enable: Option<String>,
    pebs_matrix_vert: Option<String>,
    /// Where the encoding came from (the table's source keys).
    src: Option<String>,
    available: bool,
}

impl Line {
    fn plain(kind: &'static str, name: String, desc: String, perf_type: u32, config: u64) -> Line {
        Line {
            kind,
            table: None,
            name,
            alias: None,
            desc,
            unit: None,
            event_select: None,
            umask: None,
            cmask: None,
            inv: None,
            edge: None,
            counters: Vec::new(),
            perf_type,
            perf_config: format!("{config:#x}"),
            config1: None,
            escr: None,
            cccr: None,
            escrs: None,
            p4_index: None,
            pebs_enable: None,
            pebs_matrix_vert: None,
            src: None,
            available: true,
        }
    }

    /// Whether its name, alias or description contains `pattern` (lower case), ignoring case.
    fn matches(&self, pattern: &str) -> bool {
        self.name.to_ascii_lowercase().contains(pattern)
            || self
                .alias
                .as_ref()
                .is_some_and(|a| a.to_ascii_lowercase().contains(pattern))
            || self.desc.to_ascii_lowercase().contains(pattern)
    }
}

/// What `arum list` lists.
#[derive(Debug, Clone)]
pub struct ListRequest {
    /// The supported microarchitectures and their CPUID keys instead of events.
    pub cpus: bool,
    pub cpu: CpuChoice,
    pub format: InfoFormat,
    /// The derived metrics (of a group, when not empty) instead of the events.
    pub metrics: Option<String>,
    /// Only names, aliases or descriptions containing this (case-insensitive).
    pub pattern: Option<String>,
}

pub fn run(args: &ListRequest) -> Result<i32, ArumError> {
    let source = TableSource::new(args.cpu.event_tables.as_deref());
    if args.cpus {
        out(&list_cpus(&source, args.format)?);
        return Ok(0);
    }
    let (cpu, given) = events::cpu(&args.cpu)?;
    let table = events::table(&args.cpu, &cpu)?;
    if given && table.is_none() {
        if let Some(hint) = events::cpu_hint(&args.cpu, &cpu) {
            eprintln!("arum: note: {hint}");
        }
    }
    if let Some(group) = &args.metrics {
        out(&list_metrics(table, source.common(), group, args)?);
        return Ok(0);
    }
    // The machine's own PMUs and tracepoints say nothing of a CPU given with --cpu.
    let (pmus, tracepoints) = if given {
        (Pmus::default(), Vec::new())
    } else {
        (Pmus::system(), tracepoint_systems())
    };
    let pattern = args.pattern.as_deref().map(str::to_ascii_lowercase);
    let lines: Vec<Line> = event_lines(&cpu, table, given)
        .into_iter()
        .filter(|l| pattern.as_deref().is_none_or(|p| l.matches(p)))
        .collect();
    let text = match args.format {
        InfoFormat::Json => json_listing(&lines, &pmus, &tracepoints, pattern.is_some()),
        InfoFormat::Text => text_listing(
            &cpu,
            table,
            &lines,
            &pmus,
            &tracepoints,
            given,
            pattern.is_some(),
        ),
    };
    out(&text);
    Ok(0)
}

/// Every event of the CPU: its table's, the generic ones, the architectural or legacy ones
/// (without a table), and the software events.
fn event_lines(cpu: &CpuIdent, table: Option<Table>, given: bool) -> Vec<Line> {
    let arch = if given {
        (cpu.vendor == "GenuineIntel" && cpu.family != 15).then(ArchPerfmon::assumed)
    } else {
        ArchPerfmon::detect(cpu)
    };
    let resolver = Resolver::new(cpu, table).with_arch(arch);
    let mut lines = Vec::new();
    if let Some(t) = table {
        lines.extend(table_lines(t, &resolver));
    }
    lines.extend(generic_lines(&resolver));
    lines.extend(register_lines(cpu, table, arch));
    lines.extend(
        SOFTWARE_EVENTS.iter().map(|(n, _, c)| {
            Line::plain("software", n.to_string(), "software event".into(), 1, *c)
        }),
    );
    lines
}

/// One JSON object a line: the events, then (unless filtered) the PMUs and tracepoint
/// subsystems.
fn json_listing(
    lines: &[Line],
    pmus: &Pmus,
    tracepoints: &[(String, usize)],
    filtered: bool,
) -> String {
    let mut out: String = lines
        .iter()
        .map(|l| serde_json::to_string(l).expect("serialises") + "\n")
        .collect();
    if !filtered {
        for p in &pmus.pmus {
            let v = serde_json::json!({"kind": "pmu", "name": p.name, "perf_type": p.perf_type,
                "cpus": p.cpus, "events": p.events().keys().collect::<Vec<_>>()});
            out.push_str(&(v.to_string() + "\n"));
        }
        for (sys, n) in tracepoints {
            let v =
                serde_json::json!({"kind": "tracepoints", "name": format!("{sys}:*"), "events": n});
            out.push_str(&(v.to_string() + "\n"));
        }
    }
    out
}

/// Prints a listing; a reader that stops early (`arum list | head`) is not an error.
fn out(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Every event and unit mask of the table available on the CPU, plus aliases that combine
/// several masks.
fn table_lines(table: Table, resolver: &Resolver) -> Vec<Line> {
    let model = resolver.cpu.model;
    let sep = table.separator();
    let mut names = Vec::new();
    for e in table
        .events()
        .filter(|e| e.on_model(model) && !e.deprecated())
    {
        let masks: Vec<_> = e
            .masks()
            .filter(|m| m.on_model(model) && !m.deprecated())
            .collect();
        if masks.is_empty() || e.plain() {
            names.push((e.name().to_string(), e.unit()));
        }
        names.extend(
            masks
                .iter()
                .map(|m| (format!("{}{sep}{}", e.name(), m.name()), e.unit())),
        );
        // NetBurst replay tagging: each kind, counted as non-bogus replays.
        names.extend(
            e.replays()
                .map(|r| (format!("{}{sep}NBOGUS:{}", e.name(), r.name()), e.unit())),
        );
    }
    let mut out = Vec::new();
    let aliases: Vec<&str> = table.alias_names();
    let alias_of = |canonical: &str| {
        aliases
            .iter()
            .find(|a| resolver.resolve(a).is_ok_and(|r| r.name == canonical))
            .map(|a| a.to_string())
    };
    let mut seen = Vec::new();
    for (name, unit) in &names {
        let spec = if *unit == Unit::Core {
            name.clone()
        } else {
            format!("{}/{name}/", unit.pmu_name())
        };
        let alias = if table.is_hybrid() {
            None
        } else {
            alias_of(name)
        };
        if let Some(l) = line(table, resolver, &spec, name, alias, *unit) {
            seen.push(l.name.clone());
            out.push(l);
        }
    }
    for alias in aliases {
        if let Ok(r) = resolver.resolve(alias) {
            if table.is_hybrid() || !seen.contains(&r.name) {
                out.extend(line(
                    table,
                    resolver,
                    alias,
                    &r.name,
                    Some(alias.to_string()),
                    Unit::Core,
                ));
            }
        }
    }
    out
}

fn line(
    table: Table,
    resolver: &Resolver,
    spec: &str,
    name: &str,
    alias: Option<String>,
    unit: Unit,
) -> Option<Line> {
    let r = resolver.resolve(spec).ok()?;
    let EventKind::Hardware(hw) = r.kind else {
        return None;
    };
    let f = hw.fields;
    let nb = hw.netburst.as_ref();
    let src = match &r.source {
        arum_events::resolve::EncodingSource::Table { src, .. } if !src.is_empty() => {
            Some(src.clone())
        }
        _ => None,
    };
    Some(Line {
        kind: "table",
        table: Some(table.name().into()),
        name: name.to_string(),
        alias,
        desc: hw.desc.clone(),
        unit: (unit != Unit::Core).then(|| unit.pmu_name().to_string()),
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
            (None, None) => (0..table.pmu_of(unit).general_counters).collect(),
        },
        perf_type: hw.perf_type,
        perf_config: format!("{:#x}", hw.config),
        config1: (hw.config1 != 0).then(|| format!("{:#x}", hw.config1)),
        escr: nb.map(|n| format!("{:#x}", n.escr)),
        cccr: nb.map(|n| format!("{:#x}", n.cccr)),
        escrs: nb.map(|n| n.escrs.clone()),
        p4_index: nb.map(|n| n.p4_index),
        pebs_enable: nb
            .filter(|n| n.pebs_enable != 0)
            .map(|n| format!("{:#x}", n.pebs_enable)),
        pebs_matrix_vert: nb
            .filter(|n| n.pebs_matrix_vert != 0)
            .map(|n| format!("{:#x}", n.pebs_matrix_vert)),
        src,
        available: true,
    })
}

/// The kernel's generic events, with the encoding the table or CPUID gives each where one does.
fn generic_lines(resolver: &Resolver) -> Vec<Line> {
    generic::all()
        .into_iter()
        .map(|g| {
            let mut l = Line::plain(
                "generic",
                g.name.clone(),
                g.desc.clone(),
                g.perf_type,
                g.config,
            );
            if let Ok(r) = resolver.resolve(&g.name) {
                l.src = Some(r.source.describe());
            }
            l
        })
        .collect()
}

/// Intel's architectural events (CPUID leaf 0xA) or AMD's legacy core events: what the
/// module's register back-end counts on a CPU without a table.
fn register_lines(cpu: &CpuIdent, table: Option<Table>, arch: Option<ArchPerfmon>) -> Vec<Line> {
    if table.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if cpu.vendor == "AuthenticAMD" || cpu.vendor == "HygonGenuine" {
        for (e, u, d, g) in AMD_LEGACY_EVENTS {
            let mut l = Line::plain(
                "amd_legacy",
                g.to_string(),
                d.to_string(),
                4,
                u64::from(e | u << 8),
            );
            l.event_select = Some(e);
            l.umask = Some(u);
            out.push(l);
        }
    } else if let Some(a) = arch {
        for (i, (e, u, d, g)) in ARCH_EVENTS.iter().enumerate() {
            let mut l = Line::plain(
                "architectural",
                g.to_string(),
                d.to_string(),
                4,
                u64::from(e | u << 8),
            );
            l.event_select = Some(*e);
            l.umask = Some(*u);
            l.available = a.has(i);
            out.push(l);
        }
    }
    out
}

/// Tracepoint subsystems and how many events each has.
fn tracepoint_systems() -> Vec<(String, usize)> {
    let Some(dir) = sysfs::tracing_events_dir() else {
        return Vec::new();
    };
    let mut out: Vec<(String, usize)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let n = std::fs::read_dir(e.path())
                .map(|d| {
                    d.filter_map(|x| x.ok())
                        .filter(|x| x.path().is_dir())
                        .count()
                })
                .unwrap_or(0);
            (e.file_name().to_string_lossy().into_owned(), n)
        })
        .collect();
    out.sort();
    out
}

fn text_listing(
    cpu: &CpuIdent,
    table: Option<Table>,
    lines: &[Line],
    pmus: &Pmus,
    tracepoints: &[(String, usize)],
    given: bool,
    filtered: bool,
) -> String {
    let mut out = String::new();
    match table {
        Some(t) => {
            table_header(&mut out, t);
            if !given {
                machine_counters(&mut out, cpu, t);
            }
        }
        None => {
            let _ = writeln!(
                out,
                "No event table for {} {}: the kernel's generic events, {} and software events can be counted by name; raw codes (rNNNN) and PMU terms (cpu/event=..,umask=../) too.",
                cpu.key(),
                if cpu.model_name.is_empty() { "(given with --cpu)".to_string() } else { format!("({})", cpu.model_name) },
                if cpu.vendor == "GenuineIntel" { "architectural" } else { "AMD legacy" }
            );
        }
    }
    if table.is_some() {
        kind_section(
            &mut out,
            lines,
            "Events (name, raw config, description)",
            "table",
        );
    }
    kind_section(
        &mut out,
        lines,
        "Generic events (PERF_TYPE_HARDWARE / PERF_TYPE_HW_CACHE: the kernel maps them to this CPU's events)",
        "generic",
    );
    kind_section(
        &mut out,
        lines,
        "Intel architectural events (CPUID leaf 0xA; the module's register back-end)",
        "architectural",
    );
    kind_section(
        &mut out,
        lines,
        "AMD legacy core events (every family K8..Zen 5; the module's register back-end)",
        "amd_legacy",
    );
    kind_section(&mut out, lines, "Software events", "software");
    if !filtered {
        if given {
            let _ = writeln!(
                out,
                "\nTracepoints and PMUs: listed only for the machine arum runs on (not with --cpu)"
            );
        } else {
            tracepoints_section(&mut out, tracepoints);
            pmus_section(&mut out, pmus);
        }
    }
    out
}

/// Where CPUID on this machine reports other counters than the model's table (a VM often hides
/// some), what arum places events on: the same figure `arum info` shows.
fn machine_counters(out: &mut String, cpu: &CpuIdent, t: Table) {
    let used = arum_events::plan::counters(&t, cpu.detect_pmu());
    if !t.is_hybrid() && used.general_counters != t.pmu().general_counters {
        let _ = writeln!(
            out,
            "on this machine CPUID reports {} general counters, and arum places events on those \
             (a VM may hide some)",
            used.general_counters
        );
    }
}

/// The table's title, its counters (per core type on a hybrid part) and its sources.
fn table_header(out: &mut String, t: Table) {
    let _ = writeln!(out, "{} [{}]", t.title(), t.name());
    let p = t.pmu();
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
    for (u, q) in t.units() {
        let _ = writeln!(
            out,
            "  {}: {} general, {} fixed counters",
            u.pmu_name(),
            q.general_counters,
            q.fixed_counters
        );
    }
    for (k, v) in t.sources() {
        let _ = writeln!(out, "source {k}: {v}");
    }
}

/// The lines of one kind under `title`; nothing when there is none.
fn kind_section(out: &mut String, lines: &[Line], title: &str, kind: &str) {
    let rows: Vec<&Line> = lines.iter().filter(|l| l.kind == kind).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}");
    for l in rows {
        let name = match (&l.alias, kind) {
            (Some(a), "table") => format!("{a} = {}", l.name),
            _ => l.name.clone(),
        };
        let unit = l
            .unit
            .as_deref()
            .map(|u| format!(" [{u}]"))
            .unwrap_or_default();
        let extra = match (&l.escr, &l.cccr) {
            (Some(e), Some(c)) => format!(" escr={e} cccr={c}"),
            _ => String::new(),
        };
        let avail = if l.available {
            ""
        } else {
            " (not available per CPUID)"
        };
        let src = match (kind, &l.src) {
            ("generic", Some(s)) => format!(" — opens as {s}"),
            ("table", Some(s)) => format!(" [{s}]"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<48} {:<12}{extra} {}{unit}{avail}{src}",
            name, l.perf_config, l.desc
        );
    }
}

/// The tracepoint subsystems and their event counts, or why there are none.
fn tracepoints_section(out: &mut String, tracepoints: &[(String, usize)]) {
    if tracepoints.is_empty() {
        let _ = writeln!(out, "\nTracepoints: none readable (tracefs is not mounted at /sys/kernel/tracing, or not readable)");
        return;
    }
    let total: usize = tracepoints.iter().map(|(_, n)| n).sum();
    let _ = writeln!(
        out,
        "\nTracepoints ({total} in {} subsystems; name them SUBSYSTEM:EVENT)",
        tracepoints.len()
    );
    for (sys, n) in tracepoints {
        let _ = writeln!(out, "  {sys}:* ({n})");
    }
}

/// The kernel's PMUs, their types, events and CPUs.
fn pmus_section(out: &mut String, pmus: &Pmus) {
    let _ = writeln!(
        out,
        "\nPMUs ({}; name their events PMU/EVENT/)",
        sysfs::DEVICES
    );
    for p in &pmus.pmus {
        let evs = p.events();
        let _ = writeln!(
            out,
            "  {:<20} type {:<4} {}{}",
            p.name,
            p.perf_type,
            if evs.is_empty() {
                String::new()
            } else {
                format!(
                    "events: {}",
                    evs.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            },
            p.cpus
                .as_ref()
                .map(|c| format!(" (CPUs {})", c.len()))
                .unwrap_or_default()
        );
    }
}

#[derive(Serialize)]
struct MetricLine {
    table: String,
    name: String,
    unit: Option<String>,
    groups: Vec<String>,
    scale_unit: String,
    expr: String,
    threshold: Option<String>,
}

fn list_metrics(
    table: Option<Table>,
    common: Option<Table>,
    group: &str,
    args: &ListRequest,
) -> Result<String, ArumError> {
    let tables: Vec<Table> = table.into_iter().chain(common).collect();
    let pattern = args.pattern.as_deref().map(str::to_ascii_lowercase);
    let mut rows = Vec::new();
    for t in &tables {
        for m in t.metrics() {
            let in_group = group.is_empty()
                || m.name().eq_ignore_ascii_case(group)
                || m.groups().any(|g| g.eq_ignore_ascii_case(group));
            let matches = pattern
                .as_deref()
                .is_none_or(|p| m.name().to_ascii_lowercase().contains(p));
            if in_group && matches {
                rows.push(MetricLine {
                    table: t.name().into(),
                    name: m.name().into(),
                    unit: (m.unit() != Unit::Core).then(|| m.unit().pmu_name().into()),
                    groups: m.groups().map(String::from).collect(),
                    scale_unit: m.scale_unit().into(),
                    expr: m.expr().into(),
                    threshold: m.threshold().map(String::from),
                });
            }
        }
    }
    if rows.is_empty() && !group.is_empty() {
        return Err(ArumError::Metrics(format!(
            "no metric or metric group '{group}' for this CPU; `arum list --metrics` shows them"
        )));
    }
    Ok(match args.format {
        InfoFormat::Json => rows
            .iter()
            .map(|r| serde_json::to_string(r).expect("serialises") + "\n")
            .collect(),
        InfoFormat::Text => {
            let mut out = String::new();
            if group.is_empty() {
                let groups = arum_events::metrics::groups(&tables);
                let _ = writeln!(
                    out,
                    "Metric groups: {}",
                    groups
                        .iter()
                        .map(|(g, n)| format!("{g} ({n})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let _ = writeln!(
                out,
                "\nMetrics (name [unit] {{groups}}: expression); -M NAME or -M GROUP computes them"
            );
            for r in &rows {
                let _ = writeln!(
                    out,
                    "  {}{}{} {{{}}}: {}",
                    r.name,
                    r.unit
                        .as_deref()
                        .map(|u| format!(" [{u}]"))
                        .unwrap_or_default(),
                    if r.scale_unit.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", r.scale_unit)
                    },
                    r.groups.join(";"),
                    r.expr
                );
            }
            out
        }
    })
}

#[derive(Serialize)]
struct CpuLine {
    table: String,
    title: String,
    keys: Vec<String>,
    events: usize,
    metrics: usize,
}

fn list_cpus(source: &TableSource, format: InfoFormat) -> Result<String, ArumError> {
    let tables = source.all()?;
    let rows: Vec<CpuLine> = tables
        .iter()
        .map(|t| CpuLine {
            table: t.name().into(),
            title: t.title().into(),
            keys: t
                .matches()
                .iter()
                .flat_map(|m| {
                    let steps = m.steppings.as_ref().map(|s| {
                        s.iter()
                            .map(|[a, b]| {
                                if a == b {
                                    format!("{a:X}")
                                } else {
                                    format!("{a:X}..{b:X}")
                                }
                            })
                            .collect::<Vec<_>>()
                            .join(",")
                    });
                    m.models.iter().map(move |[lo, hi]| {
                        let models = if lo == hi {
                            format!("{lo:X}")
                        } else {
                            format!("{lo:X}..{hi:X}")
                        };
                        let s = steps.as_ref().map(|s| format!("-{s}")).unwrap_or_default();
                        format!("{}-{}-{models}{s}", t.vendor(), m.family)
                    })
                })
                .collect(),
            events: t.event_count(),
            metrics: t.metrics().count(),
        })
        .collect();
    Ok(match format {
        InfoFormat::Json => rows
            .iter()
            .map(|r| serde_json::to_string(r).expect("serialises") + "\n")
            .collect(),
        InfoFormat::Text => rows
            .iter()
            .map(|r| format!("{:<24} {:<72} {}\n", r.table, r.title, r.keys.join(", ")))
            .collect(),
    })
}
