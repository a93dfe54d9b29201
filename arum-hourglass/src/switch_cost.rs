//! The indirect cost of a context switch for a working set (the paper's §5.2 and Figure 5):
//! the work one thread walking its working set does, against the total work of ten such
//! threads sharing the same CPU. Work lost can only be switch overhead, so per switch
//!
//! ```text
//!   C = (W1 - W10) / W1 · T / N10
//! ```
//!
//! with N10 the context switches seen in the ten-thread run. The paper's machine was otherwise
//! idle; ours is shared, so work is counted per second of CPU the threads received (the
//! kernel's account of their CPU time: the trace's intervals would leave out the slow
//! iterations of a cold cache, above GAP, and so flatter the many-thread run), and switches
//! away to other tasks count in both runs (the gaps in which a thread's context-switch count
//! rose). With r the work and n the switches per CPU second,
//!
//! ```text
//!   r = r0 · (1 - C · n)   for both runs   ⇒   C = (r1 - r10) / (r1 · n10 - r10 · n1)
//! ```
//!
//! which is the paper's formula when the one-thread run is never switched out and Hourglass
//! has the CPU to itself. Each trial pairs a one-thread and a ten-thread run back to back; the
//! mean over trials comes with a 95% t-based confidence interval, as in the paper (15 trials
//! by default).

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

/// What one run of a trial did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Passes over the working set, all threads.
    pub work: f64,
    /// CPU time the kernel accounted to the threads, seconds.
    pub cpu_seconds: f64,
    /// Times a thread was switched out (to another Hourglass thread or any other task).
    pub switches: usize,
    /// Of those, switches between Hourglass threads (N in the paper's formula).
    pub between_threads: usize,
}

impl Side {
    fn of(run: &crate::threads::RunResult, threads: usize) -> Side {
        let t = Timeline::new(&run.records, threads);
        let intervals = t.by_thread.iter().flatten();
        Side {
            work: run.threads.iter().map(|o| o.work.passes).sum(),
            cpu_seconds: run
                .threads
                .iter()
                .map(|o| o.cpu_time_ns as f64)
                .sum::<f64>()
                / 1e9,
            switches: intervals
                .filter(|i| i.ended == crate::trace::End::Gap { switched: true })
                .count(),
            between_threads: switches::count(&t),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub one: Side,
    pub many: Side,
    /// C for this trial, in ns (negative when noise exceeds the loss); none when the lone
    /// thread was switched out more, per CPU second, than the many were.
    pub cost_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeResult {
    pub bytes: usize,
    pub trials: Vec<Trial>,
    /// Mean C with its 95% confidence interval, in ns.
    pub cost_ns: Option<MeanCi>,
    /// Mean fraction of work per CPU second lost, 1 - r10 / r1.
    pub work_lost: Option<MeanCi>,
    /// Switches between the threads of the many-thread run, per second of the run.
    pub switches_per_second: f64,
}

/// C for one trial, in ns: r = work and n = switches per CPU second of each run.
pub fn cost_ns(one: &Side, many: &Side) -> f64 {
    let rate = |x: f64, s: &Side| x / s.cpu_seconds.max(1e-9);
    let (r1, rn) = (rate(one.work, one), rate(many.work, many));
    let (n1, nn) = (
        rate(one.switches as f64, one),
        rate(many.switches as f64, many),
    );
    let denominator = r1 * nn - rn * n1;
    if r1 <= 0.0 || denominator <= 0.0 {
        return f64::NAN;
    }
    (r1 - rn) / denominator * 1e9
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
        deep_idle: false,
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
            // Alternate which run goes first, so that a drift of the machine between the two
            // runs of a trial does not bias C one way.
            let run = |n: usize| -> Result<Side, Error> {
                Ok(Side::of(&threads::run(&experiment(plan, bytes, n))?, n))
            };
            let (one, many) = if k % 2 == 0 {
                let one = run(1)?;
                (one, run(plan.threads)?)
            } else {
                let many = run(plan.threads)?;
                (run(1)?, many)
            };
            trials.push(Trial {
                one,
                many,
                cost_ns: Some(cost_ns(&one, &many)).filter(|c| c.is_finite()),
            });
            progress(bytes, k + 1);
        }
        let costs: Vec<f64> = trials.iter().filter_map(|t| t.cost_ns).collect();
        let per_cpu = |s: &Side| s.work / s.cpu_seconds.max(1e-9);
        let lost: Vec<f64> = trials
            .iter()
            .map(|t| 1.0 - per_cpu(&t.many) / per_cpu(&t.one))
            .collect();
        out.push(SizeResult {
            bytes,
            cost_ns: MeanCi::of(&costs, 0.95),
            work_lost: MeanCi::of(&lost, 0.95),
            switches_per_second: trials
                .iter()
                .map(|t| t.many.between_threads as f64)
                .sum::<f64>()
                / (trials.len() as f64 * seconds),
            trials,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(work: f64, cpu_seconds: f64, switches: usize) -> Side {
        Side {
            work,
            cpu_seconds,
            switches,
            between_threads: switches,
        }
    }

    #[test]
    fn the_papers_formula_on_an_idle_machine() {
        let _one = crate::exclusive();
        // 1% of the work lost over 45 s with 900 switches: 0.01 · 45 s / 900 = 500 µs each.
        let c = cost_ns(&side(1000.0, 45.0, 0), &side(990.0, 45.0, 900));
        assert!((c - 500_000.0).abs() < 1e-3, "{c}");
        assert!(cost_ns(&side(1000.0, 45.0, 0), &side(990.0, 45.0, 0)).is_nan());
    }

    #[test]
    fn a_shared_machine_is_accounted_for() {
        let _one = crate::exclusive();
        // Each switch costs 100 µs of a 1000-passes-per-second thread. The one-thread run got
        // half the CPU and 50 switches a second to other tasks; the ten-thread run 80% of the
        // CPU and 300 switches a second.
        let (r0, c) = (1000.0, 100e-6);
        let run = |cpu: f64, n: f64| side(r0 * (1.0 - c * n) * cpu, cpu, (n * cpu) as usize);
        let got = cost_ns(&run(22.5, 50.0), &run(36.0, 300.0));
        assert!((got - 100_000.0).abs() < 1.0, "{got}");
    }
}
