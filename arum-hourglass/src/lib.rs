//! `arum hourglass`: a synthetic real-time application that maps when each of its threads runs
//! and infers, from the gaps in that map, scheduling behaviour the kernel does not report:
//! context-switch cost, interrupt activity and the clock tick, dispatch latency, deadline misses,
//! the CPU share each priority gets, and the cache cost of a switch. After Regehr's Hourglass.
//!
//! One run, in order:
//! `args` (the command line) → `experiment` (the threads as plain data) → `threads` (calibrate
//! the TSC, lock memory, start every thread together; each runs its `models` loop around the
//! `gap` detector, recording into the `trace`, with its `priority` and `timer`) → `analysis`
//! (one inference per module) → `output` (text, JSON, SVG). `switch_cost` repeats runs for the
//! paper's Figure 5 method. `noise` is the probe a normal `arum` run places beside its program.

pub mod analysis;
pub mod args;
pub mod clock;
pub mod error;
pub mod experiment;
pub mod gap;
pub mod kernel;
pub mod models;
pub mod noise;
pub mod output;
pub mod priority;
pub mod span;
pub mod switch_cost;
pub mod threads;
pub mod timer;
pub mod trace;

pub use args::Args;
pub use error::Error;
pub use noise::{NoiseProbe, NoiseReport};

use args::Format;

/// Runs `arum hourglass` and writes its output; returns the exit status (0).
pub fn run(args: &Args) -> Result<i32, Error> {
    if !args.switch_cost.is_empty() {
        let plan = args.switch_cost_plan()?;
        let results = switch_cost::run(&plan, |_, _| {})?;
        let text = match args.format {
            Format::Text => output::text::switch_cost(&plan, &results),
            Format::Json => output::json::switch_cost(&plan, &results),
        };
        output::emit(&text, args.output.as_deref())?;
        return Ok(0);
    }
    let exp = args.experiment()?;
    let run = threads::run(&exp)?;
    let analysis = analysis::analyse(&exp, &run);
    let text = match args.format {
        Format::Text => output::text::render(
            &exp,
            &run,
            &analysis,
            output::text::Extras {
                trace: args.trace,
                raw: args.raw,
            },
        ),
        Format::Json => output::json::render(&exp, &run, &analysis),
    };
    if let Some(path) = &args.svg {
        let svg = output::svg::render(
            &exp,
            &run,
            args.svg_from.as_secs_f64(),
            args.svg_span.as_secs_f64().max(1e-6),
        );
        output::write_atomically(path, svg.as_bytes())?;
    }
    output::emit(&text, args.output.as_deref())?;
    Ok(0)
}

/// [`run`], with a failure printed as one line on stderr: the exit status either way (the
/// `arum` binary's entry point for the subcommand).
pub fn exit_status(args: &Args) -> i32 {
    match run(args) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("arum hourglass: {e}");
            e.exit_code()
        }
    }
}

/// Tests that measure time on this machine take turns: run side by side, each would be another's
/// noise.
#[cfg(test)]
pub(crate) fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}
