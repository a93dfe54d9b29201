//! The ambient environment: what the rest of the machine did while the program ran (sar,
//! vmstat, iostat style), and the launched tree at the same instants. The `arum-camp` crate holds
//! the stateless accessors; `sampler` captures raw bytes during the run; `analyse` turns them into
//! the report after the program has ended.

mod analyse;
pub mod html;
pub mod model;
mod sampler;
pub mod text;
mod tree_clock;

use std::time::Duration;

use crate::error::ArumError;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::periodic::Sampler;
use model::AmbientReport;

pub use analyse::analyse;
use sampler::{Capture, Files};
use tree_clock::TreeClock;

/// The ambient facility: samples from just before the release to just after the reaping.
pub struct Ambient {
    interval: Duration,
    files: Option<Files>,
    sampler: Option<Sampler<Capture>>,
    capture: Option<Capture>,
    /// The sampler's note when its CPU budget spaced the samples out.
    load_note: Option<String>,
    clock: Option<TreeClock>,
    tree_cpu: Option<Vec<(u32, u64)>>,
}

impl Ambient {
    pub fn new(interval: Duration) -> Self {
        Ambient {
            interval,
            files: None,
            sampler: None,
            capture: None,
            load_note: None,
            clock: None,
            tree_cpu: None,
        }
    }
}

impl Facility for Ambient {
    type Section = Option<AmbientReport>;

    fn lists_the_tree(&self) -> bool {
        true
    }

    fn prepare(&mut self) -> Result<(), ArumError> {
        self.files = Some(Files::open());
        Ok(())
    }

    /// The first sample is taken before the program is released, so the run's deltas cover it.
    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), ArumError> {
        let cpus = crate::system::cpulist::online().unwrap_or_default();
        self.clock = TreeClock::open(run.pid, &cpus);
        if let Some(files) = self.files.take() {
            self.sampler = sampler::start(self.interval, files, run.tree.reader());
        }
        Ok(())
    }

    fn stop(&mut self, run: &mut Stopped<'_>) {
        if let Some((capture, load)) = self.sampler.take().and_then(Sampler::finish_with_load) {
            self.capture = Some(capture);
            self.load_note = load.note("the ambient sampler");
        }
        self.tree_cpu = self.clock.take().map(|c| c.read());
        if self.capture.is_none() {
            run.warnings
                .add("the ambient sampler could not run: no ambient data in this report");
        }
    }

    fn finish(self, reaped: &Reaped) -> Option<AmbientReport> {
        let tree_cpu_ns = tree_cpu_ns(reaped);
        let per_cpu = self.tree_cpu.as_deref();
        let mut report = analyse(self.capture?, self.interval, tree_cpu_ns, per_cpu);
        report.notes.extend(self.load_note);
        Some(report)
    }
}

/// The tree's user + system time from rusage.
fn tree_cpu_ns(reaped: &Reaped) -> u64 {
    let usage = crate::facilities::usage::from_rusage(&reaped.rusage, reaped.wall);
    usage.user_ns + usage.system_ns
}
