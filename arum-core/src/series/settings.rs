//! What a series of runs asks for (`-r`, `--repeat`, parameters, hooks, exports), as the user
//! wrote it, and the series decided from it once. `arum suite` builds [`SeriesSettings`]
//! directly.

use std::path::PathBuf;

use crate::error::ArumError;
use crate::history::save::{SaveRequest, Saving};
use crate::request::ProgramRequest;
use crate::series::export::ExportFormat;
use crate::series::parameters::{self, Parameter};
use crate::series::scheduler::Limits;

/// The confidence level of intervals and tests when none is given (the original study's).
pub const DEFAULT_CONFIDENCE: f64 = arum_stats::DEFAULT_LEVEL;

/// The options of repeated runs and comparisons, unresolved.
#[derive(Debug, Clone)]
pub struct SeriesRequest {
    pub runs: Option<u64>,
    pub repeat: bool,
    pub warmup: u64,
    pub min_runs: Option<u64>,
    pub max_runs: Option<u64>,
    pub prepare: Option<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    /// `-L`: VAR VALUES pairs.
    pub parameter_list: Vec<String>,
    /// `-P`: VAR MIN MAX triples.
    pub parameter_scan: Vec<String>,
    pub parameter_step_size: Option<String>,
    pub ignore_failure: bool,
    pub export_json: Option<PathBuf>,
    pub export_csv: Option<PathBuf>,
    pub export_markdown: Option<PathBuf>,
    /// Confidence level of intervals and tests, a fraction.
    pub confidence: f64,
    /// `--save`, `--label`, `--commit`: keep the runs in the history.
    pub save: SaveRequest,
}

impl Default for SeriesRequest {
    fn default() -> Self {
        SeriesRequest {
            runs: None,
            repeat: false,
            warmup: 0,
            min_runs: None,
            max_runs: None,
            prepare: None,
            setup: None,
            cleanup: None,
            parameter_list: Vec::new(),
            parameter_scan: Vec::new(),
            parameter_step_size: None,
            ignore_failure: false,
            export_json: None,
            export_csv: None,
            export_markdown: None,
            confidence: DEFAULT_CONFIDENCE,
            save: SaveRequest::default(),
        }
    }
}

impl SeriesRequest {
    /// Whether these options, with the program named, ask for a series of runs rather than one.
    pub fn asks_for_a_series(&self, program: &ProgramRequest) -> bool {
        self.runs.is_some()
            || self.repeat
            || self.warmup > 0
            || self.min_runs.is_some()
            || self.max_runs.is_some()
            || self.prepare.is_some()
            || self.setup.is_some()
            || self.cleanup.is_some()
            || !self.parameter_list.is_empty()
            || !self.parameter_scan.is_empty()
            || self.ignore_failure
            || self.export_json.is_some()
            || self.export_csv.is_some()
            || self.export_markdown.is_some()
            || program.compare
            || program.launch.len() > 1
    }
}

/// A series, decided: how many runs, the parameters' values, the hooks and the exports.
#[derive(Debug, Clone)]
pub struct SeriesSettings {
    pub limits: Limits,
    pub parameters: Vec<Parameter>,
    /// Run before every run (`{VAR}` substituted), once before the first, once after the last.
    pub prepare: Option<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub exports: Vec<(PathBuf, ExportFormat)>,
    pub confidence: f64,
    /// Where the runs are saved, if they are.
    pub save: Option<Saving>,
}

impl SeriesSettings {
    pub fn from_request(r: &SeriesRequest) -> Result<SeriesSettings, ArumError> {
        let exports = [
            (&r.export_json, ExportFormat::Json),
            (&r.export_csv, ExportFormat::Csv),
            (&r.export_markdown, ExportFormat::Markdown),
        ]
        .into_iter()
        .filter_map(|(path, f)| path.as_ref().map(|p| (p, f)))
        .map(|(p, f)| Ok((crate::placement::expand_output(p)?, f)))
        .collect::<Result<Vec<_>, ArumError>>()?;
        Ok(SeriesSettings {
            limits: Limits::new(r.runs, r.min_runs, r.max_runs, r.warmup, r.ignore_failure)?,
            parameters: parameters::from_args(
                &r.parameter_list,
                &r.parameter_scan,
                r.parameter_step_size.as_deref(),
            )?,
            prepare: r.prepare.clone(),
            setup: r.setup.clone(),
            cleanup: r.cleanup.clone(),
            exports,
            confidence: r.confidence,
            save: Saving::from_request(&r.save)?,
        })
    }
}
