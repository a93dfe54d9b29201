//! The options of repeated runs and comparisons.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args, Clone)]
#[command(next_help_heading = "Repeated runs and comparisons")]
pub struct SeriesArgs {
    /// Run the program N times and report statistics of every metric.
    #[arg(short = 'r', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: Option<u64>,

    /// Repeat runs as long as needed: at least 10 runs and at least 3 s (or --min-runs,
    /// --max-runs). Implied by the other options of this section.
    #[arg(long)]
    pub repeat: bool,

    /// Runs of each command before the measured ones (not in the statistics).
    #[arg(short = 'w', long, value_name = "N", default_value_t = 0)]
    pub warmup: u64,

    /// At least N runs when the number is chosen by time (default 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..))]
    pub min_runs: Option<u64>,

    /// At most N runs when the number is chosen by time.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs: Option<u64>,

    /// Shell command run before every run (warm-up runs too), e.g. to drop caches; its time is
    /// not measured. `{VAR}` is substituted.
    #[arg(long, value_name = "CMD")]
    pub prepare: Option<String>,

    /// Shell command run once before the first run.
    #[arg(long, value_name = "CMD")]
    pub setup: Option<String>,

    /// Shell command run once after the last run (also after a failure).
    #[arg(long, value_name = "CMD")]
    pub cleanup: Option<String>,

    /// Run once for each VALUE of VAR (comma-separated), substituting `{VAR}` in the command
    /// and in --env; repeat for several variables (every combination is run).
    #[arg(short = 'L', long, num_args = 2, value_names = ["VAR", "VALUES"], action = clap::ArgAction::Append)]
    pub parameter_list: Vec<String>,

    /// Run once for each number VAR from MIN to MAX (in steps of --parameter-step-size, default
    /// 1), substituting `{VAR}`; repeatable, combined with -L as every combination.
    #[arg(short = 'P', long, num_args = 3, value_names = ["VAR", "MIN", "MAX"], action = clap::ArgAction::Append)]
    pub parameter_scan: Vec<String>,

    /// Step of -P/--parameter-scan (a decimal step scans decimals).
    #[arg(short = 'D', long, value_name = "STEP", requires = "parameter_scan")]
    pub parameter_step_size: Option<String>,

    /// Set NAME=VALUE in the program's environment (repeatable); `{VAR}` is substituted. In
    /// repeated runs the program also gets ARUM_RUN_INDEX (0, 1, ...; warm-up runs -N..-1).
    #[arg(long = "env", value_name = "NAME=VALUE", action = clap::ArgAction::Append)]
    pub env: Vec<String>,

    /// Benchmark several commands against each other: `-- CMD1 ARGS ::: CMD2 ARGS` (repeated
    /// --launch strings do the same). Runs are interleaved (A B A B ...) so drift hits all alike.
    #[arg(long)]
    pub compare: bool,

    /// Go on when a run fails (non-zero exit or a signal); every run's status is recorded.
    #[arg(short = 'i', long)]
    pub ignore_failure: bool,

    /// Write every run's full report and the statistics as JSON (schema arum.runs/1).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// Write the statistics as CSV, one row per command and metric.
    #[arg(long, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,

    /// Write the statistics as Markdown tables.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Confidence level of intervals and tests: 0.9 or 90% (default).
    #[arg(long, value_name = "LEVEL", default_value_t = DEFAULT_CONFIDENCE, value_parser = crate::values::confidence_level)]
    pub confidence: f64,

    /// Keep every measured run in the run history (`arum history`): an SQLite file, or a
    /// PostgreSQL URL for a shared store; without STORE, $ARUM_HISTORY or
    /// ~/.local/share/arum/history.sqlite.
    #[arg(long, value_name = "STORE", num_args = 0..=1, default_missing_value = "", require_equals = true, help_heading = "Run history")]
    pub save: Option<String>,

    /// A label saved with the runs (KEY=VALUE; repeatable), e.g. bench=parse, branch=main.
    #[arg(long = "label", value_name = "KEY=VALUE", help_heading = "Run history")]
    pub labels: Vec<String>,

    /// The commit saved with the runs, instead of the current directory's (git rev-parse HEAD).
    #[arg(long, value_name = "REV", help_heading = "Run history")]
    pub commit: Option<String>,
}

/// `--confidence` when it is not given.
const DEFAULT_CONFIDENCE: f64 = arum_core::series::settings::DEFAULT_CONFIDENCE;

/// What clap gives when none of these options is on the command line: the series options of a
/// single run, which its own parser does not define (see `Cli::parse_args`). The CLI's
/// tests check it against clap's parse of a command line without them.
impl Default for SeriesArgs {
    fn default() -> Self {
        SeriesArgs {
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
            env: Vec::new(),
            compare: false,
            ignore_failure: false,
            export_json: None,
            export_csv: None,
            export_markdown: None,
            confidence: DEFAULT_CONFIDENCE,
            save: None,
            labels: Vec::new(),
            commit: None,
        }
    }
}
