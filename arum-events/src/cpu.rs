//! Processor identification from CPUID: vendor, display family/model, stepping, model name.

use raw_cpuid::{CpuId, CpuIdReader};
use serde::{Deserialize, Serialize};

/// Who made the processor and which one it is, in the terms of the vendors' event lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuIdent {
    /// CPUID vendor string, e.g. `GenuineIntel`, `AuthenticAMD`.
    pub vendor: String,
    /// Display family (base family, plus extended family when the base is 0xF).
    pub family: u32,
    /// Display model (extended model in the high nibble where the vendor uses it).
    pub model: u32,
    pub stepping: u32,
    /// The brand string, e.g. `Intel(R) Xeon(R) Processor`.
    pub model_name: String,
}

/// What the processor's performance-monitoring unit offers, per logical CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PmuFacts {
    /// Intel architectural perfmon version (CPUID leaf 0xA); 0 where absent or not usable.
    pub arch_perfmon_version: u32,
    pub general_counters: u32,
    pub counter_width: u32,
    pub fixed_counters: u32,
    pub fixed_width: u32,
    /// Where the facts come from: CPUID, or the event table when CPUID says nothing usable.
    pub source: PmuSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PmuSource {
    Cpuid,
    Table,
    /// Neither CPUID nor a table describes the counters (e.g. a VM that hides the PMU).
    None,
}

/// Parses `--cpu`: `VENDOR-FAMILY-MODEL[-STEPPING]` as in the kernel's mapfile (family decimal,
/// model and stepping hex: `GenuineIntel-6-55`, `AuthenticAMD-25-1`, `GenuineIntel-15-3`), with
/// `intel`/`amd`/`hygon` for the vendor, `0x` prefixes, or no vendor where the family tells
/// (`6-55`, `25-1`).
pub fn parse_spec(spec: &str) -> Result<CpuIdent, String> {
    let bad = |why: &str| {
        format!("bad --cpu {spec:?}: {why}; expected VENDOR-FAMILY-MODEL[-STEPPING], e.g. GenuineIntel-6-55 or 6-55 (family decimal, model hex), or a table name from `arum list --cpus`")
    };
    let parts: Vec<&str> = spec.trim().split('-').collect();
    let (vendor, rest) = match parts.first().map(|v| vendor_name(v)) {
        Some(Some(v)) => (Some(v), &parts[1..]),
        Some(None) if parts[0].chars().all(|c| c.is_ascii_hexdigit() || c == 'x') => (None, &parts[..]),
        _ => {
            return Err(bad(
                "the vendor is a 12-letter CPUID string (GenuineIntel, AuthenticAMD, HygonGenuine) or intel/amd/hygon",
            ))
        }
    };
    if !(2..=3).contains(&rest.len()) {
        return Err(bad("wrong number of fields"));
    }
    let family = match rest[0]
        .strip_prefix("0x")
        .or_else(|| rest[0].strip_prefix("0X"))
    {
        Some(h) => u32::from_str_radix(h, 16),
        None => rest[0].parse(),
    }
    .map_err(|_| bad("family is not a decimal (or 0x-prefixed hex) number"))?;
    let hex =
        |s: &str| u32::from_str_radix(s.trim_start_matches("0x").trim_start_matches("0X"), 16);
    let model = hex(rest[1]).map_err(|_| bad("model is not a hex number"))?;
    let stepping = match rest.get(2) {
        Some(s) => hex(s).map_err(|_| bad("stepping is not a hex number"))?,
        None => 0,
    };
    if model > 0xFF || stepping > 0xF {
        return Err(bad("the model is at most FF and the stepping at most F"));
    }
    let vendor = match vendor {
        Some(v) => v,
        None => vendor_of_family(family).ok_or_else(|| {
            bad(&format!(
                "family {family} is made by more than one vendor; name it, e.g. GenuineIntel-{family}-{} or AuthenticAMD-{family}-{}",
                rest[1], rest[1]
            ))
        })?,
    };
    Ok(CpuIdent {
        vendor: vendor.to_string(),
        family,
        model,
        stepping,
        model_name: String::new(),
    })
}

