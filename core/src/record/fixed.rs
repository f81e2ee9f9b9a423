//! A SAMPLE layout known when the consumer is compiled: [`FixedEvents`] attributes a SAMPLE and
//! hands out a [`FixedSample`] whose fields sit at constant offsets, in one step.
//!
//! A tool that opens its own events, or a host reading a firmware's ring, knows their
//! `sample_type` when it is written. Naming it as a const parameter lets the compiler fold
//! every field's `sample_type` test and offset to a constant: reading a field is one load, and
//! a view is one length check against a constant. [`EventSet::fixed`] checks once that every
//! event of the set has exactly that `sample_type` (and one byte order), so a record is never
//! read with offsets its event did not write.
//!
//! A record already attributed (a `perfring-linux` session's, whose events the tool opened)
//! gets the same view from its event: [`EventLayout::fixed_sample`] checks that event's
//! `sample_type` against the one named, per record.
//!
//! The constant part is the fixed prefix, IDENTIFIER through PERIOD; READ, CALLCHAIN, RAW and
//! the fields after them are read through the event's run-time layout
//! (`set.event(index)` then [`EventLayout::sample`](super::EventLayout::sample) on
//! [`FixedSample::bytes`]).
//!
//! ```
//! use perfring::record::{sample_type as st, types, Attr, Endian, EventLayout, EventSet, IdEntry, Walker};
//! const ST: u64 = st::IDENTIFIER | st::IP | st::TID | st::TIME;
//! let attr = Attr { sample_type: ST, size: Attr::SIZE_VER0, ..Attr::default() };
//! let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 8]);
//! let cycles = set.add_event(&attr, Endian::NATIVE).unwrap();
//! let faults = set.add_event(&attr, Endian::NATIVE).unwrap();
//! set.add_id(cycles, 100).unwrap();
//! set.add_id(faults, 200).unwrap();
//! // A SAMPLE of `faults`: header {type 9, size 40}, IDENTIFIER, IP, {pid, tid}, TIME.
//! let mut ring = Vec::new();
//! ring.extend_from_slice(&[9, 0, 0, 0, 0, 0, 40, 0]);
//! for word in [200u64, 0x1234, (7 << 32) | 8, 5_000] {
//!     ring.extend_from_slice(&word.to_ne_bytes());
//! }
//! let fixed = set.fixed::<ST>().unwrap();
//! for record in Walker::new(&ring, Endian::NATIVE) {
//!     let record = record.unwrap();
//!     if record.header.type_ != types::SAMPLE {
//!         continue;
//!     }
//!     let (event, sample) = fixed.sample(&record).unwrap();
//!     assert_eq!(event, faults);
//!     assert_eq!((sample.ip(), sample.pid(), sample.tid()), (Some(0x1234), Some(8), Some(7)));
//!     assert_eq!((sample.time(), sample.period()), (Some(5_000), None));
//! }
//! ```

use core::fmt;

use super::event_set::{lookup, AttributeError, EventLayout, EventSet, IdEntry};
use super::layout::{check_sample_ref, too_short};
use super::sample_type as st;
use super::{DecodeContext, DecodeError, Endian, PidTid, RecordRef, SampleCpu, SampleLayout};

/// The fixed-prefix fields (all 8 bytes), in any order.
const PREFIX: u64 =
    st::IDENTIFIER | st::IP | st::TID | st::TIME | st::ADDR | st::ID | st::STREAM_ID | st::CPU | st::PERIOD;

/// The layout of `SAMPLE_TYPE`, as [`SampleLayout::new`] computes it for any event.
struct Offsets<const SAMPLE_TYPE: u64>;

impl<const SAMPLE_TYPE: u64> Offsets<SAMPLE_TYPE> {
    const LAYOUT: SampleLayout =
        SampleLayout::new(&DecodeContext { sample_type: SAMPLE_TYPE, ..DecodeContext::new(Endian::NATIVE) });
    /// Bytes of a SAMPLE up to the end of PERIOD's place: header and the fixed-prefix fields.
    const END: usize = 8 + 8 * (SAMPLE_TYPE & PREFIX).count_ones() as usize;
    /// Where the event id ends: IDENTIFIER's, else ID's (perf's `id_pos`); 0 without either.
    const ID_END: usize = match Self::LAYOUT.id_pos() {
        Some(pos) => 16 + 8 * pos,
        None => 0,
    };

