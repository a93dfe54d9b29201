//! Hybrid Intel parts: each core type has its own PMU and encodings; an event opens on the PMU
//! of every core type that has it, with the CPUs each covers.

use arum_events::cpu::parse_spec;
use arum_events::generic::{PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_RAW};
use arum_events::resolve::{EncodingSource, Resolver};
use arum_events::sysfs::Pmus;
use arum_events::table::{TableSource, Unit};

/// A sysfs tree as an Alder Lake part shows it: cpu_core type 4 on CPUs 0-7, cpu_atom type 10
/// on CPUs 8-15.
fn alder_lake_sysfs() -> (std::path::PathBuf, Pmus) {
    let dir = std::env::temp_dir().join(format!("arum-adl-{}", std::process::id()));
    for (pmu, ty, cpus) in [("cpu_core", "4", "0-7"), ("cpu_atom", "10", "8-15")] {
        std::fs::create_dir_all(dir.join(pmu).join("events")).unwrap();
        std::fs::write(dir.join(pmu).join("type"), ty).unwrap();
        std::fs::write(dir.join(pmu).join("cpus"), cpus).unwrap();
    }
    let pmus = Pmus::read(&dir);
    (dir, pmus)
}

#[test]
fn an_event_opens_on_each_core_types_pmu_with_its_own_encoding() {
    let cpu = parse_spec("GenuineIntel-6-97").unwrap();
    let t = TableSource::default().for_cpu(&cpu).unwrap().unwrap();
    assert!(t.is_hybrid());
    let (dir, pmus) = alder_lake_sysfs();
    let r = Resolver::new(&cpu, Some(t)).with_pmus(Some(&pmus));

    // `cycles` is a different event on each core type; both come from the table.
    let c = r.resolve("cycles").unwrap();
    assert!(matches!(c.source, EncodingSource::Table { .. }));
    assert_eq!(c.targets.len(), 2);
    let core = c.targets.iter().find(|x| x.unit == Unit::CpuCore).unwrap();
    let atom = c.targets.iter().find(|x| x.unit == Unit::CpuAtom).unwrap();
    assert_eq!((core.pmu.as_str(), core.perf_type), ("cpu_core", 4));
    assert_eq!((atom.pmu.as_str(), atom.perf_type), ("cpu_atom", 10));
    assert_eq!(core.cpus.as_deref(), Some(&(0..8).collect::<Vec<_>>()[..]));
    assert_eq!(atom.cpus.as_deref(), Some(&(8..16).collect::<Vec<_>>()[..]));
    assert_eq!(core.config & 0xFF, 0x3c);
    assert_eq!(atom.config & 0xFF, 0x3c);

    // An event only one core type has opens there only.
    let only_core = r.resolve("L1D.REPLACEMENT").unwrap();
    assert_eq!(only_core.targets.len(), 1);
    assert_eq!(only_core.targets[0].unit, Unit::CpuCore);
    // A core type can be named.
    let atom_only = r.resolve("cpu_atom/INST_RETIRED.ANY/").unwrap();
    assert_eq!(atom_only.targets.len(), 1);
    assert_eq!(atom_only.targets[0].perf_type, 10);

    // A generic event the table does not map targets each PMU by its type in config[63:32].
    let g = r.resolve("dTLB-load-misses").unwrap();
    assert_eq!(g.source, EncodingSource::Generic);
    for x in &g.targets {
        assert_eq!(x.perf_type, PERF_TYPE_HW_CACHE);
        assert_eq!(x.config & 0xFFFF_FFFF, 0x10003);
        assert_eq!(
            x.config >> 32,
            if x.unit == Unit::CpuCore { 4u64 } else { 10 }
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_this_machines_pmus_the_types_are_assumed_and_said_so() {
    // --cpu of a hybrid part on another machine: cpu_core/cpu_atom are not in sysfs here.
    let cpu = parse_spec("GenuineIntel-6-AA").unwrap();
    let t = TableSource::default().for_cpu(&cpu).unwrap().unwrap();
    let r = Resolver::new(&cpu, Some(t));
    let e = r.resolve("stalled-cycles-frontend").unwrap();
    assert!(e.targets.len() >= 2);
    for x in &e.targets {
        assert_eq!(x.perf_type, PERF_TYPE_HARDWARE);
        assert_eq!(x.config, 7, "no PMU type known to put in the upper half");
        assert!(x
            .note
            .as_deref()
            .is_some_and(|n| n.contains("known only on the machine")));
        assert!(x.cpus.is_none());
    }
    let i = r.resolve("INST_RETIRED.ANY").unwrap();
    assert!(i.targets.iter().all(|x| x.perf_type == PERF_TYPE_RAW));
}