fn vendor_name(v: &str) -> Option<&'static str> {
    match v.to_ascii_lowercase().as_str() {
        "genuineintel" | "intel" => Some("GenuineIntel"),
        "authenticamd" | "amd" => Some("AuthenticAMD"),
        "hygongenuine" | "hygon" => Some("HygonGenuine"),
        _ => None,
    }
}

/// The vendor a family number belongs to, where only one vendor uses it: Intel 6, 19;
/// AMD 16, 17, 20-23, 25, 26 (15 and 18 are both vendors').
fn vendor_of_family(family: u32) -> Option<&'static str> {
    match family {
        6 | 19 => Some("GenuineIntel"),
        16 | 17 | 20..=23 | 25..=31 => Some("AuthenticAMD"),
        _ => None,
    }
}

/// For a `--cpu` spec whose model was probably typed in decimal: the model read as decimal, if
/// that one matches a table and the hex one does not (`6-23` → model 0x17, Core 2).
pub fn decimal_model_hint(
    spec: &str,
    cpu: &CpuIdent,
    has_table: impl Fn(&CpuIdent) -> Option<String>,
) -> Option<String> {
    if has_table(cpu).is_some() {
        return None;
    }
    let parts: Vec<&str> = spec.trim().split('-').collect();
    let skip = usize::from(vendor_name(parts[0]).is_some());
    let text = parts.get(skip + 1)?;
    if !text.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let decimal: u32 = text.parse().ok().filter(|m| *m <= 0xFF)?;
    if decimal == cpu.model {
        return None;
    }
    let alt = CpuIdent {
        model: decimal,
        ..cpu.clone()
    };
    let title = has_table(&alt)?;
    Some(format!(
        "no event table for {} (model {:#x}); did you mean {}-{:X} (model {decimal:#x}, {decimal} in decimal): {title}?",
        cpu.key(),
        cpu.model,
        cpu.family,
        decimal
    ))
}

/// Counter facts from CPUID: Intel leaf 0xA; AMD PerfCtrExtCore (0x8000_0001 ECX[23]) and leaf
/// 0x8000_0022 (Zen 4+); NetBurst has no leaf 0xA but a fixed layout of 18 counters.
pub fn pmu_from_cpuid<R: CpuIdReader + Clone>(
    cpuid: CpuId<R>,
    reader: R,
    ident: &CpuIdent,
) -> Option<PmuFacts> {
    let facts = |v, g, w, f, fw| PmuFacts {
        arch_perfmon_version: v,
        general_counters: g,
        counter_width: w,
        fixed_counters: f,
        fixed_width: fw,
        source: PmuSource::Cpuid,
    };
    match ident.vendor.as_str() {
        "GenuineIntel" if ident.family == 15 => Some(facts(0, 18, 40, 0, 0)),
        "GenuineIntel" => {
            let pm = cpuid.get_performance_monitoring_info()?;
            if pm.version_id() == 0 || pm.number_of_counters() == 0 {
                return None;
            }
            let fixed = if pm.version_id() >= 2 {
                u32::from(pm.fixed_function_counters())
            } else {
                0
            };
            let fixed_w = if pm.version_id() >= 2 {
                u32::from(pm.fixed_function_counters_bit_width())
            } else {
                0
            };
            Some(facts(
                u32::from(pm.version_id()),
                u32::from(pm.number_of_counters()),
                u32::from(pm.counter_bit_width()),
                fixed,
                fixed_w,
            ))
        }
        "AuthenticAMD" | "HygonGenuine" => {
            let max_ext = reader.cpuid1(0x8000_0000).eax;
            if max_ext >= 0x8000_0022 {
                let ebx = reader.cpuid1(0x8000_0022).ebx;
                if ebx & 0xF != 0 {
                    return Some(facts(0, ebx & 0xF, 48, 0, 0));
                }
            }
            let ext_core =
                max_ext >= 0x8000_0001 && reader.cpuid1(0x8000_0001).ecx & (1 << 23) != 0;
            Some(facts(0, if ext_core { 6 } else { 4 }, 48, 0, 0))
        }
        _ => None,
    }
}

