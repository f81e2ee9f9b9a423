//! A SAMPLE layout known when the consumer is compiled: [`FixedSample`], whose fields sit at
//! constant offsets.
//!
//! A tool that opens its own events, or a host reading a firmware's ring, knows their
//! `sample_type` when it is written. Naming it as a const parameter of a record's
//! [`fixed`](super::EventRecord::fixed) lets the compiler fold every field's `sample_type` test
//! and offset to a constant: reading a field is one load, and the view one length check
//! against a constant. The record's event is checked to have exactly that `sample_type` (one
//! compare), so a record is never read with offsets its event did not write.
//!
//! The constant part is the fixed prefix, IDENTIFIER through PERIOD; READ, CALLCHAIN, RAW and
//! the fields after them are read through the run-time view
//! ([`sample`](super::EventRecord::sample)).
//!
//! ```
//! use perfring::record::{
//!     sample_type as st, types, Attr, Endian, EventLayout, EventRecord, EventSet, IdEntry, PidTid, Walker,
//! };
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
//! for raw in Walker::new(&ring, Endian::NATIVE) {
//!     let rec = set.attribute(&raw.unwrap());
//!     if rec.raw().header.type_ != types::SAMPLE {
//!         continue;
//!     }
//!     let sample = rec.fixed::<ST>().unwrap();
//!     assert_eq!(rec.event(), Ok(faults));
//!     assert_eq!((sample.ip(), sample.tid()), (Some(0x1234), Some(PidTid { pid: 8, tid: 7 })));
//!     assert_eq!((sample.time(), sample.period()), (Some(5_000), None));
//! }
//! ```

use super::layout::{too_short, SampleLayout};
use super::sample_type as st;
use super::{DecodeContext, DecodeError, Endian, PidTid, SampleCpu};

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

/// A SAMPLE whose fixed fields (IDENTIFIER through PERIOD) sit where `SAMPLE_TYPE` puts them:
/// each accessor is one load at a constant offset, `None` exactly when `SAMPLE_TYPE` lacks the
/// field. Made by a record's [`fixed`](super::EventRecord::fixed).
#[derive(Debug, Clone, Copy)]
pub struct FixedSample<'a, const SAMPLE_TYPE: u64> {
    /// At least `Offsets::<SAMPLE_TYPE>::END` bytes (checked in `new`).
    bytes: &'a [u8],
    endian: Endian,
}

