//! The capabilities the program gets. arum run by root launches the program as root would, with
//! nothing changed. arum given capabilities by its file (`setcap cap_perfmon,cap_bpf=ep`) for a
//! user who is not root holds them to measure, not to hand on: before exec the child clears its
//! inheritable and ambient sets, so the program ends with none of them (an exec of a file
//! without capabilities already clears the permitted and effective sets of a user who is not
//! root). The bounding set stays: lowering it needs CAP_SETPCAP, which arum is not given, and it
//! only limits what the program could gain, never grants.

use rustix::thread::{CapabilitySet, CapabilitySets};

/// The sets the child sets before exec: arum's own without the inheritable ones, when arum holds
/// capabilities for a user who is not root; none otherwise.
pub(super) fn for_program() -> Option<CapabilitySets> {
    if rustix::process::getuid().is_root() {
        return None;
    }
    let sets = rustix::thread::capabilities(None).ok()?;
    (!sets.permitted.is_empty()).then_some(CapabilitySets {
        inheritable: CapabilitySet::empty(),
        ..sets
    })
}

/// In the child, before exec: clears the ambient and inheritable sets. Raw system calls through
/// rustix, which write no `errno` (see `child`); a failure leaves the sets as they were, which
/// the kernel's exec rules still keep from the program but for inheritable bits that the
/// program's own file capabilities name.
pub(super) fn apply_in_child(sets: Option<CapabilitySets>) {
    if let Some(sets) = sets {
        let _ = rustix::thread::clear_ambient_capability_set();
        let _ = rustix::thread::set_capabilities(None, sets);
    }
}
