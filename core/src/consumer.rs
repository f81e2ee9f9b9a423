//! The user-space side of a forward ring: acquire `data_head` (C), read records, release
//! `data_tail` (D).
//!
//! ```text
//! let mut batch = consumer.batch()?;          // loads data_head once, validates it   (C)
//! while let Some(record) = batch.next(&mut scratch) {
//!     let record = record?;                    // header validated before any use
//!     /* record.bytes: zero-copy if contiguous and trusted, else copied into scratch */
//! }
//! drop(batch);                                 // data_tail stored by the TailPolicy  (D)
//! ```
//!
//! Every check of the hostile-peer checklist is here: the head is read once per batch and must
//! be at most `data_size` ahead of the tail; each header is read once into a local; its size
//! must be ≥ 8, a multiple of 8 and within what the head published. A bad value is a
//! [`ReadError`], the batch stops there (nothing past it is consumed), and no call loops.
//!
//! Two trust levels, as a type parameter:
//! * [`Trusted`]: the producer follows the protocol (the kernel, or perfring's own producer):
//!   contiguous records are returned as zero-copy slices of the ring;
//! * [`Untrusted`]: the producer may be hostile and may rewrite bytes while we read them:
//!   every record is copied with atomic word loads into the caller's scratch and validated on
//!   the copy (no double fetch). See [`crate::security`].

use core::marker::PhantomData;

use crate::fences::{C_HEAD_LOAD, D_TAIL_STORE, LOCAL};
use crate::memory::{check_area_size, Area, LayoutError, Position, RingMemory, MIN_DATA_SIZE};
use crate::record::{Endian, Header, RawRecord};
pub use crate::scratch::Scratch;
use crate::stride::Stride;

/// Trust in the producer, chosen by type: [`Trusted`] or [`Untrusted`].
pub trait Trust: sealed::Sealed {
    /// Whether contiguous records may be returned as views into the ring.
    const ZERO_COPY: bool;
}

/// The producer follows the protocol: zero-copy reads of contiguous records.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trusted;

/// The producer may be hostile: copy-then-validate with atomic loads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Untrusted;

impl Trust for Trusted {
    const ZERO_COPY: bool = true;
}
impl Trust for Untrusted {
    const ZERO_COPY: bool = false;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Trusted {}
    impl Sealed for super::Untrusted {}
}

/// Why a ring's records could not be read, forward ([`Consumer`]) or newest-first
/// ([`BackwardReader`](crate::backward::BackwardReader)). Never a panic; a forward batch
/// consumed nothing past the fault, and the records a backward read delivered before it are
/// intact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// `data_head` is behind our tail (it went backwards, or the peer wrote garbage).
    HeadBehindTail {
        /// The head read.
        head: usize,
        /// Our tail.
        tail: usize,
    },
    /// `data_head` is more than `data_size` ahead of our tail: the producer overwrote unread
    /// data, or the peer wrote garbage.
    HeadTooFarAhead {
        /// The head read.
        head: usize,
        /// Our tail.
        tail: usize,
        /// Size of the data area.
        data_size: usize,
    },
    /// A record header with `size == 0` (the kernel and perfring's producer never publish one;
    /// a [`Handle`](crate::producer::Handle) given up before its header is taken back or
    /// becomes a LOST_SAMPLES record).
    ZeroSize {
        /// Position of the header.
        position: usize,
    },
    /// A record size that is not a multiple of 8.
    MisalignedSize {
        /// Position of the header.
        position: usize,
        /// The size in the header.
        size: u16,
    },
    /// A record that extends past the published head.
    SizeBeyondHead {
        /// Position of the header.
        position: usize,
        /// The size in the header.
        size: u16,
        /// Bytes published from this position.
        available: usize,
    },
    /// The record must be copied (it wraps, or the consumer is untrusted) and `scratch` is too
    /// small. 65536 bytes always suffice ([`Scratch`]).
    ScratchTooSmall {
        /// The record size.
        size: u16,
        /// The scratch length.
        scratch: usize,
    },
    /// `data_head` is not a multiple of 8: records are 8-byte aligned, so no producer publishes
    /// such a head (the peer wrote garbage).
    MisalignedHead {
        /// The head read.
        head: usize,
    },
    /// The memory behind the ring could not load bytes of a record
    /// ([`RingMemory::load_words`] returned `false`: a debug probe's failed read, a guest page
    /// the hypervisor refused). Nothing was consumed: retry, or [`Consumer::skip_to_head`].
    LoadFailed {
        /// Position of the record.
        position: usize,
        /// Bytes of it that were being loaded (8: its header).
        len: usize,
    },
    /// Backward: a perfring producer had a writer open (its write generation was odd, or
    /// changed to odd) during the read: pause the ring (or wait) and read again.
    WriterActive,
    /// Backward: the producer overwrote the record being read (the head moved past it during
    /// the copy): it and every older record are gone. Records read before it were returned
    /// intact.
    Overrun {
        /// Position of the overwritten record.
        position: usize,
    },
    /// Backward: a record crosses the previous read's head (the head went backwards or the
    /// ring is corrupt).
    CrossesPrevious {
        /// Position of the record.
        position: usize,
    },
}

