//! The crate's mappings: [`Mmap`], a shared mapping of a perf event's pages, unmapped on drop;
//! [`RingMapping`], perfring's `Mapping` of a ring lent out with the ring's consumer claim.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;

use crate::claims::RingClaims;

/// A shared mapping of `len` bytes of `fd` at `offset`, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mmap {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; every access goes through perfring's atomics.
unsafe impl Send for Mmap {}
// SAFETY: as for `Send`.
unsafe impl Sync for Mmap {}

impl Mmap {
    pub(crate) fn map(fd: BorrowedFd<'_>, len: usize, offset: u64, writable: bool) -> io::Result<Mmap> {
        let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: a new shared mapping chosen by the kernel; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), offset as libc::off_t)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(Mmap { ptr, len })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Store `v` into the 8-byte field at `offset` of the control page (the `aux_offset` and
    /// `aux_size` fields user space owns). `None` if the field is not inside the mapping or the
    /// mapping is not writable (a store would fault).
    pub(crate) fn store_u64(&self, offset: usize, v: u64, writable: bool) -> Option<()> {
        if !writable || offset % 8 != 0 || offset.checked_add(8)? > self.len {
            return None;
        }
        // SAFETY: the field is inside the live, writable mapping (checked above) and 8-aligned
        // (the mapping is page aligned); the kernel reads it only when the AUX area is mapped,
        // and every access is atomic. No ordering of its own (perfring's `LOCAL`): the `mmap`
        // system call that makes the kernel read the field comes after it in program order.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.ptr.as_ptr().add(offset).cast()) }
            .store(v, perfring::fences::LOCAL);
        Some(())
    }

    /// Load the 8-byte field at `offset` of the control page (`None` if outside the mapping).
    pub(crate) fn load_u64(&self, offset: usize) -> Option<u64> {
        if offset % 8 != 0 || offset.checked_add(8)? > self.len {
            return None;
        }
        // SAFETY: the field is inside the live mapping (checked above) and 8-aligned; the
        // access is atomic, as the kernel's are.
        Some(
            unsafe { std::sync::atomic::AtomicU64::from_ptr(self.ptr.as_ptr().add(offset).cast()) }
                .load(perfring::fences::LOCAL),
        )
    }

    /// A relaxed atomic load of the `usize` at byte `offset` of the mapping (`None` if it is
    /// not inside the mapping or not aligned). Defined on a read-only mapping too: Rust
    /// guarantees relaxed atomic loads up to the pointer's width on read-only memory (the
    /// "Atomic accesses to read-only memory" section of `core::sync::atomic`), and this is the
    /// only operation the reference made here is used for.
    pub(crate) fn load_relaxed_usize(&self, offset: usize) -> Option<usize> {
        const W: usize = std::mem::size_of::<usize>();
        if offset % W != 0 || offset.checked_add(W)? > self.len {
            return None;
        }
        // SAFETY: inside the live mapping (checked above), aligned (the mapping is page aligned
        // and `offset` a multiple of the width); only a relaxed load of at most the pointer
        // width is made through the reference, which is defined on read-only memory, and the
        // kernel's concurrent stores are atomic.
        let word = unsafe { &*self.ptr.as_ptr().add(offset).cast::<std::sync::atomic::AtomicUsize>() };
        Some(word.load(perfring::fences::LOCAL))
    }

    /// As [`Mmap::load_relaxed_usize`], for the `u32` at byte `offset`.
    pub(crate) fn load_relaxed_u32(&self, offset: usize) -> Option<u32> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: as in `load_relaxed_usize`, for a 4-byte aligned word inside the mapping.
        let word = unsafe { &*self.ptr.as_ptr().add(offset).cast::<std::sync::atomic::AtomicU32>() };
        Some(word.load(perfring::fences::LOCAL))
    }

    /// perfring's view of a ring's mapping with `self` (a second mapping of the fd at
    /// `aux_offset`) attached as its AUX area.
    pub(crate) fn attach_as_aux<'a>(
        &'a self,
        ring: perfring::memory::Mapping<'a>,
    ) -> Result<perfring::memory::Mapping<'a>, perfring::memory::LayoutError> {
        // SAFETY: the AUX mapping lives as long as the borrow of `self`; the kernel (the PMU
        // driver) writes it only below `aux_head`, and perfring reads it by the AUX protocol
        // (atomic word loads where it may be overwritten); its contents are not trusted.
        unsafe { ring.attach_aux(self.ptr.as_ptr(), self.len) }
    }

    /// perfring's view of a perf mapping: control page (and data area) of the kernel's layout.
    pub(crate) fn attach(&self) -> Result<perfring::memory::Mapping<'_>, perfring::memory::LayoutError> {
        // SAFETY: the mapping lives as long as the borrow of `self`; the kernel writes it only
        // through the ring protocol, and perfring reads it with atomic loads (its contents are
        // validated, never trusted for memory safety).
        unsafe { perfring::memory::Mapping::attach(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region `map` created; nothing borrowed from it outlives
        // `self` (views borrow `&self`).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// perfring's [`Mapping`](perfring::memory::Mapping) of a [`Ring`](crate::Ring) (its control page and
/// data area, and its AUX area when from an [`AuxArea`](crate::AuxArea)), lent out so that it
/// cannot be [`split`](perfring::split): it dereferences to `&Mapping` and is
/// [`RingMemory`](perfring::memory::RingMemory) by forwarding to it, but it is not
/// [`ExclusiveMemory`](perfring::memory::ExclusiveMemory). The kernel produces into this ring: a second
/// producer would fault (the kernel maps the data pages read-only to user space) or race it.
///
/// The one consumer of an event's ring ([`Ring::consumer`](crate::Ring::consumer)) reads
/// through one that holds the ring's claim, given back when it is dropped.
#[derive(Debug)]
pub struct RingMapping<'r> {
    mapping: perfring::memory::Mapping<'r>,
    claim: Option<std::sync::Arc<RingClaims>>,
}

impl<'r> RingMapping<'r> {
    /// `mapping`, holding the consumer claim of `claim` (taken by the caller) until dropped.
    pub(crate) fn new(mapping: perfring::memory::Mapping<'r>, claim: Option<std::sync::Arc<RingClaims>>) -> Self {
        RingMapping { mapping, claim }
    }
}

impl<'r> std::ops::Deref for RingMapping<'r> {
    type Target = perfring::memory::Mapping<'r>;
    fn deref(&self) -> &perfring::memory::Mapping<'r> {
        &self.mapping
    }
}