/// Intel's architectural performance events (SDM vol. 3B, "Pre-defined Architectural Performance
/// Events"): bit i of CPUID.0AH:EBX set means event i is *not* available; EAX[31:24] says how many
/// of the bits are valid. (event select, unit mask, name, perf's generic name).
pub const ARCH_EVENTS: [(u32, u32, &str, &str); 8] = [
    (0x3C, 0x00, "UnHalted Core Cycles", "cycles"),
    (0xC0, 0x00, "Instructions Retired", "instructions"),
    // The kernel maps this one to perf's bus-cycles (ref-cycles is fixed counter 2).
    (0x3C, 0x01, "UnHalted Reference Cycles", "bus-cycles"),
    (0x2E, 0x4F, "LLC Reference", "cache-references"),
    (0x2E, 0x41, "LLC Misses", "cache-misses"),
    (0xC4, 0x00, "Branch Instructions Retired", "branches"),
    (0xC5, 0x00, "Branch Misses Retired", "branch-misses"),
    (0xA4, 0x01, "Topdown Slots", "slots"),
];

/// What CPUID leaf 0xA says about the architectural events and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchPerfmon {
    pub version: u32,
    pub general_counters: u32,
    pub counter_width: u32,
    pub fixed_counters: u32,
    pub fixed_width: u32,
    /// Bit i set: [`ARCH_EVENTS`]\[i\] is available.
    pub available: u32,
    /// False when the facts are assumed (a CPU named with --cpu, not the one arum runs on).
    pub from_cpuid: bool,
}

impl ArchPerfmon {
    /// Reads leaf 0xA; None when the vendor is not Intel or the leaf reports no usable PMU
    /// (version 0, as in VMs that hide the PMU).
    pub fn from_reader<R: CpuIdReader>(reader: &R, ident: &CpuIdent) -> Option<ArchPerfmon> {
        if ident.vendor != "GenuineIntel" || reader.cpuid1(0).eax < 0xA {
            return None;
        }
        let r = reader.cpuid1(0xA);
        let version = r.eax & 0xFF;
        if version == 0 {
            return None;
        }
        let len = (r.eax >> 24) & 0xFF;
        let valid = if len >= 32 {
            u32::MAX
        } else {
            (1u32 << len) - 1
        };
        Some(ArchPerfmon {
            version,
            general_counters: (r.eax >> 8) & 0xFF,
            counter_width: (r.eax >> 16) & 0xFF,
            fixed_counters: if version >= 2 { r.edx & 0x1F } else { 0 },
            fixed_width: if version >= 2 { (r.edx >> 5) & 0xFF } else { 0 },
            available: !r.ebx & valid & 0xFF,
            from_cpuid: true,
        })
    }

    /// Leaf 0xA of the machine arum runs on.
    pub fn detect(ident: &CpuIdent) -> Option<ArchPerfmon> {
        ArchPerfmon::from_reader(&SharedCpuid, ident)
    }

    /// For an Intel CPU named with --cpu: the seven events of version 2, counters unknown.
    pub fn assumed() -> ArchPerfmon {
        ArchPerfmon {
            version: 2,
            general_counters: 2,
            counter_width: 40,
            fixed_counters: 3,
            fixed_width: 40,
            available: 0x7F,
            from_cpuid: false,
        }
    }

    pub fn has(&self, i: usize) -> bool {
        i < 32 && self.available >> i & 1 == 1
    }
}

/// AMD's core events that every family from K8 to Zen 5 has with the same encoding (BKDGs and
/// PPRs): (event select, unit mask, name, perf's generic name). What ARUM counts by name on an
/// AMD CPU that has no table.
pub const AMD_LEGACY_EVENTS: [(u32, u32, &str, &str); 4] = [
    (0x76, 0x00, "CPU clocks not halted", "cycles"),
    (0xC0, 0x00, "Retired instructions", "instructions"),
    (0xC2, 0x00, "Retired branch instructions", "branches"),
    (
        0xC3,
        0x00,
        "Retired mispredicted branch instructions",
        "branch-misses",
    ),
];

/// The core type of one logical CPU of a hybrid Intel part, from CPUID leaf 0x1A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreType {
    /// EAX[31:24]: 0x20 Intel Atom, 0x40 Intel Core.
    pub kind: u32,
    /// EAX[23:0]: the native model ID (e.g. 2 Crestmont, 3 Skymont among Atom cores).
    pub native_model: u32,
}

pub const CORE_TYPE_ATOM: u32 = 0x20;
pub const CORE_TYPE_CORE: u32 = 0x40;

