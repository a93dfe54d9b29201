//! `arum hourglass`'s command line, as the original's: global options, then per-thread options
//! that apply to the thread chosen by the latest `-t I` (or to all after `-a`, or before any
//! `-t`). The order matters, so the per-thread options are read with their positions (clap's
//! indices) and handed on in that order, as `arum_hourglass::Directive`s the library replays.

use std::path::PathBuf;
use std::time::Duration;

use arum_hourglass::experiment::{working_set, Priority, TimerKind};
use arum_hourglass::kernel::parse_cpu_list;
use arum_hourglass::{
    Directive, Format, Outputs, Request, RunParameters, SvgWindow, SwitchCostParameters,
};
use arum_units::duration;
use clap::{Arg, ArgAction, ArgMatches, ValueEnum};

const AFTER_HELP: &str = "\
Per-thread options apply to the thread chosen by the latest -t, to all threads after -a (until
the next -t), and to all threads when they come before any -t.

Models (-w): CPU | CPU_SCAN SIZE | CPU_YIELD AMOUNT | CPU_SCAN_YIELD SIZE AMOUNT |
  PERIODIC AMOUNT PERIOD | CPU_PERIODIC AMOUNT PERIOD | LAT PERIOD
Priorities (-p): IDLE (SCHED_IDLE), LOW, NORMAL, HIGH, HIGHEST (nice 10, 0, -10, -20),
  RTLOW, RTMED, RTHIGH (SCHED_FIFO 10, 50, 90), NICE:N, FIFO:N
Timers (-i): NANOSLEEP (absolute clock_nanosleep, the default), TIMERFD, BUSY
Times: 3m, 1.5s, 1020ms, 87.0us. Sizes: 32K, 1.5M.

Examples:
  arum hourglass -n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH
  arum hourglass -n 1 -d 20s -t 0 -p RTHIGH -w PERIODIC 4ms 5ms --svg trace.svg
  arum hourglass -n 1 -d 6m -t 0 -p RTHIGH -w LAT 5.3ms
  arum hourglass --switch-cost 8K,64K,1M --trials 15 -d 2s";

fn time(s: &str) -> Result<Duration, String> {
    Ok(duration::parse(s)?)
}

/// `arum hourglass`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct HourglassArgs {
    /// Number of threads to create.
    #[arg(
        short = 'n',
        long = "threads",
        value_name = "N",
        required_unless_present = "switch_cost"
    )]
    pub threads: Option<usize>,

    /// Length of the run (with --switch-cost: of each run).
    #[arg(short = 'd', long, value_name = "TIME", default_value = "10s", value_parser = time)]
    pub duration: Duration,

    /// Records the trace buffer holds (32 bytes each, allocated and locked before the run).
    #[arg(short = 'e', long, value_name = "N", default_value_t = 1_000_000)]
    pub records: usize,

    /// The shortest interruption recorded as a gap [default: --gap-factor times the slowest
    /// thread's loop iteration, measured at start].
    #[arg(long, value_name = "TIME", value_parser = time)]
    pub gap: Option<Duration>,

    /// GAP in loop iterations, when --gap is not given.
    #[arg(long, value_name = "X", default_value_t = 10.0)]
    pub gap_factor: f64,

    /// Let the CPUs enter deep idle states between a latency thread's wake-ups. By default a run
    /// with LAT threads holds /dev/cpu_dma_latency at 0 (root), as cyclictest does without
    /// --laptop, so that waking from idle does not add the idle state's exit latency.
    #[arg(long)]
    pub deep_idle: bool,

    /// Also print every interval ("trace:" lines: thread, start, end, length, gap before it,
    /// all in ms from the start, then CPU and why it ended) and latency sample ("latlate:", µs).
    #[arg(long)]
    pub trace: bool,

    /// Also print the raw trace in TSC cycles, not based at zero ("raw:" lines).
    #[arg(short = 'c', long)]
    pub raw: bool,

    /// Output format: tagged text lines, or one JSON document with everything.
    #[arg(long, value_enum, default_value_t = HourglassFormat::Text)]
    pub format: HourglassFormat,

    /// Write the output to FILE instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Draw the execution trace of a window as SVG into FILE (one row per thread).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Start of the SVG window, from the start of the run.
    #[arg(long, value_name = "TIME", default_value = "0s", value_parser = time)]
    pub svg_from: Duration,

    /// Length of the SVG window.
    #[arg(long, value_name = "TIME", default_value = "100ms", value_parser = time)]
    pub svg_span: Duration,

    /// Measure the cost of a context switch for these working-set sizes instead (the paper's
    /// Figure 5 method: one thread against --switch-cost-threads threads, --trials times).
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = working_set, conflicts_with = "threads")]
    pub switch_cost: Vec<usize>,

    /// Trials per working-set size for --switch-cost.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub trials: usize,

    /// Threads of the many-thread run of --switch-cost.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub switch_cost_threads: usize,

    /// The CPU every --switch-cost thread runs on [default: the last CPU this process may use].
    #[arg(long, value_name = "CPU")]
    pub switch_cost_cpu: Option<usize>,

    #[command(flatten)]
    pub per_thread: PerThread,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HourglassFormat {
    Text,
    Json,
}

