//! The launched child runs in arum's own memory until exec (arum-cli's `launch::child`), so none
//! of arum's signal handlers may run in it: a signal that reaches the held child acts as it would
//! on the program (exec resets caught signals anyway), never through a handler that would change
//! arum's state from the child. A file of its own: the test installs a process-wide handler.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arum_cli::launch::{self, Executable};

static HANDLED: AtomicBool = AtomicBool::new(false);

extern "C" fn note(_: libc::c_int) {
    HANDLED.store(true, Ordering::SeqCst);
}

#[test]
fn a_signal_to_the_held_child_takes_its_default_action_not_arums_handler() {
    // SAFETY: the handler only stores to an atomic.
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
    // SAFETY: kill has no memory-safety preconditions; the pid is our held child.
    assert_eq!(
        unsafe { libc::kill(pending.pid().as_raw(), libc::SIGALRM) },
        0
    );
    let reaped = pending.release().unwrap().wait();
    assert!(
        !HANDLED.load(Ordering::SeqCst),
        "arum's handler ran in the child, in arum's memory"
    );
    let reaped = reaped.expect("the child ends by the signal, not by a failed exec");
    assert_eq!(
        reaped.exit.signal_name(),
        Some("SIGALRM"),
        "the signal's default action ended the held child"
    );
}
