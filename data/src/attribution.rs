//! Record → event attribution, as perf does it (`evlist__event2evsel`, perf's tools/perf/util/session.c and evlist.c):
//! every attribution of this crate goes through [`Events`], a thin owner of core's
//! [`EventSet`] (the one piece of code that attributes records everywhere: rings, perf.data,
//! the simulator) over growable `Vec` storage.

use perfring::record::{
    types, Attr, DecodeError, Endian, EventLayout, EventRecord, EventSet, EventSetError, Header, IdEntry, RawRecord,
};

/// The events of a file and the ids perf registered for them.
#[derive(Debug, Clone)]
pub(crate) struct Events {
    endian: Endian,
    set: EventSet<Vec<EventLayout>, Vec<IdEntry>>,
    /// Where the file's one `Warning::DuplicateId` is in its warnings, once there is one.
    pub(crate) duplicate_warning: Option<usize>,
}

impl Events {
    pub(crate) fn new(endian: Endian) -> Events {
        Events { endian, set: EventSet::new(Vec::new(), Vec::new()), duplicate_warning: None }
    }

    /// Add an event; returns its index. The only error that asks for more room,
    /// `EventsFull`, grows the storage (to one more event than it holds, at least: the retry
    /// fits, so this runs at most twice); any other error is returned, never retried.
    pub(crate) fn add_event(&mut self, attr: &Attr) -> Result<usize, EventSetError> {
        match self.set.add_event(attr, self.endian) {
            Err(EventSetError::EventsFull { .. }) => {
                let events = self.set.event_storage_mut();
                events.resize(events.len() * 2 + 4, EventLayout::EMPTY);
                self.set.add_event(attr, self.endian)
            }
            other => other,
        }
    }

    /// Register `id` for `event`; returns the event that had it before (perf gives the id to
    /// the last event listing it). Id 0 is not registered (`Ok(None)`): perf gives id 0 to the
    /// first event whatever the ids say. Any other refusal is returned.
    pub(crate) fn add_id(&mut self, event: usize, id: u64) -> Result<Option<usize>, EventSetError> {
        // The table kept at most half full, so that an id is found at its first slot: grown
        // (moved into storage twice as large) before an add would pass half.
        let capacity = self.set.id_capacity();
        if 2 * (self.set.id_count() + 1) > capacity {
            self.set.replace_id_storage(vec![IdEntry::EMPTY; 2 * capacity + 16])?;
        }
        match self.set.add_id(event, id) {
            Err(EventSetError::ZeroId) => Ok(None),
            other => other,
        }
    }

    /// `id`'s slot in the id table and its event (the last one listing it, as perf gives a
    /// duplicated id to it). The slot holds while the table's capacity does: the table only
    /// ever moves into larger storage ([`add_id`](Self::add_id)).
    #[inline(always)]
    pub(crate) fn id_slot(&self, id: u64) -> Option<(usize, usize)> {
        self.set.id_slot(id)
    }

    /// The layout of `event`.
    pub(crate) fn layout(&self, event: usize) -> Option<&EventLayout> {
        self.set.event(event)
    }

    /// The events and their ids.
    pub(crate) fn set(&self) -> &EventSet<Vec<EventLayout>, Vec<IdEntry>> {
        &self.set
    }

    /// The first disagreement perf refuses (file mode) or warns about (pipe mode).
    pub(crate) fn consistency(&self) -> Option<EventSetError> {
        self.set.consistency().err()
    }

    /// The event that wrote the record of `header` (parsed once, in the file's byte order) and
    /// `bytes` (`header.size` of them): `Ok(None)` for perf's own types (≥ 64) and files
    /// without events, `Err` for a record perf cannot attribute (an unknown id, an id outside
    /// the record).
    pub(crate) fn attribute(&self, header: Header, bytes: &[u8]) -> Result<Option<usize>, DecodeError> {
        if header.type_ == 0 || header.type_ >= types::HEADER_ATTR {
            return Ok(None);
        }
        match self.set.attribute(&self.raw(header, bytes)).event() {
            Ok(i) => Ok(Some(i)),
            Err(DecodeError::NoEvents | DecodeError::NotAnEventRecord { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The time of a kernel record of `event` (SAMPLE's TIME, or the `sample_id` trailer's), as
    /// perf's ordering reads it; `None` without one.
    pub(crate) fn time(&self, header: Header, record: &[u8], event: usize) -> Option<u64> {
        if header.type_ >= types::HEADER_ATTR {
            return None;
        }
        let known = Known { raw: self.raw(header, record), event: (event, self.set.event(event)?) };
        known.view().ok()?.time()
    }

    /// The record as a reader hands it out: its header parsed, in the file's byte order.
    fn raw<'a>(&self, header: Header, bytes: &'a [u8]) -> RawRecord<'a> {
        RawRecord { header, bytes, offset: 0, endian: self.endian, trailing: &[] }
    }
}

/// A record whose event is known (attributed when it was read), for the views.
struct Known<'a> {
    raw: RawRecord<'a>,
    event: (usize, &'a EventLayout),
}

impl<'a> EventRecord<'a> for Known<'a> {
    fn raw(&self) -> &RawRecord<'a> {
        &self.raw
    }
    fn attribution(&self) -> Result<(usize, &'a EventLayout), DecodeError> {
        Ok(self.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr() -> Attr {
        Attr { sample_type: perfring::record::sample_type::IDENTIFIER, ..Attr::default() }
    }

    #[test]
    fn storage_grows_only_when_full_and_every_event_and_id_lands() {
        let mut events = Events::new(Endian::NATIVE);
        for i in 0..100u64 {
            let event = events.add_event(&attr()).unwrap();
            assert_eq!(event, i as usize);
            assert_eq!(events.add_id(event, 1000 + i), Ok(None));
        }
        assert_eq!(events.set.id_count(), 100);
        assert!(events.set.ids().all(|e| e.id() == 1000 + e.event() as u64), "every id on its own event");
        // A duplicated id moves to the later event, which the caller warns about.
        assert_eq!(events.add_id(99, 1000), Ok(Some(0)));
    }

    #[test]
    fn id_zero_is_skipped_as_perf_does_and_other_refusals_are_returned() {
        let mut events = Events::new(Endian::NATIVE);
        let event = events.add_event(&attr()).unwrap();
        assert_eq!(events.add_id(event, 0), Ok(None), "perf gives id 0 to the first event");
        assert_eq!(events.set.id_count(), 0);
        // A refusal that more room cannot cure is the caller's to see, not dropped (the old
        // code turned every add_id error into `None`, and retried every add_event error).
        assert_eq!(events.add_id(7, 42), Err(EventSetError::NoSuchEvent { index: 7, events: 1 }));
    }
}
