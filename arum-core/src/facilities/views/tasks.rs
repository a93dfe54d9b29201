//! The hierarchical and percentage views: tasks delimited by a begin and an end probe, the probes
//! nested in each, aggregated over tasks, with each nested probe's share of the tasks' time.
//!
//! A begin call that returns a descriptor (accept4, openat...) starts a task keyed by it: the task
//! ends with the end call on that descriptor (close), and the calls nested in it are those whose
//! first argument is that descriptor — on a server multiplexing connections in one thread, the
//! calls of one connection. Any other begin probe starts a task in its thread, ended by the next
//! end probe in that thread, with every probe of the thread in between nested. The same probe as
//! begin and end (a function such as ngx_http_process_request) makes each of its calls a task,
//! with the probes its thread hit during the call nested.

use std::collections::HashMap;

use crate::facilities::syscalls::select::returns_fd;
use crate::facilities::views::model::{NestedCall, NestedProbe, SpanSummary, TaskLine, TasksView};
use crate::perf::records::event::ProbeEvent;
use crate::perf::records::stats::Durations;

use super::settings::TaskProbes;

const SLOWEST: usize = 5;

struct Task {
    pid: u32,
    tid: u32,
    fd: Option<i64>,
    start: u64,
    end: u64,
    nested: Vec<ProbeEvent>,
}

/// `events` in time order.
pub fn build(events: &[ProbeEvent], probes: &[String], t: &TaskProbes) -> TasksView {
    let by_fd = returns_fd(&t.begin);
    let mut view = TasksView {
        begin: t.begin.clone(),
        end: t.end.clone(),
        keyed_by: if by_fd { "descriptor" } else { "thread" }.into(),
        ..TasksView::default()
    };
    let index = |name: &str| probes.iter().position(|p| p == name).map(|i| i as u32);
    let (Some(begin), Some(end)) = (index(&t.begin), index(&t.end)) else {
        return view;
    };
    // Times in the views count from the first record, as the overview's do.
    let origin = events.first().map_or(0, |e| e.start);
    let mut open: HashMap<(u32, u64), Task> = HashMap::new();
    let mut done: Vec<Task> = Vec::new();
    if begin == end {
        view.keyed_by = "call".into();
        done = calls(events, begin);
        return summarise(view, done, probes, 0, origin);
    }
    // Open tasks by (pid, descriptor or tid).
    for e in events {
        let key = |v: u64| (e.pid, v);
        if e.probe == begin && (!by_fd || e.ret >= 0) {
            let k = key(if by_fd { e.ret as u64 } else { e.tid as u64 });
            // A begin on a key still open (its end was not seen) replaces it.
            open.insert(
                k,
                Task {
                    pid: e.pid,
                    tid: e.tid,
                    fd: by_fd.then_some(e.ret),
                    start: e.start,
                    end: 0,
                    nested: Vec::new(),
                },
            );
        } else if e.probe == end {
            let k = key(if by_fd { e.arg } else { e.tid as u64 });
            if let Some(mut task) = open.remove(&k) {
                task.end = e.start + e.duration;
                done.push(task);
            }
        } else if e.syscall || !by_fd {
            let k = key(if by_fd { e.arg } else { e.tid as u64 });
            if let Some(task) = open.get_mut(&k) {
                task.nested.push(*e);
            }
        }
    }
    let still_open = open.len() as u64;
    summarise(view, done, probes, still_open, origin)
}

/// Every call of `probe` as a task, with what its thread did during it.
fn calls(events: &[ProbeEvent], probe: u32) -> Vec<Task> {
    let mut done = Vec::new();
    for (i, e) in events.iter().enumerate().filter(|(_, e)| e.probe == probe) {
        let end = e.start + e.duration;
        let nested = events[i + 1..]
            .iter()
            .take_while(|n| n.start < end)
            .filter(|n| n.tid == e.tid && n.start + n.duration <= end)
            .copied()
            .collect();
        done.push(Task {
            pid: e.pid,
            tid: e.tid,
            fd: None,
            start: e.start,
            end,
            nested,
        });
    }
    done
}

