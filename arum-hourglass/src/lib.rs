//! `arum hourglass`: a synthetic real-time application that maps when each of its threads runs
//! and infers, from the gaps in that map, scheduling behaviour the kernel does not report:
//! context-switch cost, interrupt activity and the clock tick, dispatch latency, deadline misses,
//! the CPU share each priority gets, and the cache cost of a switch. After Regehr's Hourglass.
//!
//! One run, in order:
//! `request` (what is asked, as plain data) → `replay` (its per-thread directives, in order, into
//! an `experiment`: the threads as plain data) → `threads` (calibrate the TSC, lock memory, start
//! every thread together; each runs its `models` loop around the `gap` detector, recording into
//! the `trace`, with its `priority` and `timer`) → `analysis` (one inference per module) →
//! `output` (text, JSON, SVG), written through `arum_sink`. `switch_cost` repeats runs for the
//! paper's Figure 5 method. `noise` is the probe a normal `arum` run places beside its program.

pub mod analysis;
pub mod clock;
pub mod error;
pub mod experiment;
pub mod gap;
pub mod idle;
pub mod kernel;
pub mod models;
pub mod noise;
pub mod output;
pub mod priority;
pub mod replay;
pub mod request;
pub mod switch_cost;
pub mod threads;
pub mod timer;
pub mod trace;

pub use error::Error;
pub use noise::{NoiseProbe, NoiseReport};
pub use request::{
    Directive, Format, Outputs, Request, RunParameters, SvgWindow, SwitchCostParameters,
};

use arum_sink::Sink;

/// Runs `arum hourglass` and writes its output; returns the exit status (0). Every destination
/// is opened before anything is measured, so a path that cannot be written stops the command
/// at once rather than after the run; each is written when the run is over.
pub fn run(request: &Request) -> Result<i32, Error> {
    let out = &request.outputs;
    if let Some(cost) = &request.switch_cost {
        let plan = cost.plan(&request.run)?;
        let sink = Sink::open_or_stdout(out.path.as_deref())?;
        let results = switch_cost::run(&plan, |_, _| {})?;
        let text = match out.format {
            Format::Text => output::text::switch_cost(&plan, &results),
            Format::Json => output::json::switch_cost(&plan, &results),
        };
        sink.write_report(&text)?;
        return Ok(0);
    }
    let exp = request.run.experiment()?;
    if let Some(window) = out.svg.as_ref().filter(|w| w.from >= exp.duration) {
        return Err(Error::Options(format!(
            "--svg-from {}: the run lasts {} (-d), so the window would be empty; start it \
             before the end",
            arum_units::duration::format_ns(window.from.as_nanos() as f64),
            arum_units::duration::format_ns(exp.duration.as_nanos() as f64)
        )));
    }
    let sink = Sink::open_or_stdout(out.path.as_deref())?;
    let svg = match &out.svg {
        Some(window) => Some((Sink::open(Some(&window.path))?, window)),
        None => None,
    };
    let run = threads::run(&exp)?;
    let analysis = analysis::analyse(&exp, &run);
    let text = match out.format {
        Format::Text => output::text::render(
            &exp,
            &run,
            &analysis,
            output::text::Extras {
                trace: out.trace,
                raw: out.raw,
            },
        ),
        Format::Json => output::json::render(&exp, &run, &analysis),
    };
    if let Some((svg_sink, window)) = svg {
        let drawn = output::svg::render(
            &exp,
            &run,
            window.from.as_secs_f64(),
            window.span.as_secs_f64().max(1e-6),
        )
        .map_err(Error::Draw)?;
        svg_sink.write(drawn.as_bytes())?;
    }
    sink.write_report(&text)?;
    Ok(0)
}

/// [`run`], with a failure printed as one line on stderr: the exit status either way (the
/// `arum` binary's entry point for the subcommand).
pub fn exit_status(request: &Request) -> i32 {
    match run(request) {
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