impl CoreType {
    /// Reads leaf 0x1A of the CPU the calling thread runs on; None where the leaf is absent or
    /// reports no core type (not a hybrid part).
    pub fn from_reader<R: CpuIdReader>(reader: &R) -> Option<CoreType> {
        if reader.cpuid1(0).eax < 0x1A {
            return None;
        }
        let eax = reader.cpuid2(0x1A, 0).eax;
        let kind = eax >> 24;
        (kind != 0).then_some(CoreType {
            kind,
            native_model: eax & 0xFF_FFFF,
        })
    }

    /// The PMU that counts this core type's events, as Linux names it (arch/x86/events/intel/
    /// core.c find_hybrid_pmu_for_cpu): Core cores `cpu_core`; Atom cores `cpu_atom`, except the
    /// Crestmont low-power cores of parts that also have Skymont ones (`cpu_lowpower`).
    pub fn unit(&self, units: &[crate::table::Unit]) -> crate::table::Unit {
        use crate::table::Unit;
        match self.kind {
            CORE_TYPE_CORE => Unit::CpuCore,
            CORE_TYPE_ATOM if units.contains(&Unit::CpuLowpower) && self.native_model == 2 => {
                Unit::CpuLowpower
            }
            _ => Unit::CpuAtom,
        }
    }

    pub fn name(&self) -> &'static str {
        match self.kind {
            CORE_TYPE_CORE => "Intel Core",
            CORE_TYPE_ATOM => "Intel Atom",
            _ => "unknown core type",
        }
    }
}

/// CPUID of the machine arum runs on, each (leaf, subleaf) executed once per process. In a
/// virtual machine every CPUID instruction exits to the hypervisor (docs/launch-overhead.md has
/// what that costs); identifying the CPU, its counters and its architectural events would ask
/// the same leaves (0, 0x8000_0000, 0xA) twelve times in all per run, seven of them distinct.
/// Only for leaves that say the same on every CPU of the machine (vendor, signature, brand,
/// counters): the per-CPU leaves (core type, APIC IDs) are read with the native reader on the
/// CPU in question.
#[derive(Clone, Copy, Default)]
pub struct SharedCpuid;

impl CpuIdReader for SharedCpuid {
    fn cpuid2(&self, eax: u32, ecx: u32) -> raw_cpuid::CpuIdResult {
        type Answers = Vec<((u32, u32), raw_cpuid::CpuIdResult)>;
        static ANSWERS: std::sync::Mutex<Answers> = std::sync::Mutex::new(Vec::new());
        let mut answers = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = answers.iter().find(|(k, _)| *k == (eax, ecx)) {
            return *r;
        }
        let r = raw_cpuid::CpuIdReaderNative.cpuid2(eax, ecx);
        answers.push(((eax, ecx), r));
        r
    }
}

impl CpuIdent {
    /// What a report says of a processor that could not be identified.
    pub fn unknown() -> CpuIdent {
        CpuIdent {
            vendor: "unknown".into(),
            family: 0,
            model: 0,
            stepping: 0,
            model_name: String::new(),
        }
    }

    /// Identifies the processor arum runs on. Asked once per process: a run wants the answer
    /// for its events, its report and its saved calibration, and every CPUID costs a trip to
    /// the hypervisor (see [`SharedCpuid`]).
    ///
    /// The kernel's record of the boot CPU's CPUID answers (the first processor of
    /// /proc/cpuinfo) is read first, CPUID asked only where that record is missing or lacks a
    /// field: on a virtual machine each of the identity's six CPUID instructions exits to the
    /// hypervisor, which costs more than the one read (docs/launch-overhead.md has the figures).
    pub fn detect() -> Option<CpuIdent> {
        static DETECTED: std::sync::OnceLock<Option<CpuIdent>> = std::sync::OnceLock::new();
        DETECTED
            .get_or_init(|| {
                Self::from_kernel()
                    .or_else(|| Self::from_reader(CpuId::with_cpuid_reader(SharedCpuid)))
            })
            .clone()
    }

