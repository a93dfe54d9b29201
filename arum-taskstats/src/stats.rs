//! `struct taskstats`, read at the offsets of the kernel's `include/uapi/linux/taskstats.h`
//! (version 17; offsets as the C compiler lays the structure out on Linux, the same on every
//! architecture since every field is naturally aligned). The structure only grows at its end: a
//! record of an older kernel is shorter, and a field beyond its end reads as absent.

/// Offsets of the fields read, from the C header.
mod offset {
    pub const VERSION: usize = 0;
    pub const AC_EXITCODE: usize = 4;
    pub const AC_FLAG: usize = 8;
    pub const AC_NICE: usize = 9;
    pub const CPU_COUNT: usize = 16;
    pub const CPU_DELAY_TOTAL: usize = 24;
    pub const BLKIO_COUNT: usize = 32;
    pub const BLKIO_DELAY_TOTAL: usize = 40;
    pub const SWAPIN_COUNT: usize = 48;
    pub const SWAPIN_DELAY_TOTAL: usize = 56;
    pub const CPU_RUN_VIRTUAL_TOTAL: usize = 72;
    pub const AC_COMM: usize = 80;
    pub const COMM_LEN: usize = 32;
    pub const AC_SCHED: usize = 112;
    pub const AC_UID: usize = 120;
    pub const AC_PID: usize = 128;
    pub const AC_PPID: usize = 132;
    pub const AC_ETIME: usize = 144;
    pub const AC_UTIME: usize = 152;
    pub const AC_STIME: usize = 160;
    pub const AC_MINFLT: usize = 168;
    pub const AC_MAJFLT: usize = 176;
    pub const HIWATER_RSS: usize = 200;
    pub const HIWATER_VM: usize = 208;
    pub const READ_CHAR: usize = 216;
    pub const WRITE_CHAR: usize = 224;
    pub const READ_SYSCALLS: usize = 232;
    pub const WRITE_SYSCALLS: usize = 240;
    pub const READ_BYTES: usize = 248;
    pub const WRITE_BYTES: usize = 256;
    pub const CANCELLED_WRITE_BYTES: usize = 264;
    pub const NVCSW: usize = 272;
    pub const NIVCSW: usize = 280;
    pub const FREEPAGES_COUNT: usize = 312;
    pub const FREEPAGES_DELAY_TOTAL: usize = 320;
    pub const THRASHING_COUNT: usize = 328;
    pub const THRASHING_DELAY_TOTAL: usize = 336;
    pub const COMPACT_COUNT: usize = 352;
    pub const COMPACT_DELAY_TOTAL: usize = 360;
    pub const AC_TGID: usize = 368;
    pub const AC_TGETIME: usize = 376;
    pub const WPCOPY_COUNT: usize = 400;
    pub const WPCOPY_DELAY_TOTAL: usize = 408;
    pub const IRQ_COUNT: usize = 416;
    pub const IRQ_DELAY_TOTAL: usize = 424;
    pub const CPU_DELAY_MAX: usize = 432;
    /// sizeof(struct taskstats) at version 17.
    #[cfg(test)]
    pub const SIZE_V17: usize = 688;
}

/// `ac_flag` bits (linux/acct.h).
pub const AFORK: u8 = 0x01;
pub const ACORE: u8 = 0x08;
pub const AXSIG: u8 = 0x10;
/// The record closes its thread group (the last thread of the process exited).
pub const AGROUP: u8 = 0x20;

/// A count of delays and their total, in nanoseconds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Delay {
    pub count: u64,
    pub total_ns: u64,
}

