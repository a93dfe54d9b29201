//! The sections of a run's report, in the one order the text, the HTML page and the JSON all
//! follow (the JSON's order is the `Report` struct's; a test checks that they agree). Each row
//! names its facility's start, the report field its section fills, and its renderings.

use arum_hourglass::NoiseReport;

use crate::error::ArumError;
use crate::facilities::ambient::{self, Ambient};
use crate::facilities::clients::{self, Clients};
use crate::facilities::counters::{self, Counters};
use crate::facilities::functions::{self, Functions};
use crate::facilities::noise::{self, Noise};
use crate::facilities::syscalls::{self, Syscalls};
use crate::facilities::tasks::{self, Tasks};
use crate::facilities::usage::{self, ResourceUsage};
use crate::facilities::views;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::perf::records::event::SharedJournal;
use crate::report::html::{intervals, usage as usage_html};
use crate::report::model::Report;
use crate::settings::Settings;

/// What the text report shows beyond the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    pub show_self_timing: bool,
    /// Threads in each top list of the per-task section (`None`: every thread).
    pub top_threads: Option<usize>,
    /// Beyond this many CPUs, per-CPU rows are folded into a summary (`None`: every row).
    pub cpu_rows: Option<usize>,
}

/// One section of the report.
pub struct Section {
    /// Its field of the report (its JSON key) and its anchor in the HTML page.
    pub key: &'static str,
    /// The facility that fills it, when the run asks for it; `None` for a section another
    /// row's facility fills.
    pub start: Option<Start>,
    /// Appends its text, when the run has the section.
    pub text: fn(&Report, &TextOptions, &mut String),
    /// Its part of the HTML page, when the run has the section.
    pub html: fn(&Report) -> Option<String>,
}

/// Starts a facility for a run, when its settings ask for it.
pub type Start = for<'a> fn(&'a Settings, &Shared) -> Option<Box<dyn Running + 'a>>;

/// What the facilities of one run share: the probe records the views read, which function
/// timing adds to when system calls are traced.
#[derive(Default)]
pub struct Shared {
    pub journal: Option<SharedJournal>,
}

impl Shared {
    pub fn of(settings: &Settings) -> Shared {
        Shared {
            // Functions add their timed calls to it for the views only.
            journal: settings
                .syscalls
                .as_ref()
                .filter(|s| s.views)
                .map(|_| SharedJournal::default()),
        }
    }
}

pub const SECTIONS: &[Section] = &[
    Section {
        key: "usage",
        start: Some(|s, _| filling(ResourceUsage::new(s.memory_sampling), |r, s| r.usage = s)),
        text: |r, _, out| usage::text::render(out, &r.usage),
        html: |r| Some(usage_html::render(r)),
    },
    Section {
        key: "clients",
        start: Some(|s, _| {
            let counts = s.client_counts.clone()?;
            filling(Clients::new(counts), |r, c| r.clients = Some(c))
        }),
        text: |r, _, out| r.clients.iter().for_each(|c| clients::text::render(out, c)),
        html: |r| r.clients.as_ref().map(clients::html::render),
    },
    Section {
        key: "counters",
        start: Some(|s, _| {
            let c = s.counters.as_ref()?;
            filling(Counters::new(c), |r, s| r.counters = s)
        }),
        text: |r, o, out| {
            r.counters
                .iter()
                .for_each(|c| counters::text::render(out, c, r.usage.wall_ns, o.cpu_rows))
        },
        html: |r| {
            let section = r.counters.as_ref().map(counters::html::render);
            let series = intervals::render(r);
            (section.is_some() || series.is_some())
                .then(|| section.unwrap_or_default() + &series.unwrap_or_default())
        },
    },
    Section {
        key: "ambient",
        start: Some(|s, _| {
            let interval = s.ambient?;
            filling(Ambient::new(interval), |r, s| r.ambient = s)
        }),
        text: |r, o, out| {
            r.ambient
                .iter()
                .for_each(|a| ambient::text::render(out, a, o.cpu_rows))
        },
        html: |r| r.ambient.as_ref().map(ambient::html::render),
    },
    Section {
        key: "functions",
        start: Some(|s, shared| {
            let f = s.functions.as_ref()?;
            filling(Functions::new(f, shared.journal.clone()), |r, s| {
                r.functions = Some(s)
            })
        }),
        text: |r, _, out| {
            r.functions
                .iter()
                .for_each(|f| functions::text::render(out, f))
        },
        html: |r| r.functions.as_ref().map(functions::html::render),
    },
    Section {
        key: "noise",
        start: Some(|s, _| {
            let cpus = s.noise_probe.as_ref()?;
            filling(Noise::new(cpus), |r, s: Option<NoiseReport>| r.noise = s)
        }),
        text: |r, o, out| {
            if let Some(n) = &r.noise {
                noise::text::render(out, n, r.ambient.is_some(), o.cpu_rows);
            }
        },
        html: |r| r.noise.as_ref().map(noise::html::render),
    },
    Section {
        key: "tasks",
        start: Some(|s, _| {
            let t = s.tasks.as_ref()?;
            filling(Tasks::new(t), |r, s| r.tasks = Some(s))
        }),
        text: |r, o, out| {
            if let Some(t) = &r.tasks {
                tasks::text::render(out, t, o.top_threads);
            }
        },
        html: |r| r.tasks.as_ref().map(tasks::html::render),
    },
    Section {
        key: "syscalls",
        start: Some(|s, shared| {
            let sc = s.syscalls.as_ref()?;
            let journal = shared.journal.clone().unwrap_or_default();
            filling(Syscalls::new(sc, journal), |r, (calls, views)| {
                r.syscalls = Some(calls);
                r.views = views;
            })
        }),
        text: |r, _, out| {
            r.syscalls
                .iter()
                .for_each(|s| syscalls::text::render(out, s))
        },
        html: |r| r.syscalls.as_ref().map(syscalls::html::render),
    },
    Section {
        key: "views",
        // Filled by the system calls' facility, from the records it read.
        start: None,
        text: |r, _, out| r.views.iter().for_each(|v| views::text::render(out, v)),
        html: |r| r.views.as_ref().map(views::html::render),
    },
];

/// The run lifecycle of a facility whose section goes into the report: what the measured run
/// drives (see `facility::Facility`).
pub trait Running {
    fn lists_the_tree(&self) -> bool;
    fn prepare(&mut self) -> Result<(), ArumError>;
    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError>;
    fn released(&mut self);
    fn stop(&mut self, run: &mut Stopped<'_>);
    /// The facility's section, put in its field of `report`.
    fn finish(self: Box<Self>, reaped: &Reaped, report: &mut Report);
}

/// A facility and where its section goes.
struct Filling<F: Facility> {
    facility: F,
    put: fn(&mut Report, F::Section),
}

fn filling<'a, F: Facility + 'a>(
    facility: F,
    put: fn(&mut Report, F::Section),
) -> Option<Box<dyn Running + 'a>> {
    Some(Box::new(Filling { facility, put }))
}

impl<F: Facility> Running for Filling<F> {
    fn lists_the_tree(&self) -> bool {
        self.facility.lists_the_tree()
    }

    fn prepare(&mut self) -> Result<(), ArumError> {
        self.facility.prepare()
    }

    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        self.facility.arm(run)
    }

    fn released(&mut self) {
        self.facility.released();
    }

    fn stop(&mut self, run: &mut Stopped<'_>) {
        self.facility.stop(run);
    }

    fn finish(self: Box<Self>, reaped: &Reaped, report: &mut Report) {
        let Filling { facility, put } = *self;
        put(report, facility.finish(reaped));
    }
}
