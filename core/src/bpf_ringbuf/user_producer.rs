//! The user-space side of a `BPF_MAP_TYPE_USER_RINGBUF`: user space reserves, writes, submits
//! or discards; a BPF program drains ([`Drain`](super::Drain)). libbpf's
//! `user_ring_buffer__reserve`, `__submit` and `__discard` (`tools/lib/bpf/ringbuf.c`).

use super::abi::{record_len, BUSY_BIT, DISCARD_BIT, HEADER_SIZE, MAX_SAMPLE_SIZE};
use super::error::RingbufError;
use super::lock::{ReserveLock, SpinLock};
use super::memory::{check_size, reserved_mut, write_reserved, RingbufMemory};
use crate::fences::{RB_ONCE, U1_URB_CONSUMER_LOAD, U2_URB_PRODUCER_STORE, U4_URB_COMMIT};
use crate::loom::AtomicUsize;

/// The producer of a user ringbuf. Reservations are made under a lock (libbpf leaves that to
/// the caller: its reserve is not thread-safe); submits and discards need none and may come in
/// any order. The kernel drains in reservation order and stops at the first BUSY sample.
///
/// The kernel's mapping of a user ringbuf makes the consumer page read-only and the producer
/// page and data writable: over it, this value is the only writer of `producer_pos` and the
/// samples. Unlike the kernel's ring, records fill the whole area (libbpf reserves while
/// `size - (producer_pos - consumer_pos)` covers the record).
///
/// ```
/// use core::ops::ControlFlow;
/// use perfring::bpf_ringbuf::{Drain, ModelRingbuf, Notify, SpinLock, UserProducer};
///
/// let ring = ModelRingbuf::<64>::new().unwrap(); // 512 bytes
/// // SAFETY: the ring's only producer; its consumer is the drain below.
/// let producer = unsafe { UserProducer::new(&ring, SpinLock::new()) }.unwrap();
/// let mut r = producer.reserve(3).unwrap();
/// r.write(0, b"abc").unwrap();
/// r.submit();
/// producer.reserve(8).unwrap().discard();
///
/// // What bpf_user_ringbuf_drain does in the kernel: the sample, then the discard skipped.
/// let drain = Drain::new(&ring, SpinLock::new()).unwrap();
/// let mut scratch = [0u8; 64];
/// let d = drain.drain(&mut scratch, Notify::Adaptive, |s| {
///     assert_eq!(s, b"abc");
///     ControlFlow::Continue(())
/// });
/// assert_eq!(d.map(|d| (d.samples, d.discarded, d.woke)), Ok((1, 1, true)));
/// ```
pub struct UserProducer<M: RingbufMemory, L: ReserveLock = SpinLock> {
    mem: M,
    lock: L,
    mask: usize,
    failed: AtomicUsize,
}

impl<M: RingbufMemory, L: ReserveLock> UserProducer<M, L> {
    /// A user-ringbuf producer over `mem`, reserving under `lock`.
    ///
    /// # Safety
    /// This value is the ring's only producer (shared by reference), and the ring's consumer
    /// (the kernel's drain, or [`Drain`](super::Drain)) stores in `consumer_pos` only positions
    /// up to which it has finished reading: the producer writes the bytes it frees.
    pub unsafe fn new(mem: M, lock: L) -> Result<Self, RingbufError> {
        check_size(mem.size())?;
        let mask = mem.size() - 1;
        Ok(UserProducer { mem, lock, mask, failed: AtomicUsize::new(0) })
    }

