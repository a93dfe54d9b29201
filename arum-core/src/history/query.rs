//! What `arum history` and its subcommands select: the store, the filters and the metrics, as
//! given, and the runs they select.

use std::path::PathBuf;

use arum_history::{Filter, Location, Store, StoredRun};

use crate::error::ArumError;
use crate::history::save::parse_labels;
use crate::report::metrics;

/// The metric shown when none is named.
pub const DEFAULT_METRIC: &str = "usage.wall_ns";

#[derive(Debug, Clone, Default)]
pub struct HistoryRequest {
    /// The store (a file or a PostgreSQL URL); the default store when none.
    pub store: Option<String>,
    /// Runs with every one of these KEY=VALUE labels.
    pub labels: Vec<String>,
    /// Runs whose command contains this text.
    pub command: Option<String>,
    /// Runs measured on this host.
    pub host: Option<String>,
    /// From the first run of this commit (a prefix of its id) on.
    pub since: Option<String>,
    /// Up to the last run of this commit.
    pub until: Option<String>,
    /// The last N runs of the selection.
    pub last: Option<usize>,
    /// The metrics shown (full names, unique tails, or wall, user, sys, memory).
    pub metrics: Vec<String>,
    pub format: HistoryFormat,
    /// Write the HTML page with the trend plots here.
    pub html: Option<PathBuf>,
    /// Write the table (or CSV, JSON) here instead of standard output.
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HistoryFormat {
    #[default]
    Text,
    Csv,
    Json,
}

/// The store a request names, or the default one.
pub fn location(store: Option<&str>) -> Result<Location, ArumError> {
    Location::named_or_default(store).ok_or_else(|| {
        ArumError::Usage(
            "no data directory holds a default store (HOME unset?): name one with --store or \
             ARUM_HISTORY"
                .into(),
        )
    })
}

/// The runs a request selects, with its metrics (resolved to full names, in order).
pub fn select(r: &HistoryRequest) -> Result<(Vec<StoredRun>, Vec<String>), ArumError> {
    let mut store = Store::open_existing(&location(r.store.as_deref())?)?;
    let known = store.metric_names()?;
    let names: Vec<&str> = known.iter().map(String::as_str).collect();
    let wanted: Vec<String> = if r.metrics.is_empty() {
        vec![DEFAULT_METRIC.to_string()]
    } else {
        r.metrics.clone()
    };
    let metrics = wanted
        .iter()
        .map(|m| {
            metrics::resolve(m, &names)
                .map(str::to_string)
                .map_err(|why| {
                    ArumError::Usage(format!(
                        "--metric {m}: {why} in the saved runs; `arum compare --all` of a saved \
                         report lists the metrics"
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let filter = Filter {
        labels: parse_labels(&r.labels, "--label")?,
        command: r.command.clone(),
        host: r.host.clone(),
        since: r.since.clone(),
        until: r.until.clone(),
        last: r.last,
        metrics: metrics.clone(),
    };
    Ok((store.runs(&filter)?, metrics))
}
