//! The system-call programs on a real child: held before its exec, followed, released. Its calls
//! are counted from the exec on (the exec itself included), and nothing of any other process.
//! Loading needs CAP_BPF and CAP_PERFMON; without them the test checks that the refusal says so.

use std::ffi::CString;
use std::os::fd::AsFd;

use arum_bpf::runtime::RuntimeCounter;
use arum_bpf::syscalls::{Config, SyscallCounter};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;
use nix::unistd::{fork, pipe, read, write, ForkResult};

/// x86-64's numbers (the programs count numbers; names are arum-core's business).
const EXECVE: u32 = 59;
const EXIT_GROUP: u32 = 231;
const OPENAT: u32 = 257;

#[test]
fn a_held_child_is_counted_from_its_exec_and_nothing_else_is() {
    let config = Config {
        wanted: None,
        no_return: vec![60, EXIT_GROUP],
        ignored: None,
    };
    let mut counter = match SyscallCounter::start(&config) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("the BPF programs do not load here: {why}");
            let privileged =
                caps::has_cap(None, caps::CapSet::Effective, caps::Capability::CAP_BPF)
                    .unwrap_or(false);
            assert!(!privileged || !why.0.is_empty());
            return;
        }
    };
    let (start_r, start_w) = pipe().expect("a pipe");
    let path = CString::new("/bin/true").unwrap();
    // SAFETY: the child only reads a pipe and execs (both async-signal-safe), then exits.
    let child = match unsafe { fork() }.expect("fork") {
        ForkResult::Child => {
            let mut b = [0u8; 1];
            let _ = read(&start_r, &mut b);
            let _ = nix::unistd::execv(&path, &[&path]);
            // SAFETY: _exit ends the child without running the parent's handlers.
            unsafe { libc::_exit(127) }
        }
        ForkResult::Parent { child } => child,
    };
    counter
        .follow(child.as_raw() as u32)
        .expect("following the child");
    write(start_w.as_fd(), b"x").expect("releasing the child");
    waitpid(child, None).expect("the child ends");
    counter.stop();
    let totals = counter.totals().expect("the maps are read");
    let tgids: std::collections::BTreeSet<u32> = totals.calls.keys().map(|k| k.0).collect();
    assert_eq!(
        tgids.into_iter().collect::<Vec<_>>(),
        vec![child.as_raw() as u32],
        "{totals:?}"
    );
    let calls = |nr| {
        totals
            .calls
            .get(&(child.as_raw() as u32, nr))
            .map_or(0, |c| c.calls)
    };
    assert_eq!(calls(EXECVE), 1, "{totals:?}");
    assert_eq!(calls(EXIT_GROUP), 1, "{totals:?}");
    // The dynamic loader opens the C library: at least one openat, each with a duration binned.
    assert!(calls(OPENAT) >= 1, "{totals:?}");
    let binned: u64 = totals.histograms[&OPENAT].iter().map(|b| b.1).sum();
    assert_eq!(binned, calls(OPENAT));
    assert_eq!(totals.drops.uncounted, 0);
    assert!(totals.unfinished.is_empty(), "{totals:?}");
}

/// Forks a child held on a pipe, passes its pid to `follow`, releases it to exec /bin/true and
/// waits for it.
fn run_held(follow: &mut dyn FnMut(u32)) -> Pid {
    let (start_r, start_w) = pipe().expect("a pipe");
    let path = CString::new("/bin/true").unwrap();
    // SAFETY: the child only reads a pipe and execs (both async-signal-safe), then exits.
    let child = match unsafe { fork() }.expect("fork") {
        ForkResult::Child => {
            let mut b = [0u8; 1];
            let _ = read(&start_r, &mut b);
            let _ = nix::unistd::execv(&path, &[&path]);
            // SAFETY: _exit ends the child without running the parent's handlers.
            unsafe { libc::_exit(127) }
        }
        ForkResult::Parent { child } => child,
    };
    follow(child.as_raw() as u32);
    write(start_w.as_fd(), b"x").expect("releasing the child");
    waitpid(child, None).expect("the child ends");
    child
}

#[test]
fn a_short_process_gets_its_whole_cpu_time_from_the_switches() {
    let mut counter = match RuntimeCounter::start() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("the BPF program does not load here: {why}");
            return;
        }
    };
    let child = run_held(&mut |pid| counter.follow(pid).expect("following the child"));
    counter.stop();
    let (runtimes, unrecorded) = counter.runtimes().expect("the map is read");
    assert_eq!(unrecorded, 0);
    let tids: Vec<u32> = runtimes.keys().copied().collect();
    assert_eq!(tids, vec![child.as_raw() as u32], "{runtimes:?}");
    let r = runtimes[&(child.as_raw() as u32)];
    assert_eq!(r.tgid, child.as_raw() as u32);
    // An exec of /bin/true takes tens of microseconds at the least, and less than the run.
    assert!(r.ns > 10_000, "{r:?}");
}
