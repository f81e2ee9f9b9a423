//! `read_format`: the counter block of READ records and of SAMPLE's READ field
//! (`perf_output_read_one` / `perf_output_read_group`, kernel/events/core.c:perf_output_read_group).
//!
//! * Without GROUP: `u64 value; [u64 time_enabled]; [u64 time_running]; [u64 id]; [u64 lost]`.
//! * With GROUP: `u64 nr; [u64 time_enabled]; [u64 time_running];` then `nr` times
//!   `{u64 value; [u64 id]; [u64 lost]}`, the leader first.

use core::fmt;

use super::cursor::{Reader, Writer};
use super::{DecodeError, EncodeError, U64Array};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
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
    pub entries: GroupEntries<'a>,
}

/// One counter of a group. `id` and `lost` are `Some` exactly when their bits are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct GroupEntry {
    /// The counter value.
    pub value: u64,
    /// ID.
    pub id: Option<u64>,
    /// LOST.
    pub lost: Option<u64>,
}

/// The entries of a group block: borrowed record words, or a native slice for encoding.
#[derive(Clone, Copy)]
pub struct GroupEntries<'a> {
    repr: GroupRepr<'a>,
}

#[derive(Clone, Copy)]
enum GroupRepr<'a> {
    Words { words: U64Array<'a>, has_id: bool, has_lost: bool },
    Slice(&'a [GroupEntry]),
}

impl<'a> GroupEntries<'a> {
    /// Wrap native entries (for building records to encode).
    pub const fn from_slice(entries: &'a [GroupEntry]) -> GroupEntries<'a> {
        GroupEntries { repr: GroupRepr::Slice(entries) }
    }

    fn stride(has_id: bool, has_lost: bool) -> usize {
        1 + usize::from(has_id) + usize::from(has_lost)
    }

    /// Number of entries (`nr`).
    pub fn len(&self) -> usize {
        match self.repr {
            GroupRepr::Words { words, has_id, has_lost } => words.len() / Self::stride(has_id, has_lost),
            GroupRepr::Slice(s) => s.len(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry at `index`.
    pub fn get(&self, index: usize) -> Option<GroupEntry> {
        match self.repr {
            GroupRepr::Words { words, has_id, has_lost } => {
                if index >= self.len() {
                    return None;
                }
                let base = index.checked_mul(Self::stride(has_id, has_lost))?;
                let value = words.get(base)?;
                let id = if has_id { Some(words.get(base + 1)?) } else { None };
                let lost = if has_lost { Some(words.get(base + 1 + usize::from(has_id))?) } else { None };
                Some(GroupEntry { value, id, lost })
            }
            GroupRepr::Slice(s) => s.get(index).copied(),
        }
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = GroupEntry> + 'a {
        let this = *self;
        (0..this.len()).map(move |i| this.get(i).unwrap_or_default())
    }
}

impl PartialEq for GroupEntries<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for GroupEntries<'_> {}

impl fmt::Debug for GroupEntries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

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

    pub(crate) fn decode(r: &mut Reader<'a>, read_format: u64) -> Result<ReadValues<'a>, DecodeError> {
        if read_format & GROUP != 0 {
            let nr = r.u64("read.nr")?;
            let time_enabled = opt(r, read_format, TOTAL_TIME_ENABLED, "read.time_enabled")?;
            let time_running = opt(r, read_format, TOTAL_TIME_RUNNING, "read.time_running")?;
            let has_id = read_format & ID != 0;
            let has_lost = read_format & LOST != 0;
            let words = r.u64s(nr, GroupEntries::stride(has_id, has_lost), "read.nr")?;
            let entries = GroupEntries { repr: GroupRepr::Words { words, has_id, has_lost } };
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
                let stride = 8 * GroupEntries::stride(read_format & ID != 0, read_format & LOST != 0);
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
                match g.entries.repr {
                    GroupRepr::Words { words, .. } => w.u64s(&words),
                    GroupRepr::Slice(s) => {
                        for e in s {
                            w.u64(e.value);
                            for v in [e.id, e.lost].into_iter().flatten() {
                                w.u64(v);
                            }
                        }
                    }
                }
            }
        }
    }
}
