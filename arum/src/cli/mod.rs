//! The command line: clap's definitions of every option and subcommand, nothing measured yet.
//! `convert` turns what clap parsed into the engine's requests; no clap type goes further.

mod calibrate;
mod commands;
mod convert;
#[cfg(test)]
mod fuzz;
mod hints;
mod hourglass;
mod run;
mod run_parser;
mod series;

pub use commands::*;
pub use hints::hint;
pub use run::*;
pub use series::SeriesArgs;

use clap::{Parser, Subcommand};

/// Exit codes, shown in `--help` and kept in step with README.md.
pub const EXIT_CODES_HELP: &str = "\
Exit status:
  N        the measured program's own exit status (0-255)
  128+N    the measured program was ended by signal N (e.g. 137 for SIGKILL)
  125      arum itself failed (bad option value, cannot write the report, ...)
  126      the program was found but could not be executed (permission, format)
  127      the program was not found
  2        usage error (unknown option, missing command)

The report goes to stderr (or to --output FILE); the program's stdin, stdout and
stderr are passed through untouched.";

/// How arum is called: the program after `--`, or as one string.
const USAGE: &str = "arum [OPTIONS] -- CMD [ARGS]...
       arum [OPTIONS] --launch \"CMD ARGS\"
       arum <SUBCOMMAND>";

#[derive(Debug, Parser)]
#[command(
    name = "arum",
    version = arum_core::version::VERSION,
    about = "ARUM, the Application Resource Usage Monitor: run a program and report its resource usage",
    after_help = EXIT_CODES_HELP,
    // clap would write the program as `<--launch <"CMD ARGS">|CMD ARGS>`, hiding the `--`.
    override_usage = USAGE,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// The names `Command` answers to (checked against it in the tests).
const SUBCOMMANDS: &[&str] = &[
    "info",
    "list",
    "compare",
    "merge",
    "completions",
    "man",
    "hourglass",
    "calibrate",
    "suite",
    "html",
    "history",
    "help",
];

impl Cli {
    /// Parses `args` (the program name first) as `Cli::try_parse_from` does. A plain run is
    /// parsed by the run's own parser; help, version, subcommands and anything that parser
    /// refuses go to the full one, so its messages are the same.
    /// `ARUM_FULL_PARSER=1` sends every command line to the full parser, for the benchmark.
    pub fn parse_args(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
        if is_plain_run(&args) && std::env::var_os("ARUM_FULL_PARSER").is_none() {
            if let Some(run) = run_parser::parse(&args) {
                return Ok(Cli {
                    command: None,
                    run: run.with_series(SeriesArgs::default()),
                });
            }
        }
        Cli::try_parse_from(args)
    }
}

