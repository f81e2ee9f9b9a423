//! The kernel side of the ring: reserve (`output_begin`), write, publish (`output_end`).
//!
//! This is `kernel/events/ring_buffer.c` (`__perf_output_begin`, `perf_output_put_handle`,
//! `perf_output_copy`) with the current upstream ordering of `put_handle` (commit 1b038c6e05ff,
//! "Fix exposing a temporarily decreased data_head").
//!
//! # Nesting
//!
//! A producer belongs to one CPU. While a writer holds a [`Handle`], an interrupt (softirq,
//! hardirq, NMI) on the same CPU may start another writer on the same producer, which runs to its
//! end before the interrupted one resumes (LIFO). The `nest` counter makes only the outermost
//! writer publish `data_head`, so the consumer never sees a record that a nested or interrupted
//! writer is still filling, and never sees `data_head` go backwards. Records appear in
//! reservation order. The [`Hooks`] trait lets a test or a simulator run a nested writer at each
//! labelled [`PreemptPoint`]; in production the hooks are empty and compile to nothing.
//!
//! `Producer` is `!Sync`: two *threads* writing one producer would break the LIFO rule the nest
//! protocol relies on. To share it with real interrupt handlers on one CPU, see [`CpuLocal`].
//!
//! # Loss
//!
//! When a record does not fit (non-overwrite mode) or the ring is paused, it is dropped and
//! counted in `lost`; the next successful reservation first writes a `PERF_RECORD_LOST` with the
//! count and resets it (exchange), exactly like the kernel. The law
//! `produced = consumed + Σ LOST.lost + lost_pending()` always holds.
//!
//! # Fast path
//!
//! A producer runs where it may distort what it measures (an NMI, in the kernel), so the common
//! case is kept short (`make bench-instructions` counts it; `BENCHMARKS.md` breaks it down):
//! two tests send everything rare out of line: `paused`, and one signed compare of the record's
//! end against `fast_end`, the nearer of the space end by the last tail loaded (so `data_tail`
//! is loaded (A) only when the ring looks full) and the wakeup stamp (kept with the watermark
//! added: a record that crosses the watermark takes the general path, which applies the rule).
//! A nonzero `lost` word (a LOST record to write, or a mode bit: backward or overwrite) keeps
//! `fast_end` closed, so the forward read-write path needs no mode or loss test; the general
//! path refreshes it after each reservation. The handle keeps the kernel's `handle->addr` as a
//! data-area offset, so each write is one compare against the end of the area and a copy that
//! compiles to moves when its length is known, and both paths hand the caller its `size` bytes
//! to fill, so a fixed-size record leaves nothing to check at the end. An overwrite producer's
//! outermost writer marks `nest`, so publishing needs no mode test either. The wrap, zero-fill
//! and tail-reload paths are cold functions that cannot unwind, so an open handle stays in
//! registers.

use core::cell::Cell;
use core::marker::PhantomData;

use crate::fences::{fence, A_TAIL_LOAD, B_HEAD_STORE, LOCAL, S1_SEQ_WRITE_BEGIN, S2_SEQ_WRITE_END};
use crate::loom::{compiler_barrier, local_compare_exchange, LocalU32, LocalUsize};
use crate::memory::{check_area_size, Area, LayoutError, Position, RingMemory, MIN_DATA_SIZE};
use crate::record::{Endian, Header, LostRecord, SampleId, MAX_RECORD_SIZE};

/// How a producer writes: direction and overwrite are two independent settings, as in the kernel
/// (`attr.write_backward`, and whether the mapping is writable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Config {
    /// Write records at decreasing addresses (`attr.write_backward`): each reservation is
    /// `head - size`, and `data_head` publishes the decreasing counter.
    pub backward: bool,
    /// Never read `data_tail`; overwrite the oldest data (a read-only mapping,
    /// `rb->overwrite`). Otherwise the producer respects the consumer and drops (counts) records
    /// that do not fit.
    pub overwrite: bool,
    /// Byte watermark for wakeups (`attr.wakeup_watermark` with `attr.watermark`); 0 means the
    /// kernel's default of half the data area. Values above the data size are clamped to it.
    pub watermark: usize,
    /// Wake every this many samples (`attr.wakeup_events` without `attr.watermark`), counted by
    /// [`Handle::count_sample`]; 0 turns event-count wakeups off.
    pub wakeup_events: u32,
}

/// Who is writing now: the event's `id` and its `sample_id` trailer, used for the
/// `PERF_RECORD_LOST` a reservation may have to prepend (the kernel uses the *current* event's
/// id and context, not the one whose records were lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventIdentity {
    /// `event->id` of the writing event.
    pub id: u64,
    /// `Some((sample_type, values))` when the event has `attr.sample_id_all`: the trailer's
    /// layout and values (pid/tid, time *now*, ids, cpu).
    pub sample_id: Option<(u64, SampleId)>,
}

impl EventIdentity {
    /// A writer with id 0 and no `sample_id` trailer.
    pub const ANONYMOUS: EventIdentity = EventIdentity { id: 0, sample_id: None };
}

/// Why `output_begin` returned no handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReserveError {
    /// The size is not a multiple of 8 or smaller than a header; nothing was counted (the
    /// kernel WARNs on such sizes: it is a caller bug).
    BadSize {
        /// The size asked for.
        size: usize,
    },
    /// The size is above [`MAX_RECORD_SIZE`] (65528, the largest 8-aligned u16); nothing was
    /// counted.
    TooLarge {
        /// The size asked for.
        size: usize,
    },
    /// No room (non-overwrite mode): the record was dropped and counted in `lost`.
    NoSpace,
    /// The ring is paused: the record was dropped and counted in `lost`.
    Paused,
    /// The record given to [`Producer::output`] or [`BatchWriter::output`] is not one record:
    /// its header's `size` is not its length. Nothing was written or counted (written, it
    /// would make the consumer read the following bytes as the next record): build the header
    /// with `size` = the record's length.
    HeaderSize {
        /// `size` in the record's header (native byte order).
        header: u16,
        /// The record's length in bytes.
        len: usize,
    },
}

impl core::fmt::Display for ReserveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ReserveError::BadSize { size } => write!(f, "record size {size} is not a positive multiple of 8"),
            ReserveError::TooLarge { size } => write!(f, "record size {size} exceeds {MAX_RECORD_SIZE}"),
            ReserveError::NoSpace => f.write_str("no space in the ring: record dropped and counted as lost"),
            ReserveError::Paused => f.write_str("ring paused: record dropped and counted as lost"),
            ReserveError::HeaderSize { header, len } => write!(
                f,
                "the record's header says {header} bytes but the record has {len}: set header.size to its length"
            ),
        }
    }
}

impl core::error::Error for ReserveError {}

/// Why a [`Handle`] write was refused (nothing was written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteError {
    /// Bytes the write asked for.
    pub requested: usize,
    /// Bytes left in the reservation.
    pub remaining: usize,
}

impl core::fmt::Display for WriteError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "write of {} bytes does not fit: {} left in the reservation", self.requested, self.remaining)
    }
}

impl core::error::Error for WriteError {}

/// A labelled step of the producer at which an interrupt may run a nested writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PreemptPoint {
    /// `perf_output_get_handle`: right after `nest` was incremented.
    AfterNestIncrement,
    /// The reservation loop: after `rb->head` (and `data_tail`) were loaded, before the
    /// compare-exchange.
    AfterHeadLoad,
    /// After the successful compare-exchange that reserved the space.
    AfterReserve,
    /// Before each payload write or skip of a [`Handle`].
    InPayload,
    /// `put_handle` P1: after loading `rb->head`, before storing `data_head`.
    PutAfterHeadLoad,
    /// `put_handle` P3: after storing `data_head`.
    AfterHeadStore,
    /// `put_handle` P4: after `nest` was decremented (set to 0).
    AfterNestDecrement,
    /// `put_handle` P5: just before re-checking `rb->head`.
    BeforeRecheck,
    /// The general path, after a reservation, or a batch lowering the fast path's limit to
    /// where it must publish: the limit is computed and not yet stored (a nested writer that
    /// counts a loss here must still close the fast path).
    FastPathRefresh,
}

impl PreemptPoint {
    /// Every point, in the order a writer passes them.
    pub const ALL: [PreemptPoint; 9] = [
        PreemptPoint::AfterNestIncrement,
        PreemptPoint::AfterHeadLoad,
        PreemptPoint::AfterReserve,
        PreemptPoint::InPayload,
        PreemptPoint::PutAfterHeadLoad,
        PreemptPoint::AfterHeadStore,
        PreemptPoint::AfterNestDecrement,
        PreemptPoint::BeforeRecheck,
        PreemptPoint::FastPathRefresh,
    ];
}

/// Callbacks from inside the producer. Every method has an empty default that compiles to
/// nothing, so `NoHooks` costs nothing (`make bench-instructions` measures it).
pub trait Hooks<M: RingMemory>: Sized {
    /// Reproduce the pre-2019 `put_handle` (decrement `nest` *before* publishing `data_head`),
    /// which can publish a temporarily decreased `data_head`. Only for harnesses that must show
    /// they catch that bug; never set it otherwise.
    const LEGACY_PUT_HANDLE: bool = false;

