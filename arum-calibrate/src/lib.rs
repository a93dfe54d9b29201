//! `arum calibrate`: the machine's operating-system and hardware costs, measured with
//! statistics, as a table a report can be read against.
//!
//! ```text
//! run(args)
//!  ├─ select (--only), read predictions (--predict), check -o/--plots/--dir      before measuring
//!  ├─ Clock::calibrate: TSC rate vs CLOCK_MONOTONIC, timer and loop overheads
//!  ├─ for each group (timing, cpu, tasks, memory, network, files):          groups/*
//!  │    Context::measure → stats::repeat (warm-up; until the median's 90% CI
//!  │    is within ±2% or the time limit) → Measurement (summary, cycles, histogram)
//!  ├─ peers (--peers): perf bench / sysbench, then ours again right after each
//!  ├─ Calibration (model.rs) + predictions
//!  └─ output: text | JSON, SVG plots (--plots), saved for this machine (--save)
//! ```
//!
//! Every `unsafe` is in `sys/`. Later runs of `arum` read the saved figures through
//! [`saved::load_for_this_machine`] and turn counts into estimates with
//! [`saved::SavedCosts::estimate`].

mod args;
pub mod clock;
mod error;
pub mod groups;
pub mod machine;
pub mod model;
pub mod output;
pub mod peers;
pub mod predict;
pub mod saved;
mod scratch;
pub mod stats;
pub mod suite;
mod sys;
mod tiny_elf;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use args::{Args, Format};
pub use error::{Error, EXIT_FAILED};

use clock::Clock;
use model::{Calibration, RunInfo, SCHEMA};
use suite::{Context, LoadProbe, Selection, Settings, Sink};

/// The suite's time budget with `--quick` (the whole run stays under 30 s on 2 CPUs).
const QUICK_BUDGET: Duration = Duration::from_secs(22);

