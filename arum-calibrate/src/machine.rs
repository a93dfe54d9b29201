//! Which machine the figures belong to: host, CPU and kernel (the key the saved figures are
//! filed under), and the facts the report's header shows.

use arum_events::cpu::CpuIdent;

use crate::clock::Clock;
use crate::model::Machine;

/// Host, CPU and kernel: figures measured under one identity hold for that identity only.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub host: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub cpu: CpuIdent,
}

impl Identity {
    pub fn detect() -> Identity {
        let uts = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uts.as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        Identity {
            host: field(|u| u.nodename()),
            kernel_release: field(|u| u.release()),
            kernel_version: field(|u| u.version()),
            cpu: CpuIdent::detect().unwrap_or_else(CpuIdent::unknown),
        }
    }

    /// `host_VENDOR-FAMILY-MODEL-STEPPING_kernel`, reduced to characters safe in a file name.
    pub fn key(&self) -> String {
        let raw = format!(
            "{}_{}-{}-{:X}-{}_{}",
            self.host,
            self.cpu.vendor,
            self.cpu.family,
            self.cpu.model,
            self.cpu.stepping,
            self.kernel_release
        );
        raw.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }

    pub fn of(m: &Machine) -> Identity {
        Identity {
            host: m.host.clone(),
            kernel_release: m.kernel_release.clone(),
            kernel_version: m.kernel_version.clone(),
            cpu: CpuIdent {
                vendor: m.cpu_vendor.clone(),
                family: m.cpu_family,
                model: m.cpu_model,
                stepping: m.cpu_stepping,
                model_name: m.cpu_model_name.clone(),
            },
        }
    }
}

pub fn describe(clock: &Clock, allowed_cpus: Vec<usize>) -> Machine {
    let id = Identity::detect();
    Machine {
        host: id.host,
        kernel_release: id.kernel_release,
        kernel_version: id.kernel_version,
        cpu_vendor: id.cpu.vendor,
        cpu_family: id.cpu.family,
        cpu_model: id.cpu.model,
        cpu_stepping: id.cpu.stepping,
        cpu_model_name: id.cpu.model_name,
        online_cpus: arum_camp::cpus().map_or(1, |c| c.len()),
        allowed_cpus,
        memory_total_bytes: arum_camp::memory().map(|m| m.total_bytes).unwrap_or(0),
        tsc: clock.facts(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_a_safe_file_name_that_names_host_cpu_and_kernel() {
        let id = Identity {
            host: "db 1/prod".into(),
            kernel_release: "6.1.0-18-amd64".into(),
            kernel_version: "#1 SMP".into(),
            cpu: CpuIdent {
                vendor: "GenuineIntel".into(),
                family: 6,
                model: 0x55,
                stepping: 7,
                model_name: "Xeon".into(),
            },
        };
        assert_eq!(id.key(), "db_1_prod_GenuineIntel-6-55-7_6.1.0-18-amd64");
    }
}
