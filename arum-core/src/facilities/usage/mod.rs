//! Resource usage of the launched program: the kernel's rusage for it (wait4), and the peak
//! resident memory of the whole process tree, which rusage cannot give (see `peak`).

pub mod html;
pub mod model;
mod peak;
pub mod text;

use std::sync::Arc;
use std::time::Duration;

use crate::facilities::usage::model::Usage;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;
use crate::periodic::Sampler;
use crate::tree::Tree;

use peak::TreeStats;

/// The resource-usage facility.
pub struct ResourceUsage {
    tree: Option<Arc<Tree>>,
    /// Whether to sample the tree's memory (`--no-memory-sampling` turns it off).
    sampling: bool,
    sampler: Option<Sampler<TreeStats>>,
    stats: TreeStats,
}

impl ResourceUsage {
    pub fn new(sampling: bool) -> ResourceUsage {
        ResourceUsage {
            tree: None,
            sampling,
            sampler: None,
            stats: TreeStats::default(),
        }
    }
}

impl Facility for ResourceUsage {
    type Section = Usage;

    fn arm(&mut self, run: &mut Armed<'_>) -> Result<(), crate::error::ArumError> {
        self.tree = Some(run.tree.clone());
        Ok(())
    }

    fn released(&mut self) {
        if let Some(tree) = self.tree.as_ref().filter(|_| self.sampling) {
            self.sampler = peak::start(tree);
        }
    }

    fn stop(&mut self, _run: &mut Stopped<'_>) {
        if let Some(s) = self.sampler.take() {
            self.stats = s.finish().unwrap_or_default();
        }
    }

    fn finish(self, reaped: &Reaped) -> Usage {
        let mut usage = from_rusage(&reaped.rusage, reaped.wall);
        let exact = self.tree.as_ref().and_then(|t| t.memory_peak());
        usage.peak_memory = Some(peak::peak_memory(
            self.sampling.then_some(&self.stats),
            exact,
            usage.rusage_maxrss_bytes,
            reaped.pre_exec_maxrss_bytes,
        ));
        usage.estimates = estimates(&usage);
        usage
    }
}

/// What the counts cost, by the figures `arum calibrate --save` keeps for this machine (host, CPU
/// and kernel); none without a saved calibration.
fn estimates(u: &Usage) -> Vec<arum_calibrate::saved::Estimate> {
    let Some(costs) = arum_calibrate::saved::load_for_this_machine() else {
        return Vec::new();
    };
    costs.estimate(&arum_calibrate::saved::Counts {
        context_switches: Some(u.voluntary_context_switches + u.involuntary_context_switches),
        minor_faults: Some(u.minor_faults),
        major_faults: Some(u.major_faults),
        ..Default::default()
    })
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000)
}

/// Converts wait4's rusage of the program (and its reaped descendants) into the report's terms.
pub fn from_rusage(ru: &libc::rusage, wall: Duration) -> Usage {
    let user = timeval(ru.ru_utime);
    let system = timeval(ru.ru_stime);
    let wall_ns = wall.as_nanos() as u64;
    Usage {
        wall_ns,
        user_ns: user.as_nanos() as u64,
        system_ns: system.as_nanos() as u64,
        cpu_utilisation: if wall_ns == 0 {
            0.0
        } else {
            (user + system).as_nanos() as f64 / wall_ns as f64
        },
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
        voluntary_context_switches: ru.ru_nvcsw as u64,
        involuntary_context_switches: ru.ru_nivcsw as u64,
        block_input_ops: ru.ru_inblock as u64,
        block_output_ops: ru.ru_oublock as u64,
        signals_received: ru.ru_nsignals as u64,
        rusage_maxrss_bytes: ru.ru_maxrss as u64 * 1024,
        peak_memory: None,
        estimates: Vec::new(),
    }
}
