//! Every memory ordering of the protocol, named, with the pairing it serves.
//!
//! This module is the kernel's barrier comment in `perf_output_put_handle` turned into items:
//!
//! ```text
//!   kernel (producer)                      user space (consumer)
//!   if (LOAD ->data_tail) {                LOAD ->data_head
//!                (A)                                    (C)
//!     STORE $data                          LOAD $data
//!                (B)                                    (D)
//!     STORE ->data_head                    STORE ->data_tail
//!   }
//!   Where A pairs with D, and B pairs with C.
//! ```
//!
//! No other module of `perfring` names an `Ordering` variant: they import these items. Each item
//! can be weakened to `Relaxed` by exactly one build switch, `--cfg perfring_weaken="X"`, to make
//! a *mutant* build; `make loom-mutants` builds one mutant per item and shows that a model catches
//! it (a loom-reported data race or a failed byte/conservation check). The table of which model
//! catches which mutant is printed by `make loom-mutants`.
//!
//! The producer's own state (`rb->head`, `nest`, `lost`, `wakeup`, `events`, `paused`) is the
//! kernel's `local_t`: touched only by one CPU and the interrupts that nest on it. Atomicity
//! against an interrupt is all it needs; the order against an interrupt on the same CPU is
//! program order plus compiler barriers ([`crate::loom`]'s `compiler_barrier`), so those
//! accesses use [`LOCAL`].
//!
//! Public are the items that code outside this crate pairs with: (A)–(D), [`LOCAL`] and
//! [`fence`] (a memory implementation that can only load relaxed, such as `perfring-linux`'s
//! read-only mapping, builds (C) from them). The seqlock's (S1)–(S4), the BPF ring buffer's
//! (R1)–(R10) and (U1)–(U6) and the compiler barrier are used only by this crate's own
//! `selfmon`, `bpf_ringbuf` and `producer`; they are crate-private items of this module, each
//! with its pairing, read in the source (or `cargo doc --document-private-items`).

use core::sync::atomic::Ordering;

/// Choose `strong`, or `Relaxed` when this fence is the one a mutant build weakens.
const fn weaken_if(mutant: bool, strong: Ordering) -> Ordering {
    if mutant {
        Ordering::Relaxed
    } else {
        strong
    }
}

/// **(A) acquire: the producer's load of `data_tail` before it writes record bytes; pairs with
/// (D).**
///
/// The consumer stores `data_tail` with (D) after its last read of the bytes it frees. Loading the
/// tail with acquire makes those reads happen-before the producer's stores into the freed space,
/// so the producer never overwrites a byte the consumer is still reading.
///
/// In the kernel (A) is no instruction: it is the *control dependency* from the tail load to the
/// `goto fail` branch; CPUs do not make stores after a branch visible before the load that decided
/// it. Rust's memory model (C11) has no control dependencies and loom cannot express one, so a
/// `Relaxed` load would be a real bug in Rust even though the kernel's plain load is correct. On
/// x86 and on ARMv8 (`ldar`/`ldapr`) an acquire load costs nothing or nearly nothing.
///
/// Used only where the tail is read: forward or backward rings in non-overwrite mode
/// (a writable mapping). In overwrite mode the tail is not loaded and (A) does not exist.
pub const A_TAIL_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "A"), Ordering::Acquire);

/// **(B) release: every record byte written by this CPU's writers before `data_head`; pairs with
/// (C).**
///
/// Executed once per outermost writer (`perf_output_put_handle`, step P2/P3), it publishes the
/// bytes of the outer record *and of every nested writer* that reserved before the head value it
/// stores. The kernel uses `smp_wmb()` ("a WMB is sufficient since it separates two WRITEs"); in
/// C11 a release store is the equivalent.
pub const B_HEAD_STORE: Ordering = weaken_if(cfg!(perfring_weaken = "B"), Ordering::Release);

/// **(C) acquire: the consumer's load of `data_head` before it reads record bytes; pairs with
/// (B).**
///
/// perf uses `smp_load_acquire` (or `READ_ONCE` + `smp_rmb`) in `ring_buffer_read_head`.
pub const C_HEAD_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "C"), Ordering::Acquire);

/// **(D) release: the consumer's reads of freed bytes before its `data_tail` store; pairs with
/// (A).**
///
/// The kernel asks for `smp_mb()` ("D needs to be a full barrier since it separates the data READ
/// from the tail WRITE"); perf itself uses `smp_store_release`. In C11 a release store orders all
/// earlier loads *and* stores before it, which is exactly what D must do, so release suffices.
pub const D_TAIL_STORE: Ordering = weaken_if(cfg!(perfring_weaken = "D"), Ordering::Release);

