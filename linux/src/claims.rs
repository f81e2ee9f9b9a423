//! [`RingClaims`]: what the rings of one event share — whether a consumer of its ring is
//! alive, and whether its records go to another event's ring.

use std::sync::atomic::{AtomicBool, Ordering};

/// What the [`Ring`](crate::Ring)s of one [`Event`](crate::Event) share: whether a consumer of its ring is alive, and
/// whether its records go to another event's ring.
#[derive(Debug, Default)]
pub(crate) struct RingClaims {
    consumer: AtomicBool,
    redirected: AtomicBool,
}

impl RingClaims {
    /// Claim the ring for one consumer; false if another holds it.
    pub(crate) fn take_consumer(&self) -> bool {
        !self.consumer.swap(true, Ordering::AcqRel)
    }

    /// Whether the event's output goes to another event's ring.
    pub(crate) fn redirected(&self) -> bool {
        self.redirected.load(Ordering::Acquire)
    }

    /// Give the consumer claim back (its consumer was dropped).
    pub(crate) fn release_consumer(&self) {
        self.consumer.store(false, Ordering::Release);
    }

    /// Record whether the event's output goes to another event's ring.
    pub(crate) fn set_redirected(&self, redirected: bool) {
        self.redirected.store(redirected, Ordering::Release);
    }
}