impl core::fmt::Display for ReadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            ReadError::HeadBehindTail { head, tail } => write!(f, "data_head {head:#x} is behind data_tail {tail:#x}"),
            ReadError::HeadTooFarAhead { head, tail, data_size } => {
                write!(f, "data_head {head:#x} is more than {data_size:#x} bytes ahead of data_tail {tail:#x}")
            }
            ReadError::ZeroSize { position } => write!(f, "record at {position:#x} has size 0"),
            ReadError::MisalignedSize { position, size } => {
                write!(f, "record at {position:#x} has size {size}, not a multiple of 8")
            }
            ReadError::SizeBeyondHead { position, size, available } => {
                write!(f, "record at {position:#x} of size {size} extends past data_head ({available} bytes published)")
            }
            ReadError::ScratchTooSmall { size, scratch } => write!(
                f,
                "record of {size} bytes needs copying but scratch holds {scratch}: pass a larger scratch \
                 (perfring::consumer::Scratch holds any record)"
            ),
            ReadError::MisalignedHead { head } => {
                write!(f, "data_head {head:#x} is not a multiple of 8 (records are 8-byte aligned)")
            }
            ReadError::LoadFailed { position, len } => write!(
                f,
                "the ring's memory could not load {len} bytes of the record at {position:#x}: retry, or \
                 skip_to_head"
            ),
            ReadError::WriterActive => f.write_str("a writer was active during the read; pause and retry"),
            ReadError::Overrun { position } => write!(f, "record at {position:#x} was overwritten while read"),
            ReadError::CrossesPrevious { position } => {
                write!(f, "record at {position:#x} crosses the previous read position")
            }
        }
    }
}

impl core::error::Error for ReadError {}

/// A record read from a ring at free-running `position`: its validated header (for an
/// untrusted ring, the one snapshot that was checked) and its `header.size` bytes, a view into
/// the ring or into the scratch; in the native byte order, with no trailing data.
#[inline(always)]
pub(crate) fn ring_record<'a>(header: Header, bytes: &'a [u8], position: usize) -> RawRecord<'a> {
    RawRecord { header, bytes, offset: position as u64, endian: Endian::NATIVE, trailing: &[] }
}

/// A record of a trusted ring read in place ([`Batch::next_split`]): its validated header and
/// its `header.size` bytes as views into the ring, `first` up to the end of the data area and
/// `second` from its start — empty unless the record wraps the ring's end, where
/// [`Batch::next`] would copy it whole into a scratch. Native byte order, no trailing data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitRecord<'a> {
    /// The header, validated (size ≥ 8, a multiple of 8, within what the head published).
    pub header: Header,
    /// The record's bytes from its start (header included) to the end of the data area or of
    /// the record, whichever comes first.
    pub first: &'a [u8],
    /// The rest, from the start of the data area (empty unless the record wraps).
    pub second: &'a [u8],
    /// The record's free-running position in the ring.
    pub offset: u64,
}

