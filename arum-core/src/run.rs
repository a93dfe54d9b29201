//! `arum [OPTIONS] -- CMD`: set up → measure once → render.

use std::time::Instant;

use crate::error::ArumError;
use crate::measure::measure_once;
use crate::report::sink::{self, Sink};
use crate::report::{self};
use crate::request::RunRequest;
use crate::settings::Settings;

/// Runs the program under measurement and returns arum's exit status (the program's).
pub fn run(request: &RunRequest, started: Instant) -> Result<i32, ArumError> {
    let settings = Settings::from_request(request, started)?;
    let (sink, html) = open_outputs(&settings)?;
    let report = measure_once(&settings)?;
    let options = report::TextOptions {
        show_self_timing: settings.show_self_timing,
        top_threads: settings.top_threads,
    };
    let rendered = report::render_with(&report, settings.format, &options);
    if let Err(e) = sink.write_report(&rendered) {
        // The report went to stderr instead; the program's status still passes through.
        eprintln!("arum: {e}");
    }
    if let Some(html) = html {
        if let Err(e) = html.write_report(&report::html::render(&report)) {
            eprintln!("arum: {}", sink::failed("--html")(e));
        }
    }
    Ok(report.exit.status)
}

/// The report's destination and the page's, opened before the program runs, so an unwritable
/// one stops arum before anything runs.
pub fn open_outputs(settings: &Settings) -> Result<(Sink, Option<Sink>), ArumError> {
    let sink = Sink::open(settings.output.as_deref())?;
    let html = settings
        .html
        .as_deref()
        .map(|p| Sink::open(Some(p)).map_err(sink::failed("--html")))
        .transpose()?;
    Ok((sink, html))
}
