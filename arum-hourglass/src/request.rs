//! What `arum hourglass` is asked to do, as plain data: the run's parameters with its per-thread
//! directives in the order they were given, the switch-cost method's parameters, and where the
//! output goes. A command line (the `arum` binary's) fills one in; `replay` turns the run's
//! parameters into an [`Experiment`](crate::experiment::Experiment).

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Error;
use crate::experiment::{GapChoice, Priority, TimerKind};
use crate::switch_cost::Plan;

/// One `arum hourglass`.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub run: RunParameters,
    /// The paper's Figure 5 method instead of one run (`None`: one run of `run`).
    pub switch_cost: Option<SwitchCostParameters>,
    pub outputs: Outputs,
}

/// One run; with the switch-cost method, what each of its runs shares.
#[derive(Debug, Clone, PartialEq)]
pub struct RunParameters {
    /// Threads to create (`None`: not given, which only the switch-cost method allows).
    pub threads: Option<usize>,
    /// Length of the run (with the switch-cost method: of each run).
    pub duration: Duration,
    /// Records the trace buffer holds.
    pub records: usize,
    /// The shortest interruption recorded as a gap (`None`: `gap_factor` loop iterations).
    pub gap: Option<Duration>,
    /// GAP in loop iterations of the slowest thread, when `gap` is `None`.
    pub gap_factor: f64,
    /// `--deep-idle`: leave the CPUs' idle states alone during a latency run.
    pub deep_idle: bool,
    /// The per-thread options, in the order given.
    pub directives: Vec<Directive>,
}

/// One per-thread option. Each applies to the thread chosen by the latest `Select`, to all
/// threads after `All` (until the next `Select`), and to all threads before any `Select`.
#[derive(Debug, Clone, PartialEq)]
pub enum Directive {
    Select(usize),
    All,
    /// A model and its arguments as written (`PERIODIC 4ms 5ms`), read when replayed.
    Workload(Vec<String>),
    Priority(Priority),
    Timer(TimerKind),
    Affinity(Vec<usize>),
    Start(Duration),
    Finish(Duration),
}

/// The switch-cost method: one thread against `threads` threads, `trials` times per size.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchCostParameters {
    /// Working-set sizes in bytes.
    pub sizes: Vec<usize>,
    pub trials: usize,
    pub threads: usize,
    /// The CPU every thread runs on (`None`: the last CPU this process may use).
    pub cpu: Option<usize>,
}

/// What is written, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    pub format: Format,
    /// The output's file (`None`: stdout).
    pub path: Option<PathBuf>,
    /// With text, every interval and latency sample too.
    pub trace: bool,
    /// With text, every record in TSC cycles too.
    pub raw: bool,
    /// The execution trace of a window drawn as SVG.
    pub svg: Option<SvgWindow>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tagged text lines.
    Text,
    /// One JSON document with everything.
    Json,
}

/// `[from, from + span]` of the run, drawn into `path`.
#[derive(Debug, Clone, PartialEq)]
pub struct SvgWindow {
    pub path: PathBuf,
    pub from: Duration,
    pub span: Duration,
}

impl SwitchCostParameters {
    /// The plan of runs, with what they share from `run`.
    pub fn plan(&self, run: &RunParameters) -> Result<Plan, Error> {
        let cpu = match self.cpu {
            Some(c) => c,
            None => *crate::priority::allowed_cpus()
                .last()
                .ok_or_else(|| Error::Machine("no CPU is available to this process".into()))?,
        };
        Ok(Plan {
            sizes: self.sizes.clone(),
            trials: self.trials,
            threads: self.threads,
            duration: run.duration,
            cpu,
            gap: run.gap_choice()?,
            records: run.records,
        })
    }
}

impl RunParameters {
    /// How GAP is chosen: given, or a factor of the slowest loop iteration.
    pub fn gap_choice(&self) -> Result<GapChoice, Error> {
        match self.gap {
            Some(gap) if gap.is_zero() => Err(Error::Options(
                "--gap 0 would make every loop iteration a gap".into(),
            )),
            Some(gap) => Ok(GapChoice::Fixed { gap }),
            None if self.gap_factor >= 1.0 => Ok(GapChoice::Auto {
                factor: self.gap_factor,
            }),
            None => Err(Error::Options(format!(
                "--gap-factor {}: GAP must be at least one loop iteration",
                self.gap_factor
            ))),
        }
    }
}
