//! The child's side of the launch: the only code that runs between fork and exec.
//!
//! The child is a clone of arum that shares its address space (CLONE_VM, as posix_spawn makes
//! its child, but without suspending arum: arum arms its counters while the child waits).
//! Copying arum's page tables for a child that only execs, and then taking a copy-on-write fault
//! for every page arum writes while the program runs, cost 0.25-0.4 ms per launch on the Intel
//! VM (`benchmarks/overhead.sh`), as much as the rest of arum's own work. A child in arum's memory
//! must not write to memory arum uses: it runs on a stack of its own ([`ChildStack`]), reads
//! only what arum prepared and keeps unchanged until the child is reaped (the [`Executable`], the
//! saved signal dispositions), allocates nothing, and makes no call that could write arum's
//! `errno` (see `raw`): each of its calls either cannot fail or returns its error directly.
//! With a cgroup to be born into, the child is forked instead (clone3 takes no function to run
//! on a new stack), as it is on architectures without a raw execve here.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;
use nix::sys::signal::{SigAction, SigSet, SigmaskHow, Signal};
use nix::unistd::{ForkResult, Pid};

use super::capabilities;
use super::executable::Executable;
use super::raw;
use super::signals::{self, SignalGuard};
use super::stack::ChildStack;
use crate::error::{EXIT_ARUM_FAILED, EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND};

/// A child waiting to exec: its pid, whether it was born in the cgroup, the stack it runs on
/// when it shares arum's memory, and its pidfd where the kernel has pidfds.
pub(super) struct Launched {
    pub pid: Pid,
    pub in_cgroup: bool,
    pub stack: Option<ChildStack>,
    pub pidfd: Option<OwnedFd>,
}

/// What the child reads, by value or by pointers into memory that stays unchanged until the
/// child has been reaped. Copied onto the child's own stack before it starts.
#[derive(Clone, Copy)]
struct ChildArgs {
    exe: *const Executable,
    /// The heap buffer of the `SignalGuard`'s list, which does not move with the guard.
    dispositions: *const [(Signal, SigAction)],
    /// arum's signal mask before every signal was blocked for the launch.
    mask: libc::sigset_t,
    /// The environment the program gets: the Executable's, or arum's own.
    envp: *const *const libc::c_char,
    start: i32,
    exec_err: i32,
    parent_ends: [i32; 2],
    /// The capability sets the program starts from (see `capabilities`).
    capabilities: Option<rustix::thread::CapabilitySets>,
}

/// Launches a child that waits on `start` and then execs `exe`, reporting a failed exec on
/// `exec_err`; into `cgroup` when given and the kernel allows it.
///
/// `parent_ends` are the parent's ends of the two pipes: the child closes its copies at once, or
/// it would hold the start pipe's write end itself and never see EOF if the parent gives up.
/// Every signal is blocked while the child is made, so that none runs arum's handlers in the
/// child; the child unblocks them once it has arum's original dispositions back.
pub(super) fn launch_waiting(
    exe: &Executable,
    signals: &SignalGuard,
    cgroup: Option<BorrowedFd<'_>>,
    start: OwnedFd,
    exec_err: OwnedFd,
    parent_ends: [BorrowedFd<'_>; 2],
) -> Result<Launched, Errno> {
    let mut mask = SigSet::empty();
    nix::sys::signal::pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut mask),
    )?;
    let args = ChildArgs {
        exe,
        dispositions: signals.saved(),
        mask: *mask.as_ref(),
        envp: match &exe.envp {
            Some(envp) => envp.as_ptr(),
            // SAFETY: reads the pointer libc keeps; arum changes no environment variable while
            // it runs a program (the Executable carries the program's own).
            None => unsafe { libc::environ }.cast_const().cast(),
        },
        start: start.as_raw_fd(),
        exec_err: exec_err.as_raw_fd(),
        parent_ends: parent_ends.map(|fd| fd.as_raw_fd()),
        capabilities: capabilities::for_program(),
    };
    let launched = launch(args, cgroup);
    let _ = nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&mask), None);
    launched
}