    /// Called at each [`PreemptPoint`]; a test may run a nested writer on `producer` here.
    #[inline(always)]
    fn preempt(&self, at: PreemptPoint, producer: &Producer<M, Self>) {
        let _ = (at, producer);
    }

    /// Called by the outermost writer when the wakeup stamp moved (`perf_output_wakeup`): the
    /// watermark was crossed or `wakeup_events` samples were written. Raise an interrupt, write
    /// an eventfd, set a flag; it runs in the writer's context (possibly an NMI), so defer work.
    #[inline(always)]
    fn wakeup(&self, producer: &Producer<M, Self>) {
        let _ = producer;
    }
}

/// One lost record in [`Producer`]'s `lost` word, whose bit 0 is the mode bit.
const LOST_ONE: usize = 2;

/// Set in `nest` by the outermost writer of an overwrite-mode producer beside the count, so that
/// `put_handle`'s inner-writer test also catches the writer that must end the write generation.
const OVERWRITE_WRITER: u32 = 1 << 31;
/// `nest` of an overwrite-mode producer's outermost writer alone: the flag and a count of 1.
const OVERWRITE_OUTERMOST: u32 = 0x8000_0001;
/// How far behind `rb->head` a closed [`Producer::fast_end`] is set: a signed distance negative
/// until a quarter of the address space is written (`rb->head` moves by about a ring at most
/// before the general path reopens or closes it again, on every reservation it makes).
const FAST_PATH_CLOSED: usize = usize::MAX >> 2;

/// Hooks that do nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl<M: RingMemory> Hooks<M> for NoHooks {}

/// The producer (kernel) side of one ring. See the [module docs](self).
///
/// Over a `static` buffer, with no allocator (what a firmware image does): reserve with
/// [`output_begin`](Producer::output_begin), fill the [`Handle`], [`end`](Handle::end) it.
///
/// ```
/// use perfring::producer::{Config, EventIdentity};
/// use perfring::record::{types, Endian, Header};
/// use perfring::{split, Mapping};
///
/// #[repr(C, align(8))]
/// struct Ring([u8; 4096 + 8192]); // control page + an 8 KiB data area
/// static mut RING: Ring = Ring([0; 4096 + 8192]);
///
/// // SAFETY: the only reference to RING this program makes.
/// let buf = unsafe { &mut *core::ptr::addr_of_mut!(RING.0) };
/// let mut map = Mapping::new(buf, 4096).unwrap();
/// let (producer, mut consumer) = split(&mut map, Config::default()).unwrap();
///
/// // A 16-byte record: header + one u64 of payload.
/// let mut handle = producer.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
/// handle.write(&Header { type_: types::SAMPLE, misc: 0, size: 16 }.to_bytes(Endian::NATIVE)).unwrap();
/// handle.write(&0x1234u64.to_ne_bytes()).unwrap();
/// assert_eq!(handle.remaining(), 0);
/// handle.end();
///
/// let mut scratch = [0u8; 64];
/// let n = consumer
///     .for_each(&mut scratch, |r| {
///         assert_eq!(r.header.size, 16);
///         assert_eq!(r.body(), &0x1234u64.to_ne_bytes()[..]);
///     })
///     .unwrap();
/// assert_eq!(n, 1);
/// assert_eq!(producer.lost_pending(), 0);
/// ```
pub struct Producer<M: RingMemory, H: Hooks<M> = NoHooks> {
    mem: M,
    /// Data size - 1 (the size is a power of two).
    mask: usize,
    /// Data size, kept beside the mask so the write path compares against it directly.
    size: usize,
    /// `rb->head`: the reservation cursor, ahead of the published `data_head` while writers are
    /// open. Free-running (increasing forward, decreasing backward).
    head: LocalUsize,
    /// `rb->nest`: writers open on this CPU (0 when idle). Only the writer that brings it from 1
    /// to 0 publishes. An overwrite producer's outermost writer also sets [`OVERWRITE_WRITER`].
    nest: LocalU32,
    /// `rb->lost` (records dropped and not yet reported by a PERF_RECORD_LOST) in steps of
    /// [`LOST_ONE`], with bit 0 ([`Producer::other_mode`]) set when the producer is not in the
    /// forward read-write mode: nonzero keeps [`Producer::fast_end`] closed, for "a LOST record
    /// to write" and "another mode" alike. (The count wraps after `usize::MAX / 2` unreported
    /// drops.)
    lost: LocalUsize,
    /// The kernel's `rb->wakeup + rb->watermark`: the bytes-written position past which the
    /// next watermark step is due. It moves exactly when `rb->wakeup` does (by the watermark, or
    /// by one per `wakeup_events` samples), so it serves as the wakeup stamp a writer compares
    /// at `put_handle`; keeping the sum saves the reservation an add.
    wakeup_at: LocalUsize,
    /// `rb->events`: samples counted towards `wakeup_events`.
    events: LocalUsize,
    /// How far the producer may write by the last `data_tail` it loaded (with (A)): `tail +
    /// size - 1` forward, `tail - size + 1` backward (the position at a valid tail's space end).
    /// Space is checked against it first; the tail is re-loaded only when that check fails, so
    /// the fast path neither reads the consumer's word nor recomputes the space from it.
    space_end: LocalUsize,
    /// How far the fast path may reserve: the nearer of [`Producer::space_end`] and the wakeup
    /// stamp (`wakeup_at`), so one signed compare covers "fits by the last tail" and "crosses
    /// no watermark". Closed (set [`FAST_PATH_CLOSED`] behind `rb->head`) while the `lost`
    /// word is nonzero: a LOST record to write, or a mode other than forward read-write. Every
    /// value it takes is at most the true limit at the time it is compared (both sources only
    /// move forward), so a stale one only sends a writer down the general path.
    fast_end: LocalUsize,
    /// Overwrite mode: `rb->head` when the outermost writer opened. Everything nested writers
    /// reserve before it closes lies between this and `rb->head`.
    episode: LocalUsize,
    /// While [`Producer::batch_limited`] is nonzero: the position (half the data area past where
    /// the open batch last published) that [`Producer::fast_end`] may not pass, so a batch's
    /// fast path stops there and the batch publishes. Only used with a watermark above half
    /// the data area; below it the wakeup stamp already stops the fast path in time.
    batch_end: LocalUsize,
    /// Nonzero while a batch that needs [`Producer::batch_end`] is open.
    batch_limited: LocalU32,
    backward: bool,
    overwrite: bool,
    watermark: usize,
    wakeup_events: usize,
    hooks: H,
    _one_cpu: PhantomData<Cell<()>>,
}

impl<M: RingMemory> Producer<M, NoHooks> {
    /// A producer over `mem`, continuing from the `data_head` it holds.
    ///
    /// # Safety
    /// At most one `Producer` may write a given ring at a time (the kernel's "one CPU" rule), and
    /// no one else may write its data area. [`crate::split`] gives a safe way to get one.
    pub unsafe fn new(mem: M, config: Config) -> Result<Self, LayoutError> {
        // SAFETY: forwarded contract.
        unsafe { Producer::with_hooks(mem, config, NoHooks) }
    }
}

impl<M: RingMemory, H: Hooks<M>> Producer<M, H> {
    /// As [`Producer::new`], with hooks.
    ///
    /// # Safety
    /// As [`Producer::new`].
    pub unsafe fn with_hooks(mem: M, config: Config, hooks: H) -> Result<Self, LayoutError> {
        let size = mem.size(Area::Data);
        check_area_size(size, MIN_DATA_SIZE)?;
        let watermark = if config.watermark == 0 { size / 2 } else { config.watermark.min(size) };
        let head = mem.position(Position::DataHead).load(LOCAL);
        let producer = Producer {
            mask: size - 1,
            size,
            head: LocalUsize::new(head),
            nest: LocalU32::new(0),
            lost: LocalUsize::new(usize::from(config.backward || config.overwrite)),
            // The stamp starts at the bytes already written, so a resumed ring does not wake at once.
            wakeup_at: LocalUsize::new(
                if config.backward { head.wrapping_neg() } else { head }.wrapping_add(watermark),
            ),
            events: LocalUsize::new(0),
            episode: LocalUsize::new(head),
            batch_end: LocalUsize::new(head),
            batch_limited: LocalU32::new(0),
            space_end: LocalUsize::new(initial_space_end(&mem, head, config.backward, size - 1)),
            fast_end: LocalUsize::new(head.wrapping_sub(FAST_PATH_CLOSED)),
            backward: config.backward,
            overwrite: config.overwrite,
            watermark,
            wakeup_events: config.wakeup_events as usize,
            hooks,
            mem,
            _one_cpu: PhantomData,
        };
        // Built closed; opened only in the forward read-write mode (no hooks run here).
        if producer.lost.load(LOCAL) == 0 {
            producer.fast_end.store(producer.fast_limit(), LOCAL);
        }
        Ok(producer)
    }

