//! [`PreemptPoint`]: the labelled steps of the producer at which a test or the simulator runs
//! a nested writer (`Hooks::preempt`). Public only with the `test-hooks` feature, which the
//! tests and the simulator turn on: a producer in production has no preemption points.
#![cfg_attr(not(any(test, feature = "test-hooks")), allow(dead_code))]

/// A labelled step of the producer at which an interrupt may run a nested writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptPoint {
    /// `perf_output_get_handle`: right after `nest` was incremented.
    AfterNestIncrement,
    /// The reservation loop: after `rb->head` (and `data_tail`) were loaded, before the
    /// compare-exchange.
    AfterHeadLoad,
    /// After the successful compare-exchange that reserved the space.
    AfterReserve,
    /// Before each payload write or skip of a [`Handle`](super::Handle).
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
