//! Which logical CPU is which core type on a hybrid Intel part: from the kernel's PMUs
//! (`/sys/bus/event_source/devices/cpu_core/cpus`, `cpu_atom/cpus`, ...), or else from CPUID
//! leaf 0x1A read on each CPU in turn by a helper thread pinned to it.

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::cpu::CoreType;
use crate::sysfs::{parse_cpulist, Pmus};
use crate::table::Unit;

/// The core type of every CPU that has one, and where that came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreTypes {
    pub cpus: Vec<CpuCoreType>,
    /// `sysfs` (the PMUs' cpus files) or `cpuid` (leaf 0x1A on each CPU).
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuCoreType {
    pub cpu: u32,
    /// The PMU that counts this CPU's events.
    pub unit: Unit,
}

impl CoreTypes {
    /// The core type of `cpu`, if known.
    pub fn unit_of(&self, cpu: u32) -> Option<Unit> {
        self.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.unit)
    }

    /// The CPUs of one core type.
    pub fn cpus_of(&self, unit: Unit) -> Vec<u32> {
        self.cpus
            .iter()
            .filter(|c| c.unit == unit)
            .map(|c| c.cpu)
            .collect()
    }
}

/// Core types from the hybrid PMUs' `cpus` files; None on parts without them.
pub fn from_sysfs(pmus: &Pmus) -> Option<CoreTypes> {
    let mut cpus = Vec::new();
    for unit in [Unit::CpuCore, Unit::CpuAtom, Unit::CpuLowpower] {
        if let Some(list) = pmus.get(unit.pmu_name()).and_then(|p| p.cpus.clone()) {
            cpus.extend(list.into_iter().map(|cpu| CpuCoreType { cpu, unit }));
        }
    }
    if cpus.is_empty() {
        return None;
    }
    cpus.sort_by_key(|c| c.cpu);
    Some(CoreTypes {
        cpus,
        source: "sysfs".into(),
    })
}

/// Core types from CPUID leaf 0x1A, read on every online CPU by a thread pinned to it (arum's
/// own threads keep their affinity). None when the leaf reports no core type.
pub fn from_cpuid(units: &[Unit]) -> Option<CoreTypes> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    let online = parse_cpulist(&online)?;
    let found = std::thread::spawn(move || {
        let mut found = Vec::new();
        for cpu in online {
            if pin_to(cpu).is_err() {
                continue;
            }
            if let Some(t) = CoreType::from_reader(&raw_cpuid::CpuIdReaderNative) {
                found.push((cpu, t));
            }
        }
        found
    })
    .join()
    .ok()?;
    if found.is_empty() {
        return None;
    }
    Some(CoreTypes {
        cpus: found
            .into_iter()
            .map(|(cpu, t)| CpuCoreType {
                cpu,
                unit: t.unit(units),
            })
            .collect(),
        source: "cpuid".into(),
    })
}

/// The core types of this machine's CPUs: sysfs first, CPUID 0x1A otherwise.
pub fn detect(pmus: &Pmus, units: &[Unit]) -> Option<CoreTypes> {
    from_sysfs(pmus).or_else(|| from_cpuid(units))
}

/// Pins the calling thread to one CPU. A CPU beyond the kernel's set size is EINVAL.
fn pin_to(cpu: u32) -> std::io::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu as usize)?;
    sched_setaffinity(Pid::from_raw(0), &set)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_cpus_files_give_each_cpus_core_type() {
        let dir = std::env::temp_dir().join(format!("arum-hybrid-{}", std::process::id()));
        for (pmu, ty, cpus) in [("cpu_core", "4", "0-7"), ("cpu_atom", "10", "8-15")] {
            std::fs::create_dir_all(dir.join(pmu)).unwrap();
            std::fs::write(dir.join(pmu).join("type"), ty).unwrap();
            std::fs::write(dir.join(pmu).join("cpus"), cpus).unwrap();
        }
        let t = from_sysfs(&Pmus::read(&dir)).unwrap();
        assert_eq!(t.cpus.len(), 16);
        assert_eq!(t.unit_of(3), Some(Unit::CpuCore));
        assert_eq!(t.unit_of(12), Some(Unit::CpuAtom));
        assert_eq!(t.cpus_of(Unit::CpuAtom), (8..16).collect::<Vec<_>>());
        std::fs::remove_dir_all(&dir).unwrap();
        // A machine without hybrid PMUs has none.
        assert!(from_sysfs(&Pmus::default()).is_none());
    }

    #[test]
    fn cpuid_on_this_machine_agrees_with_its_pmus() {
        // Whatever this host is: a hybrid part has core types both ways, others neither way.
        let pmus = Pmus::system();
        let hybrid_pmus = from_sysfs(&pmus);
        let by_cpuid = from_cpuid(&[Unit::CpuCore, Unit::CpuAtom]);
        match (&hybrid_pmus, &by_cpuid) {
            (Some(s), Some(c)) => {
                for cc in &c.cpus {
                    assert_eq!(s.unit_of(cc.cpu), Some(cc.unit), "CPU {}", cc.cpu);
                }
            }
            (None, _) => eprintln!(
                "this host has no hybrid PMUs (cpu_core/cpu_atom); CPUID 0x1A says {by_cpuid:?}"
            ),
            (Some(_), None) => eprintln!("hybrid PMUs but no CPUID leaf 0x1A (a VM hiding it)"),
        }
    }
}
