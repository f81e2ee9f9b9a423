//! [`ReadOnlyMapping`]: a ring the kernel mapped read-only, read with loads alone (its docs
//! say why and how).

use perfring::fences::{fence, C_HEAD_LOAD, LOCAL};
use perfring::loom::{AtomicBool, AtomicU32, AtomicUsize};
use perfring::memory::{Area, Position, RingMemory};
use perfring::page::MmapPage;
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{offset_of, size_of};

use crate::sys;

/// Words of the control page's self-monitoring header that [`RingMemory::page_word`] reaches.
const HEADER_WORDS: usize = offset_of!(MmapPage, reserved) / 4;

/// Byte offset of the low-order `usize` of a u64 position field (see `perfring::memory`).
const LOW_HALF: usize = if usize::BITS == 64 || cfg!(target_endian = "little") { 0 } else { 4 };

/// A ring mapped read-only, as perfring's readers see it: made
/// by [`Ring::read_only`](crate::Ring::read_only), borrowing the ring. One reader's: `Send`,
/// not `Sync` (below: why).
///
/// [`ReadOnlyMapping`]: a ring the kernel mapped read-only, read through perfring's
/// [`RingMemory`] with loads alone.
///
/// An event mapped without `PROT_WRITE` is an overwrite ring (the kernel never reads
/// `data_tail`), or a control page mapped for self-monitoring. perfring's [`Mapping`] is made
/// for memory it may store into (`data_tail`, `aux_tail`, the self-monitoring writer): over a
/// read-only page one such store, from any safe call, is a SIGSEGV, and Rust guarantees no
/// atomic operation on read-only memory but a relaxed load of at most the pointer's width.
///
/// So a `ReadOnlyMapping` never hands out a reference into the kernel's pages. Each
/// [`RingMemory::position`] and [`RingMemory::page_word`] call loads the live word with a
/// relaxed load followed by the acquire fence of (C), stores the value into a word of its own,
/// and returns that: loads through it see the value the call took (with the acquire ordering
/// the protocol asks of the head load), stores through it land in the copy and never reach the
/// kernel (which reads neither `data_tail` nor any other word of an overwrite ring). Call the
/// accessor again for a newer value, as perfring's readers do for every load. The data area is
/// read with relaxed word loads only ([`RingMemory::load_words`]); no zero-copy view is given.
///
/// A `ReadOnlyMapping` is [`Send`] but not [`Sync`]: it is one reader's. Each accessor call
/// stores the value it loaded into a word of the mapping's own and hands out a reference to
/// that word. Shared between threads, one thread's call could overwrite the word between
/// another thread's call and that thread's load of it: the second thread would then act on a
/// head it did not load itself, without the acquire (C) that its own load gave it, and could
/// read data bytes the kernel had not finished writing for that head, or compare a reader's
/// interference check against the other thread's value. Every access being atomic, that would
/// be no data race in Rust's sense, but a broken protocol that a reader cannot detect; making
/// the type `!Sync` rules it out. Each thread makes its own: [`Ring::read_only`] is cheap (no
/// system call, no allocation).
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<perfring_linux::ReadOnlyMapping<'static>>(); // not Sync: one reader's
/// ```
///
/// ```
/// fn sent_to_a_thread<T: Send>() {}
/// sent_to_a_thread::<perfring_linux::ReadOnlyMapping<'static>>(); // Send: the reader may move
/// ```
///
/// [`Mapping`]: perfring::memory::Mapping
/// [`Ring::read_only`]: crate::Ring::read_only
#[derive(Debug)]
pub struct ReadOnlyMapping<'r> {
    mmap: &'r sys::Mmap,
    data_offset: usize,
    data_size: usize,
    positions: [AtomicUsize; 4],
    words: [AtomicU32; HEADER_WORDS],
    paused: AtomicBool,
    write_gen: AtomicUsize,
    /// Not `Sync` (the type's docs say why); `Cell` is `Send`, so the mapping stays `Send`.
    _one_reader: PhantomData<Cell<()>>,
}

