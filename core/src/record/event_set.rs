//! [`EventSet`]: which event wrote a record, by perf's rules, without allocating.
//!
//! A ring shared by several events (`PERF_EVENT_IOC_SET_OUTPUT`) and a perf.data file with
//! several attrs hold records whose layout depends on the event that wrote them. perf finds the
//! event from the id each record carries (`tools/perf/util/evlist.c:evlist__event2evsel`,
//! KERNEL-NOTES §9.7), and so does [`EventSet::attribute`]:
//!
//! * a set of one event takes every record;
//! * without `sample_id_all` (the first event's), non-SAMPLE records go to the first event;
//! * otherwise the id is read at `id_pos` (u64 words after a SAMPLE's header) or `is_pos`
//!   (words back from the end of another record), positions taken from the first event;
//! * id 0 (records perf synthesizes) goes to the first event;
//! * any other id the set does not know is [`AttributeError::UnknownId`] — never a guess.
//!
//! Events that differ in `sample_id_all` or in where their ids sit cannot be told apart
//! reliably: perf refuses such a file ("non matching sample_type"/"sample_id_all") and only
//! warns in pipe mode. [`EventSet::consistency`] reports it; the caller decides which.
//!
//! Storage is the caller's: any `AsRef<[T]> + AsMut<[T]>`, e.g. arrays in a `static` on a
//! firmware target or pre-sized `Vec`s in a std program (grow them through
//! [`EventSet::storage_mut`]). The capacity is the storage's length.
//!
//! ```
//! use perfring::record::{sample_type as st, Attr, Endian, Event, EventSet, IdEntry};
//! let attr = Attr { sample_type: st::IDENTIFIER | st::IP, size: Attr::SIZE_VER0, ..Attr::default() };
//! let mut set = EventSet::new([Event::EMPTY; 2], [IdEntry::EMPTY; 8]);
//! let cycles = set.add_event(&attr, Endian::Little).unwrap();
//! let faults = set.add_event(&attr, Endian::Little).unwrap();
//! set.add_id(cycles, 100).unwrap();
//! set.add_id(faults, 200).unwrap();
//! // A SAMPLE: header {type 9, misc 0, size 24}, IDENTIFIER 200, IP 0x1234.
//! let mut rec = [0u8; 24];
//! rec[..8].copy_from_slice(&[9, 0, 0, 0, 0, 0, 24, 0]);
//! rec[8..16].copy_from_slice(&200u64.to_le_bytes());
//! rec[16..].copy_from_slice(&0x1234u64.to_le_bytes());
//! let (index, event) = set.attribute_event(&rec).unwrap();
//! assert_eq!(index, faults);
//! assert_eq!(event.sample(&rec).unwrap().ip(), Some(0x1234));
//! ```

use core::fmt;

use super::header::{types, Header};
use super::{Attr, DecodeContext, DecodeError, Endian, Record, RecordView, SampleLayout, SampleView, WalkedRecord};

/// One event of an [`EventSet`]: its attr and the layout derived from it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Event {
    attr: Attr,
    layout: SampleLayout,
}

impl Event {
    /// An unused slot, for filling storage arrays (`[Event::EMPTY; N]`).
    pub const EMPTY: Event = Event::new(&Attr::ZERO, Endian::NATIVE);

