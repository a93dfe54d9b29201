//! Waiting for the program and collecting its exit status and resource usage.

use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::Signal;
use nix::sys::wait::{waitid, Id, WaitPidFlag};
use nix::unistd::Pid;

use super::signals;
use crate::error::ArumError;
use crate::header::ExitInfo;

/// How the program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal { signal: i32, core_dumped: bool },
}

impl Exit {
    /// arum's own exit status: the program's, or 128+N for signal N (as a shell reports it).
    pub fn status(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal { signal, .. } => 128 + signal,
        }
    }

    pub fn signal_name(self) -> Option<&'static str> {
        match self {
            Exit::Signal { signal, .. } => Signal::try_from(signal).ok().map(|s| s.as_str()),
            Exit::Code(_) => None,
        }
    }

    /// The report's description of this exit.
    pub fn info(self) -> ExitInfo {
        let (code, signal, core_dumped) = match self {
            Exit::Code(c) => (Some(c), None, false),
            Exit::Signal {
                signal,
                core_dumped,
            } => (None, Some(signal), core_dumped),
        };
        ExitInfo {
            status: self.status(),
            code,
            signal,
            signal_name: self.signal_name().map(str::to_string),
            core_dumped,
        }
    }
}

/// The reaped program: its exit, wall time and the kernel's rusage for it and its reaped children.
pub struct Reaped {
    pub exit: Exit,
    pub wall: Duration,
    /// CLOCK_MONOTONIC when the program was released (the origin of the report's times).
    pub released_at: Duration,
    /// When wait4 returned: where arum's post-processing starts.
    pub reaped_at: std::time::Instant,
    pub rusage: libc::rusage,
    /// The child's ru_maxrss just before exec (arum's memory as the child inherited it and
    /// touched it), which the kernel's ru_maxrss of the program includes.
    pub pre_exec_maxrss_bytes: u64,
}

/// Whether the child is still running after `grace` and has exec'd, told by polling its pidfd
/// (readable once the process has exited; nothing is reaped) and then also the `exec_error`
/// pipe: exec closes the child's end (close-on-exec), and so does its exit, so the pipe hangs
/// up either way and the pidfd tells which. Polling consumes nothing: the pipe's contents are
/// read at the reap. Without a pidfd (kernels before 5.2, or 5.3 for a forked child) the answer
/// is "no" at once.
pub(super) fn runs_past(pidfd: Option<&OwnedFd>, grace: Duration, exec_error: &OwnedFd) -> bool {
    let Some(fd) = pidfd else {
        return false;
    };
    let deadline = monotonic() + grace;
    loop {
        let left = deadline.saturating_sub(monotonic());
        // In milliseconds, rounded up: a grace shorter than one still waits.
        let timeout =
            PollTimeout::try_from(left.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX);
        match poll(&mut [PollFd::new(fd.as_fd(), PollFlags::POLLIN)], timeout) {
            Ok(1) => return false,
            Err(Errno::EINTR) => continue,
            _ => break,
        }
    }
    loop {
        // No events asked of the pipe: poll reports its hang-up regardless, not its data.
        let mut fds = [
            PollFd::new(fd.as_fd(), PollFlags::POLLIN),
            PollFd::new(exec_error.as_fd(), PollFlags::empty()),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) if fds[0].any().unwrap_or(false) => return false,
            Ok(_) if fds[1].any().unwrap_or(false) => return true,
            Err(Errno::EINTR) | Ok(_) => continue,
            Err(_) => return false,
        }
    }
}

pub(super) fn reap(pid: Pid, t0: Duration) -> Result<Reaped, ArumError> {
    // Wait for the exit without reaping, so the pid cannot be reused while signals are forwarded.
    loop {
        match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(_) => break,
            Err(Errno::EINTR) => continue,
            Err(source) => {
                return Err(ArumError::Launch {
                    what: "waiting for the program",
                    source,
                })
            }
        }
    }
    signals::forget_child();
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it in full when it returns the pid.
    let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and rusage are valid, writable locals.
        let r = unsafe { libc::wait4(pid.as_raw(), &mut status, 0, &mut rusage) };
        let wall = monotonic().saturating_sub(t0);
        let reaped_at = std::time::Instant::now();
        if r == pid.as_raw() {
            let exit = if libc::WIFSIGNALED(status) {
                Exit::Signal {
                    signal: libc::WTERMSIG(status),
                    core_dumped: libc::WCOREDUMP(status),
                }
            } else {
                Exit::Code(libc::WEXITSTATUS(status))
            };
            return Ok(Reaped {
                exit,
                wall,
                released_at: t0,
                reaped_at,
                rusage,
                // Known from the child's side of the launch, read after this (Running::wait).
                pre_exec_maxrss_bytes: 0,
            });
        }
        match Errno::last() {
            Errno::EINTR => continue,
            source => {
                return Err(ArumError::Launch {
                    what: "reaping the program",
                    source,
                })
            }
        }
    }
}

/// CLOCK_MONOTONIC as a duration since an arbitrary origin.
pub fn monotonic() -> Duration {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always available on Linux");
    Duration::new(ts.tv_sec() as u64, ts.tv_nsec() as u32)
}
