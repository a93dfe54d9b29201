//! The result of a series of runs, as plain data every exporter reads: JSON schema `arum.runs/1`.

use serde::{Deserialize, Serialize};

use crate::report::model::Report;
use crate::series::compare::analysis::Comparison;

/// The version tag of this layout; bump it when a field changes meaning or is removed.
pub const SCHEMA: &str = "arum.runs/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSet {
    pub schema: String,
    pub arum_version: String,
    /// Confidence level of every interval and test here (0.9 = 90%).
    pub confidence_level: f64,
    /// Warm-up runs of each command before the measured ones (not recorded).
    pub warmup_runs: u64,
    /// Why the series ended before its planned runs (a failed run), if it did.
    pub stopped_early: Option<String>,
    pub benchmarks: Vec<Benchmark>,
    /// Each benchmark against the first, when there are several.
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
}

/// One command with one combination of parameter values, run several times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Benchmark {
    /// The command as run (parameters substituted), for people.
    pub label: String,
    pub command: Vec<String>,
    #[serde(default)]
    pub parameters: Vec<NameValue>,
    /// Variables set in the program's environment (--env), substituted.
    #[serde(default)]
    pub env: Vec<NameValue>,
    pub runs: Vec<Run>,
    /// Statistics of every metric over the runs, in the report's order.
    pub metrics: Vec<MetricSummary>,
    /// Runs that stood out in wall time, with what the machine was doing then (each metric's
    /// outlier runs are in `metrics`).
    #[serde(default)]
    pub outliers: Vec<OutlierRun>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameValue {
    pub name: String,
    pub value: String,
}

/// One measured run: its index (ARUM_RUN_INDEX) and its full report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub index: u64,
    /// arum's exit status for the run (the program's, or 128+N for signal N).
    pub exit_status: i32,
    pub report: Report,
}

/// The statistics of one metric over a benchmark's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    pub metric: String,
    #[serde(flatten)]
    pub stats: arum_stats::Summary,
    /// Indexes of the runs whose value is an outlier (modified z-score above 3.5).
    #[serde(default)]
    pub outlier_runs: Vec<u64>,
}

/// A run that was an outlier in wall time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlierRun {
    pub run: u64,
    pub metrics: Vec<String>,
    /// The run's ambient interference notes (with --ambient), its warnings otherwise.
    pub notes: Vec<String>,
}
