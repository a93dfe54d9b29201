//! The launched child runs in arum's own memory until exec (arum-core's `launch::child`), so none
//! of arum's signal handlers may run in it: a signal that reaches the held child acts as it would
//! on the program (exec resets caught signals anyway), never through a handler that would change
//! arum's state from the child. A file of its own: the test installs a process-wide handler.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arum_core::launch::{self, Executable};

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
    // The held child ends by the signal before it is released: watch for its end without
    // reaping it (the Pending reaps it when dropped). Had arum's handler run, it would still wait.
    let pid = pending.pid().as_raw();
    let deadline = Instant::now() + Duration::from_secs(10);
    // SAFETY: siginfo_t is plain data; waitid fills it for our own child and reaps nothing.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    loop {
        let flags = libc::WEXITED | libc::WNOWAIT | libc::WNOHANG;
        // SAFETY: as above.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
        // SAFETY: si_pid is set by waitid once the child has changed state (0 before).
        if r == 0 && unsafe { info.si_pid() } == pid {
            break;
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
    // SAFETY: as above; the fields are those of a CLD_* state change.
    let (code, status) = unsafe { (info.si_code, info.si_status()) };
    assert_eq!(
        (code, status),
        (libc::CLD_KILLED, libc::SIGALRM),
        "the signal's default action ended the held child"
    );
    drop(pending);
}
