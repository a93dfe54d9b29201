//! The records of a perf ring buffer, for events opened with [`SAMPLE_TYPE`] (and, for the
//! stack pointer, PERF_SAMPLE_REGS_USER of one register).

use perf_event_open_sys::bindings as b;

/// What every sample of a probe carries, in the kernel's order: IDENTIFIER first (so records of
/// several events in one buffer are told apart), then pid/tid, time, CPU.
pub const SAMPLE_TYPE: u64 =
    (b::PERF_SAMPLE_IDENTIFIER | b::PERF_SAMPLE_TID | b::PERF_SAMPLE_TIME | b::PERF_SAMPLE_CPU)
        as u64;

/// Added to [`SAMPLE_TYPE`] when the stack pointer is recorded.
pub const SAMPLE_REGS_USER: u64 = b::PERF_SAMPLE_REGS_USER as u64;

/// Added to [`SAMPLE_TYPE`] when a tracepoint's fields are recorded (PERF_SAMPLE_RAW).
pub const SAMPLE_RAW: u64 = b::PERF_SAMPLE_RAW as u64;

/// What samples carry beyond [`SAMPLE_TYPE`]; a `bool` is the stack pointer alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// PERF_SAMPLE_REGS_USER with the stack pointer only.
    pub regs_user: bool,
    /// PERF_SAMPLE_RAW: a tracepoint's record; its first two fields after the common header are
    /// kept (see [`Sample::raw`]).
    pub raw: bool,
}

impl From<bool> for Layout {
    fn from(regs_user: bool) -> Layout {
        Layout {
            regs_user,
            raw: false,
        }
    }
}

/// Bytes of the common header of every tracepoint record (type, flags, preemption count, pid).
const TRACE_COMMON: usize = 8;

/// The perf register number of the stack pointer, and how far a return moves it: x86-64's `ret`
/// pops the return address, aarch64's leaves SP alone.
#[cfg(target_arch = "x86_64")]
pub const SP_REGISTER: Option<(u32, u64)> = Some((7, 8));
#[cfg(target_arch = "aarch64")]
pub const SP_REGISTER: Option<(u32, u64)> = Some((31, 0));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const SP_REGISTER: Option<(u32, u64)> = None;

/// One sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The id of the event that wrote it (an inherited copy reports its parent's).
    pub id: u64,
    pub pid: u32,
    pub tid: u32,
    /// Nanoseconds of the event's clock.
    pub time: u64,
    pub cpu: u32,
    /// User stack pointer at the probe, when recorded (0 otherwise).
    pub sp: u64,
    /// The first two 8-byte fields of a tracepoint's record after its common header, when
    /// recorded (0 otherwise): raw_syscalls' syscall number, and the first argument (sys_enter) or
    /// the return value (sys_exit).
    pub raw: [u64; 2],
}

/// A record of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Sample(Sample),
    /// The kernel dropped `count` records because the buffer was full.
    Lost {
        count: u64,
    },
    /// A task was named (exec, prctl).
    Comm {
        pid: u32,
        tid: u32,
        name: String,
    },
    Fork {
        pid: u32,
        tid: u32,
        ppid: u32,
        time: u64,
    },
    Exit {
        pid: u32,
        tid: u32,
        time: u64,
    },
}

/// Parses the records in `bytes` (whole records, as [`super::ring::Ring::drain`] gives them).
/// `layout`: what samples carry beyond [`SAMPLE_TYPE`]. Unknown record types are skipped; a
/// truncated record ends the walk.
pub fn parse(bytes: &[u8], layout: impl Into<Layout>, mut f: impl FnMut(Record)) {
    let layout = layout.into();
    let mut at = 0;
    while at + 8 <= bytes.len() {
        let kind = u32_at(bytes, at);
        let size = u16::from_ne_bytes([bytes[at + 6], bytes[at + 7]]) as usize;
        if size < 8 || at + size > bytes.len() {
            break;
        }
        let body = &bytes[at + 8..at + size];
        if let Some(r) = record(kind, body, layout) {
            f(r);
        }
        at += size;
    }
}

