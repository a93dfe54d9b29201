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

impl CpuIdent {
    /// Identifies the processor arum runs on.
    pub fn detect() -> Option<CpuIdent> {
        Self::from_reader(CpuId::new())
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
