//! [`RingbufMapping`]: the kernel's layout of a BPF ring buffer over real memory.

use core::marker::PhantomData;
use core::ptr::NonNull;

use super::error::RingbufError;
use super::memory::{check_size, ExclusiveRingbuf, RingbufMemory};
use crate::fences::RB_ONCE;
use crate::loom::{AtomicU32, AtomicUsize};

/// A BPF ring buffer in real memory, as the kernel lays it out for user space: the consumer
/// page (`consumer_pos` at offset 0; writable by the consumer of a `BPF_MAP_TYPE_RINGBUF`), the
/// producer page (`producer_pos` at offset 0, the kernel's `pending_pos` after it) and, one page
/// after the producer page, the data area (`max_entries` bytes, mapped twice by the kernel).
///
/// ```text
///   mmap(fd, offset 0, 1 page, RW)            mmap(fd, offset 1 page, 1 page + 2 × size, RO)
///  +----------------------+                  +----------------------+-----------+-----------+
///  | consumer_pos         |                  | producer_pos         | data      | data      |
///  | (consumer writes)    |                  | pending_pos (kernel) | 0 .. size | again     |
///  +----------------------+                  +----------------------+-----------+-----------+
/// ```
///
/// Made either by laying out a new ring over a buffer you own ([`RingbufMapping::new`]: one data
/// mapping, so a record that wraps is read in two pieces), or by attaching to memory laid out
/// by someone else ([`RingbufMapping::attach`], e.g. the kernel's two `mmap`s of a ringbuf map fd).
#[derive(Debug)]
pub struct RingbufMapping<'a> {
    consumer: NonNull<u8>,
    producer: NonNull<u8>,
    data: NonNull<u8>,
    size: usize,
    page_size: usize,
    double_mapped: bool,
    _memory: PhantomData<&'a mut [u8]>,
}

// SAFETY: every access through a `RingbufMapping` is atomic, or a copy whose exclusivity the `RingbufMemory`
// contract puts on the caller; the raw pointers are not tied to a thread.
unsafe impl Send for RingbufMapping<'_> {}
// SAFETY: as for `Send`: shared use only performs atomic accesses or contract-guarded copies.
unsafe impl Sync for RingbufMapping<'_> {}

/// Check a page size: a power of two that holds `producer_pos` and `pending_pos`.
const fn check_page_size(page_size: usize) -> Result<(), RingbufError> {
    if page_size < 16 || !page_size.is_power_of_two() {
        return Err(RingbufError::BadPageSize { page_size });
    }
    Ok(())
}

impl<'a> RingbufMapping<'a> {
    /// Lay out a new ring over `buf`: the consumer page is its first `page_size` bytes, the
    /// producer page the next `page_size`, and the data area all the rest, mapped once. Zeroes
    /// the buffer, as the kernel's pages start zeroed.
    ///
    /// Errors: `buf` not 8-byte aligned, `page_size` not a power of two of at least 16, or a data
    /// area (`buf.len() - 2 * page_size`) that is not a power of two in
    /// [`MIN_SIZE`](super::MIN_SIZE)..=[`MAX_SIZE`](super::MAX_SIZE).
    pub fn new(buf: &'a mut [u8], page_size: usize) -> Result<Self, RingbufError> {
        let addr = buf.as_ptr() as usize;
        if addr % 8 != 0 {
            return Err(RingbufError::Misaligned { addr });
        }
        check_page_size(page_size)?;
        let size = page_size
            .checked_mul(2)
            .and_then(|pages| buf.len().checked_sub(pages))
            .ok_or(RingbufError::RingTooSmall { size: 0 })?;
        check_size(size)?;
        buf.fill(0);
        let base = NonNull::from(buf).cast::<u8>();
        Ok(RingbufMapping {
            consumer: base,
            // SAFETY: 2 * page_size <= buf.len() (checked above): both stay inside buf.
            producer: unsafe { base.add(page_size) },
            // SAFETY: as above.
            data: unsafe { base.add(2 * page_size) },
            size,
            page_size,
            double_mapped: false,
            _memory: PhantomData,
        })
    }

    /// Attach to a ring someone else laid out: `consumer_page` holds `consumer_pos` at offset 0,
    /// `producer_page` holds `producer_pos` (and the kernel's `pending_pos` after it), and the
    /// data area starts `page_size` bytes after `producer_page` (`size` bytes, or `2 * size`
    /// when `double_mapped`). Over the kernel's mappings of a ringbuf map fd: the first `mmap`
    /// (offset 0, one page) and the second (offset one page, one page + 2 × `max_entries`),
    /// `double_mapped` true. Nothing is read here: the positions are read (and validated) by
    /// the consumers and producers made over it.
    ///
    /// # Safety
    /// For `'a`: `consumer_page .. + page_size` and `producer_page .. + page_size + size` (or
    /// `2 * size` when `double_mapped`) are readable memory, and writable where this value is
    /// used to write (`consumer_pos` by a kernel ring's consumer; `producer_pos` and the data by
    /// a producer); when `double_mapped`, the second `size` bytes after the data start are the
    /// same memory as the first; every other party accesses this memory only through its own
    /// copy of the protocol (atomic or protocol-ordered accesses) and never moves or unmaps it.
    /// The *contents* need not be trusted: hostile values are typed errors of the consumer, not
    /// undefined behaviour.
    pub unsafe fn attach(
        consumer_page: *mut u8,
        producer_page: *mut u8,
        size: usize,
        page_size: usize,
        double_mapped: bool,
    ) -> Result<Self, RingbufError> {
        for p in [consumer_page, producer_page] {
            if p.is_null() || p as usize % 8 != 0 {
                return Err(RingbufError::Misaligned { addr: p as usize });
            }
        }
        check_page_size(page_size)?;
        check_size(size)?;
        // SAFETY: non-null (checked above).
        let (consumer, producer) =
            unsafe { (NonNull::new_unchecked(consumer_page), NonNull::new_unchecked(producer_page)) };
        Ok(RingbufMapping {
            consumer,
            producer,
            // SAFETY: the caller promises page_size + size bytes after producer_page.
            data: unsafe { producer.add(page_size) },
            size,
            page_size,
            double_mapped,
            _memory: PhantomData,
        })
    }

