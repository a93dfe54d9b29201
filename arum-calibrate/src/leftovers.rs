//! What a calibration writes outside its report (the scratch directory in the temporary
//! directory, or scratch files in `--dir`) must not outlive it. Every such name carries the pid
//! of the arum that made it (`arum-calibrate-<pid>-...`), so that:
//!
//! - SIGINT, SIGTERM and SIGHUP remove this run's files before arum ends: a handler unlinks the
//!   names a calibration can write (a fixed list, known before the first is written, so that
//!   the handler does nothing but unlink and rmdir, which are async-signal-safe), then lets the
//!   signal do what it would have done (`arum_signals`);
//! - a run started later removes what runs killed by SIGKILL left (their pid no longer runs),
//!   and says so once.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use arum_signals::{Caught, Held};
use nix::sys::signal::{self, Signal};

use crate::prepare::Scratch;
use crate::Error;

/// Every scratch name starts with this, then the pid and a dash.
pub const PREFIX: &str = "arum-calibrate-";

/// What a calibration names its scratch files (after the prefix and pid): the file measurements'
/// file, up to 8 contention readers' files, the major-fault file and the tiny program.
const SCRATCH: [&str; 11] = [
    "reads",
    "major-faults",
    "exit0",
    "reader-0",
    "reader-1",
    "reader-2",
    "reader-3",
    "reader-4",
    "reader-5",
    "reader-6",
    "reader-7",
];

/// Signals that end arum by default and that someone stopping a calibration sends.
const STOPPING: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// This run's name for a scratch file or directory: `arum-calibrate-<pid>-<what>`; `what` is
/// one of the names the signal handler knows (or empty, for the directory's prefix).
pub fn name(what: &str) -> String {
    debug_assert!(
        what.is_empty() || SCRATCH.contains(&what),
        "scratch name {what:?} is not in leftovers::SCRATCH: a stopped run would leave it"
    );
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

/// The paths the handler removes: files first, then directories (empty by then).
struct Targets {
    files: Vec<CString>,
    dirs: Vec<CString>,
}

/// Set once the handler may act; the targets live for the rest of the process.
static ARMED: AtomicBool = AtomicBool::new(false);
static TARGETS: AtomicPtr<Targets> = AtomicPtr::new(std::ptr::null_mut());

/// The calibration's scratch directory, made and removed so that a stopping signal at any
/// moment leaves nothing: while it lives, such a signal removes this run's scratch names in
/// the directory (and the directory itself when it is the run's own temporary one), then ends
/// arum by that signal.
pub struct Guard {
    scratch: Option<Scratch>,
    _handlers: Caught,
}

impl Guard {
    /// `--dir`, checked, or a new temporary directory. Called before the calibration starts
    /// threads: the signals are held back in this thread from the directory's mkdir until the
    /// handler knows its name.
    pub fn install(dir: Option<&Path>) -> Result<Guard, Error> {
        let _held = Held::hold(&STOPPING);
        let handlers = Caught::install(&STOPPING, remove_then_die);
        let scratch = Scratch::new(dir)?;
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).ok();
        let targets = Targets {
            files: SCRATCH
                .iter()
                .filter_map(|w| c(&scratch.dir().join(name(w))))
                .collect(),
            dirs: if dir.is_none() {
                c(&scratch.dir()).into_iter().collect()
            } else {
                Vec::new()
            },
        };
        // Never freed: a handler may read it until the process ends.
        let leaked: &'static mut Targets = Box::leak(Box::new(targets));
        TARGETS.store(leaked, Ordering::SeqCst);
        ARMED.store(true, Ordering::SeqCst);
        Ok(Guard {
            scratch: Some(scratch),
            _handlers: handlers,
        })
    }

    pub fn dir(&self) -> PathBuf {
        self.scratch.as_ref().map(Scratch::dir).unwrap_or_default()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Each measurement has removed its own files by now. The temporary directory goes
        // before the handler is disarmed; a signal held back meanwhile then finds nothing to
        // remove and ends arum.
        let _held = Held::hold(&STOPPING);
        self.scratch = None;
        ARMED.store(false, Ordering::SeqCst);
    }
}

/// Removes the targets, once. Async-signal-safe: unlink and rmdir of prepared paths only.
fn remove_targets() {
    if !ARMED.swap(false, Ordering::SeqCst) {
        return;
    }
    let targets = TARGETS.load(Ordering::SeqCst);
    // SAFETY: set from a leaked Box before ARMED, never freed or written again.
    let Some(t) = (unsafe { targets.as_ref() }) else {
        return;
    };
    for f in &t.files {
        // SAFETY: a NUL-terminated path; unlink(2) is async-signal-safe.
        unsafe { libc::unlink(f.as_ptr()) };
    }
    for d in &t.dirs {
        // SAFETY: as above, rmdir(2).
        unsafe { libc::rmdir(d.as_ptr()) };
    }
}

extern "C" fn remove_then_die(sig: libc::c_int) {
    remove_targets();
    arum_signals::die_by(sig);
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
    }
}
