//! The ambient environment, validated as CAMP validates its accessors: small programs that use
//! a known amount of one resource, and the report must show that amount.

mod common;

use std::sync::Mutex;

use common::{helper, run_json, u64_at, MIB};
use serde_json::Value;

/// These tests measure the whole machine: one at a time.
static MACHINE: Mutex<()> = Mutex::new(());

fn ambient(args: &[&str]) -> Value {
    let (out, r) = run_json(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    r["ambient"].clone()
}

#[test]
fn a_pinned_half_duty_burner_shows_on_its_cpu_only() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = arum_camp::cpus().unwrap();
    let busy = cpus[cpus.len() - 1];
    let idle = (cpus.len() >= 2).then_some(cpus[0]);
    if idle.is_none() {
        println!("one CPU online: checking the loaded CPU only, not that another stays idle");
    }
    // This test's own reading of every CPU around the run: whatever else loads the machine, the
    // report must agree with it, and the program's load must be on its own CPU.
    let before: Vec<_> = cpus
        .iter()
        .map(|&c| arum_camp::cpu_times(c).unwrap())
        .collect();
    let (out, r) = run_json(&[
        "--ambient=500ms",
        "--",
        &helper("duty"),
        "0.5",
        &busy.to_string(),
        "2",
    ]);
    assert!(out.status.success());
    // The test reads /proc/stat before arum starts and after it ends, so its window holds the
    // report's window and arum's start and end besides: compare CPU seconds, not shares.
    let hz = arum_camp::ticks_per_second() as f64;
    let seen = |cpu: u32| {
        let i = cpus.iter().position(|&c| c == cpu).unwrap();
        let d = arum_camp::cpu_times(cpu).unwrap().delta(&before[i]);
        (d.busy() as f64 / hz, d.total() as f64 / hz)
    };
    let a = &r["ambient"];
    let window = u64_at(&r, "/ambient/summary/duration_ns") as f64 / 1e9;
    let util = |cpu: u32| {
        a["summary"]["cpu_utilisation"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["cpu"] == cpu)
            .map(|c| c["busy"].as_f64().unwrap())
            .unwrap()
    };
    // The program's own share of its CPU, exact from rusage (it is pinned there).
    let own = 100.0 * (u64_at(&r, "/usage/user_ns") + u64_at(&r, "/usage/system_ns")) as f64
        / 1e9
        / window;
    let (busy_s, test_s) = seen(busy);
    println!(
        "CPU {busy}: {:.1}% of {window:.2} s reported, {busy_s:.2} s busy of {test_s:.2} s seen by \
         the test, {own:.1}% the program's own",
        util(busy)
    );
    assert!(
        util(busy) >= own - 5.0,
        "CPU {busy}: {:.1}% below the program's own {own:.1}%",
        util(busy)
    );
    if 100.0 * busy_s / test_s - own * window / test_s < 5.0 {
        // Nothing else competed on that CPU: the program asked for 50% and got it.
        assert!((40.0..=60.0).contains(&own), "50% duty got {own:.1}%");
    }
    for cpu in std::iter::once(busy).chain(idle) {
        // The report's busy seconds fall inside the test's, and the test's exceed them by at
        // most the time outside the report's window (with /proc/stat's tick and 5% of the
        // window for rounding).
        let (busy_s, test_s) = seen(cpu);
        let reported = util(cpu) / 100.0 * window;
        let slack = 0.05 * window + 2.0 / hz;
        assert!(
            reported <= busy_s + slack,
            "CPU {cpu}: report {reported:.3} s busy, the test saw {busy_s:.3} s over a longer window"
        );
        assert!(
            busy_s - reported <= (test_s - window).max(0.0) + slack,
            "CPU {cpu}: the test saw {busy_s:.3} s busy in {test_s:.3} s, the report \
             {reported:.3} s in {window:.3} s"
        );
    }
    if let Some(idle) = idle {
        // The program is not smeared onto the other CPU: with the machine otherwise quiet, that
        // CPU stays idle (the comparison above covers a busy machine).
        let (busy_s, test_s) = seen(idle);
        if busy_s / test_s < 0.10 {
            assert!(util(idle) < 15.0, "idle CPU {idle}: {:.1}%", util(idle));
        }
    }
}

