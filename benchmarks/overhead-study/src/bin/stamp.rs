//! `stamp`: prints CLOCK_MONOTONIC (ns) when main starts and when it returns, on one line.
//! Run under a tool, it marks where the tool's set-up ends and its post-processing begins, on
//! the clock the study's harness reads before starting the tool and after it exits.

fn monotonic_ns() -> u128 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .expect("CLOCK_MONOTONIC is always available on Linux");
    ts.tv_sec() as u128 * 1_000_000_000 + ts.tv_nsec() as u128
}

fn main() {
    let start = monotonic_ns();
    let end = monotonic_ns();
    println!("{start} {end}");
}
