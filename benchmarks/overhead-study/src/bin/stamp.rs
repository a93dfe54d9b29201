//! `stamp`: prints CLOCK_MONOTONIC (ns) when main starts and when it returns, on one line.
//! Run under a tool, it marks where the tool's set-up ends and its post-processing begins, on
//! the clock the study's harness reads before starting the tool and after it exits.

fn monotonic_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn main() {
    let start = monotonic_ns();
    let end = monotonic_ns();
    println!("{start} {end}");
}