    /// Reserve `size` bytes for one record (`perf_output_begin`).
    ///
    /// `size` includes the 8-byte header the caller writes first; it must be a multiple of 8,
    /// at most [`MAX_RECORD_SIZE`]. If records were lost since the last successful reservation,
    /// a `PERF_RECORD_LOST` (with `writer`'s id and trailer) is written first, in the same
    /// reservation. Fill the handle with exactly `size` bytes, then drop it or call
    /// [`Handle::end`] to publish.
    #[inline]
    pub fn output_begin(&self, size: usize, writer: &EventIdentity) -> Result<Handle<'_, M, H>, ReserveError> {
        check_size(size)?;
        // The fast path: forward, respecting the tail (what `perf record` maps), not paused, and
        // the record ends by `fast_end` (fits by the cached tail, crosses no watermark, nothing
        // lost to report). Everything else takes one out-of-line call. Both paths hand back
        // plain values (where the caller's `size` bytes go, after any LOST record the slow path
        // wrote, and the wakeup stamp), so the handle is built here, stays in registers, and has
        // `size` bytes remaining on both: a fixed-size record leaves nothing to check at the end.
        let head = self.head.load(LOCAL);
        let (off, wakeup) = if !self.fast_path_takes(head, size) {
            unlikely();
            self.output_begin_general(size, writer)?
        } else {
            // Enter after the test: an interrupt in between that reserves moves `rb->head`,
            // and the reservation below then fails and retries out of line.
            let nest = self.get_handle_in::<false>();
            self.hooks.preempt(PreemptPoint::AfterNestIncrement, self);
            let handle_wakeup = self.wakeup_at.load(LOCAL);
            let start = if self.reserve_fast(head, size) {
                head
            } else {
                // A nested writer reserved first.
                self.reserve_raced(size, nest, handle_wakeup)?
            };
            (start & self.mask, handle_wakeup)
        };
        Ok(Handle::at(self, off, size, wakeup))
    }

    /// `output_begin` for every other case: another mode, the ring paused, or a
    /// `PERF_RECORD_LOST` to write first. Returns the data offset where the caller's `size`
    /// bytes go and the opening wakeup stamp.
    #[inline(never)]
    fn output_begin_general(&self, size: usize, writer: &EventIdentity) -> Result<(usize, usize), ReserveError> {
        if self.mem.paused().load(LOCAL) {
            self.count_lost();
            return Err(ReserveError::Paused);
        }
        let have_lost = self.lost_pending();
        let lost_size = lost_record_size(have_lost, writer);
        let total = size + lost_size;
        let (start, wakeup) = self.reserve(total)?;
        let mut handle = Handle::open(self, start, total, wakeup);
        if have_lost != 0 {
            let record = LostRecord {
                id: writer.id,
                lost: (self.lost.swap(self.other_mode(), LOCAL) / LOST_ONE) as u64,
                sample_id: writer.sample_id.map(|(_, v)| v),
            };
            let mut buf = [0u8; LostRecord::size(Some(crate::record::sample_type::SAMPLE_ID_BITS))];
            let trailer_type = writer.sample_id.map_or(0, |(st, _)| st);
            let n = record.encode(trailer_type, Endian::NATIVE, &mut buf).unwrap_or(0);
            debug_assert_eq!(n, lost_size);
            handle.copy_in(&buf[..n]);
        }
        self.refresh_fast_end();
        let (off, remaining, wakeup) = handle.into_parts();
        debug_assert_eq!(remaining, size);
        Ok((off, wakeup))
    }

    /// The fast path's reservation lost a race with a nested writer (already entered, with
    /// its wakeup stamp): reserve as the general path does, then reopen the fast path.
    #[cold]
    #[inline(never)]
    fn reserve_raced(&self, total: usize, nest: u32, handle_wakeup: usize) -> Result<usize, ReserveError> {
        let (start, _) = self.reserve_entered::<false, false>(total, nest, handle_wakeup)?;
        self.refresh_fast_end();
        Ok(start)
    }

    /// Set [`Producer::fast_end`] from the current space end, wakeup stamp and `lost` word.
    /// Closed again (relative to the current `rb->head`) at once while `lost` is nonzero: a
    /// backward or overwrite producer comes here on every reservation. Otherwise stored first,
    /// then the `lost` word re-read: a nested writer that counted a loss in between closed the
    /// path, and this store must not reopen it.
    fn refresh_fast_end(&self) {
        if self.lost.load(LOCAL) != 0 {
            self.close_fast_path();
            return;
        }
        let limit = self.fast_limit();
        self.hooks.preempt(PreemptPoint::FastPathRefresh, self);
        self.fast_end.store(limit, LOCAL);
        compiler_barrier();
        if self.lost.load(LOCAL) != 0 {
            self.close_fast_path();
        }
    }

    /// Lower [`Producer::fast_end`] to `end` if that is nearer (never raise it). As in
    /// [`Producer::refresh_fast_end`], the `lost` word is read again after the store: a nested
    /// writer that counted a loss between the load and the store closed the path, and this
    /// store must not reopen it.
    #[cold]
    #[inline(never)]
    fn lower_fast_end(&self, end: usize) {
        let head = self.head.load(LOCAL);
        let fast_end = self.fast_end.load(LOCAL);
        if (end.wrapping_sub(head) as isize) < (fast_end.wrapping_sub(head) as isize) {
            self.hooks.preempt(PreemptPoint::FastPathRefresh, self);
            self.fast_end.store(end, LOCAL);
            compiler_barrier();
            if self.lost.load(LOCAL) != 0 {
                self.close_fast_path();
            }
        }
    }

    /// The nearest of the space end, the wakeup stamp and an open batch's
    /// [`Producer::batch_end`], seen from `rb->head`.
    fn fast_limit(&self) -> usize {
        let head = self.head.load(LOCAL);
        let nearer =
            |a: usize, b: usize| if (a.wrapping_sub(head) as isize) < (b.wrapping_sub(head) as isize) { a } else { b };
        let limit = nearer(self.space_end.load(LOCAL), self.wakeup_at.load(LOCAL));
        if self.batch_limited.load(LOCAL) != 0 {
            nearer(limit, self.batch_end.load(LOCAL))
        } else {
            limit
        }
    }

    /// Whether a record of `size` bytes at `head` (`rb->head` as just loaded) may take the fast
    /// path: not paused, and it ends by [`Producer::fast_end`].
    #[inline(always)]
    fn fast_path_takes(&self, head: usize, size: usize) -> bool {
        !self.mem.paused().load(LOCAL) && (self.fast_end.load(LOCAL).wrapping_sub(head) as isize) >= size as isize
    }

    /// The fast path's reservation of `size` bytes at `head` (`rb->head` as loaded before the
    /// test): false, reserving nothing, if a nested writer moved `rb->head` since.
    #[inline(always)]
    fn reserve_fast(&self, head: usize, size: usize) -> bool {
        self.hooks.preempt(PreemptPoint::AfterHeadLoad, self);
        if local_compare_exchange(&self.head, head, head.wrapping_add(size)).is_err() {
            return false;
        }
        compiler_barrier();
        self.hooks.preempt(PreemptPoint::AfterReserve, self);
        true
    }

    /// Send every writer down the general path until [`Producer::refresh_fast_end`] reopens
    /// the fast path: [`Producer::fast_end`] set [`FAST_PATH_CLOSED`] behind `rb->head`.
    #[inline(always)]
    fn close_fast_path(&self) {
        self.fast_end.store(self.head.load(LOCAL).wrapping_sub(FAST_PATH_CLOSED), LOCAL);
    }

    /// Reserve `total` bytes as a writer: enter (`nest`), reserve, stamp the watermark. Returns
    /// where the reservation starts and the wakeup stamp the writer opened with.
    #[inline]
    fn reserve(&self, total: usize) -> Result<(usize, usize), ReserveError> {
        match (self.backward, self.overwrite) {
            (false, false) => self.reserve_in::<false, false>(total),
            (false, true) => self.reserve_in::<false, true>(total),
            (true, false) => self.reserve_in::<true, false>(total),
            (true, true) => self.reserve_in::<true, true>(total),
        }
    }

    /// [`Producer::reserve`] for one mode, known at compile time so its branches vanish.
    #[inline(always)]
    fn reserve_in<const BACKWARD: bool, const OVERWRITE: bool>(
        &self,
        total: usize,
    ) -> Result<(usize, usize), ReserveError> {
        if OVERWRITE && total > self.mask {
            // Would wrap onto itself: dropped and counted, like a full ring. (Without overwrite
            // the space check refuses it: the space is never above size - 1.)
            self.count_lost();
            return Err(ReserveError::NoSpace);
        }
        let nest = self.get_handle_in::<OVERWRITE>();
        self.hooks.preempt(PreemptPoint::AfterNestIncrement, self);
        let handle_wakeup = self.wakeup_at.load(LOCAL);
        self.reserve_entered::<BACKWARD, OVERWRITE>(total, nest, handle_wakeup)
    }

    /// The reservation of [`Producer::reserve_in`] by a writer already entered (`nest` is the
    /// value before its increment, `handle_wakeup` its opening stamp).
    #[inline(always)]
    fn reserve_entered<const BACKWARD: bool, const OVERWRITE: bool>(
        &self,
        total: usize,
        nest: u32,
        handle_wakeup: usize,
    ) -> Result<(usize, usize), ReserveError> {
        let mut offset = self.head.load(LOCAL);
        let new_head = loop {
            self.hooks.preempt(PreemptPoint::AfterHeadLoad, self);
            if !OVERWRITE && !self.fits::<BACKWARD>(offset, total) && !self.reload_space::<BACKWARD>(offset, total) {
                self.count_lost();
                self.put_handle(handle_wakeup);
                return Err(ReserveError::NoSpace);
            }
            let new = if BACKWARD { offset.wrapping_sub(total) } else { offset.wrapping_add(total) };
            if OVERWRITE && nest > 0 && !self.episode_fits::<BACKWARD>(new) {
                // In overwrite mode an open (interrupted) writer finishes its payload after
                // the nested ones; if the nested data made the in-flight span exceed the ring,
                // those late writes would overwrite the newer records. The kernel lets that
                // happen; perfring drops (and counts) the nested record instead, so a reader
                // never gets a torn record. (A deliberate difference, found by the simulator.)
                self.count_lost();
                self.put_handle(handle_wakeup);
                return Err(ReserveError::NoSpace);
            }
            match local_compare_exchange(&self.head, offset, new) {
                Ok(_) => break new,
                // A nested writer reserved first: retry from its head.
                Err(current) => {
                    unlikely();
                    offset = current;
                }
            }
        };
        compiler_barrier();
        self.hooks.preempt(PreemptPoint::AfterReserve, self);

        // The record occupies [start, start + total) in both directions.
        let (start, written) = if BACKWARD { (new_head, new_head.wrapping_neg()) } else { (offset, new_head) };
        // Watermark: advance the stamp by one step when this writer's head is more than a
        // watermark past it. The kernel compares unsigned (`head - wakeup > watermark`); if an
        // interrupt between our reservation and this check advanced the stamp past our (older)
        // head, that difference wraps, the stamp gains a watermark on every later reservation
        // and every record wakes the reader from then on. perfring compares signed, so a stamp
        // ahead of this writer's head is left alone (a deliberate difference, found by the
        // simulator; see `watermark_stamp_never_runs_ahead_after_a_nested_crossing`). With the
        // stamp kept as `wakeup + watermark`, `head - wakeup > watermark` is `wakeup_at - head < 0`
        // (written so: the sign of one subtraction, no separate zero test).
        let at = self.wakeup_at.load(LOCAL);
        if (at.wrapping_sub(written) as isize) < 0 {
            self.wakeup_at.store(at.wrapping_add(self.watermark), LOCAL);
        }
        Ok((start, handle_wakeup))
    }

    /// Reserve, copy `record` (header included) and publish, in one call. Returns whether this
    /// write signalled a wakeup.
    ///
    /// Always inlined: called out of line, its prologue's register saves are stores that queue
    /// behind the record's in the store buffer, and a producer whose stores wait for cache lines
    /// the consumer holds is bound by that queue (`make bench`: `BENCHMARKS.md`, "Cross-core").
    #[inline(always)]
    pub fn output(&self, record: &[u8], writer: &EventIdentity) -> Result<bool, ReserveError> {
        check_header(record)?;
        let mut handle = self.output_begin(record.len(), writer)?;
        handle.copy_in(record);
        Ok(handle.end())
    }

    /// [`BatchWriter::output`] when its fast path does not apply: the record as a nested writer.
    #[cold]
    #[inline(never)]
    fn output_nested(&self, record: &[u8], writer: &EventIdentity) -> Result<(), ReserveError> {
        self.output(record, writer).map(|_| ())
    }

    /// Write several records and publish `data_head` once: `f` runs inside one outer writer, and
    /// the final `put_handle` publishes everything written inside with one (B) store. Returns
    /// `f`'s result and whether a wakeup was signalled.
    ///
    /// `f` gets a [`BatchWriter`]: its [`BatchWriter::output`] reserves and copies a record
    /// without entering and leaving a writer of its own (the batch is the open writer), which
    /// makes a batched record cheaper than one written alone (`make bench-instructions`). Every
    /// other [`Producer`] method is reachable through it (it dereferences to the producer); a
    /// record written with [`Producer::output_begin`] inside the batch is a nested writer, the
    /// kernel's `nest` mechanism, and is published with the rest.
    ///
    /// Records written inside are published together, at the latest when `f` returns, and
    /// earlier where holding them back would stall the consumer: before the records the batch
    /// holds unpublished would exceed half the data area, and as soon as a record crosses the
    /// wakeup watermark (the batch then publishes and wakes, as the writer that crossed it would
    /// alone). A batch of any length therefore never holds more than half the ring from the
    /// consumer, and a consumer waiting on the watermark is woken when it would be without the
    /// batch. Each intermediate publication is the kernel's `put_handle` of the outermost writer
    /// followed by a new `get_handle` (two stores and a re-check), so it costs the same as
    /// ending the batch and opening another. Space freed by the consumer meanwhile is seen by
    /// the next reservation that needs it; still, end the batch when a write fails with
    /// [`ReserveError::NoSpace`] rather than spin inside it. A panic in `f` still publishes.
    ///
    /// ```
    /// use perfring::producer::{Config, EventIdentity};
    /// use perfring::{split, Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// let (producer, mut consumer) = split(&mut map, Config::default()).unwrap();
    /// let record = [9, 0, 0, 0, 0, 0, 8, 0]; // an empty SAMPLE
    /// let (written, _wakeup) = producer.batch(|p| {
    ///     for _ in 0..3 {
    ///         p.output(&record, &EventIdentity::ANONYMOUS).unwrap();
    ///         assert_eq!(consumer.available(), Ok(0), "nothing is published inside the batch");
    ///     }
    ///     3
    /// });
    /// // One data_head store published all three; the writer count is back to 0.
    /// assert_eq!((written, consumer.available(), producer.nest()), (3, Ok(24), 0));
    /// assert_eq!(consumer.for_each(&mut [0u8; 64], |_| {}), Ok(3));
    /// ```
    pub fn batch<R>(&self, f: impl FnOnce(&BatchWriter<'_, M, H>) -> R) -> (R, bool) {
        /// Publishes what the batch holds if `f` unwinds.
        struct Outer<'b, 'p, M: RingMemory, H: Hooks<M>>(&'b BatchWriter<'p, M, H>);
        impl<M: RingMemory, H: Hooks<M>> Drop for Outer<'_, '_, M, H> {
            fn drop(&mut self) {
                self.0.restore_enclosing();
                self.0.producer.put_handle(self.0.wakeup.get());
            }
        }
        self.get_handle();
        let batch = BatchWriter {
            producer: self,
            wakeup: Cell::new(self.wakeup_at.load(LOCAL)),
            base: Cell::new(self.head.load(LOCAL)),
            woke: Cell::new(false),
            enclosing: if self.watermark > self.size / 2 {
                Some((self.batch_limited.load(LOCAL), self.batch_end.load(LOCAL)))
            } else {
                None
            },
        };
        batch.limit_fast_path();
        let outer = Outer(&batch);
        let result = f(&batch);
        core::mem::forget(outer);
        batch.restore_enclosing();
        let woke = self.put_handle(batch.wakeup.get()) | batch.woke.get();
        (result, woke)
    }

    /// Records dropped and not yet reported by a `PERF_RECORD_LOST` (the kernel's `rb->lost`).
    /// They will be reported at the start of the next successful reservation.
    pub fn lost_pending(&self) -> usize {
        self.lost.load(LOCAL) / LOST_ONE
    }

    /// Pause (`true`) or resume this producer's output: the kernel's `rb->paused`, which
    /// `PERF_EVENT_IOC_PAUSE_OUTPUT` sets. While paused, every record the producer is asked to
    /// write is dropped and counted, and one PERF_RECORD_LOST reports them with the first write
    /// after the resume (forward and backward alike). Not a barrier: a writer already past the
    /// check finishes its record.
    ///
    /// The flag is ring state outside the ABI page (the kernel keeps it in `struct
    /// perf_buffer`), so it lives in the memory value ([`RingMemory::paused`]): code holding the
    /// same value — the `&Mapping` or `&ModelRing` that both ends of [`crate::split`] share —
    /// may set it there from another thread. A consumer in another process, or over another
    /// `Mapping` of the same bytes, has no such flag in common with this producer: it needs a
    /// channel of its own to ask for a pause (the kernel's is the ioctl).
    pub fn pause_output(&self, paused: bool) {
        self.mem.paused().store(paused, LOCAL);
    }

    /// 1 if the producer writes backward or overwrites (the fast path is compiled for forward
    /// read-write only), else 0: the bit the `lost` word always carries.
    fn other_mode(&self) -> usize {
        usize::from(self.backward || self.overwrite)
    }

    /// Count one dropped record (`local_inc(&rb->lost)`).
    #[inline(always)]
    fn count_lost(&self) {
        self.lost.fetch_add(LOST_ONE, LOCAL);
        self.close_fast_path();
    }

    /// The reservation cursor (`rb->head`), ahead of `data_head` while writers are open.
    pub fn head(&self) -> usize {
        self.head.load(LOCAL)
    }

    /// Writers currently open (`rb->nest`).
    pub fn nest(&self) -> u32 {
        self.nest.load(LOCAL) & !OVERWRITE_WRITER
    }

    /// The memory this producer writes.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The hooks.
    pub fn hooks(&self) -> &H {
        &self.hooks
    }

    /// Size of the data area in bytes.
    pub fn data_size(&self) -> usize {
        self.size
    }

    /// The bytes a writer could reserve now, the kernel's `CIRC_SPACE(head, tail, size)` (one
    /// byte always kept free, so at most `data_size() - 1`) with `data_tail` loaded now (A), or
    /// the whole data area for an overwrite ring, which the kernel never checks against the
    /// tail. A hostile tail (ahead of `rb->head`, or more than a ring behind) gives 0, as it
    /// does for a reservation. A query only: nothing is reserved, nothing is counted as lost.
    ///
    /// The answer holds until the next reservation: the consumer can only free more space
    /// meanwhile (a larger answer later), while a nested writer (an interrupt) can take some.
    /// The kernel has no such call; `perf_output_begin` asks `ring_buffer_has_space` and
    /// drops the record when the answer is no. For the one question a writer asks before
    /// writing, see [`Producer::has_space`].
    pub fn space(&self) -> usize {
        if self.overwrite {
            return self.size;
        }
        space_now(&self.mem, self.head.load(LOCAL), self.backward, self.mask)
    }

    /// Whether [`Producer::output`] of a `size`-byte record (header included) would be written
    /// now rather than dropped: the kernel's `ring_buffer_has_space` for `size` plus the
    /// `PERF_RECORD_LOST` the reservation writes first when records were dropped since the last
    /// one ([`Producer::lost_pending`]; its size depends on `writer`'s `sample_id` trailer), and
    /// not [paused](Producer::pause_output). A size `output` refuses (not a multiple of 8, under
    /// 8 or over [`MAX_RECORD_SIZE`]) gives false. Nothing is reserved and nothing counted as
    /// lost, so an embedder that would rather wait than drop asks this, waits for the consumer
    /// while it says no, then writes.
    ///
    /// ```
    /// use perfring::producer::{Config, EventIdentity};
    /// use perfring::{split, Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// let (producer, mut consumer) = split(&mut map, Config::default()).unwrap();
    /// let mut record = [0u8; 1024];
    /// record[..8].copy_from_slice(&[9, 0, 0, 0, 0, 0, 0, 4]); // a SAMPLE of 1024 bytes
    /// let mut written = 0;
    /// while producer.has_space(record.len(), &EventIdentity::ANONYMOUS) {
    ///     producer.output(&record, &EventIdentity::ANONYMOUS).unwrap();
    ///     written += 1;
    /// }
    /// // Three fit in 4 KiB (one byte is always kept free); asking dropped nothing.
    /// assert_eq!((written, producer.lost_pending(), producer.space()), (3, 0, 1023));
    /// consumer.for_each(&mut [0u8; 0], |_| {}).unwrap();
    /// assert!(producer.has_space(record.len(), &EventIdentity::ANONYMOUS));
    /// ```
    pub fn has_space(&self, size: usize, writer: &EventIdentity) -> bool {
        if check_size(size).is_err() || self.mem.paused().load(LOCAL) {
            return false;
        }
        let lost_size = lost_record_size(self.lost_pending(), writer);
        let total = size + lost_size;
        if self.overwrite {
            return total <= self.mask;
        }
        total <= self.space()
    }

    /// The space left for a writer at `head` if the consumer's tail is `tail`, or 0 for a tail
    /// no honest consumer can have.
    ///
    /// The kernel computes `CIRC_SPACE` modulo the size, which for an honest tail is the same
    /// as this. A hostile tail (ahead of head, or more than the ring size behind) makes the
    /// kernel write over data it cannot know is consumed; here it leaves no space, so a bad
    /// tail costs drops (counted), never an overwrite of unread data. (Stricter than the kernel,
    /// on purpose: see `security`.)
    #[inline(always)]
    fn space_for<const BACKWARD: bool>(&self, head: usize, tail: usize) -> usize {
        circ_space::<BACKWARD>(head, tail, self.mask)
    }

    /// Whether `total` bytes fit at `head` by the last tail loaded ([`Producer::space_end`]).
    /// A stale tail is an older tail: it can only under-estimate the space.
    #[inline(always)]
    fn fits<const BACKWARD: bool>(&self, head: usize, total: usize) -> bool {
        let end = self.space_end.load(LOCAL);
        let space = if BACKWARD { head.wrapping_sub(end) } else { end.wrapping_sub(head) };
        total <= space
    }

    /// Load `data_tail` (A), recompute the space end from it, and say whether `total` bytes fit
    /// at `head` now. Only called when the cached space is short.
    #[cold]
    #[inline(never)]
    fn reload_space<const BACKWARD: bool>(&self, head: usize, total: usize) -> bool {
        // (A): the tail load is ordered before our data stores; pairs with (D). (While the cached
        // space end is used, the acquire load that produced it orders them just as well.)
        let tail = self.mem.position(Position::DataTail).load(A_TAIL_LOAD);
        let space = self.space_for::<BACKWARD>(head, tail);
        self.space_end.store(space_end::<BACKWARD>(head, space), LOCAL);
        total <= space
    }

    /// `perf_output_get_handle`: enter a writer (raise `nest`); the outermost one of an
    /// overwrite ring also opens the write generation and the in-flight episode. Returns the
    /// `nest` value before entering (0: this is the outermost writer).
    #[inline(always)]
    fn get_handle(&self) -> u32 {
        if self.overwrite {
            self.get_handle_in::<true>()
        } else {
            self.get_handle_in::<false>()
        }
    }

    /// [`Producer::get_handle`] for a mode known at compile time.
    #[inline(always)]
    fn get_handle_in<const OVERWRITE: bool>(&self) -> u32 {
        let nest = self.nest.load(LOCAL);
        self.nest.store(if OVERWRITE && nest == 0 { OVERWRITE_OUTERMOST } else { nest + 1 }, LOCAL);
        compiler_barrier();
        if OVERWRITE && nest == 0 {
            self.write_gen_begin();
            self.episode.store(self.head.load(LOCAL), LOCAL);
        }
        nest
    }

    /// Overwrite mode: whether a reservation ending at `new` keeps everything reserved since the
    /// outermost writer opened within one ring size.
    #[inline(always)]
    fn episode_fits<const BACKWARD: bool>(&self, new: usize) -> bool {
        let start = self.episode.load(LOCAL);
        let span = if BACKWARD { start.wrapping_sub(new) } else { new.wrapping_sub(start) };
        span <= self.size
    }

    /// `perf_output_put_handle`: leave the writer; the outermost one publishes `data_head`.
    /// Returns whether a wakeup was signalled.
    #[inline]
    fn put_handle(&self, handle_wakeup: usize) -> bool {
        if H::LEGACY_PUT_HANDLE {
            return self.put_handle_legacy(handle_wakeup);
        }
        // P0: an inner writer never publishes and never wakes. The one test also sends the
        // outermost writer of an overwrite ring (`nest` carries [`OVERWRITE_WRITER`]) aside, so
        // the forward read-write path has no mode test here.
        let nest = self.nest.load(LOCAL);
        if nest <= 1 {
            return self.publish::<false>(handle_wakeup);
        }
        unlikely();
        if nest & !OVERWRITE_WRITER > 1 {
            self.nest.store(nest - 1, LOCAL);
            return false;
        }
        self.publish::<true>(handle_wakeup)
    }

    /// `put_handle` of the outermost writer (`nest` is 1, or [`OVERWRITE_OUTERMOST`] in
    /// overwrite mode): publish `data_head`, leave, wake if the stamp moved.
    #[inline(always)]
    fn publish<const OVERWRITE: bool>(&self, handle_wakeup: usize) -> bool {
        loop {
            // P1: load rb->head after our nest increment (program order + barrier), so a head
            // published by an IRQ between them cannot be missed.
            compiler_barrier();
            let head = self.head.load(LOCAL);
            self.hooks.preempt(PreemptPoint::PutAfterHeadLoad, self);
            // P2/P3 (B): every record byte of this CPU's writers up to `head` before data_head;
            // pairs with (C).
            self.mem.position(Position::DataHead).store(head, B_HEAD_STORE);
            self.hooks.preempt(PreemptPoint::AfterHeadStore, self);
            // P4: publish the head *before* dropping nest, or an IRQ could publish a newer head
            // that our stale store would then hide.
            compiler_barrier();
            self.nest.store(0, LOCAL);
            self.hooks.preempt(PreemptPoint::AfterNestDecrement, self);
            // P5: re-check after dropping nest, to catch the last nested update.
            compiler_barrier();
            self.hooks.preempt(PreemptPoint::BeforeRecheck, self);
            if head == self.head.load(LOCAL) {
                break;
            }
            self.nest.store(if OVERWRITE { OVERWRITE_OUTERMOST } else { 1 }, LOCAL);
            if OVERWRITE {
                // A nested writer may have opened and closed the generation after P4: open it
                // again, or an interrupt's writer nesting in this one (which opens nothing)
                // would write while a reader's seqlock sees it even.
                compiler_barrier();
                self.write_gen_begin();
            }
        }
        if OVERWRITE {
            self.write_gen_end();
        }
        self.wake_if_moved(handle_wakeup)
    }

    /// The ordering before kernel commit 1b038c6e05ff (2019): `nest` is decremented before
    /// `data_head` is stored. An interrupt in between publishes a newer head, which this writer
    /// then overwrites with its older one: `data_head` goes backwards until the re-check
    /// repairs it.
    fn put_handle_legacy(&self, handle_wakeup: usize) -> bool {
        loop {
            let head = self.head.load(LOCAL);
            self.hooks.preempt(PreemptPoint::PutAfterHeadLoad, self);
            let nest = self.nest.load(LOCAL) - 1;
            if nest & !OVERWRITE_WRITER != 0 {
                self.nest.store(nest, LOCAL);
                return false;
            }
            self.nest.store(0, LOCAL);
            self.hooks.preempt(PreemptPoint::AfterNestDecrement, self);
            self.mem.position(Position::DataHead).store(head, B_HEAD_STORE);
            self.hooks.preempt(PreemptPoint::AfterHeadStore, self);
            self.hooks.preempt(PreemptPoint::BeforeRecheck, self);
            if head == self.head.load(LOCAL) {
                break;
            }
            self.nest.store(nest + 1, LOCAL);
            if self.overwrite {
                // As in `publish`: a nested writer may have closed the generation meanwhile.
                compiler_barrier();
                self.write_gen_begin();
            }
        }
        if self.overwrite {
            self.write_gen_end();
        }
        self.wake_if_moved(handle_wakeup)
    }

    /// Overwrite mode, outermost writer opening: make the write generation odd, before any data
    /// store. Readers of an overwrite ring race the producer by design; this seqlock lets them
    /// tell a stable copy from one a writer may have torn (see [`crate::backward`]). Already odd
    /// if an interrupt opened a writer between an outer writer's P4 and its generation bump.
    #[inline(always)]
    fn write_gen_begin(&self) {
        let gen = self.mem.write_gen();
        gen.store(gen.load(LOCAL) | 1, LOCAL);
        // (S1): the odd generation before our data stores; pairs with the reader's (S4).
        fence(S1_SEQ_WRITE_BEGIN);
    }

    /// Overwrite mode, outermost writer done (data_head published): next even generation.
    #[inline(always)]
    fn write_gen_end(&self) {
        let gen = self.mem.write_gen();
        // (S2): our data stores and data_head before the even generation; pairs with (S3).
        gen.store((gen.load(LOCAL) | 1).wrapping_add(1), S2_SEQ_WRITE_END);
    }

    /// P6: wake if the stamp moved since this writer's `get_handle`.
    #[inline(always)]
    fn wake_if_moved(&self, handle_wakeup: usize) -> bool {
        if handle_wakeup != self.wakeup_at.load(LOCAL) {
            self.hooks.wakeup(self);
            true
        } else {
            false
        }
    }

    /// Copy `src` to data-area offset `off` (at most the data size; the end of the area when a
    /// record ended exactly there). Returns the offset after it. The common case is one compare
    /// and the copy, which compiles to moves when the length is known at the call site.
    #[inline(always)]
    fn put(&self, off: usize, src: &[u8]) -> usize {
        let end = off + src.len();
        if end <= self.size {
            // SAFETY: off + len <= size; the range lies inside a reservation this CPU made and has
            // not published, so no other party reads or writes it (the consumer reads only below
            // data_head; the tail check (A) kept it clear of unread data).
            unsafe { self.mem.write(Area::Data, off, src) };
            end
        } else {
            self.put_wrapped(off, src)
        }
    }

    /// [`Producer::put`] for a copy that crosses the end of the data area.
    ///
    /// It cannot panic (no indexing), so the optimiser can tell a call to it does not unwind and
    /// need not keep an open `Handle` in memory around it.
    #[cold]
    #[inline(never)]
    fn put_wrapped(&self, off: usize, src: &[u8]) -> usize {
        let Some((first, rest)) = src.split_at_checked(self.size.saturating_sub(off)) else { return off };
        if !first.is_empty() {
            // SAFETY: off + first.len() == size; inside this CPU's unpublished reservation (see
            // `put`).
            unsafe { self.mem.write(Area::Data, off, first) };
        }
        // SAFETY: the rest wraps to offset 0; src.len() <= total < size (a reservation never
        // exceeds size - 1), so the remainder fits; it is inside the same reservation.
        unsafe { self.mem.write(Area::Data, 0, rest) };
        rest.len()
    }

    /// Zero `n` bytes from `off` (see [`Producer::put`]). Out of line, taking and returning
    /// values rather than the handle, so the fast path never keeps a `Handle` in memory for it.
    #[cold]
    #[inline(never)]
    fn put_zeros(&self, mut off: usize, mut n: usize) -> usize {
        const ZEROS: [u8; 64] = [0; 64];
        while n > 0 {
            let (chunk, _) = ZEROS.split_at(n.min(ZEROS.len()));
            off = self.put(off, chunk);
            n -= chunk.len();
        }
        off
    }
}

