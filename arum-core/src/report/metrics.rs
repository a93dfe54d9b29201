//! Every quantity of a report as a named number, found by walking the report's JSON rather than
//! a fixed list, so a facility's new section (function timing, per-task records, ...) gets
//! statistics, comparisons and merges without a line here.
//!
//! Names are dotted paths in the report's own order (`usage.wall_ns`,
//! `counters.events[cycles].total_scaled`, `ambient.summary.cpu_utilisation[1].user`). An array
//! of objects names its elements by their first label field (`spec`, `name`, `function`, ...), so
//! the same event or function has the same name in every run. Left out: what identifies rather
//! than measures (metadata, the command, exit status, labels, CPU numbers, configuration) and time
//! series (arrays of samples taken at `t_ns`), whose summaries are metrics already.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::report::model::Report;

/// Top-level sections that describe the run rather than measure it.
const NOT_MEASURED: &[&str] = &["schema", "metadata", "command", "exit", "warnings", "rank"];
/// Fields of an element that name it, in order of preference.
const LABELS: &[&str] = &[
    "spec", "name", "function", "symbol", "comm", "event", "cpu", "tid", "pid",
];
/// Numeric fields that are identifiers or configuration, not measurements.
const NOT_QUANTITIES: &[&str] = &[
    "cpu",
    "pid",
    "tid",
    "ppid",
    "perf_type",
    "counter",
    "interval_ms",
    "ticks_per_second",
    "online_cpus",
];
/// Fields that mark an element as a sample of a time series.
const TIME_SERIES: &[&str] = &["t_ns", "t_end_ns"];

/// One quantity of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
}

/// Every quantity of `report`, in the report's order.
pub fn of_report(report: &Report) -> Vec<Metric> {
    let json = serde_json::to_string(report).expect("the report model always serialises");
    let tree: Ordered =
        serde_json::from_str(&json).expect("a report's own JSON parses as a JSON tree");
    let mut out = Vec::new();
    if let Ordered::Object(sections) = &tree {
        for (key, value) in sections {
            if !NOT_MEASURED.contains(&key.as_str()) {
                walk(value, key.clone(), &mut out);
            }
        }
    }
    out
}

fn walk(v: &Ordered, path: String, out: &mut Vec<Metric>) {
    match v {
        Ordered::Number(x) => out.push(Metric {
            name: path,
            value: *x,
        }),
        Ordered::Object(fields) => {
            for (key, value) in fields {
                if !(NOT_QUANTITIES.contains(&key.as_str()) || LABELS.contains(&key.as_str())) {
                    walk(value, format!("{path}.{key}"), out);
                }
            }
        }
        Ordered::Array(items) => {
            if items.iter().all(|i| matches!(i, Ordered::Number(_))) {
                for (i, item) in items.iter().enumerate() {
                    walk(item, format!("{path}[{i}]"), out);
                }
                return;
            }
            let is_series = items.iter().any(|i| match i {
                Ordered::Object(f) => f.iter().any(|(k, _)| TIME_SERIES.contains(&k.as_str())),
                _ => true, // arrays of arrays are matrices of a series (interval counts)
            });
            if is_series {
                return;
            }
            let mut seen: Vec<String> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let mut label = item.label().unwrap_or_else(|| i.to_string());
                let repeats = seen.iter().filter(|s| **s == label).count();
                seen.push(label.clone());
                if repeats > 0 {
                    label = format!("{label}#{}", repeats + 1);
                }
                walk(item, format!("{path}[{label}]"), out);
            }
        }
        Ordered::Text(_) | Ordered::Other => {}
    }
}

/// The unit a metric's name declares (`_ns`, `_us`, `_bytes`, ...), for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Bytes,
    Percent,
    /// Counts and ratios: shown as they are.
    Plain,
}

