//! [`RingClaims`]: what the rings of one event share — whether a consumer of its ring is
//! alive, and whether its records go to another event's ring; [`MapClaim`]: the one reader (or
//! writer) of a BPF ring buffer in this process.

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

/// The BPF ring buffers this process reads or writes, by map id: a ring's `consumer_pos` (or
/// a user ring's `producer_pos` and data) has one writer, whatever descriptors of the map the
/// process holds. A [`MapClaim`] holds its id until dropped.
static RING_MAPS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// The claim of one BPF ring buffer map by its reader (or writer) in this process.
#[derive(Debug)]
pub(crate) struct MapClaim(u32);

impl MapClaim {
    /// Claim map `id`; `None` if this process already holds it.
    pub(crate) fn take(id: u32) -> Option<MapClaim> {
        let mut held = RING_MAPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.contains(&id) {
            return None;
        }
        held.push(id);
        Some(MapClaim(id))
    }
}

impl Drop for MapClaim {
    fn drop(&mut self) {
        let mut held = RING_MAPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        held.retain(|&id| id != self.0);
    }
}
