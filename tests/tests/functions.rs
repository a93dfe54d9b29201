//! Function timing (uprobes): helper programs of known behaviour, each run once under arum; the
//! report must match what the helper itself counted and timed in that same run.
//!
//! Probes need CAP_SYS_ADMIN (the kernel's uprobe PMU and tracefs ask for it). Without it these
//! tests check what they can: that the program still runs, with a warning, and that --strict
//! turns the warning into exit 125.

mod common;

use std::process::Command;

use common::{arum, function, helper, native, run_json, said, u64_at};
use serde_json::Value;

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether uprobes can be opened here; says why not once per test.
fn probes_allowed() -> bool {
    let ok = caps::has_cap(
        None,
        caps::CapSet::Effective,
        caps::Capability::CAP_SYS_ADMIN,
    )
    .unwrap_or(false)
        && std::path::Path::new("/sys/bus/event_source/devices/uprobe").exists();
    if !ok {
        eprintln!(
            "uprobes need CAP_SYS_ADMIN and the uprobe PMU, which this test does not have: \
             only the fallback (the program runs, with a warning) is checked"
        );
    }
    ok
}

fn fallback_is_a_warning(args: &[&str]) {
    let (out, json) = run_json(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let why = json["functions"]["off_reason"].as_str().unwrap_or_default();
    assert!(
        why.contains("CAP_SYS_ADMIN") || why.contains("uprobe"),
        "{why}"
    );
}

/// Runs arum with `args` where probes can be opened, and checks that the program succeeded; where
/// they cannot, checks the fallback instead and gives None.
fn probed(args: &[&str]) -> Option<(std::process::Output, Value)> {
    if !probes_allowed() {
        fallback_is_a_warning(args);
        return None;
    }
    // One probed run at a time: estimates and costs are calibrated on this machine, and another
    // probed program competing for its CPUs (the tests run in parallel) would shift them.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (out, json) = run_json(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out, json))
}

#[test]
fn a_1ms_function_called_1000_times() {
    // Timing every call costs two probe hits per millisecond: 0.8% of the run where a hit costs
    // 4 µs, 3.2% where it costs 16 µs (both seen on our VMs), above the default budget of 2%. The
    // budget is tested elsewhere; here it is set out of the way.
    let args = [
        "--probe-budget",
        "10",
        "-F",
        "spin_ms",
        "--",
        &native("fcalls"),
        "ms",
        "1000",
    ];
    let Some((out, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "spin_ms");
    // Every call exactly, whatever the machine: a shortfall has been seen once in CI (966); the
    // whole entry and the warnings say where the calls went.
    assert_eq!(
        u64_at(f, "/calls"),
        1000,
        "{f}\nwarnings: {}\nrecords: {}",
        json["warnings"],
        json["functions"]["records"]
    );
    assert_eq!(f["calls_exact"], true);
    assert_eq!(u64_at(f, "/timed_calls"), 1000);
    assert!(
        f["throttled"].is_null(),
        "a 1 ms function is worth timing: {f}"
    );
    // The helper timed each call itself (wall clock around the call, as the probes do).
    let own: f64 = said(&out.stdout)["mean_ns"].parse().unwrap();
    let mean = f["inclusive"]["mean_ns"].as_f64().unwrap();
    assert!(
        (mean - own).abs() / own < 0.10,
        "arum's mean {mean:.0} ns, the helper's own {own:.0} ns"
    );
    assert!((900_000.0..).contains(&mean), "{mean}");
}

#[test]
fn recursive_fib_is_counted_exactly_and_nests_consistently() {
    let args = [
        "--no-throttle",
        "-F",
        "fib",
        "--",
        &native("fcalls"),
        "fib",
        "20",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "fib");
    assert_eq!(u64_at(f, "/calls"), 21891);
    assert_eq!(u64_at(f, "/timed_calls"), 21891);
    assert_eq!(
        u64_at(f, "/unfinished") + u64_at(f, "/unwound") + u64_at(f, "/orphan_returns"),
        0
    );
    // Every call's self time is inside its inclusive time; all the self times together are the
    // outermost call's inclusive time, as the tree of calls nests (up to the rounding of the
    // probe-cost corrections, which never make a time negative).
    let incl_total = u64_at(f, "/inclusive/total_ns");
    let excl_total = u64_at(f, "/exclusive/total_ns");
    let root = u64_at(f, "/inclusive/max_ns");
    assert!(excl_total <= incl_total);
    assert!(
        excl_total >= root,
        "self total {excl_total} < outermost call {root}"
    );
    assert!(
        u64_at(f, "/exclusive/max_ns") <= root,
        "a self time longer than the outermost call"
    );
}

#[test]
fn recursive_fib_is_throttled_without_no_throttle() {
    // fib(20) 30 times: long enough for sampling windows after the throttling (the records'
    // path: the in-kernel engine has no windows).
    let args = [
        "--probe-engine",
        "perf",
        "-F",
        "fib",
        "--",
        &native("fcalls"),
        "fib",
        "20",
        "30",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "fib");
    // Too short to time, or over the probe budget: whichever the reader saw first.
    assert!(!f["throttled"].is_null(), "{f}");
    assert_eq!(f["too_short"], true, "{f}");
    let truth = 21891.0 * 30.0;
    let e = &f["estimate"];
    // Calls of a few nanoseconds come faster than a probe hit (microseconds): the windows can
    // only bound them from below, and the report must say so rather than guess.
    let low = e["low"].as_f64().unwrap();
    assert!(
        low <= truth,
        "lower bound {low} above the {truth} calls made"
    );
    match e["calls"].as_f64() {
        Some(calls) => assert!(
            (calls - truth).abs() / truth < 0.10,
            "estimate {calls}, truth {truth}"
        ),
        None => assert!(e["high"].is_null() && f["calls_exact"] == false, "{e}"),
    }
}

#[test]
fn four_threads_with_exact_counts() {
    let args = [
        "--exact-counts",
        "-F",
        "work",
        "--",
        &native("fcalls"),
        "threads",
        "10000",
        "4",
    ];
    let Some((out, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "work");
    assert_eq!(u64_at(f, "/calls"), 40_000);
    assert_eq!(f["calls_exact"], true);
    let own = said(&out.stdout);
    let lines: Vec<(u32, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split(' ');
            (w.next()? == "thread")
                .then(|| Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?)))?
        })
        .collect();
    assert_eq!(lines.len(), 4, "{own:?}");
    let threads = f["threads"].as_array().unwrap();
    // Per-thread counts come from the records: exact unless the kernel dropped some (a reader
    // starved of CPU on a busy machine), which the report must then count.
    let lost = u64_at(f, "/lost_entries");
    let mut seen = 0;
    for (tid, n) in lines {
        let t = threads
            .iter()
            .find(|t| t["tid"] == tid)
            .unwrap_or_else(|| panic!("thread {tid} missing from {threads:?}"));
        let calls = u64_at(t, "/calls");
        if lost == 0 {
            assert_eq!(calls, n, "thread {tid}");
        } else {
            assert!(calls <= n, "thread {tid}: {calls} > {n}");
        }
        seen += calls;
    }
    if lost > 0 {
        eprintln!("{lost} records were lost on this busy machine: per-thread counts checked against the losses");
    }
    assert_eq!(
        seen + lost,
        40_000,
        "every call is either recorded or counted as lost"
    );
}

