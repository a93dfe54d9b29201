//! `short_threads N [BATCH]`: starts N threads, BATCH (default 8) at a time, each living about a
//! millisecond (half spinning, half asleep), and joins them all.
use std::time::{Duration, Instant};

fn main() {
    let n: usize = arum_tests::arg(1, 1000);
    let batch: usize = arum_tests::arg(2, 8);
    let mut started = 0;
    while started < n {
        let count = batch.min(n - started);
        let handles: Vec<_> = (0..count)
            .map(|_| {
                std::thread::spawn(|| {
                    let t0 = Instant::now();
                    while t0.elapsed() < Duration::from_micros(500) {
                        std::hint::spin_loop();
                    }
                    std::thread::sleep(Duration::from_micros(500));
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        started += count;
    }
}
