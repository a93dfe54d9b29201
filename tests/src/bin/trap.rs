//! `trap`: prints "ready", then waits; SIGTERM makes it exit 42, SIGUSR1 exit 43. Exits 0 after
//! 10 s if no signal came, so a forwarding failure shows as a wrong status, not a hang.
extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: _exit is async-signal-safe and has no preconditions; it skips the exit handlers,
    // which a signal handler must not run.
    unsafe { libc::_exit(if sig == libc::SIGTERM { 42 } else { 43 }) };
}
fn main() {
    for sig in [libc::SIGTERM, libc::SIGUSR1] {
        // SAFETY: `on_signal` only calls _exit, which is async-signal-safe, so it may interrupt
        // main anywhere; the handler has the signature signal(2) expects.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
    println!("ready");
    std::thread::sleep(std::time::Duration::from_secs(10));
}
