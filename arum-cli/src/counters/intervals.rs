//! `-I MS`: cumulative readings at a fixed interval during the run, turned into per-interval
//! deltas at the end; the last interval ends with the final reading, so intervals sum to totals.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::sys::Reading;
use super::Backend;
use crate::report::model::Interval;

type Snapshot = (u64, Vec<Vec<u64>>);

pub struct IntervalSampler {
    interval: Duration,
    stop: Arc<AtomicBool>,
    snapshots: Arc<Mutex<Vec<Snapshot>>>,
    thread: Option<JoinHandle<()>>,
    started: Instant,
}

fn values(readings: &[Vec<Option<Reading>>]) -> Vec<Vec<u64>> {
    readings
        .iter()
        .map(|cpus| cpus.iter().map(|r| r.map_or(0, |r| r.value)).collect())
        .collect()
}

impl IntervalSampler {
    /// Starts sampling; `names` label the live line printed on stderr when `print` is set.
    pub fn start(backend: Arc<dyn Backend>, ms: u64, names: Vec<String>, print: bool) -> Self {
        let interval = Duration::from_millis(ms.max(1));
        let stop = Arc::new(AtomicBool::new(false));
        let snapshots = Arc::new(Mutex::new(Vec::new()));
        let started = Instant::now();
        let thread = {
            let (stop, snapshots) = (stop.clone(), snapshots.clone());
            std::thread::Builder::new()
                .name("arum-interval".into())
                .spawn(move || {
                    let mut next = started + interval;
                    let mut prev: Option<Vec<Vec<u64>>> = None;
                    loop {
                        let now = Instant::now();
                        if next > now {
                            std::thread::park_timeout(next - now);
                        }
                        if stop.load(Ordering::SeqCst) {
                            break;
                        }
                        if Instant::now() < next {
                            continue;
                        }
                        let v = values(&backend.read_all());
                        let t = started.elapsed().as_nanos() as u64;
                        if print {
                            eprintln!("{}", line(t, &names, prev.as_deref(), &v));
                        }
                        prev = Some(v.clone());
                        snapshots.lock().expect("not poisoned").push((t, v));
                        next += interval;
                    }
                })
                .ok()
        };
        IntervalSampler {
            interval,
            stop,
            snapshots,
            thread,
            started,
        }
    }

    /// Stops sampling and returns the intervals, the last one ending with `finals`.
    pub fn finish(mut self, finals: &[Vec<Option<Reading>>]) -> (u64, Vec<Interval>) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        let mut snaps = std::mem::take(&mut *self.snapshots.lock().expect("not poisoned"));
        snaps.push((self.started.elapsed().as_nanos() as u64, values(finals)));
        let intervals = deltas(snaps.iter().map(|(t, v)| (*t, v)));
        (self.interval.as_millis() as u64, intervals)
    }
}

/// Cumulative readings `(time, [event][cpu])` to per-interval deltas; the deltas of a series
/// that ends with the final reading sum to the totals.
pub fn deltas<'a>(series: impl Iterator<Item = (u64, &'a Vec<Vec<u64>>)>) -> Vec<Interval> {
    let mut prev: Option<&Vec<Vec<u64>>> = None;
    series
        .map(|(t, v)| {
            let counts = v
                .iter()
                .enumerate()
                .map(|(e, cpus)| {
                    cpus.iter()
                        .enumerate()
                        .map(|(c, x)| x.saturating_sub(prev.map_or(0, |p| p[e][c])))
                        .collect()
                })
                .collect();
            prev = Some(v);
            Interval {
                t_end_ns: t,
                counts,
            }
        })
        .collect()
}

fn line(t_ns: u64, names: &[String], prev: Option<&[Vec<u64>]>, now: &[Vec<u64>]) -> String {
    let mut s = format!("arum: {:>9.3} s", t_ns as f64 / 1e9);
    for (e, name) in names.iter().enumerate() {
        let total: u64 = now[e].iter().sum();
        let before: u64 = prev.map_or(0, |p| p[e].iter().sum());
        s.push_str(&format!("  {name} {}", total.saturating_sub(before)));
    }
    s
}
