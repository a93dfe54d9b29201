//! `arum merge FILES...`: the reports of a parallel job's ranks combined: a per-rank table,
//! totals and spread of every metric, and the slowest rank with what its machine was doing.

pub mod model;
pub mod text;

use std::path::PathBuf;

use crate::error::ArumError;
use crate::report::model::{Report, SCHEMA};
use crate::report::sink::Sink;

#[derive(Debug, Clone)]
pub struct MergeRequest {
    /// The ranks' reports (`arum --format json -o run-%r.json` under mpirun or srun).
    pub files: Vec<PathBuf>,

    /// Output format (JSON: schema arum.merge/1).
    pub format: MergeFormat,

    /// Write the merged report to FILE instead of stdout.
    pub output: Option<PathBuf>,

    /// Also show per-CPU breakdowns and arum's own timing in the text.
    pub all: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeFormat {
    Text,
    Json,
}

pub fn run(args: &MergeRequest) -> Result<i32, ArumError> {
    let sink = Sink::open_or_stdout(args.output.as_deref())?;
    let reports = args
        .files
        .iter()
        .map(|p| read(p).map(|r| (p.display().to_string(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    refuse_duplicates(&args.files, &reports)?;
    let merged = model::merge(&reports);
    let rendered = match args.format {
        MergeFormat::Text => text::render(&merged, args.all),
        MergeFormat::Json => {
            let mut s =
                serde_json::to_string_pretty(&merged).expect("a merged report always serialises");
            s.push('\n');
            s
        }
    };
    sink.write_report(&rendered)?;
    Ok(0)
}

/// The same run given twice (one file named twice, or a copy) would count its rank twice in
/// every total: a run is its host and its start time to the nanosecond.
fn refuse_duplicates(files: &[PathBuf], reports: &[(String, Report)]) -> Result<(), ArumError> {
    for (j, (_, b)) in reports.iter().enumerate() {
        let same = |a: &Report| {
            a.metadata.host == b.metadata.host
                && a.metadata.start_time_unix_ns == b.metadata.start_time_unix_ns
        };
        if let Some((first, _)) = reports[..j].iter().find(|(_, a)| same(a)) {
            return Err(ArumError::Input {
                path: files[j].clone(),
                why: format!(
                    "the same run as {first} (host {}, started {}); give each rank's report once",
                    b.metadata.host, b.metadata.start_time_utc
                ),
            });
        }
    }
    Ok(())
}

fn read(path: &PathBuf) -> Result<Report, ArumError> {
    let bad = |why: String| ArumError::Input {
        path: path.clone(),
        why,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(format!("cannot read it: {e}; give the ranks' JSON reports")))?;
    let report: Report = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "not an {SCHEMA} report ({e}); write each rank's with `arum --format json -o run-%r.json`"
        ))
    })?;
    if report.schema != SCHEMA {
        return Err(bad(format!(
            "schema {:?}, not {SCHEMA}; give single-run reports",
            report.schema
        )));
    }
    Ok(report)
}
