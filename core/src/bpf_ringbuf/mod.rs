//! The BPF ring buffer: `BPF_MAP_TYPE_RINGBUF` (the kernel produces, user space consumes) and
//! `BPF_MAP_TYPE_USER_RINGBUF` (user space produces, a BPF program drains), over memory the
//! caller provides, with no allocator.
//!
//! ```text
//!  consumer page              producer page                  data area (2^n bytes, mapped twice)
//! +--------------------+     +-------------------------+    +-----------------------------------+
//! | consumer_pos (R7)  |     | producer_pos (R2)       |    | hdr|sample.. hdr|sample.. hdr|..  |
//! |  user space writes |     | pending_pos (kernel)    |    |  ^consumer_pos        ^producer_pos|
//! +--------------------+     +-------------------------+    +-----------------------------------+
//!  hdr = { u32 len: sample size | BUSY (bit 31) | DISCARD (bit 30); u32 pg_off }, 8-aligned
//! ```
//!
//! One ring serves every CPU: producers reserve under a lock ([`ReserveLock`]; the kernel's
//! `rb->spinlock`) in the order their records will be read, write their samples concurrently,
//! and commit or discard them in any order. A reserved record's header says BUSY; the consumer
//! reads committed records in reservation order, stops at the first BUSY one and skips the
//! discarded ones. The kernel maps the data area twice back to back, so that a record never
//! wraps for its reader; over caller memory a [`RingbufMapping`] may also be singly mapped, and the
//! consumer then copies a wrapping sample or hands out its two pieces ([`Wrapped`]).
//!
//! | file | what it is |
//! |---|---|
//! | `error` | [`RingbufError`]: whatever a ring refuses, from its layout to a drain |
//! | `abi` | `include/uapi/linux/bpf.h`'s constants, the header, [`record_len`], [`pg_off`], [`Notify`] |
//! | `memory` | the [`RingbufMemory`] seam: positions, header words, copies and views |
//! | `mapping` | [`RingbufMapping`]: the kernel's layout over real memory (singly or doubly mapped) |
//! | `model` | [`ModelRingbuf`]: loom atomics and cells, for `make loom` and `make loom-mutants` |
//! | `lock` | [`ReserveLock`] and [`SpinLock`] |
//! | `producer` | [`RingbufProducer`]: `__bpf_ringbuf_reserve`, `bpf_ringbuf_commit` and its wakeup rule |
//! | `consumer` | [`RingbufConsumer`]: libbpf's `ringbuf_process_ring`, hardened, and the check before sleeping |
//! | `user_producer` | [`UserProducer`]: libbpf's `user_ring_buffer__reserve`/`submit`/`discard` |
//! | `drain` | [`Drain`]: the kernel's `bpf_user_ringbuf_drain` and `__bpf_user_ringbuf_peek` |
//!
//! Every ordering is a named item of [`crate::fences`], (R1)–(R10) and (U1)–(U6), each citing
//! the kernel or libbpf site it mirrors and the item it pairs with; `make loom-mutants` weakens
//! each in turn and shows a model of `tests/tests/loom_bpf_ringbuf.rs` failing.
//!
//! # Wakeups
//!
//! A commit decides whether to wake the consumer ([`Notify`]): always, never, or (the default)
//! only if the consumer has caught up to this very record. A consumer that sleeps must first
//! publish its position and re-check ([`RingbufConsumer::prepare_to_sleep`]), with a full fence
//! between the two (R8) that pairs with the commit's (R4): otherwise a record can be committed
//! while the consumer decides to sleep, and neither side sees the other (aya's bug, fixed in
//! 7277a57e). Discarded records need a wakeup too: a consumer waiting at a record that is
//! discarded is woken, so that it goes on past it.
//!
//! # Trust
//!
//! The producer of a kernel ring is the kernel: the consumer may be [trusted](RingbufConsumer::trusted)
//! (zero-copy views), or [untrusted](RingbufConsumer::untrusted) (every sample copied with atomic loads,
//! then used), and either way validates what the positions and headers say: a `producer_pos`
//! that is misaligned, goes backwards or runs more than the ring ahead, a header whose length
//! passes `producer_pos`, a `pg_off` the kernel would not write — typed errors, with bounded
//! work and no read outside the ring. Producers never trust `consumer_pos` further than the ring
//! ([`RingbufError::ConsumerPosInvalid`]), and the kernel's `pending_pos` keeps a reservation
//! from lapping a record still being written whatever the consumer stores. The user ringbuf's
//! [`Drain`] trusts nothing user space wrote, as the kernel's.

mod abi;
mod consumer;
mod drain;
mod error;
mod lock;
#[cfg(not(loom))]
mod mapping;
mod memory;
mod model;
mod producer;
mod user_producer;

#[cfg(all(test, not(loom)))]
mod tests;

pub use abi::{
    pg_off, record_len, Notify, BPF_RB_FORCE_WAKEUP, BPF_RB_NO_WAKEUP, BUSY_BIT, DISCARD_BIT, HEADER_SIZE,
    MAX_DRAIN_SAMPLES, MAX_DRAIN_SAMPLE_SIZE, MAX_SAMPLE_SIZE, META_PAGES,
};
pub use consumer::{Config, Payload, Publish, RingbufBatch, RingbufConsumer, RingbufRecord, Wrapped};
pub use drain::{Drain, Drained};
pub use error::RingbufError;
pub use lock::{ReserveLock, SpinLock};
#[cfg(not(loom))]
pub use mapping::RingbufMapping;
pub use memory::{ExclusiveRingbuf, RingbufMemory, MAX_SIZE, MIN_SIZE};
pub use model::ModelRingbuf;
pub use producer::{Reservation, RingbufHooks, RingbufProducer};
pub use user_producer::{UserProducer, UserReservation};

/// The two ends of a ring whose memory `M` is borrowed for `'a`: a producer reserving under a
/// [`SpinLock`], and a trusted consumer.
pub type Ends<'a, M> = (RingbufProducer<&'a M>, RingbufConsumer<&'a M>);

/// Split exclusively borrowed ring memory into its producer and its zero-copy consumer.
///
/// The exclusive borrow of memory that one value owns ([`ExclusiveRingbuf`]) is the proof that no other
/// producer writes this ring and no other consumer frees its bytes, which is what makes the
/// trusted consumer and the producer safe to hand out. Share the producer by reference between
/// the threads that produce.
pub fn split_ringbuf<M: ExclusiveRingbuf>(mem: &mut M) -> Result<Ends<'_, M>, RingbufError> {
    let mem: &M = mem;
    // SAFETY: `mem` was borrowed exclusively and owns its ring alone (`ExclusiveRingbuf`): this is its
    // only producer, and the consumer's peer is this protocol-following producer.
    unsafe { Ok((RingbufProducer::new(mem, SpinLock::new())?, RingbufConsumer::trusted(mem)?)) }
}
