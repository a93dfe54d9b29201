//! What a run measures and how, decided once from the request before anything runs: the
//! program, each facility's settings, the report's format. Everything here is a domain type.

mod program;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arum_events::metrics::RunFacts;
use arum_events::plan::Plan;

pub use program::{env_pairs, from_line, program, programs, Program};

use crate::error::ArumError;
use crate::facilities::counters::model::{BackendKind, Scope};
use crate::facilities::counters::{self, events};
use crate::facilities::functions::model::ThrottleMode;
use crate::facilities::{functions, syscalls, tasks, views};
use crate::launch::Executable;
use crate::request::Format;
use crate::request::{BackendChoice, PerTask, RunRequest};
use crate::system;
use crate::warnings::Warnings;

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
    /// Sample the tree's memory for its peak (off with `--no-memory-sampling`).
    pub memory_sampling: bool,
    /// `arum suite`: the file its client copies append their counts to.
    pub client_counts: Option<PathBuf>,
    /// `--noise-probe`: the CPUs to probe (empty: all).
    pub noise_probe: Option<Vec<usize>>,
    /// `--syscalls`: the system calls to trace, and the task probes of the views.
    pub syscalls: Option<crate::facilities::syscalls::Settings>,
    /// How many threads the text report lists in each of its top lists (`None`: every one).
    pub top_threads: Option<usize>,
    /// Beyond how many CPUs the text report folds per-CPU rows (`None`: never, `--per-cpu`).
    pub cpu_rows: Option<usize>,
    /// Set-up warnings, already printed; every run's report repeats them.
    pub warnings: Vec<String>,
    /// Print warnings as they arise: the report is not the text on stderr that shows them.
    pub echo_warnings: bool,
    pub timing: SetupTiming,
}

impl Settings {
    /// Decides everything from `request`; `started` is when arum started (for the self-timing).
    pub fn from_request(request: &RunRequest, started: Instant) -> Result<Settings, ArumError> {
        let r = request;
        let program = program(&r.program)?;
        let executable = Executable::with_env(&program.argv, &env_pairs(&r.program.env)?)?;
        let (tasks, top_threads) = task_settings(r)?;
        let phase1_us = micros(started);

        let events_started = Instant::now();
        let echo_warnings = r.format != Format::Text || r.output.is_some();
        let mut warnings = Warnings::new(echo_warnings);
        let planned = events::plan(&r.events, r.strict)?;
        let mut functions = function_settings(r, &program)?;
        let mut syscalls = syscall_settings(r, functions.as_ref())?;
        let functions_asked = functions.is_some();
        if let Some(why) = beyond_the_user(&executable, &program) {
            let probed = functions.is_some() || syscalls.is_some();
            if probed && r.strict {
                return Err(ArumError::Functions(format!("{why} (--strict)")));
            }
            if functions.take().is_some() | syscalls.take().is_some() {
                warnings.add(format!("{why}: function timing and system calls are off"));
            } else {
                warnings.add(why);
            }
        }
        check_event_tables(r)?;
        warn_of_unused_options(r, planned.is_some(), functions_asked, &mut warnings);
        let counters = match planned {
            Some(planned) => Some(counter_settings(r, planned, &mut warnings)?),
            None => None,
        };
        let expand = |p: &Option<PathBuf>| {
            p.as_deref()
                .map(crate::placement::expand_output)
                .transpose()
        };
        Ok(Settings {
            program,
            executable,
            output: expand(&r.output)?,
            html: expand(&r.html)?,
            format: r.format,
            show_self_timing: r.self_timing,
            counters,
            ambient: r.ambient,
            functions,
            tasks,
            memory_sampling: !r.no_memory_sampling,
            client_counts: r.client_counts.clone(),
            noise_probe: r.noise_probe.clone(),
            syscalls,
            top_threads,
            cpu_rows: (!r.events.per_cpu).then_some(crate::render::fold::CPU_ROWS),
            warnings: warnings.into_vec(),
            echo_warnings,
            timing: SetupTiming {
                phase1_us,
                events_us: micros(events_started),
            },
        })
    }
}

/// Why the program is measured only as perf would let the user measure it: a program that raises
/// its privilege, run by arum for a user who is not root (see `system::setid`).
fn beyond_the_user(executable: &Executable, program: &Program) -> Option<String> {
    if rustix::process::getuid().is_root() {
        return None;
    }
    let how = crate::system::setid::raises_privilege(&executable.resolved()?)?;
    Some(format!(
        "{} is {how}: the kernel stops counting it at its exec, as it does perf stat's counters, \
         and arum does not probe it for a user who is not root (run arum as root to measure it)",
        program.argv.first().map_or("the program", String::as_str)
    ))
}

