//! Exit records: a taskstats listener registered for a set of CPUs receives one record for
//! every task that exits on them, sent by the exiting task itself before it is gone (before its
//! parent can learn of the exit), so a record is never later than the parent's wait.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use netlink_packet_core::{NetlinkMessage, NetlinkPayload, NlasIterator};

use crate::genl::{self, string_attr, Genl};
use crate::socket::{NlSocket, Received};
use crate::stats::TaskStats;

const FAMILY: &str = "TASKSTATS";
const GENL_VERSION: u8 = 1;
const CMD_GET: u8 = 1;
const CMD_NEW: u8 = 2;
const ATTR_REGISTER_CPUMASK: u16 = 3;
const ATTR_DEREGISTER_CPUMASK: u16 = 4;
const TYPE_PID: u16 = 1;
const TYPE_TGID: u16 = 2;
const TYPE_STATS: u16 = 3;
const TYPE_AGGR_PID: u16 = 4;
const TYPE_AGGR_TGID: u16 = 5;

/// One exit record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitRecord {
    /// A task (thread) exited.
    Task(TaskStats),
    /// The last thread of a multi-threaded process exited: the process's delay totals.
    Group { tgid: u32, stats: TaskStats },
}

pub struct ExitListener {
    socket: NlSocket,
    family: u16,
    cpumask: String,
}

impl ExitListener {
    /// Registers for the exit records of tasks exiting on `cpumask` (a cpulist: `0-3,8`).
    /// Needs CAP_NET_ADMIN (`PermissionDenied` without).
    pub fn register(cpumask: &str) -> io::Result<ExitListener> {
        let mut socket = NlSocket::open(netlink_sys::protocols::NETLINK_GENERIC, 0)?;
        let family = genl::family_id(&mut socket, FAMILY)?;
        let register = Genl::new(
            family,
            CMD_GET,
            GENL_VERSION,
            &[string_attr(ATTR_REGISTER_CPUMASK, cpumask)],
        );
        genl::request(&mut socket, register, 2)?;
        Ok(ExitListener {
            socket,
            family,
            cpumask: cpumask.to_string(),
        })
    }

    /// Every record queued now, appended to `out`.
    pub fn receive(&mut self, out: &mut Vec<ExitRecord>) -> Received {
        let family = self.family;
        self.socket.drain(|bytes| {
            if let Ok(NetlinkMessage {
                payload: NetlinkPayload::InnerMessage(genl),
                ..
            }) = NetlinkMessage::<Genl>::deserialize(bytes)
            {
                if genl.family == family && genl.cmd == CMD_NEW {
                    parse_exit(&genl, out);
                }
            }
        })
    }
}

/// The socket to poll for records.
impl AsFd for ExitListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.socket.fd()
    }
}

impl Drop for ExitListener {
    fn drop(&mut self) {
        // The kernel would drop a closed listener at the next exit on its CPUs anyway (sending
        // to it fails), but saying so spares every exit until then a useless copy.
        let deregister = Genl::new(
            self.family,
            CMD_GET,
            GENL_VERSION,
            &[string_attr(ATTR_DEREGISTER_CPUMASK, &self.cpumask)],
        );
        let _ = self.socket.send(&genl::encode(
            deregister,
            netlink_packet_core::NLM_F_REQUEST,
            3,
        ));
    }
}

/// The records of one TASKSTATS_CMD_NEW message: a task's, and its process's when it was the
/// last thread (each nested as an id and a stats structure, with padding attributes between).
fn parse_exit(genl: &Genl, out: &mut Vec<ExitRecord>) {
    for aggregate in genl.attrs() {
        let kind = aggregate.kind();
        if kind != TYPE_AGGR_PID && kind != TYPE_AGGR_TGID {
            continue;
        }
        let mut id = None;
        let mut stats = None;
        for inner in NlasIterator::new(aggregate.value()).map_while(Result::ok) {
            match inner.kind() {
                TYPE_PID | TYPE_TGID => {
                    id = inner
                        .value()
                        .get(..4)
                        .and_then(|b| b.try_into().ok())
                        .map(u32::from_ne_bytes)
                }
                TYPE_STATS => stats = TaskStats::parse(inner.value()),
                _ => {}
            }
        }
        match (kind, id, stats) {
            (TYPE_AGGR_PID, _, Some(stats)) => out.push(ExitRecord::Task(stats)),
            (TYPE_AGGR_TGID, Some(tgid), Some(stats)) => {
                out.push(ExitRecord::Group { tgid, stats })
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use netlink_packet_core::{DefaultNla, Emitable, NLA_F_NESTED};

    use super::*;
    use crate::stats::synthetic;

    fn nested(kind: u16, inner: &[DefaultNla]) -> DefaultNla {
        let mut bytes = vec![0; inner.buffer_len()];
        inner.emit(&mut bytes);
        DefaultNla::new(kind | NLA_F_NESTED, bytes)
    }

    #[test]
    fn an_exit_message_gives_the_task_and_its_process() {
        let mut task = synthetic(688, &[(152, 5)], "t");
        task[128..132].copy_from_slice(&101u32.to_ne_bytes());
        let group = synthetic(688, &[(24, 77)], "g");
        let genl = Genl::new(
            0x1f,
            CMD_NEW,
            1,
            &[
                nested(
                    TYPE_AGGR_PID,
                    &[
                        DefaultNla::new(TYPE_PID, 101u32.to_ne_bytes().to_vec()),
                        DefaultNla::new(6, Vec::new()),
                        DefaultNla::new(TYPE_STATS, task),
                    ],
                ),
                nested(
                    TYPE_AGGR_TGID,
                    &[
                        DefaultNla::new(TYPE_TGID, 100u32.to_ne_bytes().to_vec()),
                        DefaultNla::new(TYPE_STATS, group),
                    ],
                ),
            ],
        );
        let mut out = Vec::new();
        parse_exit(&genl, &mut out);
        assert_eq!(out.len(), 2);
        let ExitRecord::Task(t) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!((t.pid, t.user_ns, t.comm.as_str()), (101, 5000, "t"));
        let ExitRecord::Group { tgid, stats } = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!((*tgid, stats.cpu_delay.total_ns), (100, 77));
    }
}
