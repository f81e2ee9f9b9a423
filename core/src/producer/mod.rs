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
//! labelled `PreemptPoint` (the `test-hooks` feature); in production the hooks are empty and
//! compile to nothing.
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

mod batch;
mod config;
mod cpu_local;
mod error;
mod handle;
mod hooks;
mod reserve;

use core::cell::Cell;
use core::marker::PhantomData;

use crate::fences::{A_TAIL_LOAD, LOCAL};
use crate::loom::{LocalU32, LocalUsize};
use crate::memory::{check_area_size, Area, LayoutError, Position, RingMemory, MIN_DATA_SIZE};
use crate::record::{SampleId, LOST_BODY_SIZE, MAX_RECORD_SIZE};

pub use batch::BatchWriter;
pub use config::{EventIdentity, ProducerConfig};
pub use cpu_local::CpuLocal;
pub use error::OutputError;
pub use handle::Handle;
#[cfg(any(test, feature = "test-hooks"))]
pub use hooks::PreemptPoint;
#[cfg(not(any(test, feature = "test-hooks")))]
use hooks::PreemptPoint;

/// Callbacks from inside the producer. Every method has an empty default that compiles to
/// nothing, so `NoHooks` costs nothing (`make bench-instructions` measures it).
///
/// [`wakeup`](Hooks::wakeup) is for every producer. `LEGACY_PUT_HANDLE` and `preempt`, which
/// let a test or a simulator run nested writers and reproduce the pre-2019 ordering, exist only
/// with the crate's `test-hooks` feature (the tests and `perfring-sim` turn it on).
pub trait Hooks<M: RingMemory>: Sized {
    /// Reproduce the pre-2019 `put_handle` (decrement `nest` *before* publishing `data_head`),
    /// which can publish a temporarily decreased `data_head`. Only for harnesses that must show
    /// they catch that bug; never set it otherwise.
    #[cfg(any(test, feature = "test-hooks"))]
    const LEGACY_PUT_HANDLE: bool = false;

    /// Called at each [`PreemptPoint`]; a test may run a nested writer on `producer` here.
    #[cfg(any(test, feature = "test-hooks"))]
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

/// Hooks that do nothing: the default of [`Producer`] and of the BPF ring buffer's
/// [`RingbufProducer`](crate::bpf_ringbuf::RingbufProducer).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl<M: RingMemory> Hooks<M> for NoHooks {}

/// The producer (kernel) side of one ring. See the [module docs](self).
///
/// Over a `static` buffer, with no allocator (what a firmware image does): reserve with
/// [`output_begin`](Producer::output_begin), fill the [`Handle`], [`end`](Handle::end) it.
///
/// ```
/// use perfring::producer::{ProducerConfig, EventIdentity};
/// use perfring::record::{types, Endian, Header};
/// use perfring::{split, memory::Mapping};
///
/// #[repr(C, align(8))]
/// struct Ring([u8; 4096 + 8192]); // control page + an 8 KiB data area
/// static mut RING: Ring = Ring([0; 4096 + 8192]);
///
/// // SAFETY: the only reference to RING this program makes.
/// let buf = unsafe { &mut *core::ptr::addr_of_mut!(RING.0) };
/// let mut map = Mapping::new(buf, 4096).unwrap();
/// let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
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
    pub unsafe fn new(mem: M, config: ProducerConfig) -> Result<Self, LayoutError> {
        // SAFETY: forwarded contract.
        unsafe { Producer::with_hooks(mem, config, NoHooks) }
    }
}

impl<M: RingMemory, H: Hooks<M>> Producer<M, H> {
    /// Give the hooks a chance to run a nested writer at `at` (a test build's only: without
    /// the `test-hooks` feature there are no preemption points and this is nothing).
    #[inline(always)]
    fn preempt(&self, at: PreemptPoint) {
        #[cfg(any(test, feature = "test-hooks"))]
        self.hooks.preempt(at, self);
        #[cfg(not(any(test, feature = "test-hooks")))]
        let _ = at;
    }

    /// As [`Producer::new`], with hooks.
    ///
    /// # Safety
    /// As [`Producer::new`].
    pub unsafe fn with_hooks(mem: M, config: ProducerConfig, hooks: H) -> Result<Self, LayoutError> {
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
    /// use perfring::producer::{ProducerConfig, EventIdentity};
    /// use perfring::{split, memory::Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
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
}

/// Marks the branch that calls it as rare, for code layout (`core::hint::cold_path` is newer
/// than the crate's minimum Rust).
#[cold]
#[inline(never)]
fn unlikely() {}

/// Refuse, before counting anything, a record size that is not a multiple of 8 from 8 to
/// [`MAX_RECORD_SIZE`] (`output_begin` and `BatchWriter::output`).
#[inline(always)]
fn check_size(size: usize) -> Result<(), OutputError> {
    if size % 8 != 0 || !(8..=MAX_RECORD_SIZE).contains(&size) {
        return Err(size_error(size));
    }
    Ok(())
}

/// A whole record's header must give its length (checked after [`check_size`] where both are:
/// a record shorter than a header has no `size` to compare, and is refused by that one).
#[inline(always)]
fn check_header(record: &[u8]) -> Result<(), OutputError> {
    match record.get(6..8) {
        Some(&[a, b]) if usize::from(u16::from_ne_bytes([a, b])) != record.len() => {
            Err(header_error(u16::from_ne_bytes([a, b]), record.len()))
        }
        _ => Ok(()),
    }
}

#[cold]
fn header_error(header: u16, len: usize) -> OutputError {
    OutputError::HeaderSize { header, len }
}

/// The error for a size [`check_size`] refuses.
#[cold]
fn size_error(size: usize) -> OutputError {
    if size > MAX_RECORD_SIZE && size % 8 == 0 {
        OutputError::TooLarge { size }
    } else {
        OutputError::BadSize { size }
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
        LOST_BODY_SIZE + writer.sample_id.map_or(0, |(st, _)| SampleId::size(st))
    } else {
        0
    }
}
