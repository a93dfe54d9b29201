//! The proc connector: the kernel's fork, exec and exit events for every task on the machine,
//! each stamped with CLOCK_MONOTONIC when it happened. Forks give the parent of every new task
//! (so a process tree can be followed exactly, even through processes that re-parent), exits
//! give the exact end of every task.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use netlink_packet_core::{NetlinkBuffer, NLMSG_DONE};

use crate::socket::{NlSocket, Received};

/// The connector's index and value of the proc connector, and its multicast group.
const CN_IDX_PROC: u32 = 1;
const CN_VAL_PROC: u32 = 1;
const PROC_CN_MCAST_LISTEN: u32 = 1;
const PROC_CN_MCAST_IGNORE: u32 = 2;
/// struct cn_msg: id (idx, val), seq, ack, len (u16), flags (u16).
const CN_MSG: usize = 20;
const NLMSG_HEADER: usize = 16;

const PROC_EVENT_FORK: u32 = 0x1;
const PROC_EVENT_EXEC: u32 = 0x2;
const PROC_EVENT_COMM: u32 = 0x200;
const PROC_EVENT_EXIT: u32 = 0x8000_0000;

/// One event. Times are CLOCK_MONOTONIC nanoseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcEvent {
    /// Task `child_pid` of process `child_tgid` was created by task `parent_pid` of process
    /// `parent_tgid` (a thread: `child_tgid == parent_tgid`).
    Fork {
        t_ns: u64,
        parent_pid: u32,
        parent_tgid: u32,
        child_pid: u32,
        child_tgid: u32,
    },
    Exec {
        t_ns: u64,
        pid: u32,
        tgid: u32,
    },
    /// The task's name changed (prctl PR_SET_NAME, or a write to its comm).
    Comm {
        t_ns: u64,
        pid: u32,
        tgid: u32,
        comm: String,
    },
    /// The task exited; `exit_code` is its wait status.
    Exit {
        t_ns: u64,
        pid: u32,
        tgid: u32,
        exit_code: u32,
        parent_pid: u32,
    },
}

pub struct ProcEvents {
    socket: NlSocket,
}

impl ProcEvents {
    /// Subscribes to the proc connector. Needs CAP_NET_ADMIN on most kernels; the kernel ignores
    /// subscribers outside the initial pid and user namespaces (no event then arrives).
    pub fn listen() -> io::Result<ProcEvents> {
        let socket = NlSocket::open(netlink_sys::protocols::NETLINK_CONNECTOR, CN_IDX_PROC)?;
        socket.send(&control(PROC_CN_MCAST_LISTEN))?;
        Ok(ProcEvents { socket })
    }

    /// Every fork, exec, comm and exit event queued now, appended to `out`.
    pub fn receive(&mut self, out: &mut Vec<ProcEvent>) -> Received {
        self.socket.drain(|bytes| {
            if let Some(e) = NetlinkBuffer::new_checked(bytes)
                .ok()
                .and_then(|b| parse(b.payload()))
            {
                out.push(e);
            }
        })
    }
}

/// The socket to poll for events.
impl AsFd for ProcEvents {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.fd()
    }
}

impl Drop for ProcEvents {
    fn drop(&mut self) {
        // The kernel counts listeners and skips building events when there are none.
        let _ = self.socket.send(&control(PROC_CN_MCAST_IGNORE));
    }
}

/// The message that starts or stops the events (the operation alone: every kernel since the
/// connector's beginning accepts that form).
fn control(op: u32) -> Vec<u8> {
    let mut bytes = vec![0u8; NLMSG_HEADER + CN_MSG + 4];
    let len = bytes.len() as u32;
    let mut msg = NetlinkBuffer::new(&mut bytes[..]);
    msg.set_length(len);
    msg.set_message_type(NLMSG_DONE);
    msg.set_sequence_number(0);
    msg.set_port_number(std::process::id());
    let payload = msg.payload_mut();
    payload[0..4].copy_from_slice(&CN_IDX_PROC.to_ne_bytes());
    payload[4..8].copy_from_slice(&CN_VAL_PROC.to_ne_bytes());
    payload[16..18].copy_from_slice(&4u16.to_ne_bytes());
    payload[CN_MSG..CN_MSG + 4].copy_from_slice(&op.to_ne_bytes());
    bytes
}

