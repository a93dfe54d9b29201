//! `spread SECONDS`: one thread per online CPU, each pinned to its own CPU and using SECONDS of
//! CPU time there, while the main thread waits in join: the program runs on every CPU, though
//! its lead thread may only ever be seen on one.
fn main() {
    let secs: f64 = arum_tests::arg(1, 0.3);
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| {
            // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it; CPU_ISSET reads it.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
                libc::CPU_ISSET(c, &set)
            }
        })
        .collect();
    let threads: Vec<_> = cpus
        .into_iter()
        .map(|cpu| {
            std::thread::spawn(move || {
                // SAFETY: as above; sched_setaffinity(0) pins the calling thread.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
                arum_tests::burn_cpu(secs)
            })
        })
        .collect();
    for t in threads {
        std::hint::black_box(t.join().unwrap());
    }
}
