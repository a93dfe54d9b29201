//! The spine of a run: launch a child, hold it on a start pipe while the facilities arm
//! themselves, release it into exec, forward signals, and reap it with its resource usage.
//!
//! ```text
//!  parent                               child (in arum's memory, on a stack of its own; see child)
//!  spawn():  pipe(start), pipe(err),
//!            block signals, clone(CLONE_VM) ──► restore dispositions, then the signal mask
//!            unblock signals                   read(start)  ... waits ...
//!            (facilities arm counters,
//!             cgroups, samplers here)
//!  release(): t0 = CLOCK_MONOTONIC
//!            write(start) ──────────────────► write(err, own ru_maxrss)
//!                                              execve()  ──ok──► err pipe closes (CLOEXEC)
//!                                                        └fail─► write(errno), _exit(126/127)
//!  still_running_after(): poll(pidfd) for a grace period (watchers start only if it runs on);
//!            the pidfd comes with the clone (CLONE_PIDFD), or from pidfd_open after a fork
//!  wait():   waitid(WNOWAIT), forget pid, wait4() = status + rusage, t1 = CLOCK_MONOTONIC;
//!            the child's stack is released; read(err): maxrss, then EOF = it ran, or errno
//! ```

mod capabilities;
mod child;
mod executable;
mod raw;
mod reap;
mod signals;
mod stack;
pub mod stdio;

use std::marker::PhantomData;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use nix::fcntl::OFlag;
use nix::unistd::{pipe2, Pid};

use crate::error::ArumError;
pub use executable::Executable;
pub use reap::{monotonic, Exit, Reaped};
pub use signals::SignalGuard;
use stack::ChildStack;

/// A child waiting on the start pipe. Dropping it without `release` ends the child. It may run
/// in arum's own memory, reading the Executable until it execs: hence the borrow.
pub struct Pending<'exe> {
    pid: Pid,
    in_cgroup: bool,
    stack: Option<ChildStack>,
    pidfd: Option<OwnedFd>,
    _exe: PhantomData<&'exe Executable>,
    start: Option<OwnedFd>,
    exec_error: Option<OwnedFd>,
    display: String,
    signals: SignalGuard,
}

impl<'exe> Pending<'exe> {
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Whether the child was born in the cgroup given to [`spawn`].
    pub fn in_cgroup(&self) -> bool {
        self.in_cgroup
    }

    /// Lets the child exec. Returns at once: whether exec succeeded is read after the reap (see
    /// [`Running::wait`]), so the launch costs no wake-up of arum beyond the program's end.
    pub fn release(mut self) -> Result<Running<'exe>, ArumError> {
        let start = self.start.take().expect("released once");
        let t0 = monotonic();
        let sent = nix::unistd::write(&start, &[1u8]);
        drop(start);
        if let Err(e) = sent {
            return Err(ArumError::Launch {
                what: "releasing the child",
                source: e,
            });
        }
        let pid = std::mem::replace(&mut self.pid, Pid::from_raw(0));
        signals::track_child(pid);
        Ok(Running {
            pid,
            t0,
            stack: self.stack.take(),
            pidfd: self.pidfd.take(),
            _exe: PhantomData,
            exec_error: self.exec_error.take().expect("released once"),
            display: std::mem::take(&mut self.display),
            signals: std::mem::replace(&mut self.signals, SignalGuard::inert()),
        })
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if self.pid.as_raw() > 0 {
            // Closing the start pipe makes the waiting child exit without running anything.
            self.start.take();
            if nix::sys::wait::waitpid(self.pid, None).is_ok() {
                if let Some(stack) = &mut self.stack {
                    stack.child_gone();
                }
            }
        }
    }
}

/// The program is running.
pub struct Running<'exe> {
    pid: Pid,
    t0: Duration,
    /// The stack of a child in arum's memory, kept until the reap shows the child gone.
    stack: Option<ChildStack>,
    /// The child's pidfd, where the kernel has pidfds.
    pidfd: Option<OwnedFd>,
    _exe: PhantomData<&'exe Executable>,
    /// The child's side of the launch: its high-water mark before exec, and exec's errno if it
    /// failed; complete once the child has exec'd or exited.
    exec_error: OwnedFd,
    display: String,
    signals: SignalGuard,
}

