//! The execution trace: records of the intervals of uninterrupted CPU time each thread received,
//! of periodic jobs, and of timer wake-ups, in one buffer allocated (and faulted in) before the
//! run, so that recording never allocates, faults or takes a lock.
//!
//! Threads claim slots with one atomic add and write them with relaxed stores; the buffer is read
//! only after every writer was joined, which orders the writes before the reads.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use serde::{Deserialize, Serialize};

/// Why an interval of CPU time ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Two successive TSC reads were more than GAP apart. `switched`: the thread's own count of
    /// context switches (getrusage RUSAGE_THREAD) rose across the gap, so another task ran;
    /// otherwise only interrupts, kernel work or the hypervisor took the CPU.
    Gap { switched: bool },
    /// The thread yielded (sched_yield).
    Yield,
    /// The thread blocked on its timer.
    Block,
    /// The thread's active window ended.
    Finish,
}

/// An interval of uninterrupted CPU time, in TSC ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    pub thread: u16,
    /// The CPU it ran on (RDTSCP's TSC_AUX at the interval's first read).
    pub cpu: u16,
    pub start: u64,
    pub end: u64,
    pub ended: End,
}

/// One job of a periodic thread, in TSC ticks: released at `release`, due at `deadline`,
/// served (received its amount of CPU) at `finish`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub thread: u16,
    pub release: u64,
    pub deadline: u64,
    pub finish: u64,
}

impl Job {
    pub fn met(&self) -> bool {
        self.finish <= self.deadline
    }
}

/// A timer wake-up: the thread ran again at `at` (TSC), `lateness_ns` after the time it asked
/// for (both read from CLOCK_MONOTONIC, as cyclictest does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wake {
    pub thread: u16,
    pub cpu: u16,
    pub at: u64,
    pub lateness_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    Interval(Interval),
    Job(Job),
    Wake(Wake),
}

const KIND_INTERVAL: u64 = 1;
const KIND_JOB: u64 = 2;
const KIND_WAKE: u64 = 3;

impl Record {
    /// Four words: kind, end reason, thread and CPU packed in the first.
    fn encode(&self) -> [u64; 4] {
        let meta = |kind: u64, code: u64, thread: u16, cpu: u16| {
            kind | code << 8 | (thread as u64) << 16 | (cpu as u64) << 32
        };
        match *self {
            Record::Interval(i) => {
                let code = match i.ended {
                    End::Gap { switched: false } => 0,
                    End::Gap { switched: true } => 1,
                    End::Yield => 2,
                    End::Block => 3,
                    End::Finish => 4,
                };
                [
                    meta(KIND_INTERVAL, code, i.thread, i.cpu),
                    i.start,
                    i.end,
                    0,
                ]
            }
            Record::Job(j) => [
                meta(KIND_JOB, 0, j.thread, 0),
                j.release,
                j.deadline,
                j.finish,
            ],
            Record::Wake(w) => [meta(KIND_WAKE, 0, w.thread, w.cpu), w.at, w.lateness_ns, 0],
        }
    }

    fn decode(w: [u64; 4]) -> Option<Record> {
        let (kind, code) = (w[0] & 0xFF, (w[0] >> 8) & 0xFF);
        let (thread, cpu) = ((w[0] >> 16) as u16, (w[0] >> 32) as u16);
        Some(match kind {
            KIND_INTERVAL => Record::Interval(Interval {
                thread,
                cpu,
                start: w[1],
                end: w[2],
                ended: match code {
                    0 => End::Gap { switched: false },
                    1 => End::Gap { switched: true },
                    2 => End::Yield,
                    3 => End::Block,
                    _ => End::Finish,
                },
            }),
            KIND_JOB => Record::Job(Job {
                thread,
                release: w[1],
                deadline: w[2],
                finish: w[3],
            }),
            KIND_WAKE => Record::Wake(Wake {
                thread,
                cpu,
                at: w[1],
                lateness_ns: w[2],
            }),
            _ => return None,
        })
    }
}

/// The preallocated buffer.
pub struct Trace {
    slots: Box<[[AtomicU64; 4]]>,
    next: AtomicUsize,
    dropped: AtomicU64,
}

impl Trace {
    /// A buffer of `capacity` records; every page is written here, so none faults later.
    pub fn new(capacity: usize) -> Trace {
        let slots: Box<[[AtomicU64; 4]]> = (0..capacity)
            .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
            .collect();
        Trace {
            slots,
            next: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Appends a record, or counts it as dropped when the buffer is full.
    #[inline]
    pub fn push(&self, r: Record) {
        let i = self.next.fetch_add(1, Relaxed);
        match self.slots.get(i) {
            Some(slot) => {
                for (s, w) in slot.iter().zip(r.encode()) {
                    s.store(w, Relaxed);
                }
            }
            None => {
                self.dropped.fetch_add(1, Relaxed);
            }
        }
    }

    /// Records that did not fit.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Relaxed)
    }

    /// The records, in the order they were claimed. Call only after the writers were joined.
    pub fn records(&self) -> Vec<Record> {
        let n = self.next.load(Relaxed).min(self.slots.len());
        self.slots[..n]
            .iter()
            .filter_map(|s| Record::decode(std::array::from_fn(|k| s[k].load(Relaxed))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_kind_survives_the_buffer() {
        let t = Trace::new(8);
        let recs = [
            Record::Interval(Interval {
                thread: 3,
                cpu: 1,
                start: 10,
                end: 20,
                ended: End::Gap { switched: true },
            }),
            Record::Interval(Interval {
                thread: 65535,
                cpu: 4095,
                start: u64::MAX - 1,
                end: u64::MAX,
                ended: End::Block,
            }),
            Record::Job(Job {
                thread: 2,
                release: 1,
                deadline: 5,
                finish: 7,
            }),
            Record::Wake(Wake {
                thread: 1,
                cpu: 0,
                at: 99,
                lateness_ns: 12_345,
            }),
        ];
        for r in recs {
            t.push(r);
        }
        assert_eq!(t.records(), recs);
        assert_eq!(t.dropped(), 0);
    }

    #[test]
    fn a_full_buffer_counts_what_it_drops() {
        let t = Trace::new(2);
        let j = Record::Job(Job {
            thread: 0,
            release: 0,
            deadline: 1,
            finish: 2,
        });
        for _ in 0..5 {
            t.push(j);
        }
        assert_eq!(t.records().len(), 2);
        assert_eq!(t.dropped(), 3);
    }

    #[test]
    fn threads_share_the_buffer_without_losing_records() {
        let t = std::sync::Arc::new(Trace::new(4000));
        let hs: Vec<_> = (0..4u16)
            .map(|th| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for k in 0..1000 {
                        t.push(Record::Wake(Wake {
                            thread: th,
                            cpu: 0,
                            at: k,
                            lateness_ns: k,
                        }));
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let recs = t.records();
        for th in 0..4u16 {
            let mine: Vec<u64> = recs
                .iter()
                .filter_map(|r| match r {
                    Record::Wake(w) if w.thread == th => Some(w.at),
                    _ => None,
                })
                .collect();
            assert_eq!(mine, (0..1000).collect::<Vec<_>>());
        }
    }
}
