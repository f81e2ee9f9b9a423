//! `read_format`: the counter block of READ records and of SAMPLE's READ field
//! (`perf_output_read_one` / `perf_output_read_group`, kernel/events/core.c:perf_output_read_group).
//!
//! * Without GROUP: `u64 value; [u64 time_enabled]; [u64 time_running]; [u64 id]; [u64 lost]`.
//! * With GROUP: `u64 nr; [u64 time_enabled]; [u64 time_running];` then `nr` times
//!   `{u64 value; [u64 id]; [u64 lost]}`, the leader first.

use core::fmt;

use super::cursor::{Reader, Writer};
use super::entries::EntriesIter;
use super::{DecodeError, EncodeError, Endian, Entries};
use read_format::{GROUP, ID, LOST, TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING};

/// The `read_format` bits (`enum perf_event_read_format`) and the block size they give.
pub mod read_format {
    /// `PERF_FORMAT_TOTAL_TIME_ENABLED`
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    /// `PERF_FORMAT_TOTAL_TIME_RUNNING`
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    /// `PERF_FORMAT_ID`
    pub const ID: u64 = 1 << 2;
    /// `PERF_FORMAT_GROUP`
    pub const GROUP: u64 = 1 << 3;
    /// `PERF_FORMAT_LOST` (since Linux 6.0)
    pub const LOST: u64 = 1 << 4;
    /// Every bit this crate knows.
    pub const ALL: u64 = (1 << 5) - 1;

    /// Size in bytes of a block for `read_format` with `nr` group entries (`nr` ignored without
    /// GROUP); the kernel's `read_size`.
    pub const fn read_size(read_format: u64, nr: usize) -> usize {
        let mut head = 8;
        if read_format & TOTAL_TIME_ENABLED != 0 {
            head += 8;
        }
        if read_format & TOTAL_TIME_RUNNING != 0 {
            head += 8;
        }
        let per = 8 + if read_format & ID != 0 { 8 } else { 0 } + if read_format & LOST != 0 { 8 } else { 0 };
        if read_format & GROUP != 0 {
            head + nr * per
        } else {
            head + per - 8
        }
    }
}

/// A decoded `read_format` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadValues<'a> {
    /// One counter (`read_format` without GROUP).
    Single(ReadSingle),
    /// A group leader and its siblings (`read_format` with GROUP).
    Group(ReadGroup<'a>),
}

/// The block without GROUP. Each `Option` is `Some` exactly when its `read_format` bit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadSingle {
    /// The counter value.
    pub value: u64,
    /// TOTAL_TIME_ENABLED.
    pub time_enabled: Option<u64>,
    /// TOTAL_TIME_RUNNING.
    pub time_running: Option<u64>,
    /// ID.
    pub id: Option<u64>,
    /// LOST: samples this event lost.
    pub lost: Option<u64>,
}

/// The block with GROUP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadGroup<'a> {
    /// TOTAL_TIME_ENABLED.
    pub time_enabled: Option<u64>,
    /// TOTAL_TIME_RUNNING.
    pub time_running: Option<u64>,
    /// The `nr` entries, the leader first.
    pub entries: Entries<'a, GroupEntry>,
}

/// One counter of a group. `id` and `lost` are `Some` exactly when their bits are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupEntry {
    /// The counter value.
    pub value: u64,
    /// ID.
    pub id: Option<u64>,
    /// LOST.
    pub lost: Option<u64>,
}

/// How a group's entries lie in a record: `stride` bytes each, the value first, the id and the
/// lost count (when `read_format` has them) at `id_at` and `lost_at`. (Bytes: an entry is at
/// most three words. `usize`s made every decoded `ReadGroup` larger: the complete decode of the
/// group-read capture took 505 instructions a record with them, 501 with these.)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct GroupLayout {
    stride: u8,
    id_at: u8,
    lost_at: u8,
    endian: Endian,
}

/// `GroupLayout`'s offset for a word the entries do not have.
const NONE: u8 = u8::MAX;

