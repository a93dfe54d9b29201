//! ARUM is transparent: the program sees the signal dispositions, mask, descriptors, working
//! directory, environment and exit status it would see without ARUM, and ARUM writes nothing
//! outside `-o`'s target and its own cgroup. Each test compares with the same program run
//! without ARUM, or checks the file system around the run.

mod common;

use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{arum, arum_path, helper, run_json, temp_dir, u64_at};

/// What `procstate` records about itself when started by `cmd` (arum or not), with a parent state
/// a careful user might have: SIGHUP and SIGUSR1 ignored (as under nohup), SIGUSR2 blocked, an
/// inherited descriptor 7, and (when `close_stdout`) descriptor 1 closed.
fn procstate(under_arum: bool, close_stdout: bool) -> String {
    let dir = temp_dir();
    let file = dir.path().join("state");
    let inherited = std::fs::File::open("/dev/null").unwrap();
    let fd = inherited.as_raw_fd();
    let mut cmd = if under_arum {
        let mut c = arum();
        c.args(["-o", "/dev/null", "--"]);
        c.arg(helper("procstate"));
        c
    } else {
        Command::new(helper("procstate"))
    };
    cmd.arg(&file).stdin(Stdio::null()).stderr(Stdio::null());
    // SAFETY: runs in the forked child before exec and only makes async-signal-safe calls.
    unsafe {
        cmd.pre_exec(move || {
            // A shell's SIGPIPE (the test harness itself ignores it).
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            libc::signal(libc::SIGUSR1, libc::SIG_IGN);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR2);
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            // Descriptor 7, without close-on-exec, as a shell's `7<file` would leave it.
            if libc::dup2(fd, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if close_stdout {
                libc::close(1);
            }
            Ok(())
        });
    }
    let status = cmd.status().expect("runs");
    assert!(
        status.success(),
        "procstate under arum={under_arum}: {status}"
    );
    std::fs::read_to_string(&file).expect("procstate wrote its file")
}

