//! `kernel.task_delayacct`, read and written: the one setting of the machine arum changes (for
//! `--enable-delayacct`), and puts back after a killed run (`crate::leftovers`).

use std::ffi::CStr;

pub const SYSCTL: &str = "/proc/sys/kernel/task_delayacct";
/// The same path for async-signal-safe writes (no allocation).
pub const SYSCTL_C: &CStr = c"/proc/sys/kernel/task_delayacct";

/// Whether delay accounting is on now. `None` where the kernel has no such setting.
pub fn is_on() -> Option<bool> {
    std::fs::read_to_string(SYSCTL)
        .ok()
        .map(|v| v.trim() != "0")
}

/// Turns delay accounting off.
pub fn turn_off() -> std::io::Result<()> {
    std::fs::write(SYSCTL, "0")
}
