//! Waiting for an absolute CLOCK_MONOTONIC time, three ways (`-i`): clock_nanosleep with
//! TIMER_ABSTIME, a one-shot absolute timerfd, or spinning. Absolute times keep a periodic
//! thread's releases from drifting by the time it takes to go to sleep.

use std::io;

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};

use crate::experiment::TimerKind;

/// A timer of one kind, owned by one thread.
pub enum Timer {
    Nanosleep,
    Timerfd(TimerFd),
    Busy,
}

impl Timer {
    pub fn new(kind: TimerKind) -> io::Result<Timer> {
        Ok(match kind {
            TimerKind::Nanosleep => Timer::Nanosleep,
            TimerKind::Timerfd => Timer::Timerfd(
                TimerFd::new(
                    nix::sys::timerfd::ClockId::CLOCK_MONOTONIC,
                    TimerFlags::TFD_CLOEXEC,
                )
                .map_err(io::Error::from)?,
            ),
            TimerKind::Busy => Timer::Busy,
        })
    }

    /// Whether waiting blocks the thread (false for the busy timer).
    pub fn blocks(&self) -> bool {
        !matches!(self, Timer::Busy)
    }

    /// Blocks until CLOCK_MONOTONIC reaches `mono_ns` (returns at once if it has). The busy
    /// timer does not block: its caller spins (see `models`).
    pub fn sleep_until(&self, mono_ns: u64) -> io::Result<()> {
        let at = TimeSpec::new(
            (mono_ns / 1_000_000_000) as libc::time_t,
            (mono_ns % 1_000_000_000) as libc::c_long,
        );
        match self {
            Timer::Nanosleep => loop {
                match clock_nanosleep(
                    ClockId::CLOCK_MONOTONIC,
                    ClockNanosleepFlags::TIMER_ABSTIME,
                    &at,
                ) {
                    Ok(_) => return Ok(()),
                    // A signal: the absolute time is unchanged, so simply sleep again.
                    Err(nix::Error::EINTR) => continue,
                    Err(e) => return Err(e.into()),
                }
            },
            Timer::Timerfd(fd) => {
                if arum_tsc::monotonic_ns() >= mono_ns {
                    return Ok(());
                }
                fd.set(
                    Expiration::OneShot(at),
                    TimerSetTimeFlags::TFD_TIMER_ABSTIME,
                )
                .map_err(io::Error::from)?;
                loop {
                    match fd.wait() {
                        Ok(()) => return Ok(()),
                        Err(nix::Error::EINTR) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            Timer::Busy => {
                while arum_tsc::monotonic_ns() < mono_ns {
                    std::hint::spin_loop();
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_timer_wakes_at_or_after_the_time_asked() {
        let _one = crate::exclusive();
        for kind in [TimerKind::Nanosleep, TimerKind::Timerfd, TimerKind::Busy] {
            let t = Timer::new(kind).unwrap();
            for _ in 0..5 {
                let at = arum_tsc::monotonic_ns() + 2_000_000;
                t.sleep_until(at).unwrap();
                let woke = arum_tsc::monotonic_ns();
                assert!(woke >= at, "{kind}: woke {} ns early", at - woke);
            }
            // A time in the past returns at once.
            let before = arum_tsc::monotonic_ns();
            t.sleep_until(before - 1_000_000).unwrap();
            assert!(arum_tsc::monotonic_ns() - before < 50_000_000, "{kind}");
        }
    }
}
