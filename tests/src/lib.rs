//! Shared bits of the helper programs: each helper does a known amount of one kind of work,
//! so the tests can check that arum reports that amount.

use std::str::FromStr;

/// Positional argument `i` (1-based) parsed as `T`, or `default` when absent.
pub fn arg<T: FromStr>(i: usize, default: T) -> T {
    match std::env::args().nth(i) {
        Some(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("argument {i} ({s:?}) is not a valid number")),
        None => default,
    }
}

/// CPU time consumed so far by the calling thread.
pub fn thread_cpu_time() -> std::time::Duration {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(std::time::Duration::ZERO, |ts| {
        std::time::Duration::new(ts.tv_sec() as u64, ts.tv_nsec() as u32)
    })
}

/// Spins until the calling thread has used `secs` seconds of CPU time.
pub fn burn_cpu(secs: f64) -> u64 {
    let target = std::time::Duration::from_secs_f64(secs);
    let mut x: u64 = 1;
    while thread_cpu_time() < target {
        for _ in 0..10_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    x
}

/// Allocates `bytes` and writes one byte to every page, so each page is faulted in exactly once.
pub fn touch_pages(bytes: usize) -> Vec<u8> {
    let page = 4096;
    let mut v: Vec<u8> = Vec::with_capacity(bytes);
    let p = v.as_mut_ptr();
    for off in (0..bytes).step_by(page) {
        // SAFETY: off < bytes = capacity, so p+off lies inside the allocation; the write
        // initialises that byte (the Vec's length stays 0, so nothing reads it as an element).
        unsafe { p.add(off).write_volatile(1) };
    }
    v
}
