//! Record → event attribution, as perf does it (`evlist__event2evsel`, KERNEL-NOTES §9.7).
//!
//! Every attribution of this crate goes through [`Events`]: the table of events and their
//! sample ids, the consistency checks perf makes on it, and the lookup of a record's id. It is
//! the one place to switch to `perfring::record::EventSet` when that type lands in core.

use std::collections::HashMap;

use perfring::record::{attr_flags, sample_type as st, types, Attr, DecodeContext, Endian, Header};

/// perf's `id_pos` for a `sample_type`: the u64 index (after the header) of the id in a SAMPLE,
/// or `None` without ID and IDENTIFIER (`__perf_evsel__calc_id_pos`).
pub fn id_pos(sample_type: u64) -> Option<usize> {
    if sample_type & st::IDENTIFIER != 0 {
        return Some(0);
    }
    if sample_type & st::ID == 0 {
        return None;
    }
    Some([st::IP, st::TID, st::TIME, st::ADDR].iter().filter(|&&b| sample_type & b != 0).count())
}

/// perf's `is_pos`: the u64 index, counted back from the end of a non-SAMPLE record (1 = last),
/// of the id in the `sample_id` trailer, or `None` without ID and IDENTIFIER
/// (`__perf_evsel__calc_is_pos`).
pub fn is_pos(sample_type: u64) -> Option<usize> {
    if sample_type & st::IDENTIFIER != 0 {
        return Some(1);
    }
    if sample_type & st::ID == 0 {
        return None;
    }
    Some(1 + [st::CPU, st::STREAM_ID].iter().filter(|&&b| sample_type & b != 0).count())
}

/// How the events of a file disagree where perf needs them to agree (`evlist__valid_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inconsistency {
    /// Event `event`'s `sample_id_all` differs from event 0's ("non matching sample_id_all").
    SampleIdAll {
        /// The first event that differs.
        event: usize,
    },
    /// With more than one event, event `event` has no id, or its id sits elsewhere than event
    /// 0's (`id_pos`/`is_pos`; perf: "non matching sample_type").
    IdPosition {
        /// The first event that differs.
        event: usize,
    },
}

/// The events of a file, their decoding contexts and the ids perf registered for them.
#[derive(Debug, Clone)]
pub(crate) struct Events {
    endian: Endian,
    contexts: Vec<DecodeContext>,
    sample_id_all: Vec<bool>,
    /// id → event; a later registration replaces an earlier one, as in perf's hash.
    ids: HashMap<u64, usize>,
}

impl Events {
    pub(crate) fn new(endian: Endian) -> Events {
        Events { endian, contexts: Vec::new(), sample_id_all: Vec::new(), ids: HashMap::new() }
    }

    /// Add an event; returns its index.
    pub(crate) fn add_event(&mut self, attr: &Attr) -> usize {
        self.contexts.push(DecodeContext::from_attr(attr, self.endian));
        self.sample_id_all.push(attr.has(attr_flags::SAMPLE_ID_ALL));
        self.contexts.len() - 1
    }

    /// Register `id` for `event`; returns the event that had it before (perf gives the id to
    /// the last event listing it).
    pub(crate) fn add_id(&mut self, event: usize, id: u64) -> Option<usize> {
        self.ids.insert(id, event)
    }

    fn owner(&self, id: u64) -> Option<usize> {
        self.ids.get(&id).copied()
    }

    pub(crate) fn context(&self, event: usize) -> Option<&DecodeContext> {
        self.contexts.get(event)
    }

    /// The first disagreement perf refuses (file mode) or warns about (pipe mode).
    pub(crate) fn consistency(&self) -> Option<Inconsistency> {
        let first = self.contexts.first()?;
        if let Some(event) = self.sample_id_all.iter().position(|&s| s != self.sample_id_all[0]) {
            return Some(Inconsistency::SampleIdAll { event });
        }
        if self.contexts.len() > 1 {
            let want = (id_pos(first.sample_type), is_pos(first.sample_type));
            for (event, c) in self.contexts.iter().enumerate() {
                let here = (id_pos(c.sample_type), is_pos(c.sample_type));
                if here.0.is_none() || here.1.is_none() || here != want {
                    return Some(Inconsistency::IdPosition { event });
                }
            }
        }
        None
    }

    /// The event that wrote `record`, as perf decides it: `Ok(None)` for perf's own types
    /// (≥ 64) and files without events, `Err(id)` for an id no event has.
    pub(crate) fn attribute(&self, record: &[u8]) -> Result<Option<usize>, u64> {
        let Some(header) = Header::parse(record, self.endian) else { return Ok(None) };
        if header.type_ >= types::HEADER_ATTR || self.contexts.is_empty() {
            return Ok(None);
        }
        if self.contexts.len() == 1 {
            return Ok(Some(0));
        }
        let first = &self.contexts[0];
        let id_at = if header.type_ == types::SAMPLE {
            id_pos(first.sample_type).map(|p| 8 + 8 * p)
        } else if !first.sample_id_all {
            return Ok(Some(0));
        } else {
            is_pos(first.sample_type).and_then(|p| record.len().checked_sub(8 * p))
        };
        let Some(id) = id_at.and_then(|at| u64_at(record, at, self.endian)) else { return Ok(Some(0)) };
        if id == 0 {
            return Ok(Some(0));
        }
        self.owner(id).map(Some).ok_or(id)
    }

    /// The time of a kernel record (SAMPLE's TIME, or the `sample_id` trailer's), as perf's
    /// ordering reads it; `None` without one.
    pub(crate) fn time(&self, record: &[u8], event: usize) -> Option<u64> {
        let c = self.contexts.get(event)?;
        let header = Header::parse(record, self.endian)?;
        if c.sample_type & st::TIME == 0 || header.type_ >= types::HEADER_ATTR {
            return None;
        }
        let at = if header.type_ == types::SAMPLE {
            let before = [st::IDENTIFIER, st::IP, st::TID].iter().filter(|&&b| c.sample_type & b != 0).count();
            8 + 8 * before
        } else {
            if !c.sample_id_all {
                return None;
            }
            let after = [st::ID, st::STREAM_ID, st::CPU, st::IDENTIFIER].iter().filter(|&&b| c.sample_type & b != 0);
            record.len().checked_sub(8 * (1 + after.count()))?
        };
        u64_at(record, at, self.endian)
    }
}

fn u64_at(b: &[u8], at: usize, endian: Endian) -> Option<u64> {
    Some(endian.u64(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}
