//! The kernel's side of a `BPF_MAP_TYPE_USER_RINGBUF`: `bpf_user_ringbuf_drain`, validating
//! each sample as `__bpf_user_ringbuf_peek` does (user space writes the whole ring: every word
//! of it is untrusted), and `producer_pos` against the ring's size too, which the kernel does
//! not ([`RingbufError::ProducerPosTooFarAhead`]). For tests of a user-ringbuf producer, and
//! for rings that follow the same protocol between two processes of ours.

use core::ops::ControlFlow;

use super::abi::{record_len, Notify, BUSY_BIT, DISCARD_BIT, HEADER_SIZE, MAX_DRAIN_SAMPLES, MAX_DRAIN_SAMPLE_SIZE};
use super::error::RingbufError;
use super::lock::{ReserveLock, SpinLock};
use super::memory::{check_size, RingbufMemory};
use crate::fences::{RB_ONCE, U3_URB_PRODUCER_LOAD, U5_URB_HEADER_LOAD, U6_URB_CONSUMER_STORE};

/// What one drain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Drained {
    /// Samples handed to the callback (and released).
    pub samples: usize,
    /// Discarded samples skipped.
    pub discarded: usize,
    /// Whether the drain woke the producer (the kernel's `irq_work_queue`, which makes the
    /// user ringbuf's fd writable): with [`Notify::Adaptive`], when it drained or skipped
    /// anything.
    pub woke: bool,
}

/// One step of [`Drain::drain`]: `__bpf_user_ringbuf_peek`'s outcomes.
enum Peek {
    /// A sample of this size is in the scratch; its record takes `total` bytes.
    Sample { size: usize, total: usize },
    /// A discarded sample was skipped (`-EAGAIN`).
    Discarded,
    /// Nothing to drain (`-ENODATA`): empty, or the next sample is BUSY.
    NoData,
}

/// The kernel's drain of a user ringbuf (`bpf_user_ringbuf_drain`): one drain at a time (a
/// second one fails with [`RingbufError::DrainBusy`], the kernel's `busy` word), samples in
/// reservation order up to the first BUSY one, discarded ones skipped, every header validated
/// before use, each sample copied into the caller's scratch with atomic loads before the
/// callback sees it.
pub struct Drain<M: RingbufMemory, L: ReserveLock = SpinLock> {
    mem: M,
    busy: L,
    mask: usize,
}

impl<M: RingbufMemory, L: ReserveLock> Drain<M, L> {
    /// A drain over `mem`; `busy` serializes drains (tried once, as the kernel's
    /// `atomic_try_cmpxchg(&rb->busy, ...)`). Any content of the ring is a sample or a typed
    /// error: the drain trusts nothing the producer wrote.
    pub fn new(mem: M, busy: L) -> Result<Self, RingbufError> {
        check_size(mem.size())?;
        let mask = mem.size() - 1;
        Ok(Drain { mem, busy, mask })
    }

