//! The user-space side of a `BPF_MAP_TYPE_RINGBUF`: records in reservation order, stop at the
//! first BUSY one, skip the discarded ones, publish `consumer_pos`, and decide safely when to
//! sleep (libbpf's `ringbuf_process_ring`, with every check of the hostile-peer checklist).
//!
//! ```text
//! let mut batch = consumer.batch()?;        // producer_pos loaded once (R5), validated
//! while let Some(record) = batch.next(&mut scratch) {
//!     let record = record?;                  // header loaded once (R6), validated
//!     /* record.payload: a view, or a copy in scratch */
//! }
//! drop(batch);                               // consumer_pos stored (R7)
//! if consumer.prepare_to_sleep()? { /* wait for the wakeup */ }   // (R7), (R8), re-check
//! ```
//!
//! Per batch, `producer_pos` is loaded once and must be a multiple of 8, not behind the last
//! value seen, and at most the ring's size ahead of `consumer_pos`; per record, the header's
//! `len` word is loaded once into a local and the record must end at or before that
//! `producer_pos` (and, if asked, carry the `pg_off` the kernel writes). A bad value is a
//! [`RingbufError`] and the batch stays before it: nothing past it is consumed, and no call
//! loops. A batch takes at most `size / 8` steps (each record moves the position by at least 8
//! bytes, never past the batch's `producer_pos`).

use core::ptr::NonNull;
// The header words of an area read in place are the memory's own atomics at those addresses
// (`RingbufMemory::data_area`); under loom no memory lends its area, so none is reached this way.
use core::sync::atomic::AtomicU32;

use super::abi::{pg_off, record_len, BUSY_BIT, DISCARD_BIT, HEADER_SIZE};
use super::error::RingbufError;
use super::memory::{view, RingbufMemory};
use crate::fences::{fence, R5_RB_PRODUCER_LOAD, R6_RB_HEADER_LOAD, R7_RB_CONSUMER_STORE, R8_RB_SLEEP_FENCE, RB_ONCE};
use crate::stride::{opaque, PREDICT_AFTER};

/// When the consumer stores `consumer_pos`, freeing what it read for the producers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Publish {
    /// Once, when a batch ends (one store, and one transfer of the consumer page's line, per
    /// batch).
    #[default]
    PerBatch,
    /// After every record, as libbpf does: producers get space back sooner, at a store per
    /// record.
    PerRecord,
    /// Once, when a batch ends, up to the start of the batch's last record, not past it. The
    /// kernel wakes the reader when it commits a record at the published position (the reader
    /// had caught up: `bpf_ringbuf_commit`'s adaptive wakeup), and that wakeup is an irq_work
    /// (a self-IPI) on the producing CPU, costly in a guest; a reader that will read
    /// again without waiting (a busy stream read per interval, or producing and reading in
    /// turn) wants none. The last record's space stays held until the next batch, and
    /// [`RingbufConsumer::prepare_to_sleep`] and [`RingbufConsumer::release`] publish
    /// everything read, so a reader that waits is woken as before. For a reader that waits by
    /// itself (its own epoll on the map), release before waiting: the ring reads as not empty
    /// while a record is held.
    HoldLast,
}

/// What a trusted consumer hands out for a sample that wraps the end of a singly mapped area
/// (the kernel's double mapping never has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wrapped {
    /// Copy it into the caller's scratch: one slice.
    #[default]
    Copy,
    /// Hand out its two pieces, zero-copy ([`Payload::Two`]).
    Split,
}

/// How a [`RingbufConsumer`] publishes and validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// When `consumer_pos` is stored.
    pub publish: Publish,
    /// A wrapped sample of a singly mapped area: copied or split.
    pub wrapped: Wrapped,
    /// Check that each committed or discarded header's `pg_off` is what the kernel (and
    /// [`RingbufProducer`](super::RingbufProducer)) writes for the memory's page size
    /// ([`RingbufMemory::page_size`]); a mismatch is [`RingbufError::BadPageOffset`]. Off for rings
    /// whose producer writes no `pg_off`.
    pub check_pg_off: bool,
    /// After this many polls in a row that found the same record BUSY, report
    /// [`RingbufError::BusyTooLong`] (then count again). `None`: wait forever, as libbpf does.
    pub busy_limit: Option<u32>,
}