/// When a [`Consumer`] stores `data_tail`, releasing what it read to the producer.
///
/// `data_head` and `data_tail` share one cache line (the ABI fixes their offsets), so every
/// tail store takes that line from the producer, whose next `data_head` store takes it back:
/// when the consumer keeps pace with the producer, a store per batch is a store per record,
/// and the line moves between the cores three times per record instead of two (see
/// `BENCHMARKS.md`, "Cross-core"). Deferring the store saves that transfer; the price is that
/// the producer sees less free space meanwhile — for a kernel ring, where `data_tail` is the
/// only thing that frees space, up to `bytes` more of the ring counts as full and the kernel
/// drops (and reports as LOST) earlier under a burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailPolicy {
    /// Store the tail at the end of every batch that read something (what perf does after
    /// each read of a ring: `perf_mmap__consume`).
    EveryBatch,
    /// Store it once at least `bytes` are read and not yet released, and always when a batch
    /// finds nothing new (the consumer has caught up and is about to wait), so an idle ring is
    /// never left looking full. [`Consumer::release`] stores it at any time.
    Deferred {
        /// Bytes read before a store is due.
        bytes: usize,
    },
}

/// How a [`Consumer`] paces its loads of `data_head` when the ring is nearly empty.
///
/// A consumer that keeps pace with its producer reads one record per batch, and each batch's
/// `data_head` load takes the control line (and the data line being written) from the
/// producer's core: the records then move one at a time at the price of several line
/// transfers each. A batch that finds fewer than `min_bytes` published waits `spins` spin-loop
/// hints and loads `data_head` once more, so that the producer gets ahead and the next batch
/// reads several records (whole lines) per transfer of the control line. The price is latency:
/// up to `spins` hints before a lone record is read. A hint's cost depends on the CPU and on
/// virtualisation (x86's `pause` takes from a few to tens of nanoseconds: 27 ns in the KVM
/// guest of `BENCHMARKS.md`, where the default's 128 hints are 3.5 µs). Off with
/// `min_bytes: 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Bytes published below which a batch waits once.
    pub min_bytes: usize,
    /// Spin-loop hints of that wait.
    pub spins: u32,
}

impl Pace {
    /// No pacing: every batch takes what is published at once.
    pub const OFF: Pace = Pace { min_bytes: 0, spins: 0 };
}

/// How a [`Consumer`] releases and paces (see [`TailPolicy`] and [`Pace`], and `BENCHMARKS.md`
/// for what each costs). [`ConsumerConfig::default`] is for rings between perfring's own producer and
/// consumer on two cores (firmware to host, guest to hypervisor); [`ConsumerConfig::EVERY_BATCH`] is
/// the kernel tools' behaviour, for kernel rings read on wakeups (perfring-linux uses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsumerConfig {
    /// When the tail is stored.
    pub tail: TailPolicy,
    /// How a nearly empty ring is polled.
    pub pace: Pace,
}

impl ConsumerConfig {
    /// The tail stored after every batch, no pacing (perf's `perf_mmap__consume` after each
    /// read of a ring).
    pub const EVERY_BATCH: ConsumerConfig = ConsumerConfig { tail: TailPolicy::EveryBatch, pace: Pace::OFF };

    /// The default's tail deferral: 4 KiB. One tail store per 4 KiB read makes the control
    /// line's transfer a small share of a record's cost (at 40-byte records, one store per
    /// ~100 records), while a producer short of space waits for at most 4 KiB it could already
    /// reuse. A quarter of the data area, the default until 2026-11-26, held back 16 KiB of a
    /// 64 KiB ring: a producer that had filled the ring then waited for 16 KiB at a time. In
    /// paired runs of the cross-core bench, 4 KiB was faster for a batching producer, most in
    /// the machine's faster states (`BENCHMARKS.md`, 2026-11-26).
    pub const DEFAULT_DEFERRAL: usize = 4096;
}

impl Default for ConsumerConfig {
    /// The tail deferred by [`ConsumerConfig::DEFAULT_DEFERRAL`] (4 KiB; a quarter of a data area
    /// smaller than 16 KiB), and a batch of less than 256 bytes waiting 128 spin-loop hints
    /// once: the settings the line-transfer model and the cross-core bench support
    /// (`BENCHMARKS.md`).
    fn default() -> ConsumerConfig {
        ConsumerConfig {
            tail: TailPolicy::Deferred { bytes: ConsumerConfig::DEFAULT_DEFERRAL },
            pace: Pace { min_bytes: 256, spins: 128 },
        }
    }
}

