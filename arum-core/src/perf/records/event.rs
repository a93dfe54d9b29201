//! One completed probe interval, as every probing facility hands it to the views (`views`): the
//! compact record of ALMT's probe points (time, process, thread, probe) with its duration and the
//! values the probe saw.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// A journal several facilities add their events to (function probes and system calls).
pub type SharedJournal = Arc<Mutex<Journal>>;

/// A paired entry and exit of one probe in one thread. Times in ns of CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeEvent {
    /// Index of the probe's name in the journal's list.
    pub probe: u32,
    pub pid: u32,
    pub tid: u32,
    pub start: u64,
    pub duration: u64,
    /// The first argument (a system call's), 0 when not recorded.
    pub arg: u64,
    /// The return value (a system call's), 0 when not recorded.
    pub ret: i64,
    /// Whether `arg` is a system call's first argument (a descriptor for many).
    pub syscall: bool,
}

/// The events of a run and the names of their probes.
#[derive(Debug, Clone, Default)]
pub struct Journal {
    pub names: Vec<String>,
    pub events: Vec<ProbeEvent>,
    /// Events not kept because the journal was full (see [`Journal::LIMIT`]).
    pub dropped: u64,
}

impl Journal {
    /// Events kept at most (48 bytes each: 2 Mi events are 96 MiB, half a minute of a server
    /// answering 10,000 requests/s with six system calls each). The statistics of the sections
    /// are kept apart and stay exact beyond it; only the views lose the later events (and say so).
    pub const LIMIT: usize = 2 << 20;

    /// The index of probe `name`, added on first use.
    pub fn probe(&mut self, name: &str) -> u32 {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i as u32,
            None => {
                self.names.push(name.to_string());
                (self.names.len() - 1) as u32
            }
        }
    }

    /// Adds `other`'s events, its probes renumbered into this journal's.
    pub fn append(&mut self, other: Journal) {
        let map: Vec<u32> = other.names.iter().map(|n| self.probe(n)).collect();
        self.dropped += other.dropped;
        for mut e in other.events {
            e.probe = map[e.probe as usize];
            self.push(e);
        }
    }

    pub fn push(&mut self, e: ProbeEvent) {
        if self.events.len() < Self::LIMIT {
            self.events.push(e);
        } else {
            self.dropped += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_events_keep_their_probe_names() {
        let event = |probe| ProbeEvent {
            probe,
            pid: 1,
            tid: 1,
            start: 0,
            duration: 1,
            arg: 0,
            ret: 0,
            syscall: false,
        };
        let mut a = Journal::default();
        let read = a.probe("read");
        a.push(event(read));
        let mut b = Journal::default();
        let f = b.probe("handle");
        let r = b.probe("read");
        b.push(event(f));
        b.push(event(r));
        a.append(b);
        let names: Vec<&str> = a
            .events
            .iter()
            .map(|e| a.names[e.probe as usize].as_str())
            .collect();
        assert_eq!(names, ["read", "handle", "read"]);
        assert_eq!(a.names.len(), 2);
    }
}
