//! A measured run's options.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::series::SeriesArgs;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ScopeArg {
    #[default]
    /// Only the launched program, its threads and children, per CPU.
    App,
    /// Everything on the selected CPUs (needs perf_event_paranoid <= 0 or CAP_PERFMON).
    System,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum BackendChoice {
    #[default]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ReportFormat {
    #[default]
    Text,
    Json,
    Csv,
}

/// A measured run's options; `S`, the options of repeated runs (a parameter because the run's
/// own parser, `run_parser`, leaves them out). The options come in groups of a few, each
/// flattened in: the run's parser builds only the groups a command line names, and clap's
/// derive builds a group's definitions in a function of its own (one function building them all
/// kept every definition, 600 bytes each, several copies, in one stack frame of 50 KiB, a dozen
/// fresh pages touched by every run: `benchmarks/overhead.sh` prints arum's page faults). A new
/// group goes into `run_parser::GROUPS` too (its tests say so).
//
// A flag here is an `Option<bool>`, `Some(true)` when given (no value: `num_args = 0`,
// `default_missing_value = "true"`), not a `bool` flag of clap's: clap gives each of those a
// default of "false" that it parses as if it had been given, on every run, which made twelve
// flags about a tenth of arum's instructions in a run of `true` (docs/launch-overhead.md).
#[derive(Debug, Args)]
pub struct RunArgs<S: Args = SeriesArgs> {
    #[command(flatten)]
    pub program: ProgramArgs,

    #[command(flatten)]
    pub report: ReportArgs,

    #[command(flatten)]
    pub events: EventArgs,

    #[command(flatten)]
    pub counting: CountingArgs,

    #[command(flatten)]
    pub functions: FunctionArgs,

    #[command(flatten)]
    pub syscalls: SyscallArgs,

    #[command(flatten)]
    pub watch: WatchArgs,

    #[command(flatten)]
    pub strictness: StrictArgs,

    #[command(flatten)]
    pub series: S,
}

/// The program: one string to split, or the words after `--`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("program").required(true).args(["launch", "argv"]))]
pub struct ProgramArgs {
    /// Program and arguments as one string, split into words as a POSIX shell would
    /// (quotes, backslash escapes); no shell is run unless --shell is given. Repeat it to
    /// benchmark several commands against each other.
    #[arg(short = 'l', long, value_name = "\"CMD ARGS\"")]
    pub launch: Vec<String>,

    /// Run the --launch string through `/bin/sh -c` instead of splitting it.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub shell: Option<bool>,

    /// The program and its arguments, after `--`, taken word for word.
    #[arg(last = true, value_name = "CMD ARGS")]
    pub argv: Vec<String>,
}

/// How strictly the events are judged.
#[derive(Debug, Args, Default)]
pub struct StrictArgs {
    /// Treat a problem with the events (another CPU's event, unsupported CPU, too many events,
    /// an event the machine cannot count) as an error (exit 125) instead of a warning; a name
    /// no CPU has is an error without it.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub strict: Option<bool>,
}

/// What the report is and where it goes.
#[derive(Debug, Args, Default)]
pub struct ReportArgs {
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
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub self_timing: Option<bool>,
}

/// The events to count.
#[derive(Debug, Args, Default)]
pub struct EventArgs {
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
}

/// Where and how the events are counted.
#[derive(Debug, Args, Default)]
pub struct CountingArgs {
    /// Count only the launched process tree (`app`, per CPU) or everything on the CPUs (`system`).
    #[arg(long, value_enum, default_value_t = ScopeArg::App)]
    pub scope: ScopeArg,

    /// Count everything on every CPU: the same as --scope system.
    #[arg(
        short = 'a',
        long = "all-cpus",
        num_args = 0,
        default_missing_value = "true"
    )]
    pub all_cpus: Option<bool>,

    /// Count on these CPUs only (Linux cpulist syntax, e.g. 0-3,8).
    #[arg(short = 'C', long = "cpus", value_name = "LIST")]
    pub cpus: Option<String>,

    /// Count the program per CPU and print every CPU's row, however many CPUs (on more than 8,
    /// the default is one counter per event, totals only, and a text report that folds rows).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub per_cpu: Option<bool>,

    /// Count the program with one counter per event on every CPU, totals only (as perf stat):
    /// the default beyond 8 CPUs, here on any machine.
    #[arg(long, conflicts_with_all = ["per_cpu", "cpus", "all_cpus"], num_args = 0, default_missing_value = "true")]
    pub totals: Option<bool>,

    /// Open events pinned, never multiplexed; events that could not get a counter are reported.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub no_multiplex: Option<bool>,

    /// Also read the counters every MS milliseconds while the program runs (a time series);
    /// a duration with a unit (250ms, 1s) works too. At least 1 ms.
    #[arg(short = 'I', long = "interval", value_name = "MS", value_parser = crate::values::interval_ms)]
    pub interval: Option<u64>,

    /// Counting back-end: perf_event_open (`perf`) or the /dev/arum module (`kmod`).
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
}