/// The consumer side of a forward ring.
pub struct Consumer<M: RingMemory, T: Trust = Trusted> {
    mem: M,
    mask: usize,
    /// Our tail: everything before it is consumed.
    tail: usize,
    /// The tail last stored to `data_tail` (behind `tail` while a store is deferred).
    released: usize,
    /// Bytes read before a deferred store is due (0: every batch).
    defer: usize,
    pace: Pace,
    _trust: PhantomData<T>,
}

impl<M: RingMemory> Consumer<M, Untrusted> {
    /// A consumer that does not trust the producer: any content of the ring and the control
    /// words yields records or typed errors, never undefined behaviour or a panic.
    ///
    /// ```
    /// use perfring::consumer::{ReadError, Scratch};
    /// use perfring::memory::{Position, RingMemory};
    /// use perfring::producer::{ProducerConfig, Producer, EventIdentity};
    /// use perfring::{consumer::Consumer, memory::Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// // SAFETY: the only producer of this ring.
    /// let producer = unsafe { Producer::new(&map, ProducerConfig::default()) }.unwrap();
    /// let mut consumer = Consumer::untrusted(&map).unwrap();
    /// let mut scratch = Scratch::new(); // every record is copied here, then validated
    /// producer.output(&[9, 0, 0, 0, 0, 0, 8, 0], &EventIdentity::ANONYMOUS).unwrap();
    /// assert_eq!(consumer.for_each(&mut scratch, |r| assert_eq!(r.header.type_, 9)), Ok(1));
    ///
    /// // A hostile peer publishes a head two ring sizes ahead: a typed error, nothing read.
    /// map.position(Position::DataHead).store(8 + 2 * 4096, perfring::fences::LOCAL);
    /// assert!(matches!(consumer.for_each(&mut scratch, |_| {}), Err(ReadError::HeadTooFarAhead { .. })));
    /// ```
    pub fn untrusted(mem: M) -> Result<Self, LayoutError> {
        Self::make(mem)
    }
}

impl<M: RingMemory> Consumer<M, Trusted> {
    /// A consumer that trusts the producer to follow the protocol, returning contiguous records
    /// zero-copy.
    ///
    /// # Safety
    /// The producer of this ring must follow the protocol (the kernel does; so does a perfring
    /// [`Producer`](crate::producer::Producer)): it never writes bytes between `data_tail` and `data_head`.
    /// Otherwise a zero-copy view could race a write. [`crate::split`] is the safe way to get one.
    pub unsafe fn trusted(mem: M) -> Result<Self, LayoutError> {
        Self::make(mem)
    }
}

impl<M: RingMemory, T: Trust> Consumer<M, T> {
    fn make(mem: M) -> Result<Self, LayoutError> {
        let size = mem.size(Area::Data);
        check_area_size(size, MIN_DATA_SIZE)?;
        let tail = mem.position(Position::DataTail).load(LOCAL);
        if tail % 8 != 0 {
            return Err(LayoutError::MisalignedPosition { position: tail });
        }
        let mut c =
            Consumer { mask: size - 1, tail, released: tail, defer: 0, pace: Pace::OFF, mem, _trust: PhantomData };
        c.configure(ConsumerConfig::default());
        Ok(c)
    }

    /// Set how this consumer releases and paces ([`ConsumerConfig`]). A tail deferral of more than a
    /// quarter of the data area is taken as a quarter (the producer always keeps three
    /// quarters); [`config`](Self::config) reports the value in force.
    pub fn configure(&mut self, config: ConsumerConfig) {
        self.defer = match config.tail {
            TailPolicy::EveryBatch => 0,
            TailPolicy::Deferred { bytes } => bytes.clamp(1, (self.mask + 1) / 4),
        };
        self.pace = config.pace;
    }

    /// How this consumer releases and paces.
    pub fn config(&self) -> ConsumerConfig {
        let tail = match self.defer {
            0 => TailPolicy::EveryBatch,
            bytes => TailPolicy::Deferred { bytes },
        };
        ConsumerConfig { tail, pace: self.pace }
    }

    /// Store the tail now if a deferred store is pending (before a consumer stops reading
    /// for a while, or to let a producer that is short of space go on). Returns whether it
    /// stored.
    pub fn release(&mut self) -> bool {
        if self.released == self.tail {
            return false;
        }
        self.released = self.tail;
        // (D): our reads of the freed records are ordered before the tail store; pairs with (A).
        self.mem.position(Position::DataTail).store(self.tail, D_TAIL_STORE);
        true
    }

