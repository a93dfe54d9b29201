//! What `arum calibrate` was asked to do, as plain values: the command line has been read (by
//! the `arum` binary), nothing is decided yet. Defaults that depend on `quick` are applied when
//! the calibration is prepared (`prepare`), not here.

use std::path::PathBuf;
use std::time::Duration;

/// The report's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    /// `arum.calibration/1`.
    Json,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Groups, measurement names or dotted prefixes, each entry possibly a comma- or
    /// space-separated list; empty: everything.
    pub only: Vec<String>,
    /// Fewer sizes, smaller buffers and files, shorter time limits, a time budget for the suite.
    pub quick: bool,
    pub format: Format,
    /// Where the report goes (standard output when none).
    pub output: Option<PathBuf>,
    /// Directory for the SVG plots.
    pub plots: Option<PathBuf>,
    /// TOML file of predictions shown beside the measurements.
    pub predict: Option<PathBuf>,
    /// Keep the figures for this host, CPU and kernel in the user's cache directory.
    pub save: bool,
    /// Scratch directory of the file and page-fault measurements (a new temporary one when none).
    pub dir: Option<PathBuf>,
    /// List the measurements and their methods instead of measuring.
    pub list: bool,
    /// Also run perf bench and sysbench and compare.
    pub peers: bool,
    /// Print every histogram in full.
    pub histograms: bool,
    /// Longest time to repeat one measurement (default 1 s; 250 ms with `quick`).
    pub time_limit: Option<Duration>,
    /// Target half-width of the median's 90% confidence interval, in percent of the median.
    pub ci_percent: f64,
    /// Largest file of the file-cache curve, in bytes (default 1 GiB; 64 MiB with `quick`).
    pub file_max: Option<u64>,
    /// Delay to add with `tc netem` on the veth pair.
    pub netem: Option<Duration>,
}

impl Default for Request {
    /// The whole suite, text on standard output, the median known to ±2%.
    fn default() -> Request {
        Request {
            only: Vec::new(),
            quick: false,
            format: Format::Text,
            output: None,
            plots: None,
            predict: None,
            save: false,
            dir: None,
            list: false,
            peers: false,
            histograms: false,
            time_limit: None,
            ci_percent: 2.0,
            file_max: None,
            netem: None,
        }
    }
}