impl Default for Config {
    /// Publish per batch, copy wrapped samples, check `pg_off`, no BUSY limit.
    fn default() -> Self {
        Config { publish: Publish::PerBatch, wrapped: Wrapped::Copy, check_pg_off: true, busy_limit: None }
    }
}

/// A sample's bytes: one slice, or (a zero-copy sample that wraps a singly mapped area, with
/// [`Wrapped::Split`]) two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    /// Contiguous bytes: a view into the ring or a copy in the scratch.
    One(&'a [u8]),
    /// The bytes up to the end of the area, then those from its start.
    Two(&'a [u8], &'a [u8]),
}

impl<'a> Payload<'a> {
    /// Bytes in all.
    pub fn len(&self) -> usize {
        match self {
            Payload::One(a) => a.len(),
            Payload::Two(a, b) => a.len() + b.len(),
        }
    }

    /// Whether the sample is empty (a zero-size record).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The two pieces (the second empty for [`Payload::One`]).
    pub fn parts(&self) -> (&'a [u8], &'a [u8]) {
        match *self {
            Payload::One(a) => (a, &[]),
            Payload::Two(a, b) => (a, b),
        }
    }

    /// Copy the bytes to the start of `dst`; returns how many (all of them if `dst` is large
    /// enough).
    pub fn copy_to(&self, dst: &mut [u8]) -> usize {
        let (a, b) = self.parts();
        let n = a.len().min(dst.len());
        dst[..n].copy_from_slice(&a[..n]);
        let m = b.len().min(dst.len() - n);
        dst[n..n + m].copy_from_slice(&b[..m]);
        n + m
    }
}

/// One committed sample.
#[derive(Debug, Clone, Copy)]
pub struct RingbufRecord<'a> {
    /// Free-running position of the record's header.
    pub position: usize,
    /// The sample, as validated.
    pub payload: Payload<'a>,
}

/// The consumer side of a `BPF_MAP_TYPE_RINGBUF` (or of a ring written by
/// [`RingbufProducer`](super::RingbufProducer)).
pub struct RingbufConsumer<M: RingbufMemory> {
    mem: M,
    mask: usize,
    /// Zero-copy views allowed (the producer follows the protocol).
    trusted: bool,
    /// Everything before it is consumed.
    pos: usize,
    /// The last value stored to `consumer_pos`.
    published: usize,
    /// The start of the last record a batch reached (consumed, or its sample refused): what
    /// [`Publish::HoldLast`] publishes; never past `pos`.
    last: usize,
    /// The last `producer_pos` loaded and accepted.
    last_prod: usize,
    config: Config,
    /// A record found BUSY at the consumer's position, and how many polls found it so.
    busy: Option<(usize, u32)>,
    /// Discarded records skipped.
    discarded: u64,
    /// Whether [`for_each`](Self::for_each) reads samples in place ([`read_in_place`]): never
    /// unless the consumer is trusted, its memory lends its area, it publishes per batch (or
    /// holds the last record) and it does not check `pg_off`.
    in_place: InPlace,
    /// Samples `read_in_place` delivered (tests only: that loop changes no result, only speed).
    #[cfg(test)]
    read_in_place: usize,
    /// Of those, the records after which `read_in_place` took the next position from the
    /// stride (tests only, as above).
    #[cfg(test)]
    predicted: usize,
}

impl<M: RingbufMemory> RingbufConsumer<M> {
    /// A consumer that trusts the producer to follow the protocol (the kernel, or a perfring
    /// [`RingbufProducer`](super::RingbufProducer)): samples are views into the ring where the
    /// memory lends its area (a wrapped one as [`Config::wrapped`] says).
    ///
    /// # Safety
    /// The ring's producers never write bytes of a record between its commit and the consumer's
    /// release of it (`consumer_pos`), and nobody else stores `consumer_pos`. Otherwise a view
    /// could race a write. [`split`](super::split_ringbuf) is the safe way to get one.
    pub unsafe fn trusted(mem: M) -> Result<Self, RingbufError> {
        Self::make(mem, true)
    }

