//! CPU identification and PMU facts from injected CPUID answers, and the table each CPU gets.

use arum_events::cpu::{pmu_from_cpuid, CpuIdent, PmuFacts, PmuSource};
use arum_events::table::TableSource;
use raw_cpuid::{CpuId, CpuIdResult};

/// A CPU described by the leaves ARUM reads.
#[derive(Clone)]
struct Fake {
    vendor: &'static [u8; 12],
    eax1: u32,
    /// Leaf 0xA (eax, edx), Intel architectural perfmon.
    perfmon: Option<(u32, u32)>,
    /// 0x8000_0001 ECX bit 23 (PerfCtrExtCore) and 0x8000_0022 EBX (Zen 4+ counter count).
    ext_core: bool,
    leaf_80000022_ebx: Option<u32>,
    /// Leaf 0xA EBX: architectural events not available.
    perfmon_ebx: u32,
    /// Leaf 0x1A EAX: hybrid core type and native model.
    core_type: Option<u32>,
}

impl Fake {
    fn read(&self, leaf: u32, _sub: u32) -> CpuIdResult {
        let word = |i: usize| u32::from_le_bytes(self.vendor[i..i + 4].try_into().unwrap());
        let r = |eax, ebx, ecx, edx| CpuIdResult { eax, ebx, ecx, edx };
        match leaf {
            0 => r(0x1A, word(0), word(8), word(4)),
            1 => r(self.eax1, 0, 0, 0),
            0xA => self
                .perfmon
                .map_or(r(0, 0, 0, 0), |(a, d)| r(a, self.perfmon_ebx, 0, d)),
            0x1A => r(self.core_type.unwrap_or(0), 0, 0, 0),
            0x8000_0000 => r(
                if self.leaf_80000022_ebx.is_some() {
                    0x8000_0022
                } else {
                    0x8000_0008
                },
                0,
                0,
                0,
            ),
            0x8000_0001 => r(0, 0, if self.ext_core { 1 << 23 } else { 0 }, 0),
            0x8000_0022 => r(0, self.leaf_80000022_ebx.unwrap_or(0), 0, 0),
            _ => r(0, 0, 0, 0),
        }
    }
}

fn identify(f: &Fake) -> (CpuIdent, Option<PmuFacts>, Option<String>) {
    let reader = {
        let f = f.clone();
        move |leaf, sub| f.read(leaf, sub)
    };
    let cpu = CpuIdent::from_reader(CpuId::with_cpuid_reader(reader.clone())).unwrap();
    let pmu = pmu_from_cpuid(CpuId::with_cpuid_reader(reader.clone()), reader, &cpu);
    let table = TableSource::default()
        .for_cpu(&cpu)
        .unwrap()
        .map(|t| t.name().to_string());
    (cpu, pmu, table)
}

fn base(vendor: &'static [u8; 12], eax1: u32) -> Fake {
    Fake {
        vendor,
        eax1,
        perfmon: None,
        ext_core: false,
        leaf_80000022_ebx: None,
        perfmon_ebx: 0,
        core_type: None,
    }
}

/// CPUID leaf 1 EAX for a display family/model/stepping (SDM vol. 2A, CPUID leaf 1).
fn signature(family: u32, model: u32, stepping: u32) -> u32 {
    let (base_family, ext_family) = if family >= 0xF {
        (0xF, family - 0xF)
    } else {
        (family, 0)
    };
    ext_family << 20 | (model >> 4) << 16 | base_family << 8 | (model & 0xF) << 4 | stepping
}

#[test]
fn every_table_is_found_from_cpuid_for_one_model_of_each_rule() {
    let all = TableSource::default().all().unwrap();
    let mut checked = 0;
    for t in &all {
        let vendor: &'static [u8; 12] = match t.vendor() {
            "GenuineIntel" => b"GenuineIntel",
            "AuthenticAMD" => b"AuthenticAMD",
            other => panic!("{}: vendor {other}", t.name()),
        };
        for m in t.matches() {
            let model = m.models[0][1];
            let stepping = m.steppings.as_ref().map_or(0, |s| s[0][1]);
            let (cpu, _, table) = identify(&base(vendor, signature(m.family, model, stepping)));
            assert_eq!(
                (cpu.family, cpu.model, cpu.stepping),
                (m.family, model, stepping),
                "{}",
                t.name()
            );
            assert_eq!(table.as_deref(), Some(t.name()), "{}", cpu.key());
            checked += 1;
        }
    }
    assert!(checked >= all.len());
}

