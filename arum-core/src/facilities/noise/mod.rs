//! `--noise-probe[=CPUS]`: a gap-detecting thread at SCHED_IDLE on each chosen CPU beside the
//! measured program (arum hourglass's noise probe). It runs only when the CPU would otherwise
//! idle, and reports the interrupts, kernel work and other tasks it saw take the CPU.

pub mod findings;
pub mod html;
pub mod model;
pub mod text;

use arum_hourglass::{NoiseProbe, NoiseReport};

use crate::error::ArumError;
use crate::facility::{Armed, Facility, Stopped};
use crate::launch::Reaped;

pub struct Noise {
    /// The CPUs to probe; empty: every CPU arum may run on.
    cpus: Vec<usize>,
    probe: Option<NoiseProbe>,
    report: Option<NoiseReport>,
}

impl Noise {
    pub fn new(cpus: &[usize]) -> Self {
        Noise {
            cpus: cpus.to_vec(),
            probe: None,
            report: None,
        }
    }
}

impl Facility for Noise {
    type Section = Option<NoiseReport>;

    /// The probe's threads start while the child is held (after fork: they live in arum), and
    /// calibrate before the program runs.
    fn arm(&mut self, _run: &mut Armed<'_>) -> Result<(), ArumError> {
        let probe =
            NoiseProbe::start(&self.cpus).map_err(|e| ArumError::NoiseProbe(e.to_string()))?;
        self.probe = Some(probe);
        Ok(())
    }

    fn stop(&mut self, run: &mut Stopped<'_>) {
        if let Some(probe) = self.probe.take() {
            let report = probe.finish();
            for why in &report.failed {
                run.warnings.add(format!("noise probe: {why}"));
            }
            self.report = Some(report);
        }
    }

    fn finish(self, _reaped: &Reaped) -> Option<NoiseReport> {
        self.report
    }
}
