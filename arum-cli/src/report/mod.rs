//! The report: one model, rendered as text, JSON or CSV, written to stderr or atomically to a file.

pub mod csv;
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

/// Renders the report in the chosen format.
pub fn render(report: &Report, format: Format, show_self_timing: bool) -> String {
    match format {
        Format::Text => text::render(report, show_self_timing),
        Format::Json => json::render(report),
        Format::Csv => csv::render(report),
    }
}
