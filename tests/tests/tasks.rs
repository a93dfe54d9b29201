//! Per-task records (`--per-task`) of helpers with known behaviour. Every figure is compared with
//! the same run's own account (the helper's clocks and getrusage, the run's rusage), so the tests
//! hold on a busy machine. Exact records need CAP_NET_ADMIN: as another user, the tests check
//! what /proc sampling gives and that the report says what needs root.

mod common;

use common::{helper, run_json, temp_dir, u64_at};
use serde_json::Value;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn tasks(report: &Value) -> &Value {
    report.get("tasks").expect("a tasks section")
}

fn threads_of(report: &Value, pid: u64) -> Vec<&Value> {
    tasks(report)["threads"]
        .as_array()
        .expect("threads")
        .iter()
        .filter(|t| t["pid"].as_u64() == Some(pid))
        .collect()
}

fn root_pid(report: &Value) -> u64 {
    // The launched process is the one whose parent is not in the tree.
    let processes = tasks(report)["processes"].as_array().expect("processes");
    let pids: Vec<u64> = processes
        .iter()
        .map(|p| p["pid"].as_u64().unwrap())
        .collect();
    processes
        .iter()
        .find(|p| !pids.contains(&p["parent"].as_u64().unwrap()))
        .and_then(|p| p["pid"].as_u64())
        .expect("a root process")
}

/// Skips (with the reason printed) a test of exact records when they cannot be had here.
fn exact_records_available(report: &Value) -> bool {
    let t = tasks(report);
    if t["method"] == "exit_records" {
        return true;
    }
    assert!(!is_root(), "root gets exit records: {t}");
    println!(
        "not root: exit records need CAP_NET_ADMIN, the report says so: {}",
        t["limits"]
    );
    false
}

