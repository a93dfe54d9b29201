//! Undoing what arum changed outside itself (a sysctl, scratch files) when a signal ends it. A
//! caller's handler does its async-signal-safe undo and then calls [`die_by`], which lets the
//! signal end arum as it would have without the handler. Only signals still at their default
//! action are caught: an ignored signal cannot end arum and stays ignored, and one with a
//! handler of someone else's keeps it. No thread waits for the signals: one more thread would
//! change what fork and the task measurements measure.

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};

/// `handler` installed for some signals; dropping it puts back what they had.
pub struct Caught {
    installed: Vec<(Signal, SigAction)>,
}

impl Caught {
    /// Installs `handler` for each of `signals` still at its default action. The handler must
    /// call only async-signal-safe functions and touch atomics only.
    pub fn install(signals: &[Signal], handler: extern "C" fn(libc::c_int)) -> Caught {
        let action = SigAction::new(
            SigHandler::Handler(handler),
            SaFlags::empty(),
            SigSet::empty(),
        );
        let mut installed = Vec::new();
        for &sig in signals {
            // SAFETY: the handler is async-signal-safe, as `install`'s caller promises.
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
        Caught { installed }
    }
}

impl Drop for Caught {
    fn drop(&mut self) {
        for (sig, old) in &self.installed {
            // SAFETY: `old` is what the kernel returned for this signal when ours was installed.
            unsafe {
                let _ = signal::sigaction(*sig, old);
            }
        }
    }
}

/// Some signals held back from the calling thread while it lives; dropping it puts back the
/// thread's mask, and a signal that came meanwhile is delivered then. For a step whose effect
/// and its undo must be made known to a handler together (a directory made, then named to the
/// handler): a signal in between would find something to undo that the handler does not know.
pub struct Held {
    old: SigSet,
}

impl Held {
    /// Blocks `signals` in the calling thread only: a signal sent to the process while another
    /// thread has them unblocked goes to that thread, so hold them before threads start.
    pub fn hold(signals: &[Signal]) -> Held {
        let set: SigSet = signals.iter().copied().collect();
        let mut old = SigSet::empty();
        // Cannot fail: SIG_BLOCK with valid sets.
        let _ = signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old));
        Held { old }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.old), None);
    }
}

/// A handler's last step: the signal's default action back, and the signal raised again, so
/// it ends arum as it would have without the handler. Async-signal-safe.
pub fn die_by(sig: libc::c_int) {
    // Installed by `Caught` for signals nix names; any other has nothing to do here.
    let Ok(sig) = Signal::try_from(sig) else {
        return;
    };
    // SAFETY: the default action runs no code of arum's; signal(2) is async-signal-safe.
    unsafe {
        let _ = signal::signal(sig, SigHandler::SigDfl);
    }
    let _ = signal::raise(sig);
}