/// Marks the branch that calls it as rare, for code layout (`core::hint::cold_path` is newer
/// than the crate's minimum Rust).
#[cold]
#[inline(never)]
fn unlikely() {}

/// Refuse, before counting anything, a record size that is not a multiple of 8 from 8 to
/// [`MAX_RECORD_SIZE`] (`output_begin` and `BatchWriter::output`).
#[inline(always)]
fn check_size(size: usize) -> Result<(), ReserveError> {
    if size % 8 != 0 || !(8..=MAX_RECORD_SIZE).contains(&size) {
        return Err(size_error(size));
    }
    Ok(())
}

/// A whole record's header must give its length (checked after [`check_size`] where both are:
/// a record shorter than a header has no `size` to compare, and is refused by that one).
#[inline(always)]
fn check_header(record: &[u8]) -> Result<(), ReserveError> {
    match record.get(6..8) {
        Some(&[a, b]) if usize::from(u16::from_ne_bytes([a, b])) != record.len() => {
            Err(header_error(u16::from_ne_bytes([a, b]), record.len()))
        }
        _ => Ok(()),
    }
}

#[cold]
fn header_error(header: u16, len: usize) -> ReserveError {
    ReserveError::HeaderSize { header, len }
}

/// The error for a size [`check_size`] refuses.
#[cold]
fn size_error(size: usize) -> ReserveError {
    if size > MAX_RECORD_SIZE && size % 8 == 0 {
        ReserveError::TooLarge { size }
    } else {
        ReserveError::BadSize { size }
    }
}