    /// Start a batch: load `data_head` (C) and validate it against our tail. By the consumer's
    /// [`Pace`], a nearly empty ring is given a moment and `data_head` loaded once more.
    pub fn batch(&mut self) -> Result<Batch<'_, M, T>, ReadError> {
        // (C): the head load is ordered before our reads of the bytes it publishes; pairs with (B).
        let mut head = self.mem.position(Position::DataHead).load(C_HEAD_LOAD);
        let tail = self.tail;
        if head.wrapping_sub(tail) < self.pace.min_bytes {
            for _ in 0..self.pace.spins {
                core::hint::spin_loop();
            }
            // (C) again: the later head is the one whose bytes are read.
            head = self.mem.position(Position::DataHead).load(C_HEAD_LOAD);
        }
        if head == tail {
            // Caught up: about to wait, so nothing read stays unreleased (deferred policy).
            self.release();
        }
        check_head(head, tail, self.mask)?;
        let end = in_place_end(tail, head, self.mask);
        Ok(Batch { consumer: self, head, pos: tail, end, stride: Stride::new() })
    }

    /// Read every available record, calling `f` on each, then release them by the consumer's
    /// [`TailPolicy`]: with [`ConsumerConfig::EVERY_BATCH`] one `data_tail` store at the end; with the
    /// default ([`TailPolicy::Deferred`]) the store waits until 4 KiB are read or the ring is
    /// found empty ([`Consumer::release`] stores it at once, e.g. before writing the tail back
    /// to a target through a probe). Returns the number of records read; stops at the first
    /// error (the records before it are still consumed).
    #[inline]
    pub fn for_each(&mut self, scratch: &mut [u8], mut f: impl FnMut(&RawRecord<'_>)) -> Result<usize, ReadError> {
        let mut batch = self.batch()?;
        let mut n = 0;
        while let Some(record) = batch.next(scratch) {
            f(&record?);
            n += 1;
        }
        Ok(n)
    }

    /// Bytes published and not yet consumed, or an error if the head is invalid.
    pub fn available(&self) -> Result<usize, ReadError> {
        let head = self.mem.position(Position::DataHead).load(LOCAL);
        check_head(head, self.tail, self.mask)
    }

    /// Give up on everything published (after an error, to resynchronise): move the tail to the
    /// current head and store it. Returns the bytes skipped, so the caller can account for them.
    ///
    /// A head that is not a multiple of 8 (garbage from a peer) is taken rounded down: the tail
    /// stays 8-aligned, as every record position is.
    pub fn skip_to_head(&mut self) -> usize {
        let head = self.mem.position(Position::DataHead).load(C_HEAD_LOAD) & !7;
        let skipped = head.wrapping_sub(self.tail);
        self.tail = head;
        self.released = head;
        self.mem.position(Position::DataTail).store(head, D_TAIL_STORE);
        skipped
    }

    /// Our tail (the free-running position of the next record to read).
    pub fn tail(&self) -> usize {
        self.tail
    }

    /// The memory this consumer reads.
    pub fn memory(&self) -> &M {
        &self.mem
    }
}

/// Records between the tail and the head loaded by [`Consumer::batch`]. Dropping the batch
/// stores the new tail once (D), or defers the store by the consumer's [`TailPolicy`].
pub struct Batch<'c, M: RingMemory, T: Trust> {
    consumer: &'c mut Consumer<M, T>,
    head: usize,
    pos: usize,
    /// The nearer of `head` and the end of the data area after `pos` (where offsets wrap to
    /// 0): a record whose header puts it inside `[pos, end)` is published and contiguous, so
    /// one compare admits it to the zero-copy fast path. Recomputed by the general path (of a
    /// trusted ring: an untrusted one has no fast path).
    end: usize,
    /// The next position of an in-place record, predicted over records of one size.
    stride: Stride,
}