fn launch(args: ChildArgs, cgroup: Option<BorrowedFd<'_>>) -> Result<Launched, Errno> {
    if let Some(cgroup) = cgroup {
        let mut pidfd = -1;
        match fork_into_cgroup(cgroup, &mut pidfd) {
            Ok(ForkResult::Child) => child_main(&args),
            Ok(ForkResult::Parent { child }) => {
                return Ok(Launched {
                    pid: child,
                    in_cgroup: true,
                    stack: None,
                    pidfd: owned(pidfd),
                })
            }
            // Older kernels (ENOSYS), or a group the kernel will not fork into: as without one.
            Err(_) => {}
        }
    }
    if raw::HAS_RAW_EXECVE && !raw::on_valgrind() {
        match clone_sharing_memory(args) {
            Ok(launched) => return Ok(launched),
            // An emulator that only knows clones as threads or forks refuses it: fork then.
            Err(Errno::EINVAL | Errno::ENOSYS) => {}
            Err(e) => return Err(e),
        }
    }
    // SAFETY: arum is single-threaded when it launches (see `spawn`), and the child below only
    // makes async-signal-safe calls before exec or exit.
    match unsafe { nix::unistd::fork() }? {
        ForkResult::Child => child_main(&args),
        ForkResult::Parent { child } => Ok(Launched {
            pid: child,
            in_cgroup: false,
            stack: None,
            // A fork hands back no pidfd: one opened here, before the program is released,
            // as the clones' are made before it.
            pidfd: rustix::process::Pid::from_raw(child.as_raw()).and_then(|pid| {
                rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
            }),
        }),
    }
}

/// The pidfd a clone with CLONE_PIDFD wrote, if it wrote one: kernels before 5.2 ignore the flag
/// and leave the -1 in place.
fn owned(pidfd: libc::c_int) -> Option<OwnedFd> {
    // SAFETY: a non-negative value there is the descriptor the kernel just installed in this
    // process for the child, owned by no one else.
    (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) })
}

/// clone(CLONE_VM): the child runs `entry` on a stack of its own in arum's memory.
///
/// CLONE_PIDFD hands back the child's pidfd with the clone, which the launch's grace period
/// polls (`reap::runs_past`), instead of a pidfd_open of its own. The kernel installs it in
/// arum's descriptor table after copying that table for the child, and close-on-exec: the child
/// and the program never hold it.
fn clone_sharing_memory(args: ChildArgs) -> Result<Launched, Errno> {
    let mut stack = ChildStack::new()?;
    let (args, top) = stack.place(args);
    let mut pidfd: libc::c_int = -1;
    // SAFETY: the child starts in `entry` on its own stack, with a pointer to its arguments on
    // that stack; it shares arum's memory and keeps to what the module's header allows. No
    // CLONE_THREAD: it is a process of its own, reaped by wait like a forked one; SIGCHLD tells
    // of its end. The kernel writes the pidfd into the local `pidfd` (the parent_tid argument)
    // before clone returns.
    let pid = unsafe {
        libc::clone(
            entry,
            top,
            libc::CLONE_VM | libc::CLONE_PIDFD | libc::SIGCHLD,
            args.cast_mut().cast(),
            &mut pidfd as *mut libc::c_int,
        )
    };
    if pid == -1 {
        let e = Errno::last();
        stack.child_gone(); // there is none
        return Err(e);
    }
    Ok(Launched {
        pid: Pid::from_raw(pid),
        in_cgroup: false,
        stack: Some(stack),
        pidfd: owned(pidfd),
    })
}

/// Where the child sharing arum's memory starts.
extern "C" fn entry(args: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `args` points at the ChildArgs placed on this child's stack before clone.
    let args = unsafe { *args.cast::<ChildArgs>() };
    child_main(&args)
}

