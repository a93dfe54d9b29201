//! The order of a series: warm-up rounds, then measured rounds, each running every benchmark
//! once (A B A B ...) so that drift in the machine (frequency, caches, neighbours) reaches every
//! benchmark alike. The number of rounds is given (`--runs`) or chosen from the first round's
//! time: enough for the time target, within `--min-runs` and `--max-runs`.
//!
//! The scheduler only orders runs; a [`Runner`] runs them (the real one launches the program,
//! the tests' fake returns made-up reports), as hyperfine's executor does. The runner is also the
//! clock the first round is timed by, so that the fake's runs take the time it says they take.

use std::time::{Duration, Instant};

use super::result::Run;
use crate::error::ArumError;
use crate::report::model::Report;

/// Runs one benchmark once.
pub trait Runner {
    /// Runs benchmark `b` as run `index` (ARUM_RUN_INDEX; warm-up runs are negative).
    fn run(&mut self, b: usize, index: i64) -> Result<Report, ArumError>;

    /// The number of runs of the whole series (warm-up included) is now known, or changed.
    fn planned(&mut self, _total: u64) {}

    /// The time now, by the clock that runs take time on.
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// How many runs: `--runs`, or chosen by time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub runs: Option<u64>,
    pub min_runs: u64,
    pub max_runs: u64,
    /// Run at least this long in all (when `runs` is not given).
    pub target: Duration,
    pub warmup: u64,
    pub ignore_failure: bool,
}

/// Runs by default when the number is chosen by time, and the default time target (hyperfine's).
pub const DEFAULT_MIN_RUNS: u64 = 10;
pub const DEFAULT_TARGET: Duration = Duration::from_secs(3);

impl Limits {
    pub fn new(
        runs: Option<u64>,
        min_runs: Option<u64>,
        max_runs: Option<u64>,
        warmup: u64,
        ignore_failure: bool,
    ) -> Result<Limits, ArumError> {
        let max = max_runs.unwrap_or(u64::MAX);
        let min = min_runs.unwrap_or(DEFAULT_MIN_RUNS.min(max));
        if min > max {
            return Err(ArumError::Usage(format!(
                "--min-runs {min} is above --max-runs {max}; make --min-runs at most --max-runs"
            )));
        }
        if runs.is_some() && (min_runs.is_some() || max_runs.is_some()) {
            return Err(ArumError::Usage(
                "--runs fixes the number of runs: leave out --min-runs and --max-runs, or --runs"
                    .into(),
            ));
        }
        Ok(Limits {
            runs,
            min_runs: min,
            max_runs: max,
            target: DEFAULT_TARGET,
            warmup,
            ignore_failure,
        })
    }

    /// Rounds in all, once the first round took `first`.
    fn rounds_after(&self, first: Duration) -> u64 {
        if let Some(n) = self.runs {
            return n;
        }
        let per_round = first.as_secs_f64().max(1e-6);
        let by_time = (self.target.as_secs_f64() / per_round).ceil() as u64;
        by_time.clamp(self.min_runs, self.max_runs)
    }
}

/// What a series produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Per benchmark, its measured runs.
    pub runs: Vec<Vec<Run>>,
    /// Why the series stopped before its planned runs.
    pub stopped_early: Option<String>,
    /// The exit status of the run that stopped it.
    pub failed_status: Option<i32>,
}

/// Runs `benchmarks` benchmarks, interleaved, under `limits`; `labels` name them in messages.
pub fn schedule(
    runner: &mut dyn Runner,
    labels: &[String],
    limits: &Limits,
) -> Result<Outcome, ArumError> {
    let n = labels.len() as u64;
    let mut out = Outcome {
        runs: vec![Vec::new(); labels.len()],
        ..Outcome::default()
    };
    let first_guess = limits.runs.unwrap_or(limits.min_runs);
    runner.planned(n * (limits.warmup + first_guess));

    for w in 0..limits.warmup {
        let index = w as i64 - limits.warmup as i64;
        for (b, label) in labels.iter().enumerate() {
            let report = runner.run(b, index)?;
            if let Some(stop) = failure(&report, label, index, limits) {
                out.failed_status = Some(report.exit.status);
                out.stopped_early = Some(stop);
                return Ok(out);
            }
        }
    }

    let mut rounds = first_guess;
    let mut round = 0;
    while round < rounds {
        let started = runner.now();
        for (b, label) in labels.iter().enumerate() {
            let index = round as i64;
            let report = runner.run(b, index)?;
            let stop = failure(&report, label, index, limits);
            out.runs[b].push(Run {
                index: round,
                exit_status: report.exit.status,
                report,
            });
            if let Some(stop) = stop {
                out.failed_status = Some(out.runs[b].last().unwrap().exit_status);
                out.stopped_early = Some(stop);
                return Ok(out);
            }
        }
        if round == 0 {
            let total = limits.rounds_after(runner.now().duration_since(started));
            if total != rounds {
                rounds = total;
                runner.planned(n * (limits.warmup + rounds));
            }
        }
        round += 1;
    }
    Ok(out)
}

