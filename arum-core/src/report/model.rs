//! The model of a whole run: the header, then each facility's section (its type is in its
//! folder), in the order of `report::sections`. Every output format renders it.
//! Field names carry their units (`_ns`, `_us`, `_bytes`); counts are plain integers. `FIELDS`
//! declares what each number is (its unit and direction, or not a metric) for every renderer.

use serde::{Deserialize, Serialize};

use crate::facilities;
use crate::facilities::ambient::model::AmbientReport;
use crate::facilities::clients::model::ClientsReport;
use crate::facilities::counters::model::CountersReport;
use crate::facilities::functions::model::FunctionsReport;
use crate::facilities::syscalls::model::SyscallsReport;
use crate::facilities::tasks::model::TasksReport;
use crate::facilities::usage::model::Usage;
use crate::facilities::views::model::ViewsReport;
use crate::fields::{group, Field};
use crate::header::{self, CommandInfo, ExitInfo, Metadata, RankInfo, SelfTiming};

/// The fields of [`Report`] (see `crate::fields`): the header's and each section's tables. The
/// schema, the command and the warnings are text.
pub const FIELDS: &[Field] = &[
    group("metadata", header::METADATA),
    group("exit", header::EXIT),
    group("usage", facilities::usage::model::FIELDS),
    group("clients", facilities::clients::model::FIELDS),
    group("counters", facilities::counters::model::FIELDS),
    group("ambient", facilities::ambient::model::FIELDS),
    group("functions", facilities::functions::model::FIELDS),
    group("noise", facilities::noise::model::FIELDS),
    group("tasks", facilities::tasks::model::FIELDS),
    group("syscalls", facilities::syscalls::model::FIELDS),
    group("views", facilities::views::model::FIELDS),
    group("self_timing", header::SELF_TIMING),
    group("rank", header::RANK),
];

/// The version tag of this JSON layout; bump it when a field changes meaning or is removed.
pub const SCHEMA: &str = "arum.report/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub metadata: Metadata,
    pub command: CommandInfo,
    pub exit: ExitInfo,
    pub usage: Usage,
    /// The requests the clients of `arum suite` completed, and their rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<ClientsReport>,
    /// Performance-counter events, when any were asked for.
    pub counters: Option<CountersReport>,
    /// The ambient environment, with `--ambient`.
    pub ambient: Option<AmbientReport>,
    /// Function-level timing, with `-F/--functions`.
    #[serde(default)]
    pub functions: Option<FunctionsReport>,
    /// What a gap-detecting probe beside the program saw, with `--noise-probe`.
    #[serde(default)]
    pub noise: Option<arum_hourglass::NoiseReport>,
    /// A record for every process and thread of the tree, with `--per-task`.
    #[serde(default)]
    pub tasks: Option<TasksReport>,
    /// System calls of the tree through the kernel's tracepoints, with `--syscalls`.
    #[serde(default)]
    pub syscalls: Option<SyscallsReport>,
    /// The ALMT views of the probe records (overview, tasks, shares, table), with `--syscalls`.
    #[serde(default)]
    pub views: Option<ViewsReport>,
    pub self_timing: SelfTiming,
    /// Things the user should know about how the values were obtained, one line each.
    pub warnings: Vec<String>,
    /// The rank of a parallel job this run was, when a launcher (mpirun, srun) started arum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<RankInfo>,
}

impl Report {
    /// A report of a run that ended with `exit`, before the facilities add their sections.
    pub fn new(metadata: Metadata, command: CommandInfo, exit: ExitInfo) -> Report {
        Report {
            schema: SCHEMA.into(),
            metadata,
            command,
            exit,
            usage: Usage::default(),
            clients: None,
            counters: None,
            ambient: None,
            functions: None,
            noise: None,
            tasks: None,
            syscalls: None,
            views: None,
            self_timing: SelfTiming::default(),
            warnings: Vec::new(),
            rank: None,
        }
    }
}
