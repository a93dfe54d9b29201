//! `-I MS`: cumulative readings at a fixed interval during the run, turned into per-interval
//! deltas at the end; the last interval ends with the final reading.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::backend::{Backend, Snapshot};
use crate::facilities::counters::model::Interval;
use crate::perf::sys::Reading;
use crate::periodic::{Cadence, FirstTick, Sampler};

/// The readings taken so far, and when the sampler started (to time the final reading).
pub struct IntervalSampler {
    sampler: Option<Sampler<Vec<Snapshot>>>,
    started: Instant,
    /// Event names, when each interval is printed on stderr as it ends.
    names: Option<Vec<String>>,
}

/// Values of readings, 0 where an event is not counted.
pub fn values(readings: &[Vec<Option<Reading>>]) -> Vec<Vec<u64>> {
    readings
        .iter()
        .map(|cpus| cpus.iter().map(|r| r.map_or(0, |r| r.value)).collect())
        .collect()
}

impl IntervalSampler {
    /// Reads `backend` every `period`; with `names`, prints each interval's totals on stderr.
    pub fn start(backend: Arc<dyn Backend>, period: Duration, names: Option<Vec<String>>) -> Self {
        let started = Instant::now();
        let printed = names.clone();
        let sampler = Sampler::spawn(
            "arum-interval",
            (
                Cadence::Fixed {
                    period,
                    at_start: false,
                },
                FirstTick::Thread,
                false,
            ),
            Vec::<Snapshot>::new(),
            move |snaps, tick| {
                let values = values(&backend.read());
                if let Some(names) = &names {
                    let prev = snaps.last().map(|s| s.values.as_slice());
                    eprintln!("{}", line(tick.elapsed, names, prev, &values));
                }
                snaps.push(Snapshot {
                    t_ns: tick.elapsed.as_nanos() as u64,
                    values,
                });
                Duration::ZERO
            },
            |snaps| snaps,
        );
        IntervalSampler {
            sampler,
            started,
            names: printed,
        }
    }

    /// Stops sampling and returns the readings, the last one being `finals` (printed too, so
    /// the printed intervals add up to the totals).
    /// With the note of a sampler whose CPU budget spaced the readings out.
    pub fn finish(self, finals: &[Vec<Option<Reading>>]) -> (Vec<Snapshot>, Option<String>) {
        let (mut snaps, load) = self
            .sampler
            .and_then(Sampler::finish_with_load)
            .unwrap_or_default();
        let last = Snapshot {
            t_ns: self.started.elapsed().as_nanos() as u64,
            values: values(finals),
        };
        if let Some(names) = &self.names {
            let prev = snaps.last().map(|s| s.values.as_slice());
            eprintln!(
                "{}",
                line(Duration::from_nanos(last.t_ns), names, prev, &last.values)
            );
        }
        snaps.push(last);
        (snaps, load.note("-I readings"))
    }
}

/// Cumulative readings to per-interval deltas.
pub fn deltas(series: &[Snapshot]) -> Vec<Interval> {
    let mut prev: Option<&Snapshot> = None;
    series
        .iter()
        .map(|s| {
            let counts = s
                .values
                .iter()
                .enumerate()
                .map(|(e, cpus)| {
                    cpus.iter()
                        .enumerate()
                        .map(|(c, x)| x.saturating_sub(prev.map_or(0, |p| p.values[e][c])))
                        .collect()
                })
                .collect();
            prev = Some(s);
            Interval {
                t_end_ns: s.t_ns,
                counts,
            }
        })
        .collect()
}

/// Prints a series the back-end took itself (the module's timer), after the run.
pub fn print_series(names: &[String], series: &[Snapshot]) {
    let mut prev: Option<&[Vec<u64>]> = None;
    for s in series {
        eprintln!(
            "{}",
            line(Duration::from_nanos(s.t_ns), names, prev, &s.values)
        );
        prev = Some(&s.values);
    }
}

fn line(at: Duration, names: &[String], prev: Option<&[Vec<u64>]>, now: &[Vec<u64>]) -> String {
    let mut s = format!("arum: {:>9.3} s", at.as_secs_f64());
    for (e, name) in names.iter().enumerate() {
        let total: u64 = now[e].iter().sum();
        let before: u64 = prev.map_or(0, |p| p[e].iter().sum());
        s.push_str(&format!("  {name} {}", total.saturating_sub(before)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_subtract_the_previous_reading_per_event_and_cpu() {
        let snap = |t, values: Vec<Vec<u64>>| Snapshot { t_ns: t, values };
        let series = [
            snap(10, vec![vec![5, 1], vec![0, 7]]),
            snap(20, vec![vec![9, 1], vec![3, 8]]),
        ];
        let d = deltas(&series);
        assert_eq!(d[0].counts, [[5, 1], [0, 7]]);
        assert_eq!(d[1].counts, [[4, 0], [3, 1]]);
        assert_eq!(d[1].t_end_ns, 20);
    }
}