impl Unit {
    pub fn of(name: &str) -> Unit {
        let last = name.rsplit('.').next().unwrap_or(name);
        if last.ends_with("_ns") {
            Unit::Nanoseconds
        } else if last.ends_with("_us") {
            Unit::Microseconds
        } else if last.ends_with("_ms") {
            Unit::Milliseconds
        } else if last.ends_with("_bytes") {
            Unit::Bytes
        } else if last.starts_with("percent")
            || last.ends_with("_percent")
            || last.ends_with("_pct")
        {
            Unit::Percent
        } else {
            Unit::Plain
        }
    }

    /// A value in this unit for people: times in ns/µs/ms/s, sizes in B/KiB/MiB/GiB.
    pub fn format(self, x: f64) -> String {
        match self {
            Unit::Nanoseconds => format_seconds(x * 1e-9),
            Unit::Microseconds => format_seconds(x * 1e-6),
            Unit::Milliseconds => format_seconds(x * 1e-3),
            Unit::Bytes => format_bytes(x),
            Unit::Percent => format!("{x:.2}%"),
            Unit::Plain => format_plain(x),
        }
    }
}

fn format_seconds(s: f64) -> String {
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if a >= 1e-6 {
        format!("{:.3} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

fn format_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    let a = b.abs();
    if a >= K * K * K {
        format!("{:.2} GiB", b / (K * K * K))
    } else if a >= K * K {
        format!("{:.2} MiB", b / (K * K))
    } else if a >= K {
        format!("{:.1} KiB", b / K)
    } else {
        format!("{b:.0} B")
    }
}

fn format_plain(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.4}")
    }
}

/// Which way a metric should move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    LowerIsBetter,
    HigherIsBetter,
    /// Neither is better: how much of the machine the program used, how it was sampled.
    Neutral,
}

/// Most quantities ARUM measures are costs (time, memory, faults, misses, switches); rates of
/// useful work are better higher; utilisation and sampling facts are neither.
pub fn direction(name: &str) -> Direction {
    let n = name.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if any(&[
        "ipc",
        "instructions_per",
        "per_cycle",
        "hit_rate",
        "throughput",
    ]) {
        Direction::HigherIsBetter
    } else if any(&[
        "utilisation",
        "percent_running",
        "samples",
        "peak_threads",
        "peak_processes",
        "launcher_rss",
        "idle",
    ]) {
        Direction::Neutral
    } else {
        Direction::LowerIsBetter
    }
}

/// Whether a metric belongs in a summary for people: the JSON and CSV have them all, the text
/// leaves out per-CPU breakdowns and arum's own timing (unless asked for).
pub fn shown(name: &str, self_timing: bool) -> bool {
    if name.starts_with("self_timing.") {
        return self_timing;
    }
    !name.contains(".per_cpu[")
}