impl<'a, const SAMPLE_TYPE: u64> FixedSample<'a, SAMPLE_TYPE> {
    /// `bytes`, a whole SAMPLE record (its type checked by the caller) in `endian`, of an
    /// event of `ctx`: refused unless the event's `sample_type` is `SAMPLE_TYPE`, `endian` its
    /// byte order, and the fixed fields fit.
    #[inline(always)]
    pub(super) fn of(bytes: &'a [u8], ctx: &DecodeContext, endian: Endian) -> Result<Self, DecodeError> {
        if ctx.sample_type != SAMPLE_TYPE {
            return Err(DecodeError::SampleTypeDiffers { sample_type: ctx.sample_type, fixed: SAMPLE_TYPE });
        }
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
    /// TID: `{pid, tid}` (as [`Sample::tid`](super::Sample::tid)).
    #[inline]
    pub fn tid(&self) -> Option<PidTid> {
        let (pid, tid) = self.pair(Offsets::<SAMPLE_TYPE>::TID)?;
        Some(PidTid { pid, tid })
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
    use crate::record::{types, Attr, EventLayout, EventRecord, EventSet, IdEntry, RawRecord, Walker};

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
                let set = EventSet::single(&attr(ST), endian);
                let walked = Walker::perf_data(bytes, endian).next().unwrap().unwrap();
                let rec = set.attribute(&walked);
                let f = rec.fixed::<ST>().unwrap();
                assert_eq!((rec.event(), rec.raw().bytes, rec.raw().header.misc), (Ok(0), bytes, 0x4002));
                // One byte short of the fixed prefix: a typed error, not a read past the record.
                if extra == 0 && n > 0 {
                    let short = set.attribute(&RawRecord { bytes: &bytes[..size - 1], ..walked });
                    assert_eq!(
                        short.fixed::<ST>().map(|_| ()),
                        Err(DecodeError::Truncated {
                            field: "sample (fixed fields)",
                            offset: 0,
                            need: size,
                            have: size - 1
                        })
                    );
                }
                // The run-time prefix also holds READ (without GROUP): give it its word.
                if ST & st::READ != 0 && extra == 0 {
                    continue;
                }
                let v = rec.sample().unwrap();
                assert_eq!((f.identifier(), f.ip(), f.tid()), (v.identifier(), v.ip(), v.tid()), "{ST:#x}");
                assert_eq!((f.time(), f.addr()), (v.time(), v.addr()));
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

    /// A record's fixed sample is read for its event's own `sample_type` only; other types,
    /// other record types, another byte order and short records are typed errors.
    #[test]
    fn a_record_gives_its_fixed_sample_for_its_events_own_sample_type_only() {
        for endian in [Endian::Little, Endian::Big] {
            let set = EventSet::single(&attr(ST), endian);
            let (bytes, size) = record(&[0x400000, (7 << 32) | 8, 1000, 22, 3, 1], endian);
            let walked = Walker::new(&bytes[..size], endian).next().unwrap().unwrap();
            let rec = set.attribute(&walked);
            let f = rec.fixed::<ST>().unwrap();
            let v = rec.sample().unwrap();
            assert_eq!((f.ip(), f.tid(), f.time(), f.id()), (v.ip(), v.tid(), v.time(), v.id()));
            assert_eq!((f.cpu(), f.period(), f.identifier(), f.addr()), (v.cpu(), v.period(), None, None));
            assert_eq!(
                rec.fixed::<{ ST | st::ADDR }>().map(|_| ()),
                Err(DecodeError::SampleTypeDiffers { sample_type: ST, fixed: ST | st::ADDR })
            );
            let short = set.attribute(&RawRecord { bytes: &bytes[..size - 8], ..walked });
            let e = short.fixed::<ST>().map(|_| ()).unwrap_err();
            assert!(matches!(e, DecodeError::Truncated { need: 56, have: 48, .. }), "{e:?}");
            let other = match endian {
                Endian::Little => Endian::Big,
                Endian::Big => Endian::Little,
            };
            // The same bytes said to be in the other order: read in that order (the layout's
            // offsets do not depend on it), as its view reads them.
            let crossed = set.attribute(&RawRecord { endian: other, ..walked });
            let (f, v) = (crossed.fixed::<ST>().unwrap(), crossed.sample().unwrap());
            assert_eq!((f.ip(), f.time(), f.period()), (v.ip(), v.time(), v.period()));
            assert_eq!(f.ip().map(u64::swap_bytes), rec.fixed::<ST>().unwrap().ip());
            let mut round = [0u8; 8];
            round[..4].copy_from_slice(&endian.put_u32(types::FINISHED_ROUND));
            round[6..].copy_from_slice(&endian.put_u16(8));
            let walked = Walker::perf_data(&round, endian).next().unwrap().unwrap();
            let err = set.attribute(&walked).fixed::<ST>().map(|_| ()).unwrap_err();
            assert_eq!(err, DecodeError::NotASample { type_: types::FINISHED_ROUND });
        }
    }

    /// The errors say what to do.
    #[test]
    fn the_errors_say_what_to_do() {
        extern crate std;
        use std::string::ToString;
        let e = DecodeError::SampleTypeDiffers { sample_type: 0x7, fixed: 0x107 };
        assert_eq!(
            e.to_string(),
            "the event's sample_type is 0x7, not the fixed 0x107: read it through its run-time view"
        );
        assert!(DecodeError::NoEvents.to_string().contains("add the events first"));
        assert!(DecodeError::NoIdPosition.to_string().contains("PERF_SAMPLE_IDENTIFIER"));
        assert!(DecodeError::NotASample { type_: 3 }.to_string().contains("PERF_RECORD_COMM"));
    }

    /// A fixed sample goes to the event of its id as attribution says, with the id at
    /// `id_pos` 3 (ID after IP, TID, TIME), in both byte orders; unknown ids are typed errors.
    #[test]
    fn a_fixed_sample_goes_to_the_event_of_its_id() {
        for endian in [Endian::Little, Endian::Big] {
            let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 8]);
            let a = set.add_event(&attr(ST), endian).unwrap();
            let b = set.add_event(&attr(ST), endian).unwrap();
            for (event, id) in [(a, 11), (b, 22), (a, 12), (b, 23)] {
                set.add_id(event, id).unwrap();
            }
            for (id, want) in [(11, Ok(a)), (23, Ok(b)), (0, Ok(a)), (99, Err(DecodeError::UnknownId { id: 99 }))] {
                let (bytes, size) = record(&[0x400000, (7 << 32) | 8, 1000, id, 3, 1], endian);
                let walked = Walker::new(&bytes[..size], endian).next().unwrap().unwrap();
                let rec = set.attribute(&walked);
                assert_eq!(rec.event(), want);
                let got = rec.fixed::<ST>();
                assert_eq!(got.map(|_| ()), want.map(|_| ()));
                if let Ok(s) = got {
                    assert_eq!((s.id(), s.cpu(), s.period()), (Some(id), rec.sample().unwrap().cpu(), Some(1)));
                }
            }
        }
    }
}
