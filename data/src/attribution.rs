//! Record → event attribution, as perf does it (`evlist__event2evsel`, KERNEL-NOTES §9.7):
//! every attribution of this crate goes through [`Events`], a thin owner of core's
//! [`EventSet`] (the one piece of code that attributes records everywhere: rings, perf.data,
//! the simulator) over growable `Vec` storage.

use perfring::record::{types, Attr, AttributeError, DecodeContext, Endian, Event, EventSet, IdEntry, Inconsistency};

/// The events of a file and the ids perf registered for them.
#[derive(Debug, Clone)]
pub(crate) struct Events {
    endian: Endian,
    set: EventSet<Vec<Event>, Vec<IdEntry>>,
}

impl Events {
    pub(crate) fn new(endian: Endian) -> Events {
        Events { endian, set: EventSet::new(Vec::new(), Vec::new()) }
    }

    /// Add an event; returns its index.
    pub(crate) fn add_event(&mut self, attr: &Attr) -> usize {
        loop {
            match self.set.add_event(attr, self.endian) {
                Ok(i) => return i,
                Err(_) => {
                    let events = self.set.event_storage_mut();
                    events.resize(events.len() * 2 + 4, Event::EMPTY);
                }
            }
        }
    }

    /// Register `id` for `event`; returns the event that had it before (perf gives the id to
    /// the last event listing it). Id 0 is not registered: perf gives id 0 to the first event
    /// whatever the ids say.
    pub(crate) fn add_id(&mut self, event: usize, id: u64) -> Option<usize> {
        // The table kept at most half full, so that an id is found at its first slot: grown
        // (moved into storage twice as large) before an add would pass half.
        let capacity = self.set.id_capacity();
        if 2 * (self.set.id_count() + 1) > capacity {
            // Twice as large holds every id: the move cannot fail.
            let _ = self.set.replace_id_storage(vec![IdEntry::EMPTY; 2 * capacity + 16]);
        }
        self.set.add_id(event, id).ok().flatten()
    }

    pub(crate) fn context(&self, event: usize) -> Option<&DecodeContext> {
        self.set.event(event).map(Event::context)
    }

    /// The first disagreement perf refuses (file mode) or warns about (pipe mode).
    pub(crate) fn consistency(&self) -> Option<Inconsistency> {
        self.set.consistency().err()
    }

    /// The event that wrote `record`: `Ok(None)` for perf's own types (≥ 64) and files
    /// without events, `Err` for a record perf cannot attribute (an unknown id, an id outside
    /// the record).
    pub(crate) fn attribute(&self, record: &[u8]) -> Result<Option<usize>, AttributeError> {
        let header = perfring::record::Header::parse(record, self.endian);
        if !header.is_some_and(|h| h.type_ != 0 && h.type_ < types::HEADER_ATTR) {
            return Ok(None);
        }
        match self.set.attribute(record) {
            Ok(i) => Ok(Some(i)),
            Err(AttributeError::NoEvents | AttributeError::NotAnEventRecord { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The time of a kernel record (SAMPLE's TIME, or the `sample_id` trailer's), as perf's
    /// ordering reads it; `None` without one.
    pub(crate) fn time(&self, record: &[u8], event: usize) -> Option<u64> {
        let e = self.set.event(event)?;
        let header = perfring::record::Header::parse(record, self.endian)?;
        if header.type_ >= types::HEADER_ATTR {
            return None;
        }
        e.record(record).time()
    }
}