#[test]
fn a_shared_library_function_and_libc_malloc() {
    let args = [
        "--no-throttle",
        "-F",
        "libfcalls:lib_work,libc:malloc",
        "--",
        &native("fcalls"),
        "lib",
        "300",
    ];
    let Some((out, json)) = probed(&args) else {
        return;
    };
    let own = said(&out.stdout);
    let lib = function(&json, "libfcalls:lib_work");
    assert_eq!(u64_at(lib, "/calls").to_string(), own["lib_calls"]);
    assert!(lib["file"].as_str().unwrap().ends_with("libfcalls.so"));
    let malloc = function(&json, "libc:malloc");
    // The helper's own mallocs, and the one stdio makes for stdout's buffer when it prints.
    let mine: u64 = own["mallocs"].parse().unwrap();
    assert_eq!(u64_at(malloc, "/calls"), mine + 1, "{malloc}");
}

#[test]
fn a_library_the_program_does_not_load_is_a_warning_naming_its_own_copy() {
    // fcalls_static has lib_work linked in; libfcalls.so sits beside it, never loaded.
    let args = [
        "--no-throttle",
        "-F",
        "libfcalls:lib_work",
        "--",
        &native("fcalls_static"),
        "lib",
        "50",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    assert_eq!(u64_at(function(&json, "libfcalls:lib_work"), "/calls"), 0);
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("does not load libfcalls at its start")
            && warnings.contains("has its own copy of lib_work")
            && warnings.contains("-F lib_work probes that"),
        "{warnings}"
    );
    // Named as the warning says, the executable's copy counts every call.
    let args = [
        "--no-throttle",
        "-F",
        "lib_work",
        "--",
        &native("fcalls_static"),
        "lib",
        "50",
    ];
    let (_, json) = probed(&args).expect("probes were allowed a moment ago");
    assert_eq!(u64_at(function(&json, "lib_work"), "/calls"), 50);
}