/// The position `space` bytes past `head` in the writing direction.
#[inline(always)]
fn space_end<const BACKWARD: bool>(head: usize, space: usize) -> usize {
    if BACKWARD {
        head.wrapping_sub(space)
    } else {
        head.wrapping_add(space)
    }
}

/// [`Producer::space_for`] for a data area of `mask + 1` bytes.
#[inline(always)]
fn circ_space<const BACKWARD: bool>(head: usize, tail: usize, mask: usize) -> usize {
    let used = if BACKWARD { tail.wrapping_sub(head) } else { head.wrapping_sub(tail) };
    // CIRC_SPACE keeps one byte free: at most size - 1 bytes are ever in use.
    mask.saturating_sub(used)
}

/// [`Producer::space_end`] from the tail found at construction.
fn initial_space_end<M: RingMemory>(mem: &M, head: usize, backward: bool, mask: usize) -> usize {
    let space = space_now(mem, head, backward, mask);
    if backward {
        space_end::<true>(head, space)
    } else {
        space_end::<false>(head, space)
    }
}

/// The space at `head` by the `data_tail` loaded now, in the writing direction
/// ([`circ_space`]): the constructor's first space end and [`Producer::space`].
fn space_now<M: RingMemory>(mem: &M, head: usize, backward: bool, mask: usize) -> usize {
    // (A): the tail load is ordered before the data stores of any writer that acts on what it
    // gives; pairs with (D), as every tail load.
    let tail = mem.position(Position::DataTail).load(A_TAIL_LOAD);
    if backward {
        circ_space::<true>(head, tail, mask)
    } else {
        circ_space::<false>(head, tail, mask)
    }
}

