//! The report's renderings of two fixed runs: `fixtures/report.json` (counters with `-I`
//! intervals, ambient samples, warnings) and `fixtures/full.json` (every section: counters,
//! ambient, function timing, the noise probe, per-task records, system calls and their task
//! views; long arrays trimmed). The JSON layout is a golden file, the text and CSV renderings
//! and the list of every metric with its unit and direction are snapshots, so any change to a
//! rendering or to a metric's declaration shows in review.

use std::fmt::Write;

use arum_core::report::metrics::{self, declared, Role};
use arum_core::report::model::Report;
use arum_core::report::sections::SECTIONS;
use arum_core::report::{render, Format};
use serde_json::{json, Value};

const REPORT: &str = include_str!("fixtures/report.json");
const FULL: &str = include_str!("fixtures/full.json");

fn parse(text: &str) -> Report {
    serde_json::from_str(text).expect("the fixture matches the report model")
}

/// The model must read the fixture and write it back identically: no field renamed, moved,
/// retyped or dropped, numbers in the same form.
fn assert_round_trip(fixture: &str) {
    let again = render(&parse(fixture), Format::Json, false);
    if let Some((n, (a, b))) = fixture
        .lines()
        .zip(again.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!("line {}: fixture {a:?}, rendered {b:?}", n + 1);
    }
    assert_eq!(
        fixture.lines().count(),
        again.lines().count(),
        "line counts"
    );
    assert_eq!(fixture, again);
}

#[test]
fn json_layout_is_unchanged_byte_for_byte() {
    assert_round_trip(REPORT);
}

#[test]
fn full_json_layout_is_unchanged_byte_for_byte() {
    assert_round_trip(FULL);
}

#[test]
fn text_report() {
    insta::assert_snapshot!(render(&parse(REPORT), Format::Text, true));
}

#[test]
fn full_text_report() {
    insta::assert_snapshot!(render(&parse(FULL), Format::Text, true));
}

#[test]
fn csv_report() {
    insta::assert_snapshot!(render(&parse(REPORT), Format::Csv, false));
}

#[test]
fn full_csv_report() {
    insta::assert_snapshot!(render(&parse(FULL), Format::Csv, false));
}

/// Every number of `report` that no table of fields declares.
fn undeclared_numbers(report: &Report) -> Vec<String> {
    metrics::flatten(report)
        .into_iter()
        .filter(|f| f.value.is_number() && f.role == Role::Undeclared)
        .map(|f| f.name)
        .collect()
}

#[test]
fn every_metric_of_the_full_run_with_its_unit_and_direction() {
    let report = parse(FULL);
    let undeclared = undeclared_numbers(&report);
    assert!(
        undeclared.is_empty(),
        "numbers without a row in a table of fields (the facility's model.rs FIELDS):\n{}",
        undeclared.join("\n")
    );
    let all = metrics::of_report(&report);
    let width = all.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let mut listing = String::new();
    for m in &all {
        let _ = writeln!(
            listing,
            "{:width$}  {:12}  {}",
            m.name,
            m.unit.name(),
            m.better.name()
        );
    }
    insta::assert_snapshot!(listing);
}

#[test]
fn every_declared_field_with_what_it_is() {
    let mut listing = String::new();
    for (path, is) in declared::paths() {
        let _ = writeln!(listing, "{path}  {is:?}");
    }
    insta::assert_snapshot!(listing);
}

