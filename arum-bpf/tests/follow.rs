//! The system-call programs on a real child: held before its exec, followed, released. Its calls
//! are counted from the exec on (the exec itself included), and nothing of any other process.
//! Loading needs CAP_BPF and CAP_PERFMON; without them the test checks that the refusal says so.

use std::ffi::CString;
use std::os::fd::AsFd;

use arum_bpf::functions::{FunctionCounter, Site};
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
        Err(why) => return not_here(&why),
    };
    let child = run_held(&mut |pid| counter.follow(pid).expect("following the child"));
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

/// Where arum may load BPF, a program that does not load is a failure; elsewhere the refusal
/// must say what is missing.
fn not_here(why: &arum_bpf::Unavailable) {
    let has = |c| caps::has_cap(None, caps::CapSet::Effective, c).unwrap_or(false);
    let allowed = has(caps::Capability::CAP_SYS_ADMIN)
        || (has(caps::Capability::CAP_BPF) && has(caps::Capability::CAP_PERFMON));
    assert!(!allowed, "BPF is allowed here, yet: {why}");
    eprintln!("BPF is not allowed here: {why}");
    assert!(why.0.contains("CAP_BPF"), "{why}");
}

/// Forks a child held on a pipe, passes its pid to `follow`, releases it to exec /bin/true and
/// waits for it.
fn run_held(follow: &mut dyn FnMut(u32)) -> Pid {
    run_held_program(&["/bin/true"], follow)
}

/// The same with `argv`.
fn run_held_program(argv: &[&str], follow: &mut dyn FnMut(u32)) -> Pid {
    let (start_r, start_w) = pipe().expect("a pipe");
    let argv: Vec<CString> = argv.iter().map(|a| CString::new(*a).unwrap()).collect();
    let path = argv[0].clone();
    // SAFETY: the child only reads a pipe and execs (both async-signal-safe), then exits.
    let child = match unsafe { fork() }.expect("fork") {
        ForkResult::Child => {
            let mut b = [0u8; 1];
            let _ = read(&start_r, &mut b);
            let _ = nix::unistd::execv(&path, &argv);
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
        Err(why) => return not_here(&why),
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

/// `nested N`: N calls of outer, each calling inner three times; both short loops.
const NESTED_C: &str = r#"
#include <stdlib.h>
__attribute__((noinline)) int inner(int x) {
    volatile int s = 0;
    for (int i = 0; i < 2000; i++) s += i ^ x;
    return s;
}
__attribute__((noinline)) int outer(int x) {
    int s = 0;
    for (int i = 0; i < 3; i++) s += inner(x + i);
    return s;
}
int main(int argc, char **argv) {
    int n = atoi(argv[1]), s = 0;
    for (int i = 0; i < n; i++) s += outer(i);
    return s == 12345;
}
"#;

#[test]
fn nested_functions_are_paired_in_the_kernel_with_their_own_times() {
    let dir = tempfile::tempdir().unwrap();
    let (src, exe) = (dir.path().join("nested.c"), dir.path().join("nested"));
    std::fs::write(&src, NESTED_C).unwrap();
    let built = std::process::Command::new("cc")
        .args(["-O1", "-g", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!("no C compiler here (scripts/deps.sh installs one): not checked");
        return;
    }
    let image = arum_symbols::Image::read(&exe).expect("the helper's symbols");
    let site = |name: &str| Site {
        path: exe.clone(),
        offset: arum_symbols::select(&image, name).expect("the function")[0].offset,
    };
    let mut counter = match FunctionCounter::start(&[site("outer"), site("inner")]) {
        Ok(c) => c,
        Err(why) => return not_here(&why),
    };
    const N: u64 = 500;
    let exe_s = exe.to_str().unwrap();
    let child = run_held_program(&[exe_s, &N.to_string()], &mut |pid| {
        counter.follow(pid).expect("following the child")
    });
    counter.stop();
    let t = counter.totals(2).expect("the maps are read");
    let (outer, inner) = (&t.functions[0], &t.functions[1]);
    assert_eq!((outer.calls, outer.timed), (N, N), "{outer:?}");
    assert_eq!((inner.calls, inner.timed), (3 * N, 3 * N), "{inner:?}");
    assert_eq!(outer.unwound + inner.unwound + t.unrecorded, 0, "{t:?}");
    // inner has no probed children: its own time is all of it. outer's own time is its time
    // less that of the inner calls nested in it, which are all of inner's calls.
    assert_eq!(inner.exclusive_ns, inner.inclusive_ns);
    assert_eq!(outer.exclusive_ns, outer.inclusive_ns - inner.inclusive_ns);
    assert!(outer.inclusive_max_ns >= inner.inclusive_max_ns);
    let binned: u64 = outer.inclusive_hist.iter().map(|b| b.1).sum();
    assert_eq!(binned, N);
    // Every call has an exclusive bin; a leaf's are its inclusive ones.
    let binned: u64 = outer.exclusive_hist.iter().map(|b| b.1).sum();
    assert_eq!(binned, N);
    assert_eq!(inner.exclusive_hist, inner.inclusive_hist);
    // One thread, the child's.
    let tid = child.as_raw() as u32;
    assert_eq!(t.threads.len(), 2, "{:?}", t.threads);
    assert_eq!(t.threads[&(1, tid)].calls, 3 * N);
    assert_eq!(t.threads[&(1, tid)].pid, tid);
}
