//! The run lifecycle every facility implements. One measured run calls, in this order and once
//! each (see `measure`):
//!
//! ```text
//!  prepare()    before the launch: open files, allocate. Must not start a thread: the launcher
//!               may fork, and forks a single-threaded process (measure_once checks).
//!  ── launch: the child waits at the start line ──
//!  arm()        the child's pid is known: attach counters, start watchers that must see the start
//!  ── release: exec ──
//!  released()   the program still runs after a short grace: start watchers of it
//!  ── the program ends and is reaped ──
//!  stop()       stop watching, collect raw readings        (post-processing phase 1)
//!  finish()     turn them into this facility's section of the report (post-processing phase 2)
//! ```
//!
//! A facility that started a thread stops it in Drop too, so a failed run leaves nothing running.
//! A facility knows its own section only: `report::sections` says which field of the report it
//! fills, so the facilities sit below the report model.

use std::sync::Arc;

use nix::unistd::Pid;

use crate::error::ArumError;
use crate::launch::Reaped;
use crate::tree::Tree;
use crate::warnings::Warnings;

/// What a facility may use once the child exists.
pub struct Armed<'a> {
    pub pid: Pid,
    pub tree: &'a Arc<Tree>,
    pub warnings: &'a mut Warnings,
}

/// The reaped program, and where warnings go.
pub struct Stopped<'a> {
    pub reaped: &'a Reaped,
    pub warnings: &'a mut Warnings,
}

pub trait Facility {
    /// This facility's section of the report.
    type Section;

    /// The facility lists the tree's processes while it runs: the tree gets a cgroup of its own
    /// (exact and cheap to list) wherever the machine allows, even when it gives nothing else.
    fn lists_the_tree(&self) -> bool {
        false
    }

    /// Before the launch. Must not start threads.
    fn prepare(&mut self) -> Result<(), ArumError> {
        Ok(())
    }

    /// The child is launched and held.
    fn arm(&mut self, _run: &mut Armed<'_>) -> Result<(), ArumError> {
        Ok(())
    }

    /// The program was released, its exec succeeded, and it is still running a moment later
    /// (see `measure::GRACE`): watchers of the running program start here. Not called for a
    /// program that ended sooner.
    fn released(&mut self) {}

    /// The program has been reaped: stop and collect.
    fn stop(&mut self, _run: &mut Stopped<'_>) {}

    /// This facility's section of the report.
    fn finish(self, reaped: &Reaped) -> Self::Section;
}