impl Drop for RingMapping<'_> {
    fn drop(&mut self) {
        if let Some(claim) = &self.claim {
            claim.release_consumer();
        }
    }
}

// SAFETY: forwards every call to the `Mapping`, which upholds the contract for the same bytes.
unsafe impl perfring::memory::RingMemory for RingMapping<'_> {
    #[inline(always)]
    fn size(&self, area: perfring::memory::Area) -> usize {
        self.mapping.size(area)
    }
    #[inline(always)]
    fn position(&self, p: perfring::memory::Position) -> &perfring::loom::AtomicUsize {
        self.mapping.position(p)
    }
    #[inline(always)]
    fn page_word(&self, offset: usize) -> &perfring::loom::AtomicU32 {
        self.mapping.page_word(offset)
    }
    #[inline(always)]
    fn paused(&self) -> &perfring::loom::AtomicBool {
        self.mapping.paused()
    }
    #[inline(always)]
    fn write_gen(&self) -> &perfring::loom::AtomicUsize {
        self.mapping.write_gen()
    }
    #[inline(always)]
    unsafe fn write(&self, area: perfring::memory::Area, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract, which is the Mapping's.
        unsafe { self.mapping.write(area, offset, src) }
    }
    #[inline(always)]
    unsafe fn read(&self, area: perfring::memory::Area, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract, which is the Mapping's.
        unsafe { self.mapping.read(area, offset, dst) }
    }
    #[inline(always)]
    fn load_words(&self, area: perfring::memory::Area, offset: usize, dst: &mut [u8]) -> bool {
        self.mapping.load_words(area, offset, dst)
    }
    #[inline(always)]
    unsafe fn view(&self, area: perfring::memory::Area, offset: usize, len: usize) -> Option<&[u8]> {
        // SAFETY: the caller upholds `view`'s contract, which is the Mapping's.
        unsafe { self.mapping.view(area, offset, len) }
    }
}
