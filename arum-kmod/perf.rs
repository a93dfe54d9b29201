// SPDX-License-Identifier: GPL-2.0
//! The kernel's in-kernel perf API, which `bindings` does not cover: declared here, wrapped in
//! one owning type. This is the only unsafe code of the perf back-end.

use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use kernel::prelude::*;

/// `struct perf_event_attr` (include/uapi/linux/perf_event.h, PERF_ATTR_SIZE_VER9).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    aux_action: u32,
    sig_data: u64,
    config3: u64,
    config4: u64,
}
const _: () = assert!(core::mem::size_of::<PerfEventAttr>() == 144);

const ATTR_EXCLUDE_USER: u64 = 1 << 4;
const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;
const ATTR_EXCLUDE_HV: u64 = 1 << 6;

/// Opaque `struct perf_event`.
#[repr(C)]
struct RawEvent {
    _private: [u8; 0],
}

extern "C" {
    fn perf_event_create_kernel_counter(
        attr: *mut PerfEventAttr,
        cpu: c_int,
        task: *mut c_void,
        overflow_handler: *mut c_void,
        context: *mut c_void,
    ) -> *mut RawEvent;
    fn perf_event_read_value(event: *mut RawEvent, enabled: *mut u64, running: *mut u64) -> u64;
    fn perf_event_release_kernel(event: *mut RawEvent) -> c_int;
    fn perf_event_disable(event: *mut RawEvent);
}

/// One counter of one CPU, counting every task on that CPU. Released on drop.
pub(crate) struct CpuCounter(NonNull<RawEvent>);

// SAFETY: a perf event may be read, disabled and released from any CPU and thread; the kernel
// serialises these operations internally.
unsafe impl Send for CpuCounter {}
// SAFETY: as above; `&CpuCounter` only reads.
unsafe impl Sync for CpuCounter {}

impl CpuCounter {
    /// Creates and enables a counter of `type_`/`config` on `cpu`.
    pub(crate) fn new(cpu: u32, type_: u32, config: u64, config1: u64, user: bool, kernel: bool) -> Result<Self> {
        let mut attr = PerfEventAttr {
            type_,
            size: core::mem::size_of::<PerfEventAttr>() as u32,
            config,
            config1,
            flags: ATTR_EXCLUDE_HV
                | if user { 0 } else { ATTR_EXCLUDE_USER }
                | if kernel { 0 } else { ATTR_EXCLUDE_KERNEL },
            ..Default::default()
        };
        // SAFETY: `attr` is a complete perf_event_attr of the size it states; a NULL task makes
        // this a CPU counter, and NULL handler and context are allowed for counting events.
        let ptr = unsafe {
            perf_event_create_kernel_counter(&mut attr, cpu as c_int, core::ptr::null_mut(), core::ptr::null_mut(), core::ptr::null_mut())
        };
        let addr = ptr as isize;
        if (-4095..0).contains(&addr) {
            return Err(Error::from_errno(addr as i32));
        }
        NonNull::new(ptr).map(CpuCounter).ok_or(EINVAL)
    }

    /// (value, time enabled, time running).
    pub(crate) fn read(&self) -> (u64, u64, u64) {
        let (mut enabled, mut running) = (0u64, 0u64);
        // SAFETY: the event is alive (owned by self); the out-pointers are valid locals.
        let value = unsafe { perf_event_read_value(self.0.as_ptr(), &mut enabled, &mut running) };
        (value, enabled, running)
    }

    pub(crate) fn stop(&self) {
        // SAFETY: the event is alive (owned by self).
        unsafe { perf_event_disable(self.0.as_ptr()) };
    }
}

impl Drop for CpuCounter {
    fn drop(&mut self) {
        // SAFETY: we own the event; it is released exactly once, here.
        unsafe { perf_event_release_kernel(self.0.as_ptr()) };
    }
}
