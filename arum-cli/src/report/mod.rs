//! The report: one model, rendered as text, JSON or CSV, written to stderr or atomically to a file.

pub mod csv;
pub mod json;
pub mod model;
pub mod sink;
pub mod text;

use crate::cli::ReportFormat;
use model::Report;

/// Renders the report in the chosen format.
pub fn render(report: &Report, format: ReportFormat, show_self_timing: bool) -> String {
    match format {
        ReportFormat::Text => text::render(report, show_self_timing),
        ReportFormat::Json => json::render(report),
        ReportFormat::Csv => csv::render(report),
    }
}
