//! [`ModelRingbuf`]: a BPF ring buffer whose words are owned atomics and whose bytes are tracked
//! cells.

use super::error::RingbufError;
use super::memory::{check_size, ExclusiveRingbuf, RingbufMemory};
#[cfg(not(loom))]
use crate::fences::RB_ONCE;
use crate::loom::{AtomicU32, AtomicUsize, UnsafeCell};

/// The page size a [`ModelRingbuf`]'s headers count in: notional (the model has no pages), the
/// kernel's on x86_64.
const PAGE_SIZE: usize = 4096;

/// A BPF ring buffer owned by the value itself: `WORDS` × 8 bytes of data area, no allocator.
///
/// Each 8-byte slot is a header (its `len` and `pg_off` atomics) and sample bytes (an
/// `loom::UnsafeCell`) at once: the protocol reaches a slot through one or
/// the other, as the record it belongs to in this lap says. Under `cfg(loom)` a producer write
/// and a consumer read of the same sample bytes that the protocol's fences do not order are
/// reported by loom as a data race, and a header read that the fences do not order can return
/// an older lap's value: that is how `make loom-mutants` shows each ordering of
/// [`bpf_ringbuf`](super) necessary. It lends no area ([`data_area`](RingbufMemory::data_area)
/// is `None`): consumers copy.
///
/// Under loom its [`load_words`](RingbufMemory::load_words) reads the cells too, tracked like every
/// other read: in a model every reader is honest, so an untrusted consumer's or a drain's read
/// that races a write is a protocol bug for loom to report. Otherwise it reads an atomic mirror
/// of each slot's sample bytes, kept by every write, so that a racing peer is defined behaviour
/// there as over a [`RingbufMapping`](super::RingbufMapping).
///
/// `WORDS * 8` must be a power of two of at least [`MIN_SIZE`](super::MIN_SIZE) bytes
/// ([`ModelRingbuf::new`] checks).
#[derive(Debug)]
pub struct ModelRingbuf<const WORDS: usize> {
    consumer_pos: AtomicUsize,
    producer_pos: AtomicUsize,
    pending_pos: AtomicUsize,
    slots: [Slot; WORDS],
}

/// One 8-byte slot: header words and sample bytes (and, outside loom, their atomic mirror).
#[derive(Debug)]
struct Slot {
    len: AtomicU32,
    pg_off: AtomicU32,
    cell: UnsafeCell<u64>,
    #[cfg(not(loom))]
    mirror: [AtomicU32; 2],
}

// SAFETY: the cells are only accessed under the `RingbufMemory` contract (exclusive writes of reserved
// ranges, reads of committed ranges); everything else is atomic.
unsafe impl<const WORDS: usize> Sync for ModelRingbuf<WORDS> {}

impl<const WORDS: usize> ModelRingbuf<WORDS> {
    /// A zeroed ring (the kernel's pages start zeroed).
    ///
    /// Errors if `WORDS * 8` is not a power of two of at least [`MIN_SIZE`](super::MIN_SIZE)
    /// bytes.
    pub fn new() -> Result<Self, RingbufError> {
        check_size(WORDS * 8)?;
        Ok(ModelRingbuf {
            consumer_pos: AtomicUsize::new(0),
            producer_pos: AtomicUsize::new(0),
            pending_pos: AtomicUsize::new(0),
            slots: core::array::from_fn(|_| Slot {
                len: AtomicU32::new(0),
                pg_off: AtomicU32::new(0),
                cell: UnsafeCell::new(0),
                #[cfg(not(loom))]
                mirror: [AtomicU32::new(0), AtomicU32::new(0)],
            }),
        })
    }

    #[inline(always)]
    fn slot(&self, offset: usize) -> &Slot {
        debug_assert!(offset % 8 == 0 && offset < WORDS * 8, "header offset {offset:#x} outside the ring");
        &self.slots[(offset / 8) % WORDS]
    }
}

