//! The probes of a run, opened on the held child in `arm`: per CPU a side-band event that owns the
//! CPU's ring buffer, and per function an entry and a return probe on every CPU writing into it
//! (inherited by every thread and process the program starts, enabled by its exec), plus an
//! entry probe that only counts, exactly, for as long as the function is probed.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};

use nix::errno::Errno;

use crate::perf::records::ring::Ring;
use crate::perf::sys;

use super::targets::Target;
use super::uprobe::{self, Probe, Site, Target as Bind, TraceFs};

/// Ring buffer memory for all CPUs together, and the most for one: 8 MiB holds about 150,000
/// records, some 0.5 s of a CPU hitting probes back to back, against a reader that drains every
/// few milliseconds (when it gets a CPU: on a loaded machine it may wait much longer).
const RING_TOTAL: usize = 16 << 20;
const RING_MAX: usize = 8 << 20;

/// Data pages per ring buffer for `cpus` CPUs (a power of two, at least 16).
fn ring_pages(cpus: usize) -> usize {
    let bytes = (RING_TOTAL / cpus.max(1)).min(RING_MAX);
    (bytes / crate::perf::records::ring::page_size())
        .next_power_of_two()
        .max(16)
        / 2
        * 2
}

/// Which probe a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Entry,
    Return,
}

/// One function's events.
pub struct FunctionProbes {
    /// Per CPU.
    pub entry: Vec<OwnedFd>,
    pub ret: Vec<OwnedFd>,
    pub counter: Option<OwnedFd>,
}

pub struct Probes {
    pub functions: Vec<FunctionProbes>,
    /// Per function, the tracepoint ids of its entry and return probes.
    pub defined: Vec<(u64, u64)>,
    /// Record id → (function index, probe kind).
    pub ids: HashMap<u64, (usize, Kind)>,
    pub rings: Vec<Ring>,
    /// Owners of the ring buffers; kept open until the end.
    pub sideband: Vec<OwnedFd>,
    /// Per probe, an event bound to arum itself (which does not run the probed code): it keeps the
    /// probe registered while the program's events come and go (throttling, sampling windows).
    /// Without it, closing a probe's last event unregisters it and waits for the kernel's grace
    /// periods (tens of milliseconds), and the program keeps trapping on the other probe of the
    /// function, or on a window's, until then; with it, the breakpoint leaves the program as soon
    /// as its events are closed.
    pub anchors: Vec<OwnedFd>,
    /// The definitions; dropped after every event that uses them.
    pub tracefs: TraceFs,
    /// What the report should say about probes that opened with less than asked.
    pub warnings: Vec<String>,
}

/// Why probes could not be opened.
pub struct OpenError {
    pub what: String,
    pub why: String,
}

fn site(t: &Target) -> Site<'_> {
    Site {
        path: &t.path,
        offset: t.offset,
    }
}

/// The error of opening `what`, from the kernel's errno.
fn failed(what: String) -> impl FnOnce(Errno) -> OpenError {
    move |errno: Errno| OpenError {
        what,
        why: errno.desc().to_string(),
    }
}

/// Opens every probe for the held child `pid` on `cpus`; `counting`: also an exact counting
/// entry probe per function (what throttling decides on; every hit then costs a little more).
pub fn open(
    targets: &[Target],
    pid: i32,
    cpus: &[u32],
    counting: bool,
) -> Result<Probes, OpenError> {
    let tracefs = TraceFs::open().map_err(|why| OpenError {
        what: "uprobe events".into(),
        why,
    })?;
    let mut probes = Probes {
        functions: Vec::new(),
        defined: Vec::new(),
        ids: HashMap::new(),
        rings: Vec::new(),
        sideband: Vec::new(),
        anchors: Vec::new(),
        tracefs,
        warnings: Vec::new(),
    };
    probes
        .warnings
        .extend(crate::leftovers::warning(&crate::leftovers::uprobe_groups()));
    for &cpu in cpus {
        let owner = uprobe::open_sideband(pid, cpu as i32)
            .map_err(failed(format!("the ring buffer of CPU {cpu}")))?;
        let ring = Ring::map_within_limit(owner.as_fd(), ring_pages(cpus.len()))
            .map_err(failed(format!("mapping the ring buffer of CPU {cpu}")))?;
        probes.rings.push(ring);
        probes.sideband.push(owner);
    }
    for (i, t) in targets.iter().enumerate() {
        let f = open_function(&mut probes, i, t, pid, cpus, counting)?;
        probes.functions.push(f);
    }
    Ok(probes)
}

/// The probes of function `i`, `t`: its entry and return probes defined and anchored, sampling
/// on every CPU into that CPU's ring buffer, and with `counting` its exact call counter.
fn open_function(
    probes: &mut Probes,
    i: usize,
    t: &Target,
    pid: i32,
    cpus: &[u32],
    counting: bool,
) -> Result<FunctionProbes, OpenError> {
    let s = site(t);
    let define = |probes: &mut Probes, ret| {
        probes.tracefs.define(s, ret).map_err(|why| OpenError {
            what: format!("a probe on {}", t.name),
            why,
        })
    };
    let ids = (define(probes, false)?, define(probes, true)?);
    probes.defined.push(ids);
    let arum = Bind::Task(std::process::id() as i32);
    for id in [ids.0, ids.1] {
        let anchor = uprobe::open_counting(Probe::Defined(id), arum)
            .map_err(failed(format!("the probes of {}", t.name)))?;
        probes.anchors.push(anchor);
    }
    let mut f = FunctionProbes {
        entry: Vec::new(),
        ret: Vec::new(),
        counter: None,
    };
    for (c, &cpu) in cpus.iter().enumerate() {
        for (kind, list) in [(Kind::Entry, &mut f.entry), (Kind::Return, &mut f.ret)] {
            let what = format!(
                "{} probe of {} ({}+{:#x})",
                if kind == Kind::Entry {
                    "the entry"
                } else {
                    "the return"
                },
                t.name,
                t.file.display(),
                t.offset
            );
            let id = if kind == Kind::Entry { ids.0 } else { ids.1 };
            let fd = uprobe::open_sampling(Probe::Defined(id), Bind::Launched(pid), cpu as i32)
                .map_err(failed(what.clone()))?;
            sys::set_output(fd.as_fd(), probes.sideband[c].as_fd())
                .map_err(failed(what.clone()))?;
            let id = sys::id(fd.as_fd()).map_err(failed(what))?;
            probes.ids.insert(id, (i, kind));
            list.push(fd);
        }
    }
    if counting {
        match uprobe::open_counting(Probe::Defined(ids.0), Bind::Launched(pid)) {
            Ok(fd) => f.counter = Some(fd),
            // The function is still timed; its calls are counted from the records alone.
            Err(errno) => probes.warnings.push(format!(
                "the exact call counter of {} could not be opened ({}): its calls are counted from the probe records, which a full ring buffer loses, and the probe budget does not see them",
                t.name,
                errno.desc()
            )),
        }
    }
    Ok(f)
}
