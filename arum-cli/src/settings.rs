//! What a run measures and how, decided once from the command line before anything runs: the
//! program, each facility's settings, the report's format. Everything here is a domain type; the
//! clap types stay in `cli`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::{BackendChoice, PerTaskArg, ReportFormat, RunArgs, ScopeArg};
use crate::counters;
use crate::error::ArumError;
use crate::events;
use crate::functions;
use crate::launch::Executable;
use crate::report::model::{BackendKind, CommandInfo, LaunchHow, Scope, ThrottleMode};
use crate::report::Format;
use crate::system;
use crate::tasks;
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
    /// `--html FILE`: the report as a page too.
    pub html: Option<PathBuf>,
    pub format: Format,
    pub show_self_timing: bool,
    pub counters: Option<counters::Settings>,
    /// `--ambient`: the sampling interval.
    pub ambient: Option<Duration>,
    /// `-F/--functions`: the functions to time.
    pub functions: Option<functions::Settings>,
    /// `--per-task`: a record for every task of the tree.
    pub tasks: Option<tasks::Settings>,
    /// `--noise-probe`: the CPUs to probe (empty: all).
    pub noise_probe: Option<Vec<usize>>,
    /// `--syscalls`: the system calls to trace, and the task probes of the views.
    pub syscalls: Option<crate::syscalls::Settings>,
    /// How many threads the text report lists in each of its top lists (`None`: every one).
    pub top_threads: Option<usize>,
    /// Set-up warnings, already printed; every run's report repeats them.
    pub warnings: Vec<String>,
    /// Print warnings as they arise: the report is not the text on stderr that shows them.
    pub echo_warnings: bool,
    pub timing: SetupTiming,
}

impl Settings {
    /// Reads the command line; `started` is when arum started (for the self-timing).
    pub fn from_args(args: &RunArgs, started: Instant) -> Result<Settings, ArumError> {
        let program = program(args)?;
        let executable = Executable::with_env(&program.argv, &env_pairs(&args.series.env)?)?;
        let ambient = args.ambient;
        if args.enable_delayacct && args.per_task.is_none() {
            return Err(ArumError::Usage(
                "--enable-delayacct turns on delay accounting for --per-task records; add --per-task".into(),
            ));
        }
        let tasks = args.per_task.map(|_| tasks::Settings {
            enable_delayacct: args.enable_delayacct,
            events_counted: !args.events.is_empty() || args.events_file.is_some(),
        });
        let top_threads = match args.per_task {
            Some(PerTaskArg::All) => None,
            _ => Some(crate::report::text::TOP_THREADS),
        };
        let phase1_us = micros(started);

        let events_started = Instant::now();
        let echo_warnings = args.format != ReportFormat::Text || args.output.is_some();
        let mut warnings = Warnings::new(echo_warnings);
        let planned = events::plan(args)?;
        let functions = function_settings(args, &program)?;
        if functions.is_none() {
            for option in function_options(args) {
                warnings.add(format!(
                    "{option} has no effect without functions; name some with -F/--functions"
                ));
            }
        }
        if planned.is_none() {
            for option in event_options(args) {
                // -I and --strict also serve function timing.
                if functions.is_some() && matches!(option, "-I/--interval" | "--strict") {
                    continue;
                }
                warnings.add(format!(
                    "{option} has no effect without events; name some with -e/--events"
                ));
            }
        }
        let counters = match planned {
            Some((plan, facts)) => {
                if let Some(reason) = &plan.hardware_off {
                    // The counters section says so; JSON has counters.hardware_off_reason.
                    warnings.echo(&format!("hardware counting is off: {reason}"));
                }
                let request = counter_request(args, &mut warnings)?;
                let mut left_out = events::specs(args)?;
                for e in &plan.events {
                    if let Some(i) = left_out.iter().position(|s| *s == e.event.spec) {
                        left_out.remove(i);
                    }
                }
                Some(counters::Settings {
                    plan,
                    facts,
                    request,
                    left_out,
                })
            }
            None => None,
        };
        Ok(Settings {
            program,
            executable,
            output: args
                .output
                .as_deref()
                .map(crate::placement::expand_output)
                .transpose()?,
            html: args
                .html
                .as_deref()
                .map(crate::placement::expand_output)
                .transpose()?,
            format: args.format.into(),
            show_self_timing: args.self_timing,
            counters,
            ambient,
            functions,
            tasks,
            noise_probe: args.noise_probe.clone().map(|c| c.0),
            syscalls: syscall_settings(args)?,
            top_threads,
            warnings: warnings.into_vec(),
            echo_warnings,
            timing: SetupTiming {
                phase1_us,
                events_us: micros(events_started),
            },
        })
    }
}

/// `--syscalls` and the task probes.
fn syscall_settings(args: &RunArgs) -> Result<Option<crate::syscalls::Settings>, ArumError> {
    let Some(spec) = &args.syscalls else {
        return Ok(None);
    };
    let selection = crate::syscalls::Selection::parse(spec).map_err(ArumError::Usage)?;
    let tasks = match (&args.task_begin, &args.task_end) {
        (Some(begin), Some(end)) => Some(crate::views::TaskProbes {
            begin: begin.clone(),
            end: end.clone(),
        }),
        _ => None,
    };
    Ok(Some(crate::syscalls::Settings { selection, tasks }))
}

