//! Facts about the machine that the report and `arum info` state.

pub mod cpulist;
pub mod delayacct;
pub mod kernel_file;
pub mod perms;
pub mod setid;
pub mod tracefs;

use std::time::SystemTime;

use crate::header::Metadata;

/// The machine's description for the report; `started` is when the program was released.
pub fn metadata(started: SystemTime) -> Metadata {
    machine().started_at(started)
}

/// The machine's description without the run's start time (see [`Metadata::started_at`]).
pub fn machine() -> Metadata {
    let uts = nix::sys::utsname::uname().ok();
    let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
        uts.as_ref()
            .map(|u| f(u).to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    Metadata {
        arum_version: env!("CARGO_PKG_VERSION").into(),
        host: field(|u| u.nodename()),
        kernel_release: field(|u| u.release()),
        kernel_version: field(|u| u.version()),
        arch: field(|u| u.machine()),
        cpu: arum_events::cpu::CpuIdent::detect()
            .unwrap_or_else(arum_events::cpu::CpuIdent::unknown),
        online_cpus: cpulist::online().map(|c| c.len()).unwrap_or(0),
        start_time_utc: String::new(),
        start_time_unix_ns: 0,
    }
}
