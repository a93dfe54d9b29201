//! `count-floor [-e[=task-clock|page-faults]] -- CMD [ARGS...]`: the least a launcher that
//! counts can cost. It forks, holds the child on a pipe, (with `-e`) opens task-clock and
//! page-faults (or only the one named) on every online CPU bound to the child through arum's own
//! perf layer, with the attributes its perf backend gives them in application scope (disabled,
//! inherited, enabled at exec), releases it, waits, reads and closes the counters, and exits with
//! the child's status. Nothing else: no arguments beyond these, no report.
//! `benchmarks/overhead.sh` runs it without `-e`, with it, and with each event alone; the
//! differences are the kernel's own price of counting these software events on this machine
//! (opening, the static keys patched on open and close, counting in the child, inheritance at
//! exit), which every tool that counts with perf_event_open pays whatever it does in user space.

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};

use arum_core::perf::sys::{self, Attr};
use nix::fcntl::OFlag;
use nix::unistd::{pipe2, read};
use perf_event_open_sys::bindings as perf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Which events: both with `-e`, one with `-e=NAME` (to tell their prices apart).
    let events: Vec<u32> = match args.first().map(String::as_str) {
        Some("-e") => vec![
            perf::PERF_COUNT_SW_TASK_CLOCK,
            perf::PERF_COUNT_SW_PAGE_FAULTS,
        ],
        Some("-e=task-clock") => vec![perf::PERF_COUNT_SW_TASK_CLOCK],
        Some("-e=page-faults") => vec![perf::PERF_COUNT_SW_PAGE_FAULTS],
        Some("--") => Vec::new(),
        _ => usage(),
    };
    let Some(dash) = args.iter().position(|a| a == "--") else {
        usage()
    };
    let argv: Vec<CString> = args[dash + 1..]
        .iter()
        .map(|a| CString::new(a.as_str()).expect("no NUL in arguments"))
        .collect();
    if argv.is_empty() {
        eprintln!("count-floor: no command after --");
        std::process::exit(2);
    }
    let cpus = if events.is_empty() {
        Vec::new()
    } else {
        arum_core::system::cpulist::online().expect("the online CPUs")
    };
    let (child, release) = fork_held(&argv);
    let counters: Vec<OwnedFd> = cpus
        .iter()
        .flat_map(|&cpu| events.iter().map(move |&config| open(config, child, cpu)))
        .collect();
    drop(release); // the child's read returns: it execs
    let status = wait(child);
    for fd in &counters {
        std::hint::black_box(sys::read(fd.as_fd()).ok());
    }
    drop(counters);
    std::process::exit(status);
}

fn usage() -> ! {
    eprintln!("usage: count-floor [-e[=task-clock|page-faults]] -- CMD [ARGS...]");
    std::process::exit(2);
}

/// Forks a child that waits until the returned descriptor is closed, then execs `argv`.
fn fork_held(argv: &[CString]) -> (libc::pid_t, OwnedFd) {
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let (hold, release) = pipe2(OFlag::O_CLOEXEC).expect("pipe2");
    // SAFETY: this program is single-threaded; the child only calls async-signal-safe
    // functions (close, read, execvp, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(release);
        let _ = read(&hold, &mut [0u8]);
        // SAFETY: `ptrs` is a NULL-terminated argv of NUL-terminated strings that `argv` keeps
        // alive; execvp returns only on failure, and _exit then leaves without the parent's
        // exit handlers.
        unsafe {
            libc::execvp(ptrs[0], ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    drop(hold);
    (pid, release)
}

/// One counter as arum's perf backend opens it in application scope.
fn open(config: u32, pid: libc::pid_t, cpu: u32) -> OwnedFd {
    let attr = Attr {
        type_: perf::PERF_TYPE_SOFTWARE,
        config: u64::from(config),
        disabled: true,
        inherit: true,
        enable_on_exec: true,
        ..Attr::default()
    };
    sys::open(&attr, pid, cpu as i32, None).unwrap_or_else(|e| panic!("perf_event_open: {e}"))
}

/// Waits for the child; its exit status, or 128 + the signal that ended it.
fn wait(pid: libc::pid_t) -> i32 {
    // Not nix's waitpid: its status has no room for a real-time signal, which can end a child.
    let mut status = 0;
    // SAFETY: waitpid writes one int through the pointer, which points to `status`.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}