    /// The header word at `offset`, reduced to a header of the area (a caller bug otherwise).
    #[inline(always)]
    fn word(&self, offset: usize, at: usize) -> &AtomicU32 {
        debug_assert!(offset % 8 == 0 && offset < self.size, "header offset {offset:#x} outside the ring");
        let offset = offset & (self.size - 1) & !7;
        // SAFETY: offset + at + 4 <= size (offset is an 8-aligned offset below size, at is 0 or
        // 4); the data area is 8-aligned memory valid for 'a.
        unsafe { AtomicU32::from_ptr(self.data.as_ptr().add(offset + at).cast()) }
    }
}

// SAFETY: `RingbufMapping::new` borrows its bytes exclusively for 'a and a RingbufMapping is neither Clone nor
// Copy, so an exclusive borrow of one reaches its ring alone. (An attached RingbufMapping is
// `ExclusiveRingbuf` only under the caller's promise to `attach`: hand out `&RingbufMapping` where the kernel
// or a peer also produces.)
unsafe impl ExclusiveRingbuf for RingbufMapping<'_> {}

// SAFETY: the size is fixed and was checked at construction (a power of two in MIN_SIZE..=
// MAX_SIZE); the pages and data area lie in the memory the constructor's caller lent for 'a
// (2 * size of data when double-mapped, by the caller's promise); every range is checked
// against the contract by the caller, and debug-asserted here.
unsafe impl RingbufMemory for RingbufMapping<'_> {
    #[inline(always)]
    fn size(&self) -> usize {
        self.size
    }

    #[inline(always)]
    fn page_size(&self) -> usize {
        self.page_size
    }

    #[inline(always)]
    fn double_mapped(&self) -> bool {
        self.double_mapped
    }

    #[inline(always)]
    fn consumer_pos(&self) -> &AtomicUsize {
        // SAFETY: offset 0 of the 8-aligned consumer page, valid for 'a.
        unsafe { AtomicUsize::from_ptr(self.consumer.as_ptr().cast()) }
    }

    #[inline(always)]
    fn producer_pos(&self) -> &AtomicUsize {
        // SAFETY: offset 0 of the 8-aligned producer page, valid for 'a.
        unsafe { AtomicUsize::from_ptr(self.producer.as_ptr().cast()) }
    }

    #[inline(always)]
    fn pending_pos(&self) -> &AtomicUsize {
        // SAFETY: the second word of the producer page (page_size >= 2 words, checked), aligned.
        unsafe { AtomicUsize::from_ptr(self.producer.as_ptr().add(core::mem::size_of::<usize>()).cast()) }
    }

    #[inline(always)]
    fn len_word(&self, offset: usize) -> &AtomicU32 {
        self.word(offset, 0)
    }

    #[inline(always)]
    fn pg_off_word(&self, offset: usize) -> &AtomicU32 {
        self.word(offset, 4)
    }

    #[inline(always)]
    unsafe fn write(&self, offset: usize, src: &[u8]) {
        debug_assert!(offset + src.len() <= self.size);
        // SAFETY: the caller guarantees offset + len <= size (inside the area) and exclusivity.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), self.data.as_ptr().add(offset), src.len()) }
    }

    #[inline(always)]
    unsafe fn read(&self, offset: usize, dst: &mut [u8]) {
        debug_assert!(offset + dst.len() <= self.size);
        // SAFETY: the caller guarantees the range is inside the area and not written meanwhile.
        unsafe { core::ptr::copy_nonoverlapping(self.data.as_ptr().add(offset), dst.as_mut_ptr(), dst.len()) }
    }

    fn load_words(&self, offset: usize, dst: &mut [u8]) -> bool {
        let fits =
            offset % 4 == 0 && dst.len() % 4 == 0 && offset.checked_add(dst.len()).is_some_and(|e| e <= self.size);
        if !fits {
            return false;
        }
        for (i, chunk) in dst.chunks_exact_mut(4).enumerate() {
            // SAFETY: offset + 4i + 4 <= offset + dst.len() <= size (checked) and the area is
            // 8-aligned, so each word is an aligned u32 inside it; the load is atomic, so a
            // concurrent peer store is not a data race.
            let word = unsafe { AtomicU32::from_ptr(self.data.as_ptr().add(offset + 4 * i).cast()).load(RB_ONCE) };
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        true
    }

    #[inline(always)]
    fn data_area(&self) -> Option<NonNull<u8>> {
        // The area checked 8-aligned by `new` and `attach`, its bytes (twice over where
        // double-mapped) valid for 'a; `word` reaches the headers at the same addresses.
        Some(self.data)
    }
}
