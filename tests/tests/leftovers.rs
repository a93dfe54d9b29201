//! What an arum killed by SIGKILL left on the machine (its tree's cgroup, the delay-accounting
//! setting it turned on, uprobe events) is undone by the next run (uprobe events: by the next
//! run that defines some), which says so once.
//!
//! A file of its own: the tests of one file run side by side, and any other run of arum there
//! would clean up this test's leftovers before the test looks.

mod common;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn delayacct() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/task_delayacct").ok()
}

/// arum's own cgroup v2 directory, as /proc/self/cgroup and the usual mount points (unified or
/// hybrid layout) give it.
fn own_cgroup() -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .iter()
        .map(|m| std::path::Path::new(m).join(rel.trim().trim_start_matches('/')))
        .find(|d| d.join("cgroup.procs").exists() && d.join("cgroup.controllers").exists())
}

#[test]
fn what_a_killed_arum_left_is_undone_by_the_next_run() {
    if !is_root() {
        println!("not root: arum turns nothing on and defines no uprobes, so leaves nothing");
        return;
    }
    let mut expect: Vec<&str> = Vec::new();
    // A real SIGKILL while delay accounting is on for the run.
    let mut killed = None;
    if delayacct().as_deref().map(str::trim) == Some("0") {
        let mut child = common::arum()
            .args(["--per-task", "--enable-delayacct", "-o", "/dev/null"])
            .args(["--", "sleep", "30"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let program = loop {
            let children =
                std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
            if delayacct().as_deref().map(str::trim) == Some("1") {
                if let Some(p) = children.split_whitespace().next() {
                    break p.parse::<i32>().unwrap();
                }
            }
            assert!(std::time::Instant::now() < deadline, "arum did not start");
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(program),
            nix::sys::signal::Signal::SIGKILL,
        );
        // SIGKILL gave arum no chance: the setting is still on.
        assert_eq!(delayacct().as_deref().map(str::trim), Some("1"));
        killed = Some(pid);
        match own_cgroup() {
            Some(_) => expect.push("task_delayacct"),
            None => {
                println!("no cgroup v2 group here: arum said a SIGKILL would leave the setting on")
            }
        }
    } else {
        println!("kernel.task_delayacct is not 0 here: no SIGKILL of a run that turned it on");
    }
    // Uprobe events of an arum whose pid runs no more (above the kernel's largest pid_max).
    let dead = 1 << 23;
    let events = "/sys/kernel/tracing/uprobe_events";
    let defined = std::fs::OpenOptions::new()
        .append(true)
        .open(events)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(format!("p:arum_{dead}/p0 /bin/true:0x1000\n").as_bytes())
        })
        .is_ok();
    if !defined {
        println!("{events} cannot be written here: no uprobe leftovers to test");
    }
    let stale_group =
        || std::fs::read_to_string(events).is_ok_and(|t| t.contains(&format!("arum_{dead}/")));

    // A plain run undoes the cgroup's leftovers; it reads no tracefs.
    let cleaned = |args: &[&str]| {
        let out = common::arum().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let lines: Vec<String> = stderr
            .lines()
            .filter(|l| l.contains("killed left behind"))
            .map(str::to_owned)
            .collect();
        (lines, stderr)
    };
    let (lines, stderr) = cleaned(&["-o", "/dev/null", "--", "true"]);
    if expect.is_empty() {
        assert!(lines.is_empty(), "{stderr}");
    } else {
        assert_eq!(lines.len(), 1, "{stderr}");
        for e in &expect {
            assert!(lines[0].contains(e), "{e}: {stderr}");
        }
        assert!(!lines[0].contains("uprobe"), "{stderr}");
    }
    if expect.contains(&"task_delayacct") {
        assert_eq!(delayacct().as_deref().map(str::trim), Some("0"));
        let dir = own_cgroup().unwrap();
        let pid = killed.unwrap();
        for name in [format!("arum-{pid}"), format!("arum-delayacct-{pid}")] {
            assert!(!dir.join(&name).exists(), "{name} stays");
        }
    }
    if !defined {
        return;
    }
    assert!(
        stale_group(),
        "a plain run read tracefs and removed the uprobe group"
    );

    // A run that defines uprobe events in tracefs (the records' engine) removes the dead
    // arum's group before it defines its own.
    let (lines, stderr) = cleaned(&[
        "--probe-engine",
        "perf",
        "-F",
        "libc:malloc",
        "-o",
        "/dev/null",
        "--",
        "true",
    ]);
    if stderr.contains("function timing is off") {
        println!("function timing is off here, so no uprobe events were defined: {stderr}");
        return;
    }
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains(&format!("uprobe events arum_{dead}")),
        "{stderr}"
    );
    assert!(!stale_group(), "the dead arum's uprobe group stays");
}