    /// A consumer that does not trust the producer: every sample is copied into the caller's
    /// scratch with atomic loads after its header was validated, and any content of the ring
    /// and its positions yields records or typed errors, never undefined behaviour, a panic or
    /// an endless loop.
    ///
    /// ```
    /// use perfring::bpf_ringbuf::{RingbufConsumer, RingbufMemory, ModelRingbuf, RingbufError, BUSY_BIT};
    /// use perfring::fences::LOCAL; // a hostile peer's stores: no protocol, no ordering
    ///
    /// let ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    /// let mut consumer = RingbufConsumer::untrusted(&ring).unwrap();
    /// let mut scratch = [0u8; 64];
    /// // A hostile producer publishes a record whose length runs past producer_pos.
    /// ring.len_word(0).store(100, LOCAL);
    /// ring.producer_pos().store(16, LOCAL);
    /// assert_eq!(
    ///     consumer.for_each(&mut scratch, |_| {}),
    ///     Err(RingbufError::RecordPastProducer { position: 0, size: 100, available: 16 })
    /// );
    /// // Or one that stays BUSY: nothing is read, nothing waits.
    /// ring.len_word(0).store(8 | BUSY_BIT, LOCAL);
    /// assert_eq!(consumer.for_each(&mut scratch, |_| {}), Ok(0));
    /// ```
    pub fn untrusted(mem: M) -> Result<Self, RingbufError> {
        Self::make(mem, false)
    }

    fn make(mem: M, trusted: bool) -> Result<Self, RingbufError> {
        let size = mem.size();
        super::memory::check_size(size)?;
        // Our own word: only a consumer stores it.
        let pos = mem.consumer_pos().load(RB_ONCE);
        if pos % 8 != 0 {
            return Err(RingbufError::MisalignedConsumerPos { consumer_pos: pos });
        }
        Ok(RingbufConsumer {
            mem,
            mask: size - 1,
            trusted,
            pos,
            published: pos,
            last: pos,
            last_prod: pos,
            config: Config::default(),
            busy: None,
            discarded: 0,
            in_place: InPlace::Never,
            #[cfg(test)]
            read_in_place: 0,
            #[cfg(test)]
            predicted: 0,
        })
    }

    /// Change how this consumer publishes and validates.
    pub fn configure(&mut self, config: Config) {
        self.config = config;
        let in_place = self.trusted
            && self.mem.data_area().is_some()
            && config.publish != Publish::PerRecord
            && !config.check_pg_off;
        self.in_place = match (in_place, self.mem.double_mapped()) {
            (false, _) => InPlace::Never,
            (true, true) => InPlace::Anywhere,
            (true, false) => InPlace::BeforeTheEnd,
        };
    }