#[test]
fn architectural_events_follow_leaf_0xa_ebx() {
    use arum_events::cpu::ArchPerfmon;
    // v4, 4 counters; EBX bit 6 set: branch misses retired not available; 7 bits valid.
    let mut f = base(b"GenuineIntel", signature(19, 1, 0));
    f.perfmon = Some((4 | 4 << 8 | 48 << 16 | 7 << 24, 3 | 48 << 5));
    f.perfmon_ebx = 1 << 6;
    let reader = move |leaf, sub| f.read(leaf, sub);
    let cpu = CpuIdent::from_reader(CpuId::with_cpuid_reader(reader.clone())).unwrap();
    let a = ArchPerfmon::from_reader(&reader, &cpu).unwrap();
    assert_eq!((a.version, a.general_counters, a.fixed_counters), (4, 4, 3));
    assert!(a.has(0) && a.has(1) && a.has(5) && !a.has(6) && !a.has(7));
    // No table for family 19: cycles get the architectural encoding, branch misses only the
    // kernel's generic one.
    let r = arum_events::resolve::Resolver::new(&cpu, None).with_arch(Some(a));
    let reg = |name: &str| match r.resolve(name).unwrap().kind {
        arum_events::resolve::EventKind::Hardware(h) => h,
        _ => panic!(),
    };
    let cycles = reg("cycles");
    assert!(cycles.raw);
    assert_eq!(cycles.config, 0x3c);
    assert_eq!(cycles.counters, Some(vec![0, 1, 2, 3, 33]));
    assert_eq!(reg("instructions").counters, Some(vec![0, 1, 2, 3, 32]));
    assert_eq!(reg("cache-misses").config, 0x412e);
    assert_eq!(reg("ref-cycles").counters, Some(vec![34]));
    let misses = reg("branch-misses");
    assert!(!misses.raw && misses.register_source.is_none());
    // A VM reporting version 0 has no architectural events.
    let mut vm = base(b"GenuineIntel", signature(6, 0xA7, 1));
    vm.perfmon = Some((0, 0));
    let reader = move |leaf, sub| vm.read(leaf, sub);
    let cpu = CpuIdent::from_reader(CpuId::with_cpuid_reader(reader.clone())).unwrap();
    assert!(ArchPerfmon::from_reader(&reader, &cpu).is_none());
}

#[test]
fn hybrid_core_types_from_leaf_0x1a() {
    use arum_events::cpu::CoreType;
    use arum_events::table::Unit;
    let read = |eax: Option<u32>| {
        let mut f = base(b"GenuineIntel", signature(6, 0xC6, 2));
        f.core_type = eax;
        move |leaf, sub| f.read(leaf, sub)
    };
    let two = [Unit::CpuAtom, Unit::CpuCore];
    let three = [Unit::CpuAtom, Unit::CpuCore, Unit::CpuLowpower];
    let core = CoreType::from_reader(&read(Some(0x4000_0001))).unwrap();
    assert_eq!((core.kind, core.name()), (0x40, "Intel Core"));
    assert_eq!(core.unit(&three), Unit::CpuCore);
    // Skymont (native model 3) and Crestmont (2) atoms: cpu_atom and, on Arrow Lake-H with its
    // three PMUs, cpu_lowpower.
    let skymont = CoreType::from_reader(&read(Some(0x2000_0003))).unwrap();
    let crestmont = CoreType::from_reader(&read(Some(0x2000_0002))).unwrap();
    assert_eq!(skymont.unit(&three), Unit::CpuAtom);
    assert_eq!(crestmont.unit(&three), Unit::CpuLowpower);
    assert_eq!(crestmont.unit(&two), Unit::CpuAtom);
    assert!(CoreType::from_reader(&read(None)).is_none());
    // The hybrid parts' tables: Alder Lake has two core types, Arrow Lake three.
    let (cpu, _, table) = identify(&base(b"GenuineIntel", signature(6, 0x97, 2)));
    assert_eq!(table.as_deref(), Some("intel-alderlake"));
    let t = TableSource::default().for_cpu(&cpu).unwrap().unwrap();
    let units: Vec<Unit> = t.units().into_iter().map(|(u, _)| u).collect();
    assert_eq!(units, two);
    let (cpu, _, _) = identify(&base(b"GenuineIntel", signature(6, 0xC6, 2)));
    let t = TableSource::default().for_cpu(&cpu).unwrap().unwrap();
    assert_eq!(t.units().len(), 3, "{}", t.name());
}