/// Bytes published between `tail` and `head`, or why `head` cannot be a producer's: not a
/// multiple of 8, behind the tail, or more than the data size (`mask + 1`) ahead of it.
#[inline]
fn check_head(head: usize, tail: usize, mask: usize) -> Result<usize, ReadError> {
    let ahead = head.wrapping_sub(tail);
    if ahead > mask + 1 {
        return Err(if tail.wrapping_sub(head) <= mask + 1 {
            ReadError::HeadBehindTail { head, tail }
        } else {
            ReadError::HeadTooFarAhead { head, tail, data_size: mask + 1 }
        });
    }
    if head % 8 != 0 {
        return Err(ReadError::MisalignedHead { head });
    }
    Ok(ahead)
}

/// The end of what can be read in place from `pos`: `head`, or the end of the data area if
/// that comes first (`mask` is the data size - 1). Both free-running; `head - pos` is at most
/// the data size (checked by [`Consumer::batch`]).
fn in_place_end(pos: usize, head: usize, mask: usize) -> usize {
    let wrap = (pos | mask).wrapping_add(1);
    if head.wrapping_sub(pos) <= wrap.wrapping_sub(pos) {
        head
    } else {
        wrap
    }
}

impl<M: RingMemory, T: Trust> Batch<'_, M, T> {
    /// The next record, or `None` at the head. A record that wraps the end of the ring (or any
    /// record, for an untrusted ring) is copied into `scratch`; otherwise it is a view into the
    /// ring, valid until the batch is dropped.
    ///
    /// After an error the batch stays at the faulty record: calling again returns the same error.
    #[inline]
    pub fn next<'b>(&'b mut self, scratch: &'b mut [u8]) -> Option<Result<RawRecord<'b>, ReadError>> {
        if self.pos == self.head {
            return None;
        }
        Some(self.read_one(scratch))
    }

    /// The head this batch reads up to.
    pub fn head(&self) -> usize {
        self.head
    }

    /// Positions this batch predicted (tests only: `stride.rs`).
    #[cfg(test)]
    pub(crate) fn stride_predicted(&self) -> usize {
        self.stride.predicted()
    }

    /// Bytes left in this batch.
    pub fn remaining(&self) -> usize {
        self.head.wrapping_sub(self.pos)
    }

    /// The fast path's test for the record at `pos` of a trusted ring: a nonzero multiple of 8
    /// bytes ending inside `[pos, end)` (published, contiguous) is taken in place.
    #[inline(always)]
    fn in_place_ok(&self, header: Header) -> bool {
        let len = usize::from(header.size);
        // `len - 1 < end - pos` is `0 < len <= end - pos`.
        len % 8 == 0 && len.wrapping_sub(1) < self.end.wrapping_sub(self.pos)
    }

    /// The fast path of a trusted ring: a header of a nonzero multiple of 8 bytes that ends
    /// inside `[pos, end)` (published, contiguous) is one test, and the record a view. Anything
    /// else goes out of line to [`read_checked`]; every record of an untrusted ring takes it
    /// inline.
    #[inline]
    fn read_one<'b>(&'b mut self, scratch: &'b mut [u8]) -> Result<RawRecord<'b>, ReadError> {
        let c = &*self.consumer;
        let position = self.pos;
        if T::ZERO_COPY {
            let off = position & c.mask;
            let mut raw = [0u8; 8];
            // SAFETY: as in `read_checked`: `off` is 8-aligned and `off + 8 <= size`; the bytes
            // are published and unwritten until we release them (trusted protocol).
            unsafe { c.mem.read(Area::Data, off, &mut raw) };
            let header = Header::from_bytes(raw, Endian::NATIVE);
            if self.in_place_ok(header) {
                // SAFETY: [off, off+len) is inside the area (it ends at or before `end`, which is
                // at or before the area's end) and published (before `head`); it stays
                // unwritten until the batch, which this borrow outlives not, stores the tail.
                let bytes = unsafe { in_place(&c.mem, off, header.size, scratch)? };
                self.pos = self.stride.next(position, usize::from(header.size));
                return Ok(ring_record(header, bytes, position));
            }
        }
        let record = if T::ZERO_COPY {
            read_checked_cold(c, position, self.head, scratch)?
        } else {
            read_checked(c, position, self.head, scratch)?
        };
        self.pos = position.wrapping_add(usize::from(record.header.size));
        if T::ZERO_COPY {
            self.end = in_place_end(self.pos, self.head, c.mask);
        }
        Ok(record)
    }
}

