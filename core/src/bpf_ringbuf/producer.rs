//! The kernel's side of a BPF ring buffer: reserve under the lock, write, commit or discard in
//! any order, decide the wakeup (`__bpf_ringbuf_reserve`, `bpf_ringbuf_commit`,
//! `bpf_ringbuf_output` in `kernel/bpf/ringbuf.c`).

use super::abi::{pg_off, record_len, Notify, BUSY_BIT, DISCARD_BIT, HEADER_SIZE, MAX_SAMPLE_SIZE};
use super::error::RingbufError;
use super::lock::{ReserveLock, SpinLock};
use super::memory::{reserved_mut, write_reserved, RingbufMemory};
use crate::fences::{fence, R1_RB_CONSUMER_LOAD, R2_RB_PRODUCER_STORE, R3_RB_COMMIT, R4_RB_COMMIT_FENCE, RB_ONCE};
use crate::loom::AtomicUsize;
use crate::producer::NoHooks;

/// Callbacks from inside the producer; each default is empty and compiles to nothing.
///
/// [`wakeup`](RingbufHooks::wakeup) is for every producer. `in_lock`, which lets a test or a
/// simulator reserve from inside the lock as an NMI would, exists only with the crate's
/// `test-hooks` feature (as the perf producer's `Hooks::preempt`).
pub trait RingbufHooks<M: RingbufMemory, L: ReserveLock>: Sized {
    /// Called with the lock held, before the reservation reads the positions: where an NMI on
    /// the holder's CPU would interrupt it (and find the lock taken, as the kernel's
    /// `spin_trylock_irqsave` does in NMI context).
    #[cfg(any(test, feature = "test-hooks"))]
    #[inline(always)]
    fn in_lock(&self, producer: &RingbufProducer<M, L, Self>) {
        let _ = producer;
    }

    /// Called when a commit or discard decides to wake the consumer: the kernel's
    /// `irq_work_queue(&rb->work)`, whose work runs `wake_up_all(&rb->waitq)`. It runs in the
    /// committing context (possibly an interrupt): signal an eventfd, set a flag, defer work.
    #[inline(always)]
    fn wakeup(&self, producer: &RingbufProducer<M, L, Self>) {
        let _ = producer;
    }
}

/// [`NoHooks`], the perf producer's hooks that do nothing, are this producer's too (wakeups are
/// then only the commits' return values).
impl<M: RingbufMemory, L: ReserveLock> RingbufHooks<M, L> for NoHooks {}

/// The producer side of a `BPF_MAP_TYPE_RINGBUF` as the kernel runs it: any number of contexts
/// (CPUs, and interrupts nested on them) reserve under one lock, write their samples, and commit
/// or discard them in any order; the consumer reads them in reservation order.
///
/// Share it by reference between the contexts that produce (it is `Sync` when its memory, lock
/// and hooks are). [`reserve`](Self::reserve) waits for the lock; [`try_reserve`](Self::try_reserve)
/// is the NMI path.
///
/// ```
/// use perfring::bpf_ringbuf::{split_ringbuf, RingbufMapping, Notify};
///
/// #[repr(C, align(8))]
/// struct Buf([u8; 2 * 4096 + 4096]); // consumer page, producer page, a 4 KiB data area
/// let mut buf = Buf([0; 2 * 4096 + 4096]);
/// let mut map = RingbufMapping::new(&mut buf.0, 4096).unwrap();
/// let (producer, mut consumer) = split_ringbuf(&mut map).unwrap();
///
/// let mut first = producer.reserve(5).unwrap();
/// let second = producer.reserve(3).unwrap();
/// first.write(0, b"hello").unwrap();
/// second.discard(Notify::Adaptive); // discarded: never read
/// assert!(first.submit(Notify::Adaptive)); // the consumer waits at this record: woken
///
/// let mut scratch = [0u8; 64];
/// let mut got = [0u8; 5];
/// let n = consumer.for_each(&mut scratch, |r| assert_eq!(r.payload.copy_to(&mut got), 5)).unwrap();
/// assert_eq!((n, &got), (1, b"hello"));
/// ```
pub struct RingbufProducer<M: RingbufMemory, L: ReserveLock = SpinLock, H: RingbufHooks<M, L> = NoHooks> {
    mem: M,
    lock: L,
    hooks: H,
    mask: usize,
    /// Reservations that failed, for any reason.
    failed: AtomicUsize,
}

impl<M: RingbufMemory, L: ReserveLock> RingbufProducer<M, L> {
    /// A producer over `mem`, reserving under `lock`. Each header's `pg_off` counts pages of the
    /// memory's [page size](RingbufMemory::page_size), as the kernel's do.
    ///
    /// # Safety
    /// Every party that produces into this ring does so through this value (shared by
    /// reference), or under the same lock with the same protocol; and the ring's consumer
    /// frees only what it has read (`consumer_pos`). [`split`](super::split_ringbuf) is the safe way to
    /// get one.
    pub unsafe fn new(mem: M, lock: L) -> Result<Self, RingbufError> {
        // SAFETY: the caller's contract.
        unsafe { Self::with_hooks(mem, lock, NoHooks) }
    }
}

