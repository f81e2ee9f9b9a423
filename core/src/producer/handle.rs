//! [`Handle`]: an open reservation, filled by the writer and published when it ends.

use core::marker::PhantomData;

use super::{Hooks, OutputError, PreemptPoint, Producer};
use crate::fences::LOCAL;
use crate::loom::local_compare_exchange;
use crate::memory::RingMemory;
use crate::record::{Endian, Header};

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
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), OutputError> {
        if bytes.len() > self.remaining {
            return Err(OutputError::PastReservation { requested: bytes.len(), remaining: self.remaining });
        }
        self.producer.preempt(PreemptPoint::InPayload);
        self.copy_in(bytes);
        Ok(())
    }

    /// Advance `n` bytes without writing them (`perf_output_skip`). Unlike the kernel, whose
    /// skipped bytes keep stale ring content, perfring zeroes them: a producer facing an
    /// untrusted consumer must not leak old records.
    ///
    /// ```
    /// use perfring::producer::{ProducerConfig, EventIdentity};
    /// use perfring::{split, memory::Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
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
    pub fn skip(&mut self, n: usize) -> Result<(), OutputError> {
        if n > self.remaining {
            return Err(OutputError::PastReservation { requested: n, remaining: self.remaining });
        }
        self.producer.preempt(PreemptPoint::InPayload);
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
    pub(super) fn open(producer: &'p Producer<M, H>, start: usize, total: usize, wakeup: usize) -> Self {
        Self::at(producer, start & producer.mask, total, wakeup)
    }

    /// A handle for `remaining` reserved bytes from data-area offset `off`.
    #[inline(always)]
    pub(super) fn at(producer: &'p Producer<M, H>, off: usize, remaining: usize, wakeup: usize) -> Self {
        Handle { producer, off, start: off, remaining, wakeup, _not_send: PhantomData }
    }

    /// Next data offset, bytes remaining and opening wakeup stamp, without ending the writer (for
    /// [`Handle::at`] to resume).
    #[inline(always)]
    pub(super) fn into_parts(self) -> (usize, usize, usize) {
        let this = core::mem::ManuallyDrop::new(self);
        (this.off, this.remaining, this.wakeup)
    }

    #[inline(always)]
    pub(super) fn copy_in(&mut self, bytes: &[u8]) {
        debug_assert!(bytes.len() <= self.remaining);
        self.off = self.producer.put(self.off, bytes);
        self.remaining -= bytes.len();
    }

    pub(super) fn zero_fill(&mut self, n: usize) {
        debug_assert!(n <= self.remaining);
        self.off = self.producer.put_zeros(self.off, n);
        self.remaining -= n;
    }

    #[inline(always)]
    pub(super) fn finish(&mut self) -> bool {
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
    pub(super) fn finish_short(&mut self) {
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