    /// Load `producer_pos` once (R5), validate it, and read the records up to it.
    pub fn batch(&mut self) -> Result<RingbufBatch<'_, M>, RingbufError> {
        let prod = self.load_producer()?;
        let start = self.pos;
        Ok(RingbufBatch { consumer: self, prod, start })
    }

    /// Read one batch, calling `f` for each sample; returns how many. Stops at the first error
    /// (the records before it are consumed).
    ///
    /// The fast way to read a trusted ring whose memory lends its area (the kernel's double
    /// mapping) when the consumer publishes per batch or holds the last record and does not
    /// check `pg_off`: its committed samples are then read in place by a loop that keeps its
    /// position in a register (29 instructions a record in `make bench-instructions`, 42 by
    /// [`RingbufBatch::next`]), with the same checks of lengths and positions; any other record
    /// goes through `next`.
    pub fn for_each(
        &mut self,
        scratch: &mut [u8],
        mut f: impl FnMut(&RingbufRecord<'_>),
    ) -> Result<usize, RingbufError> {
        let mut batch = self.batch()?;
        let c = &mut *batch.consumer;
        let mut n;
        // `in_place` is not `Never` only for a trusted consumer whose memory lends its area, and
        // `Anywhere` only where it is double-mapped (`configure`); `batch.prod` is validated (at
        // most the area's size ahead of `c.pos`): `read_in_place`'s premises.
        let (state, prod) = ((c.pos, c.last), batch.prod);
        let _predicted;
        (c.pos, c.last, n, _predicted) = match c.in_place {
            InPlace::Never => (c.pos, c.last, 0, 0),
            InPlace::BeforeTheEnd => read_in_place::<true, M>(&c.mem, c.mask, state, prod, &mut f),
            InPlace::Anywhere => read_in_place::<false, M>(&c.mem, c.mask, state, prod, &mut f),
        };
        #[cfg(test)]
        {
            c.read_in_place += n;
            c.predicted += _predicted;
        }
        // What `read_in_place` left (a BUSY, discarded, wrapped or bad record), and the rest.
        while let Some(record) = batch.next(scratch) {
            f(&record?);
            n += 1;
        }
        Ok(n)
    }

    /// Before sleeping until a wakeup: publish `consumer_pos` (R7), fence (R8), and check
    /// again. `Ok(true)`: nothing is committed at the consumer's position (the ring is empty,
    /// or its next record is BUSY), and with the adaptive notification the commit of the next
    /// record there wakes this consumer: sleep. `Ok(false)`: a record is there; read again.
    ///
    /// The fence is what aya's reader lacked (7277a57e): without it, the re-check can miss a
    /// commit whose producer, in turn, saw the old `consumer_pos` and decided not to wake.
    pub fn prepare_to_sleep(&mut self) -> Result<bool, RingbufError> {
        self.release();
        fence(R8_RB_SLEEP_FENCE);
        let prod = self.load_producer()?;
        if prod == self.pos {
            return Ok(true);
        }
        let len = self.mem.len_word(self.pos & self.mask).load(R6_RB_HEADER_LOAD);
        Ok(len & BUSY_BIT != 0)
    }

    /// Give up on everything reserved so far (to resynchronise after an error, or to pass a
    /// record BUSY too long): move the position to `producer_pos` (rounded down to 8) and
    /// publish it. Returns the bytes skipped, so the caller can account for them.
    pub fn skip_to_producer(&mut self) -> usize {
        let prod = self.mem.producer_pos().load(R5_RB_PRODUCER_LOAD) & !7;
        let skipped = prod.wrapping_sub(self.pos);
        self.pos = prod;
        self.last_prod = prod;
        self.busy = None;
        self.release();
        skipped
    }

    /// Bytes reserved and not yet consumed (committed, discarded or BUSY), or why
    /// `producer_pos` cannot be a producer's.
    pub fn available(&self) -> Result<usize, RingbufError> {
        let prod = self.mem.producer_pos().load(RB_ONCE);
        self.check_producer(prod)
    }

    /// The free-running position of the next record to read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Discarded records this consumer has skipped.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// Samples [`for_each`](Self::for_each) read in place (tests only).
    #[cfg(test)]
    pub(super) fn read_in_place_count(&self) -> usize {
        self.read_in_place
    }

    /// Records after which [`for_each`](Self::for_each) predicted the next position (tests only).
    #[cfg(test)]
    pub(super) fn predicted_count(&self) -> usize {
        self.predicted
    }

    /// The memory this consumer reads.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// Publish everything read as `consumer_pos` (R7), the record [`Publish::HoldLast`] holds
    /// included; nothing if it is already published.
    pub fn release(&mut self) {
        self.publish_at(self.pos);
    }

    /// Store `consumer_pos` = `at` if it differs from the last value stored (R7).
    fn publish_at(&mut self, at: usize) {
        if self.published != at {
            self.published = at;
            self.mem.consumer_pos().store(at, R7_RB_CONSUMER_STORE);
        }
    }

    fn load_producer(&mut self) -> Result<usize, RingbufError> {
        let prod = self.mem.producer_pos().load(R5_RB_PRODUCER_LOAD);
        self.check_producer(prod)?;
        self.last_prod = prod;
        Ok(prod)
    }

    /// Bytes between our position and `prod`, or why `prod` cannot be a producer's.
    fn check_producer(&self, prod: usize) -> Result<usize, RingbufError> {
        let size = self.mask + 1;
        if prod % 8 != 0 {
            return Err(RingbufError::MisalignedProducerPos { producer_pos: prod });
        }
        // Behind the last value seen (in the wrapping sense: within half the counter range).
        if self.last_prod.wrapping_sub(prod).wrapping_sub(1) < usize::MAX / 2 {
            return Err(RingbufError::ProducerPosBackwards { producer_pos: prod, last_seen: self.last_prod });
        }
        let ahead = prod.wrapping_sub(self.pos);
        if ahead > size {
            return Err(RingbufError::ProducerPosTooFarAhead { producer_pos: prod, consumer_pos: self.pos, size });
        }
        Ok(ahead)
    }
}