/// clone3(CLONE_INTO_CGROUP) with fork semantics: the child is born in the group. The parent
/// gets the child's pidfd in `pidfd` (CLONE_PIDFD, as for the clone in arum's memory).
fn fork_into_cgroup(cgroup: BorrowedFd<'_>, pidfd: &mut libc::c_int) -> Result<ForkResult, Errno> {
    /// From linux/sched.h (Linux 5.7).
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    // SAFETY: clone_args is plain old data; all-zero is "no flags, no stack" (fork semantics).
    let mut args: libc::clone_args = unsafe { std::mem::zeroed() };
    args.flags = CLONE_INTO_CGROUP | libc::CLONE_PIDFD as u64;
    args.pidfd = pidfd as *mut libc::c_int as u64;
    args.exit_signal = libc::SIGCHLD as u64;
    args.cgroup = cgroup.as_raw_fd() as u64;
    // SAFETY: as for fork (see `launch`): no CLONE_VM, so the child runs on a copy of this
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

fn child_main(args: &ChildArgs) -> ! {
    for fd in args.parent_ends {
        // SAFETY: closes this process's copy of a descriptor the parent owns (the descriptor
        // table is the child's own: no CLONE_FILES); rustix reports no error through errno.
        unsafe { rustix::io::close(fd) };
    }
    // SAFETY: the dispositions and the Executable stay unchanged until the child is reaped
    // (see `ChildArgs`).
    let (dispositions, exe) = unsafe { (&*args.dispositions, &*args.exe) };
    signals::restore_in_child(dispositions);
    // SAFETY: restores the mask arum had before the launch; pthread_sigmask returns its error
    // instead of setting errno, and cannot fail with SIG_SETMASK and a valid set.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &args.mask, std::ptr::null_mut()) };
    // SAFETY: the descriptors are the child's own copies, open until it execs or exits.
    let (start, exec_err) = unsafe {
        (
            BorrowedFd::borrow_raw(args.start),
            BorrowedFd::borrow_raw(args.exec_err),
        )
    };
    wait_for_start(start);
    if let Err(e) = capabilities::apply_in_child(args.capabilities) {
        // Told to the parent as an exec error is (after the 8 bytes of the high-water mark,
        // none here; see `read_exec_outcome`): the program is not run.
        let _ = rustix::io::write(exec_err, &[0u8; 8]);
        let _ = rustix::io::write(exec_err, &e.raw_os_error().to_ne_bytes());
        // SAFETY: leaves at once, without the parent's atexit handlers.
        unsafe { libc::_exit(EXIT_CANNOT_EXECUTE) }
    }
    send_pre_exec_maxrss(exec_err);
    let errno = exec_candidates(exe, args.envp);
    let _ = rustix::io::write(exec_err, &(errno as i32).to_ne_bytes());
    // SAFETY: leaves at once, without the parent's atexit handlers.
    unsafe {
        libc::_exit(if errno == Errno::ENOENT {
            EXIT_NOT_FOUND
        } else {
            EXIT_CANNOT_EXECUTE
        })
    }
}

/// Waits for the parent's go on `start`. This and the functions below run in the child, under
/// the rules of the module's header: no allocation, no lock, no call that writes `errno`.
fn wait_for_start(start: BorrowedFd<'_>) {
    let mut go = [0u8; 1];
    loop {
        match rustix::io::read(start, &mut go) {
            Ok(1) => return,
            Err(rustix::io::Errno::INTR) => continue,
            // The parent gave up on the launch (its set-up failed): run nothing.
            // SAFETY: _exit is async-signal-safe and skips the parent's atexit handlers.
            _ => unsafe { libc::_exit(EXIT_ARUM_FAILED) },
        }
    }
}

/// Tells the parent this process's resident high-water mark just before exec: exec carries it
/// into the program's ru_maxrss, so the parent can tell arum's inherited copy from the
/// program's own peak. Read here rather than by the parent from /proc while the child waited,
/// because the child still touches pages on its way here (and khugepaged may fill a huge
/// page in it meanwhile).
fn send_pre_exec_maxrss(exec_err: BorrowedFd<'_>) {
    // SAFETY: rusage is plain old data (integers and timevals); all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct on this stack through a valid pointer; with
    // RUSAGE_SELF it cannot fail, so it leaves errno (arum's own, under CLONE_VM) alone.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let _ = rustix::io::write(exec_err, &(ru.ru_maxrss.max(0) as u64).to_ne_bytes());
}

/// Tries each PATH candidate as execvp does: skips names that do not exist, remembers EACCES,
/// and runs a file without a `#!` line (ENOEXEC) through /bin/sh. Returns only when every exec
/// failed, with the error to report.
fn exec_candidates(exe: &Executable, envp: *const *const libc::c_char) -> Errno {
    let mut errno = Errno::ENOENT;
    let mut denied = false;
    for (path, script_argv) in exe.candidates.iter().zip(&exe.script_argvs) {
        // SAFETY: NUL-terminated strings and NULL-terminated arrays built before the launch and
        // alive in the Executable (the environment: see `ChildArgs`).
        errno = unsafe { raw::execve(path.as_ptr(), exe.argv_ptrs.as_ptr(), envp) };
        if errno == Errno::ENOEXEC {
            // SAFETY: SHELL is a NUL-terminated constant; `script_argv` is a NULL-terminated array
            // built with the Executable and alive in it, like `envp` (see `ChildArgs`).
            errno = unsafe {
                raw::execve(
                    super::executable::SHELL.as_ptr(),
                    script_argv.as_ptr(),
                    envp,
                )
            };
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
    errno
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
