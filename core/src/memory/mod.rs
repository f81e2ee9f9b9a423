//! The seam between the protocol and the memory it runs over.
//!
//! Every access the producer and the consumer make to shared memory goes through
//! [`RingMemory`]. Two implementations ship with the crate:
//!
//! * [`Mapping`] — the real ABI layout over caller memory: a `perf_event_mmap_page` followed by a
//!   power-of-two data area (and optionally an AUX area). Control words are reached with
//!   `AtomicUsize::from_ptr`/`AtomicU32::from_ptr` at the kernel's offsets; this is what runs over
//!   the kernel's own mapping, a hypervisor's shared page or a firmware buffer. Not available under
//!   `cfg(loom)`: loom's atomics cannot be laid over raw bytes.
//! * [`ModelRing`] — the same words as owned atomics and the data area as one
//!   `loom::UnsafeCell` per 8-byte slot, so that under `cfg(loom)` every data
//!   access is tracked and a wrong ordering shows up as a data race. Also usable without loom
//!   (the simulator and the unit tests use it).
//!
//! # Positions are the kernel's `unsigned long`
//!
//! `data_head`, `data_tail`, `aux_head` and `aux_tail` are free-running byte counters of type
//! `usize` here, because the kernel keeps them in `unsigned long`. On 64-bit targets that is the
//! whole u64 field. On 32-bit targets (thumbv7em, riscv32imac: no 64-bit atomics) it is the
//! low-order 32 bits of the u64 field, exactly what a 32-bit kernel publishes (its high half stays
//! 0). A 32-bit reader of a 64-bit producer also only needs the low half: every position is used
//! modulo the area size (at most 2³¹ there), and the kernel's space check
//! `CIRC_SPACE(head, tail, size)` reads only the low bits of the tail we write.
//!
//! The other way round, a 64-bit reader of a 32-bit producer (a host reading a Cortex-M's ring
//! through a debug probe), sees a `data_head` that wraps to 0 every 4 GiB while its own tail
//! goes on counting: extend each head it loads with [`extend_position32`] against its tail
//! before the consumer sees it (`examples/firmware-host` does, in its `RingMemory`). The tail
//! it stores back needs nothing: the producer reads the low half.

#[cfg(not(loom))]
mod mapping;
mod model;

#[cfg(not(loom))]
pub use mapping::Mapping;
pub use model::ModelRing;

use crate::loom::{AtomicBool, AtomicU32, AtomicUsize};

/// Smallest data area perfring accepts, in bytes.
///
/// The kernel keeps at least one byte free (`CIRC_SPACE`), so a ring of `n` bytes holds at most
/// `n - 8` bytes of records. 64 is the smallest power of two in which a `PERF_RECORD_LOST`
/// (24 bytes without a sample_id trailer) and the smallest record after it (8 bytes) fit, so
/// that losses can always be reported.
pub const MIN_DATA_SIZE: usize = 64;

/// Largest data (or AUX) area perfring accepts: positions are compared with wrapping `usize`
/// arithmetic, which needs the area to be at most half the counter range.
pub const MAX_AREA_SIZE: usize = 1 << (usize::BITS - 1);

/// One of the four free-running position words of the control page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// `data_head` (offset 1024), written by the producer.
    DataHead,
    /// `data_tail` (offset 1032), written by the consumer.
    DataTail,
    /// `aux_head` (offset 1056), written by the producer.
    AuxHead,
    /// `aux_tail` (offset 1064), written by the consumer.
    AuxTail,
}

impl Position {
    /// Byte offset of the u64 field in `perf_event_mmap_page`.
    pub const fn page_offset(self) -> usize {
        use crate::page::offsets;
        match self {
            Position::DataHead => offsets::DATA_HEAD,
            Position::DataTail => offsets::DATA_TAIL,
            Position::AuxHead => offsets::AUX_HEAD,
            Position::AuxTail => offsets::AUX_TAIL,
        }
    }

    /// Index 0..4, for implementations that keep the words in an array.
    pub const fn index(self) -> usize {
        match self {
            Position::DataHead => 0,
            Position::DataTail => 1,
            Position::AuxHead => 2,
            Position::AuxTail => 3,
        }
    }
}

/// Which byte area of the mapping an access is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// The data ring of records (`data_offset`, `data_size`).
    Data,
    /// The AUX area (`aux_offset`, `aux_size`).
    Aux,
}

/// Access to one perf mapping: its control words and its byte areas.
///
/// # Safety
///
/// An implementation promises that, for as long as it is alive:
/// * [`size`](Self::size) is constant, and is 0 or a power of two no larger than
///   [`MAX_AREA_SIZE`];
/// * the byte ranges that the methods below accept (as their docs state) are valid memory of the
///   area, so that calls satisfying those contracts never touch memory outside it;
/// * the atomics returned by [`position`](Self::position) and [`page_word`](Self::page_word) are
///   the same objects on every call.
pub unsafe trait RingMemory {
    /// Size in bytes of `area`: a power of two, or 0 if the mapping has no such area.
    fn size(&self, area: Area) -> usize;

