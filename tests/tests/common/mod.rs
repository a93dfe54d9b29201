//! Running the built `arum` binary and the helper programs from integration tests.
#![allow(dead_code)] // each test file uses a different subset

pub mod browser;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The `arum` binary of this build (target/<profile>/arum, beside this test's deps/ directory).
pub fn arum_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let arum = dir.join("arum");
    assert!(
        arum.exists(),
        "{} is missing: build it first with `cargo build --workspace` (the README's test command does)",
        arum.display()
    );
    arum
}

pub fn arum() -> Command {
    Command::new(arum_path())
}

/// A helper program of this package, by name.
pub fn helper(name: &str) -> String {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let path = dir.join(name);
    assert!(path.exists(), "helper {} was not built", path.display());
    path.to_string_lossy().into_owned()
}

/// Runs arum with `args` and returns its output and the parsed JSON report (written with -o).
pub fn run_json(args: &[&str]) -> (Output, Value) {
    let dir = temp_dir();
    let report = dir.path().join("report.json");
    let out = arum()
        .args(["--format", "json", "-o"])
        .arg(&report)
        .args(args)
        .output()
        .expect("arum runs");
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
        panic!(
            "no report at {}: {e}; stderr: {}",
            report.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let json = serde_json::from_str(&text).expect("the report is valid JSON");
    (out, json)
}

/// A fresh, empty directory, removed when the value is dropped.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("arum-test-")
        .tempdir()
        .expect("temporary directory")
}

pub fn u64_at(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} missing or not a number in {v}"))
}

pub const MIB: u64 = 1 << 20;

/// Readings taken every `period_ns` by a sampler that may be starved on a busy machine: it skips
/// deadlines rather than bunching readings up, and never reads early. So there are at most
/// `span_ns / period_ns` of them, each in a slot of its own after the first period.
pub fn assert_periodic(times_ns: &[u64], period_ns: u64, span_ns: u64) {
    assert!(
        times_ns.len() as u64 <= span_ns / period_ns + 1,
        "{} readings in {span_ns} ns at one per {period_ns} ns: {times_ns:?}",
        times_ns.len()
    );
    let slots: Vec<u64> = times_ns.iter().map(|t| t / period_ns).collect();
    assert!(
        slots.iter().all(|&k| k >= 1),
        "a reading before its first deadline: {times_ns:?}"
    );
    assert!(
        slots.windows(2).all(|w| w[0] < w[1]),
        "two readings in one period: {times_ns:?}"
    );
}

/// Whether the kernel lets this test trace system calls; says why not.
pub fn tracing_allowed() -> bool {
    let cap = |c| caps::has_cap(None, caps::CapSet::Effective, c).unwrap_or(false);
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    let allowed = cap(caps::Capability::CAP_PERFMON)
        || cap(caps::Capability::CAP_SYS_ADMIN)
        || paranoid == Some(-1);
    let events = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .any(|d| std::path::Path::new(d).join("events/raw_syscalls").exists());
    // Without tracefs mounted arum reads it through a private mount (as root): allowed covers that.
    if !(allowed && (events || cap(caps::Capability::CAP_SYS_ADMIN))) {
        eprintln!(
            "system call tracing is not allowed here (capabilities, paranoid {paranoid:?}, tracepoints {events}): only the fallback is checked"
        );
        return false;
    }
    true
}

/// A native helper built by build.rs (C, C++; PIE, non-PIE, stripped).
pub fn native(name: &str) -> String {
    format!("{}/{name}", env!("ARUM_NATIVE_HELPERS"))
}

/// A helper's own "key value" lines.
pub fn said(stdout: &[u8]) -> HashMap<String, String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

/// The report's entry for function `name`.
pub fn function<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["functions"]["functions"]
        .as_array()
        .expect("a functions section")
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no function {name} in {}", json["functions"]))
}
