//! The shared memory: a memfd both processes map. All of this example's `unsafe` is here.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A `MAP_SHARED` mapping of a memfd, unmapped on drop.
pub struct SharedMemory {
    ptr: *mut u8,
    len: usize,
    fd: OwnedFd,
}

impl SharedMemory {
    /// A new memfd of `len` bytes (zeroed), mapped read-write. The fd is inheritable (no
    /// close-on-exec), so a child process can map it too.
    pub fn create(len: usize) -> io::Result<SharedMemory> {
        // SAFETY: memfd_create takes a NUL-terminated name and flags; it returns a new fd or -1.
        let raw = unsafe { libc::memfd_create(c"perfring-ring".as_ptr(), 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate on an fd we own.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Self::map(fd, len)
    }

    /// Map the memfd a parent passed down as `raw`.
    ///
    /// # Safety
    /// `raw` must be an open fd this process owns (inherited, not used elsewhere).
    pub unsafe fn inherit(raw: RawFd, len: usize) -> io::Result<SharedMemory> {
        // SAFETY: the caller promises `raw` is ours to own.
        Self::map(unsafe { OwnedFd::from_raw_fd(raw) }, len)
    }

    fn map(fd: OwnedFd, len: usize) -> io::Result<SharedMemory> {
        // SAFETY: a new shared mapping of `len` bytes of an fd we own; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(SharedMemory { ptr: ptr.cast(), len, fd })
    }

    /// The fd, for passing to a child.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Lay out a new ring over the memory (the host's job, as the kernel's `perf_mmap`).
    pub fn layout(&mut self, page_size: usize) -> Result<(), perfring::memory::LayoutError> {
        // SAFETY: the mapping is `len` bytes, ours, and no other process runs yet.
        let buf = unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) };
        perfring::memory::Mapping::new(buf, page_size).map(drop)
    }

    /// The ring laid out in this memory, as perfring sees it.
    pub fn mapping(&self) -> Result<perfring::memory::Mapping<'_>, perfring::memory::LayoutError> {
        // SAFETY: the mapping lives as long as `self` borrows it; the other process touches it
        // only through the ring protocol or, if hostile, with plain stores that perfring's
        // atomic loads tolerate (its contents are never trusted: see perfring::security).
        unsafe { perfring::memory::Mapping::attach(self.ptr, self.len) }
    }

    /// The hostile part of the guest: overwrite `bytes` at `offset` with no protocol at all
    /// (volatile stores; the reader's atomic loads see some mix of old and new bytes).
    pub fn scribble(&self, offset: usize, bytes: &[u8]) {
        let end = offset.saturating_add(bytes.len()).min(self.len);
        for (i, &b) in (offset..end).zip(bytes) {
            // SAFETY: `i < len`, inside our mapping.
            unsafe { self.ptr.add(i).write_volatile(b) };
        }
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: unmapping the region `map` created; no reference into it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}
