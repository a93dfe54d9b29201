//! Each CPU's periodic-gap finding, with the CPUs that share it: on a machine of many CPUs most
//! probes say the same, and the text and HTML reports print each finding once.

use arum_hourglass::noise::CpuNoise;

/// A finding and the CPUs whose probes made it, in the order the CPUs were probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding<'a> {
    pub cpus: Vec<u32>,
    pub statement: &'a str,
}

impl Finding<'_> {
    /// "CPU 3" or "CPUs 0-7,9".
    pub fn which(&self) -> String {
        match self.cpus.as_slice() {
            [one] => format!("CPU {one}"),
            cs => format!("CPUs {}", crate::system::cpulist::format(cs)),
        }
    }
}

/// The distinct findings of `cpus`, in the order of their first CPU.
pub fn grouped(cpus: &[CpuNoise]) -> Vec<Finding<'_>> {
    let mut groups: Vec<Finding<'_>> = Vec::new();
    for c in cpus {
        let Some(t) = &c.tick else { continue };
        match groups.iter_mut().find(|g| g.statement == t.statement) {
            Some(g) => g.cpus.push(c.cpu as u32),
            None => groups.push(Finding {
                cpus: vec![c.cpu as u32],
                statement: &t.statement,
            }),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use arum_hourglass::analysis::TickVerdict;
    use arum_hourglass::noise::GapStats;

    fn cpu(cpu: usize, statement: Option<&str>) -> CpuNoise {
        CpuNoise {
            cpu,
            seconds: 1.0,
            ran_seconds: 0.5,
            probe_cpu_seconds: 0.1,
            interrupts: GapStats::default(),
            tasks: GapStats::default(),
            tick: statement.map(|s| TickVerdict {
                thread: 0,
                cpu,
                inferred_hz: None,
                sources_hz: Vec::new(),
                kernel_hz: None,
                agrees: None,
                statement: s.into(),
            }),
        }
    }

    #[test]
    fn cpus_with_the_same_finding_share_one() {
        let cpus = [
            cpu(0, Some("a")),
            cpu(1, Some("b")),
            cpu(2, Some("a")),
            cpu(3, None),
            cpu(4, Some("a")),
        ];
        let g = grouped(&cpus);
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].which(), g[0].statement),
            ("CPUs 0,2,4".to_string(), "a")
        );
        assert_eq!((g[1].which(), g[1].statement), ("CPU 1".to_string(), "b"));
        let many: Vec<CpuNoise> = (0..64).map(|c| cpu(c, Some("quiet"))).collect();
        assert_eq!(grouped(&many)[0].which(), "CPUs 0-63");
    }
}
