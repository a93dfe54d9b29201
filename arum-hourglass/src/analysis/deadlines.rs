//! Periodic threads: did each job receive its CPU time by the end of its period? (The paper's
//! §5.4 and §5.5: "missed N deadlines, hit M".) A missed job is abandoned at its deadline; its
//! lateness is the CPU it still lacked there, the least it would have been late by. Release
//! jitter is how late the timer woke the thread for a job.

use serde::{Deserialize, Serialize};

use super::stats::Summary;
use crate::clock::Timebase;
use crate::trace::Record;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deadlines {
    pub thread: usize,
    pub jobs: usize,
    pub met: usize,
    pub missed: usize,
    /// Missed jobs: the CPU they still lacked at their deadline (a lower bound of lateness).
    pub lateness: Option<Summary>,
    /// The longest run of consecutive misses.
    pub longest_miss_run: usize,
    /// Release to served, jobs that met their deadline.
    pub response: Option<Summary>,
    /// How late the timer woke the thread for its jobs.
    pub release_jitter: Option<Summary>,
}

impl Deadlines {
    pub fn met_share(&self) -> f64 {
        self.met as f64 / self.jobs.max(1) as f64
    }
}

pub fn analyse(records: &[Record], thread: usize, tb: &Timebase) -> Deadlines {
    let (mut late, mut response, mut jitter) = (Vec::new(), Vec::new(), Vec::new());
    let (mut jobs, mut met, mut run, mut longest) = (0, 0, 0, 0);
    for r in records {
        match r {
            Record::Job(j) if j.thread as usize == thread => {
                jobs += 1;
                if j.met() {
                    met += 1;
                    run = 0;
                    response.push(tb.ns(j.finish.saturating_sub(j.release)));
                } else {
                    late.push(tb.ns(j.finish - j.deadline));
                    run += 1;
                    longest = longest.max(run);
                }
            }
            Record::Wake(w) if w.thread as usize == thread => jitter.push(w.lateness_ns as f64),
            _ => {}
        }
    }
    Deadlines {
        thread,
        jobs,
        met,
        missed: jobs - met,
        lateness: Summary::of(&late),
        longest_miss_run: longest,
        response: Summary::of(&response),
        release_jitter: Summary::of(&jitter),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Job, Wake};

    #[test]
    fn hits_misses_and_lateness() {
        let tb = super::super::timeline::tests::ns_timebase();
        let job = |release, finish| {
            Record::Job(Job {
                thread: 1,
                release,
                deadline: release + 5000,
                finish,
            })
        };
        let recs = [
            job(0, 4000),
            job(5000, 9000),
            job(10_000, 16_000),
            job(15_000, 21_500),
            Record::Wake(Wake {
                thread: 1,
                cpu: 0,
                at: 5003,
                lateness_ns: 3000,
            }),
        ];
        let d = analyse(&recs, 1, &tb);
        assert_eq!((d.jobs, d.met, d.missed), (4, 2, 2));
        let l = d.lateness.unwrap();
        assert_eq!((l.min_ns, l.max_ns), (1000.0, 1500.0));
        assert_eq!(d.longest_miss_run, 2);
        assert_eq!(d.response.unwrap().max_ns, 4000.0);
        assert_eq!(d.release_jitter.unwrap().median_ns, 3000.0);
        assert_eq!(analyse(&recs, 2, &tb).jobs, 0);
    }
}
