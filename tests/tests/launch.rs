//! The launch path: exit statuses, exec failures, pass-through of the program's I/O, signals.

mod common;

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use common::{arum, helper, run_json};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

#[test]
fn exit_status_passes_through() {
    for code in [0, 3] {
        let out = arum()
            .args(["--", "sh", "-c", &format!("exit {code}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code));
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("ARUM REPORT"));
    }
}

#[test]
fn killed_program_gives_128_plus_signal_and_the_report_says_so() {
    let out = arum()
        .args(["--", "sh", "-c", "kill -9 $$"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(137));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("terminated by signal 9 (SIGKILL)"),
        "{stderr}"
    );
}

#[test]
fn report_is_written_when_the_program_fails_or_is_killed() {
    let (out, json) = run_json(&["--", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(json["exit"]["code"], 3);
    let (out, json) = run_json(&["--", "sh", "-c", "kill -KILL $$"]);
    assert_eq!(out.status.code(), Some(137));
    assert_eq!(json["exit"]["signal"], 9);
    assert_eq!(json["exit"]["signal_name"], "SIGKILL");
    assert_eq!(json["exit"]["status"], 137);
}

#[test]
fn missing_program_exits_127_with_one_line() {
    let out = arum()
        .args(["--", "arum-no-such-program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "arum: cannot run 'arum-no-such-program': No such file or directory\n"
    );
}

#[test]
fn non_executable_program_exits_126() {
    let dir = common::temp_dir();
    let file = dir.path().join("data.txt");
    std::fs::write(&file, "not a program\n").unwrap();
    let out = arum().arg("--").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(126));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.ends_with(": Permission denied\n"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1);
}

#[test]
fn stdout_is_passed_through_byte_for_byte_and_stderr_is_kept() {
    let out = arum().args(["--", &helper("emit")]).output().unwrap();
    let expected: Vec<u8> = (0..64).flat_map(|_| 0..=255u8).collect();
    assert_eq!(
        out.stdout, expected,
        "stdout must carry only the program's bytes"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("emit: stderr line\n"), "{stderr}");
    assert!(stderr.contains("ARUM REPORT"));
}

#[test]
fn stdin_is_passed_through() {
    let mut child = arum()
        .args(["-o", "/dev/null", "--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let data: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = {
        let data = data.clone();
        std::thread::spawn(move || stdin.write_all(&data).unwrap())
    };
    let mut got = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut got).unwrap();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(got, data);
}

#[test]
fn launch_string_is_split_like_a_shell() {
    let out = arum()
        .args(["--launch", r#"sh -c 'echo "a b"'"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a b\n");
}

#[test]
fn shell_mode_runs_the_string_through_sh() {
    let out = arum()
        .args(["--shell", "--launch", "echo one | tr o O; exit 4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "One\n");
}

/// Starts `trap` under arum and waits until it is ready for signals.
fn trapped() -> std::process::Child {
    let mut child = arum()
        .args(["-o", "/dev/null", "--", &helper("trap")])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = [0u8; 6];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut line)
        .unwrap();
    assert_eq!(&line, b"ready\n");
    child
}

fn signal(child: &std::process::Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).unwrap();
}

#[test]
fn sigterm_and_sigusr1_are_forwarded_to_the_program() {
    for (sig, status) in [(Signal::SIGTERM, 42), (Signal::SIGUSR1, 43)] {
        let mut child = trapped();
        signal(&child, sig);
        assert_eq!(child.wait().unwrap().code(), Some(status));
    }
}

#[test]
fn sigint_to_arum_is_ignored_while_the_program_runs() {
    let mut child = trapped();
    signal(&child, Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "arum must survive SIGINT"
    );
    signal(&child, Signal::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(42));
}

#[test]
fn unwritable_output_fails_before_running_anything() {
    let dir = common::temp_dir();
    let marker = dir.path().join("ran");
    let out = arum()
        .args(["-o", "/nonexistent-dir/report.json", "--", "touch"])
        .arg(&marker)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("/nonexistent-dir/report.json") && stderr.contains("-o/--output"));
    assert!(
        !marker.exists(),
        "the program must not run when the report cannot be written"
    );
}
