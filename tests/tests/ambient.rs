//! The ambient environment, validated as CAMP validates its accessors: small programs that use
//! a known amount of one resource, and the report must show that amount.

mod common;

use std::sync::Mutex;

use common::{helper, run_json, MIB};
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
    assert!(
        cpus.len() >= 2,
        "needs two CPUs: one to load, one to stay idle"
    );
    let (busy, idle) = (cpus[1], cpus[0]);
    let a = ambient(&[
        "--ambient=500ms",
        "--",
        &helper("duty"),
        "0.5",
        &busy.to_string(),
        "2",
    ]);
    let util = |cpu: u32| {
        a["summary"]["cpu_utilisation"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["cpu"] == cpu)
            .map(|c| c["busy"].as_f64().unwrap())
            .unwrap()
    };
    assert!(
        (40.0..=60.0).contains(&util(busy)),
        "CPU {busy} at 50% duty: {:.1}%",
        util(busy)
    );
    assert!(util(idle) < 15.0, "idle CPU {idle}: {:.1}%", util(idle));
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
    let threads: Vec<u64> = a["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["threads"].as_u64().unwrap())
        .collect();
    let first_two = threads
        .iter()
        .position(|&t| t == 2)
        .expect("a second thread appears");
    assert!(
        first_two >= 2,
        "one thread for the first 300 ms: {threads:?}"
    );
    assert!(threads[..first_two].iter().all(|&t| t == 1), "{threads:?}");
}

#[test]
fn fsync_reaches_the_backing_device() {
    let _one = MACHINE.lock().unwrap_or_else(|e| e.into_inner());
    // Write beside the build (on the project's disk), not in a RAM-backed /tmp.
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let file = dir.join(format!("fsync-test-{}", std::process::id()));
    let Some(disk) = arum_camp::disk_of(&dir) else {
        panic!("{} is on a file system without a block device (tmpfs/overlay): this test needs a disk-backed directory", dir.display());
    };
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
    let a = ambient(&["--ambient=50ms", "--", "sleep", "0.5"]);
    let n = a["samples"].as_array().unwrap().len();
    assert!((9..=14).contains(&n), "{n} samples");
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
    // The neighbour spins on the program's CPU for the whole run.
    let mut neighbour = std::process::Command::new(helper("duty"))
        .args(["1.0", &cpu, "1.5"])
        .spawn()
        .unwrap();
    let a = ambient(&["--ambient=250ms", "--", &helper("duty"), "0.3", &cpu, "1"]);
    neighbour.wait().unwrap();
    assert!(a["summary"]["program_cpus"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c.as_u64() == cpu.parse().ok()));
    let other = a["summary"]["other_cpu_ns"].as_u64().unwrap();
    assert!(
        other >= 400_000_000,
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