impl<M: RingbufMemory, L: ReserveLock, H: RingbufHooks<M, L>> RingbufProducer<M, L, H> {
    /// [`RingbufProducer::new`] with hooks.
    ///
    /// # Safety
    /// As for [`RingbufProducer::new`].
    pub unsafe fn with_hooks(mem: M, lock: L, hooks: H) -> Result<Self, RingbufError> {
        super::memory::check_size(mem.size())?;
        let mask = mem.size() - 1;
        Ok(RingbufProducer { mem, lock, hooks, mask, failed: AtomicUsize::new(0) })
    }

    /// Reserve a record for a `size`-byte sample, waiting for the lock
    /// (`bpf_ringbuf_reserve`). The consumer stops at it until it is committed or discarded;
    /// dropping the [`Reservation`] discards it.
    #[inline]
    pub fn reserve(&self, size: usize) -> Result<Reservation<'_, M, L, H>, RingbufError> {
        self.reserve_in(size, false)
    }

    /// [`reserve`](Self::reserve), taking the lock only if it is free: the kernel's path in NMI
    /// context, where waiting could spin forever on the holder the NMI interrupted. Fails with
    /// [`RingbufError::Contended`] otherwise.
    #[inline]
    pub fn try_reserve(&self, size: usize) -> Result<Reservation<'_, M, L, H>, RingbufError> {
        self.reserve_in(size, true)
    }

    /// Reserve, copy `data`, commit (`bpf_ringbuf_output`). Returns whether the consumer was
    /// woken.
    pub fn output(&self, data: &[u8], notify: Notify) -> Result<bool, RingbufError> {
        let mut r = self.reserve(data.len())?;
        r.fill(data);
        Ok(r.submit(notify))
    }

    /// Reservations that failed since this producer was made (the kernel does not count them;
    /// BPF programs count their own `NULL` returns).
    pub fn failed_reservations(&self) -> usize {
        self.failed.load(RB_ONCE)
    }

    /// The memory this producer writes.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// The hooks.
    pub fn hooks(&self) -> &H {
        &self.hooks
    }

    fn reserve_in(&self, size: usize, try_only: bool) -> Result<Reservation<'_, M, L, H>, RingbufError> {
        let result = self.reserve_pos(size, try_only);
        match result {
            Ok(pos) => Ok(Reservation { producer: self, pos, size, open: true }),
            Err(e) => {
                self.failed.fetch_add(1, RB_ONCE);
                Err(e)
            }
        }
    }

    /// `__bpf_ringbuf_reserve`: returns the new record's position.
    #[inline]
    fn reserve_pos(&self, size: usize, try_only: bool) -> Result<usize, RingbufError> {
        let ring = self.mask + 1;
        let max = MAX_SAMPLE_SIZE.min(ring - HEADER_SIZE);
        let len = match record_len(size) {
            Some(len) if size <= MAX_SAMPLE_SIZE && len <= ring => len,
            _ => return Err(RingbufError::SampleTooLarge { size, max }),
        };
        // (R1), before the lock as in the kernel: what the consumer read before this store is
        // done before we write into the space it freed.
        let cons = self.mem.consumer_pos().load(R1_RB_CONSUMER_LOAD);
        let locked = self.lock.with(try_only, || {
            #[cfg(any(test, feature = "test-hooks"))]
            self.hooks.in_lock(self);
            let prod = self.mem.producer_pos().load(RB_ONCE);
            let pend = self.advance_pending(prod);
            if prod.wrapping_sub(cons) > ring {
                return Err(RingbufError::ConsumerPosInvalid { consumer_pos: cons, producer_pos: prod });
            }
            let new_prod = prod.wrapping_add(len);
            // The kernel's two space checks: the new record ends at most `size - 1` bytes after
            // what the consumer has freed, and after the oldest record still being written.
            if new_prod.wrapping_sub(cons) > self.mask || new_prod.wrapping_sub(pend) > self.mask {
                let used = prod.wrapping_sub(cons).max(prod.wrapping_sub(pend));
                return Err(RingbufError::NoSpace { needed: len, available: self.mask.saturating_sub(used) & !7 });
            }
            let off = prod & self.mask;
            self.mem.pg_off_word(off).store(pg_off(off, self.mem.page_size()), RB_ONCE);
            // The size is below 2^30 (MAX_SAMPLE_SIZE): the flag bits are free.
            self.mem.len_word(off).store(size as u32 | BUSY_BIT, RB_ONCE);
            // (R2): the BUSY header is visible before the position that covers it.
            self.mem.producer_pos().store(new_prod, R2_RB_PRODUCER_STORE);
            Ok(prod)
        });
        locked.ok_or(RingbufError::Contended)?
    }

    /// The kernel's `pending_pos` walk (under the lock): move `pending_pos` past the records
    /// that are committed or discarded, up to the first one still BUSY or `prod`. Each step
    /// moves it by a whole record, never past `prod`, so the walk takes at most `size / 8`
    /// steps even over corrupt headers (which stop it: the space stays taken).
    fn advance_pending(&self, prod: usize) -> usize {
        let mut pend = self.mem.pending_pos().load(RB_ONCE);
        if prod.wrapping_sub(pend) > self.mask + 1 {
            // Only our own stores write it: a value out of range means the memory was reset
            // under us. Nothing older than `prod` can be pending then.
            pend = prod;
        }
        while pend != prod {
            let len = self.mem.len_word(pend & self.mask).load(RB_ONCE);
            if len & BUSY_BIT != 0 {
                break;
            }
            match record_len((len & !DISCARD_BIT) as usize) {
                Some(total) if total <= prod.wrapping_sub(pend) => pend = pend.wrapping_add(total),
                _ => break,
            }
        }
        self.mem.pending_pos().store(pend, RB_ONCE);
        pend
    }

    /// `bpf_ringbuf_commit`: clear BUSY (and set DISCARD), then decide the wakeup.
    #[inline]
    fn commit(&self, pos: usize, size: usize, discard: bool, notify: Notify) -> bool {
        let off = pos & self.mask;
        let len = size as u32 | if discard { DISCARD_BIT } else { 0 };
        // (R3): the sample's bytes before the header that says they are there.
        self.mem.len_word(off).swap(len, R3_RB_COMMIT);
        // (R4): the header store before the load that decides the wakeup (pairs with the
        // consumer's (R8) before it decides to sleep).
        fence(R4_RB_COMMIT_FENCE);
        let wake = match notify {
            Notify::Always => true,
            Notify::Never => false,
            // The consumer has caught up to this record and waits for it.
            Notify::Adaptive => self.mem.consumer_pos().load(RB_ONCE) & self.mask == off,
        };
        if wake {
            self.hooks.wakeup(self);
        }
        wake
    }
}