impl GroupLayout {
    /// `{value, [id], [lost]}` in `endian` order.
    #[inline]
    fn new(endian: Endian, has_id: bool, has_lost: bool) -> GroupLayout {
        GroupLayout {
            stride: 8 * (1 + u8::from(has_id) + u8::from(has_lost)),
            id_at: if has_id { 8 } else { NONE },
            lost_at: if has_lost { 8 + 8 * u8::from(has_id) } else { NONE },
            endian,
        }
    }
}

impl super::entries::sealed::Sealed for GroupEntry {
    type Layout = GroupLayout;
    #[inline(always)]
    fn stride(layout: GroupLayout) -> usize {
        usize::from(layout.stride)
    }
    /// The entry in `counter` (`stride` bytes, which hold every word the offsets name): two or
    /// three loads.
    #[inline]
    fn read(counter: &[u8], layout: GroupLayout) -> GroupEntry {
        let word = |at: u8| (at != NONE).then(|| layout.endian.u64_at(counter, usize::from(at)).unwrap_or(0));
        GroupEntry { value: word(0).unwrap_or(0), id: word(layout.id_at), lost: word(layout.lost_at) }
    }
    fn endian(layout: GroupLayout) -> Endian {
        layout.endian
    }
    fn fmt_entry(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl super::Entry for GroupEntry {}

/// The counters of a READ block in the record's order ([`ReadValues::counters`]), each a
/// [`GroupEntry`] (its value, and its id and lost count exactly when `read_format` has `ID` /
/// `LOST`) — one for a block without GROUP, the leader and then its siblings with GROUP: what
/// perf delivers from a `PERF_SAMPLE_READ` sample, a counter at a time
/// (`session.c:deliver_sample_value`). Each step reads a group entry where it lies, two or
/// three loads.
#[derive(Clone)]
struct ReadCounters<'a> {
    /// The counter of a block without GROUP, not yet read.
    one: Option<GroupEntry>,
    /// A group's entries not yet read.
    rest: EntriesIter<'a, GroupEntry>,
}

impl Iterator for ReadCounters<'_> {
    type Item = GroupEntry;