/// The aggregates and the slowest tasks of `done`.
/// The view from the finished tasks; `origin` is the first record's time, from which the
/// slowest tasks' starts count.
fn summarise(
    mut view: TasksView,
    mut done: Vec<Task>,
    probes: &[String],
    open: u64,
    origin: u64,
) -> TasksView {
    view.open = open;
    let mut durations = Durations::default();
    let mut nested: Vec<(u64, Durations)> = vec![(0, Durations::default()); probes.len()];
    // Time in direct children of the task, per probe: a call inside another nested call (writev
    // inside ngx_http_output_filter) is part of that call's share, not counted twice.
    let mut direct = vec![0u64; probes.len()];
    for task in &done {
        durations.record(task.end - task.start);
        let mut seen = vec![false; probes.len()];
        let mut open_until: HashMap<u32, u64> = HashMap::new();
        for n in &task.nested {
            let p = n.probe as usize;
            if !seen[p] {
                seen[p] = true;
                nested[p].0 += 1;
            }
            nested[p].1.record(n.duration);
            let until = open_until.entry(n.tid).or_default();
            if n.start >= *until {
                direct[p] += n.duration;
                *until = n.start + n.duration;
            }
        }
    }
    view.tasks = done.len() as u64;
    view.duration = SpanSummary::of(&durations);
    let total = durations.total_ns.max(1) as f64;
    view.nested = nested
        .iter()
        .enumerate()
        .filter(|(_, (tasks, _))| *tasks > 0)
        .map(|(i, (tasks, d))| NestedProbe {
            probe: probes[i].clone(),
            tasks: *tasks,
            calls: d.count,
            calls_per_task: d.count as f64 / done.len() as f64,
            duration: SpanSummary::of(d),
            share_pct: direct[i] as f64 * 100.0 / total,
        })
        .collect();
    view.nested.sort_by(|a, b| {
        b.share_pct
            .total_cmp(&a.share_pct)
            .then(a.probe.cmp(&b.probe))
    });
    let in_nested: f64 = view.nested.iter().map(|n| n.share_pct).sum();
    view.unaccounted_pct = if done.is_empty() {
        0.0
    } else {
        (100.0 - in_nested).max(0.0)
    };
    done.sort_by_key(|t| std::cmp::Reverse(t.end - t.start));
    view.slowest = done
        .iter()
        .take(SLOWEST)
        .map(|t| TaskLine {
            pid: t.pid,
            tid: t.tid,
            start_ns: t.start.saturating_sub(origin),
            duration_ns: t.end - t.start,
            fd: t.fd,
            nested: t
                .nested
                .iter()
                .map(|n| NestedCall {
                    probe: probes[n.probe as usize].clone(),
                    offset_ns: n.start - t.start,
                    duration_ns: n.duration,
                })
                .collect(),
        })
        .collect();
    view
}

#[cfg(test)]
mod tests {
    use super::super::testing::journal;
    use super::*;

    fn probes(begin: &str, end: &str) -> TaskProbes {
        TaskProbes {
            begin: begin.into(),
            end: end.into(),
        }
    }