/// Why a failed run stops the series (None: it did not fail, or failures are ignored).
fn failure(report: &Report, label: &str, index: i64, limits: &Limits) -> Option<String> {
    if report.exit.status == 0 || limits.ignore_failure {
        return None;
    }
    let which = if index < 0 {
        format!("warm-up run {}", index + limits.warmup as i64)
    } else {
        format!("run {index}")
    };
    Some(format!(
        "{which} of `{label}` {}; --ignore-failure (-i) runs on past failures",
        report.exit.describe()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::testing::report;

    /// Records the order of runs and returns a report with the wall time and status it is told;
    /// its clock advances by the wall time of each run instead of sleeping through it.
    struct Fake {
        order: Vec<(usize, i64)>,
        wall: Duration,
        fail_at: Option<(usize, i64)>,
        planned: Vec<u64>,
        origin: Instant,
        elapsed: Duration,
    }

    impl Runner for Fake {
        fn run(&mut self, b: usize, index: i64) -> Result<Report, ArumError> {
            self.order.push((b, index));
            self.elapsed += self.wall;
            let status = if self.fail_at == Some((b, index)) {
                3
            } else {
                0
            };
            Ok(report(self.wall.as_nanos() as u64, status))
        }
        fn planned(&mut self, total: u64) {
            self.planned.push(total);
        }
        fn now(&self) -> Instant {
            self.origin + self.elapsed
        }
    }

    fn fake(wall_ms: u64) -> Fake {
        Fake {
            order: Vec::new(),
            wall: Duration::from_millis(wall_ms),
            fail_at: None,
            planned: Vec::new(),
            origin: Instant::now(),
            elapsed: Duration::ZERO,
        }
    }

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("cmd{i}")).collect()
    }

    #[test]
    fn warm_up_then_interleaved_rounds() {
        let mut f = fake(0);
        let limits = Limits::new(Some(3), None, None, 1, false).unwrap();
        let out = schedule(&mut f, &labels(2), &limits).unwrap();
        assert_eq!(
            f.order,
            [
                (0, -1),
                (1, -1),
                (0, 0),
                (1, 0),
                (0, 1),
                (1, 1),
                (0, 2),
                (1, 2)
            ]
        );
        assert_eq!(
            out.runs[0].iter().map(|r| r.index).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(f.planned, [8]);
        assert!(out.stopped_early.is_none());
    }

    /// Runs one benchmark per round of `wall_ms` under a 60 ms target; the runs it measured.
    fn runs_for(wall_ms: u64, min_runs: Option<u64>, max_runs: Option<u64>) -> usize {
        let mut limits = Limits::new(None, min_runs, max_runs, 0, false).unwrap();
        limits.target = Duration::from_millis(60);
        schedule(&mut fake(wall_ms), &labels(1), &limits)
            .unwrap()
            .runs[0]
            .len()
    }

    #[test]
    fn rounds_by_time_within_min_and_max() {
        // 1 ms rounds for a 60 ms target want 60 runs: --max-runs caps it.
        assert_eq!(runs_for(1, None, Some(12)), 12);
        // 20 ms rounds for a 60 ms target want 3 runs: --min-runs (default 10) wins.
        assert_eq!(runs_for(20, None, None), 10);
        // Between the limits, the target decides: 60 ms / 2 ms, and rounding up 60 ms / 7 ms.
        assert_eq!(runs_for(2, Some(2), None), 30);
        assert_eq!(runs_for(7, Some(2), None), 9);
        assert_eq!(runs_for(2, Some(2), Some(100)), 30);
    }

    #[test]
    fn the_first_round_times_every_benchmark_of_it() {
        // Two benchmarks of 3 ms: a 6 ms round, 10 rounds for 60 ms.
        let mut limits = Limits::new(None, Some(2), None, 1, false).unwrap();
        limits.target = Duration::from_millis(60);
        let mut f = fake(3);
        let out = schedule(&mut f, &labels(2), &limits).unwrap();
        assert_eq!((out.runs[0].len(), out.runs[1].len()), (10, 10));
        // The first guess (2 rounds and a warm-up), then the rounds the first round chose.
        assert_eq!(f.planned, [6, 22]);
        // One warm-up round and ten measured rounds of two runs each.
        assert_eq!(f.order.len(), 22);
    }

    #[test]
    fn given_runs_ignore_the_clock() {
        let limits = Limits::new(Some(5), None, None, 0, false).unwrap();
        let mut f = fake(1000);
        let out = schedule(&mut f, &labels(1), &limits).unwrap();
        assert_eq!((out.runs[0].len(), f.planned.as_slice()), (5, &[5][..]));
    }

    #[test]
    fn a_failed_run_stops_the_series_unless_ignored() {
        let limits = Limits::new(Some(4), None, None, 0, false).unwrap();
        let mut f = fake(0);
        f.fail_at = Some((1, 1));
        let out = schedule(&mut f, &labels(2), &limits).unwrap();
        assert_eq!(f.order.len(), 4);
        assert_eq!(out.failed_status, Some(3));
        assert!(out
            .stopped_early
            .unwrap()
            .contains("run 1 of `cmd1` exited with status 3"));
        assert_eq!(out.runs[1].last().unwrap().exit_status, 3);

        let limits = Limits::new(Some(4), None, None, 0, true).unwrap();
        let mut f = fake(0);
        f.fail_at = Some((1, 1));
        let out = schedule(&mut f, &labels(2), &limits).unwrap();
        assert_eq!((f.order.len(), out.failed_status), (8, None));
        assert_eq!(out.runs[1][1].exit_status, 3);
    }

    #[test]
    fn contradictory_limits_are_usage_errors() {
        assert!(Limits::new(None, Some(20), Some(5), 0, false).is_err());
        assert!(Limits::new(Some(5), Some(2), None, 0, false).is_err());
        assert_eq!(
            Limits::new(None, None, Some(4), 0, false).unwrap().min_runs,
            4
        );
    }
}
