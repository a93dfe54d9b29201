//! The capabilities the program gets. arum started as it is for its user launches the program as
//! its user would, with nothing changed (root's program keeps root's capabilities, a service's
//! ambient ones stay). arum whose own exec raised its privilege (capabilities in its file, such
//! as `setcap cap_perfmon,cap_bpf=ep`: the kernel then marks the start AT_SECURE) holds them to
//! measure, not to hand on: before exec the child clears its inheritable and ambient sets, so the
//! program ends with none of them (an exec of a file without capabilities already clears the
//! permitted and effective sets of a user who is not root). The bounding set stays: lowering it
//! needs CAP_SETPCAP, which arum is not given, and it only limits what the program could gain.

use rustix::thread::{CapabilitySet, CapabilitySets};

/// The sets the child sets before exec: arum's own without the inheritable ones, when arum's
/// start raised its privilege; none otherwise.
pub(super) fn for_program() -> Option<CapabilitySets> {
    // SAFETY: getauxval only reads the auxiliary vector the kernel gave the process.
    let secure = unsafe { libc::getauxval(libc::AT_SECURE) } != 0;
    if !secure || rustix::process::getuid().is_root() {
        return None;
    }
    let sets = rustix::thread::capabilities(None).ok()?;
    Some(CapabilitySets {
        inheritable: CapabilitySet::empty(),
        ..sets
    })
}

/// In the child, before exec: clears the ambient and inheritable sets. Raw system calls through
/// rustix, which write no `errno` (see `child`). A failure (a security module refusing the
/// change) is returned: the program must not run with capabilities arum promised to drop.
pub(super) fn apply_in_child(sets: Option<CapabilitySets>) -> Result<(), rustix::io::Errno> {
    if let Some(sets) = sets {
        rustix::thread::clear_ambient_capability_set()?;
        rustix::thread::set_capabilities(None, sets)?;
    }
    Ok(())
}
