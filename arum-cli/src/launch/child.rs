//! The child's side of the launch: the only code that runs between fork and exec.
//! It uses async-signal-safe calls only and touches no allocator.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::unistd::{ForkResult, Pid};

use super::signals::SignalGuard;
use super::Executable;
use crate::error::{EXIT_ARUM_FAILED, EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND};

/// Forks, into `cgroup` when given and the kernel allows it (the bool says whether it did); the
/// child waits on `start` and then execs `exe`, reporting a failed exec on `exec_err`.
///
/// `parent_ends` are the parent's ends of the two pipes: the child closes its copies at once, or
/// it would hold the start pipe's write end itself and never see EOF if the parent gives up.
pub(super) fn fork_waiting(
    exe: &Executable,
    signals: &SignalGuard,
    cgroup: Option<BorrowedFd<'_>>,
    start: OwnedFd,
    exec_err: OwnedFd,
    parent_ends: [BorrowedFd<'_>; 2],
) -> Result<(Pid, bool), Errno> {
    let (start, exec_err) = (start.as_raw_fd(), exec_err.as_raw_fd());
    let parent_ends = parent_ends.map(|fd| fd.as_raw_fd());
    if let Some(cgroup) = cgroup {
        match fork_into_cgroup(cgroup) {
            Ok(ForkResult::Child) => child_main(exe, signals, start, exec_err, parent_ends),
            Ok(ForkResult::Parent { child }) => return Ok((child, true)),
            // Older kernels (ENOSYS), or a group the kernel will not fork into: plain fork.
            Err(_) => {}
        }
    }
    // SAFETY: arum is single-threaded when it launches (see `spawn`), and the child below only
    // makes async-signal-safe calls (sigaction, read, execv, write, _exit) before exec or exit.
    match unsafe { nix::unistd::fork() }? {
        ForkResult::Child => child_main(exe, signals, start, exec_err, parent_ends),
        ForkResult::Parent { child } => Ok((child, false)),
    }
}

/// clone3(CLONE_INTO_CGROUP) with fork semantics: the child is born in the group.
fn fork_into_cgroup(cgroup: BorrowedFd<'_>) -> Result<ForkResult, Errno> {
    /// From linux/sched.h (Linux 5.7).
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    // SAFETY: clone_args is plain old data; all-zero is "no flags, no stack" (fork semantics).
    let mut args: libc::clone_args = unsafe { std::mem::zeroed() };
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = libc::SIGCHLD as u64;
    args.cgroup = cgroup.as_raw_fd() as u64;
    // SAFETY: as for fork (see `fork_waiting`): no CLONE_VM, so the child runs on a copy of this
    // stack and address space. glibc's fork handlers do not run in the child, which is why the
    // child calls nothing but raw async-signal-safe functions that do not depend on them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &mut args as *mut libc::clone_args,
            std::mem::size_of::<libc::clone_args>(),
        )
    };
    match r {
        -1 => Err(Errno::last()),
        0 => Ok(ForkResult::Child),
        pid => Ok(ForkResult::Parent {
            child: Pid::from_raw(pid as i32),
        }),
    }
}