    // Each field's offset, `None` when `SAMPLE_TYPE` lacks it: constants.
    const IDENTIFIER: Option<usize> = Self::LAYOUT.fixed_offset(st::IDENTIFIER);
    const IP: Option<usize> = Self::LAYOUT.fixed_offset(st::IP);
    const TID: Option<usize> = Self::LAYOUT.fixed_offset(st::TID);
    const TIME: Option<usize> = Self::LAYOUT.fixed_offset(st::TIME);
    const ADDR: Option<usize> = Self::LAYOUT.fixed_offset(st::ADDR);
    const ID: Option<usize> = Self::LAYOUT.fixed_offset(st::ID);
    const STREAM_ID: Option<usize> = Self::LAYOUT.fixed_offset(st::STREAM_ID);
    const CPU: Option<usize> = Self::LAYOUT.fixed_offset(st::CPU);
    const PERIOD: Option<usize> = Self::LAYOUT.fixed_offset(st::PERIOD);
}

/// Why [`EventSet::fixed`] refused a set: its records cannot all be read with one
/// compile-time layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FixedLayoutError {
    /// The set has no events: add them first.
    NoEvents,
    /// An event's `sample_type` is not the one named: name that one, or read this set
    /// through the run-time layouts ([`EventSet::attribute_event`]).
    SampleTypeDiffers {
        /// The event.
        event: usize,
        /// Its `sample_type`.
        sample_type: u64,
        /// The `sample_type` named.
        fixed: u64,
    },
    /// An event's records are in another byte order than the first event's.
    ByteOrderDiffers {
        /// The event.
        event: usize,
    },
    /// Several events, but `sample_type` has neither IDENTIFIER nor ID, so nothing in a
    /// SAMPLE tells them apart: record with `PERF_SAMPLE_IDENTIFIER`.
    NoIdPosition,
}

impl fmt::Display for FixedLayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FixedLayoutError::NoEvents => write!(f, "the event set is empty: add the events first"),
            FixedLayoutError::SampleTypeDiffers { event, sample_type, fixed } => write!(
                f,
                "event {event} has sample_type {sample_type:#x}, not the fixed {fixed:#x}: \
                 read it through its run-time layout"
            ),
            FixedLayoutError::ByteOrderDiffers { event } => {
                write!(f, "event {event}'s records are in another byte order than the first event's")
            }
            FixedLayoutError::NoIdPosition => write!(
                f,
                "several events, but the fixed sample_type lacks IDENTIFIER and ID: \
                 record with PERF_SAMPLE_IDENTIFIER"
            ),
        }
    }
}

impl core::error::Error for FixedLayoutError {}

/// Why a SAMPLE could not be attributed and viewed in one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SampleError {
    /// The record is not a SAMPLE of this layout: another type, another byte order, or too
    /// short for its fixed fields.
    Decode(DecodeError),
    /// Its event could not be found (an id the set does not know).
    Attribute(AttributeError),
    /// The event's `sample_type` is not the one named ([`EventLayout::fixed_sample`]): name that
    /// one, or read the record through the event's run-time layout ([`EventLayout::sample`]).
    SampleTypeDiffers {
        /// The event's `sample_type`.
        sample_type: u64,
        /// The `sample_type` named.
        fixed: u64,
    },
}

impl From<DecodeError> for SampleError {
    fn from(e: DecodeError) -> Self {
        SampleError::Decode(e)
    }
}

impl From<AttributeError> for SampleError {
    fn from(e: AttributeError) -> Self {
        SampleError::Attribute(e)
    }
}

impl fmt::Display for SampleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SampleError::Decode(e) => e.fmt(f),
            SampleError::Attribute(e) => e.fmt(f),
            SampleError::SampleTypeDiffers { sample_type, fixed } => write!(
                f,
                "the event's sample_type is {sample_type:#x}, not the fixed {fixed:#x}: \
                 read it through its run-time layout"
            ),
        }
    }
}

impl core::error::Error for SampleError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SampleError::Decode(e) => Some(e),
            SampleError::Attribute(e) => Some(e),
            SampleError::SampleTypeDiffers { .. } => None,
        }
    }
}

