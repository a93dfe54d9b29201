//! What this process may measure: perf_event_paranoid and the relevant capabilities.

use caps::{CapSet, Capability};
use serde::{Deserialize, Serialize};

/// How to let a group of users measure with arum, as perf's guide lets them use perf
/// (Documentation/admin-guide/perf-security.rst): the capabilities the in-kernel engine and
/// counting need, never CAP_SYS_ADMIN, on a copy only the group may run. Every hint that asks
/// for a privilege ends with it.
pub const GRANT: &str = "or let a group measure (README, Privileges): `sudo groupadd arum_users; \
     sudo usermod -aG arum_users $USER; sudo install -m 0750 -g arum_users \"$(command -v arum)\" \
     /usr/local/bin/arum; sudo setcap cap_perfmon,cap_bpf=ep /usr/local/bin/arum`";

/// Refuses an arum installed set-user-ID or set-group-ID: it would write files and launch the
/// program as the file's owner, not as its user. Capabilities in the file are the way (GRANT).
pub fn refuse_set_id() -> Result<(), String> {
    let (ruid, euid) = (rustix::process::getuid(), rustix::process::geteuid());
    let (rgid, egid) = (rustix::process::getgid(), rustix::process::getegid());
    if ruid == euid && rgid == egid {
        return Ok(());
    }
    Err(format!(
        "arum runs set-user-ID or set-group-ID (uid {} as {}, gid {} as {}), which would write files \
         and run the program as another user: remove the bit (`sudo chmod ug-s arum`) {GRANT}",
        ruid.as_raw(),
        euid.as_raw(),
        rgid.as_raw(),
        egid.as_raw()
    ))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    /// /proc/sys/kernel/perf_event_paranoid (None where the kernel has no perf events).
    pub perf_event_paranoid: Option<i32>,
    pub root: bool,
    pub cap_perfmon: bool,
    pub cap_sys_admin: bool,
    pub cap_bpf: bool,
}

impl Permissions {
    pub fn current() -> Self {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        let effective = |cap| caps::has_cap(None, CapSet::Effective, cap).unwrap_or(false);
        Permissions {
            perf_event_paranoid: paranoid,
            root: nix::unistd::geteuid().is_root(),
            cap_perfmon: effective(Capability::CAP_PERFMON),
            cap_sys_admin: effective(Capability::CAP_SYS_ADMIN),
            cap_bpf: effective(Capability::CAP_BPF),
        }
    }

    /// May count every process on a CPU (system-wide mode).
    pub fn system_wide_allowed(&self) -> bool {
        self.cap_perfmon || self.cap_sys_admin || self.perf_event_paranoid.is_some_and(|p| p <= 0)
    }

    /// May load and attach tracing BPF programs (the in-kernel probe engine).
    pub fn bpf_allowed(&self) -> bool {
        self.cap_sys_admin || (self.cap_bpf && self.cap_perfmon)
    }

    /// May count kernel-mode events of its own children.
    pub fn kernel_allowed(&self) -> bool {
        self.cap_perfmon || self.cap_sys_admin || self.perf_event_paranoid.is_some_and(|p| p <= 1)
    }
}
