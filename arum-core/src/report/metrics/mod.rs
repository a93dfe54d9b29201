//! Every quantity of a report as a named metric with its unit and direction, from the one
//! flattening of the report (`flatten`) and the model's tables of fields; what statistics,
//! comparisons, gates, merges and exports read. A facility's new section gets all of them from
//! its table of fields, without a line here.

pub mod declared;
pub mod flatten;

pub use declared::{kind_of, Kind};
pub use flatten::{flatten, Flat, Role};

use crate::fields::{Better, Unit};
use crate::report::model::Report;

/// One quantity of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: Unit,
    pub better: Better,
}

/// Every measured number of `report`, in the report's order: not what identifies, configures or
/// dates the run, and not the samples of time series, whose summaries are metrics already.
pub fn of_report(report: &Report) -> Vec<Metric> {
    flatten(report)
        .into_iter()
        .filter_map(|f| match (f.role, f.value.as_f64()) {
            (Role::Metric(unit, better), Some(value)) => Some(Metric {
                name: f.name,
                value,
                unit,
                better,
            }),
            _ => None,
        })
        .collect()
}

/// The unit `name`'s values are shown in: its declared unit, or for a name no table declares
/// (a series saved by another version of arum) plain numbers, as counts are written.
pub fn unit_of(name: &str) -> Unit {
    kind_of(name).map_or(Unit::Count, |k| k.unit)
}

/// Which way `name` is better; neither for a name no table declares.
pub fn better(name: &str) -> Better {
    kind_of(name).map_or(Better::Neither, |k| k.better)
}

/// Whether a metric belongs in a summary for people: the JSON and CSV have them all, the text
/// leaves out per-CPU breakdowns and arum's own timing (unless asked for).
pub fn shown(name: &str, self_timing: bool) -> bool {
    if name.starts_with("self_timing.") {
        return self_timing;
    }
    !name.contains(".per_cpu[")
}

/// Whether a metric is one a user reads first and a comparison tests by default: the time, CPU
/// and memory of the run, the requests of a suite's clients, and what the user asked to measure
/// (each counter's and derived
/// metric's total, each probed function's calls and mean, each syscall's calls and mean, the ALMT
/// views' task count and mean). The rest (faults, switches, breakdowns, samplers' facts, the
/// ambient machine) is compared on request: each extra test is one more chance of a false
/// finding.
pub fn headline(name: &str) -> bool {
    const EXACT: [&str; 9] = [
        "usage.wall_ns",
        "clients.requests",
        "clients.per_second",
        "usage.user_ns",
        "usage.system_ns",
        "usage.peak_memory.peak_rss_bytes",
        "tasks.totals.cpu_ns",
        "views.tasks.tasks",
        "views.tasks.duration.mean_ns",
    ];
    // (prefix of a per-item list, the item's field after its `[...]`)
    const PER_ITEM: [(&str, &str); 6] = [
        ("counters.events[", ".total_scaled"),
        ("counters.metrics[", ".value"),
        ("functions.functions[", ".calls"),
        ("functions.functions[", ".inclusive.mean_ns"),
        ("syscalls.calls[", ".calls"),
        ("syscalls.calls[", ".mean_ns"),
    ];
    EXACT.contains(&name)
        || PER_ITEM.iter().any(|(list, field)| {
            name.strip_prefix(list)
                .and_then(|rest| rest.rsplit_once(']'))
                .is_some_and(|(item, tail)| !item.contains('[') && tail == *field)
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed report of the rendering tests (counters with intervals, ambient samples).
    fn fixture() -> Report {
        let text = include_str!("../../../tests/fixtures/report.json");
        serde_json::from_str(text).expect("the fixture parses")
    }

    // Every headline pattern names a declared metric: a renamed field must not silently leave
    // the default comparison.
    #[test]
    fn headline_metrics_are_declared_and_few() {
        let r: Report =
            serde_json::from_str(include_str!("../../../tests/fixtures/full.json")).unwrap();
        let all = of_report(&r);
        let heads: Vec<&str> = all
            .iter()
            .map(|m| m.name.as_str())
            .filter(|n| headline(n))
            .collect();
        for want in [
            "usage.wall_ns",
            "usage.user_ns",
            "usage.peak_memory.peak_rss_bytes",
        ] {
            assert!(heads.contains(&want), "{want} in {heads:?}");
        }
        for prefix in [
            "counters.events[",
            "functions.functions[",
            "syscalls.calls[",
        ] {
            assert!(heads.iter().any(|h| h.starts_with(prefix)), "{prefix}");
        }
        assert!(heads.iter().all(|h| kind_of(h).is_some()));
        assert!(!heads
            .iter()
            .any(|h| h.contains("per_cpu[") || h.contains(".exclusive.")));
        assert!(!headline("usage.involuntary_context_switches"));
        assert!(!headline("views.overview.rate[3]"));
        assert!(
            heads.len() * 4 < all.len(),
            "{} of {}",
            heads.len(),
            all.len()
        );
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
    fn identities_settings_and_time_series_are_not_metrics() {
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
            assert!(!n.starts_with("counters.cpus"), "{n}");
            assert!(!n.ends_with(".cpu") && !n.ends_with(".perf_type"), "{n}");
            assert!(
                !n.ends_with("interval_ms") && !n.ends_with("total_bytes"),
                "{n}"
            );
        }
    }

    #[test]
    fn every_metric_name_finds_the_kind_it_was_flattened_with() {
        for m in of_report(&fixture()) {
            assert_eq!(
                kind_of(&m.name),
                Some(Kind {
                    unit: m.unit,
                    better: m.better
                }),
                "{}",
                m.name
            );
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
    fn units_and_directions_come_from_the_tables() {
        assert_eq!(unit_of("usage.wall_ns").format(1.5e9), "1.5 s");
        assert_eq!(
            unit_of("usage.peak_memory.peak_rss_bytes").format(3.0 * 1048576.0),
            "3 MiB"
        );
        assert_eq!(unit_of("usage.minor_faults").format(12.0), "12");
        assert_eq!(
            better("counters.ratios[instructions per cycle (IPC)].value"),
            Better::Higher
        );
        assert_eq!(better("usage.cpu_utilisation"), Better::Neither);
        assert_eq!(better("usage.wall_ns"), Better::Lower);
        // A name from another version's series: plain, and neither way.
        assert_eq!(unit_of("usage.no_such_field"), Unit::Count);
        assert_eq!(better("usage.no_such_field"), Better::Neither);
    }
}
