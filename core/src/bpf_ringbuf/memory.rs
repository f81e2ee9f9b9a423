//! [`RingbufMemory`]: the seam between the BPF ring buffer's protocol and the memory it runs over.

use core::ptr::NonNull;

use super::abi::HEADER_SIZE;
use super::error::RingbufError;
use crate::loom::{AtomicU32, AtomicUsize};

/// Smallest data area accepted, in bytes: one 8-byte record and the byte the kernel keeps free
/// (`new_prod_pos - cons_pos > mask` fails a reservation), rounded up to a power of two.
pub const MIN_SIZE: usize = 16;

/// Largest data area accepted: positions are compared with wrapping `usize` arithmetic, which
/// needs the area to be at most half the counter range.
pub const MAX_SIZE: usize = 1 << (usize::BITS - 1);

/// Access to one BPF ring buffer: its two position words, the kernel's `pending_pos`, the
/// record headers and the data area.
///
/// Every access the producers and consumers of [`bpf_ringbuf`](super) make goes through this
/// trait. Two implementations ship with the crate: [`RingbufMapping`](super::RingbufMapping), the kernel's
/// layout over real memory (a `mmap` of a ringbuf map fd, or caller memory), and
/// [`ModelRingbuf`](super::ModelRingbuf), whose atomics and data cells are loom's under `--cfg loom`.
///
/// Data offsets are `0 .. size()`. A header is reached through its two 32-bit words
/// ([`len_word`](Self::len_word), [`pg_off_word`](Self::pg_off_word)) and a sample's bytes
/// through the copy methods or, where the memory lends it, [`data_area`](Self::data_area); a
/// byte is a header word in one lap and sample bytes in another, and the protocol's orderings
/// separate the two uses.
///
/// # Safety
///
/// An implementation promises that, for as long as it is alive:
/// * [`size`](Self::size) is constant, a power of two, at least [`MIN_SIZE`] and at most
///   [`MAX_SIZE`]; [`page_size`](Self::page_size) is constant and a power of two;
/// * [`double_mapped`](Self::double_mapped) is constant, and when it is true the bytes at
///   `size() .. 2 * size()` after the data area are the same memory as `0 .. size()` (the
///   kernel maps the data pages twice);
/// * the byte ranges that the methods accept (as their docs state) are memory of the area, so
///   that calls satisfying those contracts never touch memory outside it;
/// * the atomics returned by the word methods are the same objects on every call with the same
///   argument;
/// * [`data_area`](Self::data_area), if it returns a pointer, returns the same one on every
///   call, and its contract holds.
pub unsafe trait RingbufMemory {
    /// Size of the data area in bytes (the map's `max_entries`): a power of two.
    fn size(&self) -> usize;

    /// The page size the ring's header `pg_off` words count in (the kernel's `PAGE_SIZE`; see
    /// [`pg_off`](super::pg_off)): a power of two.
    fn page_size(&self) -> usize;

    /// Whether the data area is followed by a second mapping of itself, so that a record that
    /// wraps the end can be viewed in one piece (through [`data_area`](Self::data_area), up to
    /// `2 * size()`).
    fn double_mapped(&self) -> bool;

    /// `consumer_pos` (offset 0 of the consumer page): written by the consumer, read by
    /// producers. The kernel's `unsigned long`: a free-running byte counter.
    fn consumer_pos(&self) -> &AtomicUsize;

    /// `producer_pos` (offset 0 of the producer page): written by the producer under its lock,
    /// read by the consumer.
    fn producer_pos(&self) -> &AtomicUsize;

    /// The kernel's `pending_pos` (beside `producer_pos` on the producer page): the position of
    /// the oldest record a producer may still be writing, which a reservation must not lap.
    /// Read and written only by producers, under their lock.
    fn pending_pos(&self) -> &AtomicUsize;

    /// The `len` word of the header at data offset `offset` (sample size and the BUSY and
    /// DISCARD bits).
    ///
    /// `offset` must be a multiple of 8 below `size()`. Other values are a caller bug:
    /// implementations reduce them to a header of the area (and `debug_assert`), never
    /// touching memory outside it.
    fn len_word(&self, offset: usize) -> &AtomicU32;

    /// The `pg_off` word of the header at data offset `offset` (4 bytes after its `len` word).
    /// `offset` as for [`len_word`](Self::len_word).
    fn pg_off_word(&self, offset: usize) -> &AtomicU32;

