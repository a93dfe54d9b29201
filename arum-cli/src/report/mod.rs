//! The report: one model, rendered as text, JSON or CSV, written to stderr or atomically to a file.

pub mod csv;
pub mod grid;
pub mod html;
pub mod json;
pub mod model;
pub mod sink;
pub mod text;

use model::Report;

/// How the report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Csv,
}

/// What the text report shows beyond the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    pub show_self_timing: bool,
    /// Threads in each top list of the per-task section (`None`: every thread).
    pub top_threads: Option<usize>,
}

/// Renders the report in the chosen format.
pub fn render(report: &Report, format: Format, show_self_timing: bool) -> String {
    render_with(
        report,
        format,
        &TextOptions {
            show_self_timing,
            top_threads: Some(text::TOP_THREADS),
        },
    )
}

/// Renders the report in the chosen format, with the text report's options.
pub fn render_with(report: &Report, format: Format, options: &TextOptions) -> String {
    match format {
        Format::Text => text::render_with(report, options),
        Format::Json => json::render(report),
        Format::Csv => csv::render(report),
    }
}
