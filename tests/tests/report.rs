//! The report: JSON schema and round trip, CSV, text sections, atomic file output.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arum_core::report::model::Report;
use common::{arum, helper, run_json};

#[test]
fn json_round_trips_through_the_model_and_holds_every_field() {
    let (_, json) = run_json(&["--launch", "sh -c 'exit 0'"]);
    let report: Report = serde_json::from_value(json.clone()).expect("matches the model");
    assert_eq!(serde_json::to_value(&report).unwrap(), json);
    assert_eq!(report.schema, "arum.report/1");
    for pointer in [
        "/metadata/arum_version",
        "/metadata/host",
        "/metadata/kernel_release",
        "/metadata/cpu/vendor",
        "/metadata/cpu/family",
        "/metadata/cpu/model",
        "/metadata/cpu/stepping",
        "/metadata/cpu/model_name",
        "/metadata/online_cpus",
        "/metadata/start_time_utc",
        "/command/argv",
        "/command/launch",
        "/exit/status",
        "/usage/wall_ns",
        "/usage/user_ns",
        "/usage/system_ns",
        "/usage/cpu_utilisation",
        "/usage/minor_faults",
        "/usage/major_faults",
        "/usage/voluntary_context_switches",
        "/usage/involuntary_context_switches",
        "/usage/block_input_ops",
        "/usage/block_output_ops",
        "/usage/signals_received",
        "/usage/peak_memory/peak_rss_bytes",
        "/usage/peak_memory/method",
        "/self_timing/setup_phase1_us",
        "/self_timing/setup_phase2_us",
        "/self_timing/post_phase1_us",
        "/self_timing/post_phase2_us",
        "/self_timing/post_phase3_us",
    ] {
        assert!(json.pointer(pointer).is_some(), "{pointer} missing");
    }
    assert_eq!(report.command.argv, ["sh", "-c", "exit 0"]);
    assert!(report.metadata.start_time_utc.ends_with('Z'));
}

#[test]
fn text_report_starts_with_the_title_and_has_the_original_rows() {
    let out = arum()
        .args(["--self-timing", "--", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.starts_with("ARUM REPORT\n"), "{text}");
    for row in [
        "user time",
        "system time",
        "application elapsed time",
        "peak resident memory",
        "set-up phase 1",
        "post-processing phase 2",
    ] {
        assert!(text.contains(row), "{row} missing from:\n{text}");
    }
}

#[test]
fn csv_has_a_row_per_json_field() {
    let out = arum()
        .args(["--format", "csv", "--", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.starts_with("field,value,unit\n"));
    assert!(text.contains("\nusage.user_ns,"));
    assert!(text.contains(",nanoseconds\n"));
    assert!(text.contains("\nschema,arum.report/1,\n"));
}

#[test]
fn output_file_replaces_the_old_one_and_leaves_no_temporary_behind() {
    let dir = common::temp_dir();
    let path = dir.path().join("r.json");
    std::fs::write(&path, "old").unwrap();
    let out = arum()
        .args(["--format", "json", "-o"])
        .arg(&path)
        .args(["--", &helper("sleeper"), "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "with -o nothing of arum's goes to stderr"
    );
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(report.exit.status, 0);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["r.json"], "no temporary file is left behind");
}

#[test]
fn self_timing_covers_the_writing_of_the_report_to_a_slow_reader() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    // The report goes into a FIFO of one page whose reader starts reading only after DELAY:
    // arum's write blocks until then, and post-processing phase 3 must cover that wait. The
    // program's end (start + wall time) plus arum's phases after it must then reach the moment
    // the reader began; the margin is for the time between the program's exit and its reap,
    // which no phase counts (a few ms even on a busy machine).
    const DELAY: Duration = Duration::from_millis(600);
    const MARGIN: Duration = Duration::from_millis(250);
    let dir = common::temp_dir();
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // Opened first, without waiting for a writer; the pipe shrunk to one page (the report, with
    // the ambient section, is some 30 KiB).
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    // SAFETY: fcntl on a descriptor this test owns; failure is checked.
    let size = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert!(
        size > 0,
        "F_SETPIPE_SZ: {}",
        std::io::Error::last_os_error()
    );
    let child = arum()
        .args(["--format", "json", "--ambient", "-o"])
        .arg(&fifo)
        .args(["--", "true"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(DELAY);
    let began = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    // SAFETY: as above; blocking reads from here on, until arum closes its end.
    unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, 0) };
    let mut text = String::new();
    reader.read_to_string(&mut text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_str(&text).unwrap();
    let t = report.self_timing;
    let phase3 = t.post_phase3_us.expect("phase 3 is timed");
    let program_end =
        Duration::from_nanos(report.metadata.start_time_unix_ns + report.usage.wall_ns);
    let covered = Duration::from_micros(t.post_phase1_us + t.post_phase2_us + phase3);
    assert!(
        program_end + covered + MARGIN >= began,
        "phases after the program {covered:?} end {:?} before the reader began",
        began - (program_end + covered)
    );
}

// Each sampler thread of the run reports its samples and CPU time: the tree's memory sampler
// and the -I readings of a program that runs past the launch grace, each within its 1% budget
// of the run (its first sample aside, which is taken however much it costs).
#[test]
fn self_timing_names_each_sampler_and_its_cpu_time() {
    let (out, r) = run_json(&["-I", "20", "-e", "task-clock", "--", &helper("burn"), "0.4"]);
    assert!(out.status.success());
    let samplers = r["self_timing"]["samplers"].as_array().expect("samplers");
    let wall = r["usage"]["wall_ns"].as_f64().unwrap();
    for name in ["arum-tree", "arum-interval"] {
        let s = samplers
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {samplers:?}"));
        let (ticks, cpu) = (s["ticks"].as_u64().unwrap(), s["cpu_ns"].as_f64().unwrap());
        assert!(ticks >= 2 && cpu > 0.0, "{s}");
        // The budget bounds every sample but the first by 1% of the time to the next; the
        // first (one process's files, or one read of a counter) costs well under 3 ms.
        assert!(cpu <= 0.01 * wall + 3e6, "{s}, wall {wall} ns");
    }
}

#[test]
fn output_to_a_fifo_writes_into_it_and_keeps_it_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = common::temp_dir();
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = arum()
        .args(["--format", "json", "-o"])
        .arg(&fifo)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(report.exit.status, 0);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}