    /// Copy `src` into the data area at `offset`.
    ///
    /// # Safety
    /// `offset + src.len() <= self.size()`, and no other party accesses these bytes while the
    /// copy runs (the protocol guarantees it for a producer that reserved them).
    unsafe fn write(&self, offset: usize, src: &[u8]);

    /// Copy bytes of the data area at `offset` into `dst` with plain loads.
    ///
    /// # Safety
    /// `offset + dst.len() <= self.size()`, and no other party writes these bytes while the copy
    /// runs (the protocol guarantees it for committed, unconsumed records).
    unsafe fn read(&self, offset: usize, dst: &mut [u8]);

    /// Copy bytes of the data area at `offset` into `dst` with 32-bit atomic loads (the size of
    /// the header words, so that no access of another size overlaps one of them), so that the
    /// copy is defined behaviour even if a hostile peer writes these bytes meanwhile. The copy
    /// may then be torn; callers validate what they use.
    ///
    /// `offset` and `dst.len()` must be multiples of 4 and `offset + dst.len() <= size()`;
    /// otherwise nothing is copied and `false` is returned. A memory that can fail to load
    /// (a debug probe, a guest page the hypervisor refuses) also returns `false`, with `dst` in
    /// any state: readers then return a typed error, never the bytes.
    fn load_words(&self, offset: usize, dst: &mut [u8]) -> bool;

    /// The data area's first byte, if the area is ordinary memory that readers and writers may
    /// borrow in place; `None` (the default) if every access must go through the methods above
    /// (loom's tracked cells: under `--cfg loom` return `None`; a memory read through a debug
    /// probe), and samples are then copied. The protocol's code keeps the pointer in a register
    /// and reaches the headers and samples of a batch from it, instead of asking this trait for
    /// each record.
    ///
    /// Where it is `Some(p)`: `p` is 8-aligned; [`len_word(o)`](Self::len_word) and
    /// [`pg_off_word(o)`](Self::pg_off_word) are the `u32`s at `p + o` and `p + o + 4`; and the
    /// bytes `p .. p + size()` (`p + 2 * size()` where [double-mapped](Self::double_mapped))
    /// may be read through `p` for as long as `self` is borrowed, and written through it by a
    /// producer over this memory (which the memory must let write its data, as ever).
    #[inline(always)]
    fn data_area(&self) -> Option<NonNull<u8>> {
        None
    }
}

/// Ring memory that one value owns: while it is exclusively borrowed, its ring is reached
/// through that borrow alone. [`split`](super::split_ringbuf) takes such a borrow as the proof that the
/// producer and the zero-copy consumer it hands out are the ring's only ones.
///
/// # Safety
/// While a value is exclusively borrowed, nothing reaches its ring's bytes (positions, headers,
/// data) except through that borrow.
pub unsafe trait ExclusiveRingbuf: RingbufMemory {}

// SAFETY: forwards every call to `R`, which upholds the contract.
unsafe impl<R: RingbufMemory + ?Sized> RingbufMemory for &R {
    #[inline(always)]
    fn size(&self) -> usize {
        (**self).size()
    }
    #[inline(always)]
    fn page_size(&self) -> usize {
        (**self).page_size()
    }
    #[inline(always)]
    fn double_mapped(&self) -> bool {
        (**self).double_mapped()
    }
    #[inline(always)]
    fn consumer_pos(&self) -> &AtomicUsize {
        (**self).consumer_pos()
    }
    #[inline(always)]
    fn producer_pos(&self) -> &AtomicUsize {
        (**self).producer_pos()
    }
    #[inline(always)]
    fn pending_pos(&self) -> &AtomicUsize {
        (**self).pending_pos()
    }
    #[inline(always)]
    fn len_word(&self, offset: usize) -> &AtomicU32 {
        (**self).len_word(offset)
    }
    #[inline(always)]
    fn pg_off_word(&self, offset: usize) -> &AtomicU32 {
        (**self).pg_off_word(offset)
    }
    #[inline(always)]
    unsafe fn write(&self, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract, which is the same for `R`.
        unsafe { (**self).write(offset, src) }
    }
    #[inline(always)]
    unsafe fn read(&self, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract, which is the same for `R`.
        unsafe { (**self).read(offset, dst) }
    }
    #[inline(always)]
    fn load_words(&self, offset: usize, dst: &mut [u8]) -> bool {
        (**self).load_words(offset, dst)
    }
    #[inline(always)]
    fn data_area(&self) -> Option<NonNull<u8>> {
        (**self).data_area()
    }
}

