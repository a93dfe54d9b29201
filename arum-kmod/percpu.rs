// SPDX-License-Identifier: GPL-2.0
//! Running one function on many CPUs at once: a work item per CPU, queued on that CPU's bound
//! high-priority worker pool (`queue_work_on`), then waiting for all of them. Every CPU starts,
//! reads or stops its counters within microseconds of the others, instead of one after another.
//!
//! The work items are allocated once per session and reused, so a timer expiry allocates
//! nothing. The caller keeps its data borrowed until every item has finished (`run` waits), so
//! the items may point at it.

use core::marker::PhantomPinned;

use kernel::bindings;
use kernel::prelude::*;
use kernel::sync::LockClassKey;
use kernel::types::Opaque;

/// One CPU's work item and what it runs this time.
#[repr(C)]
struct Call {
    /// First field: the work function gets its address and casts it back to the `Call`.
    work: Opaque<bindings::work_struct>,
    cpu: u32,
    /// The job: a monomorphic trampoline, the caller's closure and its item, set by `run`.
    trampoline: Option<unsafe fn(*const (), *mut ())>,
    job: *const (),
    item: *mut (),
    _pin: PhantomPinned,
}

/// The work items of one session, one per CPU slot, initialised once.
pub(crate) struct Calls {
    calls: KVec<Call>,
}

// SAFETY: the raw pointers in a `Call` are set and used only within one `run`, which borrows the
// job and the items (both `Sync`/`Send` as required there) until every work item has finished.
unsafe impl Send for Calls {}
// SAFETY: `run` takes `&mut self`; a shared `Calls` gives no access.
unsafe impl Sync for Calls {}

unsafe extern "C" fn work_fn(work: *mut bindings::work_struct) {
    let call = work.cast::<Call>();
    // SAFETY: `work` is the first field of a `#[repr(C)]` `Call` that `run` queued; `run` set
    // the three fields before queueing and waits for this function before touching them again.
    unsafe {
        if let Some(t) = (*call).trampoline {
            t((*call).job, (*call).item);
        }
    }
}

/// Calls `(*job)(&mut *item)` with the types `run` erased.
unsafe fn trampoline<T, F: Fn(&mut T)>(job: *const (), item: *mut ()) {
    // SAFETY: `run` passed a `&F` and a `&mut T` (each item to exactly one work item), both
    // borrowed until this returns.
    unsafe { (*job.cast::<F>())(&mut *item.cast::<T>()) }
}

impl Calls {
    /// Work items for `cpus`, in that order, of lockdep class `key`. Waiting for a work item
    /// tells lockdep of every lock any item of its class takes: runs made under different locks
    /// need classes of their own, or lockdep chains one run's locks to the other's.
    pub(crate) fn new(
        cpus: impl Iterator<Item = u32>,
        n: usize,
        key: Pin<&'static LockClassKey>,
    ) -> Result<Self> {
        let mut calls = KVec::with_capacity(n, GFP_KERNEL)?;
        for cpu in cpus {
            calls.push(
                Call {
                    work: Opaque::uninit(),
                    cpu,
                    trampoline: None,
                    job: core::ptr::null(),
                    item: core::ptr::null_mut(),
                    _pin: PhantomPinned,
                },
                GFP_KERNEL,
            )?;
        }
        for call in calls.iter_mut() {
            // SAFETY: the vector is never grown again, so each `work_struct` keeps its address
            // for the life of `Calls`; it is initialised once, here, before any use.
            unsafe {
                bindings::init_work_with_key(
                    call.work.get(),
                    Some(work_fn),
                    false,
                    c"arum_percpu".as_char_ptr(),
                    key.as_ptr(),
                )
            };
        }
        Ok(Calls { calls })
    }

    /// Runs `job` on item `k` on the CPU of slot `k`, for every `k` where `wanted(item)`, all
    /// at once; returns when all have finished. `items` is indexed like the CPUs given to `new`.
    ///
    /// The caller must keep the CPUs from going away meanwhile: a CPU's hotplug callback of
    /// this module waits for the session lock that the caller holds.
    pub(crate) fn run<T: Send, F: Fn(&mut T) + Sync>(
        &mut self,
        items: &mut [T],
        wanted: impl Fn(&T) -> bool,
        job: &F,
    ) {
        let mut queued = 0usize;
        for (call, item) in self.calls.iter_mut().zip(items.iter_mut()) {
            if !wanted(item) {
                continue;
            }
            call.trampoline = Some(trampoline::<T, F>);
            call.job = (job as *const F).cast();
            call.item = (item as *mut T).cast();
            // SAFETY: the work item was initialised in `new` and is idle (every earlier `run`
            // waited for it); `system_highpri_wq` is a bound per-CPU workqueue that lives as
            // long as the kernel.
            unsafe {
                bindings::queue_work_on(
                    call.cpu as i32,
                    bindings::system_highpri_wq,
                    call.work.get(),
                )
            };
            queued += 1;
        }
        if queued == 0 {
            return;
        }
        // Shared references only while items may run: a running `work_fn` reads its `Call`
        // through a raw pointer, which a `&mut Call` would claim to be the only access to.
        for call in self.calls.iter() {
            if call.trampoline.is_some() {
                // SAFETY: the work item is initialised; flushing waits for it to finish.
                unsafe { bindings::flush_work(call.work.get()) };
            }
        }
        // Every item has finished: nothing reads the calls any more.
        for call in self.calls.iter_mut() {
            call.trampoline = None;
        }
    }
}
