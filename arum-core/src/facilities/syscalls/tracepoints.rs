//! The kernel's raw_syscalls tracepoints, opened with perf_event_open on the held child: per CPU
//! a sys_enter event that owns the CPU's ring buffer (and records task names, forks and exits) and
//! a sys_exit event writing into it; inherited by every thread and process of the tree, enabled
//! by the program's exec, filtered in the kernel on the call number when a subset is asked.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;

use crate::perf::records::parse::{Layout, SAMPLE_RAW, SAMPLE_TYPE};
use crate::perf::records::ring::Ring;
use crate::perf::records::source::RecordSource;
use crate::perf::sys::{self, Attr, Extra, Sampling};
use crate::system::tracefs::{Tracefs, Unreachable};

use super::cost::{getppid_ns, Cost};

/// PERF_TYPE_TRACEPOINT.
const TRACEPOINT: u32 = 2;
/// Ring buffer bytes per CPU: 8 MiB hold some 50,000 enter/exit pairs.
const RING_BYTES: usize = 8 << 20;

/// What the records of these events carry.
pub const LAYOUT: Layout = Layout {
    regs_user: false,
    raw: true,
};

/// The tracepoints' ids, and whether tracefs was mounted nowhere (read through a private mount).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ids {
    pub enter: u64,
    pub exit: u64,
    pub private_tracefs: bool,
}

/// Finds the tracepoints' ids (the events are opened by id: tracefs is not needed after this).
pub fn ids() -> Result<Ids, String> {
    const EVENTS: &str = "events/raw_syscalls";
    let fs = Tracefs::open(EVENTS).map_err(|why| match why {
        Unreachable::Denied(why) => {
            format!("the kernel's raw_syscalls tracepoints are not readable: {why}")
        }
        Unreachable::Missing(why) => format!(
            "the kernel's raw_syscalls tracepoints are not readable ({why}; the kernel needs \
             CONFIG_FTRACE_SYSCALLS)"
        ),
    })?;
    let id = |event: &str| -> Result<u64, String> {
        let path = fs.path(Path::new(EVENTS).join(event).join("id"));
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| {
                format!(
                    "the id of raw_syscalls:{event} in {} is not readable",
                    fs.describe()
                )
            })
    };
    Ok(Ids {
        enter: id("sys_enter")?,
        exit: id("sys_exit")?,
        private_tracefs: fs.is_private(),
    })
}

/// The opened events.
pub struct Events {
    /// Per CPU: the sys_enter event (owner of the ring buffer) and the sys_exit event.
    pub events: Vec<(OwnedFd, OwnedFd)>,
    pub rings: Vec<Ring>,
    /// Record id → entry (true) or exit.
    pub ids: Vec<(u64, bool)>,
}

impl Events {
    /// The calls the tree entered, as its sys_enter events counted them: an event counts every
    /// hit that passes its filter, whether the hit's record found room in the ring or not, and
    /// an inherited copy's count joins its parent's when its task ends. None where a count
    /// cannot be read.
    pub fn entered(&self) -> Option<u64> {
        self.events
            .iter()
            .map(|(enter, _)| sys::read(enter.as_fd()).ok().map(|r| r.value))
            .sum()
    }
}

fn attr(config: u64) -> Attr {
    Attr {
        type_: TRACEPOINT,
        config,
        disabled: true,
        inherit: true,
        enable_on_exec: true,
        ..Attr::default()
    }
}

fn sampling(task_events: bool) -> Sampling {
    Sampling {
        period: 1,
        sample_type: SAMPLE_TYPE | SAMPLE_RAW,
        regs_user: 0,
        clockid: Some(libc::CLOCK_MONOTONIC),
        comm_and_task: task_events,
    }
}