/// The producer's CPU-local state (`local_t` in the kernel) and plain single-copy-atomic reads
/// of words whose order is given by one of the fences above. No ordering of its own.
///
/// Also used for the untrusted consumer's word-by-word copy of record bytes: those loads are
/// ordered after the head load by (C), and the copy is validated afterwards.
pub const LOCAL: Ordering = Ordering::Relaxed;

/// The compiler-only barrier (the kernel's `barrier()`) between the producer's CPU-local steps
/// (`nest` increment, `rb->head` loads, `nest` stores; `put_handle` P1/P4/P5): it orders them
/// against an interrupt handler on the same CPU, which is all the nest protocol needs. Used with
/// `compiler_fence`, so it emits no instruction.
// Unused under loom, whose `compiler_barrier` is empty (loom models no interrupts).
#[cfg_attr(loom, allow(dead_code))]
pub(crate) const COMPILER_BARRIER: Ordering = Ordering::SeqCst;

/// **(S1) release fence: the seqlock writer's odd `lock` before its field stores; pairs with
/// (S4).**
///
/// The kernel's `perf_event_update_userpage` uses only `barrier()` because its reader is the
/// same task on the same CPU. A writer exporting counters to another CPU (a hypervisor to a
/// guest) needs this fence: if a reader's field load sees a value stored after it, the reader's
/// re-check of `lock` (after S4) sees the odd value and retries. Stronger than the kernel needs.
pub(crate) const S1_SEQ_WRITE_BEGIN: Ordering = weaken_if(cfg!(perfring_weaken = "S1"), Ordering::Release);

/// **(S2) release: the seqlock writer's field stores before the even `lock`; pairs with (S3).**
pub(crate) const S2_SEQ_WRITE_END: Ordering = weaken_if(cfg!(perfring_weaken = "S2"), Ordering::Release);

/// **(S3) acquire: the seqlock reader's first `lock` load before its field loads; pairs with
/// (S2).** A reader that sees an even `lock` from a finished update sees all of its fields.
pub(crate) const S3_SEQ_READ_BEGIN: Ordering = weaken_if(cfg!(perfring_weaken = "S3"), Ordering::Acquire);

/// **(S4) acquire fence: the seqlock reader's field loads before its second `lock` load; pairs
/// with (S1).** Without it the re-check could be satisfied before the fields were read.
pub(crate) const S4_SEQ_READ_END: Ordering = weaken_if(cfg!(perfring_weaken = "S4"), Ordering::Acquire);

// ---------------------------------------------------------------------------------------------
// The BPF ring buffer (`crate::bpf_ringbuf`): BPF_MAP_TYPE_RINGBUF, (R1)-(R10), and
// BPF_MAP_TYPE_USER_RINGBUF, (U1)-(U6). The kernel's `kernel/bpf/ringbuf.c` and libbpf's
// `tools/lib/bpf/ringbuf.c` name their barriers at each site; each item below cites its site and
// its partner:
//
//   producer (reserve, under the lock)        consumer (user space)
//   LOAD consumer_pos            (R1) <---+   LOAD producer_pos              (R5)
//   STORE hdr.len = size|BUSY             |   LOAD hdr.len                   (R6)
//   STORE producer_pos           (R2) ----|-> (R5)   LOAD the sample bytes
//   producer (commit)                     |   STORE consumer_pos             (R7)
//   STORE the sample bytes                +-- (R7)
//   XCHG hdr.len = size[|DISCARD](R3) ------> (R6)
//   FENCE (xchg's full barrier)  (R4) <-----> (R8) FENCE, then re-LOAD producer_pos / hdr.len
//   LOAD consumer_pos: wake if it is this record's position   before deciding to sleep
// ---------------------------------------------------------------------------------------------

/// **(R1) acquire: the BPF ringbuf producer's load of `consumer_pos` at reservation, before it
/// writes into the space the consumer freed; pairs with (R7).**
///
/// Kernel: `smp_load_acquire(&rb->consumer_pos)` in `__bpf_ringbuf_reserve`. The consumer's reads
/// of a record happen-before the producer's writes into the bytes that record occupied.
pub(crate) const R1_RB_CONSUMER_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "R1"), Ordering::Acquire);

