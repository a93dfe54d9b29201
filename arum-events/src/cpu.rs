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

/// Parses `--cpu VENDOR-FAMILY-MODEL[-STEPPING]`: family decimal, model (and stepping) hex, as in
/// Intel's mapfile (`GenuineIntel-6-55`, `AuthenticAMD-15-41`, `GenuineIntel-15-3`).
pub fn parse_spec(spec: &str) -> Result<CpuIdent, String> {
    let bad = |why: &str| {
        format!("bad --cpu {spec:?}: {why}; expected VENDOR-FAMILY-MODEL[-STEPPING], e.g. GenuineIntel-6-55 (family decimal, model hex)")
    };
    let parts: Vec<&str> = spec.split('-').collect();
    if !(3..=4).contains(&parts.len()) {
        return Err(bad("wrong number of fields"));
    }
    let vendor = parts[0];
    if vendor.len() != 12 {
        return Err(bad(
            "the vendor is a 12-letter CPUID string (GenuineIntel, AuthenticAMD)",
        ));
    }
    let family = parts[1]
        .parse()
        .map_err(|_| bad("family is not a decimal number"))?;
    let model = u32::from_str_radix(parts[2].trim_start_matches("0x"), 16)
        .map_err(|_| bad("model is not a hex number"))?;
    let stepping = match parts.get(3) {
        Some(s) => u32::from_str_radix(s, 16).map_err(|_| bad("stepping is not a hex number"))?,
        None => 0,
    };
    Ok(CpuIdent {
        vendor: vendor.to_string(),
        family,
        model,
        stepping,
        model_name: String::new(),
    })
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

impl CpuIdent {
    /// Identifies the processor arum runs on.
    pub fn detect() -> Option<CpuIdent> {
        Self::from_reader(CpuId::new())
    }

    /// The counters of the processor arum runs on, as CPUID reports them.
    pub fn detect_pmu(&self) -> Option<PmuFacts> {
        pmu_from_cpuid(CpuId::new(), raw_cpuid::CpuIdReaderNative, self)
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
}
