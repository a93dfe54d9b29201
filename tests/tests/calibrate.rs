//! `arum calibrate`: one quick run of the whole suite with its peers, checked for plausibility
//! and internal consistency on this machine; bad input; predictions; saved figures.
//!
//! Measuring tests are serialised (a lock) so that they do not load the machine for each other.

mod common;

use std::sync::{Mutex, MutexGuard, OnceLock};

use common::{arum, temp_dir};
use serde_json::Value;

/// One measuring run at a time in this process.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

struct QuickRun {
    json: Value,
    text_of_peers: String,
    plots: Vec<String>,
    latency_svg: String,
    dir_left: Vec<String>,
}

/// `arum calibrate --quick --peers` once for all the tests that read it.
fn quick() -> &'static QuickRun {
    static RUN: OnceLock<QuickRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let _serial = serial();
        let tmp = temp_dir();
        let (report, plots, dir) = (
            tmp.path().join("cal.json"),
            tmp.path().join("plots"),
            tmp.path().join("files"),
        );
        std::fs::create_dir_all(&dir).unwrap();
        let out = arum()
            .args(["calibrate", "--quick", "--peers", "--format", "json", "-o"])
            .arg(&report)
            .arg("--plots")
            .arg(&plots)
            .arg("--dir")
            .arg(&dir)
            .output()
            .expect("arum runs");
        assert!(
            out.status.success(),
            "arum calibrate failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let names = |d: &std::path::Path| -> Vec<String> {
            std::fs::read_dir(d)
                .map(|r| {
                    r.filter_map(|e| e.ok())
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        let run = QuickRun {
            text_of_peers: peers_table(&json),
            plots: names(&plots),
            latency_svg: std::fs::read_to_string(plots.join("memory-latency.svg"))
                .unwrap_or_default(),
            dir_left: names(&dir),
            json,
        };
        eprintln!("{}", run.text_of_peers);
        run
    })
}

fn peers_table(json: &Value) -> String {
    let mut s = String::from("peers (ours / peer for the time it ran):\n");
    for c in json["peers"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "  {:<42} ours {:>12.1} peer {:>12.1} (printed {:>12.1}, CPU share {:>5.2}) ratio {:>5.2} {}\n",
            c["what"].as_str().unwrap_or(""),
            c["ours"].as_f64().unwrap_or(f64::NAN),
            c["peer"].as_f64().unwrap_or(f64::NAN),
            c["peer_printed"].as_f64().unwrap_or(f64::NAN),
            c["peer_cpu_share"].as_f64().unwrap_or(f64::NAN),
            c["ratio"].as_f64().unwrap_or(f64::NAN),
            c["missing"].as_str().unwrap_or("")
        ));
    }
    s
}

fn measurement<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the calibration"))
}

/// The median of a measured figure, or None (with the reason printed) when it was skipped.
fn median_of(json: &Value, name: &str) -> Option<f64> {
    let m = measurement(json, name);
    match m["status"].as_str() {
        Some("measured") => Some(m["summary"]["median"].as_f64().unwrap()),
        _ => {
            eprintln!(
                "{name} skipped here: {}",
                m["reason"].as_str().unwrap_or("?")
            );
            None
        }
    }
}

