//! `arum calibrate`: the machine's operating-system and hardware costs, measured with
//! statistics, as a table a report can be read against.
//!
//! ```text
//! run(request)
//!  ├─ settings: select (--only), read predictions (--predict), open -o, --plots, --save,
//!  │            check --dir                                                  before measuring
//!  ├─ machine: Clock::calibrate: TSC rate vs CLOCK_MONOTONIC, timer and loop overheads
//!  ├─ groups (timing, cpu, tasks, memory, network, files):                   groups/*
//!  │    Context::measure → stats::repeat (warm-up; until the median's 90% CI
//!  │    is within ±2% or the time limit) → Measurement (summary, cycles, histogram)
//!  ├─ peers (--peers): perf bench / sysbench, then ours again right after each
//!  ├─ Calibration (model.rs) + predictions
//!  └─ outputs: text | JSON, SVG plots (--plots), saved for this machine (--save)
//! ```
//!
//! The command line is the `arum` binary's: it hands over a [`Request`]. Every `unsafe` is in
//! `sys/`. Later runs of `arum` read the saved figures through [`saved::load_for_this_machine`]
//! and turn counts into estimates with [`saved::SavedCosts::estimate`].

pub mod clock;
pub mod context;
mod error;
pub mod groups;
mod leftovers;
pub mod machine;
pub mod model;
pub mod output;
pub mod peers;
pub mod predict;
mod prepare;
mod request;
pub mod saved;
mod scratch;
pub mod stats;
pub mod suite;
mod sys;
mod tiny_elf;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use error::{Error, EXIT_FAILED};
pub use request::{Format, Request};

use clock::Clock;
use context::{Context, LoadProbe};
use model::{Calibration, RunInfo, SCHEMA};
use output::destinations::Destinations;
use prepare::Plan;

/// The suite's time budget with `--quick` (the whole run stays under 30 s on 2 CPUs).
const QUICK_BUDGET: Duration = Duration::from_secs(22);

/// Runs `arum calibrate`; returns the exit status (0) or the failure.
pub fn run(request: &Request) -> Result<i32, Error> {
    if request.list {
        print!("{}", suite::methods_help());
        return Ok(0);
    }
    let plan = Plan::new(request)?;
    let destinations = Destinations::open(request)?;
    let parent = request.dir.clone().unwrap_or_else(std::env::temp_dir);
    let stale = leftovers::remove_stale(&parent);
    if !stale.is_empty() {
        eprintln!(
            "arum calibrate: removed {} scratch file(s) left by calibrations that were killed: {}",
            stale.len(),
            stale
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // A stop from here on removes what this run writes (and the temporary directory, when it
    // is the run's own).
    let scratch = leftovers::Guard::install(request.dir.as_deref())?;
    let settings = prepare::settings(request, scratch.dir());

    let started = Started::now();
    let probe = LoadProbe::start();
    let clock = machine_clock(request.quick);
    let mut ctx = Context::new(
        clock.clone(),
        settings,
        plan.selection,
        request.quick.then_some(QUICK_BUDGET),
    );
    let mut results = context::Sink::default();
    suite::run_selected(&mut ctx, &mut results);
    ctx.end_progress();
    let other_load = probe.finish();
    let peers = if request.peers {
        peers::run(
            &mut ctx,
            groups::memory::bandwidth_buffer_bytes(request.quick),
        )
    } else {
        Vec::new()
    };

    let run = started.run_info(&ctx, request.ci_percent, other_load);
    let machine = machine::describe(&clock, ctx.cpus.clone());
    let mut cal = assemble(machine, run, results, peers);
    if let Some(predictions) = &plan.predictions {
        predictions.apply(&mut cal)?;
    }
    destinations.write(&cal, request.format, request.histograms)?;
    Ok(0)
}

/// Prints a failure as arum does and returns the exit status to use.
pub fn exit_status(result: Result<i32, Error>) -> i32 {
    match result {
        Ok(status) => status,
        Err(e) => {
            eprintln!("arum: {e}");
            e.exit_code()
        }
    }
}

/// The clock every measurement reads, calibrated (shorter windows with `--quick`).
fn machine_clock(quick: bool) -> Clock {
    let window = if quick {
        Duration::from_millis(10)
    } else {
        Duration::from_millis(50)
    };
    Clock::calibrate(window, 5)
}

/// When the run started, by the monotonic clock (for its length) and by the calendar.
struct Started {
    at: Instant,
    unix_ns: u64,
}

impl Started {
    fn now() -> Started {
        Started {
            at: Instant::now(),
            unix_ns: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        }
    }

    /// How the run went, now that it is over.
    fn run_info(&self, ctx: &Context, ci_percent: f64, other_load: Option<f64>) -> RunInfo {
        RunInfo {
            arum_version: env!("CARGO_PKG_VERSION").into(),
            started_unix_ns: self.unix_ns,
            elapsed_ms: self.at.elapsed().as_millis() as u64,
            quick: ctx.quick(),
            ci_target: ci_percent / 100.0,
            time_limit_ms: ctx.settings.time_limit.as_millis() as u64,
            other_load,
        }
    }
}

/// The calibration of what was measured, with a note when other processes used enough of the
/// CPUs to inflate the figures that need a CPU to be free.
fn assemble(
    machine: model::Machine,
    run: RunInfo,
    results: context::Sink,
    peers: Vec<model::Comparison>,
) -> Calibration {
    let mut notes = results.notes;
    if let Some(l) = run.other_load.filter(|&l| l > 0.25) {
        notes.push(format!(
            "other processes used {} of the CPUs during the run: figures that need a CPU to \
             be free (switches, wake-ups, creation) may be inflated; each measurement's own \
             share is in the JSON (other_load)",
            arum_units::percent::format_fraction(l)
        ));
    }
    Calibration {
        schema: SCHEMA.into(),
        machine,
        run,
        measurements: results.measurements,
        findings: results.findings,
        peers,
        notes,
    }
}
