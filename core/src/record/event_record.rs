//! [`EventRecord`]: the one way every record is read, whoever delivered it; [`Attributed`],
//! a ring's or a walk's record with the event an [`EventSet`](super::EventSet) found for it.
//!
//! A record's layout depends on the event that wrote it, so every reader first attributes the
//! record (perf's rules: [`EventSet::attribute`](super::EventSet::attribute)), then reads it
//! in one of three tiers. The same methods, with the same signatures and the same error type,
//! read a ring's record ([`Attributed`]), a perf.data record (`perfring_data::FileRecord`) and a
//! Linux session's (`perfring_linux::SessionRecord`):
//!
//! | to read | call | gives |
//! |---|---|---|
//! | which event wrote it | [`event`](EventRecord::event) | its index in the reader's events |
//! | a SAMPLE's fields, each when asked for | [`sample`](EventRecord::sample) | [`SampleView`] |
//! | the fields perf orders any record by (time, id, cpu, pid, tid) | [`view`](EventRecord::view) | [`RecordView`] |
//! | a SAMPLE of a `sample_type` known when you compile | [`fixed::<ST>`](EventRecord::fixed) | [`FixedSample`] |
//! | every field of any record, every check made | [`decode`](EventRecord::decode) | [`Record`] |
//!
//! Every method returns a [`DecodeError`] on failure: one error type, which names the field
//! and says what to do.

use super::header::types;
use super::layout::SampleLayout;
use super::raw::RawRecord;
use super::{DecodeContext, DecodeError, Endian, EventLayout, FixedSample, Record, RecordView, SampleView};

