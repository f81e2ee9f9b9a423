//! [`ModelRing`]: the protocol's words as owned atomics and its bytes as tracked cells.

use super::{check_area_size, Area, LayoutError, Position, RingMemory, MIN_DATA_SIZE};
use crate::fences::LOCAL;
use crate::loom::{AtomicBool, AtomicU32, AtomicUsize, UnsafeCell};
use crate::page::{capabilities, offsets};

/// A ring whose memory is owned by the value itself: `DATA_WORDS` × 8 bytes of data area and
/// `AUX_WORDS` × 8 bytes of AUX area (0 for none).
///
/// Each 8-byte slot is its own `loom::UnsafeCell`, so under `cfg(loom)` a
/// producer write and a consumer read of the same slot that are not ordered by the protocol's
/// fences are reported by loom as a data race. That is what makes the fence mutants of
/// `make loom-mutants` observable. It offers no zero-copy views: consumers copy every record.
///
/// Each slot also has an atomic *mirror* that every write updates. Readers that race writers
/// by design (the backward reader of an overwrite ring, an untrusted consumer) read only the
/// mirror with [`RingMemory::load_words`]: defined behaviour, possibly torn, validated after.
///
/// Sizes are const generics, so no allocator is needed; `DATA_WORDS * 8` must be a power of two
/// of at least [`MIN_DATA_SIZE`] bytes ([`ModelRing::new`] checks).
#[derive(Debug)]
pub struct ModelRing<const DATA_WORDS: usize, const AUX_WORDS: usize = 0> {
    positions: [AtomicUsize; 4],
    header: [AtomicU32; offsets::RESERVED / 4],
    paused: AtomicBool,
    write_gen: AtomicUsize,
    data: [Slot; DATA_WORDS],
    aux: [Slot; AUX_WORDS],
}

/// `usize` words per 8-byte slot (1 on 64-bit targets, 2 on 32-bit ones).
const PARTS: usize = 8 / core::mem::size_of::<usize>();

/// One 8-byte slot: the tracked cell, and its atomic mirror for racy readers.
#[derive(Debug)]
struct Slot {
    cell: UnsafeCell<u64>,
    mirror: [AtomicUsize; PARTS],
}

impl Slot {
    fn new() -> Self {
        Slot { cell: UnsafeCell::new(0), mirror: core::array::from_fn(|_| AtomicUsize::new(0)) }
    }
}

// SAFETY: the cells are only accessed under the `RingMemory` contract (exclusive writes of
// reserved ranges, reads of published ranges); everything else is atomic.
unsafe impl<const D: usize, const A: usize> Sync for ModelRing<D, A> {}

impl<const DATA_WORDS: usize, const AUX_WORDS: usize> ModelRing<DATA_WORDS, AUX_WORDS> {
    /// A zeroed ring, with the control words the kernel initialises (`size`, capabilities).
    ///
    /// Errors if the data area is not a power of two of at least [`MIN_DATA_SIZE`] bytes, or
    /// the AUX area (if any) is not a power of two.
    pub fn new() -> Result<Self, LayoutError> {
        check_area_size(DATA_WORDS * 8, MIN_DATA_SIZE)?;
        if AUX_WORDS != 0 {
            check_area_size(AUX_WORDS * 8, 8)?;
        }
        let ring = ModelRing {
            positions: core::array::from_fn(|_| AtomicUsize::new(0)),
            header: core::array::from_fn(|_| AtomicU32::new(0)),
            paused: AtomicBool::new(false),
            write_gen: AtomicUsize::new(0),
            data: core::array::from_fn(|_| Slot::new()),
            aux: core::array::from_fn(|_| Slot::new()),
        };
        ring.header[offsets::SIZE / 4].store(offsets::RESERVED as u32, LOCAL);
        let caps = capabilities::BIT0_IS_DEPRECATED as u32;
        let caps_word = if cfg!(target_endian = "little") { offsets::CAPABILITIES } else { offsets::CAPABILITIES + 4 };
        ring.header[caps_word / 4].store(caps, LOCAL);
        Ok(ring)
    }

    #[inline(always)]
    fn cells(&self, area: Area) -> &[Slot] {
        match area {
            Area::Data => &self.data,
            Area::Aux => &self.aux,
        }
    }
}

