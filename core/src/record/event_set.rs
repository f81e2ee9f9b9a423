//! [`EventSet`]: which event wrote a record, by perf's rules, without allocating.
//!
//! A ring shared by several events (`PERF_EVENT_IOC_SET_OUTPUT`) and a perf.data file with
//! several attrs hold records whose layout depends on the event that wrote them. perf finds the
//! event from the id each record carries (`tools/perf/util/evlist.c:evlist__event2evsel`,
//! perf's tools/perf/util/session.c and evlist.c), and so does [`EventSet::attribute`]:
//!
//! * a set of one event takes every record;
//! * without `sample_id_all` (the first event's), non-SAMPLE records go to the first event;
//! * otherwise the id is read at `id_pos` (u64 words after a SAMPLE's header) or `is_pos`
//!   (words back from the end of another record), positions taken from the first event;
//! * id 0 (records perf synthesizes) goes to the first event;
//! * any other id the set does not know is [`DecodeError::UnknownId`] — never a guess.
//!
//! Events that differ in `sample_id_all` or in where their ids sit cannot be told apart
//! reliably: perf refuses such a file ("non matching sample_type"/"sample_id_all") and only
//! warns in pipe mode. [`EventSet::consistency`] reports it; the caller decides which.
//!
//! Storage is the caller's: any `AsRef<[T]> + AsMut<[T]>`, e.g. arrays in a `static` on a
//! firmware target or pre-sized `Vec`s in a std program (grow them through
//! [`EventSet::event_storage_mut`] and [`EventSet::replace_id_storage`]). The capacity is the
//! storage's length. The ids are a hash table over their storage, as perf's are
//! (`evlist->heads`): an attribution looks at one slot when the table has room, however many
//! ids there are; give it about twice the ids you add.
//!
//! The record then reads as every record does, through [`EventRecord`](super::EventRecord):
//! `event()`, `sample()`, `view()`, `fixed::<ST>()`, `decode()`.
//!
//! ```
//! use perfring::record::{sample_type as st, Attr, Endian, EventLayout, EventRecord, EventSet, IdEntry, Walker};
//! let attr = Attr { sample_type: st::IDENTIFIER | st::IP, size: Attr::SIZE_VER0, ..Attr::default() };
//! let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 8]);
//! let cycles = set.add_event(&attr, Endian::Little).unwrap();
//! let faults = set.add_event(&attr, Endian::Little).unwrap();
//! set.add_id(cycles, 100).unwrap();
//! set.add_id(faults, 200).unwrap();
//! // A SAMPLE: header {type 9, misc 0, size 24}, IDENTIFIER 200, IP 0x1234.
//! let mut rec = [0u8; 24];
//! rec[..8].copy_from_slice(&[9, 0, 0, 0, 0, 0, 24, 0]);
//! rec[8..16].copy_from_slice(&200u64.to_le_bytes());
//! rec[16..].copy_from_slice(&0x1234u64.to_le_bytes());
//! let raw = Walker::new(&rec, Endian::Little).next().unwrap().unwrap();
//! let rec = set.attribute(&raw);
//! assert_eq!(rec.event(), Ok(faults));
//! assert_eq!(rec.sample().unwrap().ip(), Some(0x1234));
//! ```

use core::fmt;

use super::event_record::Attributed;
use super::header::{types, Header};
use super::id_table::{home, insert, lookup, probe_slot, table_len};
use super::raw::RawRecord;
use super::{Attr, DecodeError, Endian, EventLayout, IdEntry};

