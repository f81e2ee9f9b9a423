//! [`PerfDataError`]: why a perf.data file could not be read or written.

use std::fmt;

use perfring::record::{DecodeError, EncodeError, EventSetError};

/// Why a perf.data file could not be read or written. Each variant names the field and the
/// file offset involved and, where it helps, what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum PerfDataError {
    /// Reading or writing failed at `offset`.
    Io {
        /// File offset (or stream position) of the operation.
        offset: u64,
        /// The error.
        error: std::io::Error,
    },
    /// A path given to [`crate::Reader::open`] or [`crate::Reader::open_dir`] (or a file of
    /// the directory) could not be opened, examined or listed.
    Open {
        /// The path.
        path: std::path::PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// What [`crate::Reader::open`] or [`crate::Reader::open_dir`] found wrong in the file at
    /// `path` (`error` gives the offset and the field).
    InFile {
        /// The file.
        path: std::path::PathBuf,
        /// What was wrong.
        error: Box<PerfDataError>,
    },
    /// The input ended inside `what`.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Its offset.
        offset: u64,
        /// Bytes it needs.
        need: u64,
        /// Bytes there were.
        have: u64,
    },
    /// The first 8 bytes are not "PERFILE2" in either byte order.
    BadMagic([u8; 8]),
    /// `perf_file_header.size` (offset 8) is 16: a pipe-mode file (`perf record -o -`) was
    /// given where a file-mode header was expected. Read it with [`crate::Reader::from_pipe`]
    /// (or [`crate::Reader::new`], which detects the mode).
    PipeMode,
    /// `perf_file_header.size` (offset 8) is neither 104, 72 (legacy) nor 16 (pipe mode).
    BadHeaderSize(u64),
    /// A section of the header points outside the file.
    SectionOutsideFile {
        /// Which section.
        what: &'static str,
        /// Where its `{offset, size}` pair is.
        at: u64,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// The file's size.
        file_size: u64,
    },
    /// `perf_file_header.attr_size` (offset 16) cannot hold an attr and its ids section, or is
    /// larger than any `perf_event_attr` and its ids section (perf divides the attrs section by
    /// it to count the attrs).
    BadAttrSize {
        /// `attr_size`.
        attr_size: u64,
        /// Size of the attrs section.
        section_size: u64,
    },
    /// An attr's `size` (0 counts as 64) is below 64 or above the largest `perf_event_attr`
    /// this crate knows (perf: "file uses a more recent and unsupported ABI").
    UnsupportedAttrSize {
        /// Index of the event.
        event: usize,
        /// File offset of its `attr.size`.
        offset: u64,
        /// `attr.size`.
        attr_size: u32,
    },
    /// An attr could not be parsed.
    BadAttr {
        /// Index of the event.
        event: usize,
        /// File offset of the attr.
        offset: u64,
        /// Why.
        error: DecodeError,
    },
    /// Events disagree on `sample_id_all` (perf: "non matching sample_id_all").
    SampleIdAllMismatch {
        /// The first event that differs from event 0.
        event: usize,
        /// File offset of its attr's flags word (where `sample_id_all` is bit 18).
        offset: u64,
    },
    /// With more than one event, an event has neither ID nor IDENTIFIER in its `sample_type`
    /// (event 0 included), or has its id at another position than event 0 (perf: "non
    /// matching sample_type"). Put IDENTIFIER in every `sample_type`.
    NonMatchingSampleType {
        /// The first event that differs from event 0.
        event: usize,
        /// File offset of its `attr.sample_type`.
        offset: u64,
        /// Its `sample_type`.
        sample_type: u64,
    },
    /// The first event samples READ without `PERF_FORMAT_ID` in its `read_format` (perf:
    /// "non matching read_format"): the values could not be matched to their events.
    NonMatchingReadFormat {
        /// File offset of event 0's `attr.read_format`.
        offset: u64,
        /// Event 0's `read_format`.
        read_format: u64,
    },
    /// The attrs' ids sections together list more ids than the file has bytes: they overlap
    /// (several events point at one ids array) so much that reading them would take memory
    /// and time out of proportion to the file. perf would register every id once per event
    /// listing it; this reader refuses. A file perf writes has one ids array per event.
    TooManyIds {
        /// The event whose ids section passed the bound.
        event: usize,
        /// File offset of its ids section's `{offset, size}`.
        offset: u64,
        /// Ids listed by the events up to it.
        ids: u64,
        /// The file's size (in file mode read forward, the bytes before the data section,
        /// or the data section's end).
        file_size: u64,
    },
    /// A record's `header.size` is below 8.
    BadRecordSize {
        /// File offset of the record.
        offset: u64,
        /// `header.size`.
        size: u16,
    },
    /// A record (or the data after an AUXTRACE/TRACING_DATA record) reaches past the end of
    /// the data section.
    OutsideDataSection {
        /// What was being read.
        what: &'static str,
        /// Its file offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// End of the data section.
        data_end: u64,
    },
    /// A perf-only record (type ≥ 64) is too short or malformed.
    BadPerfRecord {
        /// `header.type`.
        type_: u32,
        /// File offset of the record.
        offset: u64,
        /// The field that does not fit.
        field: &'static str,
    },
    /// A COMPRESSED record was met but this build has no `zstd` feature: enable the
    /// `perfring-data/zstd` feature (on by default).
    ZstdDisabled {
        /// File offset of the record.
        offset: u64,
    },
    /// A COMPRESSED record's payload is not valid zstd.
    Decompress {
        /// File offset of the record.
        offset: u64,
        /// The decompressor's error.
        error: std::io::Error,
    },
    /// A COMPRESSED record decompresses to more than [`crate::MAX_DECOMPRESSED`] bytes.
    DecompressedTooLarge {
        /// File offset of the record.
        offset: u64,
        /// The limit ([`crate::MAX_DECOMPRESSED`]).
        limit: usize,
    },
    /// A feature section could not be decoded.
    BadFeature {
        /// Feature bit (`HEADER_*`).
        feature: u32,
        /// Offset in the feature's payload.
        offset: u64,
        /// The field that does not fit.
        field: &'static str,
    },
    /// An attr or record could not be encoded.
    Encode(EncodeError),
    /// The writer's attrs disagree on `attr.size` (the file has one `attr_size`).
    MixedAttrSizes {
        /// The first event whose size differs from event 0's.
        event: usize,
    },
    /// The bytes given to [`crate::Writer::write_raw`] are not one record and the data it
    /// carries, which every reader of the file would stumble on: `field` is `value` where
    /// `expected` is needed. Nothing was written. `field` is one of `"record length"` (fewer
    /// bytes than a header), `"header.size"` (not the bytes given, or too small for the size
    /// field of an AUXTRACE or HEADER_TRACING_DATA record), `"header.size % 8"` (a kernel
    /// record, type below 64, whose size is not a multiple of 8 as the ring's records are),
    /// `"auxtrace.size"` or `"tracing_data.size"` (the data the record says follows it is not
    /// the `trailing` bytes given), `"trailing length"` (data after a record that carries
    /// none).
    BadRawRecord {
        /// `header.type` (0 when there is no whole header).
        type_: u32,
        /// The field at fault.
        field: &'static str,
        /// Its value.
        value: u64,
        /// What it must be.
        expected: u64,
    },
    /// [`crate::Writer::set_feature`] was given a [`crate::features::Feature`] variant other than the one
    /// the feature bit's layout needs (the one [`crate::features::Feature::parse`] gives for it).
    FeatureMismatch {
        /// Feature bit (`HEADER_*`).
        feature: u32,
        /// Its name (`"HOSTNAME"`), or `"unnamed"`.
        name: &'static str,
        /// The variant the bit takes.
        expected: &'static str,
        /// The variant given.
        given: &'static str,
    },
    /// An attr given to the writer has a field set past its `size` (0 counting as 64), which
    /// the file would drop: raise `attr.size` to `need` or more (`Attr::SIZE_VER7`, 128, is
    /// what perf 6.1 writes and the largest it reads).
    AttrFieldsPastSize {
        /// Index of the event.
        event: usize,
        /// Its `attr.size`.
        size: u32,
        /// The smallest size that holds every field set.
        need: u32,
    },
    /// An event index the writer does not have.
    NoSuchEvent(usize),
    /// A file-mode file read forward from a stream ([`crate::Reader::from_read`]) has a section
    /// where a stream cannot go back to (perf writes attrs and ids before the data section and
    /// features after it; this file does not). Read it from a seekable input
    /// ([`crate::Reader::open`], [`crate::Reader::new`], [`crate::Reader::from_bytes`]).
    NeedsSeekableInput {
        /// The section.
        what: &'static str,
        /// Its file offset.
        offset: u64,
    },
    /// The file's events or ids could not be registered for attribution (a refusal other than
    /// "more room needed", which is handled by growing the storage).
    EventSet(EventSetError),
}