impl Running<'_> {
    /// Whether the program is still running after `grace` (it is not reaped either way), and has
    /// exec'd: on a busy machine the child may not have reached exec yet, and until it does,
    /// /proc shows arum's own memory under its pid. Watchers of a running program start only
    /// then: a program that ends sooner gives them nothing to watch, and arum's overhead for it
    /// stays at the launch itself.
    pub fn still_running_after(&self, grace: Duration) -> bool {
        reap::runs_past(self.pidfd.as_ref(), grace, &self.exec_error)
    }

    /// Waits for the program to end, then reaps it with its resource usage; the exec error
    /// (126/127 as the shell gives them) when the program never started.
    pub fn wait(mut self) -> Result<Reaped, ArumError> {
        let mut reaped = reap::reap(self.pid, self.t0)?;
        if let Some(mut stack) = self.stack.take() {
            stack.child_gone();
        }
        drop(std::mem::replace(&mut self.signals, SignalGuard::inert()));
        // The child is gone: its end of the pipe is closed (on exec, or at its exit), so this
        // read does not wait; non-blocking all the same, should another process of arum's have
        // inherited that end.
        let _ = nix::fcntl::fcntl(
            &self.exec_error,
            nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK),
        );
        let outcome = child::read_exec_outcome(self.exec_error.as_fd());
        if let Some(errno) = outcome.error {
            return Err(ArumError::Exec {
                program: std::mem::take(&mut self.display),
                source: errno,
            });
        }
        reaped.pre_exec_maxrss_bytes = outcome.pre_exec_maxrss_bytes;
        Ok(reaped)
    }
}

impl Drop for Running<'_> {
    /// Left without its reap (an error, or a panic that unwinds in a test build), a child in
    /// arum's memory may still be reading the Executable whose borrow ends here: wait until it
    /// has exec'd or exited, which closes its end of the exec-error pipe. It no longer touches
    /// arum's memory then, and its stack can go.
    fn drop(&mut self) {
        if let Some(stack) = &mut self.stack {
            let mut buf = [0u8; 16];
            loop {
                match nix::unistd::read(&self.exec_error, &mut buf) {
                    Ok(0) => break stack.child_gone(),
                    Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                    // Unknown: the stack stays mapped (see ChildStack).
                    Err(_) => break,
                }
            }
        }
    }
}

/// Launches the child that will run `exe`, holding it until [`Pending::release`].
///
/// Must be called while arum is single-threaded: the child only runs async-signal-safe code, but
/// keeping arum single-threaded at launch also keeps the heap consistent for a forked child.
/// With `cgroup`, the child is born in that cgroup v2 group where the kernel allows it
/// ([`Pending::in_cgroup`] says whether it was).
pub fn spawn<'exe>(
    exe: &'exe Executable,
    cgroup: Option<BorrowedFd<'_>>,
) -> Result<Pending<'exe>, ArumError> {
    let launch_err = |what| move |source| ArumError::Launch { what, source };
    let (start_r, start_w) =
        pipe2(OFlag::O_CLOEXEC).map_err(launch_err("creating the start pipe"))?;
    let (err_r, err_w) =
        pipe2(OFlag::O_CLOEXEC).map_err(launch_err("creating the exec-error pipe"))?;
    let signals = SignalGuard::install();
    let launched = child::launch_waiting(
        exe,
        &signals,
        cgroup,
        start_r,
        err_w,
        [start_w.as_fd(), err_r.as_fd()],
    )
    .map_err(launch_err("fork"))?;
    Ok(Pending {
        pid: launched.pid,
        in_cgroup: launched.in_cgroup,
        stack: launched.stack,
        pidfd: launched.pidfd,
        _exe: PhantomData,
        start: Some(start_w),
        exec_error: Some(err_r),
        display: exe.display.clone(),
        signals,
    })
}
