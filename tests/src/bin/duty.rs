//! `duty FRACTION CPU SECONDS`: pinned to CPU, busy for FRACTION of every 20 ms period and
//! asleep for the rest, for SECONDS of wall time.
use std::time::{Duration, Instant};

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;

fn main() {
    let fraction: f64 = arum_tests::arg(1, 0.5);
    let cpu: usize = arum_tests::arg(2, 0);
    let secs: f64 = arum_tests::arg(3, 1.0);
    let mut set = CpuSet::new();
    set.set(cpu)
        .and_then(|()| sched_setaffinity(Pid::from_raw(0), &set))
        .unwrap_or_else(|e| panic!("cannot pin to CPU {cpu}: {e}"));
    let period = Duration::from_millis(20);
    let busy = period.mul_f64(fraction);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut x = 0u64;
    while Instant::now() < end {
        let start = Instant::now();
        while start.elapsed() < busy {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        std::thread::sleep(period.saturating_sub(start.elapsed()));
    }
}
