//! arum's own failures: each names the problem and the fix in one line, and maps to an exit code.

use std::path::PathBuf;

/// arum failed before or around the measured program (exit status 125).
pub const EXIT_ARUM_FAILED: i32 = 125;
/// The program was found but could not be executed.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// The program was not found.
pub const EXIT_NOT_FOUND: i32 = 127;
/// A usage error (as clap reports its own).
pub const EXIT_USAGE: i32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum ArumError {
    #[error("cannot split --launch string {line:?}: {why}; quote it as for a POSIX shell, or use `-- CMD ARGS...`")]
    BadLaunch { line: String, why: String },

    #[error("{word} is a shell variable assignment, not a program: add --shell to run the line through /bin/sh, or write `env {word} CMD ...`")]
    ShellAssignment { word: String },

    #[error("cannot run '{program}': {}", .source.desc())]
    Exec {
        program: String,
        #[source]
        source: nix::Error,
    },

    #[error("cannot write {path}: {source}; choose a writable path with {option}")]
    Output {
        path: PathBuf,
        #[source]
        source: std::io::Error,
        /// The option that named the path, for the fix.
        option: &'static str,
    },

    #[error("cannot read --events-file {path}: {source}; give a readable file with one event name per line")]
    EventsFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("cannot start the program: {what}: {source}; check the system's process limits (ulimit -u) and free memory")]
    Launch {
        what: &'static str,
        #[source]
        source: nix::Error,
    },

    /// `--cpu` could not be parsed, or CPUID could not identify the processor.
    #[error("{0}")]
    Cpu(String),

    #[error(transparent)]
    EventTable(#[from] arum_events::table::TableError),

    /// -M or `list --metrics` named no metric or group of this CPU.
    #[error("{0}")]
    Metrics(String),

    #[error("no event table for CPU {key} ({what}); `arum list --cpus` shows the supported ones, --cpu picks one")]
    NoTable { key: String, what: String },

    #[error("bad -C/--cpus {list:?}: {why}")]
    BadCpuList { list: String, why: String },

    #[error("CPU {cpu} in -C/--cpus is not online; online CPUs: {online}")]
    CpuNotOnline { cpu: u32, online: String },

    /// A name that no event table and no kernel event has.
    #[error("{message}")]
    UnknownEvent { message: String },

    /// `--strict`: an event could not be resolved or placed.
    #[error("hardware counting is off: {reason} (--strict)")]
    HardwareOff { reason: String },

    /// `--strict`: the kernel or the module refused an event.
    #[error("cannot count {event}: {why} (--strict)")]
    NotCounted { event: String, why: String },

    #[error("system-wide counting (--scope system) needs perf_event_paranoid <= 0 (it is {paranoid}) or CAP_PERFMON; run `sysctl kernel.perf_event_paranoid=0` as root, or measure with --scope app")]
    SystemScopeDenied { paranoid: String },

    #[error("cannot start system-wide counting: {}", .0.desc())]
    CountingStart(nix::Error),

    /// The /dev/arum module could not be used for this request.
    #[error("{0}")]
    Kmod(String),

    /// A --setup, --prepare or --cleanup command of a series failed.
    #[error("the --{what} command {command:?} {why}; fix it, or leave out --{what}")]
    Hook {
        what: &'static str,
        command: String,
        why: String,
    },

    /// A report or series given to `arum compare` or `arum merge` could not be used.
    #[error("{path}: {why}")]
    Input { path: PathBuf, why: String },
    /// `--enable-delayacct` could not turn delay accounting on.
    #[error("{0}")]
    DelayAccounting(String),

    /// The noise probe could not start (the message names the CPU or the reason).
    #[error("{0}")]
    NoiseProbe(String),

    /// Options that do not go together (exit status 2, as clap's own usage errors).
    #[error("{0}")]
    Usage(String),

    /// `-F/--functions`: a name that matches nothing, a library that cannot be found, no
    /// permission with --strict.
    #[error("{0}")]
    Functions(String),

    /// `--probe-engine bpf` where the in-kernel engine cannot run.
    #[error("{0}")]
    Engine(String),

    #[error("cannot read --functions-file {path}: {source}; give a readable file with one function name per line")]
    FunctionsFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// `arum suite`: what the machine could not give the suite (a network namespace, netem, a
    /// server that accepts, its set-up); the message names it and the fix.
    #[error("arum suite: {0}")]
    Suite(String),

    /// The run history's store (`--save`, `arum history`, `compare history:...`).
    #[error(transparent)]
    History(#[from] arum_history::HistoryError),

    /// A broken invariant of arum itself.
    #[error("internal error: {0}; please report it")]
    Internal(String),
}

impl ArumError {
    /// The documented exit status for this failure (see `arum --help`).
    pub fn exit_code(&self) -> i32 {
        match self {
            ArumError::Exec { source, .. } if *source == nix::Error::ENOENT => EXIT_NOT_FOUND,
            ArumError::Exec { .. } => EXIT_CANNOT_EXECUTE,
            ArumError::Usage(_) => EXIT_USAGE,
            ArumError::History(arum_history::HistoryError::Selection(_)) => EXIT_USAGE,
            _ => EXIT_ARUM_FAILED,
        }
    }
}
