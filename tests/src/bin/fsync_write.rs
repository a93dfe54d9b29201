//! `fsync_write PATH MIB [REPORT]`: writes MIB MiB to PATH and fsyncs it, so the data reaches the
//! device. With REPORT it writes and fsyncs MIB MiB more, up to 8 rounds in all, until the kernel
//! has counted a clock tick of block I/O wait for the thread (/proc/thread-self/stat's
//! delayacct_blkio_ticks; a fast device can finish a round's writeback before fsync waits), then
//! writes the thread's own `write_bytes` (/proc/thread-self/io) and that tick count there.
use std::io::Write;

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
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        let written = io
            .lines()
            .find_map(|l| l.strip_prefix("write_bytes: "))
            .expect("write_bytes in /proc/thread-self/io");
        std::fs::write(report, format!("{written} {}\n", blkio_ticks())).unwrap();
    }
}

/// Field 42 of /proc/thread-self/stat: the thread's block I/O wait in clock ticks (0 while delay
/// accounting is off). Counted from after the command name, which may hold spaces.
fn blkio_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let after_comm = &stat[stat.rfind(')').expect("comm in stat") + 2..];
    // After "pid (comm) " the fields start at 3 (state): field 42 is the 40th.
    after_comm
        .split_whitespace()
        .nth(39)
        .expect("delayacct_blkio_ticks in stat")
        .parse()
        .unwrap()
}
