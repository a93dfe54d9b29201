//! What tracing adds to a system call, measured the same way for both engines: getppid(2) on
//! arum's own thread, untraced and traced, and the traced calls' own measured durations.

/// What tracing adds to a call on this machine, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Of a traced call as its caller sees it (both records).
    pub pair_ns: f64,
    /// Of the call's own measured interval (entry to exit record): taken out of every duration.
    pub inside_ns: f64,
}

/// The least mean time of a getppid(2) call over a few rounds, in ns.
pub fn getppid_ns() -> f64 {
    const CALLS: u32 = 2000;
    const ROUNDS: usize = 5;
    (0..ROUNDS)
        .map(|_| {
            let t = std::time::Instant::now();
            for _ in 0..CALLS {
                // getppid is never cached by the C library: every call enters the kernel.
                std::hint::black_box(nix::unistd::getppid());
            }
            t.elapsed().as_nanos() as f64 / f64::from(CALLS)
        })
        .fold(f64::INFINITY, f64::min)
}
