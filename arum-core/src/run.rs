//! `arum [OPTIONS] -- CMD`: set up → measure once → render.

use std::ops::Range;
use std::time::Instant;

use crate::error::ArumError;
use crate::header::SelfTiming;
use crate::history::save::{SavedRun, Saving};
use crate::measure::measure_once;
use crate::report::sink::{self, Sink};
use crate::report::{self};
use crate::request::{Format, RunRequest};
use crate::settings::Settings;

/// Runs the program under measurement and returns arum's exit status (the program's); with
/// `save`, keeps the run in the history once its report is written.
pub fn run(
    request: &RunRequest,
    started: Instant,
    save: Option<&Saving>,
) -> Result<i32, ArumError> {
    let settings = Settings::from_request(request, started)?;
    let (sink, html) = open_outputs(&settings)?;
    let mut report = measure_once(&settings)?;
    // Post-processing phase 3: the page, then the report, which holds the phase's time up to
    // its own last write (see `Sink::write_report_measured`).
    let post3 = Instant::now();
    if let Some(html) = html {
        if let Err(e) = html.write_report(&report::html::render(&report)) {
            eprintln!("arum: {}", sink::failed("--html")(e));
        }
    }
    let options = report::TextOptions {
        show_self_timing: settings.show_self_timing,
        top_threads: settings.top_threads,
        cpu_rows: settings.cpu_rows,
    };
    report.self_timing.post_phase3_us = Some(SelfTiming::PHASE3_PLACEHOLDER);
    let rendered = report::render_with(&report, settings.format, &options);
    let written = match phase3_slot(&rendered, settings.format) {
        Some(slot) => {
            sink.write_report_measured(&rendered, slot, || post3.elapsed().as_micros().to_string())
        }
        None => sink.write_report(&rendered),
    };
    if let Err(e) = written {
        // The report went to stderr instead; the program's status still passes through.
        eprintln!("arum: {e}");
    }
    if let Some(save) = save {
        save.save(&[SavedRun {
            command: &settings.program.label(),
            parameters: Vec::new(),
            run_index: 0,
            exit_status: report.exit.status,
            report: &report,
        }]);
    }
    Ok(report.exit.status)
}

/// Where phase 3's placeholder is in the rendered report, found after its label (the JSON key,
/// the text row); none where the report does not show it.
fn phase3_slot(rendered: &str, format: Format) -> Option<Range<usize>> {
    let label = match format {
        Format::Json => "\"post_phase3_us\":",
        Format::Text => report::text::PHASE3_LABEL,
        Format::Csv => return None,
    };
    let placeholder = SelfTiming::PHASE3_PLACEHOLDER.to_string();
    let after = rendered.rfind(label)? + label.len();
    let start = after + rendered[after..].find(&placeholder)?;
    Some(start..start + placeholder.len())
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
