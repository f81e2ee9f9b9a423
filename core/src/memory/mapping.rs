//! [`Mapping`]: the kernel's layout over real memory.

use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::pad::CachePadded;

use super::{check_area_size, Area, LayoutError, Position, RingMemory, MIN_DATA_SIZE};
use crate::fences::LOCAL;
use crate::loom::{AtomicBool, AtomicU32, AtomicUsize};
use crate::page::{capabilities, offsets};

/// Byte offset of the low-order `usize` inside a u64 field: the whole field on 64-bit targets,
/// its low half on 32-bit ones (at +0 on little endian, +4 on big endian).
const LOW_HALF: usize = if usize::BITS == 64 || cfg!(target_endian = "little") { 0 } else { 4 };

/// A perf mapping in real memory: control page, data area and optional AUX area.
///
/// Made either by laying out a new ring over a buffer you own ([`Mapping::new`], the producer's
/// side, as the kernel's `perf_mmap`), or by attaching to memory someone else laid out
/// ([`Mapping::attach`], e.g. the kernel's own `mmap` of a perf event fd). The lifetime `'a` is
/// the borrow of that memory.
#[derive(Debug)]
pub struct Mapping<'a> {
    page: NonNull<u8>,
    data: NonNull<u8>,
    data_size: usize,
    aux: NonNull<u8>,
    aux_size: usize,
    paused: AtomicBool,
    /// Written by an overwrite-mode producer on every record while the consumer reads the
    /// fields above: on its own cache line so those reads do not bounce. (The ABI page cannot be
    /// padded: `data_head` and `data_tail` share a line by the kernel's layout.)
    write_gen: CachePadded<AtomicUsize>,
    _memory: PhantomData<&'a mut [u8]>,
}

// SAFETY: every access through a `Mapping` is atomic, or a copy whose exclusivity the
// `RingMemory` contract puts on the caller; the raw pointers are not tied to a thread.
unsafe impl Send for Mapping<'_> {}
// SAFETY: as for `Send`: shared use only performs atomic accesses or contract-guarded copies.
unsafe impl Sync for Mapping<'_> {}