/// The `size`-byte sample of the record at `position`, validated: a view into `mem` (trusted,
/// where the memory lends its area) or a copy in `scratch`.
fn sample<'b, M: RingbufMemory>(
    mem: &'b M,
    trusted: bool,
    wrapped: Wrapped,
    position: usize,
    size: usize,
    scratch: &'b mut [u8],
) -> Result<Payload<'b>, RingbufError> {
    let ring = mem.size();
    let off = position.wrapping_add(HEADER_SIZE) & (ring - 1);
    if !trusted {
        // Copy-then-use, with 32-bit atomic loads: the size was validated on our copy of the
        // header, and the bytes are never read from the ring again.
        let padded = (size + 3) & !3;
        let scratch_len = scratch.len();
        let dst =
            scratch.get_mut(..padded).ok_or(RingbufError::ScratchTooSmall { needed: padded, scratch: scratch_len })?;
        let first = padded.min(ring - off);
        let (a, b) = dst.split_at_mut(first);
        if !(mem.load_words(off, a) && mem.load_words(0, b)) {
            return Err(RingbufError::LoadFailed { position });
        }
        return Ok(Payload::One(&dst[..size]));
    }
    if mem.double_mapped() || off + size <= ring {
        // SAFETY: [off, off + size) is inside the area (or its double mapping), committed, and
        // unwritten until the consumer publishes a position past it, which needs this borrow
        // to end (trusted protocol).
        if let Some(view) = unsafe { view(mem, off, size) } {
            return Ok(Payload::One(view));
        }
    } else if wrapped == Wrapped::Split {
        let first = ring - off;
        // SAFETY: as above, for the two pieces, each inside the area.
        if let (Some(a), Some(b)) = unsafe { (view(mem, off, first), view(mem, 0, size - first)) } {
            return Ok(Payload::Two(a, b));
        }
    }
    let scratch_len = scratch.len();
    let dst = scratch.get_mut(..size).ok_or(RingbufError::ScratchTooSmall { needed: size, scratch: scratch_len })?;
    let first = size.min(ring - off);
    // SAFETY: the pieces are inside the area, committed and unwritten while we read them.
    unsafe {
        mem.read(off, &mut dst[..first]);
        mem.read(0, &mut dst[first..]);
    }
    Ok(Payload::One(dst))
}

/// How far ahead of the record it reads [`read_in_place`] asks for the ring's memory, where
/// the producer has reserved that far: 512 bytes, two records of the kernel benchmark's
/// 256-byte payload, so that the next headers' loads find their lines in the first-level cache
/// instead of each waiting for the one before it (records of a line or more: every header a
/// line of its own). Tried: 256 and 1,024 helped less, a distance of two records' lengths
/// less too (`BENCHMARKS.md`, "Reading the BPF ring buffer").
const PREFETCH_AHEAD: usize = 512;

/// Ask the CPU for the line [`PREFETCH_AHEAD`] bytes after offset `off` of `area` (`mask` its
/// size less one), if the producer has reserved that far (`reserved`: bytes from `off` to
/// `producer_pos`; never past it, where it writes now: the hint would take the line from it).
/// A hint that reads nothing and cannot fault, whatever the address; nothing where the
/// instruction is not stable in `core`.
#[inline(always)]
fn prefetch_ahead(area: NonNull<u8>, off: usize, mask: usize, reserved: usize) {
    if reserved > PREFETCH_AHEAD {
        let line = area.as_ptr().wrapping_add((off + PREFETCH_AHEAD) & mask);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: PREFETCHT0 is a hint: it neither reads memory architecturally nor faults.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(line.cast())
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = line;
    }
}

/// Where [`RingbufConsumer::for_each`] reads samples in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InPlace {
    /// Nowhere: every record goes through [`RingbufBatch::next`].
    Never,
    /// A sample that ends before the end of a singly mapped area.
    BeforeTheEnd,
    /// Any sample of a double-mapped area (where one that wraps the end is one piece).
    Anywhere,
}