#[test]
fn every_measurement_is_measured_or_says_why_and_nothing_is_left_behind() {
    let run = quick();
    let j = &run.json;
    assert_eq!(j["schema"], "arum.calibration/1");
    assert_eq!(j["run"]["quick"], true);
    let ms = j["measurements"].as_array().unwrap();
    for m in ms {
        match m["status"].as_str().unwrap() {
            "measured" => {
                let s = &m["summary"];
                let (lo, med, hi) = (
                    s["ci90_low"].as_f64().unwrap(),
                    s["median"].as_f64().unwrap(),
                    s["ci90_high"].as_f64().unwrap(),
                );
                assert!(
                    lo <= med && med <= hi,
                    "{}: CI {lo}..{hi} around {med}",
                    m["name"]
                );
                assert!(s["min"].as_f64().unwrap() <= lo && hi <= s["max"].as_f64().unwrap());
                assert!(s["n"].as_u64().unwrap() >= 1);
                let h = &m["histogram"];
                let total: u64 = h["counts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_u64().unwrap())
                    .sum::<u64>()
                    + h["above"].as_u64().unwrap();
                assert_eq!(
                    total,
                    s["n"].as_u64().unwrap(),
                    "{}: histogram holds every sample",
                    m["name"]
                );
                if m["unit"] == "ns" {
                    let cyc = m["cycles"]["median"].as_f64().unwrap();
                    let hz = j["machine"]["tsc"]["hz"].as_f64().unwrap();
                    assert!(
                        (cyc - med * hz / 1e9).abs() <= 1e-6 * cyc.max(1.0),
                        "{}",
                        m["name"]
                    );
                }
            }
            "skipped" => assert!(
                m["reason"].as_str().is_some_and(|r| r.len() > 10),
                "{} skipped without a reason",
                m["name"]
            ),
            s => panic!("status {s}"),
        }
    }
    // Every group ran; the loopback, timing, task and memory figures need nothing special.
    for name in [
        "timing.rdtsc",
        "timing.clock_gettime",
        "cpu.call.7",
        "cpu.syscall.getppid",
        "tasks.fork",
        "tasks.thread.pthread",
        "tasks.switch.process.same_cpu",
        "memory.latency.1KiB",
        "memory.bandwidth.read.1cpu",
        "memory.fault.minor",
        "network.loopback.rtt",
        "files.read.seq.cached",
    ] {
        assert!(
            median_of(j, name).is_some(),
            "{name} must be measurable on any Linux machine"
        );
    }
    // The scratch files are gone from --dir; the plots are there.
    assert!(run.dir_left.is_empty(), "left in --dir: {:?}", run.dir_left);
    assert!(
        run.plots.contains(&"memory-latency.svg".to_string()),
        "{:?}",
        run.plots
    );
    assert!(
        run.plots.contains(&"tasks.fork.svg".to_string()),
        "{:?}",
        run.plots
    );
    // The latency plot's legend names every line it draws: each detected step too.
    let detected = j["findings"]["caches"]["detected"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(
        run.latency_svg.matches("detected (").count(),
        detected,
        "{detected} steps detected"
    );
}

#[test]
fn timing_figures_are_plausible() {
    let j = &quick().json;
    let tsc = &j["machine"]["tsc"];
    assert!(tsc["hz"].as_f64().unwrap() > 1e8, "{tsc}");
    let cg = median_of(j, "timing.clock_gettime").unwrap();
    assert!(
        cg > 0.0 && cg < 1000.0,
        "clock_gettime {cg} ns, expected < 1 us"
    );
    let rdtsc = median_of(j, "timing.rdtsc").unwrap();
    assert!(rdtsc > 0.0 && rdtsc < 1000.0, "rdtsc {rdtsc} ns");
    // A raw system call costs more than the vDSO's user-space read of the clock.
    let sys = median_of(j, "cpu.syscall.clock_gettime").unwrap();
    assert!(
        sys > cg,
        "clock_gettime by syscall {sys} ns <= by vDSO {cg} ns"
    );
    // A procedure call is cheaper than entering the kernel.
    let call = median_of(j, "cpu.call.0").unwrap();
    let getppid = median_of(j, "cpu.syscall.getppid").unwrap();
    assert!(call < getppid, "call {call} ns, getppid {getppid} ns");
}

#[test]
fn task_figures_are_consistent() {
    let j = &quick().json;
    let fork = median_of(j, "tasks.fork").unwrap();
    let thread = median_of(j, "tasks.thread.pthread").unwrap();
    assert!(
        thread < fork,
        "thread creation {thread} ns >= process creation {fork} ns"
    );
    if let (Some(fe), Some(ve)) = (
        median_of(j, "tasks.fork_exec"),
        median_of(j, "tasks.vfork_exec"),
    ) {
        // Exec adds work to a fork, though little (a 132-byte program) beside the fork itself,
        // and the two are measured one after the other: on a busy VM a noisy phase moved fork's
        // median above fork+exec's (CI: 134.6 against 116.3 µs; fork's median has ranged 74-134
        // µs between runs here). Noise only adds time, so the fastest samples compare them.
        let min = |name: &str| measurement(j, name)["summary"]["min"].as_f64().unwrap();
        let (fe_min, fork_min) = (min("tasks.fork_exec"), min("tasks.fork"));
        assert!(
            fe_min > fork_min,
            "fastest fork+exec {fe_min} ns <= fastest fork {fork_min} ns"
        );
        assert!(ve < fe, "vfork+exec {ve} ns >= fork+exec {fe} ns");
    }
    let sw = measurement(j, "tasks.switch.process.same_cpu");
    let rt = sw["details"]["round_trip_ns"].as_f64().unwrap();
    let pipe = sw["details"]["pipe_ns_subtracted"].as_f64().unwrap();
    let s = sw["summary"]["median"].as_f64().unwrap();
    // A round trip between two tasks costs more than two pipe transfers within one.
    assert!(
        rt > 2.0 * pipe && s > 0.0,
        "switch {s}, pipe {pipe}, round trip {rt}"
    );
    assert!(
        s < fork,
        "a switch {s} ns costs less than creating a process {fork} ns"
    );
}

#[test]
fn memory_figures_are_consistent() {
    let j = &quick().json;
    let curve: Vec<(f64, f64, f64, f64)> = j["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["name"].as_str().unwrap().starts_with("memory.latency.") && m["status"] == "measured"
        })
        .map(|m| {
            // A point's uncertainty: its median's interval and the spread of the medians of
            // the separate sweeps (what the rest of the machine did to a shared cache).
            let (s, d) = (&m["summary"], &m["details"]);
            let low = s["ci90_low"]
                .as_f64()
                .unwrap()
                .min(d["sweep_median_low_ns"].as_f64().unwrap());
            let high = s["ci90_high"]
                .as_f64()
                .unwrap()
                .max(d["sweep_median_high_ns"].as_f64().unwrap());
            (
                d["size_bytes"].as_f64().unwrap(),
                s["median"].as_f64().unwrap(),
                low,
                high,
            )
        })
        .collect();
    assert!(curve.len() >= 10, "{} latency points", curve.len());
    // Monotone within noise: no point lies clearly below the one before (its uncertainty's top
    // at least 90% of the earlier one's bottom). Beyond the CPU's own caches (L1, L2) the last
    // level is shared with other CPUs, and in a VM with other guests, whose use of it changes
    // from one sweep to the next: there 75% (a 4 MiB point 17% below the 2 MiB one was seen on
    // an Intel VM with a 48 MiB L3, outside both sweeps' spread).
    let private = j["findings"]["caches"]["comparison"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["level"].as_u64().unwrap() <= 2)
        .map(|c| c["reported_bytes"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for w in curve.windows(2) {
        assert!(w[1].0 > w[0].0);
        let floor = if w[0].0 > private { 0.75 } else { 0.9 };
        assert!(
            w[1].3 >= floor * w[0].2,
            "latency falls from {} ns at {} B to {} ns at {} B",
            w[0].1,
            w[0].0,
            w[1].1,
            w[1].0
        );
    }
    assert!(
        curve.last().unwrap().1 > 3.0 * curve[0].1,
        "memory is slower than L1: {curve:?}"
    );

    // Detected cache sizes against the reported ones.
    let caches = &j["findings"]["caches"];
    let cmp = caches["comparison"].as_array().unwrap();
    let notes: Vec<&str> = caches["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    eprintln!("caches: {cmp:?}\nnotes: {notes:?}");
    let largest = curve.last().unwrap().0;
    for (i, c) in cmp.iter().enumerate() {
        let level = c["level"].as_u64().unwrap();
        let reported = c["reported_bytes"].as_f64().unwrap();
        let last = i + 1 == cmp.len();
        // The quick curve's sizes are powers of two: a level is seen at best at the largest
        // of them inside it (1 MiB of a 1.25 MiB L2), and the step is judged against that.
        let grid = 2f64.powi(reported.log2().floor() as i32);
        let ratio = c["detected_bytes"].as_f64().map(|d| d / grid);
        if reported * 2.0 > largest {
            eprintln!(
                "L{level}: the quick curve ends at {largest} B, below twice the level; not checked"
            );
            continue;
        }
        match ratio {
            Some(r) if (0.5..=2.0).contains(&r) => {}
            // A last level shared with other guests: the run explains why its step is early.
            Some(r) if last && r < 0.5 && caches["virtual_machine"] == true => assert!(
                notes
                    .iter()
                    .any(|n| n.starts_with(&format!("L{level} ")) && n.contains("virtual machine")),
                "L{level} at {r} of the curve size inside it without an explanation: {notes:?}"
            ),
            // A private level on a virtual machine: the host may run another guest on the
            // core's other hyperthread, which shares it (a 2 MiB L2 stepped at 512 KiB in CI on
            // the Intel 6/CF VM). Within a factor of 4, and the run says why.
            Some(r) if !last && r >= 0.25 && caches["virtual_machine"] == true => assert!(
                notes
                    .iter()
                    .any(|n| n.starts_with(&format!("L{level} ")) && n.contains("hyperthreads")),
                "L{level} at {r} of the curve size inside it without an explanation: {notes:?}"
            ),
            other => panic!(
                "L{level}: detected / largest curve size inside the reported = {other:?}, expected within a factor of 2 ({cmp:?})"
            ),
        }
    }

    let minor = median_of(j, "memory.fault.minor").unwrap();
    let share = measurement(j, "memory.fault.minor")["details"]["faults_per_touch"]
        .as_f64()
        .unwrap();
    assert!(
        (0.9..=1.1).contains(&share),
        "{share} minor faults per first touch"
    );
    if let Some(major) = median_of(j, "memory.fault.major") {
        assert!(
            major > minor,
            "major fault {major} ns <= minor fault {minor} ns"
        );
    }
    // Bandwidth: all CPUs together move at least what one does, within noise.
    let one = median_of(j, "memory.bandwidth.read.1cpu").unwrap();
    let all = median_of(j, "memory.bandwidth.read.all_cpus").unwrap();
    assert!(
        one > 1e8 && all > 0.5 * one,
        "read 1 CPU {one} B/s, all CPUs {all} B/s"
    );
}

#[test]
fn network_and_file_figures_are_consistent() {
    let j = &quick().json;
    let rtt = median_of(j, "network.loopback.rtt").unwrap();
    assert!(rtt > 0.0 && rtt < 1e6, "loopback round trip {rtt} ns");
    if let Some(veth) = median_of(j, "network.veth.rtt") {
        assert!(veth < 1e6, "veth round trip {veth} ns");
        assert!(j["findings"]["network"]["veth"]
            .as_str()
            .unwrap()
            .contains("198.1"));
    } else {
        assert!(j["findings"]["network"]["veth_unavailable"].is_string());
    }
    let cached = median_of(j, "files.read.seq.cached").unwrap();
    if let Some(uncached) = median_of(j, "files.read.random.uncached") {
        let cached_random = median_of(j, "files.read.random.cached").unwrap();
        assert!(uncached > cached_random, "a 4 KiB read from the device {uncached} ns is not slower than from the cache {cached_random} ns");
    }
    assert!(cached > 1e8, "cached sequential reads at {cached} B/s");
    assert!(
        j["findings"]["file_cache"]["conclusion"]
            .as_str()
            .unwrap()
            .len()
            > 20
    );
}

#[test]
fn peers_agree_within_a_factor_of_two_or_say_why() {
    let run = quick();
    let peers = run.json["peers"].as_array().unwrap();
    assert_eq!(peers.len(), 8, "{}", run.text_of_peers);
    for c in peers {
        let what = c["what"].as_str().unwrap();
        match c["ratio"].as_f64() {
            Some(r) => {
                // A peer short of CPU time was scaled to the time it ran; the time it did not
                // run may also have been its own waiting, so the truth lies between its scaled
                // and printed figures. arum flags a pair more than a factor of 2 apart after
                // measuring it twice (a shared VM's figures are now and then bimodal: a thread
                // switch plus getppid of 0.7 or 1.6 µs); a factor of 4 is a wrong figure, not noise.
                let printed = c["ours"].as_f64().unwrap() / c["peer_printed"].as_f64().unwrap();
                let (lo, hi) = (r.min(printed), r.max(printed));
                let within = hi >= 0.5 && lo <= 2.0;
                assert_eq!(c["within_factor_2"], within, "{what}: {r:.2}, {printed:.2}");
                assert!(
                    hi >= 0.25 && lo <= 4.0,
                    "{what}: ours/peer = {r:.2} ({printed:.2} of the printed figure): {}\n{}",
                    c["explanation"],
                    run.text_of_peers
                );
                if !within {
                    let why = c["explanation"].as_str().unwrap();
                    assert!(why.contains("measured twice"), "{what}: {why}");
                    eprintln!("{what}: {r:.2} apart after two pairs: {why}");
                }
            }
            None => {
                let why = c["missing"].as_str().unwrap_or("");
                assert!(!why.is_empty(), "{what}: no ratio and no reason");
                eprintln!("{what}: not compared here: {why}");
            }
        }
        assert!(c["explanation"].as_str().unwrap().len() > 30);
    }
}

#[test]
fn bad_input_is_one_line_and_status_125() {
    let tmp = temp_dir();
    let bad_predict = tmp.path().join("p.toml");
    std::fs::write(&bad_predict, "\"tasks.frok\" = \"100 us\"\n").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--only".into(), "tasks.swich".into()], "tasks.switch"),
        (
            vec!["--predict".into(), bad_predict.display().to_string()],
            "tasks.fork",
        ),
        (
            vec!["--dir".into(), "/nonexistent/arum-calibrate".into()],
            "--dir",
        ),
        (vec!["--ci".into(), "0".into()], "--ci"),
        (
            vec!["--file-max".into(), "12 parsecs".into()],
            "unknown unit",
        ),
        // A size or a duration takes its unit, as every option of arum's does.
        (vec!["--file-max".into(), "1048576".into()], "has no unit"),
        (vec!["--time-limit".into(), "2".into()], "has no unit"),
        (
            vec!["-o".into(), "/nonexistent/arum-calibrate/cal.txt".into()],
            "cannot write the report to /nonexistent/arum-calibrate/cal.txt: ",
        ),
    ];
    for (args, hint) in cases {
        let out = arum().arg("calibrate").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            code == Some(125) || code == Some(2),
            "{args:?}: status {code:?}, {err}"
        );
        assert!(err.contains(hint), "{args:?}: {err}");
        if code == Some(125) {
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        }
        assert!(out.stdout.is_empty(), "{args:?}: nothing measured");
    }
}

#[test]
fn predictions_are_shown_beside_the_measurements() {
    let _serial = serial();
    let tmp = temp_dir();
    let p = tmp.path().join("p.toml");
    std::fs::write(
        &p,
        "\"timing.rdtsc\" = \"40 cycles\"\n[cpu.syscall]\ngetppid = { hardware = \"20 ns\", software = \"80 ns\", note = \"one trap\" }\n",
    )
    .unwrap();
    let out = arum()
        .args([
            "calibrate",
            "--quick",
            "--only",
            "cpu.syscall.getppid,timing.rdtsc",
            "--predict",
        ])
        .arg(&p)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("predicted") && text.contains("meas/pred"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("cpu.syscall.getppid"))
        .unwrap();
    assert!(
        row.contains("100 ns"),
        "the prediction is hardware + software: {row}"
    );
    assert!(
        text.contains("predicted 20 ns hardware + 80 ns software (one trap)"),
        "{text}"
    );
    // Only what was asked for was measured.
    assert!(!text.contains("tasks.fork"), "{text}");
}

#[test]
fn saved_figures_are_filed_by_machine_and_give_estimates() {
    let _serial = serial();
    let tmp = temp_dir();
    let out = arum()
        .args([
            "calibrate",
            "--quick",
            "--only",
            "tasks.fork,tasks.thread.pthread,memory.fault.minor,tasks.switch.process.same_cpu",
            "--save",
            "--format",
            "json",
        ])
        .env("XDG_CACHE_HOME", tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tmp.path().join("arum").join("calibration");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let uname = nix_uname();
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.contains(&uname.1) && name.ends_with(".json"),
        "{name} names the kernel {}",
        uname.1
    );

    let costs = arum_calibrate::saved::load_from(&files[0]).unwrap();
    let fork = costs
        .process_creation
        .clone()
        .expect("tasks.fork was saved");
    assert_eq!(fork.measurement, "tasks.fork");
    assert!(
        costs.context_switch.is_some()
            && costs.minor_fault.is_some()
            && costs.thread_creation.is_some()
    );
    assert!(costs.major_fault.is_none(), "not measured, not saved");
    let est = costs.estimate(&arum_calibrate::saved::Counts {
        processes_created: Some(10),
        major_faults: Some(5),
        ..Default::default()
    });
    assert_eq!(est.len(), 1, "only events with a count and a cost: {est:?}");
    assert!((est[0].estimated_ns - 10.0 * fork.median_ns).abs() < 1e-6 * est[0].estimated_ns);
}

/// (host, kernel release) as uname reports them.
fn nix_uname() -> (String, String) {
    let out = std::process::Command::new("uname")
        .args(["-n", "-r"])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    let mut it = s.split_whitespace();
    (
        it.next().unwrap_or("").into(),
        it.next().unwrap_or("").into(),
    )
}

/// `arum calibrate --quick --only files` in `dir` (as `--dir`, or as TMPDIR for its own scratch
/// directory), stopped by SIGTERM as soon as its first scratch name shows in `dir`: told by
/// inotify, so that the signal comes within microseconds of the name's creation, when a run
/// that made a name before its handler knew it would leave it.
fn stopped_when_writing(
    dir: &std::path::Path,
    as_tmpdir: bool,
) -> (std::process::ExitStatus, String) {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
    use std::os::fd::AsFd;
    use std::os::unix::process::ExitStatusExt;
    let created = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).unwrap();
    created
        .add_watch(dir, AddWatchFlags::IN_CREATE)
        .expect("inotify watches the directory");
    let mut cmd = arum();
    cmd.args(["calibrate", "--quick", "--only", "files", "-o", "/dev/null"]);
    if as_tmpdir {
        cmd.env("TMPDIR", dir);
    } else {
        cmd.arg("--dir").arg(dir);
    }
    let mut child = cmd
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("arum runs");
    let own = format!("arum-calibrate-{}-", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let names = created.read_events().unwrap_or_default();
        if names.iter().any(|e| {
            e.name
                .as_ref()
                .is_some_and(|n| n.to_string_lossy().starts_with(&own))
        }) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no scratch file in 60 s"
        );
        assert!(child.try_wait().unwrap().is_none(), "ended before writing");
        let mut fds = [PollFd::new(created.as_fd(), PollFlags::POLLIN)];
        let _ = poll(&mut fds, PollTimeout::from(100u16));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(15), "{:?}", out.status);
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_stopped_or_killed_calibration_leaves_nothing_behind() {
    let _serial = serial();
    for as_tmpdir in [false, true] {
        let tmp = temp_dir();
        // What a calibration killed by SIGKILL left: its pid (above pid_max) runs no more.
        let dead = tmp.path().join(format!("arum-calibrate-{}-reads", 1 << 23));
        std::fs::write(&dead, b"x").unwrap();
        let (_, stderr) = stopped_when_writing(tmp.path(), as_tmpdir);
        assert!(!dead.exists(), "the dead run's file stays");
        assert_eq!(
            stderr
                .matches("left by calibrations that were killed")
                .count(),
            1,
            "{stderr}"
        );
        let left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.is_empty(), "left after SIGTERM: {left:?}");
    }
}
