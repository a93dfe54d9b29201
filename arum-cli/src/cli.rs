//! Command-line parsing only: what the user asked for, nothing measured yet.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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

#[derive(Debug, Parser)]
#[command(
    name = "arum",
    version = crate::version::VERSION,
    about = "ARUM, the Application Resource Usage Monitor: run a program and report its resource usage",
    after_help = EXIT_CODES_HELP,
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
    "help",
];

/// A single measured run's arguments alone: what `Cli` parses when no subcommand is named,
/// without building the definitions of the subcommands and of the series options (clap builds
/// every definition on every parse: this is most of its cost in a run; leaving out the series
/// options took 40-70 µs off a run on the AMD VM, two builds interleaved run by run, before the
/// start-up order was regenerated). A command line that uses a series option (`--env` among
/// them) is refused here and parsed by the full parser.
#[derive(Debug, Parser)]
#[command(name = "arum")]
struct RunOnly {
    #[command(flatten)]
    run: RunArgs<NoSeries>,
}

/// In place of the series options in [`RunOnly`]: none.
#[derive(Debug, Args)]
struct NoSeries {}

impl Cli {
    /// Parses `args` (the program name first) as `Cli::try_parse_from` does. A plain run is
    /// parsed by the run's own parser; help, version, subcommands and anything that parser
    /// refuses go to the full one, so its messages are the same.
    pub fn parse_args(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
        if is_plain_run(&args) {
            if let Ok(r) = RunOnly::try_parse_from(&args) {
                return Ok(Cli {
                    command: None,
                    run: r.run.with_series(crate::bench::SeriesArgs::default()),
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
    Compare(crate::compare::CompareArgs),
    /// Combine the reports of a parallel job's ranks: per-rank table, totals, spread, imbalance.
    Merge(crate::merge::MergeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(crate::completions::CompletionsArgs),
    /// Print the man page (roff) to stdout.
    Man,
    /// A synthetic real-time application: map when its threads run, infer scheduling behaviour.
    Hourglass(arum_hourglass::Args),
    /// Measure this machine's OS and hardware costs (timer, calls, system calls, tasks, memory, TCP, files).
    Calibrate(arum_calibrate::Args),
    /// Run a test suite (server, client, parameters, netem network conditions) from a TOML file.
    Suite(crate::suite::SuiteArgs),
    /// Render a saved JSON report or series (--export-json) as one self-contained HTML page.
    Html(crate::report::html::saved::HtmlArgs),
}

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

/// Which processor's events to use.
#[derive(Debug, Args, Clone, Default)]
pub struct CpuArgs {
    /// Use the tables of this CPU instead of the detected one: VENDOR-FAMILY-MODEL[-STEPPING],
    /// family decimal and model hex as in the kernel's mapfile (e.g. GenuineIntel-6-55,
    /// AuthenticAMD-25-1, or 6-55 where the family tells the vendor), or a table's name
    /// (`arum list --cpus`, e.g. intel-skylakex).
    #[arg(long, value_name = "SPEC")]
    pub cpu: Option<String>,

    /// Read event tables from DIR before the built-in ones (also ARUM_EVENT_TABLES=DIR).
    #[arg(long, value_name = "DIR")]
    pub event_tables: Option<PathBuf>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// Only the launched program, its threads and children, per CPU.
    App,
    /// Everything on the selected CPUs (needs perf_event_paranoid <= 0 or CAP_PERFMON).
    System,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendChoice {
    /// kmod for system scope when /dev/arum is usable, else perf.
    Auto,
    /// perf_event_open.
    Perf,
    /// The /dev/arum module (counts whole CPUs, like --scope system).
    Kmod,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PerTaskArg {
    /// The process tree and the top threads.
    #[value(hide = true)]
    Top,
    /// Every thread.
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
    Csv,
}

/// A measured run's options; `S`, the options of repeated runs (see [`RunOnly`] for why it is a
/// parameter).
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("program").required(true).args(["launch", "argv"]))]
pub struct RunArgs<S: Args = crate::bench::SeriesArgs> {
    /// Program and arguments as one string, split into words as a POSIX shell would
    /// (quotes, backslash escapes); no shell is run unless --shell is given. Repeat it to
    /// benchmark several commands against each other.
    #[arg(short = 'l', long, value_name = "\"CMD ARGS\"")]
    pub launch: Vec<String>,

    /// Run the --launch string through `/bin/sh -c` instead of splitting it.
    #[arg(long)]
    pub shell: bool,

    /// Write the report to FILE (atomically) instead of stderr.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Report format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,

    /// Also write the report as one self-contained HTML page (plots, collapsible sections; a
    /// series of runs: summaries, distributions, comparisons) to FILE, as -o writes.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Show arum's own set-up and post-processing phases (always recorded in JSON).
    #[arg(long)]
    pub self_timing: bool,

    /// Events to count: aliases (dcache_misses), native names (INST_RETIRED.ANY,
    /// EVENT:UMASK), raw codes (r003c), perf-style terms (cpu/event=0x41,umask=0x1/), software
    /// events (task-clock); `:u`/`:k` count user or kernel only. Space- or comma-separated, repeatable.
    #[arg(short, long = "events", value_name = "LIST")]
    pub events: Vec<String>,

    /// Derived metrics to compute after the run, by name or group (insn_per_cycle, TopdownL1, ...;
    /// `arum list --metrics`): their events are counted too. Comma-separated, repeatable.
    #[arg(short = 'M', long = "metrics", value_name = "NAME|GROUP")]
    pub metrics: Vec<String>,

    /// Read event names from FILE, one per line (`#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub events_file: Option<PathBuf>,

    #[command(flatten)]
    pub cpu: CpuArgs,

    /// Count only the launched process tree (`app`, per CPU) or everything on the CPUs (`system`).
    #[arg(long, value_enum, default_value_t = ScopeArg::App)]
    pub scope: ScopeArg,

    /// Count everything on every CPU: the same as --scope system.
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,

    /// Count on these CPUs only (Linux cpulist syntax, e.g. 0-3,8).
    #[arg(short = 'C', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,

    /// Open events pinned, never multiplexed; events that could not get a counter are reported.
    #[arg(long)]
    pub no_multiplex: bool,

    /// Also read the counters every MS milliseconds while the program runs (a time series);
    /// a duration with a unit (250ms, 1s) works too. At least 1 ms.
    #[arg(short = 'I', long = "interval", value_name = "MS", value_parser = crate::values::interval_ms)]
    pub interval: Option<u64>,

    /// Counting back-end: perf_event_open (`perf`) or the /dev/arum module (`kmod`).
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,

    /// Also record what the rest of the machine does (CPU, interrupts, memory, paging, disks,
    /// network) and the launched tree, every INTERVAL, a duration with its unit (default 1s;
    /// 250ms; at least 1ms; 0 = at start and end only).
    #[arg(long, value_name = "INTERVAL", num_args = 0..=1, require_equals = true, default_missing_value = "1s", value_parser = crate::values::ambient_interval)]
    pub ambient: Option<std::time::Duration>,

    /// Time these functions of the program (uprobes): NAME in its executable, LIB:NAME in a
    /// library it loads (libc:malloc), PATH:NAME in a file; globs (parse_*) and demangled Rust and
    /// C++ names (mycrate::parse, ns::Class::method) work. Comma-separated, repeatable.
    #[arg(short = 'F', long = "functions", value_name = "LIST")]
    pub functions: Vec<String>,

    /// Count and time the system calls of the tree (kernel tracepoints): per call and per
    /// category, calls, errors by errno, durations, bytes. LIST: categories (process, network,
    /// file, memory, all) and call names, comma-separated; all when none is given.
    #[arg(long, value_name = "LIST", num_args = 0..=1, require_equals = true, default_missing_value = "all")]
    pub syscalls: Option<String>,

    /// With --syscalls: a task begins at this probe, a system call (accept4: a task per accepted
    /// descriptor, ended by the end call on it) or a -F function; the report's task views list
    /// the probes nested in each task. The same function as begin and end: each call is a task.
    #[arg(long, value_name = "PROBE", requires_all = ["syscalls", "task_end"])]
    pub task_begin: Option<String>,

    /// With --syscalls: a task ends at this probe (a system call such as close, or a -F function).
    #[arg(long, value_name = "PROBE", requires_all = ["syscalls", "task_begin"])]
    pub task_end: Option<String>,

    /// Read function names from FILE, one or more per line (`#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub functions_file: Option<PathBuf>,

    /// Keep counting every call of a throttled function exactly (its entry probe stays; the
    /// report states the cost) instead of sampling them.
    #[arg(long)]
    pub exact_counts: bool,

    /// The most estimated probe overhead allowed, in percent of the program's CPU time; the
    /// costliest functions are throttled first (default 2).
    #[arg(long, value_name = "PCT", value_parser = crate::values::percent)]
    pub probe_budget: Option<f64>,

    /// Time every call of every function: no throttling, whatever it costs.
    #[arg(long, conflicts_with_all = ["exact_counts", "probe_budget"])]
    pub no_throttle: bool,
    /// Run a gap-detecting probe at the lowest priority (SCHED_IDLE) on these CPUs (a cpulist;
    /// all CPUs when none is given) beside the program: it runs only when a CPU would idle and
    /// reports the interrupts, kernel work and other tasks that took it (arum hourglass's probe).
    #[arg(long = "noise-probe", value_name = "CPUS", num_args = 0..=1, require_equals = true, default_missing_value = "", value_parser = noise_cpus)]
    pub noise_probe: Option<NoiseCpus>,

    /// A record for every process and thread of the tree: CPU, faults, context switches, I/O,
    /// peak memory, delays, start and end. The text report shows the process tree and the top
    /// threads; `--per-task=all` lists every thread (JSON and CSV always have every record).
    #[arg(long = "per-task", visible_alias = "tasks", value_enum, value_name = "all", num_args = 0..=1, require_equals = true, default_missing_value = "top")]
    pub per_task: Option<PerTaskArg>,

    /// With --per-task: turn kernel.task_delayacct on for the run (root only; restored
    /// afterwards), so block I/O, swap-in, reclaim and thrashing delays are accounted.
    #[arg(long)]
    pub enable_delayacct: bool,

    /// Treat a problem with the events (unknown name, unsupported CPU, too many events, an event
    /// the machine cannot count) as an error (exit 125) instead of a warning.
    #[arg(long)]
    pub strict: bool,

    #[command(flatten)]
    pub series: S,

    /// The program and its arguments, after `--`, taken word for word.
    #[arg(last = true, value_name = "CMD ARGS")]
    pub argv: Vec<String>,
}

impl<S: Args> RunArgs<S> {
    /// The same options with `series` in place of these series options.
    fn with_series<T: Args>(self, series: T) -> RunArgs<T> {
        // Each option is named once; destructured without `..`, so a new option is a compile
        // error here until it is passed on.
        macro_rules! moved {
            ($($field:ident,)*) => {{
                let RunArgs { $($field,)* series: _ } = self;
                RunArgs { $($field,)* series }
            }};
        }
        moved!(
            launch,
            shell,
            output,
            format,
            html,
            self_timing,
            events,
            metrics,
            events_file,
            cpu,
            scope,
            all_cpus,
            cpus,
            no_multiplex,
            interval,
            backend,
            ambient,
            functions,
            syscalls,
            task_begin,
            task_end,
            functions_file,
            exact_counts,
            probe_budget,
            no_throttle,
            noise_probe,
            per_task,
            enable_delayacct,
            strict,
            argv,
        )
    }
}

/// The usual mistake behind an argument clap does not know: the program named without `--`
/// before it (`arum xz --version`). `args` are arum's arguments, without its own name.
pub fn hint_for_stray_program(args: &[String]) -> Option<String> {
    let first = args
        .iter()
        .take_while(|a| *a != "--")
        .position(|a| !a.starts_with('-'))?;
    // Option values (`-o FILE`) also do not start with '-': only a word after an option that
    // takes no value, or the very first word, is taken for the program.
    let before = &args[..first];
    let takes_value = before.last().is_some_and(|o| {
        !o.contains('=')
            && [
                "-o",
                "--output",
                "-l",
                "--launch",
                "-e",
                "--events",
                "--events-file",
                "--format",
                "--html",
                "--cpu",
                "--event-tables",
                "--scope",
                "-C",
                "--cpus",
                "-I",
                "--interval",
                "--backend",
                "-r",
                "--runs",
                "-w",
                "--warmup",
                "--min-runs",
                "--max-runs",
                "--prepare",
                "--setup",
                "--cleanup",
                "-D",
                "--parameter-step-size",
                "--env",
                "--confidence",
                "--export-json",
                "--export-csv",
                "--export-markdown",
                "-F",
                "--functions",
                "--functions-file",
                "--probe-budget",
                "--task-begin",
                "--task-end",
            ]
            .contains(&o.as_str())
    });
    if takes_value {
        return None;
    }
    let program = shell_words::join(&args[first..]);
    Some(format!(
        "put the program after `--`: arum {}-- {program}",
        before
            .iter()
            .map(|a| format!("{} ", shell_words::quote(a)))
            .collect::<String>()
    ))
}

/// `--noise-probe`'s CPUs (empty: every CPU).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoiseCpus(pub Vec<usize>);

fn noise_cpus(s: &str) -> Result<NoiseCpus, String> {
    arum_hourglass::kernel::parse_cpu_list(s)
        .map(NoiseCpus)
        .ok_or_else(|| format!("{s:?} is not a CPU list (e.g. 0,2-3)"))
}

impl RunArgs {
    pub fn scope(&self) -> ScopeArg {
        if self.all_cpus {
            ScopeArg::System
        } else {
            self.scope
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::LaunchHow;
    use crate::settings::program;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).expect("parses")
    }

    #[test]
    fn launch_string_is_split_like_a_shell() {
        let cli = parse(&["arum", "--launch", r#"sh -c 'echo "a b"' x\ y"#]);
        let p = program(&cli.run).unwrap();
        assert_eq!(p.argv, ["sh", "-c", r#"echo "a b""#, "x y"]);
        assert_eq!(p.how, LaunchHow::Split);
    }

    #[test]
    fn argv_after_double_dash_is_taken_verbatim() {
        let cli = parse(&["arum", "--", "./app", "-t", "2", "--launch"]);
        let p = program(&cli.run).unwrap();
        assert_eq!(p.argv, ["./app", "-t", "2", "--launch"]);
    }

    #[test]
    fn shell_mode_runs_sh_c() {
        let cli = parse(&["arum", "--shell", "--launch", "echo $HOME | wc -c"]);
        assert_eq!(
            program(&cli.run).unwrap().argv,
            ["/bin/sh", "-c", "echo $HOME | wc -c"]
        );
    }

    #[test]
    fn unbalanced_quote_is_an_error() {
        let cli = parse(&["arum", "--launch", "echo 'oops"]);
        assert!(program(&cli.run).is_err());
    }

    #[test]
    fn a_program_is_required_unless_a_subcommand_is_given() {
        assert!(Cli::try_parse_from(["arum"]).is_err());
        assert!(Cli::try_parse_from(["arum", "info"]).is_ok());
        assert!(Cli::try_parse_from(["arum", "--launch", "x", "--", "y"]).is_err());
    }

    #[test]
    fn a_program_without_double_dash_gets_a_hint() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            hint_for_stray_program(&words("xz --version")).unwrap(),
            "put the program after `--`: arum -- xz --version"
        );
        assert_eq!(
            hint_for_stray_program(&words("--self-timing xz -9 f")).unwrap(),
            "put the program after `--`: arum --self-timing -- xz -9 f"
        );
        assert_eq!(hint_for_stray_program(&words("-o out.json --bogus")), None);
        assert_eq!(hint_for_stray_program(&words("--bogus -- xz")), None);
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