#[test]
fn the_program_gets_every_disposition_the_mask_descriptors_cwd_and_environment_as_given() {
    for close_stdout in [false, true] {
        let direct = procstate(false, close_stdout);
        let under = procstate(true, close_stdout);
        assert!(direct.contains("signal 1 ignored"), "{direct}");
        assert!(direct.contains("signal 13 default"), "SIGPIPE: {direct}");
        assert!(direct.contains("fd 7 open"), "{direct}");
        assert_eq!(
            direct.contains("fd 1 open"),
            !close_stdout,
            "the direct run's descriptor 1: {direct}"
        );
        let diff: Vec<_> = direct
            .lines()
            .zip(under.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert!(
            diff.is_empty() && direct.lines().count() == under.lines().count(),
            "with descriptor 1 {}: without arum vs under arum: {diff:?}",
            if close_stdout { "closed" } else { "open" }
        );
    }
}

#[test]
fn a_program_killed_by_sigpipe_exits_as_it_would_without_arum() {
    // `yes | head -1`: yes dies of SIGPIPE (141) when head has gone.
    let run = |under_arum: bool| {
        let script = if under_arum {
            format!(
                "{} -o /dev/null -- yes | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}",
                arum_path().display()
            )
        } else {
            "yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}".to_string()
        };
        let out = Command::new("bash").args(["-c", &script]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(run(false), "141");
    assert_eq!(run(true), "141");
}

#[test]
fn a_closed_descriptor_stays_closed_for_the_program() {
    // `echo hi >&-` fails without arum (1, "Bad file descriptor"); so it must with arum.
    let status = |under_arum: bool| {
        let mut cmd = if under_arum {
            let mut c = arum();
            c.args(["-o", "/dev/null", "--", "sh", "-c", "echo hi"]);
            c
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", "echo hi"]);
            c
        };
        cmd.stderr(Stdio::null());
        // SAFETY: close is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        cmd.status().unwrap().code()
    };
    assert_eq!(status(false), Some(1));
    assert_eq!(status(true), Some(1));
}

#[test]
fn a_script_without_a_shebang_runs_through_sh_as_execvp_runs_it() {
    let dir = temp_dir();
    let script = dir.path().join("plain-script");
    std::fs::write(&script, "echo \"ran with $# arguments: $*\"\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = arum()
        .args(["-o", "/dev/null", "--"])
        .arg(&script)
        .args(["a", "b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ran with 2 arguments: a b\n"
    );
}

#[test]
fn an_empty_program_name_is_not_found_as_in_the_shell() {
    let out = arum().args(["--", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "arum: cannot run '': No such file or directory\n"
    );
}

#[test]
fn output_through_a_symlink_writes_its_target_and_keeps_the_link_and_mode() {
    let dir = temp_dir();
    let real = dir.path().join("real.txt");
    let link = dir.path().join("link.txt");
    std::fs::write(&real, "old\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    let out = arum()
        .arg("-o")
        .arg(&link)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .starts_with("ARUM REPORT"));
    assert_eq!(std::fs::metadata(&real).unwrap().mode() & 0o777, 0o640);
    // A dangling link: the report is created where it points.
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink("made-by-arum.txt", &dangling).unwrap();
    assert!(arum()
        .arg("-o")
        .arg(&dangling)
        .args(["--", "true"])
        .status()
        .unwrap()
        .success());
    assert!(dir.path().join("made-by-arum.txt").exists());
    // Nothing else was left in the directory.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["dangling", "link.txt", "made-by-arum.txt", "real.txt"]
    );
}

#[test]
fn output_to_dev_stdout_writes_arums_own_stdout_and_creates_nothing_in_dev() {
    let dir = temp_dir();
    let log = dir.path().join("out.log");
    let out = Command::new(arum_path())
        .args(["-o", "/dev/stdout", "--", "echo", "hi"])
        .stdout(std::fs::File::create(&log).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("hi\nARUM REPORT"), "{text}");
    assert!(std::fs::symlink_metadata("/dev/stdout")
        .unwrap()
        .file_type()
        .is_symlink());
    let out = arum()
        .args(["-o", "/dev/arum-report-test", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("creates no files under /dev"));
    assert!(!Path::new("/dev/arum-report-test").exists());
}

#[test]
fn a_killed_arum_leaves_no_partial_report_behind() {
    let dir = temp_dir();
    let mut child = arum()
        .arg("-o")
        .arg(dir.path().join("r.json"))
        .args(["--", "sleep", "5"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The cgroup v2 directory arum's own process is in, if the machine has a writable one.
fn own_cgroup_v2() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        (right.split_whitespace().next()? == "cgroup2").then(|| left.split(' ').nth(4))?
    })?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = Path::new(mount).join(rel.trim_start_matches('/'));
    let probe = dir.join(format!("arum-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    std::fs::remove_dir(&probe).ok()?;
    Some(dir)
}

#[test]
fn the_per_run_cgroup_is_removed_even_when_a_daemon_outlives_the_program() {
    let Some(parent) = own_cgroup_v2() else {
        println!("no writable cgroup v2 hierarchy here: arum makes no cgroup, nothing to clean up");
        return;
    };
    let groups = || -> Vec<String> {
        std::fs::read_dir(&parent)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("arum-"))
            .collect()
    };
    // A group left by an arum that was killed (its pid is gone): removed at the next start.
    let stale = parent.join("arum-2147483646");
    std::fs::create_dir(&stale).unwrap();
    // --ambient lists the tree, so arum makes a group; the daemon double-forks out of sh.
    let out = arum()
        .args([
            "--ambient=0",
            "-o",
            "/dev/null",
            "--",
            "sh",
            "-c",
            "(sleep 1 &) ; true",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!stale.exists(), "the stale group is still there");
    assert!(groups().is_empty(), "left behind: {:?}", groups());
}

#[test]
fn a_short_program_has_a_peak_and_one_process_and_thread_at_least() {
    for program in ["true", "ls"] {
        let (_, r) = run_json(&["--", program, "/"]);
        let maxrss = u64_at(&r, "/usage/rusage_maxrss_bytes");
        let peak = u64_at(&r, "/usage/peak_memory/peak_rss_bytes");
        let method = r["usage"]["peak_memory"]["method"].as_str().unwrap();
        assert!(peak > 0, "{program}: peak 0 while ru_maxrss says {maxrss}");
        // Either a measured peak, or, for a program too short to sample whose ru_maxrss may be
        // arum's copy, ru_maxrss as an upper bound, said so.
        if method == "rusage_upper_bound" {
            assert_eq!(peak, maxrss);
        }
        assert!(u64_at(&r, "/usage/peak_memory/peak_processes") >= 1);
        assert!(u64_at(&r, "/usage/peak_memory/peak_threads") >= 1);
    }
}

#[test]
fn pages_shared_between_processes_count_once() {
    // 64 MiB touched, then a fork: two processes whose resident sizes add up to 128 MiB.
    let (_, r) = run_json(&["--", &helper("share"), "64", "1"]);
    let method = r["usage"]["peak_memory"]["method"].as_str().unwrap();
    let peak = u64_at(&r, "/usage/peak_memory/peak_rss_bytes") >> 20;
    println!("peak {peak} MiB by {method}");
    assert!(
        method == "pss_sampling" || method == "cgroup_v2_memory_peak",
        "{method}"
    );
    assert!(
        (64..100).contains(&peak),
        "{peak} MiB for 64 MiB shared by two processes"
    );
}