    /// The position word `p`, as the kernel's `unsigned long` (see the module docs).
    fn position(&self, p: Position) -> &AtomicUsize;

    /// The 32-bit word at byte `offset` of the self-monitoring header of the control page.
    ///
    /// `offset` must be a multiple of 4 below 96 (the start of the page's `__reserved`). Other
    /// values are a caller bug: implementations clamp them to a word of that header (and
    /// `debug_assert`), never touching memory outside it.
    fn page_word(&self, offset: usize) -> &AtomicU32;

    /// The kernel's `rb->paused` (`PERF_EVENT_IOC_PAUSE_OUTPUT`), read by a perfring
    /// [`Producer`](crate::producer::Producer) writing through this memory value and set by
    /// [`Producer::pause_output`](crate::producer::Producer::pause_output) (or by whoever else holds the
    /// same value). It is ring state but not part of the ABI page, so it lives beside the
    /// mapping: a producer in another process, or over another value of the same bytes, never
    /// sees it, and neither does the kernel (pause a kernel ring with the ioctl).
    fn paused(&self) -> &AtomicBool;

    /// The producer's write generation: odd while an overwrite-mode producer has a writer open,
    /// even otherwise (a seqlock over the data area; see [`crate::backward`]). Not part of the ABI
    /// page: the kernel has no such word, so over the kernel's mapping it stays 0.
    fn write_gen(&self) -> &AtomicUsize;

    /// Copy `src` into `area` at byte `offset`.
    ///
    /// # Safety
    /// `offset + src.len() <= self.size(area)`, and no other party accesses these bytes while the
    /// copy runs (the protocol guarantees it for a producer that reserved them).
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]);

    /// Copy bytes of `area` at `offset` into `dst` with plain loads.
    ///
    /// # Safety
    /// `offset + dst.len() <= self.size(area)`, and no other party writes these bytes while the
    /// copy runs (the protocol guarantees it for published, unconsumed records).
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]);

    /// Copy bytes of `area` at `offset` into `dst` with word-sized atomic loads, so that the copy
    /// is defined behaviour even if a hostile peer writes these bytes concurrently. The copy may
    /// then be torn; callers validate it after copying.
    ///
    /// `offset` and `dst.len()` must be multiples of 8 and `offset + dst.len() <= size(area)`;
    /// otherwise nothing is copied and `false` is returned. A memory that can fail to load
    /// (a debug probe's read, a guest address the hypervisor refuses) also returns `false`, with
    /// `dst` in any state: the readers then return a typed error
    /// ([`ReadError::LoadFailed`](crate::consumer::ReadError::LoadFailed),
    /// [`ReadError::LoadFailed`](crate::consumer::ReadError::LoadFailed)), never the bytes.
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool;

    /// A zero-copy view of `len` bytes of `area` at `offset`, if this memory supports one
    /// (`None` under loom, where every access must go through a tracked cell).
    ///
    /// # Safety
    /// `offset + len <= self.size(area)`, and nobody writes these bytes for the lifetime of the
    /// returned slice (the consumer ties it to a borrow that ends before it frees them).
    unsafe fn view(&self, area: Area, offset: usize, len: usize) -> Option<&[u8]>;
}

/// Ring memory that one value owns: while the value is exclusively borrowed, its ring is reached
/// through that borrow alone. [`split`](crate::split) takes such a borrow as the proof that the
/// producer and the zero-copy consumer it hands out are the ring's only ones.
///
/// A shared reference (`&R`) is [`RingMemory`] but not this: it can be copied and split again,
/// which would make two producers, or a second consumer that frees bytes the first one still
/// lends out. Nor is a mapping of a ring that someone else produces (the kernel's, a peer's):
/// read those with [`Consumer::untrusted`](crate::consumer::Consumer::untrusted), or with
/// [`Consumer::trusted`](crate::consumer::Consumer::trusted) under its contract.
///
/// # Safety
/// While a value is exclusively borrowed, nothing reaches its ring's bytes (control words, data
/// and AUX areas) except through that borrow: no other value, of this type or another, maps the
/// same bytes for reading or writing, and no other party (the kernel, another process, another
/// thread) writes them.
pub unsafe trait ExclusiveMemory: RingMemory {}

// SAFETY: forwards every call to `R`, which upholds the contract.
unsafe impl<R: RingMemory + ?Sized> RingMemory for &R {
    #[inline(always)]
    fn size(&self, area: Area) -> usize {
        (**self).size(area)
    }
    #[inline(always)]
    fn position(&self, p: Position) -> &AtomicUsize {
        (**self).position(p)
    }
    #[inline(always)]
    fn page_word(&self, offset: usize) -> &AtomicU32 {
        (**self).page_word(offset)
    }
    #[inline(always)]
    fn paused(&self) -> &AtomicBool {
        (**self).paused()
    }
    #[inline(always)]
    fn write_gen(&self) -> &AtomicUsize {
        (**self).write_gen()
    }
    #[inline(always)]
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract, which is the same for `R`.
        unsafe { (**self).write(area, offset, src) }
    }
    #[inline(always)]
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract, which is the same for `R`.
        unsafe { (**self).read(area, offset, dst) }
    }
    #[inline(always)]
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        (**self).load_words(area, offset, dst)
    }
    #[inline(always)]
    unsafe fn view(&self, area: Area, offset: usize, len: usize) -> Option<&[u8]> {
        // SAFETY: the caller upholds `view`'s contract, which is the same for `R`.
        unsafe { (**self).view(area, offset, len) }
    }
}