/// The bytes of the `PERF_RECORD_LOST` a reservation writes first when `lost` records are
/// unreported (0 when none are): its size depends on `writer`'s `sample_id` trailer.
#[inline(always)]
fn lost_record_size(lost: usize, writer: &EventIdentity) -> usize {
    if lost != 0 {
        LostRecord::size(writer.sample_id.map(|(st, _)| st))
    } else {
        0
    }
}

/// An open reservation: write exactly its size, then [`end`](Handle::end) it (or drop it).
///
/// Dropping publishes too, so a writer that bails out early cannot leave `nest` raised (which
/// would stop all publication). Bytes left unwritten are zero-filled, so a short write never
/// exposes stale ring contents.
///
/// A writer that gives up before its 8-byte header is written (it reserved, then decided not
/// to write) would leave a record the consumer cannot step over. Instead, ending such a handle
/// takes the reservation back when nothing was reserved after it (a forward, non-overwrite
/// ring: nothing is published and nothing counted). Otherwise (an interrupt's writer reserved
/// behind it, or another mode) the space becomes a `PERF_RECORD_LOST_SAMPLES` of the reserved
/// size reporting the one record given up (`lost` = 1, the rest zero), which perf reads as a
/// lost sample; a strict decoder reports its bytes beyond the record's layout as trailing.
#[must_use = "a reservation must be filled and ended"]
pub struct Handle<'p, M: RingMemory, H: Hooks<M>> {
    producer: &'p Producer<M, H>,
    /// Data-area offset of the next byte: masked, or the data size when the last write ended
    /// exactly at the end of the area (the kernel's `handle->addr`).
    off: usize,
    /// Data-area offset where the caller's record starts (its header).
    start: usize,
    remaining: usize,
    wakeup: usize,
    _not_send: PhantomData<*const ()>,
}

