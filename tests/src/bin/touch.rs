//! `touch MIB [HOLD_MS] [STEPS]`: STEPS times (default 1): allocate MIB MiB, fault in every page,
//! keep it, and hold for HOLD_MS (default 300) so samplers see the level.
fn main() {
    let mib: usize = arum_tests::arg(1, 200);
    let hold_ms: u64 = arum_tests::arg(2, 300);
    let steps: usize = arum_tests::arg(3, 1);
    let mut kept = Vec::new();
    for _ in 0..steps {
        kept.push(arum_tests::touch_pages(mib << 20));
        std::thread::sleep(std::time::Duration::from_millis(hold_ms));
    }
    std::hint::black_box(&kept);
}
