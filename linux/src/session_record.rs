//! [`SessionRecord`]: a record a [`Session`](crate::Session) drained, read as every record of
//! perfring is.

use perfring::record::{Attributed, DecodeError, EventLayout, EventRecord, EventSet, IdEntry, RawRecord};

/// One record drained from a [`Session`](crate::Session), attributed to its event: read it through
/// [`EventRecord`] (`use perfring::record::EventRecord`), as a ring's records and perf.data's
/// are read, with the same calls: `raw()` (its header, bytes, byte order), `event()` (an index
/// in the order of [`SessionBuilder::event`](crate::SessionBuilder::event)), `sample()`, `view()`, `fixed::<ST>()`,
/// `decode()`.
#[derive(Clone, Copy)]
pub struct SessionRecord<'a> {
    record: Attributed<'a>,
    ring: usize,
    cpu: u32,
}

impl<'a> SessionRecord<'a> {
    /// The record `raw` of ring `ring` (on CPU `cpu`), attributed by the session's `set`.
    #[inline(always)]
    pub(crate) fn new(
        set: &'a EventSet<Vec<EventLayout>, Vec<IdEntry>>,
        raw: &RawRecord<'a>,
        ring: usize,
        cpu: u32,
    ) -> Self {
        SessionRecord { record: set.attribute(raw), ring, cpu }
    }

    /// The index of the ring it came from ([`Session::rings`](crate::Session::rings)).
    pub fn ring(&self) -> usize {
        self.ring
    }

    /// The CPU of that ring.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }
}

impl<'a> EventRecord<'a> for SessionRecord<'a> {
    #[inline(always)]
    fn raw(&self) -> &RawRecord<'a> {
        self.record.raw()
    }
    #[inline(always)]
    fn attribution(&self) -> Result<(usize, &'a EventLayout), DecodeError> {
        self.record.attribution()
    }
}

impl std::fmt::Debug for SessionRecord<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRecord")
            .field("header", &self.raw().header)
            .field("bytes", &self.raw().bytes.len())
            .field("ring", &self.ring)
            .field("cpu", &self.cpu)
            .field("event", &self.event())
            .finish()
    }
}
