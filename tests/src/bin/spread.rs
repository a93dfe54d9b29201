//! `spread SECONDS`: one thread per online CPU, each pinned to its own CPU and using SECONDS of
//! CPU time there, while the main thread waits in join: the program runs on every CPU, though
//! its lead thread may only ever be seen on one.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

fn main() {
    let secs: f64 = arum_tests::arg(1, 0.3);
    let allowed = sched_getaffinity(Pid::from_raw(0)).unwrap_or_else(|_| CpuSet::new());
    let cpus: Vec<usize> = (0..CpuSet::count())
        .filter(|&c| allowed.is_set(c).unwrap_or(false))
        .collect();
    let threads: Vec<_> = cpus
        .into_iter()
        .map(|cpu| {
            std::thread::spawn(move || {
                // Pid 0: the calling thread.
                let mut set = CpuSet::new();
                if set.set(cpu).is_ok() {
                    let _ = sched_setaffinity(Pid::from_raw(0), &set);
                }
                arum_tests::burn_cpu(secs)
            })
        })
        .collect();
    for t in threads {
        std::hint::black_box(t.join().unwrap());
    }
}