impl<'p, M: RingMemory, H: Hooks<M>> Handle<'p, M, H> {
    /// Append `bytes` to the record (`perf_output_copy`). Refused, writing nothing, if they do
    /// not fit in what is left of the reservation.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        if bytes.len() > self.remaining {
            return Err(WriteError { requested: bytes.len(), remaining: self.remaining });
        }
        self.producer.hooks.preempt(PreemptPoint::InPayload, self.producer);
        self.copy_in(bytes);
        Ok(())
    }

    /// Advance `n` bytes without writing them (`perf_output_skip`). Unlike the kernel, whose
    /// skipped bytes keep stale ring content, perfring zeroes them: a producer facing an
    /// untrusted consumer must not leak old records.
    ///
    /// ```
    /// use perfring::producer::{Config, EventIdentity};
    /// use perfring::{split, Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// let (producer, mut consumer) = split(&mut map, Config::default()).unwrap();
    /// // Fill the ring with 0xAA records, read them, then wrap over them with skips.
    /// let mut old = [0xAAu8; 64];
    /// old[..8].copy_from_slice(&[9, 0, 0, 0, 0, 0, 64, 0]);
    /// for _ in 0..63 {
    ///     producer.output(&old, &EventIdentity::ANONYMOUS).unwrap();
    ///     consumer.for_each(&mut [0u8; 64], |_| {}).unwrap();
    /// }
    /// let mut h = producer.output_begin(64, &EventIdentity::ANONYMOUS).unwrap();
    /// h.write(&[9, 0, 0, 0, 0, 0, 64, 0]).unwrap();
    /// h.skip(40).unwrap(); // skipped: zeroed, not the old 0xAA bytes
    /// h.end(); // the last 16 bytes were never written: zeroed too
    /// consumer.for_each(&mut [0u8; 64], |r| assert!(r.body().iter().all(|&b| b == 0))).unwrap();
    /// ```
    pub fn skip(&mut self, n: usize) -> Result<(), WriteError> {
        if n > self.remaining {
            return Err(WriteError { requested: n, remaining: self.remaining });
        }
        self.producer.hooks.preempt(PreemptPoint::InPayload, self.producer);
        self.zero_fill(n);
        Ok(())
    }

    /// Bytes left to write in this reservation.
    pub fn remaining(&self) -> usize {
        self.remaining
    }

    /// Count this record towards `wakeup_events` (what `perf_output_sample` does for every
    /// `PERF_RECORD_SAMPLE`): every `wakeup_events`-th sample advances the wakeup stamp.
    pub fn count_sample(&mut self) {
        let p = self.producer;
        if p.wakeup_events != 0 {
            let events = p.events.load(LOCAL) + 1;
            if events >= p.wakeup_events {
                p.events.store(events - p.wakeup_events, LOCAL);
                p.wakeup_at.store(p.wakeup_at.load(LOCAL).wrapping_add(1), LOCAL);
            } else {
                p.events.store(events, LOCAL);
            }
        }
    }

    /// Publish (`perf_output_end`). Returns whether this writer signalled a wakeup (only the
    /// outermost writer can).
    #[inline]
    pub fn end(self) -> bool {
        let mut this = core::mem::ManuallyDrop::new(self);
        this.finish()
    }

    /// A handle for the `total` bytes reserved at ring position `start`.
    #[inline(always)]
    fn open(producer: &'p Producer<M, H>, start: usize, total: usize, wakeup: usize) -> Self {
        Self::at(producer, start & producer.mask, total, wakeup)
    }

    /// A handle for `remaining` reserved bytes from data-area offset `off`.
    #[inline(always)]
    fn at(producer: &'p Producer<M, H>, off: usize, remaining: usize, wakeup: usize) -> Self {
        Handle { producer, off, start: off, remaining, wakeup, _not_send: PhantomData }
    }

    /// Next data offset, bytes remaining and opening wakeup stamp, without ending the writer (for
    /// [`Handle::at`] to resume).
    #[inline(always)]
    fn into_parts(self) -> (usize, usize, usize) {
        let this = core::mem::ManuallyDrop::new(self);
        (this.off, this.remaining, this.wakeup)
    }

    #[inline(always)]
    fn copy_in(&mut self, bytes: &[u8]) {
        debug_assert!(bytes.len() <= self.remaining);
        self.off = self.producer.put(self.off, bytes);
        self.remaining -= bytes.len();
    }

    fn zero_fill(&mut self, n: usize) {
        debug_assert!(n <= self.remaining);
        self.off = self.producer.put_zeros(self.off, n);
        self.remaining -= n;
    }

    #[inline(always)]
    fn finish(&mut self) -> bool {
        if self.remaining != 0 {
            self.finish_short();
        }
        self.producer.put_handle(self.wakeup)
    }

    /// A record ended before its reservation was filled: zero the rest, or, if not even its
    /// header was written, take the reservation back or turn it into a LOST_SAMPLES record
    /// (see [`Handle`]).
    #[cold]
    #[inline(never)]
    fn finish_short(&mut self) {
        let p = self.producer;
        // Bytes written since `start` (`off` may be the data size: see the field).
        let written = self.off.wrapping_sub(self.start) & p.mask;
        if written >= 8 {
            self.zero_fill(self.remaining);
            return;
        }
        let total = written + self.remaining;
        if !p.backward && !p.overwrite {
            // The reservation is the newest iff `rb->head` is where it ends; then nothing was
            // reserved behind it and it can be given back (still unpublished: this writer has
            // not left).
            let head = p.head.load(LOCAL);
            if head.wrapping_sub(total) & p.mask == self.start
                && local_compare_exchange(&p.head, head, head.wrapping_sub(total)).is_ok()
            {
                self.remaining = 0;
                return;
            }
        }
        // Someone reserved behind it: the space must hold a record the consumer can step over.
        self.off = self.start;
        self.remaining = total;
        let header = Header { type_: crate::record::types::LOST_SAMPLES, misc: 0, size: total as u16 };
        self.copy_in(&header.to_bytes(Endian::NATIVE));
        if self.remaining >= 8 {
            self.copy_in(&1u64.to_ne_bytes());
        }
        self.zero_fill(self.remaining);
    }
}

impl<M: RingMemory, H: Hooks<M>> Drop for Handle<'_, M, H> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The open writer of a [`Producer::batch`]: records written with [`BatchWriter::output`]
/// are published together when the batch ends. It dereferences to the [`Producer`], so
/// everything else (a [`Handle`] from [`Producer::output_begin`], [`Producer::lost_pending`],
/// ...) is at hand inside the batch.
pub struct BatchWriter<'p, M: RingMemory, H: Hooks<M> = NoHooks> {
    producer: &'p Producer<M, H>,
    /// The wakeup stamp the batch's open writer entered with (its `get_handle`), renewed at
    /// each intermediate publication.
    wakeup: Cell<usize>,
    /// `rb->head` when the batch opened or last published: what lies past it is held back.
    base: Cell<usize>,
    /// Whether an intermediate publication signalled a wakeup.
    woke: Cell<bool>,
    /// Where the batch bounds the fast path ([`BatchWriter::limit_fast_path`]): the enclosing
    /// batch's [`Producer::batch_limited`] and [`Producer::batch_end`] (a batch
    /// opened by a nested writer inside another batch), restored when this one ends.
    enclosing: Option<(u32, usize)>,
}

impl<M: RingMemory, H: Hooks<M>> core::ops::Deref for BatchWriter<'_, M, H> {
    type Target = Producer<M, H>;
    fn deref(&self) -> &Producer<M, H> {
        self.producer
    }
}

