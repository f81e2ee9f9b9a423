//! [`Walker`]: the records of a byte buffer, one after another, bounds checked once each.
//!
//! For a buffer that holds whole records back to back: a consumer batch copied out of a ring,
//! a perf.data data section, a pipe's payload. Each step reads the 8-byte header once, checks
//! `header.size` against what is left, and hands out a [`RawRecord`]: the header it parsed with
//! the record's bytes, so that an [`EventSet`](super::EventSet) and the readers after it need
//! not parse it again. A bad size ends the walk with a [`DecodeError`] that says where; the
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
//! [`EventSet::attribute`](super::EventSet::attribute) and the views read its fields in that
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

use super::header::{types, Header};
use super::raw::RawRecord;
use super::{DecodeError, Endian};

/// The records of a buffer, in order (module docs). Stops at the end of the buffer or at the
/// first error ([`DecodeError::Incomplete`], [`DecodeError::BadSize`]), which it yields once.
#[derive(Debug, Clone)]
pub struct Walker<'a> {
    /// The records not walked yet (a slice, not an offset: each step checks its length only).
    rest: &'a [u8],
    /// Offset of `rest` in the walked buffer.
    pos: usize,
    endian: Endian,
    /// 7 for ring records (sizes whole words), 0 for perf.data's (any size; trailing data).
    align: usize,
}

impl<'a> Walker<'a> {
    /// Walk ring records (as the kernel writes them: sizes multiples of 8).
    pub fn new(bytes: &'a [u8], endian: Endian) -> Walker<'a> {
        Walker { rest: bytes, pos: 0, endian, align: 7 }
    }

    /// Walk a perf.data data section or pipe payload: also perf's own record types, the data
    /// after each AUXTRACE and HEADER_TRACING_DATA record ([`RawRecord::trailing`]), and
    /// sizes that are not multiples of 8 (perf reads them).
    pub fn perf_data(bytes: &'a [u8], endian: Endian) -> Walker<'a> {
        Walker { rest: bytes, pos: 0, endian, align: 0 }
    }

    /// Offset of the next record: after the walk, the bytes consumed.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The data after an AUXTRACE or HEADER_TRACING_DATA record of a perf.data walk, and the
    /// bytes after it; `None` for another type.
    #[cold]
    fn trailing(
        &self,
        type_: u32,
        bytes: &'a [u8],
        after: &'a [u8],
        offset: usize,
        have: usize,
    ) -> Result<Option<DataAndRest<'a>>, DecodeError> {
        let len = match type_ {
            // `struct perf_record_auxtrace`: header, then the u64 size of the data that follows.
            types::AUXTRACE => self.endian.u64_at(bytes, 8).unwrap_or(0),
            // `struct perf_record_header_tracing_data`: header, then the u32 size of the
            // tracing data that follows (aligned to 8 by perf's writer).
            types::HEADER_TRACING_DATA => u64::from(self.endian.u32_at(bytes, 8).unwrap_or(0)),
            _ => return Ok(None),
        };
        let need = (bytes.len() as u64).saturating_add(len);
        match usize::try_from(len).ok().and_then(|l| after.split_at_checked(l)) {
            Some(split) => Ok(Some(split)),
            None => Err(DecodeError::Incomplete { offset, need, have }),
        }
    }

    #[inline]
    fn step(&mut self) -> Option<Result<RawRecord<'a>, DecodeError>> {
        let (offset, rest) = (self.pos, self.rest);
        if rest.is_empty() {
            return None;
        }
        let Some(h) = rest.first_chunk::<{ Header::SIZE }>() else {
            return Some(Err(DecodeError::Incomplete { offset, need: Header::SIZE as u64, have: rest.len() }));
        };
        let header = Header::from_bytes(*h, self.endian);
        let size = header.size as usize;
        // Ring records are whole words; perf.data's may not be (`align` is 7 or 0).
        if size < Header::SIZE || size & self.align != 0 {
            return Some(Err(DecodeError::BadSize { offset, size: header.size }));
        }
        let Some((bytes, mut after)) = rest.split_at_checked(size) else {
            return Some(Err(DecodeError::Incomplete { offset, need: size as u64, have: rest.len() }));
        };
        prefetch(after);
        let mut trailing: &'a [u8] = &[];
        // Only perf's own types (>= 64) carry data after them: one compare for the others.
        if header.type_ >= types::HEADER_ATTR && self.align == 0 {
            match self.trailing(header.type_, bytes, after, offset, rest.len()) {
                Ok(Some((data, next))) => (trailing, after) = (data, next),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
        }
        self.pos = offset + (rest.len() - after.len());
        self.rest = after;
        Some(Ok(RawRecord { header, bytes, offset: offset as u64, endian: self.endian, trailing }))
    }
}

/// A record's trailing data and the bytes after it.
type DataAndRest<'a> = (&'a [u8], &'a [u8]);

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
    type Item = Result<RawRecord<'a>, DecodeError>;

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
            Some(Err(DecodeError::Incomplete { offset: 0, need: 40, have: 30 }))
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
        assert_eq!(Walker::new(&buf, Endian::Little).next(), Some(Err(DecodeError::BadSize { offset: 0, size: 13 })));
    }
}
