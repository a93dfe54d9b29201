//! The stack a child launched in arum's own address space runs on (see `child`), with a guard
//! page below it. The child may write to it until it has exec'd or exited, so the mapping is
//! released only once the child is known to be gone: unmapped any earlier, its pages could be
//! handed to arum's allocator while the child still writes into them.
//!
//! Released, it is kept for the next launch of the process rather than unmapped: unmapping
//! memory of an address space another CPU has run in (the child's, until its exec) makes the
//! kernel interrupt that CPU to flush its TLB, and wake it if the program's exit left it idle,
//! while arum waits to report (docs/launch-overhead.md measures it). The process's last stack
//! goes with the process.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use nix::errno::Errno;

/// Room for `child_main` and the libc calls it makes (a debug build's frames included), with a
/// wide margin: the child touches only the pages it uses.
const STACK_BYTES: usize = 128 * 1024;

/// A released stack's mapping, for the next [`ChildStack::new`] (null when there is none).
static SPARE: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());

pub(super) struct ChildStack {
    base: NonNull<libc::c_void>,
    len: usize,
    guard: usize,
    child_gone: bool,
    /// Where the mapping goes once released: [`SPARE`], or a test's own slot.
    spare: &'static AtomicPtr<libc::c_void>,
}

impl ChildStack {
    pub fn new() -> Result<Self, Errno> {
        Self::new_kept_in(&SPARE)
    }

    fn new_kept_in(spare: &'static AtomicPtr<libc::c_void>) -> Result<Self, Errno> {
        let guard = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .and_then(|p| usize::try_from(p).ok())
            .filter(|&p| p > 0)
            .unwrap_or(4096);
        let len = guard + STACK_BYTES;
        if let Some(base) = NonNull::new(spare.swap(std::ptr::null_mut(), Ordering::AcqRel)) {
            // The same size and guard as when it was made: both come from constants and the
            // page size.
            return Ok(ChildStack {
                base,
                len,
                guard,
                child_gone: true,
                spare,
            });
        }
        // SAFETY: a fresh private anonymous mapping at an address the kernel picks; nothing else
        // refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        let base = NonNull::new(base).expect("mmap does not return NULL on success");
        let stack = ChildStack {
            base,
            len,
            guard,
            child_gone: true,
            spare,
        };
        // The stack grows down: an overflow faults on the guard page instead of writing into
        // whatever arum has mapped below.
        // SAFETY: the first page of the mapping just made, which nothing uses.
        if unsafe { libc::mprotect(base.as_ptr(), guard, libc::PROT_NONE) } != 0 {
            return Err(Errno::last());
        }
        Ok(stack)
    }

    /// Copies `value` to the top of the stack and returns where it now lives and the initial
    /// stack pointer just below it (16-byte aligned, as the x86-64 and AArch64 ABIs want). From
    /// here on the mapping is kept until [`ChildStack::child_gone`].
    pub fn place<T: Copy>(&mut self, value: T) -> (*const T, *mut libc::c_void) {
        let end = self.base.as_ptr() as usize + self.len;
        let at = (end - std::mem::size_of::<T>()) & !(std::mem::align_of::<T>().max(16) - 1);
        debug_assert!(at - (self.base.as_ptr() as usize + self.guard) > STACK_BYTES / 2);
        let slot = at as *mut T;
        // SAFETY: `slot` lies inside the writable part of the mapping, aligned for T, and no
        // child runs on this stack yet.
        unsafe { slot.write(value) };
        self.child_gone = false;
        (slot.cast_const(), slot.cast())
    }

    /// The child has exited or exec'd into a new address space: the stack may go.
    pub fn child_gone(&mut self) {
        self.child_gone = true;
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        if !self.child_gone {
            // A child that may still run on these pages keeps them (a launch abandoned without
            // its reap, which arum never does on purpose): a leak of 132 KiB of address space
            // is the safe outcome.
            return;
        }
        if self
            .spare
            .compare_exchange(
                std::ptr::null_mut(),
                self.base.as_ptr(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            return;
        }
        // SAFETY: the whole mapping made in `new`; no child uses it any more.
        unsafe { libc::munmap(self.base.as_ptr(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_released_stack_serves_the_next_launch_and_one_in_use_does_not() {
        // A slot of the test's own: the tests that launch programs share SPARE.
        static SLOT: AtomicPtr<libc::c_void> = AtomicPtr::new(std::ptr::null_mut());
        let mut first = ChildStack::new_kept_in(&SLOT).expect("mmap");
        let base = first.base;
        let (marked, _) = first.place(0x5EED_u64);
        first.child_gone();
        drop(first);
        let mut again = ChildStack::new_kept_in(&SLOT).expect("reused");
        assert_eq!(again.base, base, "the released mapping is taken again");
        // SAFETY: `marked` lies in the mapping `again` holds: a fresh mapping would read zero.
        let kept = unsafe { marked.read() };
        assert_eq!(kept, 0x5EED, "not unmapped and mapped again");
        again.place(0u64);
        let other = ChildStack::new_kept_in(&SLOT).expect("mmap");
        assert_ne!(other.base, base, "only a released stack is handed out");
        // A child that may still run on `again` keeps it mapped and out of the slot.
        drop(again);
        drop(other);
        let last = ChildStack::new_kept_in(&SLOT).expect("mmap");
        assert_ne!(last.base, base);
        // A second released stack finds the slot taken and is unmapped.
        let extra = ChildStack::new_kept_in(&SLOT).expect("mmap");
        let extra_base = extra.base;
        drop(last);
        drop(extra);
        assert_ne!(SLOT.load(Ordering::Acquire), extra_base.as_ptr());
    }
}