/// Copy `len` bytes between cell slots and a byte buffer, slot by slot, calling `f` with
/// (slot, byte range inside the slot, byte range inside the buffer).
#[inline(always)]
fn for_each_slot(
    offset: usize,
    len: usize,
    mut f: impl FnMut(usize, core::ops::Range<usize>, core::ops::Range<usize>),
) {
    let mut done = 0;
    while done < len {
        let pos = offset + done;
        let slot = pos / 8;
        let in_slot = pos % 8;
        let n = (8 - in_slot).min(len - done);
        f(slot, in_slot..in_slot + n, done..done + n);
        done += n;
    }
}

// SAFETY: every byte of the ring is a field of the value (not Clone, not Copy), so an exclusive
// borrow of it reaches the ring alone.
unsafe impl<const DATA_WORDS: usize, const AUX_WORDS: usize> super::ExclusiveMemory
    for ModelRing<DATA_WORDS, AUX_WORDS>
{
}

// SAFETY: sizes are const and were checked by `new` (the only constructor); ranges inside the
// size map to slots inside the arrays; the atomics are fields of `self`.
unsafe impl<const DATA_WORDS: usize, const AUX_WORDS: usize> RingMemory for ModelRing<DATA_WORDS, AUX_WORDS> {
    #[inline(always)]
    fn size(&self, area: Area) -> usize {
        self.cells(area).len() * 8
    }

    #[inline(always)]
    fn position(&self, p: Position) -> &AtomicUsize {
        &self.positions[p.index()]
    }

    #[inline(always)]
    fn paused(&self) -> &AtomicBool {
        &self.paused
    }

    #[inline(always)]
    fn write_gen(&self) -> &AtomicUsize {
        &self.write_gen
    }

    #[inline(always)]
    fn page_word(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset % 4 == 0 && offset < offsets::RESERVED);
        &self.header[(offset / 4) % self.header.len()]
    }

    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        let cells = self.cells(area);
        for_each_slot(offset, src.len(), |slot, in_slot, in_buf| {
            let slot = &cells[slot];
            // SAFETY: the caller guarantees exclusive access to this range; the slot index is
            // inside the array because offset + len <= size.
            let bytes = slot.cell.with_mut(|p| unsafe {
                let mut bytes = (*p).to_ne_bytes();
                bytes[in_slot].copy_from_slice(&src[in_buf]);
                *p = u64::from_ne_bytes(bytes);
                bytes
            });
            for (word, chunk) in slot.mirror.iter().zip(bytes.chunks_exact(8 / PARTS)) {
                let mut w = [0u8; core::mem::size_of::<usize>()];
                w.copy_from_slice(chunk);
                word.store(usize::from_ne_bytes(w), LOCAL);
            }
        });
    }

    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        let cells = self.cells(area);
        for_each_slot(offset, dst.len(), |slot, in_slot, in_buf| {
            // SAFETY: the caller guarantees nobody writes this range meanwhile; slot in bounds.
            let word = cells[slot].cell.with(|p| unsafe { *p });
            dst[in_buf].copy_from_slice(&word.to_ne_bytes()[in_slot]);
        });
    }

    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        let size = self.size(area);
        let fits = offset % 8 == 0 && dst.len() % 8 == 0 && offset.checked_add(dst.len()).is_some_and(|e| e <= size);
        if !fits {
            return false;
        }
        // The mirror: atomic, so a racing writer is defined behaviour (and invisible to loom's
        // race detector, as it should be for a reader that validates what it copied).
        let cells = self.cells(area);
        for (i, chunk) in dst.chunks_exact_mut(8).enumerate() {
            let slot = &cells[offset / 8 + i];
            for (word, part) in slot.mirror.iter().zip(chunk.chunks_exact_mut(8 / PARTS)) {
                part.copy_from_slice(&word.load(LOCAL).to_ne_bytes());
            }
        }
        true
    }

    #[inline(always)]
    unsafe fn view(&self, _area: Area, _offset: usize, _len: usize) -> Option<&[u8]> {
        // Slots are not contiguous bytes (each has a mirror): readers copy. That is also what a
        // model needs, since every access must go through a tracked cell under loom.
        None
    }
}
