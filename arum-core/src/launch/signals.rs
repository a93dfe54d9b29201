//! Signals while the program runs: SIGINT and SIGQUIT are ignored by arum (the terminal delivers
//! them to the whole foreground process group, so the program gets them itself); SIGTERM, SIGHUP,
//! SIGUSR1 and SIGUSR2 sent to arum are forwarded to the program. SIGPIPE is ignored by arum from
//! then on, so that writing the report into a closed pipe cannot cost the program's exit status.
//! The child gets every disposition back as arum was given it before it execs.

use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;

const IGNORED: [Signal; 3] = [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGPIPE];
const FORWARDED: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// The running program's pid, or 0 when there is none to forward to.
static CHILD: AtomicI32 = AtomicI32::new(0);
/// A forwarded signal that arrived before the program was released (0 = none).
static EARLY: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // kill(2) is async-signal-safe; pid > 0 never addresses a process group. The handler is
        // installed for FORWARDED only, every one of which nix names.
        if let Ok(sig) = Signal::try_from(sig) {
            let _ = signal::kill(Pid::from_raw(pid), sig);
        }
    } else {
        EARLY.store(sig, Ordering::SeqCst);
    }
}

/// arum's dispositions while a program runs; dropping it restores the previous ones.
pub struct SignalGuard {
    saved: Vec<(Signal, SigAction)>,
}

impl SignalGuard {
    pub fn install() -> Self {
        let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
        let fwd = SigAction::new(
            SigHandler::Handler(forward),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        let mut saved = Vec::with_capacity(IGNORED.len() + FORWARDED.len());
        for (sig, action) in IGNORED
            .iter()
            .map(|s| (*s, &ignore))
            .chain(FORWARDED.iter().map(|s| (*s, &fwd)))
        {
            // SAFETY: the handler only calls async-signal-safe functions and touches atomics.
            if let Ok(old) = unsafe { signal::sigaction(sig, action) } {
                saved.push((sig, old));
            }
        }
        SignalGuard { saved }
    }

    /// A guard that restores nothing (used once the real one has been handed on).
    pub fn inert() -> Self {
        SignalGuard { saved: Vec::new() }
    }

    /// The dispositions arum had before `install`, for the child to restore. The list lives on
    /// the heap and stays where it is when the guard moves.
    pub fn saved(&self) -> &[(Signal, SigAction)] {
        &self.saved
    }
}

/// In the child before exec: the program gets the dispositions arum itself was started with (an
/// ignored SIGHUP under nohup stays ignored), and every standard signal still caught goes back to
/// its default. Exec resets caught signals anyway, and the child runs in arum's memory, where a
/// handler of arum's (the delay-accounting guard's, Rust's stack-overflow one) must not run: it
/// would act on arum's state from the child. arum catches no real-time signal.
pub fn restore_in_child(saved: &[(Signal, SigAction)]) {
    for (sig, old) in saved {
        // SAFETY: sigaction is async-signal-safe; `old` was returned by the kernel earlier, so
        // the call cannot fail and leaves errno alone (the child may share arum's: see `child`).
        unsafe {
            let _ = signal::sigaction(*sig, old);
        }
    }
    for sig in 1..32 {
        // SAFETY: both calls only read or write this process's dispositions, with valid
        // signal numbers and structs on this stack; neither can fail, so errno stays untouched.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut current);
            if current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN {
                let default: libc::sigaction = std::mem::zeroed(); // SIG_DFL, no flags
                libc::sigaction(sig, &default, std::ptr::null_mut());
            }
        }
    }
}

impl Drop for SignalGuard {
    /// arum's own dispositions return, except SIGPIPE, which stays ignored while arum writes
    /// its report.
    fn drop(&mut self) {
        for (sig, old) in self.saved.iter().filter(|(s, _)| *s != Signal::SIGPIPE) {
            // SAFETY: `old` was returned by the kernel for this signal earlier.
            unsafe {
                let _ = signal::sigaction(*sig, old);
            }
        }
    }
}

/// The program is running: forward signals to it, including one that arrived during set-up.
pub fn track_child(pid: Pid) {
    CHILD.store(pid.as_raw(), Ordering::SeqCst);
    let early = EARLY.swap(0, Ordering::SeqCst);
    if let Ok(early) = Signal::try_from(early) {
        let _ = signal::kill(pid, early);
    }
}

/// The program has exited (not yet reaped): stop forwarding before its pid can be reused.
pub fn forget_child() {
    CHILD.store(0, Ordering::SeqCst);
}
