//! `--syscalls`: a helper doing a known number of calls (N writes and N reads of K bytes, N
//! failed opens) under arum, checked against what it did and against `strace -c -f` counting the
//! same helper in the same test: exact counts, bytes, errno.
//!
//! Tracing needs CAP_PERFMON/CAP_SYS_ADMIN or perf_event_paranoid = -1 and the raw_syscalls
//! tracepoints. Without them the test checks the fallback: the program runs, the report says why.

mod common;

use std::collections::HashMap;
use std::process::Command;

use common::{arum, helper, run_json, temp_dir, tracing_allowed, u64_at};
use serde_json::Value;

const N: u64 = 300;
const K: u64 = 4096;

fn call<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["syscalls"]["calls"]
        .as_array()
        .expect("a calls list")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no call {name} in {}", json["syscalls"]))
}

fn errno_count(c: &Value, errno: &str) -> u64 {
    c["errnos"]
        .as_array()
        .expect("errnos")
        .iter()
        .find(|e| e["errno"] == errno)
        .map_or(0, |e| e["count"].as_u64().expect("count"))
}

/// strace -c -f's table: call → (calls, errors). `None` when strace is missing.
fn strace_counts(argv: &[&str]) -> Option<HashMap<String, (u64, u64)>> {
    let dir = temp_dir();
    let out = dir.path().join("strace.txt");
    let status = Command::new("strace")
        .args(["-c", "-f", "-o"])
        .arg(&out)
        .args(argv)
        .status();
    let Ok(status) = status else {
        eprintln!("strace is not installed (scripts/deps.sh installs it): compared with the helper's own counts only");
        return None;
    };
    assert!(status.success(), "strace ran the helper");
    let text = std::fs::read_to_string(&out).expect("strace's table");
    let mut calls = HashMap::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        // "% time seconds usecs/call calls [errors] syscall"; the total line says "total".
        let (calls_at, errors) = match w.len() {
            5 => (3, 0),
            6 => (3, w[4].parse().unwrap_or(0)),
            _ => continue,
        };
        if let Ok(n) = w[calls_at].parse::<u64>() {
            calls.insert(w[w.len() - 1].to_string(), (n, errors));
        }
    }
    Some(calls)
}

#[test]
fn counts_bytes_and_errno_match_the_helper_and_strace() {
    let mix = helper("syscall_mix");
    let (n, k) = (N.to_string(), K.to_string());
    let argv = [mix.as_str(), n.as_str(), k.as_str()];
    let mut args = vec!["--syscalls", "--views", "--"];
    args.extend(argv);
    let (out, json) = run_json(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = &json["syscalls"];
    if !tracing_allowed() {
        assert!(
            s["off_reason"].as_str().is_some_and(|w| !w.is_empty()),
            "{s}"
        );
        assert!(json["warnings"]
            .to_string()
            .contains("system call tracing is off"));
        return;
    }
    assert_eq!(s["off_reason"], Value::Null, "{s}");
    assert_eq!(u64_at(s, "/lost"), 0, "no record may be lost at this rate");
    let write = call(&json, "write");
    let read = call(&json, "read");
    // The helper prints nothing: its writes are exactly the loop's. Its reads are the loop's and
    // the dynamic loader's (a library's ELF header each, less than K bytes).
    assert_eq!(u64_at(write, "/calls"), N, "{write}");
    assert_eq!(u64_at(write, "/bytes"), N * K, "{write}");
    let extra = u64_at(read, "/calls") - N;
    assert!(extra <= 8, "{read}");
    let bytes = u64_at(read, "/bytes");
    assert!(bytes >= N * K && bytes - N * K <= extra * K, "{read}");
    assert_eq!(u64_at(write, "/errors"), 0);
    // Its failed opens (openat through the C library), and any of the loader's.
    let openat = call(&json, "openat");
    let enoent = errno_count(openat, "ENOENT");
    assert!(enoent >= N, "{openat}");
    assert_eq!(u64_at(openat, "/errors"), enoent, "{openat}");
    assert_eq!(call(&json, "openat")["category"], "file");
    // Durations are real: the mean is within min..max, p50 <= p99 <= max.
    for c in [write, read, openat] {
        let (p50, p99, max) = (
            u64_at(c, "/p50_ns"),
            u64_at(c, "/p99_ns"),
            u64_at(c, "/max_ns"),
        );
        assert!(p50 > 0 && p50 <= p99 && p99 <= max + max / 500, "{c}");
    }
    // The categories sum their calls.
    let file = json["syscalls"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "file")
        .expect("a file category");
    assert!(u64_at(file, "/calls") >= 3 * N, "{file}");
    // The peer, counting the same helper.
    if let Some(peer) = strace_counts(&argv) {
        for name in ["write", "read", "openat", "close", "mmap"] {
            let ours = json["syscalls"]["calls"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == name)
                .map(|c| (u64_at(c, "/calls"), u64_at(c, "/errors")));
            assert_eq!(
                ours,
                peer.get(name).copied(),
                "{name}: arum (calls, errors) vs strace -c -f"
            );
        }
    }
    // The views: one process, busiest probes, a table with TSC cycles where the TSC is a clock.
    let v = &json["views"];
    assert_eq!(v["overview"]["processes"].as_array().unwrap().len(), 1);
    let rate: u64 = v["overview"]["rate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert!(rate >= 3 * N, "{v}");
    let row = v["table"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["probe"] == "write")
        .expect("a write row");
    assert_eq!(u64_at(row, "/calls"), N);
}

/// arum with `args` and a JSON report, which must succeed; None, after that, where this process
/// may not trace system calls (the tests then have nothing of the calls to check).
fn traced(args: &[&str]) -> Option<Value> {
    let (out, json) = run_json(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tracing_allowed().then_some(json)
}

/// Threads and rounds of `syscall_storm` (4 calls a round): 640,000 calls, made from every CPU
/// at once as fast as they come. strace takes some 10 s for them.
const STORM: (u64, u64) = (8, 20_000);

/// `arum` run as root but without CAP_BPF and CAP_SYS_ADMIN (CAP_PERFMON kept): the perf path's
/// rights.
fn arum_without_bpf() -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        "--inh-caps=-bpf,-sys_admin",
        "--bounding-set=-bpf,-sys_admin",
        "--",
    ])
    .arg(common::arum_path());
    cmd
}

