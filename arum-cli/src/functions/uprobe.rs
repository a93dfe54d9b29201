//! Uprobes through perf_event_open: the kernel's `uprobe` PMU (its type and the bit that makes a
//! return probe, from sysfs), and the events of a probe — sampling (a record per hit into a ring
//! buffer), counting (an exact count, no record), and the per-CPU side-band event that owns each
//! ring buffer and records task names, forks and exits.

use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd};

use nix::errno::Errno;

use crate::counters::sys::{self, Attr, Extra, Sampling};
use crate::records::parse::{SAMPLE_REGS_USER, SAMPLE_TYPE, SP_REGISTER};

const PMU_DIR: &str = "/sys/bus/event_source/devices/uprobe";
/// PERF_TYPE_SOFTWARE / PERF_COUNT_SW_DUMMY: counts nothing, carries side-band records.
const SOFTWARE: u32 = 1;
const DUMMY: u64 = 9;

/// The uprobe PMU of this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UprobePmu {
    pub type_: u32,
    /// perf_event_attr.config bit that makes a uretprobe.
    pub retprobe_bit: u32,
}

impl UprobePmu {
    /// Reads the PMU's type and format from sysfs; the reason when the kernel has none.
    pub fn detect() -> Result<UprobePmu, String> {
        let type_ = std::fs::read_to_string(format!("{PMU_DIR}/type"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| {
                format!(
                    "the kernel has no uprobe PMU ({PMU_DIR} is missing; it needs CONFIG_UPROBE_EVENTS)"
                )
            })?;
        let format = std::fs::read_to_string(format!("{PMU_DIR}/format/retprobe")).ok();
        Ok(UprobePmu {
            type_,
            retprobe_bit: format.as_deref().and_then(config_bit).unwrap_or(0),
        })
    }

    fn attr(&self, offset_is_return: bool, inherit: bool, enable_on_exec: bool) -> Attr {
        Attr {
            type_: self.type_,
            config: if offset_is_return {
                1u64 << self.retprobe_bit
            } else {
                0
            },
            disabled: enable_on_exec,
            inherit,
            enable_on_exec,
            ..Attr::default()
        }
    }
}

/// The bit of a sysfs format file such as `config:0`.
fn config_bit(format: &str) -> Option<u32> {
    format.trim().strip_prefix("config:")?.parse().ok()
}

/// Where a probe goes: a file and an offset in it.
#[derive(Debug, Clone, Copy)]
pub struct Site<'a> {
    pub path: &'a CStr,
    pub offset: u64,
}

/// How the events of a run are bound: to the held child and everything it starts, enabled by its
/// exec (`Launched`); or to one existing task, enabled now (`Task`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Launched(i32),
    Task(i32),
}

impl Target {
    fn parts(self) -> (i32, bool) {
        match self {
            Target::Launched(pid) => (pid, true),
            Target::Task(tid) => (tid, false),
        }
    }
}

/// What every sampling event of a run records: the same for all (they share ring buffers).
pub fn sampling() -> Sampling {
    let (regs_user, sample_type) = match SP_REGISTER {
        Some((reg, _)) => (1u64 << reg, SAMPLE_TYPE | SAMPLE_REGS_USER),
        None => (0, SAMPLE_TYPE),
    };
    Sampling {
        period: 1,
        sample_type,
        regs_user,
        clockid: Some(libc::CLOCK_MONOTONIC),
        comm_and_task: false,
    }
}

/// An entry (`ret` false) or return probe writing a record per hit, on `cpu` (-1: any).
pub fn open_sampling(
    pmu: &UprobePmu,
    site: Site<'_>,
    ret: bool,
    target: Target,
    cpu: i32,
) -> Result<OwnedFd, Errno> {
    let (pid, launched) = target.parts();
    sys::open_with(
        &pmu.attr(ret, launched, launched),
        &Extra {
            path: Some(site.path),
            config2: site.offset,
            sampling: Some(sampling()),
        },
        pid,
        cpu,
        None,
    )
}

/// An entry probe that only counts hits (exactly), on any CPU.
pub fn open_counting(pmu: &UprobePmu, site: Site<'_>, target: Target) -> Result<OwnedFd, Errno> {
    let (pid, launched) = target.parts();
    sys::open_with(
        &pmu.attr(false, launched, launched),
        &Extra {
            path: Some(site.path),
            config2: site.offset,
            sampling: None,
        },
        pid,
        cpu_any(),
        None,
    )
}

/// The event that owns `cpu`'s ring buffer for the launched tree, recording task names (exec),
/// forks and exits of the tree's tasks there.
pub fn open_sideband(pid: i32, cpu: i32) -> Result<OwnedFd, Errno> {
    let mut s = sampling();
    s.comm_and_task = true;
    sys::open_with(
        &Attr {
            type_: SOFTWARE,
            config: DUMMY,
            disabled: true,
            inherit: true,
            enable_on_exec: true,
            ..Attr::default()
        },
        &Extra {
            path: None,
            config2: 0,
            sampling: Some(s),
        },
        pid,
        cpu,
        None,
    )
}

/// Reads a counting probe.
pub fn count(fd: BorrowedFd<'_>) -> Option<sys::Reading> {
    sys::read(fd).ok()
}

fn cpu_any() -> i32 {
    -1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retprobe_bit_is_read_from_its_format() {
        assert_eq!(config_bit("config:0\n"), Some(0));
        assert_eq!(config_bit("config:63"), Some(63));
        assert_eq!(config_bit("config1:0-63"), None);
    }
}