/// The full run with what its run did not have: every optional part present and every array
/// non-empty (a calibration's estimates, derived metrics and ratios, a throttled function, a
/// rank, ...), as a report the model reads.
fn everything() -> Report {
    let mut v: Value = serde_json::from_str(FULL).expect("the fixture is JSON");
    let set = |v: &mut Value, pointer: &str, x: Value| {
        *v.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer} is in the fixture")) = x;
    };
    v["usage"]["estimates"] = json!([{"event": "context_switches",
        "label": "context switches", "count": 3, "cost_ns": 2000.0, "estimated_ns": 6000.0,
        "estimated_low_ns": 5000.0, "estimated_high_ns": 7000.0, "source": "arum calibrate"}]);
    let counters = v.pointer_mut("/counters").expect("counters");
    counters["start_spread_ns"] = json!(100);
    counters["stop_spread_ns"] = json!(200);
    counters["core_types"] = json!([{"cpu": 0, "core_type": "cpu_core"}]);
    counters["not_counted"] = json!([{"spec": "cycles", "reason": "no PMU"}]);
    counters["metrics"] = json!([{"name": "IPC", "table": "t", "unit": "core", "value": 1.5,
        "raw": 1.5, "unit_label": "insn per cycle", "inputs": [["instructions", 3.0]],
        "why_not": null, "above_threshold": false}]);
    // An event of each label with rows of its own, and a ratio of each name.
    let mut clock = counters["events"][0].clone();
    for (path, _) in declared::paths() {
        let Some(rest) = path.strip_prefix("counters.events[") else {
            continue;
        };
        let spec = rest.split(']').next().unwrap_or_default();
        let known = counters["events"]
            .as_array()
            .expect("events")
            .iter()
            .any(|e| e["spec"] == spec);
        if !spec.is_empty() && !known {
            clock["spec"] = json!(spec);
            counters["events"]
                .as_array_mut()
                .expect("events")
                .push(clock.clone());
        }
    }
    let ratios: Vec<Value> = declared::paths()
        .iter()
        .filter_map(|(path, _)| path.strip_prefix("counters.ratios["))
        .filter_map(|rest| rest.strip_suffix("].value"))
        .map(|name| json!({"name": name, "value": 0.5, "numerator": "a", "denominator": "b"}))
        .collect();
    counters["ratios"] = Value::Array(ratios);
    let probe_cost = v.pointer_mut("/functions/probe_cost").expect("probe cost");
    probe_cost["entry_user_cycles"] = json!(900.0);
    let function = v.pointer_mut("/functions/functions/0").expect("a function");
    function["throttled"] =
        json!({"reason": "too_short", "at_ns": 1000, "timed_calls": 100, "mean_ns": 50.0});
    function["estimate"] = json!({"counted_before": 100, "sampled": 10, "windows": 5,
        "calls": 1000.0, "low": 900.0, "high": 1100.0, "saturated": false});
    for record in ["/tasks/totals", "/tasks/processes/0", "/tasks/threads/0"] {
        let delays = v.pointer_mut(&format!("{record}/delays")).expect("delays");
        for kind in ["block_io", "swap_in", "reclaim", "thrashing"] {
            delays[kind] = json!({"count": 1, "total_ns": 1000});
        }
    }
    let net = v
        .pointer("/ambient/samples/0/net/0")
        .expect("a network interface")
        .clone();
    set(&mut v, "/ambient/summary/net", json!([net]));
    let tick = v.pointer_mut("/noise/cpus/0/tick").expect("a tick verdict");
    tick["inferred_hz"] = json!(250.0);
    tick["sources_hz"] = json!([250.0, 100.0]);
    set(
        &mut v,
        "/tasks/counters",
        json!({"events": ["task-clock"], "threads": [{"pid": 1, "tid": 1, "counts": [5]}],
               "not_split": [{"spec": "page-faults", "reason": "not split"}]}),
    );
    set(
        &mut v,
        "/syscalls/unfinished",
        json!([{"name": "read", "count": 1}]),
    );
    set(
        &mut v,
        "/syscalls/calls/0/errnos",
        json!([{"errno": "ENOENT", "count": 2}]),
    );
    v["self_timing"]["samplers"] = json!([{"name": "arum-tree", "ticks": 12, "cpu_ns": 340000,
                                           "stretched_to_ns": 200000000, "budget_percent": 1}]);
    v["rank"] = json!({"rank": 0, "size": 2, "local_rank": 0, "job_id": "7",
                       "launcher": "slurm"});
    serde_json::from_value(v).expect("the filled-in fixture is a report")
}

#[test]
fn every_number_has_a_row_and_every_row_a_field() {
    let report = everything();
    let undeclared = undeclared_numbers(&report);
    assert!(
        undeclared.is_empty(),
        "numbers without a row in a table of fields:\n{}",
        undeclared.join("\n")
    );
    // Rows the report has no field for are stale: a renamed or removed field.
    let names: Vec<String> = metrics::flatten(&report)
        .into_iter()
        .map(|f| f.name)
        .collect();
    let stale: Vec<String> = declared::paths()
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| !names.iter().any(|n| declared::declares(path, n)))
        .collect();
    assert!(
        stale.is_empty(),
        "rows that name no field of a report:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_json_has_the_sections_in_the_table_s_order() {
    // The full run has every section; its JSON's top-level keys, in order.
    let json: serde_json::Value = serde_json::from_str(FULL).expect("the full fixture parses");
    let keys: Vec<&str> = json
        .as_object()
        .expect("a report is an object")
        .keys()
        .map(String::as_str)
        .collect();
    let at = |key: &str| {
        keys.iter()
            .position(|k| *k == key)
            .unwrap_or_else(|| panic!("section {key} is not a field of the report: {keys:?}"))
    };
    let order: Vec<usize> = SECTIONS.iter().map(|s| at(s.key)).collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "the report's fields {keys:?} are not in the order of report::sections {:?}",
        SECTIONS.iter().map(|s| s.key).collect::<Vec<_>>()
    );
}
