//! The subcommands' options (the measured run's are in `run`).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use clap_complete::Shell;

use super::run::CpuArgs;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// List the supported microarchitectures and their CPUID keys instead.
    #[arg(long)]
    pub cpus: bool,

    #[command(flatten)]
    pub cpu: CpuArgs,

    /// Output format: text, or JSON lines (one object per event and unit mask).
    #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
    pub format: InfoFormat,

    /// List the derived metrics (of GROUP only, if given) instead of the events.
    #[arg(long, value_name = "GROUP", num_args = 0..=1, default_missing_value = "")]
    pub metrics: Option<String>,

    /// Show only names, aliases or descriptions containing PATTERN (case-insensitive).
    pub pattern: Option<String>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = InfoFormat::Text)]
    pub format: InfoFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InfoFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a report (`arum --format json -o FILE`) or a series (`--export-json FILE`).
    #[arg(value_name = "BASE.json")]
    pub base: PathBuf,

    /// What is compared with it, of the same kinds.
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,

    /// Compare only this metric (full name such as usage.wall_ns, a unique tail such as wall_ns,
    /// or wall, user, sys, memory); repeatable.
    #[arg(short, long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,

    /// Compare every metric (faults, switches, per-CPU breakdowns, samplers, arum's own
    /// timing), not only the headline ones: time, CPU, memory and what was asked for.
    #[arg(long)]
    pub all: bool,

    /// Exit with status 1 when METRIC is significantly worse by more than PCT percent
    /// (e.g. wall:5); repeatable.
    #[arg(long, value_name = "METRIC:PCT")]
    pub fail_if_worse: Vec<String>,

    /// Confidence level of intervals and tests: 0.9 or 90% (default).
    #[arg(long, value_name = "LEVEL", default_value = "0.9", value_parser = crate::values::confidence_level)]
    pub confidence: f64,

    /// In a series of several commands, the base one (its label, or its number from 1).
    #[arg(long, value_name = "LABEL")]
    pub base_name: Option<String>,

    /// In a series of several commands, the new one (its label, or its number from 1).
    #[arg(long, value_name = "LABEL")]
    pub new_name: Option<String>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,

    /// Write the comparison to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// The run history that `history:KEY=VALUE` sides are read from (default: $ARUM_HISTORY,
    /// or ~/.local/share/arum/history.sqlite).
    #[arg(long, value_name = "STORE")]
    pub store: Option<String>,

    /// A `history:KEY=VALUE` side is the last N saved runs with those labels (default 10).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub last: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The ranks' reports (`arum --format json -o run-%r.json` under mpirun or srun).
    #[arg(value_name = "REPORT.json", required = true)]
    pub files: Vec<PathBuf>,

    /// Output format (JSON: schema arum.merge/1).
    #[arg(long, value_enum, default_value_t = MergeFormat::Text)]
    pub format: MergeFormat,

    /// Write the merged report to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Also show per-CPU breakdowns and arum's own timing in the text.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MergeFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct HtmlArgs {
    /// A report (`arum --format json -o FILE`) or a series (`--export-json FILE`).
    #[arg(value_name = "FILE.json")]
    pub input: PathBuf,

    /// Write the page to FILE (atomically) instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The suite: server, client, parameters, network (see README, "arum suite").
    #[arg(value_name = "FILE.toml")]
    pub file: PathBuf,

    /// The page of the whole sweep: every combination's statistics, distributions, the sweep.
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,

    /// The series' text summary goes here instead of stderr.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Every run's report and the statistics, as arum.runs/1 JSON.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (arum-SUBCOMMAND(1), as arum's page refers to it);
    /// arum's own page without one.
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,

    #[command(flatten)]
    pub filters: HistoryFilters,

    /// The metric shown (full name, unique tail, or wall, user, sys, memory; repeatable;
    /// default usage.wall_ns).
    #[arg(short, long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,

    /// Also write one HTML page with each series' trend plot and change points.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// Change points of METRIC in each series (command, labels, machine) across commits:
    /// where, by how much, how sure; exit status 1 with --fail-if-worse when one is worse.
    Changes(ChangesArgs),
}

/// Which saved runs: the options of `arum history` and of its subcommands.
#[derive(Debug, Args)]
pub struct HistoryFilters {
    /// The store: an SQLite file or a PostgreSQL URL (default: $ARUM_HISTORY, or
    /// ~/.local/share/arum/history.sqlite).
    #[arg(long, value_name = "STORE")]
    pub store: Option<String>,

    /// Runs with this label (KEY=VALUE; repeatable: all of them).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Runs whose command contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub command: Option<String>,

    /// Runs measured on HOST.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,

    /// From the first saved run of commit REV (a prefix of its id) on.
    #[arg(long, value_name = "REV")]
    pub since: Option<String>,

    /// Up to the last saved run of commit REV.
    #[arg(long, value_name = "REV")]
    pub until: Option<String>,

    /// Only the last N runs of the selection.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub last: Option<usize>,

    /// Output format (JSON: schema arum.history/1, or arum.changes/1 for `changes`).
    #[arg(long, value_enum, default_value_t = HistoryFormat::Text)]
    pub format: HistoryFormat,

    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Text,
    Csv,
    Json,
}

#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// The metric (full name, unique tail, or wall, user, sys, memory).
    #[arg(value_name = "METRIC")]
    pub metric: String,

    /// Significance level of each change point's permutation test.
    #[arg(long, value_name = "P", default_value_t = 0.01)]
    pub significance: f64,

    /// Report only shifts of at least this much (a percentage of the level before), e.g. 2%.
    #[arg(long, value_name = "PCT", default_value = "1%", value_parser = crate::values::fraction)]
    pub min_change: f64,

    /// Exit with status 1 when a change point among the selected runs makes the metric worse
    /// (select a window with --since or --last).
    #[arg(long)]
    pub fail_if_worse: bool,

    #[command(flatten)]
    pub filters: HistoryFilters,
}
