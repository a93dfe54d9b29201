//! `arum [OPTIONS] -- CMD`: set up → measure once → render.

use std::time::Instant;

use crate::error::ArumError;
use crate::measure::measure_once;
use crate::report::{self, sink::Sink};
use crate::request::RunRequest;
use crate::settings::Settings;

/// Runs the program under measurement and returns arum's exit status (the program's).
pub fn run(request: &RunRequest, started: Instant) -> Result<i32, ArumError> {
    let settings = Settings::from_request(request, started)?;
    // Opened before the program runs, so an unwritable destination stops arum early.
    let sink = Sink::open(settings.output.as_deref())?;
    let html = settings
        .html
        .as_deref()
        .map(|p| Sink::open(Some(p)))
        .transpose()?;
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
            eprintln!("arum: {e}");
        }
    }
    Ok(report.exit.status)
}
