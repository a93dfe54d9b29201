//! `burn SECONDS [THREADS] [FILE]`: each of THREADS threads (default 1) uses SECONDS of user CPU
//! time; with FILE, the process's own CPU time (user + system, getrusage) is written there at the
//! end, so a test can compare a tool's count with the program's own account of the same run.

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;

fn main() {
    let secs: f64 = arum_tests::arg(1, 0.3);
    let threads: usize = arum_tests::arg(2, 1);
    let handles: Vec<_> = (0..threads)
        .map(|_| std::thread::spawn(move || arum_tests::burn_cpu(secs)))
        .collect();
    for h in handles {
        std::hint::black_box(h.join().unwrap());
    }
    if let Some(file) = std::env::args().nth(3) {
        let ru = getrusage(UsageWho::RUSAGE_SELF).unwrap();
        let ns = |tv: TimeVal| tv.tv_sec() as u64 * 1_000_000_000 + tv.tv_usec() as u64 * 1000;
        std::fs::write(
            file,
            format!("{}\n", ns(ru.user_time()) + ns(ru.system_time())),
        )
        .unwrap();
    }
}