    /// The event of `attr`, whose records are in `endian` order.
    pub const fn new(attr: &Attr, endian: Endian) -> Event {
        Event { attr: *attr, layout: SampleLayout::new(&DecodeContext::from_attr(attr, endian)) }
    }
    /// The attr.
    pub const fn attr(&self) -> &Attr {
        &self.attr
    }
    /// The layout of its records.
    pub const fn layout(&self) -> &SampleLayout {
        &self.layout
    }
    /// The decode context of its records.
    pub const fn context(&self) -> &DecodeContext {
        self.layout.context()
    }
    /// Its SAMPLE record `bytes`, through the layout ([`SampleLayout::sample`]).
    #[inline]
    pub fn sample<'a>(&'a self, bytes: &'a [u8]) -> Result<SampleView<'a>, DecodeError> {
        self.layout.sample(bytes)
    }
    /// A SAMPLE a [`Walker`](super::Walker) handed out, through the layout: the header it
    /// parsed is not read again ([`SampleLayout::sample_walked`]).
    #[inline]
    pub fn sample_walked<'a>(&'a self, record: &WalkedRecord<'a>) -> Result<SampleView<'a>, DecodeError> {
        self.layout.sample_walked(record)
    }
    /// Any of its records, through the layout ([`SampleLayout::record`]).
    #[inline]
    pub fn record<'a>(&'a self, bytes: &'a [u8]) -> RecordView<'a> {
        self.layout.record(bytes)
    }
    /// The complete decode of one of its records ([`decode`](super::decode)).
    pub fn decode<'a>(&self, bytes: &'a [u8]) -> Result<Record<'a>, DecodeError> {
        super::decode(bytes, self.context())
    }
}

impl Default for Event {
    fn default() -> Self {
        Event::EMPTY
    }
}

/// One id → event entry of an [`EventSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct IdEntry {
    id: u64,
    event: u32,
}

impl IdEntry {
    /// An unused slot, for filling storage arrays (`[IdEntry::EMPTY; N]`).
    pub const EMPTY: IdEntry = IdEntry { id: 0, event: 0 };
    /// The sample id.
    pub const fn id(&self) -> u64 {
        self.id
    }
    /// The index of its event.
    pub const fn event(&self) -> usize {
        self.event as usize
    }
}

/// Why an event or an id could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventSetError {
    /// The event storage is full: give the set larger storage.
    EventsFull {
        /// Its length.
        capacity: usize,
    },
    /// The id storage is full: give the set larger storage.
    IdsFull {
        /// Its length.
        capacity: usize,
    },
    /// The event index is not one [`EventSet::add_event`] returned.
    NoSuchEvent {
        /// The index given.
        index: usize,
        /// Events in the set.
        events: usize,
    },
    /// Id 0 cannot be registered: perf gives records with id 0 (synthesized ones) to the first
    /// event, whatever the ids say.
    ZeroId,
}

impl fmt::Display for EventSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EventSetError::EventsFull { capacity } => {
                write!(f, "event set: the event storage ({capacity} events) is full; give it more room")
            }
            EventSetError::IdsFull { capacity } => {
                write!(f, "event set: the id storage ({capacity} ids) is full; give it more room")
            }
            EventSetError::NoSuchEvent { index, events } => {
                write!(f, "event set: no event {index} (the set has {events}); use an index add_event returned")
            }
            EventSetError::ZeroId => write!(f, "event set: id 0 is reserved for synthesized records"),
        }
    }
}

impl core::error::Error for EventSetError {}

/// Why a record could not be attributed to an event. The record is not decoded with a guessed
/// layout in any of these cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AttributeError {
    /// The set has no events.
    NoEvents,
    /// The record is shorter than its 8-byte header.
    Truncated {
        /// Its length.
        len: usize,
    },
    /// A perf-only record type (≥ 64, e.g. FINISHED_ROUND) or type 0: these carry no event id.
    NotAnEventRecord {
        /// `header.type`.
        type_: u32,
    },
    /// The set has several events but the first writes neither IDENTIFIER nor ID, so records
    /// carry nothing to tell them apart: record with `PERF_SAMPLE_IDENTIFIER`.
    NoIdPosition,
    /// The record is too short to hold the id where the set's layout puts it.
    IdOutsideRecord {
        /// `header.type`.
        type_: u32,
        /// The id's position in u64 words (`id_pos` from the start of a SAMPLE body, `is_pos`
        /// back from the end of other records).
        pos: usize,
        /// u64 words in the record body.
        words: usize,
    },
    /// The record's id belongs to no event of the set (an event not registered, or a corrupt
    /// record).
    UnknownId {
        /// The id read.
        id: u64,
    },
}

