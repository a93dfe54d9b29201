//! What this process may measure: perf_event_paranoid and the relevant capabilities.

use serde::{Deserialize, Serialize};

const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    /// /proc/sys/kernel/perf_event_paranoid (None where the kernel has no perf events).
    pub perf_event_paranoid: Option<i32>,
    pub root: bool,
    pub cap_perfmon: bool,
    pub cap_sys_admin: bool,
}

impl Permissions {
    pub fn current() -> Self {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let cap_eff = procfs::process::Process::myself()
            .and_then(|p| p.status())
            .ok()
            .map(|s| s.capeff)
            .unwrap_or(0);
        Permissions {
            perf_event_paranoid: paranoid,
            root: nix::unistd::geteuid().is_root(),
            cap_perfmon: cap_eff & (1 << CAP_PERFMON) != 0,
            cap_sys_admin: cap_eff & (1 << CAP_SYS_ADMIN) != 0,
        }
    }

    /// May count every process on a CPU (system-wide mode).
    pub fn system_wide_allowed(&self) -> bool {
        self.cap_perfmon || self.cap_sys_admin || self.perf_event_paranoid.is_some_and(|p| p <= 0)
    }

    /// May count kernel-mode events of its own children.
    pub fn kernel_allowed(&self) -> bool {
        self.cap_perfmon || self.cap_sys_admin || self.perf_event_paranoid.is_some_and(|p| p <= 1)
    }
}