/// One task's accounting as the kernel reported it. Times in nanoseconds (the kernel's
/// microseconds scaled), memory in bytes. `None`: the kernel's record is too short to hold it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TaskStats {
    pub version: u16,
    /// The wait status: `code << 8`, or the signal number (with 0x80 for a core dump).
    pub exit_code: u32,
    pub flags: u8,
    pub nice: i8,
    pub sched_policy: u8,
    pub comm: String,
    pub uid: u32,
    /// Thread id.
    pub pid: u32,
    /// Process (thread group) id (version 12 and later).
    pub tgid: Option<u32>,
    /// The parent process.
    pub ppid: u32,
    /// From the task's creation to this record.
    pub elapsed_ns: u64,
    /// From the process's creation (its first thread) to this record (version 12 and later).
    pub group_elapsed_ns: Option<u64>,
    /// Tick-sampled user and system time.
    pub user_ns: u64,
    pub system_ns: u64,
    /// The scheduler's exact CPU time (sum_exec_runtime).
    pub cpu_ns: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    /// The process's peak resident and virtual memory (its address space is shared by all its
    /// threads).
    pub peak_rss_bytes: u64,
    pub peak_vm_bytes: u64,
    pub read_chars: u64,
    pub write_chars: u64,
    pub read_syscalls: u64,
    pub write_syscalls: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cancelled_write_bytes: u64,
    /// Waiting on a run queue while runnable. Accounted whenever the kernel has scheduler
    /// statistics (CONFIG_SCHED_INFO), whether or not delay accounting is on.
    pub cpu_delay: Delay,
    /// The delays below count only when delay accounting was on when the task was created.
    pub blkio_delay: Delay,
    pub swapin_delay: Delay,
    pub reclaim_delay: Delay,
    pub thrashing_delay: Delay,
    pub compact_delay: Option<Delay>,
    pub wpcopy_delay: Option<Delay>,
    pub irq_delay: Option<Delay>,
    /// The longest single wait for a CPU (version 16 and later).
    pub cpu_delay_max_ns: Option<u64>,
}

impl TaskStats {
    /// Reads a record's payload. `None` if it is too short to be a taskstats record at all.
    pub fn parse(bytes: &[u8]) -> Option<TaskStats> {
        use offset::*;
        let r = Reader(bytes);
        let delay = |count, total| {
            Some(Delay {
                count: r.u64(count)?,
                total_ns: r.u64(total)?,
            })
        };
        let comm = bytes.get(AC_COMM..AC_COMM + COMM_LEN)?;
        let comm_end = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
        Some(TaskStats {
            version: r.u16(VERSION)?,
            exit_code: r.u32(AC_EXITCODE)?,
            flags: r.u8(AC_FLAG)?,
            nice: r.u8(AC_NICE)? as i8,
            sched_policy: r.u8(AC_SCHED)?,
            comm: String::from_utf8_lossy(&comm[..comm_end]).into_owned(),
            uid: r.u32(AC_UID)?,
            pid: r.u32(AC_PID)?,
            tgid: r.u32(AC_TGID),
            ppid: r.u32(AC_PPID)?,
            elapsed_ns: r.u64(AC_ETIME)? * 1000,
            group_elapsed_ns: r.u64(AC_TGETIME).map(|us| us * 1000),
            user_ns: r.u64(AC_UTIME)? * 1000,
            system_ns: r.u64(AC_STIME)? * 1000,
            cpu_ns: r.u64(CPU_RUN_VIRTUAL_TOTAL)?,
            minor_faults: r.u64(AC_MINFLT)?,
            major_faults: r.u64(AC_MAJFLT)?,
            voluntary_switches: r.u64(NVCSW)?,
            involuntary_switches: r.u64(NIVCSW)?,
            peak_rss_bytes: r.u64(HIWATER_RSS)? * 1024,
            peak_vm_bytes: r.u64(HIWATER_VM)? * 1024,
            read_chars: r.u64(READ_CHAR)?,
            write_chars: r.u64(WRITE_CHAR)?,
            read_syscalls: r.u64(READ_SYSCALLS)?,
            write_syscalls: r.u64(WRITE_SYSCALLS)?,
            read_bytes: r.u64(READ_BYTES)?,
            write_bytes: r.u64(WRITE_BYTES)?,
            cancelled_write_bytes: r.u64(CANCELLED_WRITE_BYTES)?,
            cpu_delay: delay(CPU_COUNT, CPU_DELAY_TOTAL)?,
            blkio_delay: delay(BLKIO_COUNT, BLKIO_DELAY_TOTAL)?,
            swapin_delay: delay(SWAPIN_COUNT, SWAPIN_DELAY_TOTAL)?,
            reclaim_delay: delay(FREEPAGES_COUNT, FREEPAGES_DELAY_TOTAL)?,
            thrashing_delay: delay(THRASHING_COUNT, THRASHING_DELAY_TOTAL)?,
            compact_delay: delay(COMPACT_COUNT, COMPACT_DELAY_TOTAL),
            wpcopy_delay: delay(WPCOPY_COUNT, WPCOPY_DELAY_TOTAL),
            irq_delay: delay(IRQ_COUNT, IRQ_DELAY_TOTAL),
            cpu_delay_max_ns: r.u64(CPU_DELAY_MAX),
        })
    }