/// **(R2) release: the BPF ringbuf producer's store of `producer_pos` at reservation, after the
/// new record's header (`len = size | BUSY`, `pg_off`); pairs with (R5).**
///
/// Kernel: `smp_store_release(&rb->producer_pos, new_prod_pos)` in `__bpf_ringbuf_reserve`
/// ("pairs with consumer's smp_load_acquire()"). A consumer that sees the new position sees the
/// BUSY header, never the bytes an older lap left there (a stale header is a phantom record).
pub(crate) const R2_RB_PRODUCER_STORE: Ordering = weaken_if(cfg!(perfring_weaken = "R2"), Ordering::Release);

/// **(R3) release: the BPF ringbuf commit's exchange of the header's `len` word (BUSY cleared,
/// DISCARD set or not), after the sample's bytes; pairs with (R6).**
///
/// Kernel: `xchg(&hdr->len, new_len)` in `bpf_ringbuf_commit` (a full barrier; its StoreLoad
/// half is (R4)). A consumer that sees the committed header sees every byte of the sample.
pub(crate) const R3_RB_COMMIT: Ordering = weaken_if(cfg!(perfring_weaken = "R3"), Ordering::Release);

/// **(R4) sequentially consistent fence: the commit's header store before its load of
/// `consumer_pos` (the wakeup decision); pairs with (R8).**
///
/// Kernel: the `xchg` in `bpf_ringbuf_commit` is a full barrier (`smp_mb()` on both sides), and
/// the load after it decides whether to `irq_work_queue` a wakeup ("if consumer caught up and is
/// waiting for our record"). With (R8) this is Dekker's pattern: either the producer sees the
/// consumer's new `consumer_pos` (and wakes it), or the consumer's re-check after publishing it
/// sees the committed header (and reads on instead of sleeping). Without either fence both can
/// read the old value, and a committed record waits with nobody to wake the consumer.
pub(crate) const R4_RB_COMMIT_FENCE: Ordering = weaken_if(cfg!(perfring_weaken = "R4"), Ordering::SeqCst);

/// **(R5) acquire: the BPF ringbuf consumer's load of `producer_pos`; pairs with (R2).**
///
/// libbpf: `smp_load_acquire(r->producer_pos)` in `ringbuf_process_ring`; the kernel's
/// `ringbuf_avail_data_sz` and `bpf_ringbuf_query` load it the same way.
pub(crate) const R5_RB_PRODUCER_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "R5"), Ordering::Acquire);

/// **(R6) acquire: the BPF ringbuf consumer's load of a record's `len` word, before it reads the
/// sample; pairs with (R3).**
///
/// libbpf: `smp_load_acquire(len_ptr)` in `ringbuf_process_ring`. (cilium/ebpf read the header
/// with plain loads and delivered torn events, cilium/ebpf#1375.)
pub(crate) const R6_RB_HEADER_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "R6"), Ordering::Acquire);

/// **(R7) release: the BPF ringbuf consumer's store of `consumer_pos`, after its last read of the
/// records it frees; pairs with (R1).**
///
/// libbpf: `smp_store_release(r->consumer_pos, cons_pos)` in `ringbuf_process_ring`.
pub(crate) const R7_RB_CONSUMER_STORE: Ordering = weaken_if(cfg!(perfring_weaken = "R7"), Ordering::Release);

/// **(R8) sequentially consistent fence: the consumer's `consumer_pos` store before its re-check
/// of `producer_pos` and the head record's header, when it decides whether it may sleep; pairs
/// with (R4).**
///
/// The StoreLoad barrier whose absence made aya's `RingBuf` sleep on a queued record (fixed in
/// aya 7277a57e). libbpf has none in user space: its level-triggered `epoll_wait` re-checks
/// `producer_pos - consumer_pos` in the kernel after queueing the waiter, and the waitqueue's
/// barriers order that check. A consumer that decides by itself (an edge-triggered epoll, a
/// futex, a spin-then-park loop) needs this fence.
pub(crate) const R8_RB_SLEEP_FENCE: Ordering = weaken_if(cfg!(perfring_weaken = "R8"), Ordering::SeqCst);

/// **(R9) acquire: a reservation lock taken (the kernel's `spin_lock_irqsave(&rb->spinlock)`,
/// the user ringbuf's `atomic_try_cmpxchg(&rb->busy, ...)`); pairs with (R10).**
///
/// The previous holder's `producer_pos` (and `pending_pos`) store happens-before this holder's
/// loads of them, so two producers never reserve the same bytes.
pub(crate) const R9_RB_LOCK: Ordering = weaken_if(cfg!(perfring_weaken = "R9"), Ordering::Acquire);

