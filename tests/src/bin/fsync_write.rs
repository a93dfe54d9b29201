//! `fsync_write PATH MIB [REPORT]`: writes MIB MiB to PATH and fsyncs it, so the data reaches the
//! device. With REPORT it writes and fsyncs MIB MiB more, up to 8 rounds in all, until the kernel
//! has counted a clock tick of block I/O wait for it (/proc/self/stat's delayacct_blkio_ticks; a
//! fast device can finish a round's writeback before fsync waits), then writes its own
//! `write_bytes` (/proc/self/io) and that wait in nanoseconds there. It has one thread, so the
//! process's counts are the thread's.
use std::io::Write;

use procfs::process::Process;

const MAX_ROUNDS: usize = 8;

fn main() {
    let path = std::env::args().nth(1).expect("PATH");
    let mib: usize = arum_tests::arg(2, 8);
    let report = std::env::args().nth(3);
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0x5Au8; 1 << 20];
    for round in 1..=MAX_ROUNDS {
        for _ in 0..mib {
            f.write_all(&block).unwrap();
        }
        f.sync_all().unwrap();
        if report.is_none() || round == MAX_ROUNDS || blkio_ticks() > 0 {
            break;
        }
    }
    if let Some(report) = report {
        let written = Process::myself().unwrap().io().unwrap().write_bytes;
        let blkio_ns = blkio_ticks() * (1_000_000_000 / procfs::ticks_per_second());
        std::fs::write(report, format!("{written} {blkio_ns}\n")).unwrap();
    }
}

/// Block I/O wait in clock ticks (0 while delay accounting is off).
fn blkio_ticks() -> u64 {
    let stat = Process::myself().unwrap().stat().unwrap();
    stat.delayacct_blkio_ticks
        .expect("delayacct_blkio_ticks in /proc/self/stat")
}