/// A record and the event that wrote it: what every reader of this crate and of the std crates
/// delivers. Implement [`raw`](Self::raw) and [`attribution`](Self::attribution); the tiers
/// (module docs) come with the trait, the same for every record.
///
/// ```
/// use perfring::record::{sample_type as st, Attr, Endian, EventRecord, EventSet, PidTid, Record, Walker};
/// let attr = Attr { sample_type: st::IP | st::TID, ..Attr::default() };
/// let set = EventSet::single(&attr, Endian::NATIVE);
/// let mut ring = vec![9, 0, 0, 0, 0, 0, 24, 0]; // SAMPLE, 24 bytes: IP, {pid, tid}
/// ring.extend_from_slice(&0x4000u64.to_ne_bytes());
/// ring.extend_from_slice(&[7, 0, 0, 0, 8, 0, 0, 0]);
/// for raw in Walker::new(&ring, Endian::NATIVE) {
///     let rec = set.attribute(&raw.unwrap());
///     assert_eq!(rec.event(), Ok(0));
///     // The view: each field read when asked for.
///     assert_eq!(rec.sample().unwrap().ip(), Some(0x4000));
///     // The complete decode: every check made; a SAMPLE is its checked view.
///     let Ok(Record::Sample(s)) = rec.decode() else { panic!("a SAMPLE") };
///     assert_eq!(s.tid(), Some(PidTid { pid: 7, tid: 8 }));
/// }
/// ```
pub trait EventRecord<'a> {
    /// The record: its header (parsed once), its bytes, its byte order.
    fn raw(&self) -> &RawRecord<'a>;

    /// The index of the event that wrote it (in its reader's events, in the order they were
    /// added) and that event's layout; or why it has none: an id no event has
    /// ([`DecodeError::UnknownId`]), a perf-only record type ([`DecodeError::NotAnEventRecord`]),
    /// a record too short to hold its id, a reader without events. Found once, when the
    /// record was handed out: each call is a copy.
    fn attribution(&self) -> Result<(usize, &'a EventLayout), DecodeError>;

    /// The index of the event that wrote it, or why it cannot be told.
    #[inline]
    fn event(&self) -> Result<usize, DecodeError> {
        self.attribution().map(|(index, _)| index)
    }

    /// A SAMPLE's fields through its event's layout, each read when asked for
    /// ([`SampleView`]): the type, the byte order and the length of the fixed fields are
    /// checked once here. [`DecodeError::NotASample`] for another record: test
    /// `raw().header.type_` first when a stream holds others (the compiler folds this test
    /// into yours).
    #[inline(always)]
    fn sample(&self) -> Result<SampleView<'a>, DecodeError> {
        let raw = self.raw();
        if raw.header.type_ != types::SAMPLE {
            return Err(super::layout::not_a_sample(raw.header.type_));
        }
        let (_, event) = self.attribution()?;
        SampleView::of(raw.bytes, &event.layout, raw.endian)
    }

    /// The values perf orders and attributes any record by — time, id, stream id, cpu, pid/tid
    /// — from a SAMPLE's fields or another record's `sample_id` trailer ([`RecordView`]).
    #[inline]
    fn view(&self) -> Result<RecordView<'a>, DecodeError> {
        let (_, event) = self.attribution()?;
        Ok(RecordView::of(self.raw().bytes, &event.layout, self.raw().endian))
    }

    /// A SAMPLE's fixed fields (IDENTIFIER through PERIOD) at the constant offsets of
    /// `SAMPLE_TYPE`, the `sample_type` its event was opened with: each field one load
    /// ([`FixedSample`]). [`DecodeError::SampleTypeDiffers`] when the event's `sample_type` is
    /// another (then read it through [`sample`](Self::sample)), [`DecodeError::NotASample`]
    /// for another record.
    #[inline(always)]
    fn fixed<const SAMPLE_TYPE: u64>(&self) -> Result<FixedSample<'a, SAMPLE_TYPE>, DecodeError> {
        let raw = self.raw();
        if raw.header.type_ != types::SAMPLE {
            return Err(super::layout::not_a_sample(raw.header.type_));
        }
        let (_, event) = self.attribution()?;
        FixedSample::of(raw.bytes, event.context(), raw.endian)
    }

    /// Every field of the record, every check made ([`Record`]; the reference the views are
    /// tested against). A perf-only record type (≥ 64, or 0), which no event's layout reads, is
    /// [`Record::Unknown`] with its bytes as they are; a record whose event cannot be told is
    /// that error: it is never decoded with a guessed layout.
    ///
    /// A SAMPLE is [`Record::Sample`]: its [`SampleView`], every check of the decode made, so
    /// that `match rec.decode()` by value moves a few words, not a SAMPLE's fields (a `Record`
    /// is as large as MMAP2's fields); [`SampleView::to_sample`] gives them as values.
    #[inline(always)]
    fn decode(&self) -> Result<Record<'a>, DecodeError> {
        let raw = self.raw();
        match self.attribution() {
            Ok((_, event)) => super::decode::decode(raw, &event.layout),
            // No event's layout: the raw form, its size checked as any record's (in its own
            // byte order, parsed with its header).
            Err(DecodeError::NotAnEventRecord { .. }) => super::decode::decode(raw, &NO_EVENT),
            Err(e) => Err(e),
        }
    }
}

/// The layout a perf-only record type is decoded with: no field of any event.
static NO_EVENT: SampleLayout = SampleLayout::new(&DecodeContext::new(Endian::NATIVE));

/// A ring's or a walk's [`RawRecord`] with the event an [`EventSet`](super::EventSet) found for
/// it ([`EventSet::attribute`](super::EventSet::attribute)): read it through [`EventRecord`].
#[derive(Debug, Clone, Copy)]
pub struct Attributed<'a> {
    raw: RawRecord<'a>,
    event: Result<(usize, &'a EventLayout), DecodeError>,
}

impl<'a> Attributed<'a> {
    /// `raw`, attributed (by the caller: [`EventSet::attribute`](super::EventSet::attribute)).
    #[inline(always)]
    pub(super) fn new(raw: RawRecord<'a>, event: Result<(usize, &'a EventLayout), DecodeError>) -> Self {
        Attributed { raw, event }
    }
}

impl<'a> EventRecord<'a> for Attributed<'a> {
    #[inline(always)]
    fn raw(&self) -> &RawRecord<'a> {
        &self.raw
    }
    #[inline(always)]
    fn attribution(&self) -> Result<(usize, &'a EventLayout), DecodeError> {
        self.event
    }
}