    /// The identity as the kernel recorded it from CPUID at boot: the first processor's entry of
    /// /proc/cpuinfo.
    fn from_kernel() -> Option<CpuIdent> {
        use std::io::Read;
        // The identity's lines open a processor's entry (about 150 bytes); one read of 1 KiB
        // takes them without having the kernel format the rest of the file (every processor's
        // flags), which costs about as much again. Only whole lines are parsed.
        let mut buf = [0u8; 1024];
        let n = std::fs::File::open("/proc/cpuinfo")
            .ok()?
            .read(&mut buf)
            .ok()?;
        let end = buf[..n].iter().rposition(|&b| b == b'\n')?;
        Self::from_cpuinfo(std::str::from_utf8(&buf[..end]).ok()?)
    }

    /// Reads the identity from the first processor's entry of an x86 /proc/cpuinfo (`vendor_id`,
    /// `cpu family`, `model`, `stepping` in decimal, `model name`); None unless all five are
    /// there (a stepping of `unknown`, another architecture's file).
    pub fn from_cpuinfo(text: &str) -> Option<CpuIdent> {
        let (mut vendor, mut family, mut model, mut stepping, mut model_name) =
            (None, None, None, None, None);
        // A blank line ends the first processor's entry.
        for line in text.lines().take_while(|l| !l.trim().is_empty()) {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "vendor_id" => vendor = Some(value.to_string()),
                "cpu family" => family = value.parse().ok(),
                "model" => model = value.parse().ok(),
                "stepping" => stepping = value.parse().ok(),
                "model name" => model_name = Some(value.to_string()),
                _ => {}
            }
        }
        Some(CpuIdent {
            vendor: vendor?,
            family: family?,
            model: model?,
            stepping: stepping?,
            model_name: model_name?,
        })
    }

    /// The counters of the processor arum runs on, as CPUID reports them.
    pub fn detect_pmu(&self) -> Option<PmuFacts> {
        pmu_from_cpuid(CpuId::with_cpuid_reader(SharedCpuid), SharedCpuid, self)
    }

    /// Identifies the processor whose CPUID answers come from `cpuid` (tests inject them).
    pub fn from_reader<R: CpuIdReader>(cpuid: CpuId<R>) -> Option<CpuIdent> {
        let vendor = cpuid.get_vendor_info()?.as_str().to_string();
        let f = cpuid.get_feature_info()?;
        let model_name = cpuid
            .get_processor_brand_string()
            .map(|b| b.as_str().trim().to_string())
            .unwrap_or_default();
        Some(CpuIdent {
            vendor,
            family: u32::from(f.family_id()),
            model: u32::from(f.model_id()),
            stepping: u32::from(f.stepping_id()),
            model_name,
        })
    }

    /// The key used by Intel's mapfile and by `--cpu`: `VENDOR-FAMILY-MODEL`, family in decimal,
    /// model in upper-case hex without a prefix (e.g. `GenuineIntel-6-55`).
    pub fn key(&self) -> String {
        format!("{}-{}-{:X}", self.vendor, self.family, self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use raw_cpuid::CpuIdResult;

    /// A CPUID reader answering leaf 0 (vendor) and leaf 1 (signature) only.
    fn fake(vendor: &[u8; 12], eax1: u32) -> impl Fn(u32, u32) -> CpuIdResult + Clone {
        let word = |i: usize| u32::from_le_bytes(vendor[i..i + 4].try_into().unwrap());
        let (ebx, edx, ecx) = (word(0), word(4), word(8));
        move |leaf, _| match leaf {
            0 => CpuIdResult {
                eax: 1,
                ebx,
                ecx,
                edx,
            },
            1 => CpuIdResult {
                eax: eax1,
                ebx: 0,
                ecx: 0,
                edx: 0,
            },
            _ => CpuIdResult {
                eax: 0,
                ebx: 0,
                ecx: 0,
                edx: 0,
            },
        }
    }

    #[test]
    fn cascade_lake_signature() {
        // 0x50657: ext. model 5, family 6, model 5, stepping 7.
        let cpu =
            CpuIdent::from_reader(CpuId::with_cpuid_reader(fake(b"GenuineIntel", 0x0005_0657)))
                .unwrap();
        assert_eq!((cpu.family, cpu.model, cpu.stepping), (6, 0x55, 7));
        assert_eq!(cpu.key(), "GenuineIntel-6-55");
    }

    #[test]
    fn k8_signature_uses_extended_model() {
        // Opteron rev F: family 0xF, ext. model 4, model 1, stepping 2.
        let cpu =
            CpuIdent::from_reader(CpuId::with_cpuid_reader(fake(b"AuthenticAMD", 0x0004_0F12)))
                .unwrap();
        assert_eq!((cpu.family, cpu.model, cpu.stepping), (15, 0x41, 2));
        assert_eq!(cpu.key(), "AuthenticAMD-15-41");
    }

    #[test]
    fn zen3_signature_adds_extended_family() {
        // Family 0xF + ext. family 0xA = 0x19; model 0x01.
        let cpu =
            CpuIdent::from_reader(CpuId::with_cpuid_reader(fake(b"AuthenticAMD", 0x00A0_0F11)))
                .unwrap();
        assert_eq!((cpu.family, cpu.model), (0x19, 0x01));
    }

    /// The opening of the first entry of /proc/cpuinfo on our Intel 6/CF VM (a 1 KiB read
    /// ends inside a later line; the parser is given whole lines only).
    const CPUINFO_6_CF: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
        model\t\t: 207\nmodel name\t: Intel(R) Xeon(R) Processor\nstepping\t: 2\n\
        microcode\t: 0x1\ncpu MHz\t\t: 2300.000\ncache size\t: 266240 KB\n";

    #[test]
    fn cpuinfo_entry_gives_the_identity_cpuid_would() {
        let cpu = CpuIdent::from_cpuinfo(CPUINFO_6_CF).unwrap();
        assert_eq!(
            cpu,
            CpuIdent {
                vendor: "GenuineIntel".into(),
                family: 6,
                model: 0xCF,
                stepping: 2,
                model_name: "Intel(R) Xeon(R) Processor".into(),
            }
        );
        assert_eq!(cpu.key(), "GenuineIntel-6-CF");
        // An AMD entry: the family is the display family (0xF + extended 0xA), as CPUID's.
        let zen3 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n\
            model name\t: AMD EPYC 7B13\nstepping\t: 0\n";
        assert_eq!(
            CpuIdent::from_cpuinfo(zen3).unwrap().key(),
            "AuthenticAMD-25-1"
        );
    }

    #[test]
    fn cpuinfo_without_every_field_of_the_first_entry_is_refused() {
        // Cut before the stepping.
        let cut = &CPUINFO_6_CF[..CPUINFO_6_CF.find("stepping").unwrap()];
        assert_eq!(CpuIdent::from_cpuinfo(cut), None);
        assert_eq!(
            CpuIdent::from_cpuinfo(&CPUINFO_6_CF.replace("stepping\t: 2", "stepping\t: unknown")),
            None
        );
        // The second processor's fields do not complete the first's.
        let split = CPUINFO_6_CF.replace("stepping\t: 2\n", "\nprocessor\t: 1\nstepping\t: 2\n");
        assert_eq!(CpuIdent::from_cpuinfo(&split), None);
        // Another architecture's file (arm64).
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(CpuIdent::from_cpuinfo(arm), None);
    }

    /// The kernel's record and the instruction are two sources of the same answer: on the
    /// machine running the tests they must agree.
    #[test]
    fn this_machines_cpuinfo_agrees_with_cpuid() {
        let Some(kernel) = CpuIdent::from_kernel() else {
            eprintln!(
                "/proc/cpuinfo has no x86 identity here: only CPUID is read (checked: it answers)"
            );
            assert!(CpuIdent::from_reader(CpuId::new()).is_some());
            return;
        };
        assert_eq!(Some(kernel), CpuIdent::from_reader(CpuId::new()));
    }

    #[test]
    fn shared_cpuid_answers_as_the_instruction_does_for_each_leaf_and_subleaf() {
        let native = raw_cpuid::CpuIdReaderNative;
        // Leaf 7's subleaves list different features: an answer kept under the leaf alone
        // would show here. Each asked twice, the second time from memory.
        for (leaf, sub) in [
            (0, 0),
            (0x8000_0000, 0),
            (7, 0),
            (7, 1),
            (0, 0),
            (7, 1),
            (7, 0),
        ] {
            assert_eq!(
                SharedCpuid.cpuid2(leaf, sub),
                native.cpuid2(leaf, sub),
                "leaf {leaf:#x} subleaf {sub}"
            );
        }
    }
}
