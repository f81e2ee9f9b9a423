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
pub const COMPILER_BARRIER: Ordering = Ordering::SeqCst;

/// **(S1) release fence: the seqlock writer's odd `lock` before its field stores; pairs with
/// (S4).**
///
/// The kernel's `perf_event_update_userpage` uses only `barrier()` because its reader is the
/// same task on the same CPU. A writer exporting counters to another CPU (a hypervisor to a
/// guest) needs this fence: if a reader's field load sees a value stored after it, the reader's
/// re-check of `lock` (after S4) sees the odd value and retries. Stronger than the kernel needs.
pub const S1_SEQ_WRITE_BEGIN: Ordering = weaken_if(cfg!(perfring_weaken = "S1"), Ordering::Release);

/// **(S2) release: the seqlock writer's field stores before the even `lock`; pairs with (S3).**
pub const S2_SEQ_WRITE_END: Ordering = weaken_if(cfg!(perfring_weaken = "S2"), Ordering::Release);

/// **(S3) acquire: the seqlock reader's first `lock` load before its field loads; pairs with
/// (S2).** A reader that sees an even `lock` from a finished update sees all of its fields.
pub const S3_SEQ_READ_BEGIN: Ordering = weaken_if(cfg!(perfring_weaken = "S3"), Ordering::Acquire);

/// **(S4) acquire fence: the seqlock reader's field loads before its second `lock` load; pairs
/// with (S1).** Without it the re-check could be satisfied before the fields were read.
pub const S4_SEQ_READ_END: Ordering = weaken_if(cfg!(perfring_weaken = "S4"), Ordering::Acquire);

/// Whether this build is a fence mutant (`--cfg perfring_weaken=...`). Mutant builds are for
/// `make loom-mutants` only; tests print this so a mutant is never mistaken for a release build.
pub const MUTANT: Option<&str> = if cfg!(perfring_weaken = "A") {
    Some("A")
} else if cfg!(perfring_weaken = "B") {
    Some("B")
} else if cfg!(perfring_weaken = "C") {
    Some("C")
} else if cfg!(perfring_weaken = "D") {
    Some("D")
} else if cfg!(perfring_weaken = "S1") {
    Some("S1")
} else if cfg!(perfring_weaken = "S2") {
    Some("S2")
} else if cfg!(perfring_weaken = "S3") {
    Some("S3")
} else if cfg!(perfring_weaken = "S4") {
    Some("S4")
} else {
    None
};

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
