//! Event validation before launch and `arum list`, through the real binary.

mod common;

use common::{arum, run_json};
use serde_json::Value;

#[test]
fn a_misspelt_event_is_refused_with_a_suggestion_before_running() {
    let dir = common::temp_dir();
    let marker = dir.path().join("ran");
    // Names no table of any CPU has, ASCII or not, with a modifier or among good names.
    for list in [
        "dcache_mises task-clock",
        "tásk-clöck",
        "task-clock,cycles,dcache_mises:u",
        "ÄÖÜ.ß",
    ] {
        let out = arum()
            .args(["--cpu", "AuthenticAMD-15-41", "-e", list, "--", "touch"])
            .arg(&marker)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{list}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("unknown event"), "{stderr}");
        assert!(!marker.exists(), "{list}: the program ran");
    }
    let out = arum()
        .args([
            "-e",
            "dcache_mises",
            "--cpu",
            "AuthenticAMD-15-41",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean 'dcache_misses'"));
}

#[test]
fn another_cpus_event_warns_and_still_measures() {
    // INST_RETIRED.ANY is Intel's: an AMD K8 does not have it, the program still runs.
    let (out, r) = run_json(&[
        "--cpu",
        "AuthenticAMD-15-41",
        "-e",
        "INST_RETIRED.ANY task-clock",
        "--",
        "sh",
        "-c",
        "exit 4",
    ]);
    assert_eq!(out.status.code(), Some(4), "the program still ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("hardware counting is off"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("INST_RETIRED.ANY"), "{stderr}");
    // Said once in the report: in the counters section, not repeated among the warnings.
    let recorded = r["warnings"].as_array().unwrap();
    assert!(
        !recorded
            .iter()
            .any(|w| w.as_str().unwrap().contains("hardware counting is off")),
        "{recorded:?}"
    );
    let c = &r["counters"];
    assert_eq!(c["hardware_counting"], false);
    assert!(c["hardware_off_reason"]
        .as_str()
        .unwrap()
        .contains("INST_RETIRED.ANY"));
    // Software events are still counted.
    assert_eq!(c["events"][0]["name"], "task-clock");
    assert_eq!(c["events"][0]["status"], "counted");
}

#[test]
fn strict_turns_the_warning_into_an_error_before_running() {
    let dir = common::temp_dir();
    let marker = dir.path().join("ran");
    let out = arum()
        .args([
            "--strict",
            "--cpu",
            "AuthenticAMD-15-41",
            "-e",
            "INST_RETIRED.ANY",
            "--",
            "touch",
        ])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    assert!(!marker.exists());
}

#[test]
fn a_cpu_without_a_table_still_counts_generic_events_and_too_many_events_is_a_reason() {
    // A future Intel family: no table, yet `cycles` is planned (the kernel's generic event,
    // with the architectural encoding for the register back-end).
    let (out, r) = run_json(&[
        "--cpu",
        "GenuineIntel-19-1",
        "-e",
        "cycles,branch-misses",
        "--",
        "true",
    ]);
    assert!(out.status.success());
    let c = &r["counters"];
    assert_eq!(c["hardware_counting"], true, "{c}");
    assert_eq!(c["table"], Value::Null);
    let names: Vec<&str> = c["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cycles", "branch-misses"]);
    let (_, r) = run_json(&[
        "--cpu",
        "AuthenticAMD-15-41",
        "-e",
        "dcache_accesses dcache_misses L1_DTLBmiss_L2_DTLBhit L1_L2_DTLBmiss cycles",
        "--",
        "true",
    ]);
    assert!(r["counters"]["hardware_off_reason"]
        .as_str()
        .unwrap()
        .starts_with("too many events"));
}

#[test]
fn the_original_tools_event_set_is_placed_on_k8_counters() {
    let (out, r) = run_json(&[
        "--cpu",
        "AuthenticAMD-15-41",
        "-e",
        "dcache_accesses dcache_misses",
        "-e",
        "L1_DTLBmiss_L2_DTLBhit,L1_L2_DTLBmiss",
        "--",
        "true",
    ]);
    assert!(out.status.success());
    let c = &r["counters"];
    assert_eq!(c["hardware_counting"], true, "{c}");
    let configs: Vec<&str> = c["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["config"].as_str().unwrap())
        .collect();
    assert_eq!(configs, ["0x40", "0x41", "0x45", "0x46"]);
}

#[test]
fn events_file_takes_one_name_per_line_with_comments() {
    let dir = common::temp_dir();
    let file = dir.path().join("events");
    std::fs::write(
        &file,
        "# what to count\ntask-clock\n\npage-faults  # faults too\n",
    )
    .unwrap();
    let (_, r) = run_json(&["--events-file", file.to_str().unwrap(), "--", "true"]);
    let names: Vec<&str> = r["counters"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["task-clock", "page-faults"]);
}

fn list_json(cpu: &str) -> Vec<Value> {
    let out = arum()
        .args(["list", "--cpu", cpu, "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn list_json_has_the_fields_scripts_rely_on() {
    let k8 = list_json("AuthenticAMD-15-41");
    let misses = k8
        .iter()
        .find(|l| l["name"] == "DATA_CACHE_MISSES")
        .unwrap();
    assert_eq!(misses["alias"], "dcache_misses");
    assert_eq!(misses["event_select"], 0x41);
    for key in ["umask", "cmask", "inv", "edge"] {
        assert_eq!(misses[key], 0, "{key}");
    }
    assert_eq!(misses["counters"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(misses["perf_config"], "0x41");
    assert!(
        k8.iter().any(|l| l["name"].as_str().unwrap().contains(':')),
        "NAME:UMASK lines"
    );

    let p4 = list_json("GenuineIntel-15-3");
    let cycles = p4.iter().find(|l| l["alias"] == "cycles").unwrap();
    assert_eq!(cycles["name"], "global_power_events:RUNNING");
    assert_eq!(cycles["escr"], "0x26000200");
    assert_eq!(cycles["cccr"], "0x3d000");
    assert_eq!(cycles["perf_config"], "0x300002000003d000");
}

#[test]
fn list_text_filters_by_pattern_and_lists_cpus() {
    let out = arum()
        .args(["list", "--cpu", "GenuineIntel-6-17", "l1d_repl"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Intel Core microarchitecture"));
    assert!(
        text.contains("dcache_misses") && text.contains("L1D_REPL"),
        "{text}"
    );
    assert!(!text.contains("L1D_ALL_REF"), "the pattern filters");
    let out = arum().args(["list", "--cpus"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for key in [
        "AuthenticAMD-15-",
        "AuthenticAMD-16-",
        "GenuineIntel-6-16..17",
        "GenuineIntel-15-",
        "GenuineIntel-6-55",
        "GenuineIntel-6-8F",
        "AuthenticAMD-26-",
    ] {
        assert!(text.contains(key), "{key} missing:\n{text}");
    }
}

#[test]
fn user_tables_directory_overrides_the_built_in_ones() {
    let dir = common::temp_dir();
    std::fs::write(
        dir.path().join("mine.toml"),
        r#"[table]
name = "mine"
title = "A table of my own"
vendor = "AuthenticAMD"
style = "amd"
[[table.match]]
family = 0x0F
models = [[0x00, 0xFF]]
[pmu]
general_counters = 4
counter_width = 48
[aliases]
dcache_misses = "MY_MISSES"
[[event]]
name = "MY_MISSES"
event = 0x41
desc = "Data cache misses, my way"
"#,
    )
    .unwrap();
    let out = arum()
        .env("ARUM_EVENT_TABLES", dir.path())
        .args(["list", "--cpu", "AuthenticAMD-15-41", "--format", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"table\":\"mine\"") && text.contains("MY_MISSES"),
        "{text}"
    );
}

fn lines_of(args: &[&str]) -> (std::process::Output, Vec<Value>) {
    let out = arum().args(args).output().unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    (out, lines)
}

#[test]
fn list_without_a_table_shows_what_can_be_counted_and_exits_0() {
    // This machine: whatever its CPU, the listing works (with or without a table).
    let out = arum().args(["list"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for section in ["Generic events", "Software events", "PMUs"] {
        assert!(text.contains(section), "{section} missing:\n{text}");
    }
    // A CPU ARUM has no table for: generic, architectural and software events.
    let (out, lines) = lines_of(&["list", "--cpu", "GenuineIntel-19-1", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let kinds: std::collections::BTreeSet<&str> =
        lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["architectural", "generic", "software"]
            .into_iter()
            .collect()
    );
    let cycles = lines
        .iter()
        .find(|l| l["name"] == "cycles" && l["kind"] == "generic")
        .unwrap();
    assert_eq!(
        (cycles["perf_type"].as_u64(), cycles["perf_config"].as_str()),
        (Some(0), Some("0x0"))
    );
    let l1 = lines
        .iter()
        .find(|l| l["name"] == "L1-dcache-load-misses")
        .unwrap();
    assert_eq!(
        (l1["perf_type"].as_u64(), l1["perf_config"].as_str()),
        (Some(3), Some("0x10000"))
    );
    let arch = lines
        .iter()
        .find(|l| l["kind"] == "architectural" && l["name"] == "cycles")
        .unwrap();
    assert_eq!(arch["event_select"], 0x3c);
    // An AMD one gets the legacy core events instead.
    let (_, lines) = lines_of(&["list", "--cpu", "AuthenticAMD-31-0", "--format", "json"]);
    let legacy = lines
        .iter()
        .find(|l| l["kind"] == "amd_legacy" && l["name"] == "instructions")
        .unwrap();
    assert_eq!(legacy["event_select"], 0xc0);
}

#[test]
fn a_decimal_model_gets_a_hint_and_table_names_work_as_cpu() {
    let out = arum().args(["list", "--cpu", "6-23"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean 6-17 (model 0x17"), "{err}");
    let out = arum()
        .args(["list", "--cpu", "skylakex", "L1D.REPLACEMENT"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[intel-skylakex]") && text.contains("dcache_misses = L1D.REPLACEMENT"),
        "{text}"
    );
}

#[test]
fn hybrid_parts_list_each_core_types_events() {
    let (out, lines) = lines_of(&[
        "list",
        "--cpu",
        "GenuineIntel-6-97",
        "--format",
        "json",
        "INST_RETIRED.ANY",
    ]);
    assert!(out.status.success());
    let units: std::collections::BTreeSet<&str> = lines
        .iter()
        .filter(|l| l["kind"] == "table")
        .filter_map(|l| l["unit"].as_str())
        .collect();
    assert_eq!(units, ["cpu_atom", "cpu_core"].into_iter().collect());
}

#[test]
fn metrics_are_listed_by_group_and_planned_with_their_events() {
    let (out, lines) = lines_of(&[
        "list",
        "--cpu",
        "GenuineIntel-6-55-4",
        "--metrics",
        "TopdownL1",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert!(
        names.contains(&"tma_frontend_bound") && names.contains(&"tma_retiring"),
        "{names:?}"
    );
    let out = arum()
        .args(["list", "--metrics", "NoSuchGroup"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    // -M counts what the metric needs: IPC reads instructions and cycles.
    let (out, r) = run_json(&[
        "--cpu",
        "GenuineIntel-19-1",
        "-M",
        "insn_per_cycle",
        "--",
        "true",
    ]);
    assert!(out.status.success());
    let names: Vec<&str> = r["counters"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"instructions") && names.contains(&"cycles"),
        "{names:?}"
    );
    // An unknown metric is an error before anything runs.
    let out = arum()
        .args(["-M", "no_such_metric", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("arum list --metrics"));
}

#[test]
fn an_event_tables_directory_that_is_not_one_is_refused_whatever_the_events() {
    // task-clock needs no table: the mistake must not pass unseen because of that.
    for events in [vec!["-e", "task-clock"], vec![]] {
        let out = arum()
            .args(["--event-tables", "/nonexistent/arum-tables"])
            .args(&events)
            .args(["--", "sh", "-c", "echo ran"])
            .output()
            .expect("arum runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{events:?}: {err}");
        assert!(
            err.contains("--event-tables /nonexistent/arum-tables: not a readable directory"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "the program ran");
    }
}

/// `arum info` and `arum list` give one figure for the counters events are placed on: info's
/// (CPUID's), and where the model's table lists another, list names CPUID's beside it.
#[test]
fn info_and_list_agree_on_the_counters() {
    let info = arum().arg("info").output().unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    let Some(row) = info.lines().find(|l| l.starts_with("counters")) else {
        panic!("no counters row: {info}");
    };
    let list = arum().arg("list").output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    let Some(table) = list
        .lines()
        .find_map(|l| {
            l.strip_suffix(" bits")
                .and_then(|l| l.split_once(" general counters of "))
        })
        .map(|(n, _)| n.to_string())
    else {
        println!("no event table for this CPU: list names no counters to compare: {row}");
        return;
    };
    if row.contains("none reported") {
        println!("CPUID reports no counters here; the table's {table} are used");
        return;
    }
    let cpuid = row
        .split_whitespace()
        .find_map(|w| w.parse::<u32>().ok())
        .expect("info gives a number of general counters");
    if cpuid.to_string() != table {
        assert!(
            list.contains(&format!("CPUID reports {cpuid} general counters")),
            "info says {cpuid}, list {table} without saying why: {list}"
        );
        assert!(row.contains(&format!("lists {table} general")), "{row}");
    }
}
