//! The context every group measures in: the clock, the settings, the selection, the time
//! budget and the progress line; what a group is made of (entries) and where its results go
//! (the sink).

use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::model::{Findings, Measurement, Status, Unit};
use crate::stats::histogram::Histogram;
use crate::stats::repeat::{repeat, Limits, Outcome};
use crate::stats::Summary;
use crate::sys;

/// One measurement (or one family of them, such as latency per buffer size).
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub title: &'static str,
    /// The method in one sentence (shown by `--list`, `--help` and the README).
    pub method: &'static str,
    pub unit: Unit,
}

impl Entry {
    /// An entry measured in nanoseconds per operation.
    pub const fn ns(name: &'static str, title: &'static str, method: &'static str) -> Entry {
        Entry::new(name, title, method, Unit::Ns)
    }

    pub const fn new(
        name: &'static str,
        title: &'static str,
        method: &'static str,
        unit: Unit,
    ) -> Entry {
        Entry {
            name,
            title,
            method,
            unit,
        }
    }
}

/// A group of measurements run together (they share set-up such as a child process, a buffer,
/// a file or a network namespace).
pub struct Group {
    pub name: &'static str,
    pub title: &'static str,
    pub entries: &'static [Entry],
    pub run: fn(&mut Context, &mut Sink),
}

/// The measurements selected (`--only`), by entry name.
#[derive(Debug, Clone)]
pub struct Selection {
    names: Vec<&'static str>,
}

impl Selection {
    pub fn of(names: Vec<&'static str>) -> Selection {
        Selection { names }
    }

    pub fn contains(&self, entry: &str) -> bool {
        self.names.contains(&entry)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn add(&mut self, entry: &'static str) {
        if !self.contains(entry) {
            self.names.push(entry);
        }
    }
}

/// How the run was asked to go.
#[derive(Debug, Clone)]
pub struct Settings {
    pub quick: bool,
    pub ci_target: f64,
    pub time_limit: Duration,
    pub warmup: Duration,
    /// Scratch directory for files (the major-fault file, the executable, the file group).
    pub dir: PathBuf,
    /// Largest file of the file-cache curve.
    pub file_max: u64,
    /// `tc netem` delay to add on the veth pair, if asked for.
    pub netem: Option<Duration>,
}

/// Collects what the groups produce.
#[derive(Debug, Default)]
pub struct Sink {
    pub measurements: Vec<Measurement>,
    pub findings: Findings,
    pub notes: Vec<String>,
}

/// Samples taken for one measurement, with the other processes' load meanwhile.
pub struct Taken {
    pub outcome: Outcome,
    pub other_load: Option<f64>,
}

pub struct Context {
    pub clock: Clock,
    pub settings: Settings,
    /// CPUs this process may use.
    pub cpus: Vec<usize>,
    selection: Selection,
    deadline: Option<Instant>,
    remaining: usize,
    done: usize,
    total: usize,
    progress: bool,
}

impl Context {
    pub fn new(
        clock: Clock,
        settings: Settings,
        selection: Selection,
        budget: Option<Duration>,
    ) -> Context {
        let total = selection.len();
        Context {
            clock,
            settings,
            cpus: sys::cpu::allowed_cpus(),
            remaining: total,
            total,
            done: 0,
            selection,
            deadline: budget.map(|b| Instant::now() + b),
            progress: std::io::stderr().is_terminal(),
        }
    }

    /// A context for measuring only `names` again (peers), without the suite's time budget.
    pub fn subset(&self, names: &[&'static str]) -> Context {
        Context {
            clock: self.clock.clone(),
            settings: self.settings.clone(),
            cpus: self.cpus.clone(),
            selection: Selection::of(names.to_vec()),
            deadline: None,
            remaining: names.len(),
            done: 0,
            total: names.len(),
            progress: self.progress,
        }
    }

    pub fn wants(&self, entry: &Entry) -> bool {
        self.selection.contains(entry.name)
    }

    pub fn quick(&self) -> bool {
        self.settings.quick
    }

    /// Limits for the next measurement, its time limit shrunk so that the suite's budget (if
    /// any) is shared among what is left; `parts` splits an entry's share among its members.
    pub fn limits(&self, parts: usize) -> Limits {
        let mut time_limit = self.settings.time_limit;
        if let Some(deadline) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            let share = left / (self.remaining.max(1) * parts.max(1)) as u32;
            time_limit = time_limit.min(share);
        }
        Limits {
            warmup: self.settings.warmup.min(time_limit / 4),
            min_samples: 10,
            max_samples: 200_000,
            time_limit,
            target: self.settings.ci_target,
        }
    }

    /// Whether the suite's time budget has run out (only `--quick` has one).
    pub fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    pub fn begin(&mut self, name: &str) {
        if self.progress {
            eprint!("\r\x1b[K[{}/{}] {name}", self.done + 1, self.total);
            let _ = std::io::stderr().flush();
        }
    }

    /// Marks an entry finished (for the budget and the progress line).
    pub fn finished(&mut self, _entry: &Entry) {
        self.remaining = self.remaining.saturating_sub(1);
        self.done += 1;
    }

    pub fn end_progress(&self) {
        if self.progress {
            eprint!("\r\x1b[K");
        }
    }

    /// Repeats `round` under `limits`, recording the other processes' load meanwhile.
    pub fn take<E>(
        &mut self,
        name: &str,
        limits: &Limits,
        round: impl FnMut(&mut Vec<f64>) -> Result<(), E>,
    ) -> Result<Taken, E> {
        self.begin(name);
        let probe = LoadProbe::start();
        let outcome = repeat(limits, round)?;
        Ok(Taken {
            other_load: probe.finish(),
            outcome,
        })
    }

