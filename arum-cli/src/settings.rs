//! What a run measures and how, decided once from the command line before anything runs: the
//! program, each facility's settings, the report's format. Everything here is a domain type; the
//! clap types stay in `cli`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::{BackendChoice, ReportFormat, RunArgs, ScopeArg};
use crate::counters;
use crate::error::ArumError;
use crate::events;
use crate::launch::Executable;
use crate::report::model::{BackendKind, CommandInfo, LaunchHow, Scope};
use crate::report::Format;
use crate::system;
use crate::warnings::Warnings;

/// The program to run, as the report will name it.
#[derive(Debug, Clone)]
pub struct Program {
    pub argv: Vec<String>,
    pub how: LaunchHow,
    pub line: Option<String>,
}

impl Program {
    pub fn command_info(&self) -> CommandInfo {
        CommandInfo {
            argv: self.argv.clone(),
            how: self.how,
            launch: self.line.clone(),
        }
    }
}

/// arum's own set-up, timed (the report's self-timing phases 1 and 2).
#[derive(Debug, Clone, Copy, Default)]
pub struct SetupTiming {
    /// From arum's start to the end of argument parsing.
    pub phase1_us: u64,
    /// Event verification (resolution, placement).
    pub events_us: u64,
}

pub struct Settings {
    pub program: Program,
    /// The program prepared for exec before fork (the child allocates nothing).
    pub executable: Executable,
    pub output: Option<PathBuf>,
    pub format: Format,
    pub show_self_timing: bool,
    pub counters: Option<counters::Settings>,
    /// `--ambient`: the sampling interval.
    pub ambient: Option<Duration>,
    /// Set-up warnings, already printed; every run's report repeats them.
    pub warnings: Vec<String>,
    pub timing: SetupTiming,
}

impl Settings {
    /// Reads the command line; `started` is when arum started (for the self-timing).
    pub fn from_args(args: &RunArgs, started: Instant) -> Result<Settings, ArumError> {
        let program = program(args)?;
        let executable = Executable::new(&program.argv)?;
        let ambient = args
            .ambient
            .as_deref()
            .map(|s| {
                crate::ambient::parse_interval(s).map_err(|why| ArumError::BadInterval {
                    value: s.into(),
                    why,
                })
            })
            .transpose()?;
        let phase1_us = micros(started);

        let events_started = Instant::now();
        let mut warnings = Warnings::default();
        let counters = match events::plan(args)? {
            Some(plan) => {
                if let Some(reason) = &plan.hardware_off {
                    warnings.add(format!("hardware counting is off: {reason}"));
                }
                let request = counter_request(args, &mut warnings)?;
                Some(counters::Settings { plan, request })
            }
            None => None,
        };
        Ok(Settings {
            program,
            executable,
            output: args.output.clone(),
            format: args.format.into(),
            show_self_timing: args.self_timing,
            counters,
            ambient,
            warnings: warnings.into_vec(),
            timing: SetupTiming {
                phase1_us,
                events_us: micros(events_started),
            },
        })
    }
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// How the user named the program, resolved into the argument vector to execute.
pub fn program(args: &RunArgs) -> Result<Program, ArumError> {
    match (&args.launch, args.shell) {
        (Some(line), true) => Ok(Program {
            argv: vec!["/bin/sh".into(), "-c".into(), line.clone()],
            how: LaunchHow::Shell,
            line: Some(line.clone()),
        }),
        (Some(line), false) => {
            let argv = shell_words::split(line).map_err(|e| ArumError::BadLaunch {
                line: line.clone(),
                why: e.to_string(),
            })?;
            if argv.is_empty() {
                return Err(ArumError::BadLaunch {
                    line: line.clone(),
                    why: "it names no program".into(),
                });
            }
            Ok(Program {
                argv,
                how: LaunchHow::Split,
                line: Some(line.clone()),
            })
        }
        (None, _) => Ok(Program {
            argv: args.argv.clone(),
            how: LaunchHow::Argv,
            line: None,
        }),
    }
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Scope {
        match s {
            ScopeArg::App => Scope::App,
            ScopeArg::System => Scope::System,
        }
    }
}

impl From<ReportFormat> for Format {
    fn from(f: ReportFormat) -> Format {
        match f {
            ReportFormat::Text => Format::Text,
            ReportFormat::Json => Format::Json,
            ReportFormat::Csv => Format::Csv,
        }
    }
}

/// Where and how to count, from the command line.
fn counter_request(
    args: &RunArgs,
    warnings: &mut Warnings,
) -> Result<counters::Request, ArumError> {
    let online = system::cpulist::online().unwrap_or_default();
    let cpus = match &args.cpus {
        None => online,
        Some(list) => {
            let wanted = system::cpulist::parse(list).map_err(|why| ArumError::BadCpuList {
                list: list.clone(),
                why,
            })?;
            if let Some(&bad) = wanted.iter().find(|c| !online.contains(c)) {
                return Err(ArumError::CpuNotOnline {
                    cpu: bad,
                    online: online
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                });
            }
            wanted
        }
    };
    let scope: Scope = args.scope().into();
    let backend = match args.backend {
        BackendChoice::Perf => BackendKind::PerfEventOpen,
        BackendChoice::Kmod => BackendKind::Kmod,
        // The module counts whole CPUs: it serves system scope, never app scope.
        BackendChoice::Auto if scope == Scope::System && counters::kmod::usable() => {
            BackendKind::Kmod
        }
        BackendChoice::Auto => BackendKind::PerfEventOpen,
    };
    if backend == BackendKind::Kmod && scope == Scope::App {
        warnings.add(
            "the kmod back-end counts everything on the CPUs (system scope), not only the program",
        );
    }
    Ok(counters::Request {
        scope: if backend == BackendKind::Kmod {
            Scope::System
        } else {
            scope
        },
        cpus,
        no_multiplex: args.no_multiplex,
        strict: args.strict,
        backend,
        interval_ms: args.interval,
        print_intervals: args.format == ReportFormat::Text,
    })
}
