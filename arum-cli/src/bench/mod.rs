//! Repeated runs: `arum -r N`, `--repeat`, parameters, several commands compared.
//!
//! ```text
//!  plan (commands × parameter values → benchmarks, {VAR} substituted)
//!  --setup once
//!  scheduler: warm-up rounds, then rounds of every benchmark (A B A B ...):
//!      --prepare → measure_once (ARUM_RUN_INDEX and --env in the program's environment)
//!  --cleanup once
//!  summary (every metric: mean, median, σ, min, max, CI; outliers with ambient notes)
//!  comparisons (each benchmark against the first) → text / arum.runs/1 / CSV / Markdown
//! ```

pub mod args;
mod hooks;
pub mod parameters;
mod progress;
pub mod result;
pub mod scheduler;
pub mod summary;
pub mod text;

use std::path::{Path, PathBuf};
use std::time::Instant;

pub use args::SeriesArgs;

use crate::cli::{ReportFormat, RunArgs};
use crate::compare;
use crate::error::ArumError;
use crate::export::{self, ExportFormat};
use crate::launch::Executable;
use crate::measure::measure_once;
use crate::metrics;
use crate::report::model::{LaunchHow, Report};
use crate::report::sink::Sink;
use crate::samples::Samples;
use crate::settings::{self, Program, Settings};
use parameters::{Assignment, Parameter};
use result::{Benchmark, NameValue, RunSet};
use scheduler::{Limits, Runner};

/// Whether the command line asks for a series of runs rather than one run.
pub fn is_series(args: &RunArgs) -> bool {
    args.series.asks_for_a_series(args.launch.len())
}

/// One command with one combination of parameter values.
#[derive(Debug, Clone)]
pub struct Planned {
    pub label: String,
    pub program: Program,
    pub env: Vec<(String, String)>,
    pub parameters: Assignment,
}

/// Every benchmark of the command line: each command with each combination of parameters.
pub fn plan(args: &RunArgs) -> Result<Vec<Planned>, ArumError> {
    let s = &args.series;
    let params: Vec<Parameter> = parameters::from_args(
        &s.parameter_list,
        &s.parameter_scan,
        s.parameter_step_size.as_deref(),
    )?;
    let programs = settings::programs(args)?;
    let env = settings::env_pairs(&s.env)?;
    for p in &params {
        let token = format!("{{{}}}", p.name);
        let used = programs
            .iter()
            .any(|prog| prog.argv.iter().any(|w| w.contains(&token)))
            || env.iter().any(|(_, v)| v.contains(&token))
            || s.prepare.as_deref().is_some_and(|c| c.contains(&token));
        if !used {
            return Err(ArumError::Usage(format!(
                "parameter {} is not used: write {token} in the command, an --env value or --prepare",
                p.name
            )));
        }
    }
    let mut planned = Vec::new();
    for program in &programs {
        for assignment in parameters::combinations(&params) {
            let program = substituted(program, &assignment)?;
            let label = match &program.line {
                Some(line) => line.clone(),
                None => shell_words::join(&program.argv),
            };
            planned.push(Planned {
                label,
                program,
                env: env
                    .iter()
                    .map(|(k, v)| (k.clone(), parameters::substitute(v, &assignment)))
                    .collect(),
                parameters: assignment,
            });
        }
    }
    Ok(planned)
}

/// The program with `{VAR}` replaced: in each word, or in the --launch string before it is split.
fn substituted(p: &Program, a: &Assignment) -> Result<Program, ArumError> {
    match (&p.line, p.how) {
        (Some(line), how) => {
            settings::from_line(&parameters::substitute(line, a), how == LaunchHow::Shell)
        }
        (None, _) => Ok(Program {
            argv: p
                .argv
                .iter()
                .map(|w| parameters::substitute(w, a))
                .collect(),
            ..p.clone()
        }),
    }
}

/// The real runner: `--prepare`, then one measured run of the planned program.
struct Measure<'a> {
    settings: &'a mut Settings,
    planned: &'a [Planned],
    prepare: Option<&'a str>,
    progress: &'a progress::Progress,
}

impl Runner for Measure<'_> {
    fn run(&mut self, b: usize, index: i64) -> Result<Report, ArumError> {
        let p = &self.planned[b];
        if let Some(cmd) = self.prepare {
            hooks::run("prepare", &parameters::substitute(cmd, &p.parameters))?;
        }
        let mut env = p.env.clone();
        env.push(("ARUM_RUN_INDEX".into(), index.to_string()));
        self.settings.executable = Executable::with_env(&p.program.argv, &env)?;
        self.settings.program = p.program.clone();
        self.progress.starting(&p.label, index);
        let report = measure_once(self.settings);
        self.progress.finished();
        report
    }

    fn planned(&mut self, total: u64) {
        self.progress.set_total(total);
    }
}

