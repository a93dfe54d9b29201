//! What a calibration writes outside its report (the scratch directory in the temporary
//! directory, or scratch files in `--dir`) must not outlive it. Every such name carries the pid
//! of the arum that made it (`arum-calibrate-<pid>-...`), so that:
//!
//! - SIGINT, SIGTERM and SIGHUP remove this run's files before arum ends: the signals are blocked
//!   in every thread and taken by one thread of their own, which cleans in ordinary code (no
//!   async-signal-safety limits on walking a directory), then ends arum by the same signal;
//! - a run started later removes what runs killed by SIGKILL left (their pid no longer runs),
//!   and says so once.
//!
//! An ignored signal stays ignored: the kernel discards it before the mask is looked at, as it
//! would without arum.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use nix::sys::signal::{self, SigHandler, SigSet, SigmaskHow, Signal};

/// Every scratch name starts with this, then the pid and a dash.
pub const PREFIX: &str = "arum-calibrate-";

/// Signals that end arum by default and that someone stopping a calibration sends.
const STOPPING: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// This run's name for a scratch file or directory: `arum-calibrate-<pid>-<what>`.
pub fn name(what: &str) -> String {
    format!("{PREFIX}{}-{what}", std::process::id())
}

/// The pid in a scratch name, when it is one.
fn owner(name: &str) -> Option<i32> {
    let (pid, _) = name.strip_prefix(PREFIX)?.split_once('-')?;
    pid.parse().ok().filter(|p| *p > 0)
}

/// Whether process `pid` still runs (a process of another user counts as running).
fn running(pid: i32) -> bool {
    signal::kill(nix::unistd::Pid::from_raw(pid), None) != Err(nix::errno::Errno::ESRCH)
}

/// Removes the scratch files and directories in `dir` that belong to this user and whose arum is
/// gone; returns their paths.
pub fn remove_stale(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let uid = nix::unistd::geteuid().as_raw();
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(owner) else {
            continue;
        };
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        if meta.uid() != uid || running(pid) {
            continue;
        }
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(e.path())
        } else {
            std::fs::remove_file(e.path())
        };
        if gone.is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// This run's scratch names in `dir` removed (a directory with everything in it).
fn remove_own(dir: &Path) {
    let own = name("");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if !e.file_name().to_str().is_some_and(|n| n.starts_with(&own)) {
            continue;
        }
        let _ = match e.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(e.path()),
            _ => std::fs::remove_file(e.path()),
        };
    }
}

/// While it lives, a stopping signal removes this run's scratch names in `dirs` and then ends
/// arum by that signal. Made before any thread of the calibration, which inherit the mask.
pub struct Guard {
    done: Arc<AtomicBool>,
    old_mask: SigSet,
}

impl Guard {
    pub fn install(dirs: Vec<PathBuf>) -> Guard {
        let mut set = SigSet::empty();
        for s in STOPPING {
            set.add(s);
        }
        let mut old_mask = SigSet::empty();
        let _ = signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old_mask));
        let done = Arc::new(AtomicBool::new(false));
        let finished = done.clone();
        let spawned = std::thread::Builder::new()
            .name("arum-cleanup".into())
            .spawn(move || {
                let Ok(sig) = set.wait() else { return };
                if !finished.load(Ordering::SeqCst) {
                    for d in &dirs {
                        remove_own(d);
                    }
                }
                die_by(sig);
            });
        if spawned.is_err() {
            // Without the thread the signals must reach arum as before.
            let _ = signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
        }
        Guard { done, old_mask }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // The files are gone by now (each measurement removes its own); a signal from here on
        // needs no cleaning, and reaches this thread once the mask is back.
        self.done.store(true, Ordering::SeqCst);
        let _ = signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.old_mask), None);
    }
}

/// Ends the process by `sig` with its default action, as if arum had not caught it.
fn die_by(sig: Signal) {
    // SAFETY: the default action runs no code of arum's.
    unsafe {
        let _ = signal::signal(sig, SigHandler::SigDfl);
    }
    let mut one = SigSet::empty();
    one.add(sig);
    let _ = signal::pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&one), None);
    // raise() directs the signal at this thread, which now has it unblocked at its default.
    let _ = signal::raise(sig);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_pid_and_stale_ones_are_removed() {
        let me = std::process::id() as i32;
        assert_eq!(owner(&name("reads")), Some(me));
        assert_eq!(owner("arum-calibrate-reads"), None);
        assert_eq!(owner("arum-calibrate--x"), None);
        assert_eq!(owner("other-12-x"), None);

        let dir = tempfile::tempdir().unwrap();
        // A pid that cannot run: above the kernel's pid_max limit (2^22).
        let dead = dir.path().join(format!("{PREFIX}{}-reads", 1 << 23));
        let dead_dir = dir.path().join(format!("{PREFIX}{}-Xyz", 1 << 23));
        let live = dir.path().join(name("reads"));
        let foreign = dir.path().join("arum-calibrate-notes.txt");
        for f in [&dead, &live, &foreign] {
            std::fs::write(f, b"x").unwrap();
        }
        std::fs::create_dir(&dead_dir).unwrap();
        std::fs::write(dead_dir.join("inner"), b"x").unwrap();
        let mut removed = remove_stale(dir.path());
        removed.sort();
        let mut want = vec![dead.clone(), dead_dir.clone()];
        want.sort();
        assert_eq!(removed, want);
        assert!(live.exists() && foreign.exists() && !dead.exists() && !dead_dir.exists());
        remove_own(dir.path());
        assert!(!live.exists() && foreign.exists());
    }
}
