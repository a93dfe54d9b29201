//! The events the user asked for: gathered from -e, --events-file and -M (the events metrics
//! need), resolved for the CPU (detected, or --cpu), placed on counters, or hardware counting
//! switched off with one reason. Tables are compiled-in data: only the CPU's is looked at, and
//! only when a name needs it; the kernel's PMUs are read only when a name or metric needs them.

use arum_events::cpu::{self, CpuIdent};
use arum_events::metrics::RunFacts;
use arum_events::plan::{self, Machine, Plan};
use arum_events::resolve::split_event_list;
use arum_events::sysfs::Pmus;
use arum_events::table::{Table, TableSource};

use crate::error::ArumError;
use crate::facilities::counters::model::Scope;
use crate::request::{CpuChoice, EventRequest};

/// The CPU to use: --cpu (a spec or a table's name), or the one arum runs on. The flag says
/// whether it was named.
pub fn cpu(args: &CpuChoice) -> Result<(CpuIdent, bool), ArumError> {
    match &args.cpu {
        Some(spec) => {
            if let Some(c) = cpu_of_table(args, spec)? {
                return Ok((c, true));
            }
            Ok((cpu::parse_spec(spec).map_err(ArumError::Cpu)?, true))
        }
        None => Ok((
            CpuIdent::detect().ok_or_else(|| {
                ArumError::Cpu(
                    "cannot identify the processor with CPUID; name one with --cpu".into(),
                )
            })?,
            false,
        )),
    }
}

/// `--cpu intel-skylakex` (or `skylakex`, `zen3`): the first CPU the table matches.
fn cpu_of_table(args: &CpuChoice, spec: &str) -> Result<Option<CpuIdent>, ArumError> {
    let all = source(args).all_headers()?;
    let t = all.into_iter().find(|t| {
        let n = t.name();
        n.eq_ignore_ascii_case(spec)
            || n.split_once('-')
                .is_some_and(|(_, short)| short.eq_ignore_ascii_case(spec))
    });
    Ok(t.and_then(|t| {
        let m = t.matches().into_iter().next()?;
        Some(CpuIdent {
            vendor: t.vendor().to_string(),
            family: m.family,
            model: m.models.first()?[0],
            stepping: m
                .steppings
                .and_then(|s| s.first().map(|r| r[0]))
                .unwrap_or(0),
            model_name: String::new(),
        })
    }))
}

fn source(args: &CpuChoice) -> TableSource {
    TableSource::new(args.event_tables.as_deref())
}

/// The table for `cpu`, if ARUM has one.
pub fn table(args: &CpuChoice, cpu: &CpuIdent) -> Result<Option<Table>, ArumError> {
    Ok(source(args).for_cpu(cpu)?)
}

/// A hint when --cpu was probably given a decimal model (`6-23` for model 0x17).
pub fn cpu_hint(args: &CpuChoice, cpu: &CpuIdent) -> Option<String> {
    let spec = args.cpu.as_deref()?;
    let src = source(args);
    cpu::decimal_model_hint(spec, cpu, |c| {
        src.for_cpu(c).ok().flatten().map(|t| t.title().to_string())
    })
}

/// Every event name given, in order.
pub fn specs(args: &EventRequest) -> Result<Vec<String>, ArumError> {
    let mut specs: Vec<String> = args
        .events
        .iter()
        .flat_map(|s| split_event_list(s))
        .collect();
    if let Some(path) = &args.events_file {
        let text = std::fs::read_to_string(path).map_err(|source| ArumError::EventsFile {
            path: path.clone(),
            source,
        })?;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("");
            specs.extend(split_event_list(line));
        }
    }
    Ok(specs)
}

/// The metric names and groups of -M.
pub fn metric_names(args: &EventRequest) -> Vec<String> {
    args.metrics
        .iter()
        .flat_map(|m| m.split(','))
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(String::from)
        .collect()
}

/// Resolves and places the requested events and metrics, with the facts about the machine the
/// metrics read. `None` when none was asked for. `strict`: hardware counting off is an error.
pub fn plan(args: &EventRequest, strict: bool) -> Result<Option<(Plan, RunFacts)>, ArumError> {
    let specs = specs(args)?;
    let metrics = metric_names(args);
    if specs.is_empty() && metrics.is_empty() {
        return Ok(None);
    }
    let (cpu, given) = cpu(&args.cpu)?;
    // Look the CPU's table up only when a name needs it: software events and raw codes do not.
    let table = if metrics.is_empty()
        && specs
            .iter()
            .all(|s| arum_events::resolve::needs_no_table(s))
    {
        None
    } else {
        table(&args.cpu, &cpu)?
    };
    if !metrics.is_empty() {
        arum_events::metrics::select(table, source(&args.cpu).common(), &metrics)
            .map_err(ArumError::Metrics)?;
    }
    // The kernel's PMUs are read when a name or a metric may need them (hybrid parts, PMU
    // terms, tracepoints, metrics), not for every run.
    let needs_pmus = !metrics.is_empty()
        || table.is_some_and(|t| t.is_hybrid())
        || specs.iter().any(|s| s.contains('/') || s.contains('@'));
    let pmus = if needs_pmus && !given {
        Pmus::system()
    } else {
        Pmus::default()
    };
    let system_wide = args.scope == Scope::System;
    let (machine, facts) = if given {
        // CPUID and sysfs describe the machine arum runs on, not a CPU named with --cpu.
        (
            Machine::named(&cpu, table),
            RunFacts {
                system_wide,
                ..RunFacts::default()
            },
        )
    } else if metrics.is_empty() && specs.iter().all(|s| arum_events::resolve::is_software(s)) {
        (Machine::software_only(&cpu), RunFacts::default())
    } else {
        (
            Machine::this(&cpu, table, &pmus),
            if metrics.is_empty() {
                RunFacts::default()
            } else {
                RunFacts::this_machine(&cpu, system_wide)
            },
        )
    };
    let mut plan = plan::plan_with(&specs, &metrics, &machine, &facts);
    // A name no table knows is a typo on every machine: refused before anything runs, as perf
    // stat refuses it. Another CPU's event is this machine's limit, a warning (see --strict).
    let src = source(&args.cpu);
    let misspelt: Vec<&str> = plan
        .unknown
        .iter()
        .filter(|(name, _)| !src.could_exist(name))
        .map(|(_, message)| message.as_str())
        .collect();
    if !misspelt.is_empty() {
        return Err(ArumError::UnknownEvent {
            message: misspelt.join("; "),
        });
    }
    if given && table.is_none() {
        plan.notes.extend(cpu_hint(&args.cpu, &cpu));
    }
    if let (Some(reason), true) = (&plan.hardware_off, strict) {
        return Err(ArumError::HardwareOff {
            reason: reason.clone(),
        });
    }
    Ok(Some((plan, facts)))
}