impl fmt::Display for AttributeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AttributeError::NoEvents => write!(f, "the event set is empty: add the events first"),
            AttributeError::Truncated { len } => write!(f, "record of {len} bytes is shorter than its header"),
            AttributeError::NotAnEventRecord { type_ } => {
                write!(f, "record type {type_} ({}) carries no event id", super::type_name(type_))
            }
            AttributeError::NoIdPosition => write!(
                f,
                "several events, but records carry no id (sample_type lacks IDENTIFIER and ID): \
                 record with PERF_SAMPLE_IDENTIFIER"
            ),
            AttributeError::IdOutsideRecord { type_, pos, words } => {
                write!(f, "record type {type_} has {words} body words, too few for the id at word {pos}")
            }
            AttributeError::UnknownId { id } => {
                write!(f, "id {id} belongs to no event of the set (not registered, or a corrupt record)")
            }
        }
    }
}

impl core::error::Error for AttributeError {}

/// Why records of the set's events cannot be attributed reliably
/// (`evlist__valid_sample_type`, `evlist__valid_sample_id_all`). perf refuses a file with any
/// of these; in pipe mode it warns and goes on with the first event's positions, as
/// [`EventSet::attribute`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Inconsistency {
    /// An event's `sample_id_all` differs from the first event's.
    SampleIdAllDiffers {
        /// The event.
        event: usize,
    },
    /// With several events, an event writes neither IDENTIFIER nor ID.
    NoId {
        /// The event.
        event: usize,
    },
    /// An event's id sits elsewhere than the first event's (`id_pos` or `is_pos` differ).
    IdPositionDiffers {
        /// The event.
        event: usize,
        /// Its (`id_pos`, `is_pos`).
        pos: (usize, usize),
        /// The first event's.
        first: (usize, usize),
    },
}

impl fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Inconsistency::SampleIdAllDiffers { event } => {
                write!(
                    f,
                    "event {event}: sample_id_all differs from the first event's (perf: non matching sample_id_all)"
                )
            }
            Inconsistency::NoId { event } => write!(
                f,
                "event {event}: several events but it writes neither IDENTIFIER nor ID; add PERF_SAMPLE_IDENTIFIER"
            ),
            Inconsistency::IdPositionDiffers { event, pos, first } => write!(
                f,
                "event {event}: id at (id_pos, is_pos) = {pos:?}, the first event's at {first:?} \
                 (perf: non matching sample_type); add PERF_SAMPLE_IDENTIFIER to every event"
            ),
        }
    }
}

impl core::error::Error for Inconsistency {}

/// Events and the ids that identify them, in caller storage; attributes records to events by
/// perf's rules (module docs).
#[derive(Debug, Clone)]
pub struct EventSet<E, I> {
    events: E,
    n_events: usize,
    /// Sorted by id, unique ids, `n_ids` used.
    ids: I,
    n_ids: usize,
    /// From the first event, kept here so that attribution reads no layout: where a SAMPLE's
    /// id starts (bytes from the record's start; `NO_ID` if the event writes no id) …
    sample_id_at: usize,
    /// … perf's `is_pos` (0 if the event writes no id) …
    is_pos: usize,
    /// … its `sample_id_all` and byte order.
    sample_id_all: bool,
    endian: Endian,
}

/// `sample_id_at` of an event that writes no id: beyond any record.
const NO_ID: usize = usize::MAX / 2;