impl<'a> Mapping<'a> {
    /// Lay out a new ring over `buf`, as the kernel does for a new mapping: the control page is
    /// the first `page_size` bytes, the data area all the rest. Zeroes the whole buffer, then
    /// writes `size` (96), `cap_bit0_is_deprecated`, `data_offset` and `data_size`.
    ///
    /// Errors: `buf` not 8-byte aligned, `page_size` below 1088 or not a multiple of 8, or a data
    /// area (`buf.len() - page_size`) that is not a power of two of at least
    /// [`MIN_DATA_SIZE`] bytes.
    pub fn new(buf: &'a mut [u8], page_size: usize) -> Result<Self, LayoutError> {
        let addr = buf.as_ptr() as usize;
        if addr % 8 != 0 {
            return Err(LayoutError::Misaligned { addr });
        }
        if page_size < offsets::END || page_size % 8 != 0 || page_size > buf.len() {
            return Err(LayoutError::BadPageSize { page_size });
        }
        let data_size = buf.len() - page_size;
        check_area_size(data_size, MIN_DATA_SIZE)?;
        buf.fill(0);
        let mut put = |off: usize, v: u64| buf[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        put(offsets::DATA_OFFSET, page_size as u64);
        put(offsets::DATA_SIZE, data_size as u64);
        put(offsets::CAPABILITIES, capabilities::BIT0_IS_DEPRECATED);
        buf[offsets::SIZE..offsets::SIZE + 4].copy_from_slice(&(offsets::RESERVED as u32).to_ne_bytes());
        let base = NonNull::from(buf).cast::<u8>();
        Ok(Mapping {
            page: base,
            // SAFETY: page_size <= buf.len(), checked above, so the pointer stays in (or one past) buf.
            data: unsafe { base.add(page_size) },
            data_size,
            aux: NonNull::dangling(),
            aux_size: 0,
            paused: AtomicBool::new(false),
            write_gen: CachePadded::new(AtomicUsize::new(0)),
            _memory: PhantomData,
        })
    }

    /// Attach to a mapping someone else laid out (the kernel, a hypervisor, another process):
    /// reads `data_offset` and `data_size` from the control page at `ptr` once, and validates
    /// them against `len` before anything else is read. A mapping with `data_size == 0` (control
    /// page only, for self-monitoring) is accepted; rings over it are refused later.
    ///
    /// # Safety
    /// `ptr .. ptr + len` must be readable memory for `'a` (and the control page writable, if a
    /// consumer will store `data_tail`), and every other party must access it only through its
    /// own copy of this protocol (atomic or protocol-ordered accesses), never by moving or
    /// unmapping it while `'a` lasts. The *contents* need not be trusted: hostile values are
    /// errors, not undefined behaviour (see [`crate::security`]).
    ///
    /// A `Mapping` can be [`split`](crate::split) into a producer and a zero-copy consumer,
    /// which needs it to be the ring's only way in ([`ExclusiveMemory`](super::ExclusiveMemory)):
    /// if another party produces into these bytes (the kernel, a peer), or another value maps
    /// them, the caller must also keep the `Mapping` from being split — hand out `&Mapping`,
    /// never the value or `&mut Mapping` (as `perfring-linux`'s `Ring` does).
    pub unsafe fn attach(ptr: *mut u8, len: usize) -> Result<Self, LayoutError> {
        let addr = ptr as usize;
        if addr % 8 != 0 || ptr.is_null() {
            return Err(LayoutError::Misaligned { addr });
        }
        if len < offsets::END {
            return Err(LayoutError::BadPageSize { page_size: len });
        }
        // SAFETY: ptr is non-null (checked), aligned and valid for `len >= END` bytes (caller).
        let page = unsafe { NonNull::new_unchecked(ptr) };
        let read_u64 = |off: usize| -> u64 {
            // SAFETY: off + 8 <= END <= len, 8-aligned; loaded atomically as two u32 halves
            // because 32-bit targets have no 64-bit atomics; these fields are written once,
            // before attach, and validated below whatever they hold.
            let (lo, hi) = unsafe {
                let lo = AtomicU32::from_ptr(ptr.add(off).cast()).load(LOCAL);
                let hi = AtomicU32::from_ptr(ptr.add(off + 4).cast()).load(LOCAL);
                (lo, hi)
            };
            if cfg!(target_endian = "little") {
                u64::from(lo) | u64::from(hi) << 32
            } else {
                u64::from(hi) | u64::from(lo) << 32
            }
        };
        let data_offset = read_u64(offsets::DATA_OFFSET);
        let data_size_64 = read_u64(offsets::DATA_SIZE);
        let out = LayoutError::OutOfMapping { offset: data_offset, size: data_size_64, len };
        let data_size = usize::try_from(data_size_64).map_err(|_| out)?;
        let data_off = usize::try_from(data_offset).map_err(|_| out)?;
        if data_size != 0 {
            check_area_size(data_size, MIN_DATA_SIZE)?;
            let end = data_off.checked_add(data_size).ok_or(out)?;
            if data_off < offsets::END || data_off % 8 != 0 || end > len {
                return Err(out);
            }
        }
        Ok(Mapping {
            page,
            data: if data_size == 0 {
                NonNull::dangling()
            } else {
                // SAFETY: data_off + data_size <= len, checked above.
                unsafe { page.add(data_off) }
            },
            data_size,
            aux: NonNull::dangling(),
            aux_size: 0,
            paused: AtomicBool::new(false),
            write_gen: CachePadded::new(AtomicUsize::new(0)),
            _memory: PhantomData,
        })
    }

    /// Add an AUX area that lives in its own buffer (a second mapping of the same fd at
    /// `aux_offset`, or caller memory). Writes `aux_size` into the control page (and
    /// `aux_offset`, if given), as user space does before mapping the AUX area.
    ///
    /// Errors: size not a power of two, or below 8, or `aux` not 8-byte aligned.
    pub fn with_aux(mut self, aux: &'a mut [u8], aux_offset: Option<u64>) -> Result<Self, LayoutError> {
        let addr = aux.as_ptr() as usize;
        if addr % 8 != 0 {
            return Err(LayoutError::Misaligned { addr });
        }
        check_area_size(aux.len(), 8)?;
        if let Some(off) = aux_offset {
            let data_end = self.data_offset() + self.data_size as u64;
            if off < data_end {
                return Err(LayoutError::OutOfMapping { offset: off, size: aux.len() as u64, len: data_end as usize });
            }
            self.store_u64(offsets::AUX_OFFSET, off);
        }
        self.store_u64(offsets::AUX_SIZE, aux.len() as u64);
        self.aux_size = aux.len();
        self.aux = NonNull::from(aux).cast();
        Ok(self)
    }

    /// Attach an AUX area mapped by someone else at `ptr` (`aux_size` bytes, as the control page
    /// says).
    ///
    /// # Safety
    /// As for [`Mapping::attach`], for `ptr .. ptr + len`.
    pub unsafe fn attach_aux(mut self, ptr: *mut u8, len: usize) -> Result<Self, LayoutError> {
        let addr = ptr as usize;
        if addr % 8 != 0 || ptr.is_null() {
            return Err(LayoutError::Misaligned { addr });
        }
        check_area_size(len, 8)?;
        self.aux_size = len;
        // SAFETY: non-null, checked above.
        self.aux = unsafe { NonNull::new_unchecked(ptr) };
        Ok(self)
    }

    /// `data_offset` as this mapping uses it (bytes from the start of the control page).
    pub fn data_offset(&self) -> u64 {
        (self.data.as_ptr() as usize).wrapping_sub(self.page.as_ptr() as usize) as u64
    }

    /// The control page's address (for `munmap` and for debugging).
    pub fn page_ptr(&self) -> *mut u8 {
        self.page.as_ptr()
    }

    fn store_u64(&self, off: usize, v: u64) {
        let (first, second) =
            if cfg!(target_endian = "little") { (v as u32, (v >> 32) as u32) } else { ((v >> 32) as u32, v as u32) };
        // SAFETY: off is one of the 8-aligned u64 fields of the control page, inside the mapping.
        unsafe {
            AtomicU32::from_ptr(self.page.as_ptr().add(off).cast()).store(first, LOCAL);
            AtomicU32::from_ptr(self.page.as_ptr().add(off + 4).cast()).store(second, LOCAL);
        }
    }

    #[inline(always)]
    fn area(&self, area: Area) -> (NonNull<u8>, usize) {
        match area {
            Area::Data => (self.data, self.data_size),
            Area::Aux => (self.aux, self.aux_size),
        }
    }
}

// SAFETY: `Mapping::new` borrows its bytes exclusively for 'a, and `Mapping::attach`'s caller
// promises the same of a split mapping (its contract); a Mapping is neither Clone nor Copy, so an
// exclusive borrow of one reaches its ring alone.
unsafe impl super::ExclusiveMemory for Mapping<'_> {}

// SAFETY: sizes are fixed at construction and validated (power of two ≤ MAX_AREA_SIZE, or 0);
// the areas were validated to lie inside the memory the constructor's caller lent us for 'a; the
// position and page words are fixed offsets inside the control page.
unsafe impl RingMemory for Mapping<'_> {
    #[inline(always)]
    fn size(&self, area: Area) -> usize {
        self.area(area).1
    }