/// The events of an [`EventSet`] whose `sample_type` is `SAMPLE_TYPE`, checked once by
/// [`EventSet::fixed`] (module docs). Borrows the set: no event or id changes while it lives.
#[derive(Debug, Clone, Copy)]
pub struct FixedEvents<'s, const SAMPLE_TYPE: u64> {
    events: &'s [EventLayout],
    ids: &'s [IdEntry],
    endian: Endian,
}

impl<E, I> EventSet<E, I>
where
    E: AsRef<[EventLayout]> + AsMut<[EventLayout]>,
    I: AsRef<[IdEntry]> + AsMut<[IdEntry]>,
{
    /// The set's events read with the compile-time layout of `SAMPLE_TYPE` (module docs):
    /// refused unless every event has exactly that `sample_type` and the first event's byte
    /// order, and, with several events, `SAMPLE_TYPE` carries an id.
    pub fn fixed<const SAMPLE_TYPE: u64>(&self) -> Result<FixedEvents<'_, SAMPLE_TYPE>, FixedLayoutError> {
        let (events, ids) = self.parts();
        let first = events.first().ok_or(FixedLayoutError::NoEvents)?;
        let endian = first.context().endian;
        for (event, e) in events.iter().enumerate() {
            let sample_type = e.context().sample_type;
            if sample_type != SAMPLE_TYPE {
                return Err(FixedLayoutError::SampleTypeDiffers { event, sample_type, fixed: SAMPLE_TYPE });
            }
            if e.context().endian != endian {
                return Err(FixedLayoutError::ByteOrderDiffers { event });
            }
        }
        if events.len() > 1 && Offsets::<SAMPLE_TYPE>::ID_END == 0 {
            return Err(FixedLayoutError::NoIdPosition);
        }
        Ok(FixedEvents { events, ids, endian })
    }
}

impl<'s, const SAMPLE_TYPE: u64> FixedEvents<'s, SAMPLE_TYPE> {
    /// The events, in the order they were added to the set.
    pub fn events(&self) -> &'s [EventLayout] {
        self.events
    }

    /// The layout of event `index` (for the fields past the fixed prefix, through its run-time layout).
    pub fn event(&self, index: usize) -> Option<&'s EventLayout> {
        self.events.get(index)
    }

    /// The byte order of the events' records.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// The index of the event that wrote the SAMPLE `record`, and a view of its fixed fields:
    /// checks the type, the byte order and that the fixed prefix fits, once; then finds the
    /// event by its id with [`EventSet::attribute`]'s rules (a set of one event takes every
    /// SAMPLE; id 0 goes to the first event; any other unknown id is
    /// [`AttributeError::UnknownId`]).
    ///
    /// Test `record.header.type_` first when the walk holds other records too: the compiler
    /// folds this method's own test into yours.
    #[inline(always)]
    pub fn sample<'a, R: RecordRef<'a>>(
        &self,
        record: R,
    ) -> Result<(usize, FixedSample<'a, SAMPLE_TYPE>), SampleError> {
        let endian = check_sample_ref(record, self.endian)?;
        let bytes = record.record_bytes();
        let sample = FixedSample::new(bytes, endian)?;
        if self.events.len() < 2 {
            return Ok((0, sample));
        }
        // With several events `fixed` made sure the id has a place (ID_END ≥ 16), and `new`
        // that the record reaches it: this read is one load.
        let at = Offsets::<SAMPLE_TYPE>::ID_END.wrapping_sub(8);
        let id = endian.u64_at(bytes, at).unwrap_or(0);
        match lookup(self.ids, id) {
            Some(index) => Ok((index, sample)),
            None => Err(AttributeError::UnknownId { id }.into()),
        }
    }
}