/// **(R10) release: a reservation lock released (`spin_unlock_irqrestore`; the user ringbuf
/// drain's `smp_mb__before_atomic(); atomic_set(&rb->busy, 0)`); pairs with (R9).**
pub(crate) const R10_RB_UNLOCK: Ordering = weaken_if(cfg!(perfring_weaken = "R10"), Ordering::Release);

/// **(U1) acquire: the user ringbuf producer's load of `consumer_pos` at reservation; pairs with
/// (U6).**
///
/// libbpf: `smp_load_acquire(rb->consumer_pos)` in `user_ring_buffer__reserve` ("Synchronizes
/// with smp_store_release() in __bpf_user_ringbuf_peek() in the kernel"). The kernel's reads of
/// a drained sample happen-before user space reuses its bytes.
pub(crate) const U1_URB_CONSUMER_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "U1"), Ordering::Acquire);

/// **(U2) release: the user ringbuf producer's store of `producer_pos`, after the BUSY header;
/// pairs with (U3).**
///
/// libbpf: `smp_store_release(rb->producer_pos, prod_pos + total_size)` in
/// `user_ring_buffer__reserve`.
pub(crate) const U2_URB_PRODUCER_STORE: Ordering = weaken_if(cfg!(perfring_weaken = "U2"), Ordering::Release);

/// **(U3) acquire: the kernel drain's load of `producer_pos`; pairs with (U2).**
///
/// Kernel: `smp_load_acquire(&rb->producer_pos)` in `__bpf_user_ringbuf_peek`.
pub(crate) const U3_URB_PRODUCER_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "U3"), Ordering::Acquire);

/// **(U4) release: the user ringbuf producer's submit or discard, the exchange of the header's
/// `len` word after the sample's bytes; pairs with (U5).**
///
/// libbpf: `__atomic_exchange_n(&hdr->len, new_len, __ATOMIC_ACQ_REL)` in `user_ringbuf_commit`
/// ("Synchronizes with smp_load_acquire() in __bpf_user_ringbuf_peek()"). Release is the half
/// that matters: nothing is read after it.
pub(crate) const U4_URB_COMMIT: Ordering = weaken_if(cfg!(perfring_weaken = "U4"), Ordering::Release);

/// **(U5) acquire: the kernel drain's load of a sample's `len` word; pairs with (U4).**
///
/// Kernel: `smp_load_acquire(hdr)` in `__bpf_user_ringbuf_peek`.
pub(crate) const U5_URB_HEADER_LOAD: Ordering = weaken_if(cfg!(perfring_weaken = "U5"), Ordering::Acquire);

/// **(U6) release: the kernel drain's store of `consumer_pos`, after the sample was read (or to
/// skip a discarded one); pairs with (U1).**
///
/// Kernel: `smp_store_release(&rb->consumer_pos, ...)` in `__bpf_user_ringbuf_sample_release`
/// and, for a discarded sample, in `__bpf_user_ringbuf_peek`.
pub(crate) const U6_URB_CONSUMER_STORE: Ordering = weaken_if(cfg!(perfring_weaken = "U6"), Ordering::Release);

/// The BPF ring buffer's single-copy-atomic accesses that need no ordering of their own (the
/// kernel's plain accesses and `READ_ONCE`): `producer_pos` and `pending_pos` under the lock
/// (ordered by (R9)/(R10)); the BUSY header and `pg_off` stores (published by (R2)/(U2)); the
/// `pending_pos` walk's header loads (it reads no sample bytes); the commit's load of
/// `consumer_pos` for the wakeup decision (the kernel's `smp_load_acquire` there orders nothing
/// that is read after it: (R4) is what the decision needs); a position's own writer reloading
/// it; `pg_off` loads after (R6); the untrusted copies' word loads (ordered by (R6) or (U5),
/// validated after); the failed-reservation counter (a statistic).
pub(crate) const RB_ONCE: Ordering = Ordering::Relaxed;

/// A fence with ordering `order`, skipped when a mutant weakened it to `Relaxed` (a relaxed fence
/// is not allowed by the language). Public for memory implementations outside this crate that
/// can only load relaxed (read-only memory: a relaxed load followed by the acquire fence of
/// (C) is the acquire load the protocol asks for).
#[inline(always)]
pub fn fence(order: Ordering) {
    if !matches!(order, Ordering::Relaxed) {
        crate::loom::fence(order);
    }
}