impl<M: RingMemory> Batch<'_, M, Trusted> {
    /// The next record as one or two views into the ring ([`SplitRecord`]), or `None` at the
    /// head: [`next`](Batch::next) without the copy of a record that wraps the ring's end, and
    /// with every check of `next`. Only a memory that lends no views (loom's) copies the record
    /// into `scratch` (`second` then empty). After an error the batch stays at the faulty
    /// record: calling again returns the same error.
    #[inline]
    pub fn next_split<'b>(&'b mut self, scratch: &'b mut [u8]) -> Option<Result<SplitRecord<'b>, ReadError>> {
        if self.pos == self.head {
            return None;
        }
        Some(self.split_one(scratch))
    }

    #[inline]
    fn split_one<'b>(&'b mut self, scratch: &'b mut [u8]) -> Result<SplitRecord<'b>, ReadError> {
        let c = &*self.consumer;
        let (position, size_total) = (self.pos, c.mask + 1);
        let off = position & c.mask;
        let mut raw = [0u8; 8];
        // SAFETY: as in `read_checked`: `off` is 8-aligned so `off + 8 <= size`; the bytes are
        // published (below head) and unwritten until we release them (trusted protocol).
        unsafe { c.mem.read(Area::Data, off, &mut raw) };
        let header = Header::from_bytes(raw, Endian::NATIVE);
        if self.in_place_ok(header) {
            // SAFETY: as in `read_one`: inside the area, published, unwritten until the tail.
            let first = unsafe { in_place(&c.mem, off, header.size, scratch)? };
            self.pos = self.stride.next(position, usize::from(header.size));
            return Ok(SplitRecord { header, first, second: &[], offset: position as u64 });
        }
        let len = check_size(header.size, position, self.head.wrapping_sub(position))?;
        let first_len = len.min(size_total - off);
        // SAFETY: [off, off + first_len) and [0, len - first_len) are inside the area (the first
        // ends at or before its end, the second is shorter than the record), published (within
        // the head) and unwritten until the batch, which these borrows outlive not, stores the tail.
        let views = unsafe { (c.mem.view(Area::Data, off, first_len), c.mem.view(Area::Data, 0, len - first_len)) };
        let (first, second): (&'b [u8], &'b [u8]) = match views {
            (Some(first), Some(second)) => (first, second),
            _ => {
                let dst = scratch_for(scratch, header.size)?;
                // SAFETY: the same two ranges, copied instead of viewed.
                unsafe {
                    c.mem.read(Area::Data, off, &mut dst[..first_len]);
                    c.mem.read(Area::Data, 0, &mut dst[first_len..]);
                }
                (dst, &[])
            }
        };
        self.pos = position.wrapping_add(len);
        self.end = in_place_end(self.pos, self.head, c.mask);
        Ok(SplitRecord { header, first, second, offset: position as u64 })
    }
}

/// [`read_checked`] out of line, off a trusted ring's fast path: the hot loop keeps its
/// registers (an inlined slow path with its copies made the compiler spill the position).
#[cold]
#[inline(never)]
fn read_checked_cold<'b, M: RingMemory, T: Trust>(
    c: &'b Consumer<M, T>,
    position: usize,
    head: usize,
    scratch: &'b mut [u8],
) -> Result<RawRecord<'b>, ReadError> {
    read_checked(c, position, head, scratch)
}