impl<'r> ReadOnlyMapping<'r> {
    /// The kernel's layout of `mmap`: the control page (`page` bytes), then the data area.
    pub(crate) fn new(mmap: &'r sys::Mmap, page: usize) -> ReadOnlyMapping<'r> {
        ReadOnlyMapping {
            mmap,
            data_offset: page,
            data_size: mmap.len().saturating_sub(page),
            positions: [0; 4].map(AtomicUsize::new),
            words: [0; HEADER_WORDS].map(AtomicU32::new),
            paused: AtomicBool::new(false),
            write_gen: AtomicUsize::new(0),
            _one_reader: PhantomData,
        }
    }

    /// The live value of a u64 field of the control page (`data_offset`, `time_zero`, ...): two
    /// relaxed u32 loads (the halves are not read at one instant; use the accessors of
    /// [`perfring::selfmon`] for fields under the seqlock). `None` past the page's fields.
    pub fn load_u64(&self, offset: usize) -> Option<u64> {
        if offset % 8 != 0 || offset >= size_of::<MmapPage>() {
            return None;
        }
        let (a, b) = (self.mmap.load_relaxed_u32(offset)?, self.mmap.load_relaxed_u32(offset + 4)?);
        fence(C_HEAD_LOAD);
        Some(if cfg!(target_endian = "little") {
            u64::from(a) | u64::from(b) << 32
        } else {
            u64::from(b) | u64::from(a) << 32
        })
    }
}

// SAFETY: `size` is fixed at construction: the data area is the mapping after the control page,
// a power of two of pages (checked by `Ring::map`) or 0, and no AUX area. `position` and
// `page_word` return the same objects (words of this struct) on every call. No method touches
// memory outside the mapping: every load is bounds-checked by `sys::Mmap`, and `write`, `read`
// and `view` never reach the kernel's pages (see each).
unsafe impl RingMemory for ReadOnlyMapping<'_> {
    fn size(&self, area: Area) -> usize {
        match area {
            Area::Data => self.data_size,
            Area::Aux => 0,
        }
    }

    fn position(&self, p: Position) -> &AtomicUsize {
        let live = self.mmap.load_relaxed_usize(p.page_offset() + LOW_HALF).unwrap_or(0);
        // (C) as a fence after the relaxed load: the acquire a head load needs, in the only form
        // defined on read-only memory; pairs with (B).
        fence(C_HEAD_LOAD);
        let word = &self.positions[p.index()];
        word.store(live, LOCAL);
        word
    }

    fn page_word(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset % 4 == 0 && offset < offset_of!(MmapPage, reserved));
        let offset = (offset % offset_of!(MmapPage, reserved)) & !3;
        let live = self.mmap.load_relaxed_u32(offset).unwrap_or(0);
        // Acquire, as the seqlock reader's loads of these words are (perfring::selfmon).
        fence(C_HEAD_LOAD);
        let word = &self.words[offset / 4];
        word.store(live, LOCAL);
        word
    }

    fn paused(&self) -> &AtomicBool {
        &self.paused
    }

    fn write_gen(&self) -> &AtomicUsize {
        &self.write_gen
    }

    /// Writes nothing: the pages are read-only, and no reader writes the data area (a
    /// producer over this memory breaks `Producer::new`'s contract, the kernel being the
    /// producer).
    unsafe fn write(&self, _area: Area, _offset: usize, _src: &[u8]) {}

    /// Copies with relaxed word loads where the range allows it (the kernel may overwrite an
    /// overwrite ring at any time); a range `load_words` refuses (unaligned) is zero-filled.
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        if !self.load_words(area, offset, dst) {
            dst.fill(0);
        }
    }

    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        const W: usize = std::mem::size_of::<usize>();
        let size = self.size(area);
        let fits = area == Area::Data
            && offset % 8 == 0
            && dst.len() % 8 == 0
            && offset.checked_add(dst.len()).is_some_and(|end| end <= size);
        if !fits {
            return false;
        }
        for (i, chunk) in dst.chunks_exact_mut(W).enumerate() {
            let Some(word) = self.mmap.load_relaxed_usize(self.data_offset + offset + i * W) else { return false };
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        true
    }

    /// No view: the kernel may overwrite these bytes while a view lives.
    unsafe fn view(&self, _area: Area, _offset: usize, _len: usize) -> Option<&[u8]> {
        None
    }
}
