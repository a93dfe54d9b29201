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
}

impl Fake {
    fn read(&self, leaf: u32, _sub: u32) -> CpuIdResult {
        let word = |i: usize| u32::from_le_bytes(self.vendor[i..i + 4].try_into().unwrap());
        let r = |eax, ebx, ecx, edx| CpuIdResult { eax, ebx, ecx, edx };
        match leaf {
            0 => r(0x16, word(0), word(8), word(4)),
            1 => r(self.eax1, 0, 0, 0),
            0xA => self.perfmon.map_or(r(0, 0, 0, 0), |(a, d)| r(a, 0, 0, d)),
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
        .map(|t| t.table.name);
    (cpu, pmu, table)
}

fn base(vendor: &'static [u8; 12], eax1: u32) -> Fake {
    Fake {
        vendor,
        eax1,
        perfmon: None,
        ext_core: false,
        leaf_80000022_ebx: None,
    }
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
    assert_eq!(table.as_deref(), Some("intel-skx"));
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