impl EventLayout {
    /// Its SAMPLE record — its bytes (header included) or a record a reader handed out with
    /// its header parsed ([`RecordRef`], which is then not parsed again) — through the
    /// compile-time layout of `SAMPLE_TYPE`, for a record already attributed to this event (e.g. a
    /// `perfring-linux` session's): refused unless the event's `sample_type` is exactly
    /// `SAMPLE_TYPE` ([`SampleError::SampleTypeDiffers`]); then the record's type and the fixed
    /// prefix's length are checked once, and each field is one load at a constant offset.
    /// For a stream of records of several events, [`EventSet::fixed`] checks the events once
    /// instead of per record.
    #[inline]
    pub fn fixed_sample<'a, const SAMPLE_TYPE: u64>(
        &self,
        record: impl RecordRef<'a>,
    ) -> Result<FixedSample<'a, SAMPLE_TYPE>, SampleError> {
        let ctx = self.context();
        if ctx.sample_type != SAMPLE_TYPE {
            return Err(SampleError::SampleTypeDiffers { sample_type: ctx.sample_type, fixed: SAMPLE_TYPE });
        }
        let endian = check_sample_ref(record, ctx.endian)?;
        Ok(FixedSample::new(record.record_bytes(), endian)?)
    }
}

/// A SAMPLE whose fixed fields (IDENTIFIER through PERIOD) sit where `SAMPLE_TYPE` puts them:
/// each accessor is one load at a constant offset, `None` exactly when `SAMPLE_TYPE` lacks the
/// field. Made by [`FixedEvents::sample`].
#[derive(Debug, Clone, Copy)]
pub struct FixedSample<'a, const SAMPLE_TYPE: u64> {
    /// At least `Offsets::<SAMPLE_TYPE>::END` bytes (checked in `new`).
    bytes: &'a [u8],
    endian: Endian,
}

impl<'a, const SAMPLE_TYPE: u64> FixedSample<'a, SAMPLE_TYPE> {
    /// `bytes` (a whole SAMPLE record) if its fixed fields fit.
    #[inline(always)]
    fn new(bytes: &'a [u8], endian: Endian) -> Result<Self, DecodeError> {
        let need = Offsets::<SAMPLE_TYPE>::END;
        if bytes.len() < need {
            return Err(too_short(need, bytes.len()));
        }
        Ok(FixedSample { bytes, endian })
    }

    /// The 8 bytes at `at`, a field's constant offset: `None` when `SAMPLE_TYPE` lacks it.
    /// (The bounds check compares constants with the length `new` checked, so it folds away:
    /// measured, not assumed, BENCHMARKS.md "Decoding".)
    #[inline(always)]
    fn word(&self, at: Option<usize>) -> Option<[u8; 8]> {
        let at = at?;
        self.bytes.get(at..at + 8)?.first_chunk::<8>().copied()
    }
    /// The u64 field at `at`.
    #[inline(always)]
    fn u64(&self, at: Option<usize>) -> Option<u64> {
        self.word(at).map(|b| self.endian.u64(b))
    }
    /// The two u32s of the field at `at` (TID, CPU).
    #[inline(always)]
    fn pair(&self, at: Option<usize>) -> Option<(u32, u32)> {
        self.endian.u32_pair_at(&self.word(at)?, 0)
    }