/// The record at `position` (before `head`, which [`Consumer::batch`] checked), with every check
/// and its typed error; a record that wraps the end of the ring, and every record of an
/// untrusted ring, is copied into `scratch`. The caller advances past it by its header's size.
#[inline]
fn read_checked<'b, M: RingMemory, T: Trust>(
    c: &'b Consumer<M, T>,
    position: usize,
    head: usize,
    scratch: &'b mut [u8],
) -> Result<RawRecord<'b>, ReadError> {
    let mem = &c.mem;
    let size_total = c.mask + 1;
    let available = head.wrapping_sub(position);
    let off = position & c.mask;
    // Records are 8-aligned, so the header never straddles the end of the ring.
    let mut raw = [0u8; 8];
    if T::ZERO_COPY {
        // SAFETY: off is 8-aligned (positions advance by multiples of 8) so off + 8 <= size;
        // the bytes are published (below head, checked at batch()) and the producer does not
        // write them until we release the tail (trusted protocol).
        unsafe { mem.read(Area::Data, off, &mut raw) };
    } else if !mem.load_words(Area::Data, off, &mut raw) {
        // `off` is aligned and in bounds (our own arithmetic), so the memory itself failed.
        return Err(ReadError::LoadFailed { position, len: 8 });
    }
    let header = Header::from_bytes(raw, Endian::NATIVE);
    let size = header.size;
    let len = check_size(size, position, available)?;
    let contiguous = off + len <= size_total;
    let bytes: &'b [u8] = if T::ZERO_COPY && contiguous {
        // SAFETY: [off, off+len) is inside the area (contiguous) and published; it stays
        // unwritten until the batch, which this borrow outlives not, stores the tail.
        unsafe { in_place(mem, off, size, scratch)? }
    } else {
        let dst = scratch_for(scratch, size)?;
        let first = len.min(size_total - off);
        if T::ZERO_COPY {
            // SAFETY: [off, off+first) and [0, len-first) are inside the area, published and
            // unwritten until we release them (trusted protocol).
            unsafe {
                mem.read(Area::Data, off, &mut dst[..first]);
                mem.read(Area::Data, 0, &mut dst[first..]);
            }
        } else {
            // Copy-then-validate: the header we checked goes into the copy; the body is read
            // with atomic word loads; nothing is read from the ring twice.
            dst[..8].copy_from_slice(&raw);
            let ok = mem.load_words(Area::Data, off + 8, &mut dst[8..first])
                && mem.load_words(Area::Data, 0, &mut dst[first..]);
            if !ok {
                // The ranges are aligned and in bounds, so the memory itself failed: a stale
                // copy must not pass for the record.
                return Err(ReadError::LoadFailed { position, len });
            }
        }
        dst
    };
    Ok(ring_record(header, bytes, position))
}

/// A header's `size` checked against the `available` bytes published from `position`: at
/// least 8, a multiple of 8, and within them. Returns it as a length.
#[inline]
fn check_size(size: u16, position: usize, available: usize) -> Result<usize, ReadError> {
    let len = usize::from(size);
    if len == 0 {
        return Err(ReadError::ZeroSize { position });
    }
    if len % 8 != 0 {
        return Err(ReadError::MisalignedSize { position, size });
    }
    if len > available {
        return Err(ReadError::SizeBeyondHead { position, size, available });
    }
    Ok(len)
}

/// A trusted ring's record of `size` bytes at `off`, in place: a view into the ring, or, from a
/// memory that lends no views (loom's), a copy in `scratch`.
///
/// # Safety
/// `[off, off + size)` is inside the data area, published, and unwritten by the producer while
/// the returned bytes are borrowed.
#[inline(always)]
unsafe fn in_place<'b, M: RingMemory>(
    mem: &'b M,
    off: usize,
    size: u16,
    scratch: &'b mut [u8],
) -> Result<&'b [u8], ReadError> {
    // SAFETY: the caller's contract.
    match unsafe { mem.view(Area::Data, off, usize::from(size)) } {
        Some(view) => Ok(view),
        None => {
            let dst = scratch_for(scratch, size)?;
            // SAFETY: the same range, copied instead of viewed.
            unsafe { mem.read(Area::Data, off, dst) };
            Ok(dst)
        }
    }
}

fn scratch_for(scratch: &mut [u8], size: u16) -> Result<&mut [u8], ReadError> {
    let len = scratch.len();
    scratch.get_mut(..usize::from(size)).ok_or(ReadError::ScratchTooSmall { size, scratch: len })
}

impl<M: RingMemory, T: Trust> Drop for Consumer<M, T> {
    /// A deferred tail is stored: what was read is released, and a consumer made later over
    /// the same ring starts after it.
    fn drop(&mut self) {
        self.release();
    }
}

impl<M: RingMemory, T: Trust> Drop for Batch<'_, M, T> {
    fn drop(&mut self) {
        let c = &mut *self.consumer;
        if self.pos != c.tail {
            c.tail = self.pos;
            if self.pos.wrapping_sub(c.released) >= c.defer {
                c.release();
            }
        }
    }
}