    #[inline]
    fn next(&mut self) -> Option<GroupEntry> {
        match self.one.take() {
            Some(one) => Some(one),
            None => self.rest.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::from(self.one.is_some()) + self.rest.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for ReadCounters<'_> {}

fn opt(r: &mut Reader<'_>, read_format: u64, bit: u64, field: &'static str) -> Result<Option<u64>, DecodeError> {
    if read_format & bit != 0 {
        Ok(Some(r.u64(field)?))
    } else {
        Ok(None)
    }
}

impl<'a> ReadValues<'a> {
    /// Decode a block laid out by `read_format`.
    /// Parse a whole block laid out by `read_format`: what `read(2)` of a perf event fd returns
    /// (`perf_read_one`/`perf_read_group` write the same layout as a sample's READ field).
    /// `bytes` must be exactly the block.
    ///
    /// ```
    /// use perfring::record::{read_format as rf, Endian, ReadValues};
    /// let mut block = [0u8; 24];
    /// for (i, v) in [1000u64, 500, 42].iter().enumerate() {
    ///     block[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
    /// }
    /// let v = ReadValues::parse(&block, rf::TOTAL_TIME_ENABLED | rf::ID, Endian::Little).unwrap();
    /// assert!(matches!(v, ReadValues::Single(s) if s.value == 1000 && s.time_enabled == Some(500) && s.id == Some(42)));
    /// assert!(ReadValues::parse(&block[..16], rf::TOTAL_TIME_ENABLED | rf::ID, Endian::Little).is_err());
    /// ```
    pub fn parse(bytes: &'a [u8], read_format: u64, endian: super::Endian) -> Result<ReadValues<'a>, DecodeError> {
        let mut r = Reader::new(bytes, 0, bytes.len(), endian);
        let v = Self::decode(&mut r, read_format)?;
        if r.remaining() != 0 {
            return Err(DecodeError::TrailingBytes {
                record: "read_format block",
                offset: r.offset(),
                extra: r.remaining(),
            });
        }
        Ok(v)
    }

    /// The block's counters, in the record's order: the one counter of a block without GROUP,
    /// or a group's entries, the leader first: what perf delivers from a `PERF_SAMPLE_READ`
    /// sample, a counter at a time (`session.c:deliver_sample_value`). Each step reads a group
    /// entry where it lies, two or three loads.
    ///
    /// ```
    /// use perfring::record::{read_format as rf, Endian, ReadValues};
    /// let mut block = [0u8; 40]; // GROUP | ID: nr = 2, {1000, id 7}, {250, id 8}
    /// for (i, v) in [2u64, 1000, 7, 250, 8].iter().enumerate() {
    ///     block[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
    /// }
    /// let v = ReadValues::parse(&block, rf::GROUP | rf::ID, Endian::Little).unwrap();
    /// let counters: Vec<_> = v.counters().map(|c| (c.id, c.value)).collect();
    /// assert_eq!(counters, [(Some(7), 1000), (Some(8), 250)]);
    /// ```
    pub fn counters(&self) -> impl ExactSizeIterator<Item = GroupEntry> + Clone + 'a {
        match self {
            ReadValues::Single(s) => ReadCounters {
                one: Some(GroupEntry { value: s.value, id: s.id, lost: s.lost }),
                rest: Entries::EMPTY.iter(),
            },
            ReadValues::Group(g) => ReadCounters { one: None, rest: g.entries.iter() },
        }
    }

    pub(crate) fn decode(r: &mut Reader<'a>, read_format: u64) -> Result<ReadValues<'a>, DecodeError> {
        if read_format & GROUP != 0 {
            let nr = r.u64("read.nr")?;
            let time_enabled = opt(r, read_format, TOTAL_TIME_ENABLED, "read.time_enabled")?;
            let time_running = opt(r, read_format, TOTAL_TIME_RUNNING, "read.time_running")?;
            let has_id = read_format & ID != 0;
            let has_lost = read_format & LOST != 0;
            let entries = r.entries(nr, GroupLayout::new(r.endian, has_id, has_lost), "read.nr")?;
            Ok(ReadValues::Group(ReadGroup { time_enabled, time_running, entries }))
        } else {
            let value = r.u64("read.value")?;
            let time_enabled = opt(r, read_format, TOTAL_TIME_ENABLED, "read.time_enabled")?;
            let time_running = opt(r, read_format, TOTAL_TIME_RUNNING, "read.time_running")?;
            let id = opt(r, read_format, ID, "read.id")?;
            let lost = opt(r, read_format, LOST, "read.lost")?;
            Ok(ReadValues::Single(ReadSingle { value, time_enabled, time_running, id, lost }))
        }
    }

    /// Encoded size for `read_format`, after checking that the fields match it.
    pub(crate) fn size(&self, read_format: u64) -> Result<usize, EncodeError> {
        let check = |v: Option<u64>, bit: u64, field: &'static str| -> Result<usize, EncodeError> {
            let expected = read_format & bit != 0;
            if v.is_some() != expected {
                return Err(EncodeError::FieldMismatch { field, expected });
            }
            Ok(if expected { 8 } else { 0 })
        };
        match self {
            ReadValues::Single(s) => {
                if read_format & GROUP != 0 {
                    return Err(EncodeError::FieldMismatch { field: "read.group", expected: true });
                }
                Ok(8 + check(s.time_enabled, TOTAL_TIME_ENABLED, "read.time_enabled")?
                    + check(s.time_running, TOTAL_TIME_RUNNING, "read.time_running")?
                    + check(s.id, ID, "read.id")?
                    + check(s.lost, LOST, "read.lost")?)
            }
            ReadValues::Group(g) => {
                if read_format & GROUP == 0 {
                    return Err(EncodeError::FieldMismatch { field: "read.group", expected: false });
                }
                let head = 8
                    + check(g.time_enabled, TOTAL_TIME_ENABLED, "read.time_enabled")?
                    + check(g.time_running, TOTAL_TIME_RUNNING, "read.time_running")?;
                for e in g.entries.iter() {
                    check(e.id, ID, "read.entries.id")?;
                    check(e.lost, LOST, "read.entries.lost")?;
                }
                let stride = 8 * (1 + usize::from(read_format & ID != 0) + usize::from(read_format & LOST != 0));
                g.entries
                    .len()
                    .checked_mul(stride)
                    .and_then(|n| n.checked_add(head))
                    .ok_or(EncodeError::TooLarge { size: usize::MAX })
            }
        }
    }

    /// Write the block (fields already checked by [`ReadValues::size`]).
    pub(crate) fn encode(&self, w: &mut Writer<'_>) {
        match self {
            ReadValues::Single(s) => {
                w.u64(s.value);
                for v in [s.time_enabled, s.time_running, s.id, s.lost].into_iter().flatten() {
                    w.u64(v);
                }
            }
            ReadValues::Group(g) => {
                w.u64(g.entries.len() as u64);
                for v in [g.time_enabled, g.time_running].into_iter().flatten() {
                    w.u64(v);
                }
                w.entries(&g.entries, |w, e| {
                    w.u64(e.value);
                    for v in [e.id, e.lost].into_iter().flatten() {
                        w.u64(v);
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both representations of a group's entries iterate to the same entries, with an exact
    /// length, and `get` agrees with the iteration, an index past the end (however large) being
    /// `None`.
    #[test]
    fn every_representation_iterates_the_same_entries() {
        let words = [10u64, 1, 100, 20, 2, 200, 30, 3, 300];
        let mut bytes = [0u8; 72];
        for (i, w) in words.iter().enumerate() {
            bytes[8 * i..8 * i + 8].copy_from_slice(&w.to_be_bytes());
        }
        let big = super::super::Endian::Big;
        let recorded = Entries::from_bytes(&bytes, GroupLayout::new(big, true, true));
        let want: [GroupEntry; 3] = core::array::from_fn(|i| GroupEntry {
            value: 10 * (i as u64 + 1),
            id: Some(i as u64 + 1),
            lost: Some(100 * (i as u64 + 1)),
        });
        let slice = Entries::from_slice(&want);
        for entries in [recorded, slice] {
            let mut it = entries.iter();
            assert_eq!(it.len(), 3);
            assert_eq!(it.next(), Some(want[0]));
            assert_eq!(it.len(), 2);
            assert!(it.eq(want[1..].iter().copied()));
            assert_eq!(entries.len(), 3);
            for (i, w) in want.iter().enumerate() {
                assert_eq!(entries.get(i), Some(*w));
            }
            assert_eq!(entries.get(3), None);
            assert_eq!(entries.get(usize::MAX), None);
        }
        // Without LOST: a stride of two words.
        let two = Entries::<GroupEntry>::from_bytes(&bytes[..64], GroupLayout::new(big, true, false));
        assert_eq!(two.len(), 4);
        assert_eq!(two.iter().map(|e| (e.value, e.id, e.lost)).nth(1), Some((100, Some(20), None)));
        assert_eq!(two.get(3), Some(GroupEntry { value: 30, id: Some(3), lost: None }));
        assert_eq!(two.get(4), None);
        // Values alone: a stride of one word; the largest indexes are past the end, not a
        // wrapped offset.
        let one = Entries::<GroupEntry>::from_bytes(&bytes[..16], GroupLayout::new(big, false, false));
        assert_eq!(one.get(1), Some(GroupEntry { value: 1, id: None, lost: None }));
        assert_eq!(one.get(2), None);
        assert_eq!(one.get(usize::MAX / 8), None);
        assert_eq!(one.get(usize::MAX), None);
    }

    /// Group entries print as a list, from a slice or where they lie in the record.
    #[test]
    fn group_entries_debug_print_as_a_list() {
        struct Buf([u8; 256], usize);
        impl fmt::Write for Buf {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let end = self.1 + s.len();
                self.0.get_mut(self.1..end).ok_or(fmt::Error)?.copy_from_slice(s.as_bytes());
                self.1 = end;
                Ok(())
            }
        }
        let show = |v: &dyn fmt::Debug| {
            let mut b = Buf([0; 256], 0);
            fmt::write(&mut b, format_args!("{v:?}")).unwrap();
            (b.0, b.1)
        };
        let (b, n) = show(&Entries::from_slice(&[GroupEntry { value: 5, id: Some(6), lost: None }]));
        assert_eq!(&b[..n], b"[GroupEntry { value: 5, id: Some(6), lost: None }]");
        let mut rec = [0u8; 24];
        for (i, w) in [1u64, 5, 6].iter().enumerate() {
            rec[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        let Ok(ReadValues::Group(g)) = ReadValues::parse(&rec, GROUP | ID, super::super::Endian::Little) else {
            panic!("a one-entry group")
        };
        let (b, n) = show(&g.entries);
        assert_eq!(&b[..n], b"[GroupEntry { value: 5, id: Some(6), lost: None }]", "entries where they lie");
    }

    /// A block without GROUP is one counter, its id and lost count after the times; a
    /// block that the record does not hold is an error naming the field.
    #[test]
    fn a_single_block_is_one_counter_and_a_short_block_an_error() {
        let rf = TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID | LOST;
        let mut rec = [0u8; 40];
        for (i, w) in [5u64, 6, 7, 8, 9].iter().enumerate() {
            rec[8 * i..8 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        fn counters(bytes: &[u8], rf: u64) -> Result<impl ExactSizeIterator<Item = GroupEntry> + '_, DecodeError> {
            ReadValues::parse(bytes, rf, super::super::Endian::Little).map(|v| v.counters())
        }
        assert!(counters(&rec[..], rf).unwrap().eq([GroupEntry { value: 5, id: Some(8), lost: Some(9) }]));
        assert!(counters(&rec[..16], ID).unwrap().eq([GroupEntry { value: 5, id: Some(6), lost: None }]));
        let c = counters(&rec[..16], LOST).unwrap();
        assert!(c.eq([GroupEntry { value: 5, id: None, lost: Some(6) }]), "LOST without ID: right after the value");
        assert_eq!(counters(&rec[..16], LOST).unwrap().len(), 1);
        assert!(matches!(counters(&rec[..39], rf), Err(DecodeError::Truncated { field: "read.lost", .. })));
        // GROUP: nr counters after the times; an nr past the block, or one whose size
        // overflows, is CountTooLarge; a block cut inside its head is Truncated.
        let mut g = [0u8; 40];
        g[..8].copy_from_slice(&2u64.to_le_bytes());
        assert!(
            matches!(
                counters(&g[..], GROUP | TOTAL_TIME_ENABLED | ID),
                Err(DecodeError::CountTooLarge { field: "read.nr", count: 2, .. })
            ),
            "nr 2 of 16 bytes each needs 32 bytes; 24 remain after nr and the time"
        );
        g[..8].copy_from_slice(&1u64.to_le_bytes());
        let c = counters(&g[..32], GROUP | TOTAL_TIME_ENABLED | ID).unwrap();
        assert_eq!(c.len(), 1);
        assert!(c.eq([GroupEntry { value: 0, id: Some(0), lost: None }]));
        g[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            counters(&g[..], GROUP | ID | LOST),
            Err(DecodeError::CountTooLarge { field: "read.nr", count: u64::MAX, .. })
        ));
        assert!(matches!(counters(&g[..4], GROUP), Err(DecodeError::Truncated { field: "read.nr", .. })));
        assert!(matches!(
            counters(&g[..8], GROUP | TOTAL_TIME_ENABLED),
            Err(DecodeError::Truncated { field: "read.time_enabled", .. })
        ));
        g[..8].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(counters(&g[..8], GROUP).unwrap().count(), 0);
    }
}
