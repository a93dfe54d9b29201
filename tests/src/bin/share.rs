//! `share MIB SECONDS`: touches MIB of memory, then forks; parent and child both keep the pages
//! (shared copy-on-write, never written again) for SECONDS. Their resident sizes add up to twice
//! MIB; their proportional set sizes, to MIB once.

use nix::sys::wait::waitpid;
use nix::unistd::Pid;

fn main() {
    let mib: usize = arum_tests::arg(1, 64);
    let secs: f64 = arum_tests::arg(2, 1.0);
    let pages = arum_tests::touch_pages(mib << 20);
    // SAFETY: the helper is single-threaded; the child only sleeps and exits.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    std::hint::black_box(&pages);
    if child == 0 {
        // SAFETY: leave the child without running the parent's exit handlers twice.
        unsafe { libc::_exit(0) };
    }
    let _ = waitpid(Pid::from_raw(child), None);
}