    /// The exit code, if the task exited normally.
    pub fn exit_status(&self) -> Option<i32> {
        (self.exit_code & 0x7f == 0).then_some(((self.exit_code >> 8) & 0xff) as i32)
    }

    /// The signal that ended the task, if one did.
    pub fn exit_signal(&self) -> Option<i32> {
        let sig = (self.exit_code & 0x7f) as i32;
        (sig != 0).then_some(sig)
    }
}

/// Native-endian fields of a byte slice; `None` past its end.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        self.0.get(at..at + N)?.try_into().ok()
    }
    fn u8(&self, at: usize) -> Option<u8> {
        self.0.get(at).copied()
    }
    fn u16(&self, at: usize) -> Option<u16> {
        self.bytes(at).map(u16::from_ne_bytes)
    }
    fn u32(&self, at: usize) -> Option<u32> {
        self.bytes(at).map(u32::from_ne_bytes)
    }
    fn u64(&self, at: usize) -> Option<u64> {
        self.bytes(at).map(u64::from_ne_bytes)
    }
}

/// A record of `size` bytes with chosen fields set, as the kernel would send it (for tests).
#[cfg(test)]
pub(crate) fn synthetic(size: usize, fields: &[(usize, u64)], comm: &str) -> Vec<u8> {
    let mut b = vec![0u8; size];
    for &(at, v) in fields {
        b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
    }
    b[offset::AC_COMM..offset::AC_COMM + comm.len()].copy_from_slice(comm.as_bytes());
    b
}

#[cfg(test)]
mod tests {
    use super::offset::*;
    use super::*;

    fn u32_field(b: &mut [u8], at: usize, v: u32) {
        b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    }

    #[test]
    fn a_record_is_read_field_by_field() {
        let mut b = synthetic(
            SIZE_V17,
            &[
                (AC_UTIME, 1500),
                (AC_STIME, 250),
                (CPU_RUN_VIRTUAL_TOTAL, 1_760_123),
                (NVCSW, 7),
                (HIWATER_RSS, 2048),
                (WRITE_BYTES, 4096),
                (CPU_COUNT, 3),
                (CPU_DELAY_TOTAL, 99_000),
                (AC_TGETIME, 12),
            ],
            "worker-3",
        );
        u32_field(&mut b, AC_PID, 4242);
        u32_field(&mut b, AC_TGID, 4240);
        u32_field(&mut b, AC_PPID, 17);
        u32_field(&mut b, AC_EXITCODE, 3 << 8);
        b[VERSION] = 17;
        let s = TaskStats::parse(&b).unwrap();
        assert_eq!(s.version, 17);
        assert_eq!(s.comm, "worker-3");
        assert_eq!((s.pid, s.tgid, s.ppid), (4242, Some(4240), 17));
        assert_eq!(
            (s.user_ns, s.system_ns, s.cpu_ns),
            (1_500_000, 250_000, 1_760_123)
        );
        assert_eq!(s.voluntary_switches, 7);
        assert_eq!(s.peak_rss_bytes, 2 << 20);
        assert_eq!(s.write_bytes, 4096);
        assert_eq!(
            s.cpu_delay,
            Delay {
                count: 3,
                total_ns: 99_000
            }
        );
        assert_eq!(s.group_elapsed_ns, Some(12_000));
        assert_eq!((s.exit_status(), s.exit_signal()), (Some(3), None));
    }

    #[test]
    fn fields_an_older_kernel_lacks_are_absent() {
        // Version 9 ended after the thrashing delay (344 bytes): no tgid, no newer delays.
        let b = synthetic(344, &[(AC_UTIME, 10)], "old");
        let s = TaskStats::parse(&b).unwrap();
        assert_eq!(s.user_ns, 10_000);
        assert_eq!(s.tgid, None);
        assert_eq!(s.irq_delay, None);
        assert!(TaskStats::parse(&b[..100]).is_none());
    }

    #[test]
    fn a_signal_is_told_from_an_exit_code() {
        let s = TaskStats {
            exit_code: 9,
            ..TaskStats::default()
        };
        assert_eq!((s.exit_status(), s.exit_signal()), (None, Some(9)));
    }
}
