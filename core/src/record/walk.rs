//! [`Walker`]: the records of a byte buffer, one after another, bounds checked once each.
//!
//! For a buffer that holds whole records back to back: a consumer batch copied out of a ring,
//! a perf.data data section, a pipe's payload. Each step reads the 8-byte header once, checks
//! `header.size` against what is left, and hands out the header it parsed with the record's
//! bytes, so that [`decode_parsed`](super::decode_parsed) or an [`EventSet`](super::EventSet)
//! need not parse it again. A bad size ends the walk with a [`WalkError`] that says where; the
//! walk never loops (every step advances by at least 8 bytes) and never reads past the buffer.
//!
//! ```
//! use perfring::record::{types, Endian, Walker};
//! // Two FINISHED_ROUND records (header only, 8 bytes each).
//! let mut buf = [0u8; 16];
//! for at in [0, 8] {
//!     buf[at..at + 8].copy_from_slice(&[68, 0, 0, 0, 0, 0, 8, 0]);
//! }
//! let mut n = 0;
//! for record in Walker::new(&buf, Endian::Little) {
//!     assert_eq!(record.unwrap().header.type_, types::FINISHED_ROUND);
//!     n += 1;
//! }
//! assert_eq!(n, 2);
//! ```
//!
//! # A constant byte order
//!
//! A walked record carries the walk's byte order, and
//! [`EventSet::attribute_walked`](super::EventSet::attribute_walked) and
//! [`SampleLayout::sample_walked`](super::SampleLayout::sample_walked) read its fields in that
//! order. When the walker is made
//! with a constant — a ring's records are always `Endian::NATIVE` — and the loop is inlined,
//! every field read is one load with no byte-order select. For a perf.data file, whose order is
//! known only when it is opened, match on it once and walk in each arm (measured: 195 -> 169
//! instructions per record on the demo's perf.data, BENCHMARKS.md "Decoding"):
//!
//! ```
//! use perfring::record::{Endian, Walker};
//! #[inline(always)]
//! fn count(data: &[u8], endian: Endian) -> usize {
//!     Walker::perf_data(data, endian).map_while(Result::ok).count()
//! }
//! fn records(data: &[u8], endian: Endian) -> usize {
//!     match endian {
//!         Endian::Little => count(data, Endian::Little),
//!         Endian::Big => count(data, Endian::Big),
//!     }
//! }
//! assert_eq!(records(&[68, 0, 0, 0, 0, 0, 8, 0], Endian::Little), 1);
//! ```

use core::fmt;

use super::header::{types, Header};
use super::Endian;

/// One record of a [`Walker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkedRecord<'a> {
    /// The header, parsed once.
    pub header: Header,
    /// The whole record, `header.size` bytes, header included.
    pub bytes: &'a [u8],
    /// Offset of the record in the walked buffer.
    pub offset: usize,
    /// The byte order the walk read the header in.
    /// [`EventSet::attribute_walked`](super::EventSet::attribute_walked) and
    /// [`SampleLayout::sample_walked`](super::SampleLayout::sample_walked) read the record's
    /// fields in it; a walker made with a constant (`Endian::NATIVE`, as a ring's records
    /// always are) lets the compiler drop the byte-order select from every field read.
    pub endian: Endian,
    /// For AUXTRACE (type 71) in a [`Walker::perf_data`] walk: the AUX bytes that follow the
    /// record, which `header.size` does not count (KERNEL-NOTES §7.8). Empty otherwise.
    pub aux_data: &'a [u8],
}

impl<'a> WalkedRecord<'a> {
    /// The body after the 8-byte header.
    pub fn body(&self) -> &'a [u8] {
        self.bytes.get(Header::SIZE..).unwrap_or_default()
    }
}

/// Why a walk stopped early. Offsets are from the start of the walked buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WalkError {
    /// The record at `offset` (its header, its body, or an AUXTRACE record's data) runs past
    /// the end of the buffer: a truncated file, or a buffer cut mid-record (a streaming reader
    /// refills from `offset` and walks again).
    Truncated {
        /// Where the record starts.
        offset: usize,
        /// Bytes the record needs from `offset`.
        need: u64,
        /// Bytes left from `offset`.
        have: usize,
    },
    /// `header.size` is smaller than the header itself (0 included): the buffer is corrupt
    /// from here on, since the next record cannot be found.
    SizeTooSmall {
        /// Where the record starts.
        offset: usize,
        /// The size read.
        size: u16,
    },
    /// In a ring walk ([`Walker::new`]), a size that is not a multiple of 8: the kernel never
    /// writes one, so the buffer is corrupt from here on.
    Misaligned {
        /// Where the record starts.
        offset: usize,
        /// The size read.
        size: u16,
    },
}

