//! Uprobes through perf_event_open, in two forms:
//!
//! - the kernel's `uprobe` PMU (its type and the bit that makes a return probe, from sysfs): the
//!   file path is a pointer in perf_event_attr.config1 that the kernel reads from the memory of the
//!   task calling it. That is also true when it copies an inherited event into a new thread or
//!   process — it then reads the pointer in the *program's* memory, fails, and the program's
//!   clone() fails with it. So the PMU serves only events bound to one existing task (arum's own
//!   calibration);
//! - uprobe events defined in tracefs (`uprobe_events`, as `perf probe` does), opened as
//!   tracepoints: copying those reads nothing from user memory, so they are inherited by every
//!   thread and process the program starts. Defined under a group of arum's own (`arum_<pid>`),
//!   removed when the run ends, and left-overs of arum runs that died are removed before arum
//!   defines its own (tracefs as `system::tracefs` finds it: privately mounted where it is
//!   mounted nowhere).
//!
//! The events of a probe: sampling (a record per hit into a ring buffer), counting (an exact
//! count, no record), and the per-CPU side-band event that owns each ring buffer and records task
//! names, forks and exits.

use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd};

use nix::errno::Errno;

use crate::perf::records::parse::{SAMPLE_REGS_USER, SAMPLE_TYPE, SP_REGISTER};
use crate::perf::sys::{self, Attr, Extra, Sampling};
use crate::system::tracefs::Tracefs;

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

/// PERF_TYPE_TRACEPOINT.
const TRACEPOINT: u32 = 2;

/// A probe to open: through the PMU (task-bound events only, see the module docs) or a tracefs
/// definition.
#[derive(Debug, Clone, Copy)]
pub enum Probe<'a> {
    Pmu {
        pmu: &'a UprobePmu,
        site: Site<'a>,
        ret: bool,
    },
    Defined(u64),
}

impl Probe<'_> {
    fn attr_extra(&self, inherit: bool, enable_on_exec: bool) -> (Attr, Extra<'_>) {
        match *self {
            Probe::Pmu { pmu, site, ret } => (
                pmu.attr(ret, inherit, enable_on_exec),
                Extra {
                    path: Some(site.path),
                    config2: site.offset,
                    sampling: None,
                },
            ),
            Probe::Defined(id) => (
                Attr {
                    type_: TRACEPOINT,
                    config: id,
                    disabled: enable_on_exec,
                    inherit,
                    enable_on_exec,
                    ..Attr::default()
                },
                Extra::default(),
            ),
        }
    }
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

/// A probe writing a record per hit, on `cpu` (-1: any).
pub fn open_sampling(probe: Probe<'_>, target: Target, cpu: i32) -> Result<OwnedFd, Errno> {
    let (pid, launched) = target.parts();
    let (attr, mut extra) = probe.attr_extra(launched, launched);
    extra.sampling = Some(sampling());
    sys::open_with(&attr, &extra, pid, cpu, None)
}

/// A probe that only counts hits (exactly), on any CPU.
pub fn open_counting(probe: Probe<'_>, target: Target) -> Result<OwnedFd, Errno> {
    let (pid, launched) = target.parts();
    let (attr, extra) = probe.attr_extra(launched, launched);
    sys::open_with(&attr, &extra, pid, cpu_any(), None)
}

/// A probe that counts one task's hits once enabled (`sys::enable`): a sampling window opens all
/// its probes, takes its start, then enables them, so that calls while the others open do not
/// count.
pub fn open_counting_held(probe: Probe<'_>, tid: i32) -> Result<OwnedFd, Errno> {
    let (mut attr, extra) = probe.attr_extra(false, false);
    attr.disabled = true;
    sys::open_with(&attr, &extra, tid, cpu_any(), None)
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

/// Uprobe events defined in tracefs for one arum run; removed on drop (after their perf events
/// are closed: the kernel refuses to remove an event in use).
pub struct TraceFs {
    fs: Tracefs,
    group: String,
    defined: Vec<String>,
}

impl TraceFs {
    /// Finds tracefs (the definitions of arum runs that are gone are removed next, by
    /// `crate::leftovers::uprobe_groups`).
    pub fn open() -> Result<TraceFs, String> {
        Ok(TraceFs {
            fs: Tracefs::open("uprobe_events")?,
            group: format!("arum_{}", std::process::id()),
            defined: Vec::new(),
        })
    }

    fn write(&self, line: &str) -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.fs.path("uprobe_events"))?;
        f.write_all(format!("{line}\n").as_bytes())
    }

    /// Defines an entry or return probe at `site` and returns its tracepoint id.
    pub fn define(&mut self, site: Site<'_>, ret: bool) -> Result<u64, String> {
        let name = format!("p{}", self.defined.len());
        let path = site.path.to_string_lossy();
        if path.contains(char::is_whitespace) {
            return Err(format!(
                "{path:?} has a blank in its path, which uprobe_events cannot take"
            ));
        }
        let line = format!(
            "{}:{}/{name} {path}:{:#x}",
            if ret { 'r' } else { 'p' },
            self.group,
            site.offset
        );
        self.write(&line).map_err(|e| {
            format!(
                "cannot define a uprobe in {}'s uprobe_events: {e}",
                self.fs.describe()
            )
        })?;
        self.defined.push(name.clone());
        let id = std::fs::read_to_string(
            self.fs
                .path("events")
                .join(&self.group)
                .join(&name)
                .join("id"),
        )
        .map_err(|e| format!("cannot read the id of uprobe {}/{name}: {e}", self.group))?;
        id.trim()
            .parse()
            .map_err(|_| format!("bad id {id:?} of uprobe {}/{name}", self.group))
    }
}

impl Drop for TraceFs {
    fn drop(&mut self) {
        for name in &self.defined {
            let _ = self.write(&format!("-:{}/{name}", self.group));
        }
    }
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