/// The metric of `names` that `wanted` names: the full name, or a unique tail of it after a dot
/// (`wall_ns` for `usage.wall_ns`), or the short names `wall`, `user`, `sys`, `memory`.
pub fn resolve<'a>(wanted: &str, names: &[&'a str]) -> Result<&'a str, String> {
    let wanted = match wanted {
        "wall" | "time" => "usage.wall_ns",
        "user" => "usage.user_ns",
        "sys" | "system" => "usage.system_ns",
        "memory" | "peak_memory" | "rss" => "usage.peak_memory.peak_rss_bytes",
        other => other,
    };
    if let Some(exact) = names.iter().find(|n| **n == wanted) {
        return Ok(exact);
    }
    let tail: Vec<&&str> = names
        .iter()
        .filter(|n| n.ends_with(wanted) && n[..n.len() - wanted.len()].ends_with('.'))
        .collect();
    match tail.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("no metric named {wanted:?}")),
        many => Err(format!(
            "{wanted:?} names several metrics ({}); give the full name",
            many.iter().map(|s| **s).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// A JSON tree that keeps object fields in their order (serde_json's `Value` sorts them), so
/// metrics come out in the order the report model declares them.
enum Ordered {
    Number(f64),
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Text(String),
    Other,
}

impl Ordered {
    fn label(&self) -> Option<String> {
        let Ordered::Object(fields) = self else {
            return None;
        };
        LABELS.iter().find_map(|l| {
            fields.iter().find_map(|(k, v)| match v {
                _ if k != l => None,
                Ordered::Number(x) => Some(format_plain(*x)),
                Ordered::Text(s) => Some(s.clone()),
                _ => None,
            })
        })
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Ordered, E> {
        Ok(Ordered::Other)
    }
    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v))
    }
    fn visit_str<E>(self, s: &str) -> Result<Ordered, E> {
        Ok(Ordered::Text(s.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Other)
    }
    fn visit_none<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Other)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Ordered, D::Error> {
        Ordered::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            fields.push((k, v));
        }
        Ok(Ordered::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed report of the rendering tests (counters with intervals, ambient samples).
    fn fixture() -> Report {
        let text = include_str!("../../tests/fixtures/report.json");
        serde_json::from_str(text).expect("the fixture parses")
    }

    #[test]
    fn every_number_is_named_in_the_reports_order() {
        let r = fixture();
        let m = of_report(&r);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names[0], "usage.wall_ns");
        assert_eq!(m[0].value, r.usage.wall_ns as f64);
        let spec = &r.counters.as_ref().unwrap().events[0].spec;
        let total = format!("counters.events[{spec}].total_scaled");
        let at = names
            .iter()
            .position(|n| *n == total)
            .expect("events by spec");
        assert!(at > names.iter().position(|n| *n == "usage.system_ns").unwrap());
        // Per-CPU counts are there, named by CPU, and shown only in full listings.
        assert!(names
            .iter()
            .any(|n| n.starts_with(&format!("counters.events[{spec}].per_cpu["))));
        assert!(names.contains(&"ambient.summary.interrupts"));
        assert!(names
            .iter()
            .any(|n| n.starts_with("ambient.summary.cpu_utilisation[")));
    }

    #[test]
    fn identities_and_time_series_are_left_out() {
        let m = of_report(&fixture());
        for n in m.iter().map(|m| m.name.as_str()) {
            assert!(
                !n.starts_with("metadata.") && !n.starts_with("exit."),
                "{n}"
            );
            assert!(
                !n.starts_with("ambient.samples") && !n.starts_with("ambient.tree"),
                "{n}"
            );
            assert!(!n.starts_with("counters.intervals"), "{n}");
            assert!(!n.ends_with(".cpu") && !n.ends_with(".perf_type"), "{n}");
        }
    }

    #[test]
    fn names_resolve_exactly_by_tail_or_short_name() {
        let names = ["usage.wall_ns", "usage.user_ns", "a.total", "b.total"];
        assert_eq!(resolve("wall", &names), Ok("usage.wall_ns"));
        assert_eq!(resolve("user_ns", &names), Ok("usage.user_ns"));
        assert!(resolve("total", &names).unwrap_err().contains("several"));
        assert!(resolve("nothing", &names).is_err());
        // A tail must start at a dot: "ser_ns" is not "user_ns".
        assert!(resolve("ser_ns", &names).is_err());
    }

    #[test]
    fn units_and_directions() {
        assert_eq!(Unit::of("usage.wall_ns").format(1.5e9), "1.500 s");
        assert_eq!(
            Unit::of("x.peak_rss_bytes").format(3.0 * 1048576.0),
            "3.00 MiB"
        );
        assert_eq!(Unit::of("usage.minor_faults").format(12.0), "12");
        assert_eq!(
            direction("counters.ratios[IPC].value"),
            Direction::HigherIsBetter
        );
        assert_eq!(direction("usage.cpu_utilisation"), Direction::Neutral);
        assert_eq!(direction("usage.wall_ns"), Direction::LowerIsBetter);
    }
}