/// A reserved record: write its sample, then [`submit`](Self::submit) or
/// [`discard`](Self::discard) it. Dropped without either, it is discarded
/// ([`Notify::Adaptive`]), so the consumer never waits behind it forever.
#[must_use = "a reservation is discarded when dropped"]
pub struct Reservation<'p, M: RingbufMemory, L: ReserveLock = SpinLock, H: RingbufHooks<M, L> = NoHooks> {
    producer: &'p RingbufProducer<M, L, H>,
    pos: usize,
    size: usize,
    open: bool,
}

impl<M: RingbufMemory, L: ReserveLock, H: RingbufHooks<M, L>> Reservation<'_, M, L, H> {
    /// The record's free-running position (of its header).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The sample's size.
    pub fn len(&self) -> usize {
        self.size
    }

    /// Whether the sample is empty (a zero-size reservation: a record of its header alone).
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Copy `src` into the sample at byte `at`.
    pub fn write(&mut self, at: usize, src: &[u8]) -> Result<(), RingbufError> {
        write_reserved(&self.producer.mem, self.producer.mask, (self.pos, self.size), at, src)
    }

    /// Copy `data` over the whole sample (at most its size; the rest keeps what the ring held).
    fn fill(&mut self, data: &[u8]) {
        let n = data.len().min(self.size);
        let written = self.write(0, &data[..n]);
        debug_assert!(written.is_ok());
    }

    /// The sample as writable slices, the second non-empty only if the record wraps the end of
    /// a singly mapped area; `None` if the memory lends no area (the loom model).
    pub fn as_mut_slices(&mut self) -> Option<(&mut [u8], &mut [u8])> {
        reserved_mut(&self.producer.mem, self.producer.mask, (self.pos, self.size))
    }

    /// Commit the record (`bpf_ringbuf_submit`). Returns whether the consumer was woken (by
    /// `notify`'s rule; the producer's hooks were called if so).
    pub fn submit(mut self, notify: Notify) -> bool {
        self.open = false;
        self.producer.commit(self.pos, self.size, false, notify)
    }

    /// Discard the record (`bpf_ringbuf_discard`): the consumer skips it. Returns whether the
    /// consumer was woken (a consumer waiting at this record is woken by the adaptive rule too,
    /// so that it goes on past it).
    pub fn discard(mut self, notify: Notify) -> bool {
        self.open = false;
        self.producer.commit(self.pos, self.size, true, notify)
    }
}

impl<M: RingbufMemory, L: ReserveLock, H: RingbufHooks<M, L>> Drop for Reservation<'_, M, L, H> {
    fn drop(&mut self) {
        if self.open {
            self.producer.commit(self.pos, self.size, true, Notify::Adaptive);
        }
    }
}

impl<M: RingbufMemory, L: ReserveLock, H: RingbufHooks<M, L>> core::fmt::Debug for Reservation<'_, M, L, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Reservation").field("position", &self.pos).field("len", &self.size).finish()
    }
}

impl<M: RingbufMemory, L: ReserveLock, H: RingbufHooks<M, L>> core::fmt::Debug for RingbufProducer<M, L, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RingbufProducer")
            .field("size", &(self.mask + 1))
            .field("failed_reservations", &self.failed_reservations())
            .finish_non_exhaustive()
    }
}