    #[inline(always)]
    fn position(&self, p: Position) -> &AtomicUsize {
        // SAFETY: the control page is 8-aligned and at least END bytes long; the u64 field at
        // page_offset() holds a usize at LOW_HALF, aligned for AtomicUsize; it lives for 'a.
        unsafe { AtomicUsize::from_ptr(self.page.as_ptr().add(p.page_offset() + LOW_HALF).cast()) }
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
        let offset = (offset % offsets::RESERVED) & !3;
        // SAFETY: offset is a 4-aligned offset below 96, inside the 8-aligned control page.
        unsafe { AtomicU32::from_ptr(self.page.as_ptr().add(offset).cast()) }
    }

    #[inline(always)]
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        let (base, size) = self.area(area);
        debug_assert!(offset + src.len() <= size);
        // SAFETY: the caller guarantees offset + len <= size (inside the area) and exclusivity.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), base.as_ptr().add(offset), src.len()) }
    }

    #[inline(always)]
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        let (base, size) = self.area(area);
        debug_assert!(offset + dst.len() <= size);
        // SAFETY: the caller guarantees the range is inside the area and not written meanwhile.
        unsafe { core::ptr::copy_nonoverlapping(base.as_ptr().add(offset), dst.as_mut_ptr(), dst.len()) }
    }

    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        let (base, size) = self.area(area);
        let fits = offset % 8 == 0 && dst.len() % 8 == 0 && offset.checked_add(dst.len()).is_some_and(|e| e <= size);
        if !fits {
            return false;
        }
        const W: usize = core::mem::size_of::<usize>();
        for (i, chunk) in dst.chunks_exact_mut(W).enumerate() {
            // SAFETY: offset + i*W + W <= offset + dst.len() <= size (checked), and the area base
            // is 8-aligned, so each word is an aligned usize inside the area; the load is atomic,
            // so a concurrent peer store is not a data race.
            let word = unsafe { AtomicUsize::from_ptr(base.as_ptr().add(offset + i * W).cast()).load(LOCAL) };
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        true
    }

    #[inline(always)]
    unsafe fn view(&self, area: Area, offset: usize, len: usize) -> Option<&[u8]> {
        let (base, size) = self.area(area);
        debug_assert!(offset + len <= size);
        // SAFETY: the caller guarantees the range is inside the area and unwritten while borrowed.
        Some(unsafe { core::slice::from_raw_parts(base.as_ptr().add(offset), len) })
    }
}