/// `--per-task` and `--enable-delayacct`, and the threads in each top list of its text.
fn task_settings(r: &RunRequest) -> Result<(Option<tasks::Settings>, Option<usize>), ArumError> {
    if r.enable_delayacct && r.per_task.is_none() {
        return Err(ArumError::Usage(
            "--enable-delayacct turns on delay accounting for --per-task records; add --per-task"
                .into(),
        ));
    }
    // A sysctl is root's to change: arum holding capabilities for another user only measures.
    if r.enable_delayacct
        && !rustix::process::getuid().is_root()
        && crate::system::delayacct::is_on() == Some(false)
    {
        return Err(ArumError::Usage(
            "--enable-delayacct changes the sysctl kernel.task_delayacct, which arum does only \
             for root: run arum as root, or `sudo sysctl kernel.task_delayacct=1` first"
                .into(),
        ));
    }
    let tasks = r.per_task.map(|_| tasks::Settings {
        enable_delayacct: r.enable_delayacct,
        events_counted: !r.events.events.is_empty() || r.events.events_file.is_some(),
        engine: r.probe_engine,
    });
    let top_threads = match r.per_task {
        Some(PerTask::All) => None,
        _ => Some(tasks::text::TOP_THREADS),
    };
    Ok((tasks, top_threads))
}

/// A warning for each option given that does nothing without the events or functions it
/// serves.
fn warn_of_unused_options(r: &RunRequest, events: bool, functions: bool, warnings: &mut Warnings) {
    if !functions {
        for option in function_options(r) {
            warnings.add(format!(
                "{option} has no effect without functions; name some with -F/--functions"
            ));
        }
    }
    if !events {
        for option in event_options(r) {
            // -I and --strict also serve function timing.
            if functions && matches!(option, "-I/--interval" | "--strict") {
                continue;
            }
            warnings.add(format!(
                "{option} has no effect without events; name some with -e/--events"
            ));
        }
    }
}

/// The counters' settings from the events' plan: how to count, and the events left out of it.
fn counter_settings(
    r: &RunRequest,
    (plan, facts): (Plan, RunFacts),
    warnings: &mut Warnings,
) -> Result<counters::Settings, ArumError> {
    if let Some(reason) = &plan.hardware_off {
        // The counters section says so; JSON has counters.hardware_off_reason.
        warnings.echo(&format!("hardware counting is off: {reason}"));
    }
    let request = counter_request(r, warnings)?;
    let mut left_out = events::specs(&r.events)?;
    for e in &plan.events {
        if let Some(i) = left_out.iter().position(|s| *s == e.event.spec) {
            left_out.remove(i);
        }
    }
    Ok(counters::Settings {
        plan,
        facts,
        request,
        left_out,
    })
}

/// `--syscalls` and the task probes.
/// `functions`: the functions timed (their return probes make calls of arum's own, and they may
/// delimit tasks).
fn syscall_settings(
    r: &RunRequest,
    functions: Option<&functions::Settings>,
) -> Result<Option<syscalls::Settings>, ArumError> {
    let Some(spec) = &r.syscalls.syscalls else {
        return Ok(None);
    };
    let selection = syscalls::Selection::parse(spec).map_err(ArumError::Usage)?;
    let tasks = match (&r.syscalls.task_begin, &r.syscalls.task_end) {
        (Some(begin), Some(end)) => {
            check_task_probe("--task-begin", begin, &selection, functions)?;
            check_task_probe("--task-end", end, &selection, functions)?;
            Some(views::TaskProbes {
                begin: begin.clone(),
                end: end.clone(),
            })
        }
        _ => None,
    };
    Ok(Some(syscalls::Settings {
        selection,
        views: r.syscalls.views || tasks.is_some(),
        tasks,
        engine: r.probe_engine,
        uretprobes: functions.is_some(),
    }))
}

