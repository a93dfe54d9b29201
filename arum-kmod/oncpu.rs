// SPDX-License-Identifier: GPL-2.0
//! Running a closure on a given CPU through a workqueue item and waiting for it
//! (`work_on_cpu`), the only unsafe code of per-CPU configuration.

use core::ffi::c_void;
use kernel::ffi::c_long;
use kernel::bindings;
use kernel::prelude::*;

struct Call<'a> {
    f: &'a mut dyn FnMut() -> Result,
    result: Result,
}

unsafe extern "C" fn trampoline(arg: *mut c_void) -> c_long {
    // SAFETY: `arg` is the `Call` that `run_on` passed and keeps alive until the work is done.
    let call = unsafe { &mut *arg.cast::<Call<'_>>() };
    call.result = (call.f)();
    0
}

/// Runs `f` on `cpu` in process context and returns its result.
pub(crate) fn run_on(cpu: u32, f: &mut dyn FnMut() -> Result) -> Result {
    let mut call = Call { f, result: Ok(()) };
    let key = kernel::static_lock_class!();
    // SAFETY: `trampoline` matches the callback signature; `call` outlives the call because
    // work_on_cpu_key waits for the work item to finish; the lock class key is static.
    unsafe {
        bindings::work_on_cpu_key(cpu as i32, Some(trampoline), (&raw mut call).cast(), key.as_ptr());
    }
    call.result
}