#[test]
fn pie_non_pie_stripped_cpp_and_rust_names() {
    if !probes_allowed() {
        return fallback_is_a_warning(&["-F", "tiny", "--", &native("fcalls_nopie"), "tiny", "10"]);
    }
    let cases: [(&str, String, &[&str]); 6] = [
        ("tiny", native("fcalls"), &["tiny", "300"]),
        ("tiny", native("fcalls_nopie"), &["tiny", "300"]),
        ("tiny", native("fcalls_stripped"), &["tiny", "300"]),
        ("geometry::Shape::area", native("fcpp"), &["300"]),
        ("_ZNK8geometry5Shape4areaEi", native("fcpp"), &["300"]),
        ("rustfn::work::step", helper("rustfn"), &["300"]),
    ];
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for (name, program, rest) in cases {
        let mut args = vec!["--no-throttle", "-F", name, "--", &program];
        args.extend_from_slice(rest);
        let (out, json) = run_json(&args);
        assert!(out.status.success(), "{program}");
        let f = &json["functions"]["functions"][0];
        assert_eq!(u64_at(f, "/calls"), 300, "{name} in {program}: {f}");
        assert_eq!(u64_at(f, "/timed_calls"), 300, "{name} in {program}");
    }
}

#[test]
fn ten_million_calls_of_a_20ns_function_are_throttled() {
    let args = [
        "--probe-engine",
        "perf",
        "-F",
        "tiny",
        "--",
        &native("fcalls"),
        "tiny",
        "10000000",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "tiny");
    assert!(!f["throttled"].is_null(), "{f}");
    assert_eq!(f["calls_exact"], false);
    let e = &f["estimate"];
    let truth = 10_000_000.0;
    assert!(e["low"].as_f64().unwrap() <= truth, "{e}");
    // The windows count against the program's user-mode cycles exactly where the calibration
    // could count a hit in them (a hardware PMU); there the estimate must hold.
    let fs = &json["functions"];
    let cycles = !fs["probe_cost"]["entry_user_cycles"].is_null();
    assert_eq!(
        fs["estimate_axis"],
        if cycles { "user_cycles" } else { "cpu_time" },
        "{fs}"
    );
    match e["calls"].as_f64() {
        Some(calls) => assert!((calls - truth).abs() / truth < 0.10, "estimate {calls}"),
        None if cycles => panic!("no estimate on the user-cycle axis: {e}"),
        // No hardware cycle counter here: the windows saw calls as fast as probe hits, and
        // without the program's own time inside them the report gives a lower bound.
        None => {
            println!("no hardware cycle counter: the 10-million-call estimate is a lower bound here ({e})");
            assert!(e["saturated"] == true || e["windows"] == 0, "{e}")
        }
    }
    // The probes cost what the report says: some hundreds or thousands of hits, not millions.
    assert!(u64_at(f, "/probe_hits") < 100_000, "{f}");
    assert!(
        json["functions"]["perturbation"]["probe_hits"]
            .as_u64()
            .unwrap()
            < 100_000
    );
}

