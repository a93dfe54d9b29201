//! `fsync_write PATH MIB [REPORT]`: writes MIB MiB to PATH and fsyncs it, so the data reaches the
//! device; with REPORT, the thread's own `write_bytes` (/proc/thread-self/io) is written there.
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
    if let Some(report) = std::env::args().nth(3) {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        let written = io
            .lines()
            .find_map(|l| l.strip_prefix("write_bytes: "))
            .expect("write_bytes in /proc/thread-self/io");
        std::fs::write(report, format!("{written}\n")).unwrap();
    }
}
