//! The report: one model, rendered as text, JSON or CSV, written to stderr or atomically to a file.

pub mod csv;
pub mod html;
pub mod json;
pub mod metrics;
pub mod model;
pub mod sections;
pub mod sink;
#[cfg(test)]
pub mod testing;
pub mod text;

use model::Report;

pub use crate::request::Format;
pub use sections::TextOptions;

/// Renders the report in the chosen format.
pub fn render(report: &Report, format: Format, show_self_timing: bool) -> String {
    render_with(
        report,
        format,
        &TextOptions {
            show_self_timing,
            top_threads: Some(crate::facilities::tasks::text::TOP_THREADS),
            cpu_rows: Some(crate::render::fold::CPU_ROWS),
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