/// The per-thread options, in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerThread {
    pub directives: Vec<Directive>,
}

const HEADING: &str = "Per-thread options";

impl clap::Args for PerThread {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let append = |id: &'static str, short: char, long: &'static str| {
            Arg::new(id)
                .short(short)
                .long(long)
                .action(ArgAction::Append)
                .help_heading(HEADING)
        };
        cmd.arg(
            append("thread", 't', "thread")
                .value_name("I")
                .value_parser(clap::value_parser!(usize))
                .help("Choose thread I (0-based) for the per-thread options that follow"),
        )
        .arg(
            append("all", 'a', "all")
                .num_args(0)
                .default_missing_value("all")
                .help("The per-thread options that follow apply to all threads (until -t)"),
        )
        .arg(
            append("workload", 'w', "workload")
                .value_names(["MODEL", "ARG"])
                .num_args(1..=3)
                .help("Execution model and its arguments [default: CPU]"),
        )
        .arg(
            append("priority", 'p', "priority")
                .value_name("PRIORITY")
                .value_parser(Priority::parse)
                .help("Scheduling priority [default: NORMAL]"),
        )
        .arg(
            append("timer", 'i', "timer")
                .value_name("TIMER")
                .value_parser(TimerKind::parse)
                .help("Timer that blocking models wait on [default: NANOSLEEP]"),
        )
        .arg(
            append("affinity", 'A', "affinity")
                .value_name("CPUS")
                .value_parser(|s: &str| {
                    parse_cpu_list(s)
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| format!("{s:?} is not a CPU list: write e.g. 1 or 0-3,8"))
                })
                .help("CPUs the thread may run on (a Linux CPU list) [default: the process's]"),
        )
        .arg(
            append("start", 's', "start")
                .value_name("TIME")
                .value_parser(time)
                .help("Start the thread TIME into the run"),
        )
        .arg(
            append("finish", 'f', "finish")
                .value_name("TIME")
                .value_parser(time)
                .help("Stop the thread TIME into the run [default: the end]"),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for PerThread {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut at: Vec<(usize, Directive)> = Vec::new();
        collect(m, "thread", &mut at, |v: Vec<usize>| {
            Directive::Select(v[0])
        });
        collect(m, "all", &mut at, |_: Vec<String>| Directive::All);
        collect(m, "workload", &mut at, Directive::Workload);
        collect(m, "priority", &mut at, |v: Vec<Priority>| {
            Directive::Priority(v[0])
        });
        collect(m, "timer", &mut at, |v: Vec<TimerKind>| {
            Directive::Timer(v[0])
        });
        collect(m, "affinity", &mut at, |mut v: Vec<Vec<usize>>| {
            Directive::Affinity(v.remove(0))
        });
        collect(m, "start", &mut at, |v: Vec<Duration>| {
            Directive::Start(v[0])
        });
        collect(m, "finish", &mut at, |v: Vec<Duration>| {
            Directive::Finish(v[0])
        });
        at.sort_by_key(|(i, _)| *i);
        Ok(PerThread {
            directives: at.into_iter().map(|(_, d)| d).collect(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Each occurrence of `id`, with the position of its first value.
fn collect<T: Clone + Send + Sync + 'static>(
    m: &ArgMatches,
    id: &str,
    out: &mut Vec<(usize, Directive)>,
    make: impl Fn(Vec<T>) -> Directive,
) {
    let (Some(occurrences), Some(indices)) = (m.get_occurrences::<T>(id), m.indices_of(id)) else {
        return;
    };
    let mut indices = indices;
    for occurrence in occurrences {
        let values: Vec<T> = occurrence.cloned().collect();
        let first = indices.next().unwrap_or(usize::MAX);
        for _ in 1..values.len() {
            indices.next();
        }
        out.push((first, make(values)));
    }
}

impl HourglassArgs {
    /// What clap parsed, as the library's request: field for field, nothing decided here.
    pub fn request(self) -> Request {
        Request {
            run: RunParameters {
                threads: self.threads,
                duration: self.duration,
                records: self.records,
                gap: self.gap,
                gap_factor: self.gap_factor,
                deep_idle: self.deep_idle,
                directives: self.per_thread.directives,
            },
            switch_cost: (!self.switch_cost.is_empty()).then_some(SwitchCostParameters {
                sizes: self.switch_cost,
                trials: self.trials,
                threads: self.switch_cost_threads,
                cpu: self.switch_cost_cpu,
            }),
            outputs: Outputs {
                format: match self.format {
                    HourglassFormat::Text => Format::Text,
                    HourglassFormat::Json => Format::Json,
                },
                path: self.output,
                trace: self.trace,
                raw: self.raw,
                svg: self.svg.map(|path| SvgWindow {
                    path,
                    from: self.svg_from,
                    span: self.svg_span,
                }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arum_hourglass::experiment::{Experiment, Workload};
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: HourglassArgs,
    }

    fn request(line: &str) -> Result<Request, String> {
        let argv = std::iter::once("hourglass").chain(line.split_whitespace());
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        Ok(cli.args.request())
    }

    fn parse(line: &str) -> Result<Experiment, String> {
        request(line)?.run.experiment().map_err(|e| e.to_string())
    }

    #[test]
    fn the_papers_command_lines() {
        let e = parse("-n 3 -d 5s -t 0 -p LOW -t 1 -p NORMAL -t 2 -p HIGH").unwrap();
        let p: Vec<Priority> = e.threads.iter().map(|t| t.priority).collect();
        assert_eq!(p, [Priority::LOW, Priority::NORMAL, Priority::HIGH]);
        assert_eq!(e.duration, Duration::from_secs(5));

        let e = parse("-n 2 -t 0 -p RTMED -w PERIODIC 3ms 8ms -i TIMERFD -t 1 -p RTLOW -w PERIODIC 17ms 33ms -i NATIVE")
            .unwrap();
        assert_eq!(
            e.threads[0].workload,
            Workload::Periodic {
                amount: Duration::from_millis(3),
                period: Duration::from_millis(8)
            }
        );
        assert_eq!(e.threads[0].timer, TimerKind::Timerfd);
        assert_eq!(e.threads[1].timer, TimerKind::Nanosleep);
        assert_eq!(e.threads[1].priority, Priority::RTLOW);

        let e = parse("-d 60s -n 10 -a -p NORMAL -w CPU_YIELD 0.9ms").unwrap();
        assert!(e.threads.iter().all(|t| t.workload
            == Workload::CpuYield {
                amount: Duration::from_micros(900)
            }));
    }

    #[test]
    fn directives_keep_the_command_lines_order() {
        let r =
            request("-n 3 -p LOW -t 1 -p HIGH -a -A 1 -t 2 -w LAT 1ms -s 1s -f 2s -d 3s").unwrap();
        let words = |w: &[&str]| Directive::Workload(w.iter().map(|s| s.to_string()).collect());
        assert_eq!(
            r.run.directives,
            [
                Directive::Priority(Priority::LOW),
                Directive::Select(1),
                Directive::Priority(Priority::HIGH),
                Directive::All,
                Directive::Affinity(vec![1]),
                Directive::Select(2),
                words(&["LAT", "1ms"]),
                Directive::Start(Duration::from_secs(1)),
                Directive::Finish(Duration::from_secs(2)),
            ]
        );
        let e = r.run.experiment().unwrap();
        assert_eq!(e.threads[0].priority, Priority::LOW);
        assert_eq!(e.threads[1].priority, Priority::HIGH);
        assert!(e.threads.iter().all(|t| t.affinity == Some(vec![1])));
    }

    #[test]
    fn outputs_and_the_switch_cost_method() {
        let r =
            request("-n 1 --format json -o out.json --svg t.svg --svg-from 1s --trace -c").unwrap();
        assert_eq!(r.switch_cost, None);
        assert_eq!(r.outputs.format, Format::Json);
        assert_eq!(r.outputs.path, Some(PathBuf::from("out.json")));
        assert!(r.outputs.trace && r.outputs.raw);
        assert_eq!(
            r.outputs.svg,
            Some(SvgWindow {
                path: PathBuf::from("t.svg"),
                from: Duration::from_secs(1),
                span: Duration::from_millis(100),
            })
        );
        let r = request("--switch-cost 8K,1.5M --trials 3 --switch-cost-cpu 1 -d 2s").unwrap();
        assert_eq!(
            r.switch_cost,
            Some(SwitchCostParameters {
                sizes: vec![8192, 3 << 19],
                trials: 3,
                threads: 10,
                cpu: Some(1),
            })
        );
        assert_eq!(r.run.duration, Duration::from_secs(2));
        assert_eq!(r.outputs.path, None);
    }

    #[test]
    fn bad_options_name_the_fix() {
        let cases = [
            ("-n 2 -t 2 -p LOW", "numbered 0 to 1"),
            ("-n 1 -w PERIODIC 6ms 5ms", "exceeds PERIOD"),
            ("-n 1 -w PERIODIC 4ms", "PERIODIC 4ms 5ms"),
            ("-n 1 -w SPIN", "unknown model"),
            ("-n 1 -p URGENT", "RTHIGH"),
            ("-n 1 -s 2s -d 1s", "starts at 2 s"),
            ("-n 0", "between 1 and 4096"),
            ("-n 1 -A 3-1", "CPU list"),
            ("-n 1 -w LAT 5", "unit"),
            ("-n 1 -d 5", "\"5\" has no unit"),
            ("-n 1 --gap 0ns", "every loop iteration"),
            ("-n 1 --gap 0", "every loop iteration"),
            ("--switch-cost 32", "\"32\" has no unit"),
            ("--switch-cost 0K", "between 1 byte and 1 TiB"),
        ];
        for (line, want) in cases {
            let e = parse(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
        assert!(parse("-d 1s").unwrap_err().contains("--threads"));
        assert!(request("-n 1 --switch-cost 8K")
            .unwrap_err()
            .contains("cannot be used with"));
    }
}
