//! What `arum compare` reads: a single run's report (`arum.report/1`) or one benchmark of a
//! series (`arum.runs/1`), as the values of every metric.

use std::path::Path;

use crate::error::ArumError;
use crate::history::baseline;
use crate::report::model::{Report, SCHEMA as REPORT_SCHEMA};
use crate::series::result::{RunSet, SCHEMA as RUNS_SCHEMA};
use crate::series::samples::Samples;

/// One side of a comparison.
pub struct Side {
    pub label: String,
    pub samples: Samples,
}

/// A saved JSON document of arum: one run's report or a series.
pub enum Saved {
    Report(Box<Report>),
    Runs(RunSet),
}

/// Reads a report (`arum.report/1`) or a series (`arum.runs/1`) from `path`.
pub fn read_saved(path: &Path) -> Result<Saved, ArumError> {
    let bad = |why: String| ArumError::Input {
        path: path.to_path_buf(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        bad(format!(
            "cannot read it: {e}; give a report from `arum --format json -o FILE` or a series from `--export-json FILE`"
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not JSON ({e}); give arum's JSON output")))?;
    let schema = value
        .get("schema")
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_string();
    if schema == REPORT_SCHEMA {
        let report: Report = serde_json::from_value(value)
            .map_err(|e| bad(format!("not a valid {REPORT_SCHEMA} report: {e}")))?;
        return Ok(Saved::Report(Box::new(report)));
    }
    if schema == RUNS_SCHEMA {
        let set: RunSet = serde_json::from_value(value)
            .map_err(|e| bad(format!("not a valid {RUNS_SCHEMA} series: {e}")))?;
        return Ok(Saved::Runs(set));
    }
    Err(bad(format!(
        "schema {schema:?} is neither {REPORT_SCHEMA} nor {RUNS_SCHEMA}; give arum's JSON output"
    )))
}

/// Where `history:LABELS` sides are read from, and how many runs.
#[derive(Debug, Clone, Default)]
pub struct FromHistory {
    /// The store; the default one when none.
    pub store: Option<String>,
    /// The last N runs with the labels.
    pub last: Option<usize>,
}

/// Reads `path`, or the saved runs `history:LABELS` names; `pick` chooses a benchmark of a
/// series by its label or its number (1, 2, ...).
pub fn load(path: &Path, pick: Option<&str>, history: &FromHistory) -> Result<Side, ArumError> {
    let bad = |why: String| ArumError::Input {
        path: path.to_path_buf(),
        why,
    };
    if let Some(selector) = path.to_str().and_then(|p| p.strip_prefix(baseline::PREFIX)) {
        if pick.is_some() {
            return Err(bad(
                "saved runs are of one command: leave out --base-name/--new-name".into(),
            ));
        }
        let last = history.last.unwrap_or(baseline::DEFAULT_LAST);
        let (label, reports) = baseline::reports(selector, history.store.as_deref(), last)?;
        return Ok(Side {
            label,
            samples: Samples::of(reports.iter().map(|(n, r)| (*n, r))),
        });
    }
    match read_saved(path)? {
        Saved::Report(report) => {
            if pick.is_some() {
                return Err(bad(
                    "a single run's report holds one command; --base-name/--new-name choose among a series' commands"
                        .into(),
                ));
            }
            Ok(Side {
                label: shell_words::join(&report.command.argv),
                samples: Samples::of([(0, &*report)]),
            })
        }
        Saved::Runs(set) => {
            let labels = || {
                set.benchmarks
                    .iter()
                    .enumerate()
                    .map(|(i, b)| format!("{}: {}", i + 1, b.label))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let chosen = match pick {
            Some(p) => set
                .benchmarks
                .iter()
                .position(|b| b.label == p)
                .or_else(|| p.parse::<usize>().ok().filter(|i| (1..=set.benchmarks.len()).contains(i)).map(|i| i - 1))
                .ok_or_else(|| bad(format!("no command {p:?} in this series; it has {}", labels())))?,
            None if set.benchmarks.len() == 1 => 0,
            None => {
                return Err(bad(format!(
                    "this series has {} commands ({}); choose one with --base-name/--new-name LABEL or NUMBER",
                    set.benchmarks.len(),
                    labels()
                )))
            }
        };
            let b = &set.benchmarks[chosen];
            Ok(Side {
                label: b.label.clone(),
                samples: Samples::of(b.runs.iter().map(|r| (r.index, &r.report))),
            })
        }
    }
}