#[test]
fn exact_counts_and_no_throttle_count_every_call_and_state_the_cost() {
    for mode in ["--exact-counts", "--no-throttle"] {
        let args = [
            mode,
            "-F",
            "tiny",
            "--",
            &native("fcalls"),
            "tiny",
            "200000",
        ];
        let Some((_, json)) = probed(&args) else {
            return;
        };
        let f = function(&json, "tiny");
        assert_eq!(u64_at(f, "/calls"), 200_000, "{mode}");
        assert_eq!(f["calls_exact"], true);
        let p = &json["functions"]["perturbation"];
        assert!(u64_at(p, "/probe_hits") >= 200_000, "{mode}: {p}");
        assert!(
            p["percent_of_cpu"].as_f64().unwrap() > 2.0,
            "{mode}: the cost is stated: {p}"
        );
    }
}

/// The records' path's calibrated CPU time of one entry-probe hit (ns; the sampling windows are
/// that path's), from a short probed run; None where probes cannot be opened.
fn entry_probe_cost_ns() -> Option<f64> {
    let args = [
        "--probe-engine",
        "perf",
        "-F",
        "tiny",
        "--",
        &native("fcalls"),
        "tiny",
        "10",
    ];
    let (_, json) = probed(&args)?;
    json["functions"]["probe_cost"]["entry_ns"].as_f64()
}

/// An estimate's interval at 99.9% instead of the report's 95%: z 3.29 against 1.96 on each
/// side of the estimate `calls`. A right estimate's 95% interval misses the truth in one run of
/// twenty (a CI run: 5464 calls against 5473..5732); this one in one of a thousand.
fn at_999(e: &Value, calls: f64) -> (f64, f64) {
    let (low, high) = (e["low"].as_f64().unwrap(), e["high"].as_f64().unwrap());
    let widen = 3.29 / 1.96;
    (
        calls - (calls - low) * widen,
        calls + (high - calls) * widen,
    )
}

#[test]
fn sparse_calls_of_a_short_function_are_estimated_from_windows() {
    // Calls of a function too short to time, each followed by other work (CPU time), far slower
    // than a probe hit so that the windows can count them. A hit costs 4-20 µs on our VMs: the gap
    // is ten hits' calibrated cost (at least 100 µs), so a window's hits take about a tenth of its
    // time, well below the fifth at which arum calls a window saturated; about 1 s of calls.
    let Some(cost_ns) = entry_probe_cost_ns() else {
        return;
    };
    let gap_us = ((10.0 * cost_ns / 1000.0).ceil() as u64).max(100);
    let n = 1_000_000 / gap_us;
    let (gap, calls) = (gap_us.to_string(), n.to_string());
    let args = [
        "--probe-engine",
        "perf",
        "-F",
        "tiny",
        "--",
        &native("fcalls"),
        "sparse",
        &calls,
        &gap,
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "tiny");
    assert!(!f["throttled"].is_null(), "{f}");
    let e = &f["estimate"];
    let truth = n as f64;
    if e["saturated"] == true {
        // The hits took over a fifth of the windows' time: in this run a hit cost more than
        // twice its calibration (a CI run saw it with a 21 µs calibration). arum then gives no
        // estimate, only a lower bound: that is what is checked.
        println!(
            "the sampling windows saturated (a hit calibrated at {cost_ns:.0} ns cost far more in \
             the run): no estimate to judge; checked instead: none is given, and the lower bound holds"
        );
        assert!(e["calls"].is_null(), "{e}");
        assert!(e["low"].as_f64().unwrap() <= truth, "{e}");
        return;
    }
    assert!(u64_at(e, "/windows") >= 2, "{e}");
    let calls = e["calls"].as_f64().unwrap_or_else(|| {
        panic!("no estimate of {n} calls {gap_us} µs apart (a hit: {cost_ns:.0} ns): {e}")
    });
    eprintln!(
        "{n} calls {gap_us} µs apart, estimated {calls:.0} ({e}; throttled: {})",
        f["throttled"]
    );
    assert!(
        (calls - truth).abs() / truth < 0.10,
        "estimate {calls} of {n}: {e}"
    );
    let (low, high) = at_999(e, calls);
    assert!(
        low <= truth && truth <= high,
        "the 99.9% interval {low:.0}..{high:.0} misses {n}: {e}"
    );
}