/// Whether nothing before `--` asks for help or the version or names a subcommand.
fn is_plain_run(args: &[std::ffi::OsString]) -> bool {
    args.len() > 1
        && args[1..].iter().take_while(|a| *a != "--").all(|a| {
            let a = a.to_string_lossy();
            !SUBCOMMANDS.contains(&a.as_ref())
                && !matches!(a.as_ref(), "-h" | "--help" | "-V" | "--version")
        })
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what matters before measuring: CPU, kernel, permissions, usable counter backends.
    Info(InfoArgs),
    /// List the events of the detected (or --cpu) processor, or the supported processors.
    List(ListArgs),
    /// Compare two reports or run series: difference, ratio, confidence interval, Welch's t-test.
    Compare(CompareArgs),
    /// Combine the reports of a parallel job's ranks: per-rank table, totals, spread, imbalance.
    Merge(MergeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(CompletionsArgs),
    /// Print the man page (roff) of arum, or of one subcommand, to stdout.
    Man(ManArgs),
    /// A synthetic real-time application: map when its threads run, infer scheduling behaviour.
    Hourglass(hourglass::HourglassArgs),
    /// Measure this machine's OS and hardware costs (timer, calls, system calls, tasks, memory, TCP, files).
    Calibrate(calibrate::CalibrateArgs),
    /// Run a test suite (server, client, parameters, netem network conditions) from a TOML file.
    Suite(SuiteArgs),
    /// Render a saved JSON report or series (--export-json) as one self-contained HTML page.
    Html(HtmlArgs),
    /// The runs kept with --save: list them by label, command, machine, commits; one metric
    /// over time as a table, CSV, JSON or an HTML trend page; `changes` finds change points.
    History(Box<HistoryArgs>),
}

/// The `arum = [...]` options of a suite file, read as a measured run's command line: the
/// run's options and the series options among them (the suite names the program itself).
pub fn suite_options(
    words: &[String],
) -> Result<
    (
        arum_core::request::RunRequest,
        arum_core::series::SeriesRequest,
    ),
    String,
> {
    let argv = std::iter::once("arum".to_string())
        .chain(words.iter().cloned())
        .chain(["--".to_string(), "true".to_string()]);
    match Cli::try_parse_from(argv) {
        Ok(Cli { command: None, run }) => Ok(run.requests()),
        Ok(_) => Err("a subcommand is not an option of a run".into()),
        Err(e) => Err(e.to_string().lines().next().unwrap_or("").to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).expect("parses")
    }

    #[test]
    fn history_changes_searches_as_the_page_does_without_options() {
        let cli = parse(&["arum", "history", "changes", "wall", "--label", "a=b"]);
        let Some(Command::History(h)) = cli.command else {
            panic!("not history")
        };
        let Some(HistoryAction::Changes(c)) = h.action else {
            panic!("not changes")
        };
        let defaults = arum_core::history::changes::default_options();
        assert_eq!(c.min_change, defaults.min_relative_shift);
        assert_eq!(c.significance, defaults.significance);
        assert_eq!(c.request().query.labels, ["a=b"]);
    }

    #[test]
    fn the_requests_carry_what_was_asked() {
        use arum_core::request::{Format, PerTask, Scope};
        let (run, series) = parse(&[
            "arum",
            "-a",
            "--env",
            "A=1",
            "--format",
            "csv",
            "-e",
            "x",
            "--per-task=all",
            "-I",
            "2s",
            "-r",
            "3",
            "--confidence",
            "95%",
            "--",
            "./app",
            "-v",
        ])
        .run
        .requests();
        assert_eq!(run.events.scope, Scope::System, "-a is --scope system");
        assert_eq!(run.program.env, ["A=1"]);
        assert_eq!(run.program.argv, ["./app", "-v"]);
        assert_eq!(run.format, Format::Csv);
        assert_eq!(run.events.interval_ms, Some(2000));
        assert_eq!(run.per_task, Some(PerTask::All));
        assert_eq!((series.runs, series.confidence), (Some(3), 0.95));
        assert!(series.asks_for_a_series(&run.program));
        let (run, series) = parse(&["arum", "--", "true"]).run.requests();
        assert!(!series.asks_for_a_series(&run.program));
        assert_eq!(run.events.scope, Scope::App);
    }

    #[test]
    fn a_suite_s_options_are_read_as_a_run_s() {
        let (run, series) = suite_options(&["--ambient".into(), "-i".into()]).unwrap();
        assert!(run.ambient.is_some() && series.ignore_failure);
        assert!(suite_options(&["--bogus".into()])
            .unwrap_err()
            .contains("--bogus"));
    }

    #[test]
    fn a_program_is_required_unless_a_subcommand_is_given() {
        assert!(Cli::try_parse_from(["arum"]).is_err());
        assert!(Cli::try_parse_from(["arum", "info"]).is_ok());
        assert!(Cli::try_parse_from(["arum", "--launch", "x", "--", "y"]).is_err());
    }

    #[test]
    fn the_run_parser_knows_every_subcommand_name() {
        use clap::CommandFactory;
        let mut names: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        names.push("help".into());
        let mut known: Vec<String> = SUBCOMMANDS.iter().map(|s| s.to_string()).collect();
        names.sort();
        known.sort();
        assert_eq!(names, known);
    }

    #[test]
    fn the_run_parser_gives_what_the_full_parser_gives() {
        let os = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for args in [
            &["arum", "--", "true"][..],
            &[
                "arum",
                "-e",
                "cycles,task-clock",
                "-I",
                "100",
                "--",
                "./app",
                "-h",
            ],
            &[
                "arum", "--format", "json", "-o", "r.json", "--launch", "app -t 2",
            ],
            &[
                "arum",
                "--ambient=250ms",
                "-F",
                "f,libc:malloc",
                "--per-task",
                "--",
                "x",
            ],
            &[
                "arum", "-a", "-C", "0-1", "--strict", "--", "sh", "-c", "info",
            ],
            // Series options: the run's parser refuses them, the full one parses them.
            &["arum", "--env", "A=1", "-e", "task-clock", "--", "x"],
            &["arum", "-r", "3", "--confidence", "95%", "--", "x"],
            &["arum", "-l", "a", "-l", "b", "--export-json", "s.json"],
        ] {
            assert!(is_plain_run(&os(args)), "{args:?}");
            let fast = Cli::parse_args(os(args)).unwrap();
            let full = Cli::try_parse_from(args).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{args:?}");
        }
        for args in [
            &["arum", "info"][..],
            &["arum", "--help"],
            &["arum", "-V"],
            &["arum", "-e", "x", "list"],
        ] {
            assert!(!is_plain_run(&os(args)), "{args:?}");
        }
        // What the run's parser refuses gets the full parser's message.
        for args in [
            &["arum", "--bogus", "--", "x"][..],
            &["arum"],
            &["arum", "xz", "-9"],
        ] {
            let fast = Cli::parse_args(os(args)).unwrap_err().to_string();
            let full = Cli::try_parse_from(args).unwrap_err().to_string();
            assert_eq!(fast, full, "{args:?}");
        }
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