impl<M: RingMemory, H: Hooks<M>> BatchWriter<'_, M, H> {
    /// Reserve and copy `record` (header included), to be published when the batch ends:
    /// [`Producer::output`] without a writer of its own.
    ///
    /// The batch already holds `nest` raised, so the record needs no `get_handle`/`put_handle`
    /// pair: on the fast path (forward, not paused, fits by the cached tail, crosses no
    /// watermark, nothing lost to report) it is one reservation by compare-exchange and the
    /// copy. An interrupt's writer may still nest anywhere in it: it reserves past this
    /// record (or, before the compare-exchange, makes it fail), and the batch publishes both.
    /// Everything else — a full ring, a pause, a LOST record to write first, another mode —
    /// writes the record as a nested writer, with [`Producer::output`]'s errors. Nothing is
    /// visible to the consumer before the batch ends, whatever this returns.
    #[inline(always)]
    pub fn output(&self, record: &[u8], writer: &EventIdentity) -> Result<(), ReserveError> {
        let p = self.producer;
        let size = record.len();
        check_size(size)?;
        check_header(record)?;
        let head = p.head.load(LOCAL);
        if !p.fast_path_takes(head, size) {
            unlikely();
            return self.output_general(record, writer);
        }
        if !p.reserve_fast(head, size) {
            // An interrupt's writer reserved first.
            unlikely();
            return self.output_general(record, writer);
        }
        p.put(head & p.mask, record);
        Ok(())
    }

    /// [`BatchWriter::output`] off its fast path: publish first if the record would take what
    /// the batch holds past half the ring, write the record as a nested writer, then publish if
    /// it crossed the wakeup watermark (it moved the stamp), so the consumer is woken now.
    #[cold]
    #[inline(never)]
    fn output_general(&self, record: &[u8], writer: &EventIdentity) -> Result<(), ReserveError> {
        let p = self.producer;
        let head = p.head.load(LOCAL);
        let held = if p.backward {
            self.base.get().wrapping_sub(head.wrapping_sub(record.len()))
        } else {
            head.wrapping_add(record.len()).wrapping_sub(self.base.get())
        };
        if held > p.size / 2 {
            self.publish();
        }
        let written = p.output_nested(record, writer);
        if p.wakeup_at.load(LOCAL) != self.wakeup.get() {
            self.publish();
        }
        written
    }

    /// Publish everything written so far and go on as a new batch: the outermost writer's
    /// `put_handle` (which wakes the consumer if the stamp moved since the batch's writer
    /// entered), then a new `get_handle`. Inside another writer (a batch opened by a nested
    /// writer) nothing is published, as in the kernel: the outer writer publishes.
    #[cold]
    #[inline(never)]
    fn publish(&self) {
        let p = self.producer;
        if p.put_handle(self.wakeup.get()) {
            self.woke.set(true);
        }
        p.get_handle();
        self.wakeup.set(p.wakeup_at.load(LOCAL));
        self.base.set(p.head.load(LOCAL));
        self.limit_fast_path();
    }

    /// With a watermark above half the data area, the wakeup stamp does not stop the fast path
    /// before the batch holds half the ring: bound [`Producer::fast_end`] by the batch's
    /// publication point too (the fast path then needs no test of its own). Below it, nothing
    /// to do: the stamp is at most a watermark past where the consumer was last woken, which
    /// is not past where this batch opened.
    #[inline(always)]
    fn limit_fast_path(&self) {
        if self.enclosing.is_some() {
            self.limit_fast_path_to_publish_at();
        }
    }

    /// [`BatchWriter::limit_fast_path`]'s work: set [`Producer::batch_end`], then lower
    /// [`Producer::fast_end`] to it (never raise it: a closed or nearer limit stands; the next
    /// refresh takes the batch's end into account).
    #[cold]
    #[inline(never)]
    fn limit_fast_path_to_publish_at(&self) {
        let p = self.producer;
        let base = self.base.get();
        let end = if p.backward { base.wrapping_sub(p.size / 2) } else { base.wrapping_add(p.size / 2) };
        p.batch_end.store(end, LOCAL);
        p.batch_limited.store(1, LOCAL);
        p.lower_fast_end(end);
    }

    /// Give the enclosing batch (if any) its [`Producer::batch_end`] back, or lift the limit
    /// (the fast path's limit may then stay lower than it could be until the next refresh).
    #[inline(always)]
    fn restore_enclosing(&self) {
        let p = self.producer;
        let Some((limited, end)) = self.enclosing else { return };
        p.batch_end.store(end, LOCAL);
        p.batch_limited.store(limited, LOCAL);
        if limited != 0 {
            p.lower_fast_end(end);
        }
    }
}

/// A [`Producer`] shared with the interrupt handlers of one CPU.
///
/// The nest protocol is correct for one CPU and the interrupts that nest on it (an interrupt
/// runs to completion before the interrupted writer resumes). Rust cannot see that property, so
/// putting a producer in a `static` used by an ISR needs this wrapper, whose constructor is the
/// promise.
///
/// The firmware pattern (`examples/firmware` runs it on a Cortex-M4F): the ring's memory in a
/// `static`, laid out once at reset, and the producer in a `static` that the task and the
/// interrupt handlers reach through a shared reference. The host reads the ring's memory (a
/// debug probe, shared RAM) with [`Consumer::untrusted`](crate::Consumer::untrusted) over a
/// [`RingMemory`] of its own.
///
/// ```
/// use core::mem::MaybeUninit;
/// use core::ptr::addr_of_mut;
/// use perfring::producer::{Config, CpuLocal, EventIdentity, Producer};
/// use perfring::Mapping;
///
/// /// The control page's ABI fields (1088 bytes), then a 4 KiB data area.
/// #[repr(C, align(8))]
/// struct Ring([u8; 1088 + 4096]);
/// static mut RING: Ring = Ring([0; 1088 + 4096]);
/// static mut MAPPING: MaybeUninit<Mapping<'static>> = MaybeUninit::uninit();
/// static mut PRODUCER: MaybeUninit<CpuLocal<Producer<&'static Mapping<'static>>>> = MaybeUninit::uninit();
///
/// /// At reset, before any interrupt is enabled.
/// fn boot() {
///     // SAFETY: runs once, before any interrupt handler can touch these statics; afterwards
///     // they are only read through shared references.
///     unsafe {
///         let map = (*addr_of_mut!(MAPPING)).write(Mapping::new(&mut *addr_of_mut!(RING.0), 1088).unwrap());
///         let map: &'static Mapping<'static> = map;
///         // SAFETY (Producer::new): the ring's only producer. (CpuLocal::new): only this CPU
///         // and the interrupt handlers that nest on it use it.
///         (*addr_of_mut!(PRODUCER)).write(CpuLocal::new(Producer::new(map, Config::default()).unwrap()));
///     }
/// }
///
/// fn producer() -> &'static Producer<&'static Mapping<'static>> {
///     // SAFETY: initialized by `boot` before any caller runs; only shared references are made.
///     unsafe { (*addr_of_mut!(PRODUCER)).assume_init_ref().get() }
/// }
///
/// /// An interrupt handler: a full ring drops and counts the record; a handler never waits.
/// fn on_timer_interrupt() {
///     let _ = producer().output(&[9, 0, 0, 0, 0, 0, 8, 0], &EventIdentity::ANONYMOUS);
/// }
///
/// boot();
/// on_timer_interrupt();
/// assert_eq!(producer().head(), 8);
/// ```
///
/// `CpuLocal<P>` is `Sync` only for a [`Producer`] (over memory and hooks that are themselves
/// `Sync`): the nest protocol makes the producer's own state safe to touch from nesting
/// interrupts, and nothing else's. Any other `P` keeps its own `Sync`-ness; an `Rc`, whose
/// count is not updated atomically, cannot be shared this way:
///
/// ```compile_fail
/// # use perfring::producer::CpuLocal;
/// fn shared_with_interrupts<T: Sync>() {}
/// shared_with_interrupts::<CpuLocal<std::rc::Rc<u8>>>(); // an Rc is not Sync, wrapped or not
/// ```
///
/// ```
/// # use perfring::producer::{CpuLocal, Producer};
/// # use perfring::Mapping;
/// fn shared_with_interrupts<T: Sync>() {}
/// shared_with_interrupts::<CpuLocal<Producer<&'static Mapping<'static>>>>();
/// ```
pub struct CpuLocal<P>(P);

// SAFETY: the constructor's caller promises that only one CPU and its LIFO-nesting interrupt
// handlers use the producer, which is the condition the nest protocol needs: every field of a
// `Producer` that a writer changes is a `LocalUsize`/`LocalU32` (atomic against an interrupt
// of the same CPU), and the rest is set at construction. Its memory `M` and hooks `H` are
// reached through `&self` by every context, so they must be `Sync` themselves; `Send` is not
// needed, since the producer never moves out of the wrapper while it is shared.
unsafe impl<M: RingMemory + Sync, H: Hooks<M> + Sync> Sync for CpuLocal<Producer<M, H>> {}

impl<P> CpuLocal<P> {
    /// Wrap a producer for use from one CPU and its interrupt handlers.
    ///
    /// # Safety
    /// Every use of the wrapped producer must come from one CPU (with preemption to other CPUs
    /// excluded while a handle is open) or from interrupt handlers that nest on it and run to
    /// completion before the code they interrupted resumes.
    pub const unsafe fn new(producer: P) -> Self {
        CpuLocal(producer)
    }

    /// The producer.
    pub fn get(&self) -> &P {
        &self.0
    }
}
