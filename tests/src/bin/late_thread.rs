//! `late_thread DELAY_MS TOTAL_MS`: one thread until DELAY_MS, then a second one until TOTAL_MS.
use std::time::Duration;

fn main() {
    let delay: u64 = arum_tests::arg(1, 300);
    let total: u64 = arum_tests::arg(2, 800);
    std::thread::sleep(Duration::from_millis(delay));
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(total.saturating_sub(delay)))
    });
    t.join().unwrap();
}