/// `arum_without_bpf` with `args` and a JSON report. None where setpriv cannot drop the
/// capabilities (not root, no setpriv).
fn without_bpf(args: &[&str]) -> Option<(std::process::Output, Value)> {
    let dir = temp_dir();
    let report = dir.path().join("r.json");
    let out = arum_without_bpf()
        .args(["--format", "json", "-o"])
        .arg(&report)
        .args(args)
        .output()
        .ok()?;
    let text = std::fs::read_to_string(&report).ok()?;
    Some((out, serde_json::from_str(&text).expect("a JSON report")))
}

/// Every call of the storm, by name: (calls, errors).
fn storm_expected() -> [(&'static str, u64, u64); 4] {
    let n = STORM.0 * STORM.1;
    [
        ("getppid", n, 0),
        ("openat", n, n),
        ("write", n, 0),
        ("read", n, 0),
    ]
}

#[test]
fn the_kernel_engine_counts_every_call_of_a_storm_as_strace_does() {
    let storm = helper("syscall_storm");
    let (threads, rounds) = (STORM.0.to_string(), STORM.1.to_string());
    let argv = [storm.as_str(), threads.as_str(), rounds.as_str()];
    let Some(json) = traced(&["--syscalls", "--", argv[0], argv[1], argv[2]]) else {
        return;
    };
    let s = &json["syscalls"];
    if s["engine"] != "bpf" {
        eprintln!(
            "the in-kernel engine did not run here ({}): the storm's counts are not checked",
            s["engine_note"]
        );
        return;
    }
    assert_eq!(u64_at(s, "/uncounted"), 0, "{s}");
    // The helper's own calls, exactly; the C library's start-up adds reads, opens and writes of
    // its own, which strace counts too.
    let peer = strace_counts(&argv);
    for (name, calls, errors) in storm_expected() {
        let c = call(&json, name);
        let (ours, our_errors) = (u64_at(c, "/calls"), u64_at(c, "/errors"));
        assert!(ours >= calls && ours - calls <= 16, "{name}: {c}");
        assert!(
            our_errors >= errors && our_errors - errors <= 16,
            "{name}: {c}"
        );
        if let Some(peer) = &peer {
            assert_eq!(
                Some((ours, our_errors)),
                peer.get(name).copied(),
                "{name}: arum (calls, errors) vs strace -c -f"
            );
        }
    }
    // The views are not asked for: no record was written.
    assert_eq!(json["views"], Value::Null);
    assert_eq!(u64_at(s, "/records"), 0, "{s}");
}

#[test]
fn without_cap_bpf_the_records_count_and_the_report_says_why() {
    let mix = helper("syscall_mix");
    let Some((out, json)) = without_bpf(&["--syscalls", "--", &mix, "100", "64"]) else {
        eprintln!("setpriv cannot drop CAP_BPF here: the fallback is not checked this way");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = &json["syscalls"];
    if !tracing_allowed() {
        return;
    }
    assert_eq!(s["engine"], "perf records", "{s}");
    let note = s["engine_note"].as_str().unwrap_or_default();
    assert!(note.contains("CAP_BPF"), "{s}");
    assert_eq!(u64_at(call(&json, "write"), "/calls"), 100);
    // Asking for the kernel engine where it cannot run is refused before the program runs.
    let out = arum_without_bpf()
        .args([
            "--syscalls",
            "--probe-engine",
            "bpf",
            "--",
            "sh",
            "-c",
            "echo ran",
        ])
        .output()
        .expect("setpriv ran a moment ago");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains("--probe-engine bpf") && err.contains("CAP_BPF"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "the program ran");
}

#[test]
fn the_records_engine_says_how_many_calls_a_full_ring_cost() {
    // Only getppid (filtered in the kernel), from the storm's threads at full rate: the storm
    // makes exactly threads × rounds of them, and nothing else in it calls getppid. Whether or
    // not the rings kept up here, the calls in the counts, those left unfinished and those the
    // report says have no record add up to that: a loss is never silent.
    let storm = helper("syscall_storm");
    let (threads, rounds) = (8u64, 100_000u64);
    let (t, r) = (threads.to_string(), rounds.to_string());
    let Some(json) = traced(&[
        "--syscalls=getppid",
        "--probe-engine",
        "perf",
        "--",
        &storm,
        &t,
        &r,
    ]) else {
        return;
    };
    let s = &json["syscalls"];
    assert_eq!(s["engine"], "perf records", "{s}");
    let counted = u64_at(call(&json, "getppid"), "/calls");
    let warnings: Vec<&str> = json["warnings"]
        .as_array()
        .expect("a list of warnings")
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("have no record"))
        .collect();
    assert!(warnings.len() <= 1, "{warnings:?}");
    let missing: u64 = warnings.first().map_or(0, |w| {
        w.split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count first in {w:?}"))
    });
    // An entry whose exit record was lost stays open to the end: the report lists it as
    // unfinished.
    let unfinished: u64 = s["unfinished"]
        .as_array()
        .expect("a list of unfinished calls")
        .iter()
        .filter(|u| u["name"] == "getppid")
        .map(|u| u64_at(u, "/count"))
        .sum();
    let lost = u64_at(s, "/lost");
    // The JSON report carries the same figure for scripts.
    assert_eq!(s["unrecorded"].as_u64(), Some(missing), "{s}");
    eprintln!(
        "{counted} getppid counted, {unfinished} unfinished, {missing} without a record, \
         {lost} records lost"
    );
    assert_eq!(
        counted + unfinished + missing,
        threads * rounds,
        "{warnings:?}"
    );
    if lost > 0 {
        assert!(missing > 0, "{lost} records lost, no call missing");
    }
}

#[test]
fn a_subset_is_filtered_in_the_kernel() {
    let mix = helper("syscall_mix");
    let Some(json) = traced(&["--syscalls=write,openat", "--", &mix, "50", "16"]) else {
        return;
    };
    let s = &json["syscalls"];
    let names: Vec<&str> = s["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| ["write", "openat"].contains(n)),
        "{names:?}"
    );
    assert_eq!(u64_at(call(&json, "write"), "/calls"), 50);
    assert!(s["filter"].as_str().unwrap().contains("||"), "{s}");
    // Only the selected calls wrote records: two per call.
    let calls: u64 = s["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| u64_at(c, "/calls"))
        .sum();
    assert!(u64_at(s, "/records") <= 2 * calls + 2, "{s}");
}

#[test]
fn tasks_between_probes_nest_the_calls_on_their_descriptor() {
    let mix = helper("syscall_mix");
    let Some(json) = traced(&[
        "--syscalls",
        "--task-begin",
        "openat",
        "--task-end",
        "close",
        "--",
        &mix,
        "20",
        "64",
    ]) else {
        return;
    };
    let t = &json["views"]["tasks"];
    assert_eq!(t["keyed_by"], "descriptor");
    // /dev/null and /dev/zero stay open to the end: open tasks, their writes and reads nested
    // in no ended task. Every failed open begins no task.
    assert!(u64_at(t, "/open") >= 2, "{t}");
    let shares: f64 = t["nested"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["share_pct"].as_f64().unwrap())
        .sum::<f64>()
        + t["unaccounted_pct"].as_f64().unwrap();
    assert!(
        u64_at(t, "/tasks") == 0 || (shares - 100.0).abs() < 1e-6,
        "{t}"
    );
}

#[test]
fn a_bad_selection_is_one_line_and_a_usage_error() {
    let out = arum()
        .args(["--syscalls=files", "--", "true"])
        .output()
        .expect("arum runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"files\"") && err.lines().count() <= 2,
        "{err}"
    );
}

#[test]
fn task_probes_that_delimit_nothing_are_refused_as_a_bad_selection_is() {
    for (args, want) in [
        (
            vec![
                "--syscalls",
                "--task-begin",
                "nosuch",
                "--task-end",
                "close",
            ],
            "neither a system call nor a function timed with -F",
        ),
        (
            vec![
                "--syscalls=openat",
                "--task-begin",
                "accept4",
                "--task-end",
                "close",
            ],
            "not among those traced (--syscalls=openat)",
        ),
        (
            vec![
                "--syscalls",
                "--task-begin",
                "openat",
                "--task-end",
                "nosuch_fn",
            ],
            "--task-end \"nosuch_fn\"",
        ),
    ] {
        let out = arum()
            .args(&args)
            .args(["--", "sh", "-c", "echo ran"])
            .output()
            .expect("arum runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "the program ran: {args:?}");
    }
}

#[test]
fn without_the_capabilities_the_program_runs_and_the_report_says_why() {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let root = nix::unistd::geteuid().is_root();
    if !root || paranoid == Some(-1) || !std::path::Path::new("/usr/bin/setpriv").exists() {
        eprintln!(
            "dropping CAP_PERFMON and CAP_SYS_ADMIN needs root, setpriv and perf_event_paranoid > -1 (it is {paranoid:?}): the other tests check this machine's own case"
        );
        return;
    }
    let dir = temp_dir();
    let report = dir.path().join("report.json");
    let arum = common::arum_path();
    // A root arum whose capabilities lack both: what an unprivileged user gets.
    let out = Command::new("/usr/bin/setpriv")
        .args(["--bounding-set=-sys_admin,-perfmon", "--"])
        .arg(&arum)
        .args(["--syscalls", "--format", "json", "-o"])
        .arg(&report)
        .args(["--", "sh", "-c", "exit 3"])
        .output()
        .expect("setpriv runs arum");
    assert_eq!(
        out.status.code(),
        Some(3),
        "the program's exit status: {out:?}"
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let why = json["syscalls"]["off_reason"].as_str().expect("a reason");
    assert!(
        why.contains("CAP_PERFMON") && why.contains("perf_event_paranoid"),
        "{why}"
    );
    assert!(json["syscalls"]["calls"].as_array().unwrap().is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("system call tracing is off"));
}

/// `arum info` calls the in-kernel engine usable exactly where runs use it, for functions and
/// for system calls alike: with every right, and without CAP_BPF.
#[test]
fn info_calls_the_kernel_engine_usable_where_runs_use_it() {
    let mix = helper("syscall_mix");
    let args = ["--syscalls", "-F", "libc:write", "--", &mix, "10", "64"];
    let engines = |json: &Value| {
        (
            json["functions"]["engine"].clone(),
            json["syscalls"]["engine"].clone(),
        )
    };
    let usable = |info: &std::process::Output| -> Value {
        let v: Value = serde_json::from_slice(&info.stdout).expect("info's JSON");
        v["backends"]["bpf"].clone()
    };
    let info = arum().args(["info", "--format", "json"]).output().unwrap();
    let (out, json) = run_json(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bpf = usable(&info);
    let used = engines(&json);
    eprintln!("with every right: info says {bpf}, the run used {used:?}");
    let both = used.0 == "bpf" && used.1 == "bpf";
    assert_eq!(
        bpf["usable"].as_bool(),
        Some(both),
        "info {bpf}, run {used:?}"
    );

    let Some((out, json)) = without_bpf(&args) else {
        eprintln!("setpriv cannot drop CAP_BPF here: only the run with every right is checked");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = arum_without_bpf()
        .args(["info", "--format", "json"])
        .output()
        .expect("setpriv ran a moment ago");
    let bpf = usable(&info);
    let used = engines(&json);
    eprintln!("without CAP_BPF: info says {bpf}, the run used {used:?}");
    assert_eq!(bpf["usable"], false, "{bpf}");
    assert!(used.0 != "bpf" && used.1 != "bpf", "{used:?}");
}