/// Opens both tracepoints for the held child `pid` on every CPU of `cpus`, with `filter` (ftrace
/// syntax on the tracepoint's fields) on each. The error says which step failed and why.
pub fn open(ids: &Ids, pid: i32, cpus: &[u32], filter: Option<&str>) -> Result<Events, String> {
    let filter = filter
        .map(|f| CString::new(f).map_err(|_| "a filter with a NUL byte".to_string()))
        .transpose()?;
    let pages = (RING_BYTES / crate::perf::records::ring::page_size()).next_power_of_two();
    let mut out = Events {
        events: Vec::new(),
        rings: Vec::new(),
        ids: Vec::new(),
    };
    let fail = |what: String| move |e: Errno| format!("{what}: {}", e.desc());
    for &cpu in cpus {
        let open = |config, task| {
            sys::open_with(
                &attr(config),
                &Extra {
                    path: None,
                    config2: 0,
                    sampling: Some(sampling(task)),
                },
                pid,
                cpu as i32,
                None,
            )
        };
        let enter = open(ids.enter, true)
            .map_err(fail(format!("opening raw_syscalls:sys_enter on CPU {cpu}")))?;
        let exit = open(ids.exit, false)
            .map_err(fail(format!("opening raw_syscalls:sys_exit on CPU {cpu}")))?;
        if let Some(f) = &filter {
            for fd in [&enter, &exit] {
                sys::set_filter(fd.as_fd(), f)
                    .map_err(fail("setting the tracepoint filter".into()))?;
            }
        }
        let ring = Ring::map_within_limit(enter.as_fd(), pages)
            .map_err(fail(format!("mapping the ring buffer of CPU {cpu}")))?;
        sys::set_output(exit.as_fd(), enter.as_fd())
            .map_err(fail("sending sys_exit records to the ring buffer".into()))?;
        for (fd, is_enter) in [(&enter, true), (&exit, false)] {
            let id = sys::id(fd.as_fd()).map_err(fail("reading an event id".into()))?;
            out.ids.push((id, is_enter));
        }
        out.rings.push(ring);
        out.events.push((enter, exit));
    }
    Ok(out)
}

/// getppid(2) timed on arum's own thread with and without both tracepoints, the least of several
/// rounds each; the records of the traced rounds give the measured interval of a call whose
/// untraced time is known.
pub fn calibrate(ids: &Ids) -> Result<Cost, String> {
    let bare = getppid_ns();
    let open = |config, task| {
        sys::open_with(
            &Attr {
                type_: TRACEPOINT,
                config,
                ..Attr::default()
            },
            &Extra {
                path: None,
                config2: 0,
                sampling: Some(sampling(task)),
            },
            0,
            -1,
            None,
        )
        .map_err(|e| format!("opening a syscall tracepoint on arum itself: {}", e.desc()))
    };
    let enter = open(ids.enter, false)?;
    let exit = open(ids.exit, false)?;
    let ring = Ring::map_within_limit(enter.as_fd(), 1024)
        .map_err(|e| format!("mapping a ring buffer: {}", e.desc()))?;
    sys::set_output(exit.as_fd(), enter.as_fd()).map_err(|e| e.desc().to_string())?;
    let enter_id = sys::id(enter.as_fd()).map_err(|e| e.desc().to_string())?;
    let traced = getppid_ns();
    drop((enter, exit));
    // The measured intervals of the traced getppid calls (the ring holds the first rounds).
    let getppid = libc::SYS_getppid as u64;
    let mut source = RecordSource::new(vec![ring], LAYOUT);
    let mut samples = Vec::new();
    source.drain_ordered(&mut 0, &mut HashMap::new(), None, &mut samples);
    let measured: Vec<u64> = samples
        .windows(2)
        .filter(|w| {
            w[0].id == enter_id
                && w[1].id != enter_id
                && w[0].raw[0] == getppid
                && w[1].raw[0] == getppid
        })
        .map(|w| w[1].time.saturating_sub(w[0].time))
        .collect();
    if measured.is_empty() {
        return Err("no record of the calibration calls".into());
    }
    let measured: Vec<f64> = measured.into_iter().map(|ns| ns as f64).collect();
    let median = arum_stats::median(&measured).unwrap_or(0.0);
    Ok(Cost {
        pair_ns: (traced - bare).max(0.0),
        inside_ns: (median - bare).max(0.0),
    })
}