    /// Records the selected ones of `entries` as skipped for `reason` (a set-up they share
    /// failed, or the machine lacks what they need).
    pub fn skip(&mut self, sink: &mut Sink, entries: &[&Entry], reason: &str) {
        for e in entries {
            if self.wants(e) {
                sink.measurements.push(skipped(e, None, reason));
                self.finished(e);
            }
        }
    }

    /// Measures `entry`, if selected, as batches of `k` runs of `op` per sample (ns per run,
    /// the timer's and the loop's costs subtracted), into `sink`.
    pub fn measure_batches(
        &mut self,
        sink: &mut Sink,
        entry: &Entry,
        k: u64,
        mut op: impl FnMut(),
    ) {
        if !self.wants(entry) {
            return;
        }
        let clock = self.clock.clone();
        let l = self.limits(1);
        let m = self.measure(entry, None, k, &l, |s| {
            s.push(clock.batch(k, &mut op));
            Ok::<_, String>(())
        });
        sink.measurements.push(m);
        self.finished(entry);
    }

    /// Measures `entry` (member `suffix` of a family, if any): repeat, then record. A failing
    /// round turns into a skipped measurement with the error as the reason.
    pub fn measure<E: Display>(
        &mut self,
        entry: &Entry,
        suffix: Option<&str>,
        per_sample: u64,
        limits: &Limits,
        round: impl FnMut(&mut Vec<f64>) -> Result<(), E>,
    ) -> Measurement {
        let name = full_name(entry, suffix);
        match self.take(&name, limits, round) {
            Ok(taken) => self.record(entry, suffix, per_sample, taken),
            Err(e) => skipped(entry, suffix, e.to_string()),
        }
    }

    /// Turns samples into a measurement: summary, cycles, histogram. Without any sample (every
    /// round refused a disturbed one), a skipped measurement saying so.
    pub fn record(
        &self,
        entry: &Entry,
        suffix: Option<&str>,
        per_sample: u64,
        taken: Taken,
    ) -> Measurement {
        if taken.outcome.samples.is_empty() {
            return skipped(
                entry,
                suffix,
                format!(
                    "no undisturbed sample in {}: other processes kept the CPUs busy{}",
                    arum_units::duration::format(taken.outcome.elapsed),
                    taken
                        .other_load
                        .map(|l| format!(" ({} of them)", arum_units::percent::format_fraction(l)))
                        .unwrap_or_default()
                ),
            );
        }
        let mut sorted = taken.outcome.samples.clone();
        sorted.sort_by(f64::total_cmp);
        let summary = Summary::of_sorted(&sorted);
        let cycles = (entry.unit == Unit::Ns).then(|| summary.scaled(self.clock.cycles_per_ns()));
        Measurement {
            name: full_name(entry, suffix),
            group: group_of(entry.name).to_string(),
            title: match suffix {
                Some(s) => format!("{} ({s})", entry.title),
                None => entry.title.to_string(),
            },
            method: entry.method.to_string(),
            unit: entry.unit,
            status: Status::Measured,
            per_sample,
            summary: Some(summary),
            cycles,
            stop: Some(taken.outcome.stop),
            elapsed_ms: taken.outcome.elapsed.as_millis() as u64,
            histogram: Some(Histogram::of_sorted(&sorted, 24)),
            details: Default::default(),
            notes: Vec::new(),
            prediction: None,
            other_load: taken.other_load,
        }
    }
}

pub fn full_name(entry: &Entry, suffix: Option<&str>) -> String {
    match suffix {
        Some(s) => format!("{}.{s}", entry.name),
        None => entry.name.to_string(),
    }
}

pub fn group_of(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// A measurement this machine could not take, and why.
pub fn skipped(entry: &Entry, suffix: Option<&str>, reason: impl Into<String>) -> Measurement {
    Measurement {
        name: full_name(entry, suffix),
        group: group_of(entry.name).to_string(),
        title: entry.title.to_string(),
        method: entry.method.to_string(),
        unit: entry.unit,
        status: Status::Skipped {
            reason: reason.into(),
        },
        per_sample: 0,
        summary: None,
        cycles: None,
        stop: None,
        elapsed_ms: 0,
        histogram: None,
        details: Default::default(),
        notes: Vec::new(),
        prediction: None,
        other_load: None,
    }
}

/// CPU time the rest of the machine used over an interval: all online CPUs' busy time from
/// /proc/stat minus this process's own (and its reaped children's).
pub struct LoadProbe {
    busy: Option<(u64, usize)>,
    own_ns: u64,
    start: Instant,
}

impl LoadProbe {
    pub fn start() -> LoadProbe {
        LoadProbe {
            busy: busy_ticks(),
            own_ns: sys::cpu::own_cpu_ns(),
            start: Instant::now(),
        }
    }

    /// The other processes' share of the online CPUs, when the interval was long enough for
    /// /proc/stat's clock ticks to say anything (100 ms).
    pub fn finish(&self) -> Option<f64> {
        let wall = self.start.elapsed();
        if wall < Duration::from_millis(100) {
            return None;
        }
        let (before, cpus) = self.busy?;
        let busy = busy_ticks()?.0.checked_sub(before)?;
        let busy_ns = busy as f64 / sys::cpu::clock_ticks_per_second() * 1e9;
        let own = sys::cpu::own_cpu_ns().saturating_sub(self.own_ns) as f64;
        Some(((busy_ns - own) / (wall.as_nanos() as f64 * cpus.max(1) as f64)).clamp(0.0, 1.0))
    }
}

/// Busy clock ticks summed over the online CPUs, and how many there are.
fn busy_ticks() -> Option<(u64, usize)> {
    let stat = arum_camp::stat().ok()?;
    Some((
        stat.cpus.iter().map(|(_, t)| t.busy()).sum(),
        stat.cpus.len(),
    ))
}