/// Runs the series the command line describes; returns arum's exit status: 0, or the status of
/// the failed run that stopped it.
pub fn run(args: &RunArgs, started: Instant) -> Result<i32, ArumError> {
    let s = &args.series;
    let planned = plan(args)?;
    let limits = Limits::new(s.runs, s.min_runs, s.max_runs, s.warmup, s.ignore_failure)?;
    let mut settings = Settings::from_args(args, started)?;
    // Each run's warnings are in its report; the summary lists them once.
    settings.echo_warnings = false;
    // Every destination is opened before anything runs, so a bad path stops arum early.
    let sink = Sink::open(settings.output.as_deref())?;
    let exports = [
        (&s.export_json, ExportFormat::Json),
        (&s.export_csv, ExportFormat::Csv),
        (&s.export_markdown, ExportFormat::Markdown),
    ]
    .into_iter()
    .filter_map(|(path, f)| path.as_ref().map(|p| (p, f)))
    .map(|(p, f)| Ok((expanded(p)?, f)))
    .collect::<Result<Vec<(PathBuf, ExportFormat)>, ArumError>>()?;
    let html = settings
        .html
        .as_deref()
        .map(|p| Sink::open(Some(p)))
        .transpose()?;
    let export_sinks = exports
        .iter()
        .map(|(p, f)| Sink::open(Some(p)).map(|sink| (sink, *f)))
        .collect::<Result<Vec<_>, _>>()?;

    if let Some(cmd) = &s.setup {
        hooks::run("setup", cmd)?;
    }
    let progress = progress::Progress::new();
    let labels: Vec<String> = planned.iter().map(|p| p.label.clone()).collect();
    let outcome = scheduler::schedule(
        &mut Measure {
            settings: &mut settings,
            planned: &planned,
            prepare: s.prepare.as_deref(),
            progress: &progress,
        },
        &labels,
        &limits,
    );
    progress.clear();
    // Cleanup runs whatever happened to the series.
    let cleaned = s.cleanup.as_ref().map(|cmd| hooks::run("cleanup", cmd));
    let outcome = outcome?;

    let set = run_set(
        &planned,
        outcome.runs,
        s.confidence,
        s.warmup,
        outcome.stopped_early,
    );
    let rendered = match args.format {
        ReportFormat::Text => text::render(&set, args.self_timing),
        ReportFormat::Json => export::render(&set, ExportFormat::Json),
        ReportFormat::Csv => export::render(&set, ExportFormat::Csv),
    };
    if let Err(e) = sink.write(&rendered) {
        eprintln!("arum: {e}");
    }
    for (sink, format) in export_sinks {
        sink.write(&export::render(&set, format))?;
    }
    if let Some(html) = html {
        html.write(&crate::report::html::runs::render(&set))?;
    }
    if let Some(Err(e)) = cleaned {
        return Err(e);
    }
    Ok(outcome.failed_status.unwrap_or(0))
}

fn expanded(p: &Path) -> Result<PathBuf, ArumError> {
    crate::placement::expand_output(p)
}

/// The series as plain data: every benchmark's runs and statistics, and each benchmark
/// compared with the first.
pub fn run_set(
    planned: &[Planned],
    runs: Vec<Vec<result::Run>>,
    level: f64,
    warmup: u64,
    stopped_early: Option<String>,
) -> RunSet {
    let benchmarks: Vec<Benchmark> = planned
        .iter()
        .zip(runs)
        .map(|(p, runs)| {
            let (metrics, outliers) = summary::summarise(&runs, level);
            Benchmark {
                label: p.label.clone(),
                command: p.program.argv.clone(),
                parameters: pairs(&p.parameters),
                env: pairs(&p.env),
                runs,
                metrics,
                outliers,
            }
        })
        .collect();
    let samples: Vec<Samples> = benchmarks
        .iter()
        .map(|b| Samples::of(b.runs.iter().map(|r| (r.index, &r.report))))
        .collect();
    let comparisons = (1..benchmarks.len())
        .filter(|&i| samples[0].runs() > 0 && samples[i].runs() > 0)
        .map(|i| {
            compare::compare(
                (&benchmarks[0].label, &samples[0]),
                (&benchmarks[i].label, &samples[i]),
                level,
                &|name| metrics::shown(name, false),
            )
        })
        .collect();
    RunSet {
        schema: result::SCHEMA.into(),
        arum_version: crate::version::VERSION.into(),
        confidence_level: level,
        warmup_runs: warmup,
        stopped_early,
        benchmarks,
        comparisons,
    }
}

fn pairs(v: &[(String, String)]) -> Vec<NameValue> {
    v.iter()
        .map(|(name, value)| NameValue {
            name: name.clone(),
            value: value.clone(),
        })
        .collect()
}

/// Reports made up for the tests of the series, comparisons and merges.
#[cfg(test)]
pub mod testing {
    use crate::report::model::{CommandInfo, ExitInfo, LaunchHow, Metadata, Report};

    /// A report of a run of `x` that took `wall_ns` and ended with `status`.
    pub fn report(wall_ns: u64, status: i32) -> Report {
        let meta: Metadata = serde_json::from_value(serde_json::json!({
            "arum_version": "test", "host": "h", "kernel_release": "r", "kernel_version": "v",
            "arch": "x86_64",
            "cpu": {"vendor": "AuthenticAMD", "family": 25, "model": 1, "stepping": 1, "model_name": "m"},
            "online_cpus": 2, "start_time_utc": "t", "start_time_unix_ns": 0
        }))
        .expect("metadata fixture");
        let mut r = Report::new(
            meta,
            CommandInfo {
                argv: vec!["x".into()],
                how: LaunchHow::Argv,
                launch: None,
            },
            ExitInfo {
                status,
                code: Some(status),
                signal: None,
                signal_name: None,
                core_dumped: false,
            },
        );
        r.usage.wall_ns = wall_ns;
        r
    }
}
