//! The indirect cost of a context switch for a working set (the paper's §5.2 and Figure 5):
//! the work one thread walking its working set does in T, against the total work of ten such
//! threads sharing the same CPU for T. Work lost can only be switch overhead, so per switch
//!
//! ```text
//!   C = (W1 - W10) / W1 · T / N10
//! ```
//!
//! with N10 the context switches seen in the ten-thread run. Each trial pairs a one-thread and
//! a ten-thread run back to back; the mean over trials comes with a 95% t-based confidence
//! interval, as in the paper (15 trials by default).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::analysis::stats::MeanCi;
use crate::analysis::{switches, timeline::Timeline};
use crate::error::Error;
use crate::experiment::{Experiment, GapChoice, Priority, ThreadSpec, TimerKind, Workload};
use crate::threads;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub sizes: Vec<usize>,
    pub trials: usize,
    pub threads: usize,
    #[serde(with = "crate::experiment::secs")]
    pub duration: Duration,
    pub cpu: usize,
    pub gap: GapChoice,
    pub records: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// Passes over the working set by the single thread.
    pub w1: f64,
    /// Passes by all threads of the many-thread run.
    pub wn: f64,
    /// Context switches between the threads in the many-thread run.
    pub switches: usize,
    /// Seconds per run.
    pub seconds: f64,
    /// C for this trial, in ns (may be negative when noise exceeds the loss).
    pub cost_ns: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeResult {
    pub bytes: usize,
    pub trials: Vec<Trial>,
    /// Mean C with its 95% confidence interval, in ns.
    pub cost_ns: Option<MeanCi>,
    /// Mean fraction of work lost, (W1 - W10) / W1.
    pub work_lost: Option<MeanCi>,
    pub switches_per_second: f64,
}

/// C for one trial.
pub fn cost_ns(w1: f64, wn: f64, seconds: f64, switches: usize) -> f64 {
    if w1 <= 0.0 || switches == 0 {
        return f64::NAN;
    }
    (w1 - wn) / w1 * seconds * 1e9 / switches as f64
}

fn experiment(plan: &Plan, bytes: usize, n: usize) -> Experiment {
    Experiment {
        duration: plan.duration,
        threads: (0..n)
            .map(|_| ThreadSpec {
                workload: Workload::CpuScan { bytes },
                priority: Priority::NORMAL,
                affinity: Some(vec![plan.cpu]),
                timer: TimerKind::Nanosleep,
                start: Duration::ZERO,
                finish: None,
            })
            .collect(),
        records: plan.records,
        gap: plan.gap,
    }
}

/// Runs `trial` pairs of experiments per size, calling `progress` after each trial.
pub fn run(plan: &Plan, mut progress: impl FnMut(usize, usize)) -> Result<Vec<SizeResult>, Error> {
    if plan.threads < 2 {
        return Err(Error::Options(
            "--switch-cost-threads must be at least 2: switches need company".into(),
        ));
    }
    if plan.trials < 2 {
        return Err(Error::Options(
            "--trials must be at least 2 for a confidence interval".into(),
        ));
    }
    let seconds = plan.duration.as_secs_f64();
    let mut out = Vec::new();
    for &bytes in &plan.sizes {
        let mut trials = Vec::new();
        for k in 0..plan.trials {
            let one = threads::run(&experiment(plan, bytes, 1))?;
            let many_exp = experiment(plan, bytes, plan.threads);
            let many = threads::run(&many_exp)?;
            let w1: f64 = one.threads.iter().map(|t| t.work.passes).sum();
            let wn: f64 = many.threads.iter().map(|t| t.work.passes).sum();
            let n = switches::count(&Timeline::new(&many.records, plan.threads));
            trials.push(Trial {
                w1,
                wn,
                switches: n,
                seconds,
                cost_ns: cost_ns(w1, wn, seconds, n),
            });
            progress(bytes, k + 1);
        }
        let costs: Vec<f64> = trials
            .iter()
            .map(|t| t.cost_ns)
            .filter(|c| c.is_finite())
            .collect();
        let lost: Vec<f64> = trials.iter().map(|t| (t.w1 - t.wn) / t.w1).collect();
        out.push(SizeResult {
            bytes,
            cost_ns: MeanCi::of(&costs, 0.95),
            work_lost: MeanCi::of(&lost, 0.95),
            switches_per_second: trials.iter().map(|t| t.switches as f64).sum::<f64>()
                / (trials.len() as f64 * seconds),
            trials,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_formula() {
        // 1% of the work lost over 45 s with 900 switches: 0.01 · 45 s / 900 = 500 µs each.
        let c = cost_ns(1000.0, 990.0, 45.0, 900);
        assert!((c - 500_000.0).abs() < 1e-6, "{c}");
        assert!(cost_ns(1000.0, 990.0, 45.0, 0).is_nan());
    }
}
