//! The launched child runs in arum's own memory until exec (arum-core's `launch::child`), so none
//! of arum's signal handlers may run in it: a signal that reaches the held child acts as it would
//! on the program (exec resets caught signals anyway), never through a handler that would change
//! arum's state from the child. A file of its own: the test installs a process-wide handler.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arum_core::launch::{self, Executable};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};

static HANDLED: AtomicBool = AtomicBool::new(false);

extern "C" fn note(_: libc::c_int) {
    HANDLED.store(true, Ordering::SeqCst);
}

#[test]
fn a_signal_to_the_held_child_takes_its_default_action_not_arums_handler() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; an all-zero
    // struct sigaction is a valid one (no flags, an empty mask), given its handler here.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = note as *const () as usize;
        assert_eq!(
            libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()),
            0
        );
    }
    let exe = Executable::new(&["/bin/true".to_owned()]).unwrap();
    let pending = launch::spawn(&exe, None).unwrap();
    // Let the child reach its start line (a signal sent earlier waits, blocked, until it has
    // restored its dispositions: the outcome is the same).
    std::thread::sleep(Duration::from_millis(50));
    kill(pending.pid(), Signal::SIGALRM).unwrap();
    // The held child ends by the signal before it is released: watch for its end without
    // reaping it (the Pending reaps it when dropped). Had arum's handler run, it would still wait.
    let pid = pending.pid();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut ended = WaitStatus::StillAlive;
    loop {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
        match waitid(Id::Pid(pid), flags) {
            Ok(WaitStatus::StillAlive) | Err(_) => {}
            Ok(status) => {
                ended = status;
                break;
            }
        }
        if Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !HANDLED.load(Ordering::SeqCst),
        "arum's handler ran in the child, in arum's memory"
    );
    assert_eq!(
        ended,
        WaitStatus::Signaled(pid, Signal::SIGALRM, false),
        "the signal's default action ended the held child"
    );
    drop(pending);
}
