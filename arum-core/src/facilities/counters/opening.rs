//! How the counters were opened and how multiplexing is told apart, as facts; the report's
//! sentences are made from them here, in one place.

use crate::facilities::counters::model::Scope;

/// How the events of a CPU were put on the PMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grouping {
    /// One group of the hardware events per CPU, scheduled together (ratios are consistent);
    /// software events alone.
    PerCpuGroups,
    /// Software events only: one counter per event and CPU (nothing to schedule together).
    Separate,
    /// Separate counters, because the kernel refused a group.
    Ungrouped { why: String },
    /// Separate pinned counters (`--no-multiplex`).
    Pinned,
    /// The /dev/arum module: one counter per event on each CPU.
    Module,
}

/// How multiplexing is detected in the per-CPU values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multiplexing {
    /// App scope: an event's running time on a CPU against the task's own run time there.
    AgainstTaskClock,
    /// App scope without the task-clock reference: values are not scaled.
    Unscaled,
    /// Only software events, which the kernel never multiplexes.
    SoftwareOnly,
    /// System scope: running below enabled.
    EnabledVsRunning,
    /// The module's counters, multiplexed by the kernel.
    ModuleEnabledVsRunning,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub grouping: Grouping,
    pub multiplexing: Multiplexing,
    pub scope: Scope,
    /// Each event opened on every CPU (false: once, for the program on every CPU).
    pub per_cpu: bool,
}

impl Opening {
    /// How the counters were opened, in one sentence.
    pub fn describe(&self) -> String {
        let (per, group) = if self.per_cpu {
            ("per event and CPU", "per CPU")
        } else {
            ("per event", "for the program")
        };
        let how = match &self.grouping {
            Grouping::PerCpuGroups => format!("hardware events in one group {group} (scheduled together), software events alone"),
            Grouping::Separate => format!("one counter {per}"),
            Grouping::Ungrouped { why } => format!("one counter {per}, ungrouped: {why}"),
            Grouping::Pinned => format!("one counter {per}, pinned (not multiplexed), ungrouped"),
            Grouping::Module => return "/dev/arum: one counter per event on each CPU, counting everything on the CPU".into(),
        };
        let whom = match (self.scope, self.per_cpu) {
            (Scope::App, true) => "bound to the program, inherited by its threads and children",
            (Scope::App, false) => "bound to the program on every CPU, inherited by its threads and children (totals only: --per-cpu for each CPU's count)",
            (Scope::System, _) => "counting everything on the CPU",
        };
        format!("{how}; {whom}")
    }
}

impl Multiplexing {
    pub fn describe(self) -> &'static str {
        match self {
            Multiplexing::AgainstTaskClock => "per CPU, an event's time running is compared with the task's own run time on that CPU (task-clock); below it, the event was multiplexed and is scaled",
            Multiplexing::Unscaled => "task-clock reference unavailable: per-CPU values are not scaled",
            Multiplexing::SoftwareOnly => "software events only: the kernel never multiplexes them, values are not scaled",
            Multiplexing::EnabledVsRunning => "time running below time enabled means multiplexing; values are scaled by enabled/running",
            Multiplexing::ModuleEnabledVsRunning => "time running below time enabled means the kernel multiplexed the module's counters; values are scaled",
        }
    }
}