impl<E, I> EventSet<E, I>
where
    E: AsRef<[Event]> + AsMut<[Event]>,
    I: AsRef<[IdEntry]> + AsMut<[IdEntry]>,
{
    /// An empty set over `events` and `ids` storage; their lengths are the capacities.
    pub fn new(events: E, ids: I) -> Self {
        EventSet {
            events,
            n_events: 0,
            ids,
            n_ids: 0,
            sample_id_at: NO_ID,
            is_pos: 0,
            sample_id_all: false,
            endian: Endian::NATIVE,
        }
    }

    /// Add the event of `attr` (records in `endian` order); returns its index (0, 1, …).
    pub fn add_event(&mut self, attr: &Attr, endian: Endian) -> Result<usize, EventSetError> {
        let n = self.n_events;
        let slots = self.events.as_mut();
        let capacity = slots.len();
        let slot = slots.get_mut(n).ok_or(EventSetError::EventsFull { capacity })?;
        *slot = Event::new(attr, endian);
        if n == 0 {
            let layout = slot.layout;
            self.sample_id_at = layout.id_pos().map_or(NO_ID, |p| 8 + 8 * p);
            self.is_pos = layout.is_pos().unwrap_or(0);
            self.sample_id_all = layout.context().sample_id_all;
            self.endian = endian;
        }
        self.n_events = n + 1;
        Ok(n)
    }

    /// Register `id` as an id of `event`. An id already registered moves to `event` — perf
    /// gives a duplicated id to the last event listing it — and its previous event is returned
    /// so that the caller can warn.
    pub fn add_id(&mut self, event: usize, id: u64) -> Result<Option<usize>, EventSetError> {
        if event >= self.n_events {
            return Err(EventSetError::NoSuchEvent { index: event, events: self.n_events });
        }
        if id == 0 {
            return Err(EventSetError::ZeroId);
        }
        let n = self.n_ids;
        let slots = self.ids.as_mut();
        let capacity = slots.len();
        let used = slots.get_mut(..n).ok_or(EventSetError::IdsFull { capacity })?;
        match used.binary_search_by_key(&id, |e| e.id) {
            Ok(i) => {
                let previous = used[i].event();
                used[i].event = event as u32;
                Ok(Some(previous))
            }
            Err(i) => {
                if n >= capacity {
                    return Err(EventSetError::IdsFull { capacity });
                }
                slots.copy_within(i..n, i + 1);
                slots[i] = IdEntry { id, event: event as u32 };
                self.n_ids = n + 1;
                Ok(None)
            }
        }
    }

    /// The events, in the order they were added.
    pub fn events(&self) -> &[Event] {
        self.events.as_ref().get(..self.n_events).unwrap_or_default()
    }

    /// Event `index`.
    pub fn event(&self, index: usize) -> Option<&Event> {
        self.events().get(index)
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.n_events
    }

    /// Whether the set has no events.
    pub fn is_empty(&self) -> bool {
        self.n_events == 0
    }

    /// The registered ids, sorted by id.
    pub fn ids(&self) -> &[IdEntry] {
        self.ids.as_ref().get(..self.n_ids).unwrap_or_default()
    }

    /// The event registered for `id`.
    #[inline(always)]
    pub fn event_of_id(&self, id: u64) -> Option<usize> {
        let ids = self.ids();
        // A few ids (events × CPUs of a small capture): a scan beats the search's branches
        // (measured: `make bench-instructions`, 2 events × 2 ids).
        if ids.len() <= 8 {
            return ids.iter().find(|e| e.id == id).map(IdEntry::event);
        }
        ids.binary_search_by_key(&id, |e| e.id).ok().map(|i| ids[i].event())
    }

    /// The storage, to grow it (e.g. `Vec::resize` when an add reported it full). Shrinking
    /// it below what is used makes the entries past its end unreachable; nothing panics.
    pub fn storage_mut(&mut self) -> (&mut E, &mut I) {
        (&mut self.events, &mut self.ids)
    }

    /// Whether every record of these events can be attributed reliably: `Err` names the first
    /// event that breaks perf's rules (see [`Inconsistency`]).
    pub fn consistency(&self) -> Result<(), Inconsistency> {
        let events = self.events();
        let Some(first) = events.first() else { return Ok(()) };
        let pos = |e: &Event| (e.layout.id_pos(), e.layout.is_pos());
        for (event, e) in events.iter().enumerate().skip(1) {
            if e.context().sample_id_all != first.context().sample_id_all {
                return Err(Inconsistency::SampleIdAllDiffers { event });
            }
        }
        if events.len() > 1 {
            let (Some(fi), Some(fs)) = pos(first) else { return Err(Inconsistency::NoId { event: 0 }) };
            for (event, e) in events.iter().enumerate().skip(1) {
                match pos(e) {
                    (Some(i), Some(s)) if (i, s) == (fi, fs) => {}
                    (Some(i), Some(s)) => {
                        return Err(Inconsistency::IdPositionDiffers { event, pos: (i, s), first: (fi, fs) })
                    }
                    _ => return Err(Inconsistency::NoId { event }),
                }
            }
        }
        Ok(())
    }

    /// The index of the event that wrote `record` (the whole record, header included), by the
    /// rules of the module docs.
    #[inline(always)]
    pub fn attribute(&self, record: &[u8]) -> Result<usize, AttributeError> {
        let (Some(type_), true) = (self.endian.u32_at(record, 0), record.len() >= Header::SIZE) else {
            return Err(AttributeError::Truncated { len: record.len() });
        };
        self.attribute_typed(type_, record, self.endian)
    }

    /// [`attribute`](Self::attribute) for a record a [`Walker`](super::Walker) handed out: its
    /// header is not read again, and the id is read in the byte order the walk read the header
    /// in (the event's view then refuses a record of the other order than its own:
    /// [`DecodeError::ByteOrderMismatch`](super::DecodeError::ByteOrderMismatch)).
    #[inline(always)]
    pub fn attribute_walked(&self, record: &WalkedRecord<'_>) -> Result<usize, AttributeError> {
        self.attribute_typed(record.header.type_, record.bytes, record.endian)
    }

    // Always inlined: the caller's type test and the `Result` then fold into its own code (the
    // out-of-line call measured 82 instructions per record against 28 inlined, callgrind).
    #[inline(always)]
    fn attribute_typed(&self, type_: u32, record: &[u8], endian: Endian) -> Result<usize, AttributeError> {
        match self.n_events {
            0 => return Err(AttributeError::NoEvents),
            1 => return Ok(0),
            _ => {}
        }
        let len = record.len();
        let at = if type_ == types::SAMPLE {
            self.sample_id_at
        } else if type_ == 0 || type_ >= types::HEADER_ATTR {
            return Err(AttributeError::NotAnEventRecord { type_ });
        } else if !self.sample_id_all {
            return Ok(0);
        } else {
            // `is_pos` words back from the end of the body, which is whole words long.
            let body_end = Header::SIZE + (len.saturating_sub(Header::SIZE) & !7);
            match body_end.checked_sub(8 * self.is_pos) {
                Some(at) if self.is_pos != 0 && at >= Header::SIZE => at,
                _ => NO_ID,
            }
        };
        let Some(id) = endian.u64_at(record, at) else { return Err(self.id_error(type_, len)) };
        if id == 0 {
            return Ok(0);
        }
        self.event_of_id(id).ok_or(AttributeError::UnknownId { id })
    }

    /// Why the id could not be read (the cold path of attribution).
    #[cold]
    fn id_error(&self, type_: u32, len: usize) -> AttributeError {
        let words = len.saturating_sub(Header::SIZE) / 8;
        let pos = if type_ == types::SAMPLE {
            if self.sample_id_at == NO_ID {
                return AttributeError::NoIdPosition;
            }
            (self.sample_id_at - Header::SIZE) / 8
        } else {
            if self.is_pos == 0 {
                return AttributeError::NoIdPosition;
            }
            self.is_pos
        };
        AttributeError::IdOutsideRecord { type_, pos, words }
    }

    /// [`attribute`](Self::attribute), with the event.
    #[inline(always)]
    pub fn attribute_event(&self, record: &[u8]) -> Result<(usize, &Event), AttributeError> {
        let index = self.attribute(record)?;
        // `attribute` returns indices of `events()` only.
        self.events().get(index).map(|e| (index, e)).ok_or(AttributeError::NoEvents)
    }

    /// [`attribute_walked`](Self::attribute_walked), with the event.
    #[inline(always)]
    pub fn attribute_walked_event(&self, record: &WalkedRecord<'_>) -> Result<(usize, &Event), AttributeError> {
        let index = self.attribute_walked(record)?;
        self.events().get(index).map(|e| (index, e)).ok_or(AttributeError::NoEvents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{attr_flags, sample_type as st};

    fn attr(sample_type: u64, sample_id_all: bool) -> Attr {
        let flags = if sample_id_all { attr_flags::SAMPLE_ID_ALL } else { 0 };
        Attr { sample_type, flags, size: Attr::SIZE_VER0, ..Attr::ZERO }
    }

    /// A SAMPLE with the given body words, little-endian.
    fn sample(words: &[u64]) -> ([u8; 64], usize) {
        let mut b = [0u8; 64];
        let size = 8 + 8 * words.len();
        b[..8].copy_from_slice(&[9, 0, 0, 0, 0, 0, size as u8, 0]);
        for (i, w) in words.iter().enumerate() {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        (b, size)
    }

    /// A COMM record (pid, tid, "x\0...") followed by the trailer words.
    fn comm(trailer: &[u64]) -> ([u8; 64], usize) {
        let mut b = [0u8; 64];
        let size = 8 + 16 + 8 * trailer.len();
        b[..8].copy_from_slice(&[3, 0, 0, 0, 0, 0, size as u8, 0]);
        b[16] = b'x';
        for (i, w) in trailer.iter().enumerate() {
            b[24 + 8 * i..32 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        (b, size)
    }

    const T: u64 = st::IP | st::TID | st::TIME | st::ID | st::CPU | st::PERIOD;

    #[test]
    fn samples_and_trailers_go_to_the_event_of_their_id_and_unknown_ids_are_errors() {
        let mut set = EventSet::new([Event::EMPTY; 2], [IdEntry::EMPTY; 4]);
        let a = set.add_event(&attr(T, true), Endian::Little).unwrap();
        let b = set.add_event(&attr(T, true), Endian::Little).unwrap();
        for (event, id) in [(a, 11), (b, 22), (a, 12), (b, 23)] {
            assert_eq!(set.add_id(event, id), Ok(None));
        }
        assert_eq!(set.consistency(), Ok(()));
        // id_pos = 3 (IP, TID, TIME before ID); is_pos = 2 (CPU after ID in the trailer).
        let (s, n) = sample(&[0x400000, 7, 1000, 23, 0, 1]);
        assert_eq!(set.attribute(&s[..n]), Ok(b));
        let (s, n) = sample(&[0x400000, 7, 1000, 99, 0, 1]);
        assert_eq!(set.attribute(&s[..n]), Err(AttributeError::UnknownId { id: 99 }));
        // Trailer: TID, TIME, ID, CPU.
        let (c, n) = comm(&[7, 1000, 12, 3]);
        assert_eq!(set.attribute(&c[..n]), Ok(a));
        assert_eq!(set.event(a).unwrap().record(&c[..n]).cpu(), Some(3));
        // Id 0 (synthesized) goes to the first event.
        let (c, n) = comm(&[7, 1000, 0, 3]);
        assert_eq!(set.attribute(&c[..n]), Ok(a));
        // A SAMPLE too short for its id is an error, not a guess.
        let (s, n) = sample(&[0x400000, 7]);
        assert_eq!(set.attribute(&s[..n]), Err(AttributeError::IdOutsideRecord { type_: 9, pos: 3, words: 2 }));
        // perf-only records carry no id.
        let round = [68, 0, 0, 0, 0, 0, 8, 0];
        assert_eq!(set.attribute(&round), Err(AttributeError::NotAnEventRecord { type_: 68 }));
        assert_eq!(set.attribute(&round[..4]), Err(AttributeError::Truncated { len: 4 }));
    }

    #[test]
    fn a_duplicated_id_goes_to_the_last_event_listing_it_and_the_previous_one_is_reported() {
        let mut set = EventSet::new([Event::EMPTY; 2], [IdEntry::EMPTY; 2]);
        let a = set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        let b = set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        assert_eq!(set.add_id(a, 5), Ok(None));
        assert_eq!(set.add_id(b, 5), Ok(Some(a)));
        assert_eq!(set.event_of_id(5), Some(b));
        assert_eq!(set.ids().len(), 1);
        assert_eq!(set.add_id(a, 4), Ok(None));
        assert_eq!(set.add_id(a, 6), Err(EventSetError::IdsFull { capacity: 2 }));
        assert_eq!(set.add_id(a, 0), Err(EventSetError::ZeroId));
        assert_eq!(set.add_id(7, 1), Err(EventSetError::NoSuchEvent { index: 7, events: 2 }));
        assert_eq!(set.add_event(&attr(0, true), Endian::Little), Err(EventSetError::EventsFull { capacity: 2 }));
        // The ids stay sorted whatever the insertion order.
        let ids = set.ids();
        assert_eq!((ids.len(), ids[0].id(), ids[1].id()), (2, 4, 5));
    }

    #[test]
    fn events_that_cannot_be_told_apart_are_reported() {
        let mut set = EventSet::new([Event::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(T, true), Endian::Little).unwrap();
        set.add_event(&attr(T, false), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Err(Inconsistency::SampleIdAllDiffers { event: 1 }));

        let mut set = EventSet::new([Event::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(T, true), Endian::Little).unwrap();
        set.add_event(&attr(T | st::ADDR, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Err(Inconsistency::IdPositionDiffers { event: 1, pos: (4, 2), first: (3, 2) }));

        let mut set = EventSet::new([Event::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(st::IP, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Ok(()), "one event needs no id");
        set.add_event(&attr(st::IP, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Err(Inconsistency::NoId { event: 0 }));
        let (s, n) = sample(&[1]);
        assert_eq!(set.attribute(&s[..n]), Err(AttributeError::NoIdPosition));

        // IDENTIFIER everywhere: consistent whatever else differs.
        let mut set = EventSet::new([Event::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(st::IDENTIFIER | st::IP, true), Endian::Little).unwrap();
        set.add_event(&attr(st::IDENTIFIER | st::ADDR | st::CPU, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Ok(()));
    }

    #[test]
    fn without_sample_id_all_other_records_go_to_the_first_event_and_one_event_takes_all() {
        let mut set = EventSet::new([Event::EMPTY; 2], [IdEntry::EMPTY; 2]);
        let a = set.add_event(&attr(st::IDENTIFIER, false), Endian::Little).unwrap();
        let b = set.add_event(&attr(st::IDENTIFIER, false), Endian::Little).unwrap();
        set.add_id(b, 9).unwrap();
        let (c, n) = comm(&[]);
        assert_eq!(set.attribute(&c[..n]), Ok(a));
        let (s, n) = sample(&[9]);
        assert_eq!(set.attribute(&s[..n]), Ok(b));

        let mut one = EventSet::new([Event::EMPTY; 1], [IdEntry::EMPTY; 0]);
        assert_eq!(one.attribute(&s[..n]), Err(AttributeError::NoEvents));
        one.add_event(&attr(st::IP, false), Endian::Little).unwrap();
        assert_eq!(one.attribute(&s[..n]), Ok(0));
        assert_eq!(one.attribute(&c[..n]), Ok(0));
    }
}
