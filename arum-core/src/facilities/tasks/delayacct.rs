//! `kernel.task_delayacct`: whether the kernel accounts block I/O, swap-in, reclaim and
//! thrashing delays, for tasks created while it is on. It is a setting of the whole machine, so
//! arum only turns it on when asked (`--enable-delayacct`, root), and puts it back as it was
//! when the run ends: on every return path (Drop), and from a handler of the signals that would
//! otherwise end arum before that (the handler restores the setting, then lets the signal do
//! what it would have done). SIGKILL cannot be caught: while the setting is on, a marker in
//! arum's own cgroup (`crate::leftovers`) records it, and the next arum puts it back.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use arum_signals::Caught;
use nix::fcntl::{open, OFlag};
use nix::sys::signal::Signal;
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
    _handlers: Caught,
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
        let handlers = Caught::install(&FATAL, restore_then_die);
        // The marker before the write: no moment when the setting is on and unrecorded.
        let marker = crate::leftovers::mark(crate::leftovers::DELAYACCT);
        let guard = Enabled {
            _handlers: handlers,
            marker,
        };
        std::fs::write(SYSCTL, "1").map_err(|e| {
            format!("cannot turn on kernel.task_delayacct: {e}; --enable-delayacct needs root")
        })?;
        Ok(Some(guard))
    }
}

impl Drop for Enabled {
    fn drop(&mut self) {
        // The setting back first; then the fields go: the handlers, then the marker.
        restore();
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
    arum_signals::die_by(sig);
}
