//! [`ProbeRing`]: perfring's [`RingMemory`] over a ring in a target's RAM, read the way a debug
//! probe reads it — through the debugger's memory reads, while the target is halted. All of
//! this example's `unsafe` is here (the trait is `unsafe` to implement).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize};

use perfring::memory::{Area, Position, RingMemory};

use crate::gdb::Gdb;

/// The ring at target address `base`: a control page of `page` bytes, a data area of
/// `data_size`. The position words are the host's copies: `data_head` is loaded from the
/// target at each [`ProbeRing::refresh`], and the consumer's `data_tail` is written back by
/// [`ProbeRing::write_back_tail`]. Data bytes come from the prefetched span or, outside it,
/// from a memory read of their own; a failed read is a failed load (a typed read error for the
/// consumer, never a panic).
pub struct ProbeRing {
    gdb: RefCell<Gdb>,
    base: u32,
    page: usize,
    data_size: usize,
    positions: [AtomicUsize; 4],
    header: [AtomicU32; 24],
    paused: AtomicBool,
    write_gen: AtomicUsize,
    /// Data-area offset and bytes of the span read at the last refresh.
    cache: RefCell<(usize, Vec<u8>)>,
}

impl ProbeRing {
    /// The ring at `base` (sizes are the host's: the target's page is never trusted for them).
    pub fn new(gdb: Gdb, base: u32, page: usize, data_size: usize) -> ProbeRing {
        ProbeRing {
            gdb: RefCell::new(gdb),
            base,
            page,
            data_size,
            positions: Default::default(),
            header: Default::default(),
            paused: AtomicBool::new(false),
            write_gen: AtomicUsize::new(0),
            cache: RefCell::new((0, Vec::new())),
        }
    }

    /// The debugger connection.
    pub fn gdb(&self) -> std::cell::RefMut<'_, Gdb> {
        self.gdb.borrow_mut()
    }

    fn word(&self, offset: usize) -> std::io::Result<u64> {
        let b = self.gdb.borrow_mut().read(self.base + offset as u32, 8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    /// With the target halted: load `data_head`, and read the published span after our tail
    /// (at most the data area) in one go. The target is 32-bit: its head is the low half of
    /// the u64 field and wraps every 4 GiB, so it is extended against our (64-bit) tail.
    pub fn refresh(&self) -> std::io::Result<()> {
        let tail = self.positions[Position::DataTail.index()].load(perfring::fences::LOCAL);
        let low = self.word(Position::DataHead.page_offset())? as u32;
        let head = perfring::memory::extend_position32(tail, low);
        self.positions[Position::DataHead.index()].store(head, perfring::fences::LOCAL);
        let span = head.wrapping_sub(tail).min(self.data_size);
        let (start, mask) = (tail % self.data_size, self.data_size - 1);
        let first = span.min(self.data_size - start);
        let mut gdb = self.gdb.borrow_mut();
        let data = self.base + self.page as u32;
        let mut bytes = gdb.read(data + start as u32, first)?;
        if span > first {
            bytes.extend(gdb.read(data, span - first)?);
        }
        *self.cache.borrow_mut() = (start & mask, bytes);
        Ok(())
    }

    /// With the target halted: store the consumer's tail into the target's `data_tail`.
    pub fn write_back_tail(&self) -> std::io::Result<()> {
        let tail = self.positions[Position::DataTail.index()].load(perfring::fences::LOCAL) as u64;
        self.gdb.borrow_mut().write(self.base + Position::DataTail.page_offset() as u32, &tail.to_le_bytes())
    }

    /// Copy data bytes at data-area `offset` from the prefetched span (which may wrap).
    fn copy_cached(&self, offset: usize, dst: &mut [u8]) -> bool {
        let cache = self.cache.borrow();
        let (start, bytes) = (&cache.0, &cache.1);
        let rel = offset.wrapping_sub(*start) & (self.data_size - 1);
        match bytes.get(rel..rel + dst.len()) {
            Some(src) => {
                dst.copy_from_slice(src);
                true
            }
            None => false,
        }
    }
}

// SAFETY: the sizes are constant (set at `new`); the position and header atomics are fields
// (the same objects every call); no method touches memory outside its own fields and `dst`
// (data comes from the debugger, copied into `dst` within the bounds checked here).
unsafe impl RingMemory for ProbeRing {
    fn size(&self, area: Area) -> usize {
        match area {
            Area::Data => self.data_size,
            Area::Aux => 0,
        }
    }
    fn position(&self, p: Position) -> &AtomicUsize {
        &self.positions[p.index()]
    }
    fn page_word(&self, offset: usize) -> &AtomicU32 {
        &self.header[(offset / 4).min(self.header.len() - 1)]
    }
    fn paused(&self) -> &AtomicBool {
        &self.paused
    }
    fn write_gen(&self) -> &AtomicUsize {
        &self.write_gen
    }
    unsafe fn write(&self, _area: Area, _offset: usize, _src: &[u8]) {
        // The host never produces into the target's ring.
    }
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        self.load_words(area, offset & !7, dst);
    }
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        if area != Area::Data
            || offset % 8 != 0
            || dst.len() % 8 != 0
            || offset.checked_add(dst.len()).map_or(true, |end| end > self.data_size)
        {
            return false;
        }
        if self.copy_cached(offset, dst) {
            return true;
        }
        let addr = self.base + (self.page + offset) as u32;
        match self.gdb.borrow_mut().read(addr, dst.len()) {
            Ok(bytes) if bytes.len() == dst.len() => {
                dst.copy_from_slice(&bytes);
                true
            }
            _ => false,
        }
    }
    unsafe fn view(&self, _area: Area, _offset: usize, _len: usize) -> Option<&[u8]> {
        None
    }
}
