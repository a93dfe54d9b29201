//! One perf ring buffer, mapped read-write so that the reader can advance `data_tail` (the kernel
//! then never overwrites unread records: when the buffer is full it counts them as lost and says
//! so in a PERF_RECORD_LOST record). The only unsafe code of `records`.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use perf_event_open_sys::bindings::perf_event_mmap_page;

pub struct Ring {
    base: NonNull<u8>,
    len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping is owned by this value alone; the kernel writes to it concurrently by design
// (the protocol below), and nothing in it is tied to the thread that mapped it.
unsafe impl Send for Ring {}

impl Ring {
    /// [`Ring::map`] with fewer pages where the locked-memory limit refuses `data_pages`.
    pub fn map_within_limit(fd: BorrowedFd<'_>, data_pages: usize) -> Result<Ring, Errno> {
        let mut pages = data_pages;
        loop {
            match Ring::map(fd, pages) {
                Err(Errno::EPERM | Errno::ENOMEM) if pages > 8 => pages /= 2,
                other => return other,
            }
        }
    }

    /// Maps the buffer of event `fd`: one header page and `data_pages` (a power of two) pages.
    pub fn map(fd: BorrowedFd<'_>, data_pages: usize) -> Result<Ring, Errno> {
        debug_assert!(data_pages.is_power_of_two());
        let page = page_size();
        let len = page * (data_pages + 1);
        // SAFETY: a fresh shared mapping of the event's buffer at an address the kernel chooses;
        // it aliases no Rust object. The result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        let base = NonNull::new(p.cast::<u8>()).ok_or(Errno::EINVAL)?;
        let mut ring = Ring {
            base,
            len,
            data_offset: page,
            data_size: page * data_pages,
        };
        // Kernels since 4.1 say where the data is; older ones put it right after the header page.
        let (offset, size) = (ring.header_u64(DATA_OFFSET), ring.header_u64(DATA_SIZE));
        if size != 0 {
            ring.data_offset = offset as usize;
            ring.data_size = size as usize;
        }
        Ok(ring)
    }

    fn header(&self, field: usize) -> &AtomicU64 {
        // SAFETY: `field` is the offset of an 8-byte-aligned u64 inside the header page, which
        // stays mapped for `self`'s lifetime; the kernel updates it concurrently, hence atomics.
        unsafe { &*self.base.as_ptr().add(field).cast::<AtomicU64>() }
    }

    fn header_u64(&self, field: usize) -> u64 {
        self.header(field).load(Ordering::Acquire)
    }

    /// Appends every complete record written since the last call to `out` (records that wrap
    /// around the end of the buffer come out whole) and frees their space for the kernel.
    /// Returns the number of bytes appended.
    pub fn drain(&mut self, out: &mut Vec<u8>) -> usize {
        // Acquire: the records up to `head` are written before the kernel publishes head.
        let head = self.header(DATA_HEAD).load(Ordering::Acquire);
        let tail = self.header(DATA_TAIL).load(Ordering::Relaxed);
        let n = head.wrapping_sub(tail) as usize;
        if n == 0 {
            return 0;
        }
        let n = n.min(self.data_size);
        let start = (tail as usize) % self.data_size;
        let first = n.min(self.data_size - start);
        // SAFETY: [data_offset, data_offset + data_size) lies inside the mapping; both slices
        // stay within it (start < data_size, first <= data_size - start, n - first <= start).
        // The kernel does not write the region between tail and head until tail moves on.
        unsafe {
            let data = self.base.as_ptr().add(self.data_offset);
            out.extend_from_slice(std::slice::from_raw_parts(data.add(start), first));
            out.extend_from_slice(std::slice::from_raw_parts(data, n - first));
        }
        // Release: our reads of the records happen before the kernel may reuse their space.
        self.header(DATA_TAIL).store(head, Ordering::Release);
        n
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`; no reference into it outlives self.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

const DATA_HEAD: usize = std::mem::offset_of!(perf_event_mmap_page, data_head);
const DATA_TAIL: usize = std::mem::offset_of!(perf_event_mmap_page, data_tail);
const DATA_OFFSET: usize = std::mem::offset_of!(perf_event_mmap_page, data_offset);
const DATA_SIZE: usize = std::mem::offset_of!(perf_event_mmap_page, data_size);

pub fn page_size() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |p| p as usize)
}