/// Why a mapping or a ring could not be set up. Never a panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutError {
    /// The area size is not a power of two (the kernel rejects it with `-EINVAL`).
    NotPowerOfTwo {
        /// The size given.
        size: usize,
    },
    /// The data area is smaller than [`MIN_DATA_SIZE`].
    TooSmall {
        /// The size given.
        size: usize,
        /// The smallest accepted size.
        min: usize,
    },
    /// The area is larger than [`MAX_AREA_SIZE`].
    TooLarge {
        /// The size given.
        size: usize,
    },
    /// The memory is not 8-byte aligned (records and positions are u64-aligned).
    Misaligned {
        /// The address given.
        addr: usize,
    },
    /// The control page is smaller than `sizeof(perf_event_mmap_page)` or not a multiple of 8.
    BadPageSize {
        /// The page size given.
        page_size: usize,
    },
    /// `data_offset`/`data_size` (or `aux_offset`/`aux_size`) point outside the mapping, or
    /// overlap the control page or each other.
    OutOfMapping {
        /// Start of the area, from the start of the mapping.
        offset: u64,
        /// Size of the area.
        size: u64,
        /// Length of the mapping.
        len: usize,
    },
    /// A position word (`data_tail` at attach) is not a multiple of 8.
    MisalignedPosition {
        /// The value found.
        position: usize,
    },
    /// The mapping has no area of this kind (size 0).
    NoArea,
}

impl core::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LayoutError::NotPowerOfTwo { size } => {
                write!(f, "area size {size} (data_size or aux_size) is not a power of two")
            }
            LayoutError::TooSmall { size, min } => {
                write!(f, "area size {size} (data_size or aux_size) is below the minimum {min}")
            }
            LayoutError::TooLarge { size } => {
                write!(f, "area size {size} (data_size or aux_size) is larger than half the position range")
            }
            LayoutError::Misaligned { addr } => write!(f, "memory at {addr:#x} is not 8-byte aligned"),
            LayoutError::BadPageSize { page_size } => {
                write!(f, "control page size {page_size} is below 1088 or not a multiple of 8")
            }
            LayoutError::OutOfMapping { offset, size, len } => {
                write!(
                    f,
                    "area [{offset:#x}, +{size:#x}) (data_offset and data_size, or aux_offset and aux_size) does \
                     not fit a {len:#x}-byte mapping"
                )
            }
            LayoutError::MisalignedPosition { position } => {
                write!(f, "position {position:#x} (data_tail) is not a multiple of 8")
            }
            LayoutError::NoArea => write!(f, "the mapping has no such area (its data_size or aux_size is 0)"),
        }
    }
}

impl core::error::Error for LayoutError {}

/// The free-running position whose low 32 bits are `low` and which lies nearest `reference`
/// (within 2³¹ bytes either way): a 32-bit producer's position (its `unsigned long` wraps at
/// 4 GiB) seen by a 64-bit reader, with `reference` the reader's own tail. A head up to 2 GiB
/// behind the tail stays behind it, so the consumer still names it
/// ([`ReadError::HeadBehindTail`](crate::consumer::ReadError::HeadBehindTail)). On a 32-bit target it is
/// `low` itself.
///
/// ```
/// use perfring::memory::extend_position32;
/// # #[cfg(target_pointer_width = "64")] {
/// // The reader's tail just below 4 GiB; the producer's head wrapped to 0x40.
/// assert_eq!(extend_position32(0xffff_ffc0, 0x40), 0x1_0000_0040);
/// assert_eq!(extend_position32(0x1_0000_0040, 0xffff_ffc0), 0xffff_ffc0); // behind, stays behind
/// # }
/// ```
pub const fn extend_position32(reference: usize, low: u32) -> usize {
    // The signed distance from the reference's low half: at most 2³¹ either way.
    let delta = low.wrapping_sub(reference as u32) as i32;
    reference.wrapping_add(delta as isize as usize)
}

/// Check that `size` can be the size of a ring area of at least `min` bytes.
pub(crate) const fn check_area_size(size: usize, min: usize) -> Result<(), LayoutError> {
    if size == 0 {
        return Err(LayoutError::NoArea);
    }
    if size > MAX_AREA_SIZE {
        return Err(LayoutError::TooLarge { size });
    }
    if !size.is_power_of_two() {
        return Err(LayoutError::NotPowerOfTwo { size });
    }
    if size < min {
        return Err(LayoutError::TooSmall { size, min });
    }
    Ok(())
}