/// Call `f` with (slot, byte range inside the slot, byte range inside the buffer) for each slot
/// that `len` bytes at `offset` touch.
#[inline(always)]
fn for_each_slot(
    offset: usize,
    len: usize,
    mut f: impl FnMut(usize, core::ops::Range<usize>, core::ops::Range<usize>),
) {
    let mut done = 0;
    while done < len {
        let pos = offset + done;
        let n = (8 - pos % 8).min(len - done);
        f(pos / 8, pos % 8..pos % 8 + n, done..done + n);
        done += n;
    }
}

// SAFETY: every byte of the ring is a field of the value (not Clone, not Copy), so an exclusive
// borrow of it reaches the ring alone.
unsafe impl<const WORDS: usize> ExclusiveRingbuf for ModelRingbuf<WORDS> {}

// SAFETY: the size is const and was checked by `new` (the only constructor); ranges inside the
// size map to slots inside the array (and out-of-contract header offsets are reduced into it);
// the atomics are fields of `self`.
unsafe impl<const WORDS: usize> RingbufMemory for ModelRingbuf<WORDS> {
    #[inline(always)]
    fn size(&self) -> usize {
        WORDS * 8
    }

    #[inline(always)]
    fn page_size(&self) -> usize {
        PAGE_SIZE
    }

    #[inline(always)]
    fn double_mapped(&self) -> bool {
        false
    }

    #[inline(always)]
    fn consumer_pos(&self) -> &AtomicUsize {
        &self.consumer_pos
    }

    #[inline(always)]
    fn producer_pos(&self) -> &AtomicUsize {
        &self.producer_pos
    }

    #[inline(always)]
    fn pending_pos(&self) -> &AtomicUsize {
        &self.pending_pos
    }

    #[inline(always)]
    fn len_word(&self, offset: usize) -> &AtomicU32 {
        &self.slot(offset).len
    }

    #[inline(always)]
    fn pg_off_word(&self, offset: usize) -> &AtomicU32 {
        &self.slot(offset).pg_off
    }

    unsafe fn write(&self, offset: usize, src: &[u8]) {
        debug_assert!(offset + src.len() <= WORDS * 8);
        for_each_slot(offset, src.len(), |slot, in_slot, in_buf| {
            // SAFETY: the caller has exclusive access to these bytes (the `write` contract), so
            // no other access to this cell runs concurrently; loom checks exactly that.
            let _bytes = self.slots[slot].cell.with_mut(|p| unsafe {
                let mut bytes = (*p).to_ne_bytes();
                bytes[in_slot].copy_from_slice(&src[in_buf]);
                *p = u64::from_ne_bytes(bytes);
                bytes
            });
            #[cfg(not(loom))]
            for (m, part) in self.slots[slot].mirror.iter().zip(_bytes.chunks_exact(4)) {
                m.store(u32::from_ne_bytes([part[0], part[1], part[2], part[3]]), RB_ONCE);
            }
        });
    }

    unsafe fn read(&self, offset: usize, dst: &mut [u8]) {
        debug_assert!(offset + dst.len() <= WORDS * 8);
        for_each_slot(offset, dst.len(), |slot, in_slot, in_buf| {
            // SAFETY: the caller guarantees nobody writes these bytes meanwhile (the `read`
            // contract); loom checks exactly that.
            let bytes = self.slots[slot].cell.with(|p| unsafe { (*p).to_ne_bytes() });
            dst[in_buf].copy_from_slice(&bytes[in_slot]);
        });
    }

    fn load_words(&self, offset: usize, dst: &mut [u8]) -> bool {
        let fits =
            offset % 4 == 0 && dst.len() % 4 == 0 && offset.checked_add(dst.len()).is_some_and(|e| e <= WORDS * 8);
        if !fits {
            return false;
        }
        // Under loom, a tracked read (see the type's docs): loom reports a write that the
        // protocol does not order before it, and no execution continues past that report.
        // SAFETY: the range is inside the area (checked above).
        #[cfg(loom)]
        unsafe {
            self.read(offset, dst)
        };
        #[cfg(not(loom))]
        for (i, chunk) in dst.chunks_exact_mut(4).enumerate() {
            let at = offset + 4 * i;
            chunk.copy_from_slice(&self.slots[at / 8].mirror[(at % 8) / 4].load(RB_ONCE).to_ne_bytes());
        }
        true
    }
}
