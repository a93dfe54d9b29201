//! Resource usage: helpers do a known amount of work and the report must show that amount.

mod common;

use common::{helper, run_json, u64_at, MIB};

#[test]
fn cpu_burner_user_time_matches_the_work() {
    let (out, json) = run_json(&["--", &helper("burn"), "0.3"]);
    assert!(out.status.success());
    let user = u64_at(&json, "/usage/user_ns") as f64 / 1e9;
    let sys = u64_at(&json, "/usage/system_ns") as f64 / 1e9;
    let wall = u64_at(&json, "/usage/wall_ns") as f64 / 1e9;
    // The burner spins until its thread has used 0.3 s of CPU time; the process start adds a
    // few milliseconds, whatever the load (CPU time, unlike wall time, does not stretch).
    assert!(
        (0.3..0.35).contains(&(user + sys)),
        "user+sys {:.3} s, expected 0.3 s and a little start-up",
        user + sys
    );
    assert!(
        user >= 0.8 * (user + sys),
        "a user-space loop: user {user:.3} s"
    );
    // wall and CPU time come from different clocks; allow the kernel's accounting granularity.
    assert!(
        wall + 0.005 >= user + sys,
        "wall {wall:.4} s < user+sys {:.4} s",
        user + sys
    );
    // One thread cannot use more than one CPU (on a busy machine it gets less).
    let util = json["usage"]["cpu_utilisation"].as_f64().unwrap();
    assert!(util <= 1.02, "one busy thread used {util} CPUs");
}

#[test]
fn peak_memory_of_a_200_mib_toucher() {
    let (out, json) = run_json(&["--", &helper("touch"), "200", "300"]);
    assert!(out.status.success());
    let peak = u64_at(&json, "/usage/peak_memory/peak_rss_bytes");
    assert!(
        (200 * MIB..260 * MIB).contains(&peak),
        "peak {} MiB",
        peak / MIB
    );
    assert!(json["usage"]["peak_memory"]["method"].is_string());
    // Every page touched is a fresh minor fault.
    assert!(u64_at(&json, "/usage/minor_faults") >= 200 * MIB / 4096);
}

#[test]
fn peak_memory_is_not_inflated_by_a_large_launcher() {
    // arum touches 300 MiB itself before forking: the program's peak must not include it.
    let report = |args: &[&str]| {
        let dir = common::temp_dir();
        let path = dir.path().join("r.json");
        let out = common::arum()
            .env("ARUM_TEST_BALLAST_MIB", "300")
            .args(["--format", "json", "-o"])
            .arg(&path)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        json
    };
    let json = report(&["--", &helper("touch"), "200", "300"]);
    let peak = u64_at(&json, "/usage/peak_memory/peak_rss_bytes");
    assert!(
        (200 * MIB..260 * MIB).contains(&peak),
        "peak {} MiB",
        peak / MIB
    );
    assert!(u64_at(&json, "/usage/peak_memory/launcher_rss_at_fork_bytes") >= 300 * MIB);

    let json = report(&["--", &helper("sleeper"), "20", "5"]);
    let peak = u64_at(&json, "/usage/peak_memory/peak_rss_bytes");
    assert!(
        peak < 20 * MIB,
        "a small program under a large arum: peak {} MiB",
        peak / MIB
    );
}

