//! Counting through perf_event_open, with software events and helpers that do known work
//! (this machine has no hardware PMU; hardware events are checked for a clean "not supported").

mod common;

use std::process::Command;

use common::{arum, helper, run_json, u64_at};
use serde_json::Value;

fn event<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["counters"]["events"]
        .as_array()
        .expect("counters.events")
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {}", report["counters"]))
}

fn total(report: &Value, name: &str) -> u64 {
    let e = event(report, name);
    assert_eq!(e["status"], "counted", "{e}");
    e["total_scaled"].as_u64().unwrap()
}

/// The machine exposes a core PMU to perf (absent on our VMs).
fn has_hardware_pmu() -> bool {
    ["cpu", "cpu_core"].iter().any(|d| {
        std::path::Path::new("/sys/bus/event_source/devices")
            .join(d)
            .exists()
    })
}

#[test]
fn task_clock_of_a_busy_helper_matches_its_cpu_time() {
    let (out, r) = run_json(&["-e", "task-clock", "--", &helper("burn"), "0.4"]);
    assert!(out.status.success());
    let clock = total(&r, "task-clock") as f64;
    let cpu = (u64_at(&r, "/usage/user_ns") + u64_at(&r, "/usage/system_ns")) as f64;
    assert!(
        (clock - cpu).abs() <= 0.05 * cpu,
        "task-clock {clock} ns vs user+sys {cpu} ns"
    );
}

#[test]
fn page_faults_cover_every_page_touched() {
    let (_, r) = run_json(&[
        "-e",
        "page-faults,minor-faults",
        "--",
        &helper("touch"),
        "64",
        "10",
    ]);
    let pages = 64 * 1024 * 1024 / 4096;
    assert!(total(&r, "page-faults") >= pages);
    assert!(total(&r, "minor-faults") >= pages);
}

#[test]
fn context_switches_at_least_one_per_pipe_round_trip() {
    let k = 500;
    let (_, r) = run_json(&["-e", "cs", "--", &helper("pingpong"), &k.to_string()]);
    assert!(
        total(&r, "context-switches") >= k,
        "{}",
        total(&r, "context-switches")
    );
}

