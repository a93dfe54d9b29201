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
fn task_clock_of_a_busy_helper_covers_its_cpu_time_and_no_more_than_its_run() {
    let (out, r) = run_json(&["-e", "task-clock", "--", &helper("burn"), "0.4"]);
    assert!(out.status.success());
    let clock = total(&r, "task-clock") as f64;
    let cpu = (u64_at(&r, "/usage/user_ns") + u64_at(&r, "/usage/system_ns")) as f64;
    let wall = u64_at(&r, "/usage/wall_ns") as f64;
    // task-clock also counts the time interrupts and the hypervisor take while the task runs,
    // which rusage leaves out (a few percent on a busy VM): never less than rusage, and never
    // more than the wall time of a single busy thread.
    assert!(
        clock >= 0.98 * cpu && clock <= wall,
        "task-clock {clock} ns, user+sys {cpu} ns, wall {wall} ns"
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
    // --per-cpu: the breakdown on a machine of any size (beyond 8 CPUs the default is totals).
    let (_, r) = run_json(&[
        "--per-cpu",
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
        "--per-cpu",
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

// One counter per event for the whole program (the default beyond 8 CPUs): every thread is
// counted, and the report keeps totals only.
#[test]
fn totals_count_every_thread_with_one_counter_per_event() {
    let (_, r) = run_json(&[
        "--totals",
        "-e",
        "task-clock page-faults",
        "--",
        &helper("burn"),
        "0.1",
        "8",
    ]);
    assert_eq!(r["counters"]["breakdown"], "totals", "{}", r["counters"]);
    for name in ["task-clock", "page-faults"] {
        assert_eq!(event(&r, name)["per_cpu"].as_array().unwrap().len(), 0);
    }
    assert!(
        total(&r, "task-clock") >= 780_000_000,
        "{}",
        total(&r, "task-clock")
    );
    let opened = r["counters"]["opened_as"].as_str().unwrap();
    assert!(opened.starts_with("one counter per event;"), "{opened}");
    let (_, r) = run_json(&[
        "--totals",
        "-e",
        "page-faults",
        "--",
        &helper("touch"),
        "64",
        "0",
    ]);
    assert!(total(&r, "page-faults") >= 64 * 1024 * 1024 / 4096);
}

// Without --per-cpu or --totals, the program is counted per CPU up to 8 CPUs and as totals
// beyond; --per-cpu asks for the breakdown on any machine.
#[test]
fn the_breakdown_follows_the_cpu_count_unless_asked() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let (_, r) = run_json(&["-e", "task-clock", "--", "true"]);
    let ncpus = r["counters"]["cpus"].as_array().unwrap().len();
    let expected = if ncpus <= 8 { "per_cpu" } else { "totals" };
    assert_eq!(r["counters"]["breakdown"], expected, "online {online}");
    let (_, r) = run_json(&["--per-cpu", "-e", "task-clock", "--", "true"]);
    assert_eq!(r["counters"]["breakdown"], "per_cpu");
    assert_eq!(
        event(&r, "task-clock")["per_cpu"].as_array().unwrap().len(),
        ncpus
    );
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
    // A reading every 100 ms of the run at most, then the final one.
    let ends: Vec<u64> = intervals
        .iter()
        .map(|i| i["t_end_ns"].as_u64().unwrap())
        .collect();
    common::assert_periodic(&ends[..ends.len() - 1], 100_000_000, wall);
    assert!(ends.len() >= 2, "{ends:?}");
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
        .and_then(|v| arum_units::duration::parse(v).ok())
        .expect("the report gives the elapsed time")
        .as_secs_f64();
    // At most one per 100 ms of the run (a starved sampler skips some), and the last, partial
    // one: the lines add up to the total.
    let most = (wall / 0.1) as u64 + 1;
    assert!(
        (2..=most).contains(&lines),
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

#[test]
fn software_counts_agree_with_perf_stat_on_the_same_run() {
    // arum measures perf stat measuring the helper: one execution of the helper counted by both,
    // so run-to-run variation of the helper (large on a busy machine: task-clock includes the time
    // interrupts and the hypervisor take while the task runs) does not enter. arum's count also
    // holds perf stat's own work, which is measured around the helper doing nothing, in runs
    // before and after the measured one; their spread is this machine's noise for the check.
    let dir = common::temp_dir();
    let (report, perf_out) = (dir.path().join("r.json"), dir.path().join("perf.csv"));
    let both = |event: &str, program: &[String]| -> (f64, f64) {
        let out = arum()
            .args(["--format", "json", "-o"])
            .arg(&report)
            .args(["-e", event, "--", "perf", "stat", "-x", ",", "-o"])
            .arg(&perf_out)
            .args(["-e", event, "--"])
            .args(program)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run perf ({e}): scripts/deps.sh installs linux-perf")
            });
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let text = std::fs::read_to_string(&perf_out).unwrap();
        let theirs: f64 = text
            .lines()
            .find(|l| l.split(',').nth(2) == Some(event))
            .and_then(|l| l.split(',').next()?.parse().ok())
            .unwrap_or_else(|| panic!("{event} missing from perf stat output:\n{text}"));
        (total(&r, event) as f64, theirs)
    };
    // `unit` turns a count into perf stat's unit (task-clock: ms).
    let agree = |event: &str, unit: f64, idle: &[String], busy: &[String], expect: f64| {
        // The first run reads perf and the helper from disk; its cost is not perf stat's usual.
        both(event, idle);
        let mut own = Vec::new();
        let mut overhead = |(ours, theirs): (f64, f64)| {
            own.push(ours / unit - theirs);
        };
        overhead(both(event, idle));
        let (ours, theirs) = both(event, busy);
        overhead(both(event, idle));
        overhead(both(event, idle));
        let (ours, theirs) = (ours / unit, theirs);
        assert!(
            theirs >= 0.99 * expect,
            "{event}: perf stat counted {theirs}, the helper does at least {expect}"
        );
        // arum counts perf stat's tree, which holds everything perf stat counted.
        assert!(
            ours >= 0.999 * theirs,
            "{event}: arum {ours} < perf stat {theirs}"
        );
        own.sort_by(f64::total_cmp);
        let (low, high) = (own[0], own[own.len() - 1]);
        let noise = high - low;
        println!(
            "{event}: arum {ours:.3}, perf stat {theirs:.3}; perf stat's own work {low:.3}..{high:.3}"
        );
        if noise > 0.05 * theirs {
            println!(
                "{event}: perf stat's own work varied by {noise:.3} between runs, more than 5% of \
                 the helper's count: this machine is too noisy to compare the rest"
            );
            return;
        }
        let slack = 0.02 * theirs;
        assert!(
            ours - theirs >= low - slack && ours - theirs <= high + slack,
            "{event}: arum counted {:.3} beyond perf stat, outside perf stat's own {low:.3}..{high:.3} \
             (± {slack:.3})",
            ours - theirs
        );
    };
    let burn = |seconds: &str| vec![helper("burn"), seconds.to_string()];
    agree("task-clock", 1e6, &burn("0"), &burn("1.0"), 1000.0 * 0.99);
    let touch = |mib: &str| vec![helper("touch"), mib.to_string(), "0".to_string()];
    // 32 MiB of fresh pages.
    agree("page-faults", 1.0, &touch("0"), &touch("32"), 8192.0);
}

/// Whether this process may count system-wide (root, CAP_PERFMON or perf_event_paranoid <= 0).
fn system_wide_allowed() -> bool {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2);
    paranoid <= 0 || nix::unistd::geteuid().is_root()
}

#[test]
fn system_scope_counts_every_software_event_whatever_leads_the_list() {
    let args = [
        "-a",
        "-e",
        "task-clock,page-faults,context-switches,cpu-migrations",
        "--",
        "sleep",
        "0.5",
    ];
    if !system_wide_allowed() {
        println!("system-wide counting is not allowed here: checking the refusal instead");
        let out = arum().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(125));
        assert!(String::from_utf8_lossy(&out.stderr).contains("perf_event_paranoid"));
        return;
    }
    let (_, r) = run_json(&args);
    for name in ["task-clock", "page-faults", "context-switches"] {
        assert_eq!(event(&r, name)["status"], "counted", "{}", event(&r, name));
    }
    // Half a second of a whole machine: its timer alone switches contexts.
    assert!(total(&r, "context-switches") > 0);
    assert!(total(&r, "task-clock") > 400_000_000);
    let opened = r["counters"]["opened_as"].as_str().unwrap();
    assert!(opened.contains("everything on the CPU"), "{opened}");
    assert!(!opened.contains("inherited"), "{opened}");
}

#[test]
fn an_unprivileged_run_does_not_call_idle_cpus_multiplexed() {
    // As a user without CAP_PERFMON: software events on a CPU the program never ran on are
    // neither scaled nor called multiplexed.
    let root = nix::unistd::geteuid().is_root();
    let setpriv = std::path::Path::new("/usr/bin/setpriv").exists();
    let burn = helper("burn");
    let args = [
        "--per-cpu",
        "-e",
        "task-clock,page-faults",
        "--",
        "taskset",
        "-c",
        "0",
        &burn,
        "0.1",
    ];
    let (_, r) = if root && setpriv {
        let dir = common::temp_dir();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let path = dir.path().join("r.json");
        let out = Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
            .arg(common::arum_path())
            .args(["--format", "json", "-o"])
            .arg(&path)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            out,
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap(),
        )
    } else {
        println!("not root (or no setpriv): checking this user's own run");
        run_json(&args)
    };
    for name in ["task-clock", "page-faults"] {
        let e = event(&r, name);
        assert_eq!(e["multiplexed"], false, "{e}");
        for c in e["per_cpu"].as_array().unwrap() {
            assert_eq!(c["percent_running"], 100.0, "{e}");
            assert_eq!(c["raw"], c["scaled"], "{e}");
        }
    }
}

