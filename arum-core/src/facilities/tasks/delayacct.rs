//! `kernel.task_delayacct`: whether the kernel accounts block I/O, swap-in, reclaim and
//! thrashing delays, for tasks created while it is on. It is a setting of the whole machine, so
//! arum only turns it on when asked (`--enable-delayacct`, root), and puts it back as it was
//! when the run ends: on every return path (Drop), and from a handler of the signals that would
//! otherwise end arum before that (the handler restores the setting, then lets the signal do
//! what it would have done). SIGKILL cannot be caught: while the setting is on, a marker in
//! arum's own cgroup (`crate::leftovers`) records it, and the next arum puts it back.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use nix::fcntl::{open, OFlag};
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::stat::Mode;
use nix::unistd::write;

pub use crate::system::delayacct::is_on;
use crate::system::delayacct::{SYSCTL, SYSCTL_C};

/// Signals whose default action ends arum.
const FATAL: [Signal; 13] = [
    Signal::SIGHUP,
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGTERM,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGALRM,
    Signal::SIGABRT,
    Signal::SIGPIPE,
    Signal::SIGXCPU,
    Signal::SIGXFSZ,
    Signal::SIGVTALRM,
    Signal::SIGPROF,
];

/// The setting is still arum's to restore, and the value to restore it to.
static ARMED: AtomicBool = AtomicBool::new(false);
static PREVIOUS: AtomicU8 = AtomicU8::new(b'0');

/// Delay accounting turned on for the run; dropping it turns it back off.
pub struct Enabled {
    handlers: Vec<(Signal, SigAction)>,
    /// The record that a SIGKILL'd arum left the setting on, for the next arum to undo.
    marker: Option<crate::leftovers::Marker>,
}

impl Enabled {
    /// Whether a later arum would put the setting back if this one were killed by SIGKILL.
    pub fn marked(&self) -> bool {
        self.marker.is_some()
    }
}

impl Enabled {
    /// Turns delay accounting on. `Ok(None)` when it already was (nothing to restore).
    pub fn turn_on() -> Result<Option<Enabled>, String> {
        match is_on() {
            None => {
                return Err(format!(
                "{SYSCTL} is missing: this kernel has no delay accounting (CONFIG_TASK_DELAY_ACCT)"
            ))
            }
            Some(true) => return Ok(None),
            Some(false) => {}
        }
        PREVIOUS.store(b'0', Ordering::SeqCst);
        // Armed before the write, so a signal between the two still restores.
        ARMED.store(true, Ordering::SeqCst);
        let handlers = install_handlers();
        // The marker before the write: no moment when the setting is on and unrecorded.
        let marker = crate::leftovers::mark(crate::leftovers::DELAYACCT);
        let guard = Enabled { handlers, marker };
        std::fs::write(SYSCTL, "1").map_err(|e| {
            format!("cannot turn on kernel.task_delayacct: {e}; --enable-delayacct needs root")
        })?;
        Ok(Some(guard))
    }
}

impl Drop for Enabled {
    fn drop(&mut self) {
        restore();
        // The setting is back: the marker goes (the field's own drop, after this).
        for (sig, old) in &self.handlers {
            // SAFETY: `old` was returned by the kernel for this signal when the handler was
            // installed.
            unsafe {
                let _ = signal::sigaction(*sig, old);
            }
        }
    }
}

/// Writes the previous value back, once. Async-signal-safe: open, write and close only.
fn restore() {
    if !ARMED.swap(false, Ordering::SeqCst) {
        return;
    }
    let value = [PREVIOUS.load(Ordering::SeqCst)];
    // nix opens a `CStr` path as it is (no allocation); the descriptor closes when dropped.
    if let Ok(fd) = open(SYSCTL_C, OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty()) {
        let _ = write(&fd, &value);
    }
}

extern "C" fn restore_then_die(sig: libc::c_int) {
    restore();
    // The handler is installed for the signals of FATAL only, every one of which nix names.
    let Ok(sig) = Signal::try_from(sig) else {
        return;
    };
    // SAFETY: the default action runs no code of arum's, and signal(2) is async-signal-safe.
    unsafe {
        let _ = signal::signal(sig, SigHandler::SigDfl);
    }
    // With the default action back, the signal ends arum as it would have without this handler.
    let _ = signal::raise(sig);
}

/// Catches the fatal signals that arum has at their default action. An ignored signal cannot end
/// arum and keeps its disposition (the launched program inherits it as given; a caught one
/// reverts to the default at exec, which is what arum was given).
fn install_handlers() -> Vec<(Signal, SigAction)> {
    let action = SigAction::new(
        SigHandler::Handler(restore_then_die),
        SaFlags::empty(),
        SigSet::empty(),
    );
    let mut installed = Vec::new();
    for sig in FATAL {
        // SAFETY: the handler only calls async-signal-safe functions and touches atomics.
        let Ok(old) = (unsafe { signal::sigaction(sig, &action) }) else {
            continue;
        };
        if matches!(old.handler(), SigHandler::SigDfl) {
            installed.push((sig, old));
        } else {
            // SAFETY: puts back the disposition the kernel just returned.
            unsafe {
                let _ = signal::sigaction(sig, &old);
            }
        }
    }
    installed
}