/// The options given that only matter when events are counted.
fn event_options(args: &RunArgs) -> Vec<&'static str> {
    [
        (args.cpus.is_some(), "-C/--cpus"),
        (args.backend != BackendChoice::Auto, "--backend"),
        (args.cpu.cpu.is_some(), "--cpu"),
        (args.cpu.event_tables.is_some(), "--event-tables"),
        (args.interval.is_some(), "-I/--interval"),
        (args.scope() != ScopeArg::App, "-a/--scope system"),
        (args.no_multiplex, "--no-multiplex"),
        (args.strict, "--strict"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect()
}

/// The options given that only matter when functions are timed.
fn function_options(args: &RunArgs) -> Vec<&'static str> {
    [
        (args.exact_counts, "--exact-counts"),
        (args.probe_budget.is_some(), "--probe-budget"),
        (args.no_throttle, "--no-throttle"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect()
}

/// `-F` and `--functions-file`, resolved in the program (bare names) and its libraries.
fn function_settings(
    args: &RunArgs,
    program: &Program,
) -> Result<Option<functions::Settings>, ArumError> {
    if args.functions.is_empty() && args.functions_file.is_none() {
        return Ok(None);
    }
    let mut policy = functions::Policy::default();
    if let Some(pct) = args.probe_budget {
        policy.budget_percent = pct;
    }
    policy.mode = if args.no_throttle {
        ThrottleMode::NoThrottle
    } else if args.exact_counts {
        ThrottleMode::ExactCounts
    } else {
        ThrottleMode::Throttle
    };
    // Bare names belong to the program; through --shell, to the first word of the line.
    let argv0 = match (&program.how, &program.line) {
        (LaunchHow::Shell, Some(line)) => shell_words::split(line)
            .ok()
            .and_then(|w| w.into_iter().find(|w| !is_assignment(w)))
            .unwrap_or_default(),
        _ => program.argv.first().cloned().unwrap_or_default(),
    };
    functions::Settings::resolve(
        &args.functions,
        args.functions_file.as_ref(),
        &argv0,
        policy,
        args.interval,
        args.strict,
    )
}

/// `NAME=value` as a first word: a shell assignment, which only a shell understands.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// How the user named the program, resolved into the argument vector to execute (the first
/// one, when several are given for a comparison).
pub fn program(args: &RunArgs) -> Result<Program, ArumError> {
    programs(args).map(|mut all| all.remove(0))
}

/// Every program named: repeated `--launch` strings, or `-- CMD1 ::: CMD2` with `--compare`.
pub fn programs(args: &RunArgs) -> Result<Vec<Program>, ArumError> {
    if args.shell && args.launch.is_empty() {
        return Err(ArumError::Usage(
            "--shell runs a --launch string through /bin/sh; give one with --launch \"...\"".into(),
        ));
    }
    if !args.launch.is_empty() {
        return args
            .launch
            .iter()
            .map(|line| from_line(line, args.shell))
            .collect();
    }
    if !args.series.compare {
        return Ok(vec![from_argv(args.argv.clone())]);
    }
    let commands: Vec<&[String]> = args.argv.split(|w| w == ":::").collect();
    if commands.iter().any(|c| c.is_empty()) {
        return Err(ArumError::Usage(
            "--compare: an empty command around `:::`; write `-- CMD1 ARGS ::: CMD2 ARGS`".into(),
        ));
    }
    Ok(commands
        .into_iter()
        .map(|c| from_argv(c.to_vec()))
        .collect())
}

fn from_argv(argv: Vec<String>) -> Program {
    Program {
        argv,
        how: LaunchHow::Argv,
        line: None,
    }
}

/// A `--launch` string: split as a shell would, or given to /bin/sh -c with `--shell`.
pub fn from_line(line: &str, shell: bool) -> Result<Program, ArumError> {
    if shell {
        return Ok(Program {
            argv: vec!["/bin/sh".into(), "-c".into(), line.to_string()],
            how: LaunchHow::Shell,
            line: Some(line.to_string()),
        });
    }
    let argv = shell_words::split(line).map_err(|e| ArumError::BadLaunch {
        line: line.to_string(),
        why: e.to_string(),
    })?;
    if argv.is_empty() {
        return Err(ArumError::BadLaunch {
            line: line.to_string(),
            why: "it names no program".into(),
        });
    }
    if is_assignment(&argv[0]) {
        return Err(ArumError::ShellAssignment {
            word: argv[0].clone(),
        });
    }
    Ok(Program {
        argv,
        how: LaunchHow::Split,
        line: Some(line.to_string()),
    })
}

/// `--env NAME=VALUE` options as (name, value) pairs.
pub fn env_pairs(given: &[String]) -> Result<Vec<(String, String)>, ArumError> {
    given
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(ArumError::Usage(format!(
                "--env {kv:?}: write NAME=VALUE (e.g. --env OMP_NUM_THREADS=2)"
            ))),
        })
        .collect()
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