    /// The record bytes, header included.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// `header.misc`.
    #[inline]
    pub fn misc(&self) -> u16 {
        self.bytes.first_chunk::<8>().map_or(0, |h| self.endian.u16([h[4], h[5]]))
    }
    /// IDENTIFIER.
    #[inline]
    pub fn identifier(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::IDENTIFIER)
    }
    /// IP.
    #[inline]
    pub fn ip(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::IP)
    }
    /// TID: `{pid, tid}`.
    #[inline]
    pub fn pid_tid(&self) -> Option<PidTid> {
        let (pid, tid) = self.pair(Offsets::<SAMPLE_TYPE>::TID)?;
        Some(PidTid { pid, tid })
    }
    /// TID's pid.
    #[inline]
    pub fn pid(&self) -> Option<u32> {
        self.pid_tid().map(|p| p.pid)
    }
    /// TID's tid.
    #[inline]
    pub fn tid(&self) -> Option<u32> {
        self.pid_tid().map(|p| p.tid)
    }
    /// TIME.
    #[inline]
    pub fn time(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::TIME)
    }
    /// ADDR.
    #[inline]
    pub fn addr(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::ADDR)
    }
    /// The event id, as perf's `sample->id`: the ID field, or IDENTIFIER when the event writes
    /// only that (the two hold the same value when it writes both).
    #[inline]
    pub fn id(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::ID).or_else(|| self.identifier())
    }
    /// STREAM_ID.
    #[inline]
    pub fn stream_id(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::STREAM_ID)
    }
    /// CPU: `{cpu, res}`.
    #[inline]
    pub fn cpu(&self) -> Option<SampleCpu> {
        let (cpu, res) = self.pair(Offsets::<SAMPLE_TYPE>::CPU)?;
        Some(SampleCpu { cpu, res })
    }
    /// PERIOD.
    #[inline]
    pub fn period(&self) -> Option<u64> {
        self.u64(Offsets::<SAMPLE_TYPE>::PERIOD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::WalkedRecord;
    use crate::record::{read_format as rf, types, Attr, Walker};

    fn attr(sample_type: u64) -> Attr {
        Attr { sample_type, size: Attr::SIZE_VER0, ..Attr::ZERO }
    }

    /// A SAMPLE of `words` body words after the header, in `endian` order.
    fn record(words: &[u64], endian: Endian) -> ([u8; 256], usize) {
        let mut b = [0u8; 256];
        let size = 8 + 8 * words.len();
        b[..4].copy_from_slice(&endian.put_u32(types::SAMPLE));
        b[4..6].copy_from_slice(&endian.put_u16(0x4002));
        b[6..8].copy_from_slice(&endian.put_u16(size as u16));
        for (i, w) in words.iter().enumerate() {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&endian.put_u64(*w));
        }
        (b, size)
    }

    /// Every accessor of a `FixedSample<ST>` reads what the run-time `SampleView` of an event
    /// with `sample_type` ST reads, in both byte orders, for records of distinct words with and
    /// without words past the fixed prefix.
    fn agrees<const ST: u64>() {
        for endian in [Endian::Little, Endian::Big] {
            for extra in [0, 3] {
                let n = (ST & PREFIX).count_ones() as usize + extra;
                let words: [u64; 16] = core::array::from_fn(|i| 0x0101_0101_0101_0101 * (i as u64 + 1) + ST);
                let (bytes, size) = record(&words[..n], endian);
                let bytes = &bytes[..size];
                let mut set = EventSet::new([EventLayout::EMPTY; 1], [IdEntry::EMPTY; 0]);
                set.add_event(&attr(ST), endian).unwrap();
                let fixed = set.fixed::<ST>().unwrap();
                let walked = Walker::perf_data(bytes, endian).next().unwrap().unwrap();
                let (index, f) = fixed.sample(&walked).unwrap();
                assert_eq!((index, f.bytes(), f.misc()), (0, bytes, 0x4002));
                // One byte short of the fixed prefix: a typed error, not a read past the record.
                if extra == 0 && n > 0 {
                    let short = &bytes[..size - 1];
                    let walked = WalkedRecord { bytes: short, ..walked };
                    assert_eq!(
                        fixed.sample(&walked).map(|_| ()),
                        Err(SampleError::Decode(DecodeError::Truncated {
                            field: "sample (fixed fields)",
                            offset: 0,
                            need: size,
                            have: size - 1
                        }))
                    );
                }
                // The run-time prefix also holds READ (without GROUP): give it its word.
                if ST & st::READ != 0 && extra == 0 {
                    continue;
                }
                let v = fixed.event(index).unwrap().sample(bytes).unwrap();
                assert_eq!((f.identifier(), f.ip(), f.pid_tid()), (v.identifier(), v.ip(), v.pid_tid()), "{ST:#x}");
                assert_eq!((f.pid(), f.tid(), f.time(), f.addr()), (v.pid(), v.tid(), v.time(), v.addr()));
                assert_eq!((f.id(), f.stream_id(), f.cpu(), f.period()), (v.id(), v.stream_id(), v.cpu(), v.period()));
                // Each field present in ST is read, from one of the record's words.
                let read = [f.identifier(), f.ip(), f.time(), f.addr(), f.id(), f.stream_id(), f.period()];
                let bits = [st::IDENTIFIER, st::IP, st::TIME, st::ADDR, st::ID, st::STREAM_ID, st::PERIOD];
                for (value, bit) in read.iter().zip(bits) {
                    // `id()` is perf's sample->id: ID, or IDENTIFIER when only that is written.
                    let bit = if bit == st::ID { st::ID | st::IDENTIFIER } else { bit };
                    assert_eq!(value.is_some(), ST & bit != 0, "{ST:#x} {bit:#x}");
                    assert!(value.map_or(true, |v| words[..n].contains(&v)));
                }
            }
        }
    }

    #[test]
    fn a_fixed_sample_reads_what_the_run_time_view_reads() {
        agrees::<0>();
        agrees::<{ st::IP | st::TID | st::TIME | st::PERIOD }>();
        agrees::<{ st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD }>();
        agrees::<{ PREFIX }>();
        agrees::<{ PREFIX & !st::IDENTIFIER }>();
        agrees::<{ st::TIME | st::ID | st::CPU | st::STREAM_ID }>();
        agrees::<{ st::IDENTIFIER | st::ADDR | st::CPU | st::CALLCHAIN | st::RAW }>();
        agrees::<{ st::IP | st::TID | st::READ | st::CALLCHAIN | st::BRANCH_STACK }>();
    }

    const ST: u64 = st::IP | st::TID | st::TIME | st::ID | st::CPU | st::PERIOD;

    #[test]
    fn fixed_refuses_a_set_it_cannot_read_with_one_layout() {
        let empty = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
        assert_eq!(empty.fixed::<ST>().map(|_| ()), Err(FixedLayoutError::NoEvents));
        let mut set = EventSet::new([EventLayout::EMPTY; 3], [IdEntry::EMPTY; 4]);
        set.add_event(&attr(ST), Endian::Little).unwrap();
        assert!(set.fixed::<ST>().is_ok());
        assert_eq!(
            set.fixed::<{ ST | st::IDENTIFIER }>().map(|_| ()),
            Err(FixedLayoutError::SampleTypeDiffers { event: 0, sample_type: ST, fixed: ST | st::IDENTIFIER })
        );
        // The same sample_type with another read_format is the same prefix: accepted.
        set.add_event(&Attr { read_format: rf::ID, ..attr(ST) }, Endian::Little).unwrap();
        assert!(set.fixed::<ST>().is_ok());
        set.add_event(&attr(ST), Endian::Big).unwrap();
        assert_eq!(set.fixed::<ST>().map(|_| ()), Err(FixedLayoutError::ByteOrderDiffers { event: 2 }));
        // Several events and no id in the SAMPLE: nothing tells them apart.
        const NO_ID: u64 = st::IP | st::TIME;
        let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
        set.add_event(&attr(NO_ID), Endian::Little).unwrap();
        assert!(set.fixed::<NO_ID>().is_ok(), "one event needs no id");
        set.add_event(&attr(NO_ID), Endian::Little).unwrap();
        assert_eq!(set.fixed::<NO_ID>().map(|_| ()), Err(FixedLayoutError::NoIdPosition));
    }

    /// `EventLayout::fixed_sample` reads what the set's one step reads, for the event's own
    /// `sample_type` only; other types and short records are typed errors.
    #[test]
    fn an_attributed_event_gives_its_fixed_sample_for_its_own_sample_type_only() {
        for endian in [Endian::Little, Endian::Big] {
            let event = EventLayout::new(&attr(ST), endian);
            let (bytes, size) = record(&[0x400000, (7 << 32) | 8, 1000, 22, 3, 1], endian);
            let bytes = &bytes[..size];
            let f = event.fixed_sample::<ST>(bytes).unwrap();
            let v = event.sample(bytes).unwrap();
            assert_eq!((f.ip(), f.pid_tid(), f.time(), f.id()), (v.ip(), v.pid_tid(), v.time(), v.id()));
            assert_eq!((f.cpu(), f.period(), f.identifier(), f.addr()), (v.cpu(), v.period(), None, None));
            assert_eq!(
                event.fixed_sample::<{ ST | st::ADDR }>(bytes).map(|_| ()),
                Err(SampleError::SampleTypeDiffers { sample_type: ST, fixed: ST | st::ADDR })
            );
            let e = event.fixed_sample::<ST>(&bytes[..size - 8]).map(|_| ()).unwrap_err();
            assert!(matches!(e, SampleError::Decode(DecodeError::Truncated { need: 56, have: 48, .. })), "{e:?}");
            let e = event.fixed_sample::<ST>(&bytes[..3]).map(|_| ()).unwrap_err();
            assert!(matches!(e, SampleError::Decode(DecodeError::Truncated { field: "header", .. })), "{e:?}");
            let mut comm = [0u8; 8];
            comm[..4].copy_from_slice(&endian.put_u32(types::COMM));
            let e = event.fixed_sample::<ST>(&comm).map(|_| ()).unwrap_err();
            assert!(matches!(e, SampleError::Decode(DecodeError::InvalidValue { value: 3, .. })), "{e:?}");
        }
    }

    /// The errors say what to do, and `SampleError` is its cause's message with the cause as
    /// its source.
    #[test]
    fn the_errors_name_the_event_and_what_to_do() {
        extern crate std;
        use core::error::Error as _;
        use std::string::ToString;
        let differs = FixedLayoutError::SampleTypeDiffers { event: 2, sample_type: 0x7, fixed: 0x107 };
        assert_eq!(
            differs.to_string(),
            "event 2 has sample_type 0x7, not the fixed 0x107: read it through its run-time layout"
        );
        assert!(FixedLayoutError::NoEvents.to_string().contains("add the events first"));
        assert!(FixedLayoutError::ByteOrderDiffers { event: 1 }.to_string().contains("event 1's records"));
        assert!(FixedLayoutError::NoIdPosition.to_string().contains("PERF_SAMPLE_IDENTIFIER"));
        let e = SampleError::SampleTypeDiffers { sample_type: 0x7, fixed: 0x107 };
        assert_eq!(
            (e.to_string().as_str(), e.source().is_none()),
            ("the event's sample_type is 0x7, not the fixed 0x107: read it through its run-time layout", true)
        );
        let unknown = AttributeError::UnknownId { id: 99 };
        let e = SampleError::from(unknown);
        assert_eq!(e.to_string(), unknown.to_string());
        assert_eq!(e.source().map(|s| s.to_string()), Some(unknown.to_string()));
        let short = too_short(48, 40);
        let e = SampleError::from(short);
        assert_eq!((e.to_string(), e.source().map(|s| s.to_string())), (short.to_string(), Some(short.to_string())));
    }

    /// Attribution by `FixedEvents::sample` is `attribute`'s, with the id at `id_pos` 3
    /// (ID after IP, TID, TIME), in both byte orders; unknown ids, other record types and a
    /// walk in the other byte order are typed errors.
    #[test]
    fn a_fixed_sample_goes_to_the_event_of_its_id_as_attribute_says() {
        for endian in [Endian::Little, Endian::Big] {
            let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 8]);
            let a = set.add_event(&attr(ST), endian).unwrap();
            let b = set.add_event(&attr(ST), endian).unwrap();
            for (event, id) in [(a, 11), (b, 22), (a, 12), (b, 23)] {
                set.add_id(event, id).unwrap();
            }
            let fixed = set.fixed::<ST>().unwrap();
            for (id, want) in [(11, Ok(a)), (23, Ok(b)), (0, Ok(a)), (99, Err(AttributeError::UnknownId { id: 99 }))] {
                let (bytes, size) = record(&[0x400000, (7 << 32) | 8, 1000, id, 3, 1], endian);
                let walked = Walker::new(&bytes[..size], endian).next().unwrap().unwrap();
                assert_eq!(set.attribute(&walked), want);
                let got = fixed.sample(&walked);
                assert_eq!(got.map(|(index, _)| index), want.map_err(SampleError::Attribute));
                if let Ok((index, s)) = got {
                    let v = set.event(index).unwrap().sample(&walked).unwrap();
                    assert_eq!((s.id(), s.cpu(), s.period()), (Some(id), v.cpu(), Some(1)));
                }
                let other = match endian {
                    Endian::Little => Endian::Big,
                    Endian::Big => Endian::Little,
                };
                let wrong = WalkedRecord { endian: other, ..walked };
                assert_eq!(
                    fixed.sample(&wrong).map(|_| ()),
                    Err(SampleError::Decode(DecodeError::ByteOrderMismatch { layout: endian, record: other }))
                );
            }
            let mut round = [0u8; 8];
            round[..4].copy_from_slice(&endian.put_u32(types::FINISHED_ROUND));
            round[6..].copy_from_slice(&endian.put_u16(8));
            let walked = Walker::perf_data(&round, endian).next().unwrap().unwrap();
            let err = fixed.sample(&walked).map(|_| ()).unwrap_err();
            assert!(matches!(err, SampleError::Decode(DecodeError::InvalidValue { value: 68, .. })), "{err:?}");
        }
    }
}