    /// Drain up to [`MAX_DRAIN_SAMPLES`](super::MAX_DRAIN_SAMPLES) samples, calling `f` with
    /// each (a copy in `scratch`); `f` returns [`ControlFlow::Break`] to stop after its sample,
    /// as a BPF callback returns 1. `notify` says whether to wake the producer afterwards
    /// ([`Drained::woke`]).
    pub fn drain(
        &self,
        scratch: &mut [u8],
        notify: Notify,
        mut f: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<Drained, RingbufError> {
        let result = self.busy.with(true, || {
            let mut drained = Drained::default();
            // Samples and discards, each bounded by MAX_DRAIN_SAMPLES as the kernel's loop is.
            while drained.samples + drained.discarded < MAX_DRAIN_SAMPLES {
                match self.peek(scratch) {
                    Ok(Peek::NoData) => break,
                    Ok(Peek::Discarded) => drained.discarded += 1,
                    Ok(Peek::Sample { size, total }) => {
                        let flow = f(&scratch[..size]);
                        self.release(total);
                        drained.samples += 1;
                        if flow.is_break() {
                            break;
                        }
                    }
                    Err(e) => return Err((e, drained)),
                }
            }
            Ok(drained)
        });
        let (result, count) = match result {
            None => return Err(RingbufError::DrainBusy),
            Some(Ok(d)) => (Ok(d), d.samples + d.discarded),
            Some(Err((e, d))) => (Err(e), d.samples + d.discarded),
        };
        // The kernel wakes after releasing `busy`, on success and on error alike.
        let woke = match notify {
            Notify::Always => true,
            Notify::Never => false,
            Notify::Adaptive => count > 0,
        };
        result.map(|d| Drained { woke, ..d })
    }

    /// `__bpf_user_ringbuf_peek`, with the sample copied into `scratch`.
    fn peek(&self, scratch: &mut [u8]) -> Result<Peek, RingbufError> {
        let ring = self.mask + 1;
        // (U3): the producer's BUSY header and everything before it.
        let prod = self.mem.producer_pos().load(U3_URB_PRODUCER_LOAD);
        if prod % 8 != 0 {
            return Err(RingbufError::MisalignedProducerPos { producer_pos: prod });
        }
        // Our own word: only a drain stores it, under `busy`.
        let cons = self.mem.consumer_pos().load(RB_ONCE);
        if cons % 8 != 0 {
            return Err(RingbufError::MisalignedConsumerPos { consumer_pos: cons });
        }
        let available = prod.wrapping_sub(cons);
        // The kernel's `cons_pos >= prod_pos`: nothing, or a producer position behind ours.
        if available == 0 || available > usize::MAX / 2 {
            return Ok(Peek::NoData);
        }
        if available > ring {
            return Err(RingbufError::ProducerPosTooFarAhead { producer_pos: prod, consumer_pos: cons, size: ring });
        }
        let off = cons & self.mask;
        // (U4)'s partner (U5): a committed header comes with its sample's bytes.
        let len = self.mem.len_word(off).load(U5_URB_HEADER_LOAD);
        let size = len & !(BUSY_BIT | DISCARD_BIT);
        let total = record_len(size as usize).unwrap_or(usize::MAX);
        if total > available {
            return Err(RingbufError::RecordPastProducer { position: cons, size, available });
        }
        // (The kernel's `-E2BIG` for a record larger than the ring cannot happen here: the
        // record fits what `producer_pos` published, which fits the ring.)
        if size as usize > MAX_DRAIN_SAMPLE_SIZE {
            return Err(RingbufError::DrainSampleTooLarge { position: cons, size });
        }
        if len & DISCARD_BIT != 0 {
            // (U6): skipping frees the bytes too.
            self.mem.consumer_pos().store(cons.wrapping_add(total), U6_URB_CONSUMER_STORE);
            return Ok(Peek::Discarded);
        }
        if len & BUSY_BIT != 0 {
            return Ok(Peek::NoData);
        }
        let size = size as usize;
        let padded = (size + 3) & !3;
        let scratch_len = scratch.len();
        let dst =
            scratch.get_mut(..padded).ok_or(RingbufError::ScratchTooSmall { needed: padded, scratch: scratch_len })?;
        let start = cons.wrapping_add(HEADER_SIZE) & self.mask;
        let first = padded.min(ring - start);
        let (a, b) = dst.split_at_mut(first);
        if !(self.mem.load_words(start, a) && self.mem.load_words(0, b)) {
            return Err(RingbufError::LoadFailed { position: cons });
        }
        Ok(Peek::Sample { size, total })
    }

    /// `__bpf_user_ringbuf_sample_release`: free the sample just read (U6).
    fn release(&self, total: usize) {
        let cons = self.mem.consumer_pos().load(RB_ONCE);
        self.mem.consumer_pos().store(cons.wrapping_add(total), U6_URB_CONSUMER_STORE);
    }

    /// The memory this drain reads.
    pub fn memory(&self) -> &M {
        &self.mem
    }
}

impl<M: RingbufMemory, L: ReserveLock> core::fmt::Debug for Drain<M, L> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Drain").field("size", &(self.mask + 1)).finish_non_exhaustive()
    }
}