impl fmt::Display for WalkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WalkError::Truncated { offset, need, have } => {
                write!(f, "record at offset {offset} needs {need} bytes but only {have} are left (truncated input)")
            }
            WalkError::SizeTooSmall { offset, size } => {
                write!(
                    f,
                    "record at offset {offset} has header.size {size}, less than its 8-byte header (corrupt input)"
                )
            }
            WalkError::Misaligned { offset, size } => {
                write!(f, "record at offset {offset} has header.size {size}, not a multiple of 8 (corrupt ring data)")
            }
        }
    }
}

impl core::error::Error for WalkError {}

/// The records of a buffer, in order (module docs). Stops at the end of the buffer or at the
/// first [`WalkError`], which it yields once.
#[derive(Debug, Clone)]
pub struct Walker<'a> {
    /// The records not walked yet (a slice, not an offset: each step checks its length only).
    rest: &'a [u8],
    /// Offset of `rest` in the walked buffer.
    pos: usize,
    endian: Endian,
    perf_data: bool,
}

impl<'a> Walker<'a> {
    /// Walk ring records (as the kernel writes them: sizes multiples of 8).
    pub fn new(bytes: &'a [u8], endian: Endian) -> Walker<'a> {
        Walker { rest: bytes, pos: 0, endian, perf_data: false }
    }

    /// Walk a perf.data data section or pipe payload: also perf's own record types, the AUX
    /// data after each AUXTRACE record, and sizes that are not multiples of 8 (perf reads them).
    pub fn perf_data(bytes: &'a [u8], endian: Endian) -> Walker<'a> {
        Walker { rest: bytes, pos: 0, endian, perf_data: true }
    }

    /// Offset of the next record: after the walk, the bytes consumed.
    pub fn offset(&self) -> usize {
        self.pos
    }

    #[inline]
    fn step(&mut self) -> Option<Result<WalkedRecord<'a>, WalkError>> {
        let (offset, rest) = (self.pos, self.rest);
        if rest.is_empty() {
            return None;
        }
        let Some(h) = rest.first_chunk::<{ Header::SIZE }>() else {
            return Some(Err(WalkError::Truncated { offset, need: Header::SIZE as u64, have: rest.len() }));
        };
        let header = Header::from_bytes(*h, self.endian);
        let size = header.size as usize;
        if size < Header::SIZE {
            return Some(Err(WalkError::SizeTooSmall { offset, size: header.size }));
        }
        if !self.perf_data && size % 8 != 0 {
            return Some(Err(WalkError::Misaligned { offset, size: header.size }));
        }
        let Some((bytes, mut after)) = rest.split_at_checked(size) else {
            return Some(Err(WalkError::Truncated { offset, need: size as u64, have: rest.len() }));
        };
        let mut aux_data: &'a [u8] = &[];
        if self.perf_data && header.type_ == types::AUXTRACE {
            // `struct perf_record_auxtrace`: header, then u64 size of the data that follows.
            let len = self.endian.u64_at(bytes, 8).unwrap_or(0);
            let need = (size as u64).saturating_add(len);
            match usize::try_from(len).ok().and_then(|l| after.split_at_checked(l)) {
                Some((data, next)) => (aux_data, after) = (data, next),
                None => return Some(Err(WalkError::Truncated { offset, need, have: rest.len() })),
            }
        }
        self.pos = offset + (rest.len() - after.len());
        self.rest = after;
        Some(Ok(WalkedRecord { header, bytes, offset, endian: self.endian, aux_data }))
    }
}

impl<'a> Iterator for Walker<'a> {
    type Item = Result<WalkedRecord<'a>, WalkError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let item = self.step();
        if let Some(Err(_)) = item {
            // Nothing after a bad record can be found: end the walk (its offset stays).
            self.rest = &[];
        }
        item
    }
}

impl core::iter::FusedIterator for Walker<'_> {}