/// [`RingbufConsumer::for_each`]'s loop for its common records: committed, before `prod`, and
/// (if `SINGLE`) ending before the end of the singly mapped area, viewed in place, from `pos`
/// on; stops before the first other one (left to [`RingbufBatch::next`], which decides it
/// again). Takes and returns the consumer's position and the start of the last record read,
/// and returns how many were read, and (in tests: 0 otherwise) after how many of them the next
/// position was predicted. Its state is in locals and the data area a pointer (the
/// memory's [`data_area`](RingbufMemory::data_area)), so that the compiler keeps them in
/// registers around `f`: the chain from one header's load to the next runs through no load of
/// the consumer's or the memory's fields (`next`'s does, which cost about 1 ns a record).
///
/// For [`RingbufConsumer::for_each`] alone, which calls it for a trusted consumer (whose
/// producers never write a committed record before it is consumed), over a memory that is
/// double-mapped unless `SINGLE` (`InPlace`, set by `configure`), with a `prod` validated to be
/// at most the area's size ahead of `pos`, the memory borrowed while it runs: the unsafe
/// blocks below rest on these.
#[inline(always)]
fn read_in_place<const SINGLE: bool, M: RingbufMemory>(
    mem: &M,
    mask: usize,
    (mut pos, mut last): (usize, usize),
    prod: usize,
    f: &mut impl FnMut(&RingbufRecord<'_>),
) -> (usize, usize, usize, usize) {
    let Some(area) = mem.data_area() else { return (pos, last, 0, 0) };
    let (mut n, mut predicted) = (0, 0);
    // The record at `pos`, given to `f`: its length (header and sample, rounded), or `None`
    // for a record left to `next` (or at `prod`).
    let mut read = |pos: usize| -> Option<usize> {
        if pos == prod {
            return None;
        }
        let off = pos & mask;
        // SAFETY: `off` is an 8-aligned offset below the area's size, so the word is inside the
        // area and aligned, and it is the atomic `len_word(off)` returns (`data_area`'s
        // contract: 8-aligned, the header words at these addresses).
        let len = unsafe { AtomicU32::from_ptr(area.as_ptr().add(off).cast()) }.load(R6_RB_HEADER_LOAD);
        if len & (BUSY_BIT | DISCARD_BIT) != 0 {
            return None;
        }
        // No overflow below, on 32 bits too: size < 2^30, off < 2^31.
        let size = len as usize;
        let total = record_len(size)?;
        let reserved = prod.wrapping_sub(pos);
        // Double-mapped, the record's end needs no test of its own: off + 8 + size <= off +
        // total <= off + reserved < 2 * area, inside the second mapping.
        if total > reserved || (SINGLE && off + HEADER_SIZE + size > mask + 1) {
            return None;
        }
        // SAFETY: [off + 8, off + 8 + size) is inside the area or its double mapping (above),
        // readable through `area` while the memory is borrowed (`data_area`'s contract),
        // committed (BUSY clear in the header loaded with R6) and before `producer_pos`, and
        // unwritten until the consumer publishes a position past it, which happens after the
        // batch, when `f` (which cannot keep the view) has returned (trusted protocol).
        let view = unsafe { core::slice::from_raw_parts(area.as_ptr().add(off + HEADER_SIZE), size) };
        prefetch_ahead(area, off, mask, reserved);
        f(&RingbufRecord { position: pos, payload: Payload::One(view) });
        Some(total)
    };
    // The last record's length, and how many before it were as long.
    let (mut stride, mut same) = (0, 0);
    // At most size / 8 records: each moves `pos` by at least 8, never past `prod`.
    loop {
        // The next position is the last one plus the record's length, from its header: each
        // header's load waits for the one before.
        while same < PREDICT_AFTER {
            let Some(total) = read(pos) else { return (pos, last, n, predicted) };
            (last, n) = (pos, n + 1);
            same = if total == stride { same + 1 } else { 0 };
            stride = total;
            pos = pos.wrapping_add(total);
        }
        // After `PREDICT_AFTER` records of one length (a program's records mostly are: one
        // struct), the next position is predicted: the last one plus `stride`, which does not
        // wait for the header's load, so that the CPU, predicting the branch below, loads the
        // next header while this one is on its way. The first record of another length goes
        // back to the loop above, where lengths that vary cost no mispredicted branch.
        // (`opaque` keeps the compiler from using `total` for `stride`, equal where the branch
        // is not taken, which would make the next load wait for this one again.)
        loop {
            let Some(total) = read(pos) else { return (pos, last, n, predicted) };
            (last, n) = (pos, n + 1);
            if total != opaque(stride) {
                (stride, same) = (total, 0);
                pos = pos.wrapping_add(total);
                break;
            }
            pos = pos.wrapping_add(stride);
            predicted += usize::from(cfg!(test));
        }
    }
}

/// The records up to the `producer_pos` loaded by [`RingbufConsumer::batch`]. Dropping the batch
/// publishes `consumer_pos` (R7), as [`Config::publish`] says.
pub struct RingbufBatch<'c, M: RingbufMemory> {
    consumer: &'c mut RingbufConsumer<M>,
    prod: usize,
    /// The consumer's position when the batch began.
    start: usize,
}

