//! Against the running kernel: a child's exit record and its fork and exit events arrive.
//! Both interfaces need CAP_NET_ADMIN: without it, the test checks that registering is refused
//! as such (PermissionDenied) and says so.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use arum_taskstats::{ExitListener, ExitRecord, ProcEvent, ProcEvents};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

fn online_cpus() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .expect("online CPUs")
        .trim()
        .to_string()
}

fn wait_readable(socket: &impl AsFd, deadline: Instant) -> bool {
    let left = deadline.saturating_duration_since(Instant::now());
    let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(socket.as_fd(), PollFlags::POLLIN)];
    matches!(poll(&mut fds, timeout), Ok(1))
}

#[test]
fn a_child_exit_is_recorded_with_its_times_and_exit_code() {
    let mut listener = match ExitListener::register(&online_cpus()) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            println!("taskstats registration refused without CAP_NET_ADMIN, as expected: {e}");
            return;
        }
        Err(e) => panic!("registering for exit records: {e}"),
    };
    let mut events = ProcEvents::listen().expect("the proc connector, with CAP_NET_ADMIN");
    let child = std::process::Command::new("sh")
        .args(["-c", "exit 3"])
        .spawn()
        .expect("sh runs");
    let pid = child.id();
    let status = child.wait_with_output().expect("reaped").status;
    assert_eq!(status.code(), Some(3));

    let (mut records, mut seen) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(10);
    let found = |records: &[ExitRecord]| {
        records.iter().find_map(|r| match r {
            ExitRecord::Task(t) if t.pid == pid => Some(t.clone()),
            _ => None,
        })
    };
    while found(&records).is_none() && wait_readable(&listener, deadline) {
        listener.receive(&mut records);
    }
    let record = found(&records).expect("the child's exit record");
    assert_eq!(record.comm, "sh");
    assert_eq!(record.exit_status(), Some(3));
    assert_eq!(record.ppid, std::process::id());
    assert!(record.elapsed_ns > 0);

    let exit_seen = |seen: &[ProcEvent]| {
        seen.iter()
            .any(|e| matches!(e, ProcEvent::Exit { pid: p, exit_code: 768, .. } if *p == pid))
    };
    while !exit_seen(&seen) && wait_readable(&events, deadline) {
        events.receive(&mut seen);
    }
    assert!(exit_seen(&seen), "no exit event for {pid}");
    assert!(seen.iter().any(
        |e| matches!(e, ProcEvent::Fork { child_pid, parent_tgid, .. } if *child_pid == pid && *parent_tgid == std::process::id())
    ));
}
