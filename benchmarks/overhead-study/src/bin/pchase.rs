//! `pchase [THREADS] [MIB] [STEPS]`: a pointer-chasing memory benchmark in the manner of pChase,
//! the benchmark of the original ARUM study. Each of THREADS threads (default 2) follows a random
//! cycle through its own MIB MiB array (default 64, far beyond the caches) for STEPS loads
//! (default 4 000 000), so every load waits for the previous one. The work is fixed (a seeded
//! permutation), not the time. Prints the elapsed time of the chase, measured inside the program
//! as the study did with gettimeofday() around main, in nanoseconds on stdout.

use std::time::Instant;

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args()
        .nth(i)
        .map(|s| {
            s.parse()
                .unwrap_or_else(|_| panic!("argument {i} ({s:?}) is not a number"))
        })
        .unwrap_or(default)
}

/// A random cyclic permutation of 0..n (Sattolo's algorithm): following next[i] visits every
/// element once before returning.
fn cycle(n: usize, seed: u64) -> Vec<usize> {
    let mut next: Vec<usize> = (0..n).collect();
    let mut x = seed | 1;
    for i in (1..n).rev() {
        // xorshift64: enough randomness to defeat the prefetchers, and reproducible.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        next.swap(i, j);
    }
    next
}

fn main() {
    let threads: usize = arg(1, 2);
    let mib: usize = arg(2, 64);
    let steps: u64 = arg(3, 4_000_000);
    let n = mib * (1 << 20) / std::mem::size_of::<usize>();
    let started = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                let next = cycle(n, 0x9e37_79b9_7f4a_7c15 ^ t as u64);
                let mut i = 0usize;
                for _ in 0..steps {
                    i = next[i];
                }
                std::hint::black_box(i)
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a chasing thread panicked");
    }
    println!("{}", started.elapsed().as_nanos());
}
