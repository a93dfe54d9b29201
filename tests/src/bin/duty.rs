//! `duty FRACTION CPU SECONDS`: pinned to CPU, busy for FRACTION of every 20 ms period and
//! asleep for the rest, for SECONDS of wall time.
use std::time::{Duration, Instant};

fn main() {
    let fraction: f64 = arum_tests::arg(1, 0.5);
    let cpu: usize = arum_tests::arg(2, 0);
    let secs: f64 = arum_tests::arg(3, 1.0);
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "cannot pin to CPU {cpu}"
        );
    }
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
