//! `staggered BASE THREADS FILE`: thread k (1-based) uses k × BASE seconds of CPU time; at the
//! end FILE gets one line per thread, `TID CPU_NS` (its own CPU clock as it finished), and a last
//! line `total CPU_NS` with the process's getrusage, so a test can compare a tool's per-thread
//! records with the program's own account of the same run.

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::time::TimeVal;
use nix::unistd::gettid;

fn main() {
    let base: f64 = arum_tests::arg(1, 0.05);
    let threads: usize = arum_tests::arg(2, 8);
    let file = std::env::args().nth(3).expect("FILE");
    let handles: Vec<_> = (1..=threads)
        .map(|k| {
            std::thread::spawn(move || {
                std::hint::black_box(arum_tests::burn_cpu(base * k as f64));
                let tid = gettid();
                (tid, arum_tests::thread_cpu_time().as_nanos() as u64)
            })
        })
        .collect();
    let mut lines = String::new();
    for h in handles {
        let (tid, ns) = h.join().unwrap();
        lines.push_str(&format!("{tid} {ns}\n"));
    }
    let ru = getrusage(UsageWho::RUSAGE_SELF).unwrap();
    let ns = |tv: TimeVal| tv.tv_sec() as u64 * 1_000_000_000 + tv.tv_usec() as u64 * 1000;
    lines.push_str(&format!(
        "total {}\n",
        ns(ru.user_time()) + ns(ru.system_time())
    ));
    std::fs::write(file, lines).unwrap();
}