/// Why an event or an id could not be added, or why the events cannot be told apart
/// ([`EventSet::consistency`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventSetError {
    /// The event storage is full: give the set larger storage.
    EventsFull {
        /// Its length.
        capacity: usize,
    },
    /// The id storage is full: give the set larger storage
    /// ([`EventSet::replace_id_storage`]).
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
    /// [`EventSet::consistency`]: an event's `sample_id_all` differs from the first event's
    /// (perf: "non matching sample_id_all").
    SampleIdAllDiffers {
        /// The event.
        event: usize,
    },
    /// [`EventSet::consistency`]: several events, and this one writes neither IDENTIFIER nor
    /// ID: add `PERF_SAMPLE_IDENTIFIER`.
    NoId {
        /// The event.
        event: usize,
    },
    /// [`EventSet::consistency`]: an event's id sits elsewhere than the first event's (`id_pos`
    /// or `is_pos` differ; perf: "non matching sample_type"): add `PERF_SAMPLE_IDENTIFIER` to
    /// every event.
    IdPositionDiffers {
        /// The event.
        event: usize,
        /// Its (`id_pos`, `is_pos`).
        pos: (usize, usize),
        /// The first event's.
        first: (usize, usize),
    },
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
            EventSetError::SampleIdAllDiffers { event } => write!(
                f,
                "event {event}: sample_id_all differs from the first event's (perf: non matching sample_id_all)"
            ),
            EventSetError::NoId { event } => write!(
                f,
                "event {event}: several events but it writes neither IDENTIFIER nor ID; add PERF_SAMPLE_IDENTIFIER"
            ),
            EventSetError::IdPositionDiffers { event, pos, first } => write!(
                f,
                "event {event}: id at (id_pos, is_pos) = {pos:?}, the first event's at {first:?} \
                 (perf: non matching sample_type); add PERF_SAMPLE_IDENTIFIER to every event"
            ),
        }
    }
}

impl core::error::Error for EventSetError {}

/// Events and the ids that identify them, in caller storage; attributes records to events by
/// perf's rules (module docs).
#[derive(Debug, Clone)]
pub struct EventSet<E, I> {
    events: E,
    n_events: usize,
    /// An open-addressed table: an id sits at its `home` slot or after it (linear probing,
    /// wrapping), empty slots hold id 0 (never registered). `n_ids` used.
    ids: I,
    n_ids: usize,
    /// From the first event, kept here so that attribution reads no layout: where a SAMPLE's
    /// id ends (bytes from the record's start; `NO_ID` if the event writes no id) …
    sample_id_end: usize,
    /// … perf's `is_pos` (0 if the event writes no id) …
    is_pos: usize,
    /// … its `sample_id_all` and byte order.
    sample_id_all: bool,
    endian: Endian,
}

/// `sample_id_end` of an event that writes no id: beyond any record.
const NO_ID: usize = usize::MAX / 2;

