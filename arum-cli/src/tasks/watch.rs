//! The thread that reads the kernel's exit records and process events while the program runs,
//! so the sockets never fill up, and reads the command line of each process of the tree as it
//! execs (a process may be gone before any /proc sample sees it).

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::thread::JoinHandle;
use std::time::Duration;

use arum_taskstats::{ExitListener, ExitRecord, ProcEvent, ProcEvents, TaskStats};
use nix::fcntl::OFlag;

use super::sample::{command, Command};

/// How long to wait, after the reap, for the launched process's own exit event: the kernel
/// sends it just after the exit is visible to the parent.
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
}

impl State {
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
                }
                ProcEvent::Exit { pid, .. } if pid == self.root => self.root_exited = true,
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
            if state.root_exited || events.is_none() || since.elapsed() > LAST_EVENT_WAIT {
                return state.collected;
            }
        }
        let fds: Vec<i32> = [
            exits.as_ref().map(ExitListener::fd),
            events.as_ref().map(ProcEvents::fd),
        ]
        .into_iter()
        .flatten()
        .chain(stopping.is_none().then(|| stop.as_fd().as_raw_fd()))
        .collect();
        let timeout = match stopping {
            Some(since) => LAST_EVENT_WAIT.saturating_sub(since.elapsed()).as_millis() as i32,
            None => -1,
        };
        poll(&fds, timeout);
        if stopping.is_none() && readable(stop.as_raw_fd()) {
            stopping = Some(std::time::Instant::now());
        }
    }
}

/// Waits until one of `fds` is readable or `timeout_ms` passes (-1: no limit). Whether one is.
fn poll(fds: &[i32], timeout_ms: i32) -> bool {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        // SAFETY: `pfds` is a valid array of pollfd of the length given.
        let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
        if r >= 0 {
            return r > 0;
        }
        if nix::errno::Errno::last() != nix::errno::Errno::EINTR {
            return false;
        }
    }
}

fn readable(fd: i32) -> bool {
    poll(&[fd], 0)
}
