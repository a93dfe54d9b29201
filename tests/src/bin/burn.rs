//! `burn SECONDS [THREADS]`: each of THREADS threads (default 1) uses SECONDS of user CPU time.
fn main() {
    let secs: f64 = arum_tests::arg(1, 0.3);
    let threads: usize = arum_tests::arg(2, 1);
    let handles: Vec<_> = (0..threads)
        .map(|_| std::thread::spawn(move || arum_tests::burn_cpu(secs)))
        .collect();
    for h in handles {
        std::hint::black_box(h.join().unwrap());
    }
}