/// Runs `arum calibrate`; returns the exit status (0) or the failure.
pub fn run(args: &Args) -> Result<i32, Error> {
    if args.list {
        print!("{}", suite::methods_help());
        return Ok(0);
    }
    if !(args.ci > 0.0 && args.ci <= 50.0) {
        return Err(Error::Option(format!(
            "--ci {}: the target must be between 0 and 50 percent (e.g. --ci 2)",
            args.ci
        )));
    }
    let mut selection = Selection::parse(&args.only).map_err(Error::Option)?;
    // Context switches are round trips with the pipe cost subtracted.
    if [
        "tasks.switch.process.same_cpu",
        "tasks.switch.process.cross_cpu",
        "tasks.switch.thread.same_cpu",
        "tasks.switch.thread.cross_cpu",
    ]
    .iter()
    .any(|n| selection.contains(n))
    {
        selection.add("tasks.pipe");
    }
    let specs = match &args.predict {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| Error::PredictRead {
                path: path.clone(),
                source,
            })?;
            let specs = predict::parse(&text)
                .and_then(|s| predict::validate(&s).map(|()| s))
                .map_err(|why| Error::Predict {
                    path: path.clone(),
                    why,
                })?;
            Some((path.clone(), specs))
        }
        None => None,
    };
    // Destinations are checked before minutes of measuring, not after.
    let output = args
        .output
        .as_ref()
        .map(|p| prepare_output(p))
        .transpose()?;
    if let Some(dir) = &args.plots {
        std::fs::create_dir_all(dir).map_err(|e| Error::Plots {
            path: dir.clone(),
            why: e.to_string(),
        })?;
    }
    let temp;
    let dir = match &args.dir {
        Some(d) => {
            check_dir(d)?;
            d.clone()
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("arum-calibrate-")
                .tempdir()
                .map_err(Error::TempDir)?;
            temp.path().to_path_buf()
        }
    };

    let quick = args.quick;
    let settings = Settings {
        quick,
        ci_target: args.ci / 100.0,
        time_limit: args.time_limit.map(Into::into).unwrap_or(if quick {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(1)
        }),
        warmup: if quick {
            Duration::from_millis(20)
        } else {
            Duration::from_millis(100)
        },
        dir,
        file_max: args
            .file_max
            .unwrap_or(if quick { 64 << 20 } else { 1 << 30 }),
        netem: args.netem.map(Into::into),
    };

    let started = Instant::now();
    let started_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let probe = LoadProbe::start();
    let clock = if quick {
        Clock::calibrate(Duration::from_millis(10), 5)
    } else {
        Clock::calibrate(Duration::from_millis(50), 5)
    };
    let time_limit_ms = settings.time_limit.as_millis() as u64;
    let mut ctx = Context::new(
        clock.clone(),
        settings,
        selection.clone(),
        quick.then_some(QUICK_BUDGET),
    );
    let mut sink = Sink::default();
    for g in suite::groups() {
        if g.entries.iter().any(|e| selection.contains(e.name)) {
            (g.run)(&mut ctx, &mut sink);
        }
    }
    ctx.end_progress();
    let other_load = probe.finish();
    let peers = if args.peers {
        peers::run(&mut ctx, groups::memory::bandwidth_buffer_bytes(quick))
    } else {
        Vec::new()
    };

    let mut notes = sink.notes;
    if let Some(l) = other_load.filter(|&l| l > 0.25) {
        notes.push(format!(
            "other processes used {:.0}% of the CPUs during the run: figures that need a CPU to \
             be free (switches, wake-ups, creation) may be inflated; each measurement's own \
             share is in the JSON (other_load)",
            l * 100.0
        ));
    }
    let mut cal = Calibration {
        schema: SCHEMA.into(),
        machine: machine::describe(&clock, ctx.cpus.clone()),
        run: RunInfo {
            arum_version: env!("CARGO_PKG_VERSION").into(),
            started_unix_ns,
            elapsed_ms: started.elapsed().as_millis() as u64,
            quick,
            ci_target: args.ci / 100.0,
            time_limit_ms,
            other_load,
        },
        measurements: sink.measurements,
        findings: sink.findings,
        peers,
        notes,
    };
    if let Some((path, specs)) = &specs {
        let extra = predict::apply(&mut cal, specs).map_err(|why| Error::Predict {
            path: path.clone(),
            why,
        })?;
        cal.notes.extend(extra);
    }

    let text = match args.format {
        Format::Text => output::text::render(&cal, args.histograms),
        Format::Json => output::json::render(&cal),
    };
    match output {
        Some((path, mut tmp)) => {
            let r = tmp.write_all(text.as_bytes()).and_then(|()| tmp.flush());
            r.map_err(|e| Error::Output {
                path: path.clone(),
                why: e.to_string(),
            })?;
            tmp.persist(&path).map_err(|e| Error::Output {
                path: path.clone(),
                why: e.error.to_string(),
            })?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (| head) is not an error of ours.
            let _ = out.write_all(text.as_bytes());
        }
    }
    if let Some(dir) = &args.plots {
        let written = output::svg::write_all(dir, &cal).map_err(|why| Error::Plots {
            path: dir.clone(),
            why,
        })?;
        eprintln!(
            "arum calibrate: {} plots in {}",
            written.len(),
            dir.display()
        );
    }
    if args.save {
        let path = saved::save(&cal).map_err(Error::Save)?;
        eprintln!("arum calibrate: saved to {}", path.display());
    }
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

/// A temporary file beside `path`, to be renamed over it once the report is written.
fn prepare_output(path: &Path) -> Result<(PathBuf, tempfile::NamedTempFile), Error> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let path = path.to_path_buf();
    let tmp = tempfile::Builder::new()
        .prefix(".arum-calibrate-")
        .tempfile_in(&parent)
        .map_err(|e| Error::Output {
            path: path.clone(),
            why: e.to_string(),
        })?;
    Ok((path, tmp))
}

fn check_dir(d: &std::path::Path) -> Result<(), Error> {
    let err = |why: String| Error::Dir {
        path: d.to_path_buf(),
        why,
    };
    let meta = std::fs::metadata(d).map_err(|e| err(e.to_string()))?;
    if !meta.is_dir() {
        return Err(err("not a directory".into()));
    }
    tempfile::tempfile_in(d).map_err(|e| err(format!("not writable ({e})")))?;
    Ok(())
}