fn record(kind: u32, body: &[u8], layout: Layout) -> Option<Record> {
    let u64_at = |i: usize| -> Option<u64> {
        Some(u64::from_ne_bytes(body.get(i..i + 8)?.try_into().ok()?))
    };
    let u32_at = |i: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(body.get(i..i + 4)?.try_into().ok()?))
    };
    match kind {
        b::PERF_RECORD_SAMPLE => {
            let (mut sp, mut raw, mut at) = (0, [0; 2], 32);
            if layout.raw {
                // A u32 size, then the record; the pair is padded to 8 bytes.
                let size = u32_at(at)? as usize;
                let fields = at + 4 + TRACE_COMMON;
                if size >= TRACE_COMMON + 16 {
                    raw = [u64_at(fields)?, u64_at(fields + 8)?];
                }
                at += 4 + size;
            }
            if layout.regs_user {
                // abi (0 = no registers: a kernel thread), then the one register.
                if u64_at(at)? != 0 {
                    sp = u64_at(at + 8)?;
                }
            }
            Some(Record::Sample(Sample {
                id: u64_at(0)?,
                pid: u32_at(8)?,
                tid: u32_at(12)?,
                time: u64_at(16)?,
                cpu: u32_at(24)?,
                sp,
                raw,
            }))
        }
        b::PERF_RECORD_LOST => Some(Record::Lost { count: u64_at(8)? }),
        b::PERF_RECORD_LOST_SAMPLES => Some(Record::Lost { count: u64_at(0)? }),
        b::PERF_RECORD_COMM => {
            let name = body.get(8..)?;
            let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
            Some(Record::Comm {
                pid: u32_at(0)?,
                tid: u32_at(4)?,
                name: String::from_utf8_lossy(&name[..end]).into_owned(),
            })
        }
        b::PERF_RECORD_FORK => Some(Record::Fork {
            pid: u32_at(0)?,
            ppid: u32_at(4)?,
            tid: u32_at(8)?,
            time: u64_at(16)?,
        }),
        b::PERF_RECORD_EXIT => Some(Record::Exit {
            pid: u32_at(0)?,
            tid: u32_at(8)?,
            time: u64_at(16)?,
        }),
        _ => None,
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A sample record as the kernel lays it out for [`SAMPLE_TYPE`] (+ REGS_USER with SP).
    pub fn sample_bytes(s: &Sample, layout: impl Into<Layout>) -> Vec<u8> {
        let layout = layout.into();
        let mut body = Vec::new();
        body.extend_from_slice(&s.id.to_ne_bytes());
        body.extend_from_slice(&s.pid.to_ne_bytes());
        body.extend_from_slice(&s.tid.to_ne_bytes());
        body.extend_from_slice(&s.time.to_ne_bytes());
        body.extend_from_slice(&s.cpu.to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        if layout.raw {
            // A raw_syscalls record: common header, then the two fields; 4 + 28 = 32 bytes.
            body.extend_from_slice(&28u32.to_ne_bytes());
            body.extend_from_slice(&[0xab; TRACE_COMMON]);
            body.extend_from_slice(&s.raw[0].to_ne_bytes());
            body.extend_from_slice(&s.raw[1].to_ne_bytes());
            body.extend_from_slice(&[0; 4]);
        }
        if layout.regs_user {
            body.extend_from_slice(&2u64.to_ne_bytes());
            body.extend_from_slice(&s.sp.to_ne_bytes());
        }
        header(b::PERF_RECORD_SAMPLE, body)
    }

    fn header(kind: u32, body: Vec<u8>) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&0u16.to_ne_bytes());
        r.extend_from_slice(&((body.len() + 8) as u16).to_ne_bytes());
        r.extend_from_slice(&body);
        r
    }

    #[test]
    fn samples_lost_notices_and_task_names_are_read() {
        let s = Sample {
            id: 7,
            pid: 100,
            tid: 101,
            time: 123_456,
            cpu: 1,
            sp: 0x7ffd_0000,
            raw: [0; 2],
        };
        let mut bytes = sample_bytes(&s, true);
        let mut lost = Vec::new();
        lost.extend_from_slice(&7u64.to_ne_bytes());
        lost.extend_from_slice(&42u64.to_ne_bytes());
        bytes.extend(header(b::PERF_RECORD_LOST, lost));
        let mut comm = Vec::new();
        comm.extend_from_slice(&100u32.to_ne_bytes());
        comm.extend_from_slice(&100u32.to_ne_bytes());
        comm.extend_from_slice(b"helper\0\0");
        bytes.extend(header(b::PERF_RECORD_COMM, comm));
        let mut seen = Vec::new();
        parse(&bytes, true, |r| seen.push(r));
        assert_eq!(
            seen,
            [
                Record::Sample(s),
                Record::Lost { count: 42 },
                Record::Comm {
                    pid: 100,
                    tid: 100,
                    name: "helper".into()
                }
            ]
        );
    }

    #[test]
    fn a_truncated_record_ends_the_walk() {
        let s = Sample {
            id: 1,
            pid: 2,
            tid: 3,
            time: 4,
            cpu: 0,
            sp: 0,
            raw: [0; 2],
        };
        let mut bytes = sample_bytes(&s, false);
        bytes.truncate(bytes.len() - 3);
        let mut n = 0;
        parse(&bytes, false, |_| n += 1);
        assert_eq!(n, 0);
    }

    #[test]
    fn a_tracepoint_record_and_the_stack_pointer_after_it_are_read() {
        let s = Sample {
            id: 9,
            pid: 10,
            tid: 11,
            time: 12,
            cpu: 1,
            sp: 0x7ffc_1000,
            raw: [257, (-2i64) as u64],
        };
        let layout = Layout {
            regs_user: true,
            raw: true,
        };
        let bytes = sample_bytes(&s, layout);
        let mut seen = Vec::new();
        parse(&bytes, layout, |r| seen.push(r));
        assert_eq!(seen, [Record::Sample(s)]);
    }
}
