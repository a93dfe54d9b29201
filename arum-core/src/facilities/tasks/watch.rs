//! The thread that reads the kernel's exit records and process events while the program runs,
//! so the sockets never fill up, and reads the command line of each process of the tree as it
//! execs (a process may be gone before any /proc sample sees it).

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::thread::JoinHandle;
use std::time::Duration;

use arum_taskstats::{ExitListener, ExitRecord, ProcEvent, ProcEvents, TaskStats};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::sample::{command, Command};

/// How long to wait, after the reap, for the exit events of the launched process's threads: the
/// kernel sends each just after the exit is visible to the parent (do_exit: exit_notify, then
/// proc_exit_connector), so the last thread's can come after wait4 has returned.
const LAST_EVENT_WAIT: Duration = Duration::from_millis(200);

/// What the watcher gathered.
#[derive(Debug, Default)]
pub struct Collected {
    /// Every exit record of a task on the registered CPUs (the tree's are picked later).
    pub exits: Vec<TaskStats>,
    /// Process totals of delays, by process, for multi-threaded processes.
    pub groups: HashMap<u32, TaskStats>,
    pub events: Vec<ProcEvent>,
    /// The kernel dropped exit records or events (a socket overflowed).
    pub exits_dropped: bool,
    pub events_dropped: bool,
    /// Commands of the tree's processes, read at their exec.
    pub commands: HashMap<u32, Command>,
}

pub struct Watch {
    stop: OwnedFd,
    thread: Option<JoinHandle<Collected>>,
}

impl Watch {
    /// Starts reading `exits` and `events` for the tree of `root`.
    pub fn start(
        exits: Option<ExitListener>,
        events: Option<ProcEvents>,
        root: u32,
    ) -> std::io::Result<Watch> {
        let (stop_r, stop_w) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let thread = std::thread::Builder::new()
            .name("arum-exits".into())
            .spawn(move || run(exits, events, root, stop_r))?;
        Ok(Watch {
            stop: stop_w,
            thread: Some(thread),
        })
    }

    /// Stops the watcher after it has read everything queued, and returns what it gathered.
    pub fn finish(mut self) -> Collected {
        self.halt().unwrap_or_default()
    }

    fn halt(&mut self) -> Option<Collected> {
        let _ = nix::unistd::write(&self.stop, &[1]);
        self.thread.take()?.join().ok()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.halt();
    }
}

struct State {
    collected: Collected,
    /// Processes of the tree, as forks are seen.
    members: HashSet<u32>,
    root: u32,
    root_exited: bool,
    /// The launched process's other threads, from their fork to their exit event.
    root_threads: HashSet<u32>,
}

impl State {
    /// Every thread of the launched process has sent its exit event (all have exited once it is
    /// reaped; only the events may still be on their way).
    fn root_gone(&self) -> bool {
        self.root_exited && self.root_threads.is_empty()
    }

    fn take_events(&mut self, new: Vec<ProcEvent>) {
        for e in &new {
            match *e {
                ProcEvent::Fork {
                    parent_tgid,
                    child_pid,
                    child_tgid,
                    ..
                } if child_pid == child_tgid && self.members.contains(&parent_tgid) => {
                    self.members.insert(child_tgid);
                }
                ProcEvent::Exec { tgid, .. } if self.members.contains(&tgid) => {
                    if let Some(c) = command(tgid) {
                        self.collected.commands.insert(tgid, c);
                    }
                    // An exec leaves one thread, under the process's pid, whichever thread
                    // called it: the others are gone, and the caller's own tid with them.
                    if tgid == self.root {
                        self.root_threads.clear();
                    }
                }
                ProcEvent::Fork {
                    child_pid,
                    child_tgid,
                    ..
                } if child_tgid == self.root && child_pid != self.root => {
                    self.root_threads.insert(child_pid);
                }
                ProcEvent::Exit { pid, .. } if pid == self.root => self.root_exited = true,
                ProcEvent::Exit { pid, tgid, .. } if tgid == self.root => {
                    self.root_threads.remove(&pid);
                }
                _ => {}
            }
        }
        self.collected.events.extend(new);
    }

    fn take_exits(&mut self, new: Vec<ExitRecord>) {
        for r in new {
            match r {
                ExitRecord::Task(t) => self.collected.exits.push(t),
                ExitRecord::Group { tgid, stats } => {
                    self.collected.groups.insert(tgid, stats);
                }
            }
        }
    }
}

