//! Exports of a series (`RunSet`), one file per format; none knows how the runs were measured.
//! `--export-json` (schema arum.runs/1: every run's full report and the statistics),
//! `--export-csv` (one row per command and metric), `--export-markdown` (tables).

pub mod csv;
pub mod json;
pub mod markdown;

use crate::series::result::RunSet;

/// What a series can be written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Json,
    Csv,
    Markdown,
}

impl ExportFormat {
    /// The option that asks for an export in this format.
    pub fn option(self) -> &'static str {
        match self {
            ExportFormat::Json => "--export-json",
            ExportFormat::Csv => "--export-csv",
            ExportFormat::Markdown => "--export-markdown",
        }
    }
}

pub fn render(set: &RunSet, format: ExportFormat) -> String {
    match format {
        ExportFormat::Json => json::render(set),
        ExportFormat::Csv => csv::render(set),
        ExportFormat::Markdown => markdown::render(set),
    }
}