#[test]
fn cpu_lists_are_bounded_before_they_are_expanded_and_intervals_are_checked() {
    let out = arum()
        .args(["-C", "0-4000000000", "-e", "task-clock", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("beyond any machine"));
    let out = arum()
        .args(["-I", "0", "-e", "task-clock", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 ms"));
}

#[test]
fn the_text_report_names_events_as_given_and_lists_those_left_out() {
    let out = arum()
        .args([
            // An Intel event on an AMD K8: known, but not to this CPU's table.
            "--cpu",
            "AuthenticAMD-15-41",
            "-e",
            "task-clock:u,task-clock:k,INST_RETIRED.ANY",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("task-clock:u "), "{text}");
    assert!(text.contains("task-clock:k "), "{text}");
    // The unknown name switched hardware counting off; it is listed, and said once only.
    assert!(
        text.lines()
            .any(|l| l.contains("INST_RETIRED.ANY") && l.contains("not counted")),
        "{text}"
    );
    assert!(text.matches("did you mean").count() <= 1, "{text}");
    assert_eq!(
        text.matches("hardware counting").count(),
        2,
        "the section's line and the left-out event's line: {text}"
    );
}

#[test]
fn a_generic_event_on_a_cpu_without_a_table_opens_as_the_kernels_generic_event() {
    // A future family: no table, so `cycles` and a cache event go to the kernel's generic
    // events (PERF_TYPE_HARDWARE 0, PERF_TYPE_HW_CACHE 3), and the report says so.
    let (_, r) = run_json(&[
        "--cpu",
        "GenuineIntel-19-1",
        "-e",
        "cycles,L1-dcache-load-misses,task-clock",
        "--",
        "true",
    ]);
    let cycles = event(&r, "cycles");
    assert_eq!(cycles["perf_type"], 0, "{cycles}");
    assert_eq!(cycles["config"], "0x0");
    assert!(cycles["encoding"].as_str().unwrap().starts_with("generic"));
    let cache = event(&r, "L1-dcache-load-misses");
    assert_eq!(cache["perf_type"], 3, "{cache}");
    // PERF_COUNT_HW_CACHE_L1D | OP_READ << 8 | RESULT_MISS << 16.
    assert_eq!(cache["config"], "0x10000");
    assert_eq!(event(&r, "task-clock")["encoding"], "software");
    // Counted where the machine has a PMU; where it has none, said so with the kernel's reason.
    for e in [cycles, cache] {
        let status = e["status"].as_str().unwrap();
        assert!(
            status == "counted" || e["reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{e}"
        );
    }
}

#[test]
fn a_metric_without_its_events_has_no_value_and_says_why() {
    let (_, r) = run_json(&["-M", "insn_per_cycle", "--", "true"]);
    let metrics = r["counters"]["metrics"].as_array().unwrap();
    let ipc = metrics
        .iter()
        .find(|m| m["name"] == "insn_per_cycle")
        .expect("the metric is reported");
    let counted =
        |name: &str| {
            r["counters"]["events"].as_array().unwrap().iter().any(|e| {
                e["status"] == "counted" && e["alias"].as_str().unwrap_or("").contains(name)
            })
        };
    if has_hardware_pmu() && counted("instructions") {
        assert!(ipc["value"].as_f64().unwrap() > 0.0, "{ipc}");
    } else {
        // Never 0: no value, and why.
        assert!(ipc["value"].is_null(), "{ipc}");
        assert!(!ipc["why_not"].as_str().unwrap().is_empty(), "{ipc}");
    }
    // The events it needs were counted for it, marked as not named by the user.
    assert!(r["counters"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["requested"] == false));
}