impl fmt::Display for PerfDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfDataError::Io { offset, error } => write!(f, "perf.data I/O at offset {offset}: {error}"),
            PerfDataError::Open { path, error } => write!(f, "cannot open {}: {error}", path.display()),
            PerfDataError::InFile { path, error } => write!(f, "{}: {error}", path.display()),
            PerfDataError::Truncated { what, offset, need, have } => {
                write!(f, "the input ends inside {what} at offset {offset}: {need} bytes needed, {have} there")
            }
            PerfDataError::BadMagic(m) => write!(f, "not a perf.data file: magic {m:02x?} is not \"PERFILE2\""),
            PerfDataError::PipeMode => f.write_str(
                "perf_file_header.size (offset 8) is 16: this is a pipe mode file (perf record -o -); \
                 read it with Reader::from_pipe or Reader::new",
            ),
            PerfDataError::BadHeaderSize(s) => {
                write!(f, "perf_file_header.size (offset 8) is {s}; perf knows 104, 72 (legacy) and 16 (pipe mode)")
            }
            PerfDataError::SectionOutsideFile { what, at, offset, size, file_size } => write!(
                f,
                "the {what} ({{offset {offset}, size {size}}} at offset {at}) is outside the file of {file_size} bytes"
            ),
            e @ (PerfDataError::BadAttrSize { .. }
            | PerfDataError::UnsupportedAttrSize { .. }
            | PerfDataError::BadAttr { .. }
            | PerfDataError::SampleIdAllMismatch { .. }
            | PerfDataError::NonMatchingSampleType { .. }
            | PerfDataError::NonMatchingReadFormat { .. }
            | PerfDataError::TooManyIds { .. }) => e.fmt_events(f),
            PerfDataError::BadRecordSize { offset, size } => {
                write!(f, "record at offset {offset} has header.size {size} (at least 8 needed)")
            }
            PerfDataError::OutsideDataSection { what, offset, size, data_end } => write!(
                f,
                "{what} at offset {offset} ({size} bytes) is outside the data section, which ends at {data_end}"
            ),
            PerfDataError::BadPerfRecord { type_, offset, field } => {
                write!(f, "record of type {type_} at offset {offset}: field {field} does not fit the record")
            }
            PerfDataError::ZstdDisabled { offset } => write!(
                f,
                "COMPRESSED record at offset {offset}: perfring-data was built without its `zstd` feature; enable it"
            ),
            PerfDataError::Decompress { offset, error } => {
                write!(f, "COMPRESSED record at offset {offset} does not decompress: {error}")
            }
            PerfDataError::DecompressedTooLarge { offset, limit } => {
                write!(f, "COMPRESSED record at offset {offset} decompresses to more than {limit} bytes")
            }
            PerfDataError::BadFeature { feature, offset, field } => {
                write!(f, "feature {feature}: field {field} at offset {offset} of its section does not fit")
            }
            PerfDataError::Encode(e) => write!(f, "encoding: {e}"),
            PerfDataError::MixedAttrSizes { event } => {
                write!(f, "event {event}'s attr.size differs from event 0's; a file has one attr_size")
            }
            PerfDataError::BadRawRecord { type_, field, value, expected } => {
                write!(f, "write_raw: {field} is {value} where {expected} is needed (record type {type_}): ")?;
                f.write_str(raw_record_hint(field))
            }
            PerfDataError::FeatureMismatch { feature, name, expected, given } => write!(
                f,
                "feature {feature} ({name}) takes Feature::{expected}, not Feature::{given}: give a \
                 Feature::{expected}, or its encoded bytes to set_feature_bytes"
            ),
            PerfDataError::AttrFieldsPastSize { event, size, need } => write!(
                f,
                "event {event}'s attr.size is {size} (0 counts as 64) but a field past it is set, which the file \
                 would drop: set attr.size to {need} or more (Attr::SIZE_VER7, 128, is what perf 6.1 writes)"
            ),
            PerfDataError::NoSuchEvent(i) => write!(f, "no event {i} in this writer"),
            PerfDataError::EventSet(e) => write!(f, "registering the file's events: {e}"),
            PerfDataError::NeedsSeekableInput { what, offset } => write!(
                f,
                "{what} at offset {offset} lies where a stream read forward cannot go back to: read this file from \
                 a seekable input (Reader::open, Reader::new, Reader::from_bytes)"
            ),
        }
    }
}