impl<M: RingbufMemory> RingbufBatch<'_, M> {
    /// The next committed sample, or `None` at `producer_pos` or at a BUSY record. Discarded
    /// records are skipped. A sample is a view into the ring (trusted consumer, memory that
    /// lends its area) or a copy in `scratch`.
    ///
    /// After an error the batch stays at the faulty record: calling again returns the same
    /// error.
    pub fn next<'b>(&'b mut self, scratch: &'b mut [u8]) -> Option<Result<RingbufRecord<'b>, RingbufError>> {
        let c: &'b mut RingbufConsumer<M> = &mut *self.consumer;
        // At most size / 8 iterations: each moves `pos` by at least 8, never past `prod`.
        loop {
            if c.config.publish == Publish::PerRecord {
                c.release();
            }
            let position = c.pos;
            if position == self.prod {
                return None;
            }
            let off = position & c.mask;
            let len = c.mem.len_word(off).load(R6_RB_HEADER_LOAD);
            if len & BUSY_BIT != 0 {
                let polls = match c.busy {
                    Some((at, n)) if at == position => n.saturating_add(1),
                    _ => 1,
                };
                c.busy = Some((position, polls));
                return match c.config.busy_limit {
                    Some(limit) if polls >= limit => {
                        c.busy = None;
                        Some(Err(RingbufError::BusyTooLong { position, polls }))
                    }
                    _ => None,
                };
            }
            let size = len & !DISCARD_BIT;
            let available = self.prod.wrapping_sub(position);
            let total = match record_len(size as usize) {
                Some(total) if total <= available => total,
                _ => return Some(Err(RingbufError::RecordPastProducer { position, size, available })),
            };
            if c.config.check_pg_off {
                // Ordered by (R6): the producer stored it before the header was committed.
                let found = c.mem.pg_off_word(off).load(RB_ONCE);
                let expected = pg_off(off, c.mem.page_size());
                if found != expected {
                    return Some(Err(RingbufError::BadPageOffset { position, pg_off: found, expected }));
                }
            }
            c.busy = None;
            c.last = position;
            if len & DISCARD_BIT != 0 {
                c.pos = position.wrapping_add(total);
                c.discarded += 1;
                continue;
            }
            let payload = sample(&c.mem, c.trusted, c.config.wrapped, position, size as usize, scratch);
            return Some(payload.map(|payload| {
                c.pos = position.wrapping_add(total);
                RingbufRecord { position, payload }
            }));
        }
    }
}

impl<M: RingbufMemory> core::fmt::Debug for RingbufConsumer<M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RingbufConsumer")
            .field("size", &(self.mask + 1))
            .field("trusted", &self.trusted)
            .field("position", &self.pos)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<M: RingbufMemory> core::fmt::Debug for RingbufBatch<'_, M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RingbufBatch").field("position", &self.consumer.pos).field("producer_pos", &self.prod).finish()
    }
}

impl<M: RingbufMemory> Drop for RingbufBatch<'_, M> {
    fn drop(&mut self) {
        let c = &mut *self.consumer;
        match c.config.publish {
            // Nothing read: what is held stays held.
            Publish::HoldLast if c.pos == self.start => {}
            Publish::HoldLast => c.publish_at(c.last),
            Publish::PerBatch | Publish::PerRecord => c.release(),
        }
    }
}

impl<M: RingbufMemory> Drop for RingbufConsumer<M> {
    /// Publish what is held ([`Publish::HoldLast`]): a reader of the ring after this one starts
    /// past everything this one read.
    fn drop(&mut self) {
        self.release();
    }
}