fn run(
    mut exits: Option<ExitListener>,
    mut events: Option<ProcEvents>,
    root: u32,
    stop: OwnedFd,
) -> Collected {
    let mut state = State {
        collected: Collected::default(),
        members: HashSet::from([root]),
        root,
        root_exited: false,
        root_threads: HashSet::new(),
    };
    let mut stopping: Option<std::time::Instant> = None;
    loop {
        let mut drain = |state: &mut State| {
            if let Some(l) = &mut exits {
                let mut new = Vec::new();
                state.collected.exits_dropped |= l.receive(&mut new).overflowed;
                state.take_exits(new);
            }
            if let Some(e) = &mut events {
                let mut new = Vec::new();
                state.collected.events_dropped |= e.receive(&mut new).overflowed;
                state.take_events(new);
            }
        };
        drain(&mut state);
        if let Some(since) = stopping {
            // Other tasks' records keep coming on a busy machine: the wait is bounded.
            if state.root_gone() || events.is_none() || since.elapsed() > LAST_EVENT_WAIT {
                return state.collected;
            }
        }
        let fds: Vec<BorrowedFd<'_>> = [
            exits.as_ref().map(AsFd::as_fd),
            events.as_ref().map(AsFd::as_fd),
        ]
        .into_iter()
        .flatten()
        .chain(stopping.is_none().then(|| stop.as_fd()))
        .collect();
        let timeout = match stopping {
            Some(since) => PollTimeout::try_from(LAST_EVENT_WAIT.saturating_sub(since.elapsed()))
                .unwrap_or(PollTimeout::MAX),
            None => PollTimeout::NONE,
        };
        wait_readable(&fds, timeout);
        if stopping.is_none() && wait_readable(&[stop.as_fd()], PollTimeout::ZERO) {
            stopping = Some(std::time::Instant::now());
        }
    }
}

/// Waits until one of `fds` is readable or `timeout` passes. Whether one is.
fn wait_readable(fds: &[BorrowedFd<'_>], timeout: PollTimeout) -> bool {
    let mut pfds: Vec<PollFd<'_>> = fds
        .iter()
        .map(|&fd| PollFd::new(fd, PollFlags::POLLIN))
        .collect();
    loop {
        match poll(&mut pfds, timeout) {
            Ok(n) => return n > 0,
            Err(Errno::EINTR) => continue,
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            collected: Collected::default(),
            members: HashSet::from([100]),
            root: 100,
            root_exited: false,
            root_threads: HashSet::new(),
        }
    }

    fn fork(child_pid: u32, child_tgid: u32) -> ProcEvent {
        ProcEvent::Fork {
            t_ns: 0,
            parent_pid: 100,
            parent_tgid: 100,
            child_pid,
            child_tgid,
        }
    }

    fn exit(pid: u32, tgid: u32) -> ProcEvent {
        ProcEvent::Exit {
            t_ns: 0,
            pid,
            tgid,
            exit_code: 0,
            parent_pid: 1,
        }
    }

    #[test]
    fn the_launched_process_is_gone_when_its_last_thread_has_sent_its_exit() {
        let mut s = state();
        // Two threads and a child process; the leader's exit event comes before a thread's.
        s.take_events(vec![fork(101, 100), fork(102, 100), fork(200, 200)]);
        s.take_events(vec![exit(101, 100), exit(100, 100)]);
        assert!(s.root_exited);
        assert!(!s.root_gone(), "thread 102 has not sent its exit");
        s.take_events(vec![exit(102, 100)]);
        // The child process may outlive the launched one: it is not waited for.
        assert!(s.root_gone());
    }

    #[test]
    fn an_exec_leaves_the_launched_process_one_thread() {
        let mut s = state();
        s.take_events(vec![fork(101, 100), fork(102, 100)]);
        // Thread 102 execs: 101 is killed (its exit is sent), 102 continues as pid 100.
        s.take_events(vec![
            exit(101, 100),
            ProcEvent::Exec {
                t_ns: 0,
                pid: 100,
                tgid: 100,
            },
        ]);
        s.take_events(vec![exit(100, 100)]);
        assert!(s.root_gone());
    }
}
