//! The events the user asked for: gathered from -e and --events-file, resolved against the
//! CPU's table (detected, or --cpu), placed on counters, or hardware counting switched off with
//! one reason. Tables are only parsed here, when events were asked for.

use arum_events::cpu::{self, CpuIdent};
use arum_events::plan::{self, Plan};
use arum_events::resolve::split_event_list;
use arum_events::table::{Table, TableSource};

use crate::cli::{CpuArgs, RunArgs};
use crate::error::ArumError;

/// The CPU to use: --cpu, or the one arum runs on.
pub fn cpu(args: &CpuArgs) -> Result<(CpuIdent, bool), ArumError> {
    match &args.cpu {
        Some(spec) => Ok((cpu::parse_spec(spec).map_err(ArumError::Cpu)?, true)),
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

/// The table for `cpu`, if ARUM has one.
pub fn table(args: &CpuArgs, cpu: &CpuIdent) -> Result<Option<Table>, ArumError> {
    Ok(TableSource::new(args.event_tables.as_deref()).for_cpu(cpu)?)
}

/// Every event name given, in order.
pub fn specs(args: &RunArgs) -> Result<Vec<String>, ArumError> {
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

/// Resolves and places the requested events. `None` when no event was asked for.
pub fn plan(args: &RunArgs) -> Result<Option<Plan>, ArumError> {
    let specs = specs(args)?;
    if specs.is_empty() {
        return Ok(None);
    }
    let (cpu, given) = cpu(&args.cpu)?;
    // Parse the CPU's table only when a name needs it: software events and raw codes do not.
    let table = if specs
        .iter()
        .all(|s| arum_events::resolve::needs_no_table(s))
    {
        None
    } else {
        table(&args.cpu, &cpu)?
    };
    // CPUID only describes the counters of the CPU arum runs on, not of a --cpu one.
    let cpuid_pmu = if given { None } else { cpu.detect_pmu() };
    let plan = plan::plan(&specs, &cpu, table.as_ref(), cpuid_pmu);
    if let (Some(reason), true) = (&plan.hardware_off, args.strict) {
        return Err(ArumError::HardwareOff {
            reason: reason.clone(),
        });
    }
    Ok(Some(plan))
}
