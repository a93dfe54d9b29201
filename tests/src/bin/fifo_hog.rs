//! `fifo_hog SECONDS FILE`: a thread that waits for a CPU. The victim thread spins on CPU 0; a
//! SCHED_FIFO thread pinned to the same CPU then spins for SECONDS of wall time, so the victim
//! stays runnable but waits on the run queue for about that long. FILE gets `victim TID` and
//! `hog TID`. Exit status 3 when real-time scheduling is not permitted.
//!
//! Bounded twice: the hog stops itself after SECONDS of wall time, and an alarm ends the whole
//! process after 10 × SECONDS + 5 s whatever happens, so no failure leaves a real-time thread
//! spinning.
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::{alarm, gettid, Pid};

/// Pins the calling thread (pid 0) to CPU 0; a refusal leaves it where it is.
fn pin_to_cpu0() {
    let mut set = CpuSet::new();
    if set.set(0).is_ok() {
        let _ = sched_setaffinity(Pid::from_raw(0), &set);
    }
}

fn main() {
    let secs: f64 = arum_tests::arg(1, 0.3);
    let file = std::env::args().nth(2).expect("FILE");
    // SIGALRM's default action ends the process.
    alarm::set((secs * 10.0) as u32 + 5);
    let victim_tid = Arc::new(AtomicI32::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let victim = {
        let (tid, done) = (victim_tid.clone(), done.clone());
        std::thread::spawn(move || {
            pin_to_cpu0();
            tid.store(gettid().as_raw(), Ordering::SeqCst);
            while !done.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
        })
    };
    while victim_tid.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let hog = std::thread::spawn(move || {
        pin_to_cpu0();
        let param = libc::sched_param { sched_priority: 1 };
        // SAFETY: sched_setscheduler only reads the sched_param it is given, a valid one on
        // this stack (priority 1 is within SCHED_FIFO's range); pid 0 is the calling thread.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            return None;
        }
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs_f64(secs) {
            std::hint::spin_loop();
        }
        Some(gettid().as_raw())
    });
    let hog_tid = hog.join().unwrap();
    done.store(true, Ordering::SeqCst);
    victim.join().unwrap();
    let Some(hog_tid) = hog_tid else {
        eprintln!("fifo_hog: SCHED_FIFO not permitted");
        std::process::exit(3);
    };
    std::fs::write(
        file,
        format!(
            "victim {}\nhog {hog_tid}\n",
            victim_tid.load(Ordering::SeqCst)
        ),
    )
    .unwrap();
}
