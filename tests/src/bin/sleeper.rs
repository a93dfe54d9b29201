//! `sleeper K [MS]`: sleeps K times for MS milliseconds (default 1): K voluntary context switches.
fn main() {
    let k: u32 = arum_tests::arg(1, 10);
    let ms: u64 = arum_tests::arg(2, 1);
    for _ in 0..k {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}
