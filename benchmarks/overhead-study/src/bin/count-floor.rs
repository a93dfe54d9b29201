//! `count-floor [-e] -- CMD [ARGS...]`: the least a launcher that counts can cost. It forks,
//! holds the child on a pipe, (with `-e`) opens task-clock and page-faults on every online CPU
//! bound to the child exactly as arum's perf backend does (disabled, inherited, enabled at exec,
//! time enabled and running read with the value), releases it, waits, reads and closes the
//! counters, and exits with the child's status. Nothing else: no arguments beyond these, no
//! report. `benchmarks/overhead.sh` runs it with and without `-e`; the difference is the kernel's
//! own price of counting two software events on this machine (opening, the static keys patched
//! on open and close, counting in the child, inheritance at exit), which every tool that counts
//! with perf_event_open pays whatever it does in user space.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};

use perf_event_open_sys::bindings as perf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let count = args.first().is_some_and(|a| a == "-e");
    let Some(dash) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: count-floor [-e] -- CMD [ARGS...]");
        std::process::exit(2);
    };
    let argv: Vec<CString> = args[dash + 1..]
        .iter()
        .map(|a| CString::new(a.as_str()).expect("no NUL in arguments"))
        .collect();
    if argv.is_empty() {
        eprintln!("count-floor: no command after --");
        std::process::exit(2);
    }
    let cpus = if count { online_cpus() } else { Vec::new() };
    let (child, release) = fork_held(&argv);
    let counters: Vec<OwnedFd> = cpus
        .iter()
        .flat_map(|&cpu| {
            [
                perf::PERF_COUNT_SW_TASK_CLOCK,
                perf::PERF_COUNT_SW_PAGE_FAULTS,
            ]
            .map(|config| open(config, child, cpu))
        })
        .collect();
    drop(release); // the child's read returns: it execs
    let status = wait(child);
    for fd in &counters {
        let mut buf = [0u64; 3];
        // SAFETY: buf is 24 writable bytes, the size of one reading with this read_format.
        unsafe {
            libc::read(
                std::os::fd::AsRawFd::as_raw_fd(fd),
                buf.as_mut_ptr().cast(),
                24,
            )
        };
        std::hint::black_box(buf);
    }
    drop(counters);
    std::process::exit(status);
}

/// The online CPUs, from the kernel's list ("0-3,6").
fn online_cpus() -> Vec<i32> {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/online").expect("online CPUs");
    list.trim()
        .split(',')
        .flat_map(|range| {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            a.parse().expect("a CPU number")..=b.parse().expect("a CPU number")
        })
        .collect()
}

/// Forks a child that waits until the returned descriptor is closed, then execs `argv`.
fn fork_held(argv: &[CString]) -> (libc::pid_t, OwnedFd) {
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: this program is single-threaded; the child only calls async-signal-safe
    // functions (close, read, execvp, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut byte = 0u8;
        // SAFETY: see above; byte is one writable byte, ptrs a NULL-terminated argv.
        unsafe {
            libc::close(fds[1]);
            libc::read(fds[0], (&mut byte as *mut u8).cast(), 1);
            libc::execvp(ptrs[0], ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    // SAFETY: both descriptors were just created and are owned here; the read end closes now.
    unsafe { libc::close(fds[0]) };
    (pid, unsafe { OwnedFd::from_raw_fd(fds[1]) })
}

/// One counter as arum's perf backend opens it in application scope.
fn open(config: u32, pid: libc::pid_t, cpu: i32) -> OwnedFd {
    let mut attr = perf::perf_event_attr {
        type_: perf::PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<perf::perf_event_attr>() as u32,
        config: u64::from(config),
        read_format: u64::from(
            perf::PERF_FORMAT_TOTAL_TIME_ENABLED | perf::PERF_FORMAT_TOTAL_TIME_RUNNING,
        ),
        ..Default::default()
    };
    attr.set_disabled(1);
    attr.set_inherit(1);
    attr.set_enable_on_exec(1);
    attr.set_exclude_hv(1);
    // SAFETY: attr is a fully initialised perf_event_attr whose size field says its size.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut attr,
            pid,
            cpu,
            -1,
            perf::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    assert!(
        fd >= 0,
        "perf_event_open: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: fd is a new descriptor owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Waits for the child; its exit status, or 128 + the signal that ended it.
fn wait(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: status is a valid int to write; pid is our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}