#[test]
fn ten_throttled_functions_are_each_estimated_from_windows() {
    // Rounds of one call of each of step0..step9, each round then 500 µs of CPU time: all too
    // short to time, all sampled. A hit costs 1-3% of a round (at probe costs of 5-14 µs), the
    // ten 10-28%: where functions share a window, each one's rate rests on the others' hits
    // being taken out of the window's time as well as its own. The windows open as the reader's
    // CPU budget allows (each opens a counting probe per thread): 2-3 for each function in 2 s
    // of rounds on our VMs, 1 on a busy one, so 4 s of rounds for at least two.
    let args = [
        "--probe-engine",
        "perf",
        "-F",
        "step*",
        "--",
        &native("fcalls"),
        "steps",
        "8000",
        "500",
    ];
    let Some((out, json)) = probed(&args) else {
        return;
    };
    let truth: f64 = said(&out.stdout)["calls"].parse().unwrap();
    for k in 0..10 {
        let name = format!("step{k}");
        let f = function(&json, &name);
        assert!(!f["throttled"].is_null(), "{f}");
        let e = &f["estimate"];
        assert!(u64_at(e, "/windows") >= 2, "{e}");
        let calls = e["calls"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: no estimate: {e}"));
        eprintln!("{name}: {truth} calls, estimated {calls:.0} ({e})");
        assert!(
            (calls - truth).abs() / truth < 0.10,
            "{name}: estimate {calls} of {truth}: {e}"
        );
        let (low, high) = at_999(e, calls);
        assert!(
            low <= truth && truth <= high,
            "{name}: the 99.9% interval {low:.0}..{high:.0} misses {truth}"
        );
    }
}

#[test]
fn an_unknown_name_is_exit_125_with_the_nearest_names() {
    let out = arum()
        .args(["-F", "spin_mss", "--", &native("fcalls"), "ms", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("spin_ms"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // Not a function at all, and a function only imported by the program.
    let out = arum()
        .args(["-F", "malloc", "--", &native("fcalls"), "ms", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("libc:malloc"));
}

#[test]
fn records_in_flight_when_the_program_exits_are_not_lost() {
    // 3000 calls right before the program ends inside a probed function (it never returns).
    let args = [
        "--no-throttle",
        "-F",
        "work,leave_inside",
        "--",
        &native("fcalls"),
        "exit",
        "3000",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let work = function(&json, "work");
    assert_eq!(u64_at(work, "/calls"), 3000);
    assert_eq!(u64_at(work, "/timed_calls"), 3000);
    let leave = function(&json, "leave_inside");
    assert_eq!(u64_at(leave, "/calls"), 1);
    assert_eq!(
        u64_at(leave, "/unfinished"),
        1,
        "its return never came: {leave}"
    );
    assert_eq!(u64_at(&json, "/functions/records/lost"), 0);
}

#[test]
fn longjmp_out_of_recursion_unwinds_frames_instead_of_pairing_them() {
    let args = [
        "--no-throttle",
        "-F",
        "dive,catcher",
        "--",
        &native("fcalls"),
        "longjmp",
        "50",
    ];
    let Some((out, json)) = probed(&args) else {
        return;
    };
    let own = said(&out.stdout);
    let catcher = function(&json, "catcher");
    assert_eq!(u64_at(catcher, "/timed_calls"), 50);
    let dive = function(&json, "dive");
    assert_eq!(u64_at(dive, "/calls").to_string(), own["dive_entries"]);
    // No dive() ever returns: longjmp leaves all six frames of each descent.
    assert_eq!(u64_at(dive, "/timed_calls"), 0, "{dive}");
    assert_eq!(u64_at(dive, "/unwound").to_string(), own["dive_entries"]);
}

#[test]
fn a_shell_line_probes_every_process_that_runs_the_program() {
    let line = format!("{0} tiny 200; {0} tiny 100", native("fcalls"));
    let args = ["--no-throttle", "-F", "tiny", "--shell", "-l", &line];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let f = function(&json, "tiny");
    assert_eq!(u64_at(f, "/calls"), 300);
    let procs = f["processes"].as_array().unwrap();
    let mut counts: Vec<u64> = procs.iter().map(|p| u64_at(p, "/calls")).collect();
    counts.sort();
    assert_eq!(counts, [100, 200], "{procs:?}");
}

#[test]
fn without_the_privilege_the_program_runs_with_a_warning_and_strict_fails() {
    // Drop CAP_SYS_ADMIN (uprobe PMU) and CAP_BPF, CAP_PERFMON (in-kernel engine) from arum with
    // setpriv (util-linux), as a user without them would run.
    let setpriv = [
        "--inh-caps=-sys_admin,-bpf,-perfmon",
        "--bounding-set=-sys_admin,-bpf,-perfmon",
        "--",
    ];
    let probe = Command::new("setpriv").args(setpriv).arg("true").status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("setpriv cannot drop CAP_SYS_ADMIN here: the privilege fallback is checked only where arum lacks it");
        return;
    }
    let dir = common::temp_dir();
    let report = dir.path().join("r.json");
    let out = Command::new("setpriv")
        .args(setpriv)
        .arg(common::arum_path())
        .args(["--format", "json", "-o"])
        .arg(&report)
        .args(["-F", "tiny", "--", &native("fcalls"), "tiny", "10"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let why = json["functions"]["off_reason"].as_str().unwrap();
    assert!(
        why.contains("CAP_SYS_ADMIN") && why.contains("setcap"),
        "{why}"
    );
    assert_eq!(said(&out.stdout)["calls"], "10", "the program ran");
    let strict = Command::new("setpriv")
        .args(setpriv)
        .arg(common::arum_path())
        .args([
            "--strict",
            "-F",
            "tiny",
            "--",
            &native("fcalls"),
            "tiny",
            "10",
        ])
        .output()
        .unwrap();
    assert_eq!(strict.status.code(), Some(125));
}

#[test]
fn perf_probe_and_perf_stat_count_the_same_calls() {
    if !probes_allowed() {
        return;
    }
    let perf_ok = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !perf_ok {
        eprintln!("perf is not installed (Debian's linux-perf): the cross-check cannot run here");
        return;
    }
    // Its probed programs (perf's and arum's) take a CPU each: not beside another probed run.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let program = native("fcalls");
    let group = format!("arumtest{}", std::process::id());
    let def = format!("{group}:tiny=tiny");
    let added = Command::new("perf")
        .args(["probe", "-q", "-x", &program, "-a", &def])
        .output()
        .unwrap();
    if !added.status.success() {
        eprintln!(
            "perf probe cannot define a probe here: {}",
            String::from_utf8_lossy(&added.stderr)
        );
        return;
    }
    // Removes the definition whatever happens below.
    struct Cleanup(String);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = Command::new("perf")
                .args(["probe", "-q", "-d", &format!("{}:*", self.0)])
                .output();
        }
    }
    let _cleanup = Cleanup(group.clone());
    let stat = Command::new("perf")
        .args([
            "stat",
            "-x,",
            "-e",
            &format!("{group}:tiny"),
            "--",
            &program,
            "tiny",
            "5000",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&stat.stderr);
    let perf_count: u64 = text
        .lines()
        .find(|l| l.contains(&format!("{group}:tiny")))
        .and_then(|l| l.split(',').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count in perf stat's output: {text}"));
    let (_, json) = run_json(&[
        "--no-throttle",
        "-F",
        "tiny",
        "--",
        &program,
        "tiny",
        "5000",
    ]);
    assert_eq!(u64_at(function(&json, "tiny"), "/calls"), perf_count);
    assert_eq!(perf_count, 5000);
}

#[test]
fn where_tracefs_is_mounted_nowhere_arum_mounts_nothing_and_still_probes() {
    if !probes_allowed() {
        return;
    }
    // In a mount namespace of the test's own, with every tracefs (and debugfs, which would mount
    // one on first use) taken away: arum must reach tracefs without attaching a mount anywhere.
    let script = r#"
        for m in $(awk '$3 == "tracefs" || $3 == "debugfs" { print $2 }' /proc/self/mounts | sort -r); do
            umount -l "$m" || exit 90
        done
        "$@"
        status=$?
        awk '$3 == "tracefs" { print "left mounted: " $2; found = 1 } END { exit found }' /proc/self/mounts >&2 || exit 91
        exit $status
    "#;
    let dir = common::temp_dir();
    let report = dir.path().join("report.json");
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(common::arum_path())
        .args(["--format", "json", "-o"])
        .arg(&report)
        .args([
            "--no-throttle",
            "-F",
            "spin_ms",
            "--syscalls",
            "--views",
            "--",
            &native("fcalls"),
            "ms",
            "20",
        ])
        .output();
    let out = match out {
        Err(e) => {
            eprintln!("unshare(1) does not run here ({e}): not checked");
            return;
        }
        Ok(out) => out,
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if err.starts_with("unshare:") {
        eprintln!("no mount namespace of the test's own here ({err}): not checked");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{err}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(u64_at(function(&json, "spin_ms"), "/calls"), 20, "{err}");
    if common::tracing_allowed() {
        // The views read records, through a private mount of tracefs.
        let s = &json["syscalls"];
        assert_eq!(s["private_tracefs"], true, "{s}");
        assert!(u64_at(s, "/records") > 0, "{s}");
    }
}

#[test]
fn per_interval_call_counts_with_dash_i() {
    let args = [
        "-I",
        "50",
        "--no-throttle",
        "-F",
        "spin_ms",
        "--",
        &native("fcalls"),
        "ms",
        "300",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    assert!(
        json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| !w.as_str().unwrap().contains("-I")),
        "-I serves function timing too: {}",
        json["warnings"]
    );
    let f = &json["functions"];
    assert_eq!(u64_at(f, "/interval_ms"), 50);
    let intervals = f["intervals"].as_array().unwrap();
    // 300 calls of 1 ms of CPU: at least 0.3 s, so six or more intervals of 50 ms.
    assert!(intervals.len() >= 6, "{} intervals", intervals.len());
    let total: u64 = intervals.iter().map(|i| u64_at(i, "/calls/0")).sum();
    assert_eq!(total, 300);
    assert!(intervals.iter().all(|i| i["estimated"][0] == false));
}

#[test]
fn back_to_back_probe_records_agree_with_the_calibrated_cost() {
    // ALMT's probe-cost test: calls probed back to back, the time between consecutive entry
    // records. It is measured on record timestamps, the calibrated pair cost on CPU time: two
    // views of one cost that must agree.
    let args = [
        "--probe-engine",
        "perf",
        "-F",
        "tiny",
        "--",
        &native("fcalls"),
        "tiny",
        "10",
    ];
    let Some((_, json)) = probed(&args) else {
        return;
    };
    let c = &json["functions"]["probe_cost"];
    let rounds = u64_at(c, "/calibration_rounds");
    let calls = u64_at(c, "/calibration_calls");
    let intervals = u64_at(c, "/back_to_back_intervals");
    // Each round's first call follows the untimed drain; a record may be lost on a busy machine.
    assert!(
        intervals <= rounds * (calls - 1) && intervals >= rounds * (calls - 1) * 9 / 10,
        "{c}"
    );
    // Record times are wall time, so an interval in which arum lost its CPU is long (on a busy
    // machine the mean is several times the cost); the median is not moved by a few of those.
    let median = c["back_to_back_median_ns"].as_f64().unwrap();
    let pair = c["pair_ns"].as_f64().unwrap();
    assert!(
        median > 0.5 * pair && median < 2.0 * pair,
        "back to back {median} ns (median) against a pair cost of {pair} ns"
    );
    assert!(
        c["back_to_back_mean_ns"].as_f64().unwrap() >= 0.5 * pair,
        "{c}"
    );
    assert!(c["back_to_back_sd_ns"].as_f64().unwrap() > 0.0, "{c}");
}