#[test]
fn rss_steps_by_100_mib_in_the_series() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let a = ambient(&["--ambient=100ms", "--", &helper("touch"), "100", "600", "2"]);
    let rss: Vec<u64> = a["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rss_bytes"].as_u64().unwrap())
        .collect();
    // A plateau is the level that repeats; a sample taken mid-allocation may fall in a range
    // once, but never as often.
    let level = |lo: u64, hi: u64| {
        let inside: Vec<u64> = rss
            .iter()
            .copied()
            .filter(|r| (lo..hi).contains(r))
            .collect();
        inside
            .iter()
            .copied()
            .max_by_key(|v| inside.iter().filter(|w| *w == v).count())
    };
    let first = level(90 * MIB, 150 * MIB).expect("a ~100 MiB plateau");
    let second = level(190 * MIB, 260 * MIB).expect("a ~200 MiB plateau");
    let step = (second - first) as f64 / MIB as f64;
    assert!(
        (95.0..=105.0).contains(&step),
        "step of {step:.1} MiB in {rss:?}"
    );
}

#[test]
fn loopback_counts_every_udp_datagram_both_ways() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let k = 2000u64;
    let a = ambient(&["--ambient=0", "--", &helper("udp"), &k.to_string()]);
    let lo = a["summary"]["net"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "lo")
        .expect("lo moved")
        .clone();
    let packets = lo["rx_packets"].as_u64().unwrap() + lo["tx_packets"].as_u64().unwrap();
    assert!(packets >= 2 * k, "lo packets {packets} for {k} datagrams");
    assert!(lo["rx_bytes"].as_u64().unwrap() >= 32 * k);
    assert_eq!(
        a["samples"].as_array().unwrap().len(),
        2,
        "--ambient=0 samples at start and end"
    );
}

#[test]
fn thread_count_goes_from_one_to_two() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let a = ambient(&[
        "--ambient=100ms",
        "--",
        &helper("late_thread"),
        "300",
        "800",
    ]);
    let series: Vec<(u64, u64)> = a["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["t_ns"].as_u64().unwrap(), t["threads"].as_u64().unwrap()))
        .collect();
    // The sampler's clock starts before the program's: nothing before 300 ms can see the thread.
    assert!(
        series.iter().any(|&(_, n)| n == 2),
        "a second thread appears: {series:?}"
    );
    for &(t, n) in &series {
        if t < 300_000_000 {
            assert_eq!(n, 1, "one thread for the first 300 ms: {series:?}");
        }
    }
    assert!(
        series.iter().any(|&(t, _)| t < 300_000_000),
        "sampled before the second thread: {series:?}"
    );
}

#[test]
fn fsync_reaches_the_backing_device() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    // A directory on a block device: beside the build, the working directory, or the temporary
    // directory (which may be RAM-backed).
    let build = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let candidates = [
        build,
        std::env::current_dir().unwrap(),
        std::env::temp_dir(),
    ];
    let Some((dir, disk)) = candidates
        .iter()
        .find_map(|d| Some((d.clone(), arum_camp::disk_of(d)?)))
    else {
        println!(
            "no candidate directory is on a block device (tmpfs/overlay): checking that the disk table is well formed instead"
        );
        let a = ambient(&["--ambient=0", "--", "sync"]);
        for d in a["summary"]["disks"].as_array().unwrap() {
            assert!(d["name"].is_string() && d["writes"].is_u64(), "{d}");
        }
        return;
    };
    let file = dir.join(format!("fsync-test-{}", std::process::id()));
    let a = ambient(&[
        "--ambient=0",
        "--",
        &helper("fsync_write"),
        file.to_str().unwrap(),
        "16",
    ]);
    let _ = std::fs::remove_file(&file);
    let d = a["summary"]["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == disk)
        .unwrap_or_else(|| panic!("{disk} shows no activity: {}", a["summary"]["disks"]));
    assert!(d["writes"].as_u64().unwrap() > 0);
    assert!(
        d["sectors_written"].as_u64().unwrap() >= 16 * MIB / 512,
        "{d}"
    );
}

#[test]
fn the_sampler_reports_its_own_cost_and_notes() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let (_, r) = run_json(&["--ambient=50ms", "--", "sleep", "0.5"]);
    let a = &r["ambient"];
    let n = a["samples"].as_array().unwrap().len() as u64;
    // At the start, at most one every 50 ms of the run, and at the end; a starved sampler skips
    // deadlines rather than bunching its samples, and never samples early.
    let expected = u64_at(&r, "/usage/wall_ns") / 50_000_000 + 2;
    assert!(
        (2..=expected).contains(&n),
        "{n} samples, at most {expected}"
    );
    let samples = a["samples"].as_array().unwrap();
    let between: Vec<u64> = samples[1..samples.len() - 1]
        .iter()
        .map(|s| s["t_ns"].as_u64().unwrap())
        .collect();
    common::assert_periodic(
        &between,
        50_000_000,
        u64_at(&r, "/ambient/summary/duration_ns"),
    );
    let cost = a["sampler_cpu_ns"].as_u64().unwrap();
    assert!(
        cost > 0 && cost < 100_000_000,
        "sampler CPU {cost} ns for {n} samples"
    );
    assert!(a["notes"].is_array());
    let s = &a["samples"][0];
    for key in [
        "cpus",
        "interrupts",
        "softirqs",
        "context_switches",
        "processes_created",
        "procs_running",
        "memory",
        "paging",
        "load",
        "irqs",
        "disks",
        "net",
    ] {
        assert!(s.get(key).is_some(), "{key} missing from a sample");
    }
}