#[test]
fn all_threads_are_counted_on_every_cpu_and_each_cpu_gets_its_own_share() {
    let (_, r) = run_json(&[
        "-e",
        "task-clock page-faults",
        "--",
        &helper("burn"),
        "0.1",
        "8",
    ]);
    let ncpus = r["counters"]["cpus"].as_array().unwrap().len();
    for name in ["task-clock", "page-faults"] {
        assert_eq!(event(&r, name)["per_cpu"].as_array().unwrap().len(), ncpus);
    }
    // Eight threads of 0.1 s each: inherited counters see all of them.
    assert!(
        total(&r, "task-clock") >= 780_000_000,
        "{}",
        total(&r, "task-clock")
    );

    // Pinned to one CPU, the program's time is counted on that CPU and (almost) nowhere else.
    let cpu = r["counters"]["cpus"][0].as_u64().unwrap().to_string();
    let (_, r) = run_json(&[
        "-e",
        "task-clock",
        "--",
        "taskset",
        "-c",
        &cpu,
        &helper("burn"),
        "0.2",
    ]);
    let e = event(&r, "task-clock");
    let on = |c: &Value| c["scaled"].as_u64().unwrap();
    let pinned = e["per_cpu"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cpu"].as_u64().unwrap().to_string() == cpu)
        .map(on)
        .unwrap();
    assert!(pinned >= 195_000_000, "{pinned} ns on CPU {cpu}: {e}");
    for c in e["per_cpu"].as_array().unwrap() {
        if c["cpu"].as_u64().unwrap().to_string() != cpu {
            // Only taskset's own start-up, before it pins itself and execs.
            assert!(on(c) < 10_000_000, "{} ns on CPU {}", on(c), c["cpu"]);
        }
    }
}

#[test]
fn counting_starts_at_exec_not_during_arums_set_up() {
    // arum touches 200 MiB (51,200 faults) before forking; `true` itself faults a few dozen pages.
    let dir = common::temp_dir();
    let path = dir.path().join("r.json");
    let out = arum()
        .env("ARUM_TEST_BALLAST_MIB", "200")
        .args(["--format", "json", "-o"])
        .arg(&path)
        .args(["-e", "page-faults task-clock", "--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        total(&r, "page-faults") < 1000,
        "{}",
        total(&r, "page-faults")
    );
    assert!(
        total(&r, "task-clock") < 20_000_000,
        "{}",
        total(&r, "task-clock")
    );
}

#[test]
fn a_hardware_event_is_reported_without_disturbing_the_run() {
    let (out, r) = run_json(&["-e", "cycles,task-clock", "--", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(u64_at(&r, "/usage/wall_ns") > 0);
    assert_eq!(event(&r, "task-clock")["status"], "counted");
    let cycles = r["counters"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["spec"] == "cycles")
        .expect("cycles resolved (through the CPU's table, or as the kernel's generic event)");
    if has_hardware_pmu() {
        assert_eq!(cycles["status"], "counted", "{cycles}");
    } else {
        assert_eq!(cycles["status"], "not_supported", "{cycles}");
        assert!(
            cycles["reason"].as_str().unwrap().contains("ENOENT")
                || cycles["reason"].as_str().unwrap().contains("EOPNOTSUPP")
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not counted"), "{stderr}");
        // --strict makes it an error before anything runs.
        let strict = arum()
            .args(["--strict", "-e", "cycles", "--", "sh", "-c", "exit 3"])
            .output()
            .unwrap();
        assert_eq!(strict.status.code(), Some(125));
    }
}

#[test]
fn system_scope_also_counts_an_independent_process() {
    // A neighbour touches 64 MiB 0.3 s into a 1.5 s `sleep` run by arum: only system scope
    // sees its faults.
    let neighbour = || {
        Command::new("sh")
            .args(["-c", &format!("sleep 0.3; exec {} 64 0", helper("touch"))])
            .spawn()
            .unwrap()
    };
    let pages = 64 * 1024 * 1024 / 4096;
    let mut n = neighbour();
    let (_, app) = run_json(&["-e", "page-faults", "--", "sleep", "1.5"]);
    n.wait().unwrap();
    let mut n = neighbour();
    let (_, sys) = run_json(&["-a", "-e", "page-faults", "--", "sleep", "1.5"]);
    n.wait().unwrap();
    assert!(
        total(&app, "page-faults") < 1000,
        "app scope counts only sleep"
    );
    assert!(
        total(&sys, "page-faults") >= pages,
        "system scope: {}",
        total(&sys, "page-faults")
    );
    assert_eq!(sys["counters"]["scope"], "system");
}

#[test]
fn intervals_follow_the_programs_own_schedule() {
    // 0.4 s asleep, then 0.3 s of CPU: the series must show the quiet start and the busy end.
    let burn = format!("sleep 0.4; exec {} 0.3", helper("burn"));
    let (_, r) = run_json(&["-I", "100", "-e", "task-clock", "--", "sh", "-c", &burn]);
    let c = &r["counters"];
    assert_eq!(c["interval_ms"], 100);
    let intervals = c["intervals"].as_array().unwrap();
    let wall = u64_at(&r, "/usage/wall_ns");
    // One reading per 100 ms of the run (a late one may be skipped on a loaded machine), plus
    // the final one.
    let expected = wall / 100_000_000;
    assert!(
        (expected.saturating_sub(2)..=expected + 1).contains(&(intervals.len() as u64)),
        "{} intervals in {wall} ns",
        intervals.len()
    );
    let ns = |i: &Value| -> u64 {
        i["counts"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    let end = |i: &Value| i["t_end_ns"].as_u64().unwrap();
    for i in intervals.iter().filter(|i| end(i) <= 350_000_000) {
        assert!(ns(i) < 20_000_000, "busy while asleep: {i}");
    }
    let late: u64 = intervals
        .iter()
        .filter(|i| end(i) > 400_000_000)
        .map(ns)
        .sum();
    assert!(late >= 290_000_000, "{late} ns of CPU after the sleep");
}

#[test]
fn text_mode_prints_one_line_per_interval() {
    let out = arum()
        .args([
            "-I",
            "100",
            "-e",
            "task-clock",
            "--",
            &helper("burn"),
            "0.5",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = stderr
        .lines()
        .filter(|l| l.starts_with("arum: ") && l.contains(" s  task-clock "))
        .count() as u64;
    // 0.5 s of CPU takes longer on a busy machine: one line per 100 ms of the run's wall time.
    let wall: f64 = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("application elapsed time"))
        .and_then(|v| v.trim().strip_suffix(" s")?.parse().ok())
        .expect("the report gives the elapsed time");
    let expected = (wall / 0.1) as u64;
    assert!(
        (expected.saturating_sub(2)..=expected).contains(&lines),
        "{lines} interval lines in {wall} s"
    );
}

#[test]
fn cpu_list_restricts_counting() {
    let (_, r) = run_json(&[
        "-C",
        "0",
        "-e",
        "task-clock",
        "--",
        &helper("burn"),
        "0.1",
        "2",
    ]);
    assert_eq!(r["counters"]["cpus"], serde_json::json!([0]));
    let per_cpu = event(&r, "task-clock")["per_cpu"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(per_cpu.len(), 1);
    let bad = arum()
        .args(["-C", "999", "-e", "task-clock", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not online"));
}

#[test]
fn pinned_counting_says_how_counters_were_opened() {
    let (_, r) = run_json(&["--no-multiplex", "-e", "task-clock", "--", "true"]);
    assert!(r["counters"]["opened_as"]
        .as_str()
        .unwrap()
        .contains("pinned"));
    assert_eq!(event(&r, "task-clock")["multiplexed"], false);
}

/// One software event of `args` as `perf stat -x,` counts it.
fn perf_stat(event: &str, args: &[&str]) -> f64 {
    let out = Command::new("perf")
        .args(["stat", "-x", ",", "-e", event, "--"])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run perf ({e}): install linux-perf (scripts/deps.sh does)")
        });
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find(|l| l.split(',').nth(2) == Some(event))
        .and_then(|l| l.split(',').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{event} missing from perf stat output:\n{text}"))
}

#[test]
fn software_counts_agree_with_perf_stat() {
    // task-clock on a CPU-bound helper, page-faults on a toucher. A whole second of CPU time, so
    // that the few milliseconds a process start varies by stay well inside 2%. On a busy
    // machine the start itself can cost tens of milliseconds more (measured: +23 ms in one of
    // two runs at a load of 7 on 2 CPUs, in either tool): that noise only adds time, so each
    // tool's least disturbed run of three is compared.
    let burn = helper("burn");
    let perf_ms = (0..3)
        .map(|_| perf_stat("task-clock", &[&burn, "1.0"]))
        .fold(f64::INFINITY, f64::min);
    let ours_ms = (0..3)
        .map(|_| {
            let (_, r) = run_json(&["-e", "task-clock", "--", &burn, "1.0"]);
            total(&r, "task-clock") as f64 / 1e6
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        (ours_ms - perf_ms).abs() <= 0.02 * perf_ms,
        "task-clock {ours_ms:.3} ms vs perf {perf_ms:.3} ms (least of three runs each)"
    );

    let touch = helper("touch");
    let perf_faults = perf_stat("page-faults", &[&touch, "32", "0"]);
    let (_, r) = run_json(&["-e", "page-faults", "--", &touch, "32", "0"]);
    let ours = total(&r, "page-faults") as f64;
    assert!(
        (ours - perf_faults).abs() <= 0.02 * perf_faults,
        "page-faults {ours} vs perf {perf_faults}"
    );
}