#[test]
fn a_program_past_the_grace_has_a_sampled_peak_on_a_busy_machine() {
    // Every CPU busy with four spinning processes: arum's threads wait for a CPU like everyone else.
    // A program that runs 50 ms, well past the 2 ms launch grace, still gets a sample of its
    // own memory instead of ru_maxrss, which here holds arum's 300 MiB (the ballast).
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut hogs: Vec<_> = (0..4 * cpus)
        .map(|_| {
            std::process::Command::new(helper("burn"))
                .arg("30")
                .spawn()
                .unwrap()
        })
        .collect();
    let dir = common::temp_dir();
    let path = dir.path().join("r.json");
    let mut methods = Vec::new();
    for _ in 0..5 {
        let out = common::arum()
            .env("ARUM_TEST_BALLAST_MIB", "300")
            .args(["--format", "json", "-o"])
            .arg(&path)
            .args(["--", &helper("sleeper"), "1", "50"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let p = &json["usage"]["peak_memory"];
        methods.push((
            p["method"].as_str().unwrap().to_string(),
            u64_at(&json, "/usage/peak_memory/peak_rss_bytes") / MIB,
        ));
    }
    for h in &mut hogs {
        let _ = h.kill();
        let _ = h.wait();
    }
    for (method, peak_mib) in &methods {
        assert_ne!(method, "rusage_upper_bound", "{methods:?}");
        assert!(*peak_mib < 20, "{methods:?}");
    }
}

/// `--no-memory-sampling`: no sampler; the peak is ru_maxrss (or memory.peak), and says so.
#[test]
fn memory_sampling_can_be_turned_off() {
    let (out, json) = run_json(&["--no-memory-sampling", "--", &helper("touch"), "200", "300"]);
    assert!(out.status.success());
    let p = &json["usage"]["peak_memory"];
    assert_eq!(p["samples"], 0, "{p}");
    let method = p["method"].as_str().unwrap();
    assert!(
        ["rusage", "cgroup_v2_memory_peak"].contains(&method),
        "{method}"
    );
    let peak = u64_at(&json, "/usage/peak_memory/peak_rss_bytes");
    assert!(peak >= 200 * MIB, "peak {} MiB", peak / MIB);
    if method == "rusage" {
        assert_eq!(peak, u64_at(&json, "/usage/rusage_maxrss_bytes"));
    }
}

#[test]
fn sleeping_k_times_gives_at_least_k_voluntary_switches() {
    let (out, json) = run_json(&["--", &helper("sleeper"), "50", "1"]);
    assert!(out.status.success());
    assert!(u64_at(&json, "/usage/voluntary_context_switches") >= 50);
}

#[test]
fn threads_and_processes_of_the_tree_are_counted() {
    let (out, json) = run_json(&["--", &helper("burn"), "0.3", "4"]);
    assert!(out.status.success());
    assert_eq!(
        u64_at(&json, "/usage/peak_memory/peak_threads"),
        5,
        "main + 4 burners"
    );
    let (_, json) = run_json(&[
        "--shell",
        "--launch",
        &format!("{0} 0.3 1 & {0} 0.3 1; wait", helper("burn")),
    ]);
    assert!(
        u64_at(&json, "/usage/peak_memory/peak_processes") >= 3,
        "sh + 2 burners"
    );
    // The burners are children of sh and reaped by it: their CPU time is in the rusage. Each
    // burns 0.3 s of its thread's CPU clock, user and system time together: the kernel splits
    // that sum between the two by where its ticks landed, so on a busy machine (interrupts, a
    // hypervisor) user time alone can fall below 0.6 s; the sum cannot.
    let cpu = u64_at(&json, "/usage/user_ns") + u64_at(&json, "/usage/system_ns");
    assert!(
        cpu >= 590_000_000,
        "{cpu} ns of CPU time for 2 x 0.3 s of burning"
    );
}

#[test]
fn a_saved_calibration_turns_counts_into_labelled_time_estimates() {
    // A calibration saved in a cache directory of the test's own, then a run that reads it.
    let cache = common::temp_dir();
    let saved = common::arum()
        .env("XDG_CACHE_HOME", cache.path())
        .args([
            "calibrate",
            "--quick",
            "--save",
            "--only",
            "tasks.switch.process.same_cpu,memory.fault.minor",
        ])
        .output()
        .unwrap();
    assert!(
        saved.status.success(),
        "{}",
        String::from_utf8_lossy(&saved.stderr)
    );
    let dir = common::temp_dir();
    let path = dir.path().join("r.json");
    let out = common::arum()
        .env("XDG_CACHE_HOME", cache.path())
        .args(["--format", "json", "-o"])
        .arg(&path)
        .args(["--", &helper("pingpong"), "100"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let estimates = r["usage"]["estimates"].as_array().expect("estimates");
    let switches = estimates
        .iter()
        .find(|e| e["event"] == "context_switches")
        .expect("an estimate for context switches");
    let counted = u64_at(&r, "/usage/voluntary_context_switches")
        + u64_at(&r, "/usage/involuntary_context_switches");
    assert_eq!(switches["count"].as_u64(), Some(counted));
    assert!(switches["label"].as_str().unwrap().contains("estimated"));
    let cost = switches["cost_ns"].as_f64().unwrap();
    assert!(
        cost > 100.0 && cost < 1e6,
        "a context switch costs {cost} ns?"
    );
    // Without a saved calibration: no estimates at all.
    let (_, r) = run_json(&["--", "true"]);
    assert!(
        r["usage"].get("estimates").is_none() || r["usage"]["estimates"] == serde_json::json!([])
    );
}
