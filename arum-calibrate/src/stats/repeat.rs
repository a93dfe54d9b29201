//! The repetition engine: warm up, then take samples until the 90% confidence interval of the
//! median is within the target (2% by default) of the median, or the time limit is reached.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Summary;

/// How long and how precisely to repeat one measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Rounds run and discarded first (caches, branch predictors, page tables, CPU frequency).
    pub warmup: Duration,
    /// No convergence is declared with fewer samples.
    pub min_samples: usize,
    /// Samples beyond this are not taken (bounds memory and the slowest sort).
    pub max_samples: usize,
    /// Time for the recorded rounds, warm-up excluded.
    pub time_limit: Duration,
    /// Target half-width of the median's 90% confidence interval, relative to the median.
    pub target: f64,
}

/// Why the repetition stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The median's confidence interval reached the target.
    Converged,
    /// The time limit came first.
    TimeLimit,
    /// The sample cap came first.
    MaxSamples,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    /// Possibly empty, when every round refused its sample.
    pub samples: Vec<f64>,
    pub stop: Stop,
    /// Time spent on recorded rounds.
    pub elapsed: Duration,
    pub warmup_rounds: usize,
}

/// Repeats `round` (each call appends one or more samples) under `limits`.
pub fn repeat<E>(
    limits: &Limits,
    mut round: impl FnMut(&mut Vec<f64>) -> Result<(), E>,
) -> Result<Outcome, E> {
    let mut scratch = Vec::new();
    let warm_start = Instant::now();
    let mut warmup_rounds = 0;
    while warmup_rounds == 0 || warm_start.elapsed() < limits.warmup {
        scratch.clear();
        round(&mut scratch)?;
        warmup_rounds += 1;
    }

    let mut samples = Vec::new();
    let start = Instant::now();
    let mut next_check = limits.min_samples.max(2);
    let stop = loop {
        round(&mut samples)?;
        if samples.len() >= limits.max_samples {
            samples.truncate(limits.max_samples);
            break Stop::MaxSamples;
        }
        if samples.len() >= next_check {
            if Summary::of(&samples).relative_ci() <= limits.target {
                break Stop::Converged;
            }
            // Geometric spacing keeps the sorting cost proportional to the samples taken.
            next_check = samples.len() + samples.len() / 4 + 1;
        }
        // A round may add nothing (a disturbed sample it refused); without any sample, go on
        // to four times the limit before giving up.
        let spent = start.elapsed();
        if spent >= limits.time_limit && (!samples.is_empty() || spent >= limits.time_limit * 4) {
            break Stop::TimeLimit;
        }
    };
    Ok(Outcome {
        samples,
        stop,
        elapsed: start.elapsed(),
        warmup_rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn limits() -> Limits {
        Limits {
            warmup: Duration::ZERO,
            min_samples: 20,
            max_samples: 100_000,
            time_limit: Duration::from_secs(5),
            target: 0.02,
        }
    }

    #[test]
    fn a_steady_quantity_converges_soon_after_the_minimum() {
        let mut i = 0u64;
        let out = repeat(&limits(), |s| {
            i += 1;
            s.push(100.0 + (i % 3) as f64); // within 2% of the median
            Ok::<_, Infallible>(())
        })
        .unwrap();
        assert_eq!(out.stop, Stop::Converged);
        assert!(
            out.samples.len() >= 20 && out.samples.len() < 40,
            "{}",
            out.samples.len()
        );
        assert_eq!(out.warmup_rounds, 1);
    }

    #[test]
    fn a_spread_quantity_needs_more_samples_than_a_steady_one() {
        // Uniform on [50, 150): the median's 90% CI half-width is about 82/√n % of 100, within
        // 2% only after roughly 1700 samples.
        let mut x = 12345u64;
        let out = repeat(&limits(), |s| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.push(50.0 + (x >> 11) as f64 / (1u64 << 53) as f64 * 100.0);
            Ok::<_, Infallible>(())
        })
        .unwrap();
        assert_eq!(out.stop, Stop::Converged);
        assert!(
            (1000..4000).contains(&out.samples.len()),
            "{}",
            out.samples.len()
        );
    }

    #[test]
    fn the_time_limit_stops_a_quantity_that_never_settles() {
        let mut l = limits();
        l.time_limit = Duration::from_millis(50);
        let mut i = 0.0;
        let out = repeat(&l, |s| {
            i += 1.0;
            s.push(if (i as u64) % 2 == 0 { 1.0 } else { 1000.0 });
            std::thread::sleep(Duration::from_micros(200));
            Ok::<_, Infallible>(())
        })
        .unwrap();
        assert_eq!(out.stop, Stop::TimeLimit);
        assert!(out.elapsed >= Duration::from_millis(50));
    }

    #[test]
    fn rounds_that_refuse_every_sample_end_after_four_limits() {
        let mut l = limits();
        l.time_limit = Duration::from_millis(20);
        let out = repeat(&l, |_| {
            std::thread::sleep(Duration::from_millis(1));
            Ok::<_, Infallible>(())
        })
        .unwrap();
        assert!(out.samples.is_empty());
        assert!(out.elapsed >= Duration::from_millis(80));
    }

    #[test]
    fn errors_end_the_repetition() {
        let out = repeat(&limits(), |_| Err("no"));
        assert_eq!(out.unwrap_err(), "no");
    }
}