/// `len` bytes of `mem`'s data area at `offset`, borrowed in place, if the memory lends its area
/// ([`RingbufMemory::data_area`]).
///
/// # Safety
/// `offset + len <= mem.size()`, or `<= 2 * mem.size()` if the area is double-mapped; and nobody
/// writes these bytes for the lifetime of the returned slice.
#[inline(always)]
pub(super) unsafe fn view<M: RingbufMemory + ?Sized>(mem: &M, offset: usize, len: usize) -> Option<&[u8]> {
    let area = mem.data_area()?;
    debug_assert!(offset + len <= if mem.double_mapped() { 2 * mem.size() } else { mem.size() });
    // SAFETY: the range is inside the area (the caller), readable through `area` while `mem` is
    // borrowed (`data_area`'s contract), and unwritten while borrowed (the caller).
    Some(unsafe { core::slice::from_raw_parts(area.as_ptr().add(offset), len) })
}

/// As [`view`], writable.
///
/// # Safety
/// As for [`view`], and nobody else reads or writes these bytes for the lifetime of the returned
/// slice (a producer's own reservation).
#[inline(always)]
#[allow(clippy::mut_from_ref)]
pub(super) unsafe fn view_mut<M: RingbufMemory + ?Sized>(mem: &M, offset: usize, len: usize) -> Option<&mut [u8]> {
    let area = mem.data_area()?;
    debug_assert!(offset + len <= if mem.double_mapped() { 2 * mem.size() } else { mem.size() });
    // SAFETY: as for `view`; the bytes are the caller's alone while borrowed.
    Some(unsafe { core::slice::from_raw_parts_mut(area.as_ptr().add(offset), len) })
}

/// Copy `src` into a reserved sample at its byte `at`: the `size` bytes after the header at the
/// free-running position `pos` of a ring of `mask + 1` bytes; a write past the sample is
/// [`RingbufError::PastReservation`]. A sample that wraps the end of the area is written in two
/// pieces.
///
/// For the two reservations alone ([`Reservation`](super::Reservation) and
/// [`UserReservation`](super::UserReservation)), which call it with their own `pos` and `size`
/// between the reservation and its commit: the lock gave those bytes to them alone, and no
/// consumer reads past their BUSY header. The unsafe block rests on that.
pub(super) fn write_reserved<M: RingbufMemory>(
    mem: &M,
    mask: usize,
    (pos, size): (usize, usize),
    at: usize,
    src: &[u8],
) -> Result<(), RingbufError> {
    let fits = at.checked_add(src.len()).is_some_and(|end| end <= size);
    if !fits {
        return Err(RingbufError::PastReservation { at, len: src.len(), size });
    }
    let start = pos.wrapping_add(HEADER_SIZE).wrapping_add(at) & mask;
    let first = src.len().min(mask + 1 - start);
    // SAFETY: [start, start + first) and [0, len - first) are inside the area, and inside the
    // reservation's bytes (at + len <= size), which are the caller's alone (above).
    unsafe {
        mem.write(start, &src[..first]);
        mem.write(0, &src[first..]);
    }
    Ok(())
}

/// A reserved sample (as for [`write_reserved`]) as writable slices, the second non-empty only
/// if it wraps the end of a singly mapped area; `None` if the memory lends no area (the loom
/// model). The same callers and premises as [`write_reserved`]; they bound the slices' life by
/// a borrow of the reservation, which its commit takes.
#[allow(clippy::mut_from_ref)]
pub(super) fn reserved_mut<M: RingbufMemory>(
    mem: &M,
    mask: usize,
    (pos, size): (usize, usize),
) -> Option<(&mut [u8], &mut [u8])> {
    let start = pos.wrapping_add(HEADER_SIZE) & mask;
    let first = if mem.double_mapped() { size } else { size.min(mask + 1 - start) };
    // SAFETY: the ranges are inside the (possibly double-mapped) area and are the caller's
    // reservation's alone until it is committed (above).
    unsafe { Some((view_mut(mem, start, first)?, view_mut(mem, 0, size - first)?)) }
}

/// Check that `size` can be a ring's data area.
pub(super) const fn check_size(size: usize) -> Result<(), RingbufError> {
    if size > MAX_SIZE {
        return Err(RingbufError::RingTooLarge { size });
    }
    if !size.is_power_of_two() {
        return Err(RingbufError::RingNotPowerOfTwo { size });
    }
    if size < MIN_SIZE {
        return Err(RingbufError::RingTooSmall { size });
    }
    Ok(())
}
