//! Gap detection (the paper's Figure 2): a thread reads the TSC in a loop; when two successive
//! reads are more than GAP apart, something else had the CPU, and the interval the thread had
//! without interruption is handed to a sink.
//!
//! Each read is RDTSCP, so every interval carries the CPU it ran on (a migration can only
//! happen in a gap). At each gap the thread also reads its own context-switch count: if it did
//! not change, no other task ran in the gap, only interrupts, kernel work or the hypervisor. That
//! read costs a system call, taken after the gap and excluded from the gap test.

use crate::trace::{End, Interval, Job, Record, Trace, Wake};

/// Where a detector's records go.
pub trait Sink {
    fn interval(&mut self, interval: Interval);
    /// A periodic job (only the periodic models record them).
    fn job(&mut self, _job: Job) {}
    /// A timer wake-up.
    fn wake(&mut self, _wake: Wake) {}
}

/// Appends records to the shared trace.
impl Sink for &Trace {
    fn interval(&mut self, interval: Interval) {
        self.push(Record::Interval(interval));
    }
    fn job(&mut self, job: Job) {
        self.push(Record::Job(job));
    }
    fn wake(&mut self, wake: Wake) {
        self.push(Record::Wake(wake));
    }
}

/// The calling thread's voluntary plus involuntary context switches so far.
pub fn thread_switches() -> u64 {
    use nix::sys::resource::{getrusage, UsageWho};
    getrusage(UsageWho::RUSAGE_THREAD)
        .map(|u| (u.voluntary_context_switches() + u.involuntary_context_switches()) as u64)
        .unwrap_or(0)
}

pub struct Detector<S: Sink> {
    pub sink: S,
    thread: u16,
    /// GAP in ticks.
    gap: u64,
    /// First read of the current interval.
    start: u64,
    /// Latest read.
    last: u64,
    cpu: u16,
    /// Ticks of uninterrupted running accumulated (sum of sub-GAP deltas).
    received: u64,
    switches: u64,
}

impl<S: Sink> Detector<S> {
    /// Starts detecting now: the first interval begins at the first read.
    pub fn new(sink: S, thread: u16, gap_ticks: u64) -> Detector<S> {
        let mut d = Detector {
            sink,
            thread,
            gap: gap_ticks.max(1),
            start: 0,
            last: 0,
            cpu: 0,
            received: 0,
            switches: 0,
        };
        d.resume();
        d
    }

    /// One read: returns the TSC. Counts the time since the previous read as received, unless
    /// it exceeds GAP, which ends the current interval.
    #[inline(always)]
    pub fn poll(&mut self) -> u64 {
        let (now, aux) = arum_tsc::read_ordered();
        let delta = now.wrapping_sub(self.last);
        if delta > self.gap {
            self.gap_seen(now, aux);
        } else {
            self.received += delta;
            self.last = now;
        }
        now
    }

    /// Like [`poll`](Self::poll), but the time is not counted as received (busy-waiting for a
    /// timer is running, not work).
    #[inline(always)]
    pub fn poll_idle(&mut self) -> u64 {
        let before = self.received;
        let now = self.poll();
        self.received = before;
        now
    }

    #[cold]
    #[inline(never)]
    fn gap_seen(&mut self, now: u64, aux: u32) {
        let switches = thread_switches();
        let switched = switches != self.switches;
        self.switches = switches;
        self.sink.interval(Interval {
            thread: self.thread,
            cpu: self.cpu,
            start: self.start,
            end: self.last,
            ended: End::Gap { switched },
        });
        self.start = now;
        self.cpu = arum_tsc::cpu_of_aux(aux) as u16;
        // The bookkeeping above ran on the CPU we had: not part of the next gap test.
        self.last = arum_tsc::read();
    }

    /// Ends the current interval for a reason of the thread's own (it yields, blocks or stops).
    pub fn stop(&mut self, why: End) {
        self.sink.interval(Interval {
            thread: self.thread,
            cpu: self.cpu,
            start: self.start,
            end: self.last,
            ended: why,
        });
    }

    /// Starts a new interval after [`stop`](Self::stop).
    pub fn resume(&mut self) {
        let (now, aux) = arum_tsc::read_ordered();
        self.start = now;
        self.cpu = arum_tsc::cpu_of_aux(aux) as u16;
        // As after a gap: the count is read inside the new interval, not in the gap before it.
        self.switches = thread_switches();
        self.last = arum_tsc::read();
    }

    /// Records a job of this thread.
    pub fn job(&mut self, job: Job) {
        self.sink.job(Job {
            thread: self.thread,
            ..job
        });
    }

    /// Records that this thread woke at `at` (TSC), `lateness_ns` after it asked to.
    pub fn wake(&mut self, at: u64, lateness_ns: u64) {
        self.sink.wake(Wake {
            thread: self.thread,
            cpu: self.cpu,
            at,
            lateness_ns,
        });
    }

    /// Ticks received since the last [`take_received`](Self::take_received).
    #[inline(always)]
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Ticks received since the last call, and starts counting again.
    pub fn take_received(&mut self) -> u64 {
        std::mem::take(&mut self.received)
    }

    /// The latest read.
    pub fn last(&self) -> u64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Sink for Vec<Interval> {
        fn interval(&mut self, interval: Interval) {
            self.push(interval);
        }
    }

    #[test]
    fn a_sleep_is_a_gap_and_the_time_around_it_is_received() {
        let _one = crate::exclusive();
        let hz = arum_tsc::Calibration::measure(std::time::Duration::from_millis(10), 3).hz;
        let gap = (hz * 20e-6) as u64; // 20 µs: far above an iteration, far below the sleep
        let mut d = Detector::new(Vec::new(), 7, gap);
        // Spin until 2 ms of CPU were received, however long that takes on a busy machine.
        let spin = |d: &mut Detector<Vec<Interval>>| {
            let until = d.received() + (hz * 2e-3) as u64;
            while d.received() < until {
                d.poll();
            }
        };
        spin(&mut d);
        std::thread::sleep(std::time::Duration::from_millis(5));
        spin(&mut d);
        d.stop(End::Finish);
        let ivs = &d.sink;
        // The sleep must have ended one interval; interrupts may have ended others.
        let longest_gap = ivs
            .windows(2)
            .map(|w| (w[1].start - w[0].end) as f64 / hz)
            .fold(0.0, f64::max);
        assert!((4.5e-3..1.0).contains(&longest_gap), "{ivs:?}");
        // The sleep blocked, so the thread's switch count rose across that gap.
        assert!(ivs.iter().any(|i| i.ended == End::Gap { switched: true }));
        assert_eq!(ivs.last().unwrap().ended, End::Finish);
        assert!(ivs.iter().all(|i| i.thread == 7 && i.end >= i.start));
        // Two accounts of the same time: the intervals' lengths and the received sum differ
        // only by the bookkeeping after each gap, which is itself shorter than a gap (or it
        // would have been one): at most one gap's length per interval, however many
        // preemptions a busy machine caused.
        let covered: u64 = ivs.iter().map(|i| i.end - i.start).sum();
        let intervals = ivs.len() as u64;
        let received = d.take_received();
        assert!(received >= (hz * 4e-3) as u64);
        assert!(
            covered >= received && covered - received <= intervals * gap,
            "intervals {covered}, received {received}, {intervals} intervals of gap {gap}"
        );
    }
}