fn child_main(
    exe: &Executable,
    signals: &SignalGuard,
    start: i32,
    exec_err: i32,
    parent_ends: [i32; 2],
) -> ! {
    for fd in parent_ends {
        // SAFETY: closes this process's copy of a descriptor the parent owns; async-signal-safe.
        unsafe { libc::close(fd) };
    }
    signals.restore_in_child();
    let mut go = [0u8; 1];
    loop {
        // SAFETY: `go` is a valid one-byte buffer; `start` is the child's copy of the pipe's read end.
        let n = unsafe { libc::read(start, go.as_mut_ptr().cast(), 1) };
        match n {
            1 => break,
            -1 if Errno::last() == Errno::EINTR => continue,
            // The parent gave up on the launch (its set-up failed): run nothing.
            // SAFETY: _exit is async-signal-safe and skips the parent's atexit handlers.
            _ => unsafe { libc::_exit(EXIT_ARUM_FAILED) },
        }
    }

    // Tell the parent this process's resident high-water mark just before exec: exec carries it
    // into the program's ru_maxrss, so the parent can tell arum's inherited copy from the
    // program's own peak. Read here rather than by the parent from /proc while the child waited,
    // because the child still touches pages on its way here (and khugepaged may fill a huge
    // page in it meanwhile).
    // SAFETY: getrusage fills a plain-data struct; write sends 8 bytes from a valid buffer.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        let kib = (ru.ru_maxrss.max(0) as u64).to_ne_bytes();
        libc::write(exec_err, kib.as_ptr().cast(), kib.len());
    }

    // Try each PATH candidate as execvp does: skip names that do not exist, remember EACCES, and
    // run a file without a `#!` line (ENOEXEC) through /bin/sh.
    let mut errno = Errno::ENOENT;
    let mut denied = false;
    for (path, script_argv) in exe.candidates.iter().zip(&exe.script_argvs) {
        exec(path.as_ptr(), exe.argv_ptrs.as_ptr(), exe.envp.as_deref());
        errno = Errno::last();
        if errno == Errno::ENOEXEC {
            exec(
                super::SHELL.as_ptr(),
                script_argv.as_ptr(),
                exe.envp.as_deref(),
            );
            errno = Errno::last();
        }
        match errno {
            Errno::EACCES => denied = true,
            Errno::ENOENT | Errno::ENOTDIR | Errno::ESTALE | Errno::ENODEV | Errno::ETIMEDOUT => {}
            _ => break,
        }
    }
    if denied && matches!(errno, Errno::ENOENT | Errno::ENOTDIR) {
        errno = Errno::EACCES;
    }
    let bytes = (errno as i32).to_ne_bytes();
    // SAFETY: writes 4 bytes from a valid buffer to the exec-error pipe, then leaves at once.
    unsafe {
        libc::write(exec_err, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(if errno == Errno::ENOENT {
            EXIT_NOT_FOUND
        } else {
            EXIT_CANNOT_EXECUTE
        })
    }
}

/// execv, or execve with `envp` when the program gets an environment of its own. Returns only
/// when exec failed.
fn exec(
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: Option<&[*const libc::c_char]>,
) {
    match envp {
        // SAFETY: `path`, `argv` and `envp` are NUL-terminated C strings and NULL-terminated
        // arrays built before fork and alive in the Executable; execve only returns on failure.
        Some(envp) => unsafe {
            libc::execve(path, argv, envp.as_ptr());
        },
        // SAFETY: as above, with the process's own environment.
        None => unsafe {
            libc::execv(path, argv);
        },
    }
}

/// What the child said on the exec-error pipe.
pub(super) struct ExecOutcome {
    /// The child's ru_maxrss just before exec, in bytes (0 if it died before saying it).
    pub pre_exec_maxrss_bytes: u64,
    /// None when exec succeeded (the pipe closed on exec), else its errno.
    pub error: Option<Errno>,
}

/// Parent side: eight bytes of the child's high-water mark in KiB, then EOF when exec succeeded
/// or four bytes of errno when it failed.
pub(super) fn read_exec_outcome(fd: BorrowedFd<'_>) -> ExecOutcome {
    let mut buf = [0u8; 12];
    let mut got = 0;
    while got < buf.len() {
        match nix::unistd::read(fd, &mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        }
    }
    let mut kib = [0u8; 8];
    let mut errno = [0u8; 4];
    kib.copy_from_slice(&buf[..8]);
    errno.copy_from_slice(&buf[8..]);
    ExecOutcome {
        pre_exec_maxrss_bytes: if got >= 8 {
            u64::from_ne_bytes(kib).saturating_mul(1024)
        } else {
            0
        },
        error: (got == buf.len()).then(|| Errno::from_raw(i32::from_ne_bytes(errno))),
    }
}