/// What to do about a [`PerfDataError::BadRawRecord`] of `field`.
fn raw_record_hint(field: &str) -> &'static str {
    match field {
        "record length" => "a record is at least its 8-byte header",
        "header.size % 8" => "a kernel record's size is a multiple of 8, as in the ring",
        "trailing length" => "only AUXTRACE (71) and HEADER_TRACING_DATA (66) records have data after them",
        "header.size" => {
            "give one whole record (header.size bytes), and the data an AUXTRACE or HEADER_TRACING_DATA record \
             carries as `trailing`"
        }
        _ => "give as `trailing` exactly the data the record says follows it",
    }
}

impl PerfDataError {
    /// [`Display`](fmt::Display) of the errors in a file's attrs and ids.
    fn fmt_events(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfDataError::BadAttrSize { attr_size, section_size } => write!(
                f,
                "perf_file_header.attr_size (offset 16) is {attr_size}: not the size of an attr plus its ids \
                 section, which perf divides the attrs section of {section_size} bytes by"
            ),
            PerfDataError::UnsupportedAttrSize { event, offset, attr_size } => write!(
                f,
                "attr {event}'s size (offset {offset}) is {attr_size}: not 64 to {} bytes (a more recent and \
                 unsupported ABI, or a corrupt file)",
                perfring::record::Attr::SIZE_VER8
            ),
            PerfDataError::BadAttr { event, offset, error } => write!(f, "attr {event} at offset {offset}: {error}"),
            PerfDataError::SampleIdAllMismatch { event, offset } => {
                write!(f, "non matching sample_id_all: event {event}'s (flags at offset {offset}) differs from event 0's")
            }
            PerfDataError::NonMatchingSampleType { event, offset, sample_type } => {
                let ids = perfring::record::sample_type::ID | perfring::record::sample_type::IDENTIFIER;
                if sample_type & ids == 0 {
                    write!(
                        f,
                        "non matching sample_type: there are several events and event {event}'s sample_type \
                         {sample_type:#x} (offset {offset}) has neither ID nor IDENTIFIER, so its records cannot \
                         be told from the others'; give every event PERF_SAMPLE_IDENTIFIER"
                    )
                } else {
                    write!(
                        f,
                        "non matching sample_type: event {event}'s sample_type {sample_type:#x} (offset {offset}) \
                         puts its id at another position in its records than event 0's does; give every event \
                         PERF_SAMPLE_IDENTIFIER"
                    )
                }
            }
            PerfDataError::NonMatchingReadFormat { offset, read_format } => write!(
                f,
                "non matching read_format: event 0 samples READ but its read_format {read_format:#x} (offset {offset}) lacks \
                 PERF_FORMAT_ID"
            ),
            PerfDataError::TooManyIds { event, offset, ids, file_size } => write!(
                f,
                "the ids sections of events 0 to {event} (the last at offset {offset}) list {ids} ids, more than \
                 the file's {file_size} bytes: they overlap (events share ids arrays) beyond what this reader \
                 registers; a file perf writes has one ids array per event"
            ),
            // (`fmt` sends only the variants above here.)
            _ => Ok(()),
        }
    }
}

impl std::error::Error for PerfDataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PerfDataError::Io { error, .. }
            | PerfDataError::Decompress { error, .. }
            | PerfDataError::Open { error, .. } => Some(error),
            PerfDataError::InFile { error, .. } => Some(error.as_ref()),
            PerfDataError::EventSet(e) => Some(e),
            _ => None,
        }
    }
}

impl From<EncodeError> for PerfDataError {
    fn from(e: EncodeError) -> Self {
        PerfDataError::Encode(e)
    }
}
