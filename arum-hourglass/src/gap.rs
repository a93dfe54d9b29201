//! Gap detection (the paper's Figure 2): a thread reads the TSC in a loop; when two successive
//! reads are more than GAP apart, something else had the CPU, and the interval the thread had
//! without interruption is handed to a sink.
//!
//! Each read is RDTSCP, so every interval carries the CPU it ran on (a migration can only
//! happen in a gap). At each gap the thread also reads its own context-switch count: if it did
//! not change, no other task ran in the gap, only interrupts, kernel work or the hypervisor. That
//! read costs a system call, taken after the gap and excluded from the gap test; but the return
//! from a system call is where the kernel switches to a waiting task, so a read that took far
//! longer than the shortest held a gap of its own, and the gap is taken to last until it ended.

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

/// A switch-count read that takes this many times the shortest one seen held a gap: the
/// shortest is a hot system call; one after a gap, with cold caches, takes up to four times as
/// long on our VMs, and a task switch on its way back (out and in again) takes longer still.
const COUNT_READ_FACTOR: u64 = 10;

/// Reads of the switch count timed at the start, for the shortest.
const COUNT_READS_TIMED: usize = 5;

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
    /// The thread's switch count ([`thread_switches`] but in tests).
    count: fn() -> u64,
    /// The shortest switch-count read seen, in ticks.
    count_read: u64,
}

impl<S: Sink> Detector<S> {
    /// Starts detecting now: the first interval begins at the first read.
    pub fn new(sink: S, thread: u16, gap_ticks: u64) -> Detector<S> {
        Detector::counting_with(sink, thread, gap_ticks, thread_switches)
    }

    /// As [`new`](Self::new), with `count` giving the thread's switch count.
    fn counting_with(sink: S, thread: u16, gap_ticks: u64, count: fn() -> u64) -> Detector<S> {
        let count_read = (0..COUNT_READS_TIMED)
            .map(|_| {
                let t = arum_tsc::read_ordered().0;
                std::hint::black_box(count());
                arum_tsc::read_ordered().0.wrapping_sub(t)
            })
            .min()
            .unwrap_or(0);
        let mut d = Detector {
            sink,
            thread,
            gap: gap_ticks.max(1),
            start: 0,
            last: 0,
            cpu: 0,
            received: 0,
            switches: 0,
            count,
            count_read: count_read.max(1),
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
        let (switches, now, aux) = self.count_switches(now, aux);
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

    /// The switch count, read after a gap (or a stop) that ended at `end` (a read, with its
    /// `aux`); with it, where the gap really ended. A read that took COUNT_READ_FACTOR times
    /// the shortest held a gap of its own, most likely a task switch on the system call's
    /// return: the gap lasted until the read returned, and the count is read again.
    fn count_switches(&mut self, mut end: u64, mut aux: u32) -> (u64, u64, u32) {
        loop {
            let switches = (self.count)();
            let (after, after_aux) = arum_tsc::read_ordered();
            let took = after.wrapping_sub(end);
            if took <= self.count_read.saturating_mul(COUNT_READ_FACTOR) {
                self.count_read = self.count_read.min(took.max(1));
                return (switches, end, aux);
            }
            (end, aux) = (after, after_aux);
        }
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
        // As after a gap: the count is read inside the new interval, not in the gap before it.
        let (switches, now, aux) = self.count_switches(now, aux);
        self.switches = switches;
        self.start = now;
        self.cpu = arum_tsc::cpu_of_aux(aux) as u16;
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
        // only by the bookkeeping after each gap, here far shorter than a gap of 20 µs: at most
        // one gap's length per interval, however many preemptions a busy machine caused.
        let covered: u64 = ivs.iter().map(|i| i.end - i.start).sum();
        let intervals = ivs.len() as u64;
        let received = d.take_received();
        assert!(received >= (hz * 4e-3) as u64);
        assert!(
            covered >= received && covered - received <= intervals * gap,
            "intervals {covered}, received {received}, {intervals} intervals of gap {gap}"
        );
    }

    /// Calls of [`slow_count`]; the call that sleeps.
    static COUNTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static SLEEPING_CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    /// A switch count whose read is taken off the CPU for 5 ms once, as a task switch on the
    /// system call's return would take it.
    fn slow_count() -> u64 {
        use std::sync::atomic::Ordering::Relaxed;
        let n = COUNTS.fetch_add(1, Relaxed) + 1;
        if n == SLEEPING_CALL.load(Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        n
    }

    #[test]
    fn a_switch_during_the_count_read_is_part_of_the_gap() {
        use std::sync::atomic::Ordering::Relaxed;
        let _one = crate::exclusive();
        let hz = arum_tsc::Calibration::measure(std::time::Duration::from_millis(10), 3).hz;
        let gap = (hz * 20e-6) as u64;
        let mut d = Detector::counting_with(Vec::new(), 7, gap, slow_count);
        let spin = |d: &mut Detector<Vec<Interval>>| {
            let until = d.received() + (hz * 1e-3) as u64;
            while d.received() < until {
                d.poll();
            }
        };
        spin(&mut d);
        // The next read, after a 1 ms sleep, is the one off the CPU for 5 ms.
        SLEEPING_CALL.store(COUNTS.load(Relaxed) + 1, Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(1));
        spin(&mut d);
        d.stop(End::Finish);
        let ivs = &d.sink;
        let ms = |ticks: u64| ticks as f64 / hz * 1e3;
        let gaps: Vec<f64> = ivs.windows(2).map(|w| ms(w[1].start - w[0].end)).collect();
        // Both off-CPU times in one gap, and in no interval (each is 1 ms of spinning plus the
        // interrupts of a busy machine, which end intervals rather than lengthen them).
        let longest_gap = gaps.iter().cloned().fold(0.0, f64::max);
        assert!(longest_gap >= 5.9, "{gaps:?}");
        let longest_interval = ivs.iter().map(|i| ms(i.end - i.start)).fold(0.0, f64::max);
        assert!(longest_interval < 5.0, "{ivs:?}");
    }
}