/// A task probe names a system call the run traces or a function it times: any other name
/// would delimit no task, and the report would say 0 tasks without saying why.
fn check_task_probe(
    option: &str,
    name: &str,
    selection: &syscalls::Selection,
    functions: Option<&functions::Settings>,
) -> Result<(), ArumError> {
    if let Ok(call) = name.parse::<::syscalls::Sysno>() {
        let traced = selection
            .numbers
            .as_ref()
            .is_none_or(|n| n.contains(&(call.id() as u64)));
        return match traced {
            true => Ok(()),
            false => Err(ArumError::Usage(format!(
                "{option} {name}: the call is not among those traced (--syscalls={}); add it to the list",
                selection.asked.join(",")
            ))),
        };
    }
    if functions.is_some_and(|f| f.targets.iter().any(|t| t.name == name)) {
        return Ok(());
    }
    Err(ArumError::Usage(format!(
        "{option} {name:?}: neither a system call nor a function timed with -F; give a call (accept4, openat, ...) or add -F {name}"
    )))
}

/// `--event-tables` names a readable directory, checked whether or not the events asked for
/// need a table (a generic event reads none, and the mistake would pass unseen).
fn check_event_tables(r: &RunRequest) -> Result<(), ArumError> {
    let Some(dir) = &r.events.cpu.event_tables else {
        return Ok(());
    };
    std::fs::read_dir(dir).map(drop).map_err(|e| {
        ArumError::Usage(format!(
            "--event-tables {}: not a readable directory ({e}); give the directory of the event-table TOML files",
            dir.display()
        ))
    })
}

/// The options given that only matter when events are counted.
fn event_options(r: &RunRequest) -> Vec<&'static str> {
    let e = &r.events;
    [
        (e.cpus.is_some(), "-C/--cpus"),
        (e.backend != BackendChoice::Auto, "--backend"),
        (e.cpu.cpu.is_some(), "--cpu"),
        (e.cpu.event_tables.is_some(), "--event-tables"),
        (e.interval_ms.is_some(), "-I/--interval"),
        (e.scope != Scope::App, "-a/--scope system"),
        (e.no_multiplex, "--no-multiplex"),
        (r.strict, "--strict"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect()
}

/// The options given that only matter when functions are timed.
fn function_options(r: &RunRequest) -> Vec<&'static str> {
    let f = &r.functions;
    [
        (f.exact_counts, "--exact-counts"),
        (f.probe_budget.is_some(), "--probe-budget"),
        (f.no_throttle, "--no-throttle"),
    ]
    .into_iter()
    .filter_map(|(given, name)| given.then_some(name))
    .collect()
}

/// `-F` and `--functions-file`, resolved in the program (bare names) and its libraries.
fn function_settings(
    r: &RunRequest,
    program: &Program,
) -> Result<Option<functions::Settings>, ArumError> {
    let f = &r.functions;
    if f.functions.is_empty() && f.functions_file.is_none() {
        return Ok(None);
    }
    let mut policy = functions::Policy::default();
    if let Some(pct) = f.probe_budget {
        policy.budget_percent = pct;
    }
    policy.mode = if f.no_throttle {
        ThrottleMode::NoThrottle
    } else if f.exact_counts {
        ThrottleMode::ExactCounts
    } else {
        ThrottleMode::Throttle
    };
    functions::Settings::resolve(
        &f.functions,
        f.functions_file.as_ref(),
        &program.first_word(),
        policy,
        r.events.interval_ms,
        r.strict,
        r.probe_engine,
    )
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// Where and how to count, from the command line.
fn counter_request(
    r: &RunRequest,
    warnings: &mut Warnings,
) -> Result<counters::Request, ArumError> {
    let e = &r.events;
    let online = system::cpulist::online().unwrap_or_default();
    let cpus = match &e.cpus {
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
    let scope = e.scope;
    let backend = match e.backend {
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
    let scope = if backend == BackendKind::Kmod {
        Scope::System
    } else {
        scope
    };
    let asked = if e.totals {
        Some(counters::model::Breakdown::Totals)
    } else if e.per_cpu || e.cpus.is_some() {
        Some(counters::model::Breakdown::PerCpu)
    } else {
        None
    };
    if e.totals && scope == Scope::System {
        warnings.add("--totals counts the program: whole CPUs (system scope) are counted per CPU");
    }
    let breakdown = counters::breakdown(scope, &cpus, asked);
    Ok(counters::Request {
        scope,
        cpus,
        breakdown,
        no_multiplex: e.no_multiplex,
        strict: r.strict,
        backend,
        interval_ms: e.interval_ms,
        print_intervals: r.format == Format::Text,
    })
}
