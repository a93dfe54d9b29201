//! The suite's private network: arum moves itself into a new network namespace before anything
//! starts, so the server, the clients and every measured run see only its loopback, and no
//! address outside it can be contacted. `tc netem` on that loopback sets the conditions.

use std::process::Command;

use nix::sched::{unshare, CloneFlags};

use crate::error::ArumError;

/// Enters a new network namespace with its loopback up. Must run before arum starts a thread:
/// the namespace is the calling thread's, and threads and children made afterwards inherit it.
pub fn enter() -> Result<(), ArumError> {
    unshare(CloneFlags::CLONE_NEWNET).map_err(|e| {
        ArumError::Suite(format!(
            "cannot create a network namespace ({e}): run it as root (CAP_SYS_ADMIN)"
        ))
    })?;
    run("ip", &["link", "set", "lo", "up"])
}

/// The `tc` command that sets `netem` (arguments) on the loopback.
pub fn netem_command(args: &str) -> String {
    format!("tc qdisc replace dev lo root netem {args}")
}

/// Whether this kernel has netem, tried on the namespace's loopback (and taken off again).
pub fn check_netem() -> Result<(), ArumError> {
    run(
        "tc",
        &[
            "qdisc", "replace", "dev", "lo", "root", "netem", "delay", "0ms",
        ],
    )
    .map_err(|e| {
        ArumError::Suite(format!(
            "[network] netem is not available here ({e}); the kernel needs \
             CONFIG_NET_SCH_NETEM (the sch_netem module): use such a kernel, or remove [network]"
        ))
    })?;
    run("tc", &["qdisc", "del", "dev", "lo", "root"])
}

fn run(program: &str, args: &[&str]) -> Result<(), ArumError> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| ArumError::Suite(format!("{program}: {e}; install iproute2")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(ArumError::Suite(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}
