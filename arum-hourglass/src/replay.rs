//! The run's parameters as an [`Experiment`]: the per-thread directives replayed in the order
//! they were given, as the original's command line reads them (`-n 3 -p LOW -t 1 -p HIGH`:
//! every thread LOW, then thread 1 HIGH), and every choice checked against the others.

use arum_units::duration;

use crate::error::Error;
use crate::experiment::{Experiment, ThreadSpec, Workload};
use crate::request::{Directive, RunParameters};

/// The most threads a run may have.
const MOST_THREADS: usize = 4096;

impl RunParameters {
    /// The experiment these parameters describe.
    pub fn experiment(&self) -> Result<Experiment, Error> {
        let n = self.threads.unwrap_or(0);
        if n == 0 || n > MOST_THREADS {
            return Err(Error::Options(format!(
                "-n {n}: give between 1 and {MOST_THREADS} threads"
            )));
        }
        if self.duration.is_zero() {
            return Err(Error::Options(
                "-d: the run needs a length above zero".into(),
            ));
        }
        let threads = replay(n, &self.directives)?;
        for (i, t) in threads.iter().enumerate() {
            let finish = t.finish.unwrap_or(self.duration).min(self.duration);
            if t.start >= finish {
                return Err(Error::Options(format!(
                    "thread {i}: starts at {} but stops at {} (-d {}): give -s before -f and -d",
                    duration::format(t.start),
                    duration::format(finish),
                    duration::format(self.duration)
                )));
            }
        }
        if self.records == 0 {
            return Err(Error::Options(
                "-e: the trace needs room for records".into(),
            ));
        }
        Ok(Experiment {
            duration: self.duration,
            threads,
            records: self.records,
            gap: self.gap_choice()?,
            deep_idle: self.deep_idle,
        })
    }
}

/// `n` default threads with `directives` applied in order.
fn replay(n: usize, directives: &[Directive]) -> Result<Vec<ThreadSpec>, Error> {
    let mut threads = vec![ThreadSpec::default(); n];
    let mut chosen: Option<usize> = None;
    for d in directives {
        let targets = match chosen {
            Some(i) => i..i + 1,
            None => 0..n,
        };
        let each = |threads: &mut [ThreadSpec], f: &dyn Fn(&mut ThreadSpec)| {
            threads[targets.clone()].iter_mut().for_each(f)
        };
        match d {
            Directive::Select(i) if *i >= n => {
                return Err(Error::Options(format!(
                    "-t {i}: threads are numbered 0 to {} (-n {n})",
                    n - 1
                )))
            }
            Directive::Select(i) => chosen = Some(*i),
            Directive::All => chosen = None,
            Directive::Workload(words) => {
                let w = Workload::parse(words).map_err(Error::Options)?;
                each(&mut threads, &|t| t.workload = w);
            }
            Directive::Priority(p) => each(&mut threads, &|t| t.priority = *p),
            Directive::Timer(k) => each(&mut threads, &|t| t.timer = *k),
            Directive::Affinity(c) => each(&mut threads, &|t| t.affinity = Some(c.clone())),
            Directive::Start(s) => each(&mut threads, &|t| t.start = *s),
            Directive::Finish(f) => each(&mut threads, &|t| t.finish = Some(*f)),
        }
    }
    Ok(threads)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::experiment::Priority;

    fn run(threads: usize, directives: Vec<Directive>) -> RunParameters {
        RunParameters {
            threads: Some(threads),
            duration: Duration::from_secs(3),
            records: 1000,
            gap: None,
            gap_factor: 10.0,
            deep_idle: false,
            directives,
        }
    }

    fn words(text: &str) -> Directive {
        Directive::Workload(text.split_whitespace().map(String::from).collect())
    }

    #[test]
    fn order_decides_which_thread_a_directive_affects() {
        let _one = crate::exclusive();
        // Before any Select: all; All returns to all; Select picks one.
        let e = run(
            3,
            vec![
                Directive::Priority(Priority::LOW),
                Directive::Select(1),
                Directive::Priority(Priority::HIGH),
                Directive::All,
                Directive::Affinity(vec![1]),
                Directive::Select(2),
                words("LAT 1ms"),
                Directive::Start(Duration::from_secs(1)),
                Directive::Finish(Duration::from_secs(2)),
            ],
        )
        .experiment()
        .unwrap();
        let p: Vec<Priority> = e.threads.iter().map(|t| t.priority).collect();
        assert_eq!(p, [Priority::LOW, Priority::HIGH, Priority::LOW]);
        assert!(e.threads.iter().all(|t| t.affinity == Some(vec![1])));
        assert_eq!(
            e.threads[2].workload,
            Workload::Lat {
                period: Duration::from_millis(1)
            }
        );
        assert_eq!(e.threads[1].workload, Workload::Cpu);
        assert_eq!(e.threads[2].start, Duration::from_secs(1));
        assert_eq!(e.threads[2].finish, Some(Duration::from_secs(2)));
        assert_eq!(e.threads[0].start, Duration::ZERO);
        assert_eq!(e.threads[0].finish, None);
    }

    #[test]
    fn bad_parameters_name_the_fix() {
        let _one = crate::exclusive();
        let cases = [
            (run(2, vec![Directive::Select(2)]), "numbered 0 to 1"),
            (run(1, vec![words("PERIODIC 6ms 5ms")]), "exceeds PERIOD"),
            (run(1, vec![words("PERIODIC 4ms")]), "PERIODIC 4ms 5ms"),
            (run(1, vec![words("SPIN")]), "unknown model"),
            (run(1, vec![words("LAT 5")]), "unit"),
            (
                run(1, vec![Directive::Start(Duration::from_secs(4))]),
                "starts at 4 s but stops at 3 s",
            ),
            (run(0, vec![]), "between 1 and 4096"),
            (run(4097, vec![]), "between 1 and 4096"),
            (
                RunParameters {
                    gap: Some(Duration::ZERO),
                    ..run(1, vec![])
                },
                "every loop iteration",
            ),
            (
                RunParameters {
                    gap_factor: 0.5,
                    ..run(1, vec![])
                },
                "at least one loop iteration",
            ),
            (
                RunParameters {
                    records: 0,
                    ..run(1, vec![])
                },
                "room for records",
            ),
            (
                RunParameters {
                    duration: Duration::ZERO,
                    ..run(1, vec![])
                },
                "above zero",
            ),
        ];
        for (params, want) in cases {
            let e = params.experiment().unwrap_err().to_string();
            assert!(e.contains(want), "{params:?}: {e}");
        }
    }
}