#[test]
fn each_thread_gets_its_own_cpu_time_and_the_threads_add_up_to_the_run() {
    let dir = temp_dir();
    let own = dir.path().join("own");
    let (out, report) = run_json(&[
        "--per-task",
        "--",
        &helper("staggered"),
        "0.05",
        "8",
        own.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if !exact_records_available(&report) {
        return;
    }
    let own = std::fs::read_to_string(&own).unwrap();
    let root = root_pid(&report);
    let threads = threads_of(&report, root);
    assert_eq!(threads.len(), 9, "main thread and 8 workers: {threads:?}");
    for (k, line) in own.lines().filter(|l| !l.starts_with("total")).enumerate() {
        let (tid, clock) = line.split_once(' ').unwrap();
        let (tid, clock): (u64, u64) = (tid.parse().unwrap(), clock.parse().unwrap());
        let record = threads
            .iter()
            .find(|t| t["tid"].as_u64() == Some(tid))
            .unwrap_or_else(|| panic!("no record of thread {tid}"));
        let cpu = u64_at(record, "/cpu_ns");
        let share = 50_000_000 * (k as u64 + 1);
        assert!(
            cpu.abs_diff(share) * 10 <= share,
            "thread {tid}: {cpu} ns, its share {share} ns"
        );
        // The record is taken at the thread's exit, after its own last reading of its clock.
        assert!(
            cpu >= clock,
            "thread {tid}: record {cpu} < own clock {clock}"
        );
    }
    let total: u64 = tasks(&report)["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u64_at(t, "/cpu_ns"))
        .sum();
    let rusage = u64_at(&report, "/usage/user_ns") + u64_at(&report, "/usage/system_ns");
    assert!(
        total.abs_diff(rusage) * 50 <= rusage,
        "records {total} ns, rusage {rusage} ns"
    );
    let check = tasks(&report)["rusage_check"].as_array().unwrap();
    let faults = check.iter().find(|c| c["field"] == "minor_faults").unwrap();
    assert_eq!(faults["tasks_total"], faults["rusage"], "{faults}");
    assert_eq!(faults["agrees"], true);
    let imbalance = tasks(&report)["processes"][0]["imbalance"]
        .as_f64()
        .unwrap();
    // Workers of 1..8 shares: the busiest has 8 / 4.5 of the mean (the main thread barely runs).
    assert!(imbalance > 1.4, "imbalance {imbalance}");
}

#[test]
fn a_thousand_short_threads_each_have_a_record() {
    let (out, report) = run_json(&["--per-task", "--", &helper("short_threads"), "1000"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if !exact_records_available(&report) {
        return;
    }
    let t = tasks(&report);
    let threads = threads_of(&report, root_pid(&report));
    assert_eq!(threads.len(), 1001, "limits: {}", t["limits"]);
    assert!(threads.iter().all(|t| t["source"] == "exit_record"));
    assert_eq!(t["exact"], true, "{}", t["limits"]);
    assert_eq!(t["records_dropped"], false);
    // Every thread's start and end are known, in order, within the run.
    let wall = u64_at(&report, "/usage/wall_ns") as i64;
    for th in threads.iter().filter(|t| t["tid"] != t["pid"]) {
        let (s, e) = (
            th["start_ns"].as_i64().unwrap(),
            th["end_ns"].as_i64().unwrap(),
        );
        assert!(0 <= s && s <= e && e <= wall, "{th}");
    }
}

/// With the in-kernel engine every record's CPU time is the scheduler's to the task's last
/// switch: never 0 for a task that ran, and the records add up to rusage within 2% (rusage
/// leaves out the threads' exit tails, the exit records their last moments).
fn cpu_times_are_whole(report: &Value) {
    let t = tasks(report);
    if t["cpu_from_switches"] != true {
        println!(
            "CPU times from exit records here (the in-kernel engine is off): {}",
            t["limits"]
        );
        assert!(
            t["limits"].to_string().contains("in-kernel engine is off"),
            "{t}"
        );
        return;
    }
    let threads = t["threads"].as_array().unwrap();
    let idle: Vec<&Value> = threads.iter().filter(|x| x["cpu_ns"] == 0).collect();
    assert!(
        idle.is_empty(),
        "{} of {} records with no CPU: {:?}",
        idle.len(),
        threads.len(),
        idle.first()
    );
    let cpu = t["rusage_check"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["field"] == "cpu_ns")
        .expect("the CPU row");
    let (ours, rusage) = (
        u64_at(cpu, "/tasks_total") as f64,
        u64_at(cpu, "/rusage") as f64,
    );
    assert!((ours - rusage).abs() <= 0.02 * rusage, "{cpu}");
}

#[test]
fn short_threads_and_processes_each_get_their_whole_cpu_time() {
    let (out, report) = run_json(&["--per-task", "--", &helper("short_threads"), "1000"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if exact_records_available(&report) {
        cpu_times_are_whole(&report);
    }
    let (out, report) = run_json(&[
        "--per-task",
        "--shell",
        "--launch",
        "i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if exact_records_available(&report) {
        assert_eq!(tasks(&report)["processes"].as_array().unwrap().len(), 301);
        cpu_times_are_whole(&report);
    }
    // Without the engine the report says where the times come from.
    let (out, report) = run_json(&["--per-task", "--probe-engine", "perf", "--", "true"]);
    assert!(out.status.success());
    let t = tasks(&report);
    assert_eq!(t["cpu_from_switches"], false, "{t}");
    assert!(
        t["limits"].to_string().contains("--probe-engine perf"),
        "{t}"
    );
}

#[test]
fn a_pipeline_gives_three_processes_with_their_commands_and_parent() {
    let (out, report) = run_json(&[
        "--per-task",
        "--shell",
        "--launch",
        "sleep 0.5 | cat | wc -c",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let processes = tasks(&report)["processes"].as_array().unwrap();
    let shell = root_pid(&report);
    let mut stages: Vec<Vec<String>> = processes
        .iter()
        .filter(|p| p["parent"].as_u64() == Some(shell))
        .map(|p| serde_json::from_value(p["argv"].clone()).expect("argv recorded"))
        .collect();
    stages.sort();
    assert_eq!(
        stages,
        [vec!["cat"], vec!["sleep", "0.5"], vec!["wc", "-c"]],
        "{processes:?}"
    );
}

#[test]
fn a_thread_behind_a_real_time_hog_waits_for_its_cpu() {
    let dir = temp_dir();
    let file = dir.path().join("tids");
    let (out, report) = run_json(&[
        "--per-task",
        "--",
        &helper("fifo_hog"),
        "0.3",
        file.to_str().unwrap(),
    ]);
    if out.status.code() == Some(3) {
        println!("SCHED_FIFO is not permitted here (needs CAP_SYS_NICE): nothing to wait behind");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if !exact_records_available(&report) {
        return;
    }
    let tids = std::fs::read_to_string(&file).unwrap();
    let tid = |name: &str| -> u64 {
        tids.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap()
    };
    let threads = &tasks(&report)["threads"];
    let record = |t: u64| {
        threads
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["tid"].as_u64() == Some(t))
            .unwrap_or_else(|| panic!("no record of {t}"))
            .clone()
    };
    let (victim, hog) = (record(tid("victim")), record(tid("hog")));
    let waited = u64_at(&victim, "/delays/run_queue/total_ns");
    let hogged = u64_at(&hog, "/cpu_ns");
    // The victim was runnable on the hog's CPU all the while the hog ran.
    assert!(
        waited * 2 >= hogged,
        "victim waited {waited} ns while the hog ran {hogged} ns"
    );
    assert!(victim["cpu_wait_share"].as_f64().unwrap() > 0.0);
}

/// The tests that turn delay accounting on, or need it off, take turns: it is machine-wide.
static DELAYACCT: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn delayacct() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/task_delayacct").ok()
}

#[test]
fn fsynced_writes_show_their_bytes_and_block_io_delay() {
    let _turn = DELAYACCT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir();
    let (data, own) = (dir.path().join("data"), dir.path().join("own"));
    let before = delayacct();
    let mut args = vec!["--per-task"];
    if is_root() {
        args.push("--enable-delayacct");
    }
    let (fsync, data_s, own_s) = (
        helper("fsync_write"),
        data.to_str().unwrap().to_string(),
        own.to_str().unwrap().to_string(),
    );
    args.extend(["--", &fsync, &data_s, "4", &own_s]);
    let (out, report) = run_json(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(delayacct(), before, "kernel.task_delayacct is restored");
    let t = tasks(&report);
    let writer = &threads_of(&report, root_pid(&report))[0];
    // The writer's own count of its bytes and of its block I/O wait (whole clock ticks, in ns),
    // read by it just before it exited.
    let own_text = std::fs::read_to_string(&own).unwrap();
    let own_counts: Vec<u64> = own_text
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let (own_bytes, own_blkio_ns) = (own_counts[0], own_counts[1]);
    // Exact at exit: at least what the thread counted just before (a sample may stop earlier).
    if t["exact"] == true {
        assert!(u64_at(writer, "/write_bytes") >= own_bytes, "{writer}");
    }
    assert!(u64_at(writer, "/write_chars") >= 4 << 20);
    if t["delay_accounting"]["on"] != true {
        let note = t["delay_accounting"]["note"].as_str().unwrap();
        assert!(note.contains("--enable-delayacct"), "{note}");
        assert!(writer["delays"]["block_io"].is_null());
        println!("delay accounting is off and could not be turned on: {note}");
        return;
    }
    if own_bytes == 0 {
        println!("the temporary directory's file system sent nothing to a block device: no I/O to wait for");
        return;
    }
    if own_blkio_ns == 0 {
        println!(
            "the kernel counted under one clock tick of block I/O wait for the writer \
             (a fast device): the report's block I/O delay is not checked against it: {}",
            writer["delays"]["block_io"]
        );
        return;
    }
    assert!(
        u64_at(writer, "/delays/block_io/count") > 0,
        "{own_blkio_ns} ns of block I/O wait in /proc, none in the report: {writer}"
    );
    // The exit record covers the whole thread, so at least what the thread read before exiting.
    assert!(
        u64_at(writer, "/delays/block_io/total_ns") >= own_blkio_ns,
        "{own_blkio_ns} ns of block I/O wait in /proc, less in the report: {writer}"
    );
}

#[test]
fn without_delay_accounting_the_report_says_how_to_get_the_delays() {
    let _turn = DELAYACCT.lock().unwrap_or_else(|e| e.into_inner());
    if delayacct().as_deref().map(str::trim) != Some("0") {
        println!("kernel.task_delayacct is on (or absent) here: nothing to report missing");
        return;
    }
    let (_, report) = run_json(&["--per-task", "--", "true"]);
    let d = &tasks(&report)["delay_accounting"];
    assert_eq!(d["on"], false);
    assert!(d["note"].as_str().unwrap().contains("--enable-delayacct"));
    let root = threads_of(&report, root_pid(&report));
    assert!(root[0]["delays"]["block_io"].is_null());
}

#[test]
fn another_user_gets_sampled_records_and_is_told_what_needs_root() {
    if !is_root() {
        println!("not root: the other tests already run without the privileges");
        return;
    }
    if std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("setpriv is missing (util-linux): cannot run as another user");
        return;
    }
    let dir = temp_dir();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let report_path = dir.path().join("report.json");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(common::arum_path())
        .args(["--per-task", "--format", "json", "-o"])
        .arg(&report_path)
        .args(["--", &helper("burn"), "0.4", "2"])
        .output()
        .expect("setpriv runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let t = tasks(&report);
    assert_eq!(t["method"], "proc_sampling");
    assert_eq!(t["exact"], false);
    let limits = t["limits"].to_string();
    assert!(limits.contains("CAP_NET_ADMIN"), "{limits}");
    let threads = threads_of(&report, root_pid(&report));
    assert_eq!(threads.len(), 3, "main thread and two burners: {threads:?}");
    assert!(threads.iter().all(|t| t["source"] == "proc_sample"));
    // Samples stop at each thread's last one: a lower bound of the run's own figure.
    let sampled: u64 = threads.iter().map(|t| u64_at(t, "/cpu_ns")).sum();
    let rusage = u64_at(&report, "/usage/user_ns") + u64_at(&report, "/usage/system_ns");
    assert!(
        sampled > 0 && sampled <= rusage,
        "sampled {sampled}, rusage {rusage}"
    );
}
