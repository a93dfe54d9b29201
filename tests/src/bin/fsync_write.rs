//! `fsync_write PATH MIB`: writes MIB MiB to PATH and fsyncs it, so the data reaches the device.
use std::io::Write;

fn main() {
    let path = std::env::args().nth(1).expect("PATH");
    let mib: usize = arum_tests::arg(2, 8);
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0x5Au8; 1 << 20];
    for _ in 0..mib {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
}
