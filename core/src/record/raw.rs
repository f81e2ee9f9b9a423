//! [`RawRecord`]: one record as a reader hands it out — its header parsed once, its bytes, its
//! byte order — before anything asks which event wrote it.
//!
//! Every source of records gives this one type: a ring's [`Consumer`](crate::consumer::Consumer)
//! and [`BackwardReader`](crate::backward::BackwardReader), a [`Walker`](super::Walker) over a
//! buffer of records (a consumer batch copied out, a perf.data data section, a pipe's payload),
//! and the std crates' readers, which keep one inside the records they deliver. An
//! [`EventSet`](super::EventSet) attributes it ([`EventSet::attribute`](super::EventSet::attribute)),
//! and the attributed record is read through [`EventRecord`](super::EventRecord), as every
//! record is.

use super::header::Header;
use super::Endian;

/// One record: its parsed header, all its bytes and the byte order they are in.
///
/// The fields are public so that a reader of another source can hand out its records; the
/// readers of this crate check that `header` is the header at the start of `bytes` and that
/// `bytes` is `header.size` long. The complete decode checks that again (a header that
/// disagrees with the bytes is [`DecodeError::SizeMismatch`](super::DecodeError::SizeMismatch));
/// the views read only inside `bytes`, whatever the header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// The header, parsed once (for a ring read untrusted, the one snapshot that was checked).
    pub header: Header,
    /// The whole record, `header.size` bytes, header included: a view into the ring or the
    /// walked buffer, or into the caller's scratch where the record wrapped the ring's end.
    pub bytes: &'a [u8],
    /// Where the record starts: its free-running position in a ring's data area (a consumer's
    /// or a backward reader's record), its offset in the walked buffer (a walker's), or its
    /// offset in a perf.data file as `perf report -D` prints it (`perfring_data::FileRecord`).
    pub offset: u64,
    /// The byte order of the header and of every field. A ring's records are always
    /// `Endian::NATIVE`; a walk's are in the order it was made with. When that order is a
    /// constant and the loop is inlined, every field read is one load with no byte-order select.
    pub endian: Endian,
    /// In a perf.data walk ([`Walker::perf_data`](super::Walker::perf_data)), the bytes that
    /// follow the record and that `header.size` does not count: an AUXTRACE record's (type 71)
    /// AUX data, `auxtrace.size` bytes (`tools/perf/util/auxtrace.c`); a pipe-mode
    /// HEADER_TRACING_DATA record's (type 66) tracing data, `tracing_data.size` bytes
    /// (`tools/perf/util/header.c: perf_event__process_tracing_data`). Empty otherwise.
    pub trailing: &'a [u8],
}

impl<'a> RawRecord<'a> {
    /// The body after the 8-byte header.
    #[inline]
    pub fn body(&self) -> &'a [u8] {
        self.bytes.get(Header::SIZE..).unwrap_or_default()
    }
}

/// A record as this crate's readers take it internally: its bytes alone (the whole record; its
/// header is read from them, in the reader's byte order), or a [`RawRecord`], whose header was
/// parsed once and whose byte order is known, so neither is read again.
pub(crate) trait RecordRef<'a>: Copy {
    /// The whole record, header included.
    fn record_bytes(self) -> &'a [u8];
    /// The header and the byte order it was read in, if already parsed.
    fn parsed(self) -> Option<(Header, Endian)>;
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
}

impl<'a> RecordRef<'a> for &RawRecord<'a> {
    #[inline(always)]
    fn record_bytes(self) -> &'a [u8] {
        self.bytes
    }
    #[inline(always)]
    fn parsed(self) -> Option<(Header, Endian)> {
        Some((self.header, self.endian))
    }
}