/// Function timing (`-F`).
#[derive(Debug, Args, Default)]
pub struct FunctionArgs {
    /// Time these functions of the program (uprobes): NAME in its executable, LIB:NAME in a
    /// library it loads (libc:malloc), PATH:NAME in a file; globs (parse_*) and demangled Rust and
    /// C++ names (mycrate::parse, ns::Class::method) work. Comma-separated, repeatable.
    #[arg(short = 'F', long = "functions", value_name = "LIST")]
    pub functions: Vec<String>,

    /// Read function names from FILE, one or more per line (`#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub functions_file: Option<PathBuf>,

    /// Keep counting every call of a throttled function exactly (its entry probe stays; the
    /// report states the cost) instead of sampling them.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub exact_counts: Option<bool>,

    /// The most estimated probe overhead allowed, in percent of the program's CPU time; the
    /// costliest functions are throttled first (default 2).
    #[arg(long, value_name = "PCT", value_parser = crate::values::percent)]
    pub probe_budget: Option<f64>,

    /// Time every call of every function: no throttling, whatever it costs.
    #[arg(long, conflicts_with_all = ["exact_counts", "probe_budget"], num_args = 0, default_missing_value = "true")]
    pub no_throttle: Option<bool>,
}

/// System calls and the ALMT views.
#[derive(Debug, Args, Default)]
pub struct SyscallArgs {
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

    /// With --syscalls: build the ALMT views (the session's time line, tasks, the table of time
    /// per process and probe), which read every call in order from per-CPU records; implied by
    /// --task-begin/--task-end. Without it only counts are kept (in the kernel where BPF runs).
    #[arg(
        long,
        requires = "syscalls",
        num_args = 0,
        default_missing_value = "true"
    )]
    pub views: Option<bool>,

    /// Where system calls and --per-task's CPU times are counted: bpf (in the kernel, complete
    /// at any rate; needs CAP_BPF and CAP_PERFMON), perf (system calls from records paired in
    /// user space, which a full buffer loses; CPU times from exit records), or auto (bpf where it
    /// can run, else perf).
    #[arg(long, value_enum, value_name = "ENGINE", default_value = "auto")]
    pub probe_engine: ProbeEngineArg,
}

/// What else is watched while the program runs.
#[derive(Debug, Args, Default)]
pub struct WatchArgs {
    /// Also record what the rest of the machine does (CPU, interrupts, memory, paging, disks,
    /// network) and the launched tree, every INTERVAL, a duration with its unit (default 1s;
    /// 250ms; at least 1ms; 0 = at start and end only).
    #[arg(long, value_name = "INTERVAL", num_args = 0..=1, require_equals = true, default_missing_value = "1s", value_parser = crate::values::ambient_interval)]
    pub ambient: Option<std::time::Duration>,

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
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub enable_delayacct: Option<bool>,

    /// Do not sample the tree's memory: the peak is ru_maxrss of the largest process (or cgroup
    /// v2's memory.peak where the memory controller is there), and the sampler's cost is gone.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub no_memory_sampling: Option<bool>,
}

impl<S: Args> RunArgs<S> {
    /// The same options with `series` in place of these series options.
    pub(super) fn with_series<T: Args>(self, series: T) -> RunArgs<T> {
        // Each field is named once; destructured without `..`, so a new one is a compile error
        // here until it is passed on.
        macro_rules! moved {
            ($($field:ident,)*) => {{
                let RunArgs { $($field,)* series: _ } = self;
                RunArgs { $($field,)* series }
            }};
        }
        moved!(program, report, events, counting, functions, syscalls, watch, strictness,)
    }
}

/// `--probe-engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ProbeEngineArg {
    #[default]
    Auto,
    Bpf,
    Perf,
}

/// `--noise-probe`'s CPUs (empty: every CPU).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoiseCpus(pub Vec<usize>);

fn noise_cpus(s: &str) -> Result<NoiseCpus, String> {
    arum_hourglass::kernel::parse_cpu_list(s)
        .map(NoiseCpus)
        .ok_or_else(|| format!("{s:?} is not a CPU list (e.g. 0,2-3)"))
}