    /// Reserve a sample of `size` bytes (`user_ring_buffer__reserve`): its header says BUSY
    /// until it is submitted or discarded; dropping the reservation discards it.
    pub fn reserve(&self, size: usize) -> Result<UserReservation<'_, M, L>, RingbufError> {
        match self.reserve_pos(size) {
            Ok(pos) => Ok(UserReservation { producer: self, pos, size, open: true }),
            Err(e) => {
                self.failed.fetch_add(1, RB_ONCE);
                Err(e)
            }
        }
    }

    /// Reservations that failed since this producer was made.
    pub fn failed_reservations(&self) -> usize {
        self.failed.load(RB_ONCE)
    }

    /// The memory this producer writes.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    fn reserve_pos(&self, size: usize) -> Result<usize, RingbufError> {
        let ring = self.mask + 1;
        let total = match record_len(size) {
            // libbpf: E2BIG for a size with a flag bit, or a record larger than the ring.
            Some(total) if size <= MAX_SAMPLE_SIZE && total <= ring => total,
            _ => return Err(RingbufError::SampleTooLarge { size, max: MAX_SAMPLE_SIZE.min(ring - HEADER_SIZE) }),
        };
        let locked = self.lock.with(false, || {
            // (U1): the drain's reads of what it freed are done before we write there.
            let cons = self.mem.consumer_pos().load(U1_URB_CONSUMER_LOAD);
            // Our own word: only this producer stores it, under the lock.
            let prod = self.mem.producer_pos().load(RB_ONCE);
            let used = prod.wrapping_sub(cons);
            if used > ring {
                return Err(RingbufError::ConsumerPosInvalid { consumer_pos: cons, producer_pos: prod });
            }
            if ring - used < total {
                return Err(RingbufError::NoSpace { needed: total, available: ring - used });
            }
            let off = prod & self.mask;
            // libbpf writes 0 into pg_off; the kernel never reads it.
            self.mem.pg_off_word(off).store(0, RB_ONCE);
            // The size is below 2^30 (MAX_SAMPLE_SIZE): the flag bits are free.
            self.mem.len_word(off).store(size as u32 | BUSY_BIT, RB_ONCE);
            // (U2): the BUSY header before the position that covers it.
            self.mem.producer_pos().store(prod.wrapping_add(total), U2_URB_PRODUCER_STORE);
            Ok(prod)
        });
        // Waiting for the lock always ends with it taken.
        locked.unwrap_or(Err(RingbufError::Contended))
    }

    /// `user_ringbuf_commit`: the header's final `len` (U4).
    fn commit(&self, pos: usize, size: usize, discard: bool) {
        let len = size as u32 | if discard { DISCARD_BIT } else { 0 };
        self.mem.len_word(pos & self.mask).swap(len, U4_URB_COMMIT);
    }
}

/// A reserved user-ringbuf sample: write it, then [`submit`](Self::submit) or
/// [`discard`](Self::discard) it. Dropped without either, it is discarded.
#[must_use = "a reservation is discarded when dropped"]
pub struct UserReservation<'p, M: RingbufMemory, L: ReserveLock = SpinLock> {
    producer: &'p UserProducer<M, L>,
    pos: usize,
    size: usize,
    open: bool,
}

impl<M: RingbufMemory, L: ReserveLock> UserReservation<'_, M, L> {
    /// The record's free-running position (of its header).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The sample's size.
    pub fn len(&self) -> usize {
        self.size
    }

    /// Whether the sample is empty.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Copy `src` into the sample at byte `at`.
    pub fn write(&mut self, at: usize, src: &[u8]) -> Result<(), RingbufError> {
        write_reserved(&self.producer.mem, self.producer.mask, (self.pos, self.size), at, src)
    }

    /// The sample as writable slices, the second non-empty only if it wraps the end of a singly
    /// mapped area; `None` if the memory lends no area.
    pub fn as_mut_slices(&mut self) -> Option<(&mut [u8], &mut [u8])> {
        reserved_mut(&self.producer.mem, self.producer.mask, (self.pos, self.size))
    }

    /// Submit the sample (`user_ring_buffer__submit`).
    pub fn submit(mut self) {
        self.open = false;
        self.producer.commit(self.pos, self.size, false);
    }

    /// Discard the sample (`user_ring_buffer__discard`): the drain skips it.
    pub fn discard(mut self) {
        self.open = false;
        self.producer.commit(self.pos, self.size, true);
    }
}

impl<M: RingbufMemory, L: ReserveLock> Drop for UserReservation<'_, M, L> {
    fn drop(&mut self) {
        if self.open {
            self.producer.commit(self.pos, self.size, true);
        }
    }
}

impl<M: RingbufMemory, L: ReserveLock> core::fmt::Debug for UserReservation<'_, M, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("UserReservation").field("position", &self.pos).field("len", &self.size).finish()
    }
}

impl<M: RingbufMemory, L: ReserveLock> core::fmt::Debug for UserProducer<M, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("UserProducer")
            .field("size", &(self.mask + 1))
            .field("failed_reservations", &self.failed_reservations())
            .finish_non_exhaustive()
    }
}