impl<E, I> EventSet<E, I>
where
    E: AsRef<[EventLayout]> + AsMut<[EventLayout]>,
    I: AsRef<[IdEntry]> + AsMut<[IdEntry]>,
{
    /// An empty set over `events` and `ids` storage; their lengths are the capacities. The ids
    /// are kept in a hash table over `ids` (its entries are cleared here): give it about twice
    /// the ids you will add, and an attribution finds its id at the first slot it looks at.
    pub fn new(events: E, mut ids: I) -> Self {
        ids.as_mut().fill(IdEntry::EMPTY);
        EventSet {
            events,
            n_events: 0,
            ids,
            n_ids: 0,
            sample_id_end: NO_ID,
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
        *slot = EventLayout::new(attr, endian);
        if n == 0 {
            self.sample_id_end = slot.id_pos().map_or(NO_ID, |p| 16 + 8 * p);
            self.is_pos = slot.is_pos().unwrap_or(0);
            self.sample_id_all = slot.context().sample_id_all;
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
        let capacity = self.ids.as_ref().len();
        let previous = insert(self.ids.as_mut(), IdEntry { id, event: event as u32 })
            .ok_or(EventSetError::IdsFull { capacity })?;
        if previous.is_none() {
            self.n_ids += 1;
        }
        Ok(previous)
    }

    /// The events, in the order they were added.
    pub fn events(&self) -> &[EventLayout] {
        self.events.as_ref().get(..self.n_events).unwrap_or_default()
    }

    /// The layout of event `index`.
    pub fn event(&self, index: usize) -> Option<&EventLayout> {
        self.events().get(index)
    }

    /// The registered ids, in the order of the table (not sorted).
    pub fn ids(&self) -> impl Iterator<Item = &IdEntry> + '_ {
        self.ids.as_ref().iter().filter(|e| e.id != 0)
    }

    /// Number of registered ids.
    pub fn id_count(&self) -> usize {
        self.n_ids
    }

    /// Slots of the id table: the id storage's length (at most 2^32 used).
    pub fn id_capacity(&self) -> usize {
        self.ids.as_ref().len()
    }

    /// The event registered for `id` (`None` for id 0, which is never registered).
    #[inline(always)]
    pub fn event_of_id(&self, id: u64) -> Option<usize> {
        if id == 0 {
            return None;
        }
        self.lookup(id)
    }

    /// Where `id` is registered: its slot in the id storage and its event (`None` for id 0 and
    /// for an id no event lists). A slot stays `id`'s until the storage is replaced
    /// ([`replace_id_storage`](Self::replace_id_storage)), so a caller can keep per-id state
    /// in an array as long as the id storage, indexed by slot (as perf keeps its per-id
    /// `perf_sample_id`), instead of in a map of its own.
    #[inline]
    pub fn id_slot(&self, id: u64) -> Option<(usize, usize)> {
        if id == 0 {
            return None;
        }
        let table = self.ids.as_ref();
        let at = home(id, table_len(table));
        let e = table.get(at)?;
        let slot = match e.id {
            i if i == id => at,
            0 => return None,
            _ => probe_slot(table, id, at)?,
        };
        table.get(slot).map(|e| (slot, e.event()))
    }

    /// The event of `id`, and the first event for id 0 (perf's rule for synthesized records):
    /// an empty slot is `{id 0, event 0}`, so the probe for id 0 ends at the first empty slot
    /// with event 0, and no separate test of id 0 is needed on the hot path.
    ///
    /// A hash probe rather than a scan or a binary search: one slot looked at for an id at
    /// home, whatever the number of ids (measured: BENCHMARKS.md "Decoding").
    #[inline(always)]
    fn lookup(&self, id: u64) -> Option<usize> {
        lookup(self.ids.as_ref(), id)
    }

    /// The event storage, to grow it (e.g. `Vec::resize` when
    /// [`add_event`](Self::add_event) reported it full). Shrinking it below what is used makes
    /// the events past its end unreachable; nothing panics.
    pub fn event_storage_mut(&mut self) -> &mut E {
        &mut self.events
    }

    /// Move the ids into `storage` (e.g. a larger `Vec` when [`add_id`](Self::add_id) reported
    /// the table full) and return the storage they were in. `storage` shorter than the ids
    /// registered is refused with [`EventSetError::IdsFull`], and the set is left as it was.
    pub fn replace_id_storage(&mut self, mut storage: I) -> Result<I, EventSetError> {
        let capacity = table_len(storage.as_ref());
        if capacity < self.n_ids {
            return Err(EventSetError::IdsFull { capacity });
        }
        let table = storage.as_mut();
        table.fill(IdEntry::EMPTY);
        for e in self.ids() {
            // Fits: the new table has a slot for every id.
            insert(table, *e).ok_or(EventSetError::IdsFull { capacity })?;
        }
        Ok(core::mem::replace(&mut self.ids, storage))
    }

    /// Whether every record of these events can be attributed reliably: `Err` names the first
    /// event that breaks perf's rules (`evlist__valid_sample_type`,
    /// `evlist__valid_sample_id_all`): [`EventSetError::SampleIdAllDiffers`],
    /// [`EventSetError::NoId`], [`EventSetError::IdPositionDiffers`]. perf refuses a file with
    /// any of these; in pipe mode it warns and goes on with the first event's positions, as
    /// [`attribute`](Self::attribute) does.
    pub fn consistency(&self) -> Result<(), EventSetError> {
        let events = self.events();
        let Some(first) = events.first() else { return Ok(()) };
        let pos = |e: &EventLayout| (e.id_pos(), e.is_pos());
        for (event, e) in events.iter().enumerate().skip(1) {
            if e.context().sample_id_all != first.context().sample_id_all {
                return Err(EventSetError::SampleIdAllDiffers { event });
            }
        }
        if events.len() > 1 {
            let (Some(fi), Some(fs)) = pos(first) else { return Err(EventSetError::NoId { event: 0 }) };
            for (event, e) in events.iter().enumerate().skip(1) {
                match pos(e) {
                    (Some(i), Some(s)) if (i, s) == (fi, fs) => {}
                    (Some(i), Some(s)) => {
                        return Err(EventSetError::IdPositionDiffers { event, pos: (i, s), first: (fi, fs) })
                    }
                    _ => return Err(EventSetError::NoId { event }),
                }
            }
        }
        Ok(())
    }

    /// The record `raw` with the event that wrote it, by the rules of the module docs: read
    /// it through [`EventRecord`](super::EventRecord) (its id, and every field the tiers
    /// read, in the byte order the record was read in: an event's layout does not depend on
    /// it). An id no event has is
    /// [`DecodeError::UnknownId`] — never a guess.
    #[inline(always)]
    pub fn attribute<'a>(&'a self, raw: &RawRecord<'a>) -> Attributed<'a> {
        let event = self
            .attribute_typed(raw.header.type_, raw.bytes, raw.endian)
            .and_then(|index| self.events.as_ref().get(index).map(|e| (index, e)).ok_or(DecodeError::NoEvents));
        Attributed::new(*raw, event)
    }

    // Always inlined: the caller's type test and the `Result` then fold into its own code (an
    // out-of-line call costs about three times the instructions; BENCHMARKS.md, "Decoding").
    #[inline(always)]
    fn attribute_typed(&self, type_: u32, record: &[u8], endian: Endian) -> Result<usize, DecodeError> {
        let len = record.len();
        // Where the id ends: an end rather than a start, so that reading it is one check that
        // the record reaches it (the id's 8 bytes are then its last 8).
        let end = if type_ == types::SAMPLE {
            if self.n_events < 2 {
                return self.one_or_none();
            }
            self.sample_id_end
        } else if type_ == 0 || type_ >= types::HEADER_ATTR {
            return Err(DecodeError::NotAnEventRecord { type_ });
        } else if self.n_events < 2 {
            return self.one_or_none();
        } else if !self.sample_id_all {
            return Ok(0);
        } else {
            // `is_pos` words back from the end of the body, which is whole words long.
            let body_end = Header::SIZE + (len.saturating_sub(Header::SIZE) & !7);
            match body_end.checked_sub(8 * self.is_pos) {
                Some(at) if self.is_pos != 0 && at >= Header::SIZE => at + 8,
                _ => NO_ID,
            }
        };
        let Some(id) = record.get(..end).and_then(<[u8]>::last_chunk::<8>) else {
            return Err(self.id_error(type_, len));
        };
        let id = endian.u64(*id);
        // Id 0 goes to the first event (`lookup` gives it without a test of its own).
        self.lookup(id).ok_or(DecodeError::UnknownId { id })
    }

    /// The attribution in a set of fewer than two events: the one event takes every record.
    #[inline(always)]
    fn one_or_none(&self) -> Result<usize, DecodeError> {
        if self.n_events == 0 {
            Err(DecodeError::NoEvents)
        } else {
            Ok(0)
        }
    }

    /// Why the id could not be read (the cold path of attribution).
    #[cold]
    fn id_error(&self, type_: u32, len: usize) -> DecodeError {
        let words = len.saturating_sub(Header::SIZE) / 8;
        let pos = if type_ == types::SAMPLE {
            if self.sample_id_end == NO_ID {
                return DecodeError::NoIdPosition;
            }
            (self.sample_id_end - Header::SIZE) / 8 - 1
        } else {
            if self.is_pos == 0 {
                return DecodeError::NoIdPosition;
            }
            self.is_pos
        };
        DecodeError::IdOutsideRecord { type_, pos, words }
    }
}

impl EventSet<[EventLayout; 1], [IdEntry; 0]> {
    /// A set of one event, `attr`'s, whose records are in `endian` order: it takes every
    /// record, so it needs no ids (a tool reading one event's ring, a decoder given one attr).
    pub fn single(attr: &Attr, endian: Endian) -> Self {
        let mut set = EventSet::new([EventLayout::EMPTY; 1], []);
        // One slot for one event: never full.
        let _ = set.add_event(attr, endian);
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{attr_flags, sample_type as st, EventRecord, Walker};

    /// The event `set` attributes the record `bytes` (little-endian, walked) to.
    fn event_of<E, I>(set: &EventSet<E, I>, bytes: &[u8]) -> Result<usize, DecodeError>
    where
        E: AsRef<[EventLayout]> + AsMut<[EventLayout]>,
        I: AsRef<[IdEntry]> + AsMut<[IdEntry]>,
    {
        let raw = Walker::perf_data(bytes, Endian::Little).next().unwrap()?;
        set.attribute(&raw).event()
    }

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
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
        let a = set.add_event(&attr(T, true), Endian::Little).unwrap();
        let b = set.add_event(&attr(T, true), Endian::Little).unwrap();
        for (event, id) in [(a, 11), (b, 22), (a, 12), (b, 23)] {
            assert_eq!(set.add_id(event, id), Ok(None));
        }
        assert_eq!(set.consistency(), Ok(()));
        // id_pos = 3 (IP, TID, TIME before ID); is_pos = 2 (CPU after ID in the trailer).
        let (s, n) = sample(&[0x400000, 7, 1000, 23, 0, 1]);
        assert_eq!(event_of(&set, &s[..n]), Ok(b));
        let (s, n) = sample(&[0x400000, 7, 1000, 99, 0, 1]);
        assert_eq!(event_of(&set, &s[..n]), Err(DecodeError::UnknownId { id: 99 }));
        // Trailer: TID, TIME, ID, CPU.
        let (c, n) = comm(&[7, 1000, 12, 3]);
        assert_eq!(event_of(&set, &c[..n]), Ok(a));
        assert_eq!(
            set.attribute(&Walker::new(&c[..n], Endian::Little).next().unwrap().unwrap()).view().unwrap().cpu(),
            Some(crate::record::SampleCpu { cpu: 3, res: 0 })
        );
        // Id 0 (synthesized) goes to the first event.
        let (c, n) = comm(&[7, 1000, 0, 3]);
        assert_eq!(event_of(&set, &c[..n]), Ok(a));
        // A SAMPLE too short for its id is an error, not a guess.
        let (s, n) = sample(&[0x400000, 7]);
        assert_eq!(event_of(&set, &s[..n]), Err(DecodeError::IdOutsideRecord { type_: 9, pos: 3, words: 2 }));
        // perf-only records carry no id.
        let round = [68, 0, 0, 0, 0, 0, 8, 0];
        assert_eq!(event_of(&set, &round), Err(DecodeError::NotAnEventRecord { type_: 68 }));
    }

    /// `id_slot` finds each id where the table holds it — at home, after a collision, after
    /// wrapping past the last slot — with its event; id 0 and unknown ids are `None`, and a
    /// full table without the id ends the probe (`None`), not a loop.
    #[test]
    fn id_slot_finds_every_id_where_the_table_holds_it() {
        // Ids whose homes in a 4-slot table are the last slot (a probe from there wraps to 0).
        let last: [u64; 2] = {
            let mut found = (1u64..).filter(|&id| home(id, 4) == 3);
            [found.next().unwrap(), found.next().unwrap()]
        };
        let other = (1u64..).find(|&id| home(id, 4) == 1).unwrap();
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
        let a = set.add_event(&attr(T, true), Endian::Little).unwrap();
        let b = set.add_event(&attr(T, true), Endian::Little).unwrap();
        assert_eq!(set.add_id(a, last[0]), Ok(None));
        assert_eq!(set.add_id(b, last[1]), Ok(None));
        assert_eq!(set.add_id(b, other), Ok(None));
        assert_eq!(set.id_slot(last[0]), Some((3, a)), "at home");
        assert_eq!(set.id_slot(last[1]), Some((0, b)), "past a collision, wrapped to slot 0");
        assert_eq!(set.id_slot(other), Some((1, b)), "at home, after the wrapped one");
        for id in [last[0], last[1], other] {
            let (slot, event) = set.id_slot(id).unwrap();
            assert_eq!(set.ids.as_ref()[slot].id(), id, "the slot holds the id");
            assert_eq!(set.event_of_id(id), Some(event));
        }
        assert_eq!(set.id_slot(0), None, "id 0 is never registered");
        let unknown = (1u64..).find(|&id| home(id, 4) == 2 && ![last[0], last[1], other].contains(&id)).unwrap();
        assert_eq!(set.id_slot(unknown), None, "an empty slot ends the probe");
        // A full table: the probe for an unknown id looks at every slot once, then gives up.
        let fourth =
            (1u64..).find(|&id| ![last[0], last[1], other, unknown].contains(&id) && home(id, 4) == 2).unwrap();
        assert_eq!(set.add_id(a, fourth), Ok(None));
        assert_eq!(set.id_slot(fourth), Some((2, a)));
        let missing = (1u64..).find(|&id| ![last[0], last[1], other, fourth].contains(&id)).unwrap();
        assert_eq!(set.id_slot(missing), None);
        // No storage at all.
        let empty: EventSet<[EventLayout; 1], [IdEntry; 0]> = EventSet::new([EventLayout::EMPTY; 1], []);
        assert_eq!(empty.id_slot(5), None);
    }

    /// A READ sample's counters, through its view: the block read at the layout's offset, a
    /// group's entries in order; an event without READ has none.
    #[test]
    fn a_samples_read_counters_come_through_its_view() {
        use crate::record::read_format as rf;
        let read = Attr { read_format: rf::GROUP | rf::ID, ..attr(st::TID | st::READ | st::PERIOD, false) };
        let set = EventSet::single(&read, Endian::Little);
        // TID, PERIOD, then READ {nr 2, {1000, id 7}, {250, id 8}}.
        let (s, n) = sample(&[0x0000_0005_0000_0005, 99, 2, 1000, 7, 250, 8]);
        let raw = Walker::new(&s[..n], Endian::Little).next().unwrap().unwrap();
        let rec = set.attribute(&raw);
        let counters = rec.sample().unwrap().read().unwrap().unwrap().counters();
        assert_eq!(counters.len(), 2);
        let got: [(u64, Option<u64>); 2] = {
            let mut c = counters;
            [c.next().map(|e| (e.value, e.id)).unwrap(), c.next().map(|e| (e.value, e.id)).unwrap()]
        };
        assert_eq!(got, [(1000, Some(7)), (250, Some(8))]);
        // Shorter than the fixed fields (TID, PERIOD): the view is refused.
        let short = set.attribute(&RawRecord { bytes: &s[..16], ..raw });
        assert!(matches!(short.sample(), Err(DecodeError::Truncated { need: 24, have: 16, .. })));
        // Not a SAMPLE.
        let (c, m) = comm(&[]);
        let comm = set.attribute(&Walker::new(&c[..m], Endian::Little).next().unwrap().unwrap());
        assert_eq!(comm.sample().map(|_| ()), Err(DecodeError::NotASample { type_: 3 }));
        // An event without READ: no READ field.
        let plain = EventSet::single(&attr(st::TID | st::PERIOD, false), Endian::Little);
        let (p, m) = sample(&[5, 1]);
        let rec = plain.attribute(&Walker::new(&p[..m], Endian::Little).next().unwrap().unwrap());
        assert_eq!(rec.sample().unwrap().read(), Ok(None));
    }

    /// Attribution then the event's view: `attribute`'s event and the event's own view; each
    /// way it can fail is a typed error of the step that failed.
    #[test]
    fn a_sample_is_attributed_then_viewed_through_its_event() {
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
        let a = set.add_event(&attr(T, true), Endian::Little).unwrap();
        let b = set.add_event(&attr(T, true), Endian::Little).unwrap();
        set.add_id(a, 11).unwrap();
        set.add_id(b, 22).unwrap();
        fn walk(bytes: &[u8], endian: Endian) -> RawRecord<'_> {
            Walker::perf_data(bytes, endian).next().unwrap().unwrap()
        }
        for (id, want) in [(22, Ok(b)), (11, Ok(a)), (0, Ok(a)), (99, Err(DecodeError::UnknownId { id: 99 }))] {
            let (s, n) = sample(&[0x400000, 7, 1000, id, 3, 1]);
            let rec = set.attribute(&walk(&s[..n], Endian::Little));
            assert_eq!(rec.event(), want);
            match rec.sample() {
                Ok(v) => assert_eq!((v.ip(), v.id(), v.period()), (Some(0x400000), Some(id), Some(1))),
                Err(e) => assert_eq!(Err(e), want),
            }
        }
        // Too short for the id (at word 3): attribution fails; long enough for the id but not
        // for CPU and PERIOD after it: the view does.
        let (s, n) = sample(&[0x400000, 7]);
        let e = set.attribute(&walk(&s[..n], Endian::Little)).sample().map(|_| ()).unwrap_err();
        assert_eq!(e, DecodeError::IdOutsideRecord { type_: 9, pos: 3, words: 2 });
        let (s, n) = sample(&[0x400000, 7, 1000, 22]);
        let e = set.attribute(&walk(&s[..n], Endian::Little)).sample().map(|_| ()).unwrap_err();
        assert!(matches!(e, DecodeError::Truncated { need: 56, have: 40, .. }), "{e:?}");
        // Another record type.
        let (c, n) = comm(&[7, 1000, 22, 3]);
        let e = set.attribute(&walk(&c[..n], Endian::Little)).sample().map(|_| ()).unwrap_err();
        assert_eq!(e, DecodeError::NotASample { type_: 3 });
        // A record in the other byte order is read in its own, through the same layout (an
        // event's offsets do not depend on the order): its id, its fields, its decode.
        let mut big = [0u8; 56];
        big[..8].copy_from_slice(&[0, 0, 0, 9, 0, 0, 0, 56]);
        for (i, w) in [0x400000u64, 7, 1000, 22, 3, 1].iter().enumerate() {
            big[8 + 8 * i..16 + 8 * i].copy_from_slice(&w.to_be_bytes());
        }
        let rec = set.attribute(&walk(&big, Endian::Big));
        assert_eq!(rec.event(), Ok(b));
        let v = rec.sample().unwrap();
        assert_eq!((v.ip(), v.id(), v.period()), (Some(0x400000), Some(22), Some(1)));
        assert_eq!(rec.view().unwrap().id(), Some(22));
        let Ok(crate::record::Record::Sample(d)) = rec.decode() else { panic!("{:?}", rec.decode()) };
        assert_eq!((d.ip(), d.period()), (Some(0x400000), Some(1)));
        // perf-only records carry no id: no event, and their complete decode is raw.
        let round = [68, 0, 0, 0, 0, 0, 8, 0];
        let rec = set.attribute(&walk(&round, Endian::Little));
        assert_eq!(rec.event(), Err(DecodeError::NotAnEventRecord { type_: 68 }));
        assert!(matches!(rec.decode(), Ok(crate::record::Record::Unknown { header: Header { type_: 68, .. }, .. })));
    }

    #[test]
    fn a_duplicated_id_goes_to_the_last_event_listing_it_and_the_previous_one_is_reported() {
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 2]);
        let a = set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        let b = set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        assert_eq!(set.add_id(a, 5), Ok(None));
        assert_eq!(set.add_id(b, 5), Ok(Some(a)));
        assert_eq!(set.event_of_id(5), Some(b));
        assert_eq!(set.id_count(), 1);
        assert_eq!(set.add_id(a, 4), Ok(None));
        assert_eq!(set.add_id(a, 6), Err(EventSetError::IdsFull { capacity: 2 }));
        assert_eq!(set.add_id(a, 0), Err(EventSetError::ZeroId));
        assert_eq!(set.add_id(7, 1), Err(EventSetError::NoSuchEvent { index: 7, events: 2 }));
        assert_eq!(set.add_event(&attr(0, true), Endian::Little), Err(EventSetError::EventsFull { capacity: 2 }));
        let mut ids: [(u64, usize); 2] = [(0, 0); 2];
        for (slot, e) in ids.iter_mut().zip(set.ids()) {
            *slot = (e.id(), e.event());
        }
        ids.sort();
        assert_eq!((set.id_count(), ids), (2, [(4, a), (5, b)]));
    }

    /// The id table over caller storage: every id found and unknown ones not, from a table
    /// twice as large as its ids down to a full one (where an unknown id still ends its probe
    /// after every slot); ids at the same home wrap past the end of the table; storage handed
    /// in dirty is cleared; a move to other storage keeps every id or, too small, changes nothing.
    #[test]
    fn the_id_table_finds_every_id_at_any_load_and_moves_whole() {
        extern crate std;
        use std::vec;
        // Fewer ids under Miri (`make miri`), the same loads.
        let n: u64 = if cfg!(miri) { 40 } else { 1000 };
        for (ids, slots) in [(n, 2 * n as usize), (n, n as usize + 1), (n, n as usize), (1, 1)] {
            let mut set = EventSet::new([EventLayout::EMPTY; 2], vec![IdEntry { id: 77, event: 1 }; slots]);
            assert_eq!(set.event_of_id(77), None, "dirty storage is cleared");
            set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
            set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
            // Kernel ids count up; every third one skipped, as other events' would be.
            let id = |k: u64| 3 * k + 1;
            for k in 0..ids {
                assert_eq!(set.add_id((k % 2) as usize, id(k)), Ok(None));
            }
            assert_eq!(set.id_count(), ids as usize);
            for k in 0..ids {
                assert_eq!(set.event_of_id(id(k)), Some((k % 2) as usize), "id {}", id(k));
                assert_eq!(set.event_of_id(id(k) + 1), None);
            }
            assert_eq!(set.event_of_id(0), None);
            // Id 0 (synthesized records) goes to the first event, also when no slot is empty.
            let (zero, n) = sample(&[0]);
            assert_eq!(event_of(&set, &zero[..n]), Ok(0));
            if ids as usize == slots {
                assert_eq!(set.add_id(0, 2), Err(EventSetError::IdsFull { capacity: slots }));
                assert_eq!(set.add_id(1, id(0)), Ok(Some(0)), "a registered id still moves when full");
                assert_eq!(set.add_id(0, id(0)), Ok(Some(1)));
            }
            let small = set.replace_id_storage(vec![IdEntry::EMPTY; ids as usize - 1]);
            assert_eq!(small.err(), Some(EventSetError::IdsFull { capacity: ids as usize - 1 }));
            assert_eq!(set.event_of_id(id(ids - 1)), Some(((ids - 1) % 2) as usize), "unchanged");
            let old = set.replace_id_storage(vec![IdEntry::EMPTY; 4 * slots]).unwrap();
            assert_eq!((old.len(), set.id_capacity(), set.id_count()), (slots, 4 * slots, ids as usize));
            for k in 0..ids {
                assert_eq!(set.event_of_id(id(k)), Some((k % 2) as usize));
            }
        }
        // No id storage at all: id 0 still goes to the first event, any other id is unknown.
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 0]);
        set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        let (zero, n) = sample(&[0]);
        assert_eq!(event_of(&set, &zero[..n]), Ok(0));
        let (five, n) = sample(&[5]);
        assert_eq!(event_of(&set, &five[..n]), Err(DecodeError::UnknownId { id: 5 }));
        // Three ids whose home is the last slot of a 4-slot table: the 2nd and 3rd wrap to 0, 1.
        let last: std::vec::Vec<u64> = (1..).filter(|&id| home(id, 4) == 3).take(3).collect();
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
        set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        set.add_event(&attr(st::IDENTIFIER, true), Endian::Little).unwrap();
        for (k, &id) in last.iter().enumerate() {
            set.add_id(k % 2, id).unwrap();
        }
        let table: std::vec::Vec<u64> = set.ids.iter().map(IdEntry::id).collect();
        assert_eq!(table, [last[1], last[2], 0, last[0]]);
        for (k, &id) in last.iter().enumerate() {
            assert_eq!(set.event_of_id(id), Some(k % 2));
        }
    }

    #[test]
    fn events_that_cannot_be_told_apart_are_reported() {
        let mut set = EventSet::new([EventLayout::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(T, true), Endian::Little).unwrap();
        set.add_event(&attr(T, false), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Err(EventSetError::SampleIdAllDiffers { event: 1 }));

        let mut set = EventSet::new([EventLayout::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(T, true), Endian::Little).unwrap();
        set.add_event(&attr(T | st::ADDR, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Err(EventSetError::IdPositionDiffers { event: 1, pos: (4, 2), first: (3, 2) }));

        let mut set = EventSet::new([EventLayout::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(st::IP, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Ok(()), "one event needs no id");
        set.add_event(&attr(st::IP, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Err(EventSetError::NoId { event: 0 }));
        let (s, n) = sample(&[1]);
        assert_eq!(event_of(&set, &s[..n]), Err(DecodeError::NoIdPosition));

        // IDENTIFIER everywhere: consistent whatever else differs.
        let mut set = EventSet::new([EventLayout::EMPTY; 3], [IdEntry::EMPTY; 1]);
        set.add_event(&attr(st::IDENTIFIER | st::IP, true), Endian::Little).unwrap();
        set.add_event(&attr(st::IDENTIFIER | st::ADDR | st::CPU, true), Endian::Little).unwrap();
        assert_eq!(set.consistency(), Ok(()));
    }

    #[test]
    fn without_sample_id_all_other_records_go_to_the_first_event_and_one_event_takes_all() {
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 2]);
        let a = set.add_event(&attr(st::IDENTIFIER, false), Endian::Little).unwrap();
        let b = set.add_event(&attr(st::IDENTIFIER, false), Endian::Little).unwrap();
        set.add_id(b, 9).unwrap();
        let (c, m) = comm(&[]);
        assert_eq!(event_of(&set, &c[..m]), Ok(a));
        let (s, n) = sample(&[9]);
        assert_eq!(event_of(&set, &s[..n]), Ok(b));

        let mut one = EventSet::new([EventLayout::EMPTY; 1], [IdEntry::EMPTY; 0]);
        assert_eq!(event_of(&one, &s[..n]), Err(DecodeError::NoEvents));
        one.add_event(&attr(st::IP, false), Endian::Little).unwrap();
        assert_eq!(event_of(&one, &s[..n]), Ok(0));
        assert_eq!(event_of(&one, &c[..m]), Ok(0));
    }
}