#[test]
fn a_neighbour_on_the_programs_cpu_is_noted_as_interference() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = arum_camp::cpus().unwrap();
    let cpu = cpus[cpus.len() - 1].to_string();
    // The neighbour spins on one CPU for the whole run; the program has a busy thread on every
    // CPU while its lead thread waits (seen by every thread's CPU time per CPU, not only the
    // lead thread's last CPU).
    let mut neighbour = std::process::Command::new(helper("duty"))
        .args(["1.0", &cpu, "2"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let a = ambient(&["--ambient=250ms", "--", &helper("spread"), "0.3"]);
    neighbour.wait().unwrap();
    assert_eq!(
        a["summary"]["program_cpus"].as_array().unwrap().len(),
        cpus.len(),
        "{}",
        a["summary"]["program_cpus"]
    );
    assert!(a["summary"]["program_cpus"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c.as_u64() == cpu.parse().ok()));
    // While the program's thread on that CPU uses its 0.3 s, a fair scheduler gives the spinning
    // neighbour about as much again (measured 0.30-0.45 s); half of that fair share is the floor,
    // far above what an idle machine's other processes use in a second.
    let other = a["summary"]["other_cpu_ns"].as_u64().unwrap();
    assert!(
        other >= 150_000_000,
        "the neighbour's CPU time on CPU {cpu}: {other} ns"
    );
    let notes = a["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("likely interference")),
        "{notes:?}"
    );
}

#[test]
fn the_noise_probe_reports_what_took_its_cpu_beside_the_program() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = arum_camp::cpus().unwrap();
    let cpu = cpus[cpus.len() - 1];
    let (out, r) = run_json(&[
        &format!("--noise-probe={cpu}"),
        "--",
        &helper("burn"),
        "0.3",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = &r["noise"];
    let probed = n["cpus"].as_array().unwrap();
    assert_eq!(probed.len(), 1, "{n}");
    assert_eq!(probed[0]["cpu"].as_u64(), Some(u64::from(cpu)));
    // The probe ran only in the CPU's idle time: never longer than it existed.
    let c = &probed[0];
    assert!(c["probe_cpu_seconds"].as_f64().unwrap() <= c["seconds"].as_f64().unwrap() * 1.01);
    assert!(n["lines"][0]
        .as_str()
        .unwrap()
        .contains(&format!("CPU {cpu}")));
    // A CPU the process may not use is refused with one line.
    let bad = common::arum()
        .args(["--noise-probe=4095", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(125));
    assert_eq!(String::from_utf8_lossy(&bad.stderr).lines().count(), 1);
}

/// `taskset -c N prog`: taskset runs its moment before exec wherever arum forked it; the
/// program's CPUs (whose other load counts as interference) are the pinned one alone. The
/// moment (taskset's own start) leaves its CPU out only while it stays below 1% of the tree's
/// CPU time, and a host that stalls the VM meanwhile lengthens it (a guest's clock counts the
/// stall as the task's time): the program burns 1.5 s, so the moment may take 15 ms.
#[test]
fn a_launchers_moment_before_exec_is_not_the_programs_cpu() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    let cpus = arum_camp::cpus().unwrap();
    let pinned = cpus[cpus.len() - 1];
    // arum (started from this thread, whose affinity it inherits) runs on another CPU, so the
    // moment before exec is there.
    let restore = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    if cpus.len() >= 2 {
        let mut other = nix::sched::CpuSet::new();
        other.set(cpus[0] as usize).unwrap();
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &other).unwrap();
    } else {
        println!("one CPU online: the launcher's moment is on the program's CPU anyway");
    }
    let a = ambient(&[
        "--ambient",
        "--",
        "taskset",
        "-c",
        &pinned.to_string(),
        &helper("burn"),
        "1.5",
    ]);
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &restore).unwrap();
    assert_eq!(
        a["summary"]["program_cpus"],
        serde_json::json!([pinned]),
        "{}",
        a["summary"]
    );
}
