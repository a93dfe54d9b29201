//! The calibration as plain data: what every output (text, JSON, SVG, the saved file) reads, and
//! none of them knows how a figure was measured.

pub mod findings;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::histogram::Histogram;
use crate::stats::repeat::Stop;
use crate::stats::Summary;

pub use findings::Findings;

pub const SCHEMA: &str = "arum.calibration/1";

/// What a figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds per operation (also shown in TSC cycles).
    Ns,
    /// Bytes per second (shown in GB/s, 10^9).
    BytesPerS,
}

/// The whole result of `arum calibrate`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Calibration {
    pub schema: String,
    pub machine: Machine,
    pub run: RunInfo,
    pub measurements: Vec<Measurement>,
    /// Figures derived from several measurements (cache levels, file cache size).
    pub findings: Findings,
    /// Peers' figures beside ours (`--peers`).
    #[serde(default)]
    pub peers: Vec<Comparison>,
    /// Facts about how the run went (load from other processes, features the machine lacks).
    pub notes: Vec<String>,
}

impl Calibration {
    pub fn get(&self, name: &str) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.name == name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub host: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub cpu_vendor: String,
    pub cpu_family: u32,
    pub cpu_model: u32,
    pub cpu_stepping: u32,
    pub cpu_model_name: String,
    pub online_cpus: usize,
    /// The CPUs this process may run on (its affinity mask when the run started).
    pub allowed_cpus: Vec<usize>,
    pub memory_total_bytes: u64,
    pub tsc: Tsc,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tsc {
    /// Ticks per second, measured against CLOCK_MONOTONIC.
    pub hz: f64,
    /// Relative spread of the calibration windows.
    pub spread: f64,
    /// Constant rate in every power state (CPUID 0x8000_0007 EDX bit 8).
    pub invariant: bool,
    pub rdtscp: bool,
    /// Ticks of an empty fenced begin/end pair, subtracted from single-operation samples.
    pub timer_overhead_ticks: f64,
    /// Ticks per iteration of an empty batch loop, subtracted from batched samples.
    pub loop_overhead_ticks: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub arum_version: String,
    pub started_unix_ns: u64,
    pub elapsed_ms: u64,
    pub quick: bool,
    /// Target half-width of the median's 90% CI, relative (0.02 = 2%).
    pub ci_target: f64,
    pub time_limit_ms: u64,
    /// Share of the machine's CPU time that other processes used while the suite ran.
    pub other_load: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum Status {
    Measured,
    /// Not measured on this machine, and why.
    Skipped {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Dotted name, group first (`tasks.switch.process.same_cpu`).
    pub name: String,
    pub group: String,
    pub title: String,
    /// The method in one sentence.
    pub method: String,
    pub unit: Unit,
    #[serde(flatten)]
    pub status: Status,
    /// Operations per sample (1: each operation timed alone; more: the mean of a batch).
    pub per_sample: u64,
    pub summary: Option<Summary>,
    /// The summary in TSC cycles (for `ns` figures).
    pub cycles: Option<Summary>,
    pub stop: Option<Stop>,
    pub elapsed_ms: u64,
    pub histogram: Option<Histogram>,
    /// Supporting figures (what was subtracted, sizes, counts checked).
    pub details: BTreeMap<String, f64>,
    pub notes: Vec<String>,
    pub prediction: Option<Prediction>,
    /// Share of the CPUs used by other processes while this was measured.
    pub other_load: Option<f64>,
}

impl Measurement {
    pub fn median(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.median)
    }

    pub fn is_measured(&self) -> bool {
        self.status == Status::Measured
    }
}

/// A prediction resolved into the measurement's unit, with how the measurement compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub value: f64,
    pub hardware: Option<f64>,
    pub software: Option<f64>,
    pub note: Option<String>,
    /// Measured median over the prediction.
    pub ratio: Option<f64>,
}

/// A peer's figure beside ours (`--peers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What is compared, e.g. "context switch round trip, processes, one CPU".
    pub what: String,
    /// Our measurement and figure (in `unit`).
    pub ours_name: String,
    pub ours: Option<f64>,
    /// The peer's command line and figure (in `unit`), as it printed it.
    pub peer_command: String,
    pub peer_printed: Option<f64>,
    /// Share of its CPUs the peer had while it ran (its CPU time over its wall time and the
    /// CPUs it keeps busy): below 1 when other processes took turns on them.
    pub peer_cpu_share: Option<f64>,
    /// The peer's figure for the time it actually ran (the printed one when it had its CPUs),
    /// which the ratio uses: a peer timing a loop by the clock counts the turns of other
    /// processes as its own cost, while our medians leave interrupted samples out.
    pub peer: Option<f64>,
    pub unit: Unit,
    /// Ours over the peer's.
    pub ratio: Option<f64>,
    /// Whether ours is within a factor of 2 of the peer's: of its figure for the time it ran or
    /// of the printed one, when the two differ (see `compare`).
    pub within_factor_2: Option<bool>,
    /// How the two methods differ, and so what the ratio should be.
    pub explanation: String,
    /// Why there is no figure, if there is none.
    pub missing: Option<String>,
}

/// A small calibration for tests of the renderings and the saved costs.
#[cfg(test)]
pub(crate) fn fixture(measured: &[(&str, Unit, f64)]) -> Calibration {
    let measurements = measured
        .iter()
        .map(|&(name, unit, median)| {
            let samples: Vec<f64> = (0..40)
                .map(|i| median * (0.95 + 0.0025 * i as f64))
                .collect();
            let mut sorted = samples.clone();
            sorted.sort_by(f64::total_cmp);
            let summary = Summary::of_sorted(&sorted);
            Measurement {
                name: name.into(),
                group: name.split('.').next().unwrap_or(name).into(),
                title: name.into(),
                method: "test".into(),
                unit,
                status: Status::Measured,
                per_sample: 1,
                cycles: (unit == Unit::Ns).then(|| summary.scaled(2.0)),
                summary: Some(summary),
                stop: Some(Stop::Converged),
                elapsed_ms: 10,
                histogram: Some(Histogram::of_sorted(&sorted, 24)),
                details: BTreeMap::new(),
                notes: Vec::new(),
                prediction: None,
                other_load: None,
            }
        })
        .collect();
    Calibration {
        schema: SCHEMA.into(),
        machine: Machine {
            host: "testhost".into(),
            kernel_release: "6.1.0-test".into(),
            kernel_version: "#1".into(),
            cpu_vendor: "GenuineIntel".into(),
            cpu_family: 6,
            cpu_model: 0x55,
            cpu_stepping: 7,
            cpu_model_name: "Test CPU".into(),
            online_cpus: 2,
            allowed_cpus: vec![0, 1],
            memory_total_bytes: 1 << 34,
            tsc: Tsc {
                hz: 2e9,
                spread: 0.0001,
                invariant: true,
                rdtscp: true,
                timer_overhead_ticks: 40.0,
                loop_overhead_ticks: 1.0,
            },
        },
        run: RunInfo {
            arum_version: "0.1.0".into(),
            started_unix_ns: 1_700_000_000_000_000_000,
            elapsed_ms: 1000,
            quick: true,
            ci_target: 0.02,
            time_limit_ms: 250,
            other_load: Some(0.05),
        },
        measurements,
        findings: Findings::default(),
        peers: Vec::new(),
        notes: Vec::new(),
    }
}