/// An event from a connector message's payload (cn_msg, then struct proc_event).
fn parse(payload: &[u8]) -> Option<ProcEvent> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(
            payload.get(at..at + 4)?.try_into().ok()?,
        ))
    };
    if u32_at(0)? != CN_IDX_PROC || u32_at(4)? != CN_VAL_PROC {
        return None;
    }
    // struct proc_event: what, cpu, timestamp_ns (aligned to 8), then the event's data.
    let ev = CN_MSG;
    let what = u32_at(ev)?;
    let t_ns = u64::from_ne_bytes(payload.get(ev + 8..ev + 16)?.try_into().ok()?);
    let data = ev + 16;
    let field = |i: usize| u32_at(data + 4 * i);
    Some(match what {
        PROC_EVENT_FORK => ProcEvent::Fork {
            t_ns,
            parent_pid: field(0)?,
            parent_tgid: field(1)?,
            child_pid: field(2)?,
            child_tgid: field(3)?,
        },
        PROC_EVENT_EXEC => ProcEvent::Exec {
            t_ns,
            pid: field(0)?,
            tgid: field(1)?,
        },
        PROC_EVENT_COMM => {
            let raw = payload.get(data + 8..data + 24)?;
            let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
            ProcEvent::Comm {
                t_ns,
                pid: field(0)?,
                tgid: field(1)?,
                comm: String::from_utf8_lossy(&raw[..end]).into_owned(),
            }
        }
        PROC_EVENT_EXIT => ProcEvent::Exit {
            t_ns,
            pid: field(0)?,
            tgid: field(1)?,
            exit_code: field(2)?,
            // Kernels before 4.18 end the exit event after the exit signal.
            parent_pid: field(4).unwrap_or(0),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(what: u32, t: u64, data: &[u32]) -> Vec<u8> {
        let mut p = vec![0u8; CN_MSG];
        p[0..4].copy_from_slice(&CN_IDX_PROC.to_ne_bytes());
        p[4..8].copy_from_slice(&CN_VAL_PROC.to_ne_bytes());
        p.extend_from_slice(&what.to_ne_bytes());
        p.extend_from_slice(&0u32.to_ne_bytes());
        p.extend_from_slice(&t.to_ne_bytes());
        for d in data {
            p.extend_from_slice(&d.to_ne_bytes());
        }
        p
    }

    #[test]
    fn fork_and_exit_events_are_read() {
        assert_eq!(
            parse(&event(PROC_EVENT_FORK, 5, &[10, 10, 11, 10])),
            Some(ProcEvent::Fork {
                t_ns: 5,
                parent_pid: 10,
                parent_tgid: 10,
                child_pid: 11,
                child_tgid: 10
            })
        );
        assert_eq!(
            parse(&event(PROC_EVENT_EXIT, 9, &[11, 10, 256, 17, 1, 1])),
            Some(ProcEvent::Exit {
                t_ns: 9,
                pid: 11,
                tgid: 10,
                exit_code: 256,
                parent_pid: 1
            })
        );
        // Another connector's message, or an event of no interest here.
        let mut other = event(PROC_EVENT_FORK, 1, &[1, 1, 2, 2]);
        other[0] = 9;
        assert_eq!(parse(&other), None);
        assert_eq!(parse(&event(0x4, 1, &[1, 1, 0, 0])), None);
    }

    #[test]
    fn the_listen_message_is_a_connector_message() {
        let m = control(PROC_CN_MCAST_LISTEN);
        let b = NetlinkBuffer::new_checked(&m[..]).unwrap();
        assert_eq!(b.message_type(), NLMSG_DONE);
        assert_eq!(b.payload().len(), CN_MSG + 4);
        assert_eq!(&b.payload()[CN_MSG..], &1u32.to_ne_bytes());
    }
}
