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

pub mod compare;
pub mod export;
mod hooks;
pub mod html;
pub mod merge;
pub mod parameters;
mod progress;
pub mod result;
pub mod samples;
pub mod saved;
pub mod scheduler;
pub mod settings;
pub mod suite;
pub mod summary;
pub mod text;

use std::time::Instant;

pub use settings::{SeriesRequest, SeriesSettings};

use crate::error::ArumError;
use crate::header::LaunchHow;
use crate::history::save::{SavedRun, Saving};
use crate::launch::Executable;
use crate::measure::measure_once;
use crate::report::metrics;
use crate::report::model::Report;
use crate::report::sink::{self, Sink};
use crate::request::Format;
use crate::request::RunRequest;
use crate::settings::{self as run_settings, Program, Settings};
use export::ExportFormat;
use parameters::{Assignment, Parameter};
use result::{Benchmark, NameValue, RunSet};
use samples::Samples;
use scheduler::Runner;

/// One command with one combination of parameter values.
#[derive(Debug, Clone)]
pub struct Planned {
    pub label: String,
    pub program: Program,
    pub env: Vec<(String, String)>,
    pub parameters: Assignment,
}

/// Every benchmark of the series: each command with each combination of parameters.
pub fn plan(run: &RunRequest, s: &SeriesSettings) -> Result<Vec<Planned>, ArumError> {
    let params: &[Parameter] = &s.parameters;
    let programs = run_settings::programs(&run.program)?;
    let env = run_settings::env_pairs(&run.program.env)?;
    for p in params {
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
        for assignment in parameters::combinations(params) {
            let program = substituted(program, &assignment)?;
            let label = program.label();
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
            run_settings::from_line(&parameters::substitute(line, a), how == LaunchHow::Shell)
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

/// Runs the series `run` and `s` describe; returns arum's exit status: 0, or the status of the
/// failed run that stopped it.
pub fn run(run: &RunRequest, s: &SeriesSettings, started: Instant) -> Result<i32, ArumError> {
    let planned = plan(run, s)?;
    let mut settings = Settings::from_request(run, started)?;
    // Each run's warnings are in its report; the summary lists them once.
    settings.echo_warnings = false;
    // Every destination is opened before anything runs, so a bad path stops arum early.
    let (sink, html) = crate::run::open_outputs(&settings)?;
    let export_sinks = s
        .exports
        .iter()
        .map(|(p, f)| {
            Sink::open(Some(p))
                .map(|sink| (sink, *f))
                .map_err(sink::failed(f.option()))
        })
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
        &s.limits,
    );
    progress.clear();
    // Cleanup runs whatever happened to the series.
    let cleaned = s.cleanup.as_ref().map(|cmd| hooks::run("cleanup", cmd));
    let outcome = outcome?;

    let set = run_set(
        &planned,
        outcome.runs,
        s.confidence,
        s.limits.warmup,
        outcome.stopped_early,
    );
    let rendered = match run.format {
        Format::Text => text::render(&set, run.self_timing),
        Format::Json => export::render(&set, ExportFormat::Json),
        Format::Csv => export::render(&set, ExportFormat::Csv),
    };
    if let Err(e) = sink.write_report(&rendered) {
        eprintln!("arum: {e}");
    }
    for (sink, format) in export_sinks {
        sink.write_report(&export::render(&set, format))
            .map_err(sink::failed(format.option()))?;
    }
    if let Some(html) = html {
        html.write_report(&crate::series::html::render(&set))
            .map_err(sink::failed("--html"))?;
    }
    if let Some(save) = &s.save {
        save_runs(save, &set);
    }
    if let Some(Err(e)) = cleaned {
        return Err(e);
    }
    Ok(outcome.failed_status.unwrap_or(0))
}

/// Every measured run of `set` into the history, as one batch; a series' parameters become
/// labels of the same names.
pub fn save_runs(save: &Saving, set: &RunSet) {
    let runs: Vec<SavedRun<'_>> = set
        .benchmarks
        .iter()
        .flat_map(|b| {
            b.runs.iter().map(move |r| SavedRun {
                command: &b.label,
                parameters: b
                    .parameters
                    .iter()
                    .map(|p| (p.name.clone(), p.value.clone()))
                    .collect(),
                run_index: r.index,
                exit_status: r.exit_status,
                report: &r.report,
            })
        })
        .collect();
    save.save(&runs);
}

/// The series as plain data: every benchmark's runs and statistics, and each benchmark
/// compared with the first on the headline metrics (`arum compare --all` compares the rest).
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
                &metrics::headline,
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
