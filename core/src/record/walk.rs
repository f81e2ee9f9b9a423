//! [`Walker`]: the records of a byte buffer, one after another, bounds checked once each.
//!
//! For a buffer that holds whole records back to back: a consumer batch copied out of a ring,
//! a perf.data data section, a pipe's payload. Each step reads the 8-byte header once, checks
//! `header.size` against what is left, and hands out the header it parsed with the record's
//! bytes, so that [`decode`](super::decode) or an [`EventSet`](super::EventSet)
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
//! [`EventSet::attribute`](super::EventSet::attribute) and
//! [`SampleLayout::sample`](super::SampleLayout::sample) read its fields in that
//! order. When the walker is made
//! with a constant — a ring's records are always `Endian::NATIVE` — and the loop is inlined,
//! every field read is one load with no byte-order select. For a perf.data file, whose order is
//! known only when it is opened, match on it once and walk in each arm (measured on the demo's
//! perf.data: BENCHMARKS.md, "Decoding"):
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

/// A record as every reader takes it: its bytes alone (`&[u8]`, or anything that is bytes: the
/// whole record; its header
/// is read from them, in the reader's byte order), or a record a [`Walker`] or a
/// [`Consumer`](crate::Consumer) handed out (`&WalkedRecord`, `&RawRecord`: its header parsed
/// once and its byte order known, so neither is read again — with a walk in a constant order, `Endian::NATIVE` as a ring's records are, the
/// compiler drops the byte-order select from every field read). One method per reader takes
/// either: [`EventSet::attribute`](super::EventSet::attribute),
/// [`EventSet::attribute_event`](super::EventSet::attribute_event),
/// [`EventSet::sample`](super::EventSet::sample), [`SampleLayout::sample`](super::SampleLayout::sample),
/// [`EventLayout::sample`](super::EventLayout::sample) and
/// [`FixedEvents::sample`](super::FixedEvents::sample).
pub trait RecordRef<'a>: Copy + sealed::Sealed {
    /// The whole record, header included.
    fn record_bytes(self) -> &'a [u8];
    /// The header and the byte order it was read in, if already parsed.
    fn parsed(self) -> Option<(Header, Endian)>;
    /// The record's type and the byte order to read it in (`endian` for bytes alone, whose
    /// type is read in it), or `None` for bytes too short for a header or longer than a
    /// record can be.
    fn type_and_endian(self, endian: Endian) -> Option<(u32, Endian)>;
}

/// The record's bytes: a slice, an array, a `Vec` (anything that is bytes).
impl<'a, T: AsRef<[u8]> + ?Sized> RecordRef<'a> for &'a T {
    #[inline(always)]
    fn record_bytes(self) -> &'a [u8] {
        self.as_ref()
    }
    #[inline(always)]
    fn parsed(self) -> Option<(Header, Endian)> {
        None
    }
    #[inline(always)]
    fn type_and_endian(self, endian: Endian) -> Option<(u32, Endian)> {
        let bytes = self.as_ref();
        if bytes.len() < Header::SIZE || bytes.len() > u16::MAX as usize {
            return None;
        }
        Some((endian.u32_at(bytes, 0)?, endian))
    }
}

impl<'a> RecordRef<'a> for &WalkedRecord<'a> {
    #[inline(always)]
    fn record_bytes(self) -> &'a [u8] {
        self.bytes
    }
    #[inline(always)]
    fn parsed(self) -> Option<(Header, Endian)> {
        Some((self.header, self.endian))
    }
    #[inline(always)]
    fn type_and_endian(self, _: Endian) -> Option<(u32, Endian)> {
        Some((self.header.type_, self.endian))
    }
}

/// A record a [`Consumer`](crate::Consumer) handed out: its header parsed once (when the batch
/// checked it), in the ring's byte order, `Endian::NATIVE`.
impl<'a> RecordRef<'a> for &crate::consumer::RawRecord<'a> {
    #[inline(always)]
    fn record_bytes(self) -> &'a [u8] {
        self.bytes
    }
    #[inline(always)]
    fn parsed(self) -> Option<(Header, Endian)> {
        Some((self.header, Endian::NATIVE))
    }
    #[inline(always)]
    fn type_and_endian(self, _: Endian) -> Option<(u32, Endian)> {
        Some((self.header.type_, Endian::NATIVE))
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T: AsRef<[u8]> + ?Sized> Sealed for &T {}
    impl Sealed for &super::WalkedRecord<'_> {}
    impl Sealed for &crate::consumer::RawRecord<'_> {}
}

