//! The command line itself: help, version, usage errors. (Its presence also makes
//! `cargo test --workspace` build the `arum` binary that the tests/ package runs.)

use std::process::Command;

fn arum() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arum"))
}

#[test]
fn help_documents_every_exit_code() {
    let out = arum().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for code in ["128+N", "125", "126", "127", "  2 "] {
        assert!(help.contains(code), "--help lacks exit code {code}");
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        arum().output().unwrap().status.code(),
        Some(2),
        "no program named"
    );
    let out = arum()
        .args(["--no-such-option", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_launch_string_is_a_one_line_error_with_125() {
    let out = arum()
        .args(["--launch", "echo 'unbalanced"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("arum: cannot split --launch string"));
}

#[test]
fn info_reports_cpu_and_permissions_as_json() {
    let out = arum().args(["info", "--format", "json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "arum_version",
        "kernel_release",
        "cpu",
        "online_cpus",
        "permissions",
        "device",
    ] {
        assert!(v.get(key).is_some(), "{key} missing from arum info");
    }
    assert!(v["permissions"].get("perf_event_paranoid").is_some());
}