#[test]
fn k8_opteron_rev_f() {
    let (cpu, pmu, table) = identify(&base(b"AuthenticAMD", 0x0004_0F12));
    assert_eq!((cpu.family, cpu.model, cpu.stepping), (0x0F, 0x41, 2));
    assert_eq!(table.as_deref(), Some("amd-k8"));
    assert_eq!(pmu.unwrap().general_counters, 4);
}

#[test]
fn family_10h_barcelona() {
    let (cpu, _, table) = identify(&base(b"AuthenticAMD", 0x0010_0F22));
    assert_eq!((cpu.family, cpu.model), (0x10, 0x02));
    assert_eq!(table.as_deref(), Some("amd-fam10h"));
}

#[test]
fn core2_with_arch_perfmon_v2() {
    // Xeon 5400 (Harpertown), 6/17h; leaf 0xA: v2, 2 counters of 40 bits, 3 fixed of 40 bits.
    let mut f = base(b"GenuineIntel", 0x0001_0676);
    f.perfmon = Some((2 | 2 << 8 | 40 << 16, 3 | 40 << 5));
    let (cpu, pmu, table) = identify(&f);
    assert_eq!((cpu.family, cpu.model, cpu.stepping), (6, 0x17, 6));
    assert_eq!(table.as_deref(), Some("intel-core2"));
    let p = pmu.unwrap();
    assert_eq!(
        (
            p.arch_perfmon_version,
            p.general_counters,
            p.counter_width,
            p.fixed_counters,
            p.fixed_width
        ),
        (2, 2, 40, 3, 40)
    );
}

#[test]
fn netburst_has_eighteen_counters_without_leaf_0xa() {
    let (cpu, pmu, table) = identify(&base(b"GenuineIntel", 0x0000_0F34));
    assert_eq!((cpu.family, cpu.model), (15, 3));
    assert_eq!(table.as_deref(), Some("intel-netburst"));
    assert_eq!(pmu.unwrap().general_counters, 18);
}

#[test]
fn cascade_lake_and_a_vm_that_hides_the_pmu() {
    let mut f = base(b"GenuineIntel", 0x0005_0657);
    f.perfmon = Some((4 | 4 << 8 | 48 << 16, 3 | 48 << 5));
    let (cpu, pmu, table) = identify(&f);
    assert_eq!((cpu.model, cpu.stepping), (0x55, 7));
    assert_eq!(table.as_deref(), Some("intel-cascadelakex"));
    let p = pmu.unwrap();
    assert_eq!(
        (p.arch_perfmon_version, p.general_counters, p.fixed_counters),
        (4, 4, 3)
    );
    assert_eq!(p.source, PmuSource::Cpuid);
    // Our VMs report leaf 0xA version 0: no usable counters from CPUID.
    f.perfmon = Some((0, 0));
    assert!(identify(&f).1.is_none());
}

#[test]
fn zen3_zen4_zen5_counters() {
    let mut z3 = base(b"AuthenticAMD", 0x00A0_0F11);
    z3.ext_core = true;
    let (cpu, pmu, table) = identify(&z3);
    assert_eq!((cpu.family, cpu.model), (0x19, 0x01));
    assert_eq!(table.as_deref(), Some("amd-zen3"));
    assert_eq!(pmu.unwrap().general_counters, 6);

    let mut z4 = base(b"AuthenticAMD", 0x00A1_0F11);
    z4.ext_core = true;
    z4.leaf_80000022_ebx = Some(6);
    let (cpu, pmu, table) = identify(&z4);
    assert_eq!((cpu.family, cpu.model), (0x19, 0x11));
    assert_eq!(table.as_deref(), Some("amd-zen4"));
    assert_eq!(pmu.unwrap().general_counters, 6);

    let mut z5 = base(b"AuthenticAMD", 0x00B0_0F20);
    z5.ext_core = true;
    z5.leaf_80000022_ebx = Some(6);
    let (cpu, _, table) = identify(&z5);
    assert_eq!((cpu.family, cpu.model), (0x1A, 0x02));
    assert_eq!(table.as_deref(), Some("amd-zen5"));
}