    #[test]
    fn connections_are_tasks_keyed_by_the_accepted_descriptor() {
        // accept4 → 5 and → 6 interleaved in one thread; reads and writes on each; close(5) and
        // close(6); an epoll_wait on descriptor 3 belongs to neither; a third accept stays open.
        let names = ["accept4", "read", "writev", "close", "epoll_wait"];
        let j = journal(
            &names,
            &[
                (0, 1, 1, 0, 10, 4, 5),
                (0, 1, 1, 20, 10, 4, 6),
                (1, 1, 1, 40, 30, 5, 100),
                (1, 1, 1, 80, 10, 6, 100),
                (4, 1, 1, 95, 3, 3, 1),
                (2, 1, 1, 100, 50, 5, 200),
                (3, 1, 1, 160, 40, 5, 0),
                (2, 1, 1, 210, 20, 6, 200),
                (3, 1, 1, 240, 10, 6, 0),
                (0, 1, 1, 300, 10, 4, 7),
            ],
        );
        let v = build(&j.events, &j.names, &probes("accept4", "close"));
        // Starts count from the first record, whatever the clock's origin (boot, here 0).
        let mut later = j.events.clone();
        later.iter_mut().for_each(|e| e.start += 5_000_000_000);
        let shifted = build(&later, &j.names, &probes("accept4", "close"));
        assert_eq!(shifted.slowest, v.slowest);
        assert_eq!((v.slowest[0].start_ns, v.slowest[1].start_ns), (20, 0));
        assert_eq!(v.keyed_by, "descriptor");
        assert_eq!((v.tasks, v.open), (2, 1));
        // fd 5: 0..200, fd 6: 20..250.
        assert_eq!(v.duration.total_ns, 200 + 230);
        assert_eq!(v.slowest[0].fd, Some(6));
        assert_eq!(v.slowest[1].duration_ns, 200);
        let read = v.nested.iter().find(|n| n.probe == "read").unwrap();
        assert_eq!((read.tasks, read.calls, read.duration.total_ns), (2, 2, 40));
        assert!((read.share_pct - 40.0 * 100.0 / 430.0).abs() < 1e-9);
        assert!(v.nested.iter().all(|n| n.probe != "epoll_wait"));
        let shares: f64 = v.nested.iter().map(|n| n.share_pct).sum();
        assert!((shares + v.unaccounted_pct - 100.0).abs() < 1e-9);
        assert_eq!(
            v.slowest[1]
                .nested
                .iter()
                .map(|n| n.offset_ns)
                .collect::<Vec<_>>(),
            [40, 100]
        );
    }

    #[test]
    fn other_probes_delimit_tasks_per_thread() {
        let j = journal(
            &["handle", "read", "done"],
            &[
                (0, 1, 1, 0, 5, 0, 0),
                (0, 1, 2, 2, 5, 0, 0),
                (1, 1, 1, 10, 10, 0, 0),
                (1, 1, 2, 12, 30, 0, 0),
                (2, 1, 1, 30, 0, 0, 0),
            ],
        );
        let v = build(&j.events, &j.names, &probes("handle", "done"));
        assert_eq!(v.keyed_by, "thread");
        assert_eq!((v.tasks, v.open), (1, 1));
        assert_eq!(v.nested[0].calls, 1);
        assert_eq!(v.nested[0].duration.total_ns, 10);
        // Unknown probes: no task, no panic.
        let none = build(&j.events, &j.names, &probes("accept4", "close"));
        assert_eq!(none.tasks, 0);
    }

    #[test]
    fn one_probe_as_begin_and_end_makes_each_call_a_task() {
        // handle (a function) on thread 1: 0..100 with a read and a function inside; a read on
        // thread 2 at the same time is not its.
        let mut j = journal(
            &["handle", "read", "parse"],
            &[
                (0, 1, 1, 0, 100, 0, 0),
                (1, 1, 1, 10, 20, 3, 5),
                (1, 1, 2, 15, 20, 3, 5),
                (2, 1, 1, 40, 30, 0, 0),
                (0, 1, 1, 200, 50, 0, 0),
            ],
        );
        for e in &mut j.events {
            e.syscall = e.probe == 1;
        }
        let v = build(&j.events, &j.names, &probes("handle", "handle"));
        assert_eq!((v.keyed_by.as_str(), v.tasks, v.open), ("call", 2, 0));
        assert_eq!(v.duration.total_ns, 150);
        let shares: Vec<(&str, u64)> = v
            .nested
            .iter()
            .map(|n| (n.probe.as_str(), n.calls))
            .collect();
        assert_eq!(shares, [("parse", 1), ("read", 1)]);
        assert!((v.unaccounted_pct - 100.0 * (150.0 - 50.0) / 150.0).abs() < 1e-9);
    }
}
