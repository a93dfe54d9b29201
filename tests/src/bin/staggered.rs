//! `staggered BASE THREADS FILE`: thread k (1-based) uses k × BASE seconds of CPU time; at the
//! end FILE gets one line per thread, `TID CPU_NS` (its own CPU clock as it finished), and a last
//! line `total CPU_NS` with the process's getrusage, so a test can compare a tool's per-thread
//! records with the program's own account of the same run.
fn main() {
    let base: f64 = arum_tests::arg(1, 0.05);
    let threads: usize = arum_tests::arg(2, 8);
    let file = std::env::args().nth(3).expect("FILE");
    let handles: Vec<_> = (1..=threads)
        .map(|k| {
            std::thread::spawn(move || {
                std::hint::black_box(arum_tests::burn_cpu(base * k as f64));
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                (tid, arum_tests::thread_cpu_time().as_nanos() as u64)
            })
        })
        .collect();
    let mut lines = String::new();
    for h in handles {
        let (tid, ns) = h.join().unwrap();
        lines.push_str(&format!("{tid} {ns}\n"));
    }
    // SAFETY: rusage is plain data that getrusage fills.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1000;
    lines.push_str(&format!("total {}\n", ns(ru.ru_utime) + ns(ru.ru_stime)));
    std::fs::write(file, lines).unwrap();
}
