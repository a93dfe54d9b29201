//! Memory mappings and aligned buffers: the only place that turns raw memory into slices.

use std::io;
use std::num::NonZeroUsize;
use std::os::fd::AsFd;
use std::ptr::NonNull;

use nix::sys::mman::{madvise, mmap, mmap_anonymous, munmap, MapFlags, MmapAdvise, ProtFlags};

use super::errno;

pub fn page_size() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .filter(|&p| p > 0)
        .map_or(4096, |p| p as usize)
}

/// An mmap'ed region, unmapped on drop.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    writable: bool,
}

// SAFETY: a Mapping owns its region exclusively, so moving it to another thread moves the only
// handle to the region, as for a Vec<u8>.
unsafe impl Send for Mapping {}
// SAFETY: through &Mapping the region is only read, and writes need &mut Mapping, which is
// unique, as for a Vec<u8>.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Private anonymous memory, not yet touched (every first touch of a page faults).
    pub fn anonymous(len: usize) -> io::Result<Mapping> {
        let n = NonZeroUsize::new(len).ok_or_else(|| io::Error::other("empty mapping"))?;
        // SAFETY: a fresh private anonymous mapping aliases nothing; the kernel picks the address.
        let ptr = unsafe {
            mmap_anonymous(
                None,
                n,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE,
            )
        }
        .map_err(errno)?;
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
            writable: true,
        })
    }

    /// A shared read-only view of the first `len` bytes of `file`.
    pub fn file(file: &impl AsFd, len: usize) -> io::Result<Mapping> {
        let n = NonZeroUsize::new(len).ok_or_else(|| io::Error::other("empty mapping"))?;
        // SAFETY: a read-only shared mapping of a file this crate created and does not
        // truncate while mapped; it aliases no Rust object.
        let ptr = unsafe { mmap(None, n, ProtFlags::PROT_READ, MapFlags::MAP_SHARED, file, 0) }
            .map_err(errno)?;
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
            writable: false,
        })
    }

    pub fn advise(&self, advice: MmapAdvise) -> io::Result<()> {
        // SAFETY: the range is exactly this mapping; advice changes paging, not contents that
        // Rust references rely on (DONTNEED is not offered by callers on live slices).
        unsafe { madvise(self.ptr.cast(), self.len, advice) }.map_err(errno)
    }

    /// The mapping as 64-bit words (anonymous mappings only).
    pub fn words_mut(&mut self) -> &mut [u64] {
        assert!(self.writable, "a read-only mapping has no mutable view");
        // SAFETY: the region is mapped readable and writable for `len` bytes, page-aligned
        // (so aligned for u64), zero-filled by the kernel (a valid u64 everywhere), and
        // borrowed mutably from `self`, so no other reference exists.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.len / 8) }
    }

    /// Writes one byte at `offset` so that the store cannot be elided (first-touch faults).
    #[inline(always)]
    pub fn touch_write(&self, offset: usize) {
        assert!(self.writable && offset < self.len);
        // SAFETY: `offset` is inside the writable mapping; a volatile byte store races with no
        // Rust reference because callers hold no slice of this mapping while touching it.
        unsafe { std::ptr::write_volatile(self.ptr.as_ptr().add(offset), 1) }
    }

    /// Reads one byte at `offset` so that the load cannot be elided.
    #[inline(always)]
    pub fn touch_read(&self, offset: usize) -> u8 {
        assert!(offset < self.len);
        // SAFETY: `offset` is inside the readable mapping.
        unsafe { std::ptr::read_volatile(self.ptr.as_ptr().add(offset)) }
    }

    /// How many of the mapping's pages are resident in memory (mincore).
    pub fn resident_pages(&self) -> io::Result<usize> {
        let page = page_size();
        let mut vec = vec![0u8; self.len.div_ceil(page)];
        // SAFETY: `vec` has one byte per page of the range, as mincore requires.
        let r = unsafe { libc::mincore(self.ptr.as_ptr().cast(), self.len, vec.as_mut_ptr()) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(vec.iter().filter(|&&b| b & 1 != 0).count())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the region was mapped by this Mapping and no slice of it outlives `self`.
        let _ = unsafe { munmap(self.ptr.cast(), self.len) };
    }
}

/// A heap buffer aligned for O_DIRECT transfers, zero-filled.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let layout = std::alloc::Layout::from_size_align(len.max(1), align).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the allocation is `layout.size()` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_touches_fault_and_make_pages_resident() {
        let page = page_size();
        let m = Mapping::anonymous(16 * page).unwrap();
        assert_eq!(m.resident_pages().unwrap(), 0);
        for i in 0..8 {
            m.touch_write(i * page);
        }
        assert_eq!(m.resident_pages().unwrap(), 8);
        assert_eq!(m.touch_read(0), 1);
    }

    #[test]
    fn aligned_buffers_are_aligned() {
        let mut b = AlignedBuf::new(8192, 4096);
        assert_eq!(b.as_mut_slice().as_ptr() as usize % 4096, 0);
        assert_eq!(b.as_mut_slice().len(), 8192);
    }
}