/// One record of a [`Walker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkedRecord<'a> {
    /// The header, parsed once.
    pub header: Header,
    /// The whole record, `header.size` bytes, header included.
    pub bytes: &'a [u8],
    /// Offset of the record in the walked buffer.
    pub offset: usize,
    /// The byte order the walk read the header in. The readers ([`RecordRef`]) read the
    /// record's fields in it; a walker made with a constant (`Endian::NATIVE`, as a ring's records
    /// always are) lets the compiler drop the byte-order select from every field read.
    pub endian: Endian,
    /// In a [`Walker::perf_data`] walk, the bytes that follow the record and that
    /// `header.size` does not count: an AUXTRACE record's (type 71) AUX data, `auxtrace.size`
    /// bytes (`tools/perf/util/auxtrace.c`); a pipe-mode HEADER_TRACING_DATA record's (type 66)
    /// tracing data, `tracing_data.size` bytes (`tools/perf/util/header.c:
    /// perf_event__process_tracing_data`). Empty otherwise.
    pub trailing: &'a [u8],
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

    /// Walk a perf.data data section or pipe payload: also perf's own record types, the data
    /// after each AUXTRACE and HEADER_TRACING_DATA record ([`WalkedRecord::trailing`]), and
    /// sizes that are not multiples of 8 (perf reads them).
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
        prefetch(after);
        let mut trailing: &'a [u8] = &[];
        let trailing_len = match header.type_ {
            // `struct perf_record_auxtrace`: header, then the u64 size of the data that follows.
            types::AUXTRACE if self.perf_data => Some(self.endian.u64_at(bytes, 8).unwrap_or(0)),
            // `struct perf_record_header_tracing_data`: header, then the u32 size of the
            // tracing data that follows (aligned to 8 by perf's writer).
            types::HEADER_TRACING_DATA if self.perf_data => Some(u64::from(self.endian.u32_at(bytes, 8).unwrap_or(0))),
            _ => None,
        };
        if let Some(len) = trailing_len {
            let need = (size as u64).saturating_add(len);
            match usize::try_from(len).ok().and_then(|l| after.split_at_checked(l)) {
                Some((data, next)) => (trailing, after) = (data, next),
                None => return Some(Err(WalkError::Truncated { offset, need, have: rest.len() })),
            }
        }
        self.pos = offset + (rest.len() - after.len());
        self.rest = after;
        Some(Ok(WalkedRecord { header, bytes, offset, endian: self.endian, trailing }))
    }
}

/// Ask for the cache line at the start of `next`, the bytes after this record (the next
/// record's header, whose size the next step reads, or this record's trailing data): while the
/// caller reads this record, a large record's successor (a SAMPLE with a user stack is KiBs
/// away) is on its way. A hint: it reads nothing.
#[inline(always)]
fn prefetch(next: &[u8]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    // SAFETY: SSE is enabled (the `cfg`); a prefetch is a hint that reads nothing and cannot
    // fault, whatever the address (here `next`'s start, one past the end when it is empty).
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(next.as_ptr().cast());
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = next;
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

#[cfg(all(test, not(loom)))]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    fn header(type_: u32, size: u16) -> [u8; 8] {
        Header { type_, misc: 0, size }.to_bytes(Endian::Little)
    }

    /// A pipe-mode tracepoint capture: HEADER_TRACING_DATA {header, u32 size, u32 pad}, the
    /// tracing data (`size` bytes, which `header.size` does not count), then a record. The walk
    /// hands the data over as `trailing` and goes on to the record after it (before: it read
    /// the tracing data as a header and reported a truncation).
    #[test]
    fn the_tracing_data_after_its_pipe_mode_record_is_trailing_and_skipped() {
        let mut buf = Vec::new();
        buf.extend_from_slice(&header(types::HEADER_TRACING_DATA, 16));
        buf.extend_from_slice(&24u32.to_le_bytes());
        buf.extend_from_slice(&[0; 4]);
        let mut data = [0u8; 24]; // tracing data begins "\x17\x08\x44tracing0.6\0"
        data[..14].copy_from_slice(b"\x17\x08\x44tracing0.6\0");
        buf.extend_from_slice(&data);
        buf.extend_from_slice(&header(types::FINISHED_ROUND, 8));
        let walked: Vec<_> = Walker::perf_data(&buf, Endian::Little).collect::<Result<_, _>>().unwrap();
        assert_eq!(walked.len(), 2, "{walked:?}");
        assert_eq!((walked[0].header.type_, walked[0].bytes.len(), walked[0].trailing), (66, 16, &buf[16..40]));
        assert_eq!(
            (walked[1].header.type_, walked[1].offset, walked[1].trailing),
            (types::FINISHED_ROUND, 40, &[][..])
        );
        // Data shorter than its size says: a truncation at the record, not past it.
        assert_eq!(
            Walker::perf_data(&buf[..30], Endian::Little).next(),
            Some(Err(WalkError::Truncated { offset: 0, need: 40, have: 30 }))
        );
    }

    /// perf's own records need not be a multiple of 8 long (perf reads them as they are): a
    /// perf.data walk accepts them; a ring walk, whose records the kernel always aligns, does not.
    #[test]
    fn perf_data_walks_accept_sizes_that_are_not_multiples_of_8() {
        let mut buf = Vec::new();
        buf.extend_from_slice(&header(types::HEADER_BUILD_ID, 13));
        buf.extend_from_slice(&[1, 2, 3, 4, 5]);
        buf.extend_from_slice(&header(types::FINISHED_ROUND, 8));
        let walked: Vec<_> = Walker::perf_data(&buf, Endian::Little).collect::<Result<_, _>>().unwrap();
        assert_eq!(walked.iter().map(|r| (r.header.type_, r.offset)).collect::<Vec<_>>(), [(67, 0), (68, 13)]);
        assert_eq!(Walker::new(&buf, Endian::Little).next(), Some(Err(WalkError::Misaligned { offset: 0, size: 13 })));
    }
}
