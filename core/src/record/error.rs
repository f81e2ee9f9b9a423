//! What can go wrong when reading or encoding a record: [`DecodeError`] (every way of reading
//! one: a walk, attribution, the views, the compile-time layout, the complete decode),
//! [`EncodeError`].

use core::fmt;

/// Why a record could not be read: walked out of a buffer, attributed to its event, viewed,
/// read through a compile-time layout or decoded (or a `perf_event_attr` decoded). Every
/// variant says which field and where: `offset` is a byte offset from the start of the record
/// (header included), except for [`Incomplete`](DecodeError::Incomplete), whose offset is the
/// record's in the walked buffer.
///
/// Reading never panics and never reads outside the input: any input that does not have the
/// layout its event describes ends in one of these. A caller that goes on past a record it
/// cannot read matches the variants that concern one record (an [`UnknownId`](Self::UnknownId),
/// a [`NotASample`](Self::NotASample)) apart from those that end a walk
/// ([`Incomplete`](Self::Incomplete), a bad `header.size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// A fixed-size field does not fit in what is left of the record (or of the part before the
    /// `sample_id` trailer).
    Truncated {
        /// The field, e.g. `"sample.period"`.
        field: &'static str,
        /// Where the field starts.
        offset: usize,
        /// Bytes the field needs.
        need: usize,
        /// Bytes left from `offset`.
        have: usize,
    },
    /// A count or length read from the record (callchain `nr`, branch `nr`, group `nr`, RAW
    /// `size`, stack `size`, …) overflows, or asks for more bytes than the record has left.
    CountTooLarge {
        /// The count field, e.g. `"sample.callchain.nr"`.
        field: &'static str,
        /// The value read.
        count: u64,
        /// Where the counted items start.
        offset: usize,
    },
    /// `header.size` is not the length of the input (or is smaller than the header).
    SizeMismatch {
        /// `header.size`.
        header_size: usize,
        /// Bytes given to the decoder.
        len: usize,
    },
    /// A string (filename, comm, cgroup path, symbol name) has no terminating NUL before the
    /// end of its area.
    BadString {
        /// The field, e.g. `"mmap.filename"`.
        field: &'static str,
        /// Where the string area starts.
        offset: usize,
    },
    /// Bytes are left between the last field of the body and the `sample_id` trailer (or the end
    /// of the record): the sizes disagree with the layout the context describes.
    TrailingBytes {
        /// The record, e.g. `"PERF_RECORD_SAMPLE"`.
        record: &'static str,
        /// Where the unexplained bytes start.
        offset: usize,
        /// How many there are.
        extra: usize,
    },
    /// A field holds a value the layout cannot have (e.g. an MMAP2 build-id size above 20).
    InvalidValue {
        /// The field.
        field: &'static str,
        /// The value read.
        value: u64,
        /// Where the field starts.
        offset: usize,
    },
    /// A non-SAMPLE record is too short for its body and the `sample_id` trailer the context
    /// asks for (`sample_id_all`), but is exactly its body without one: the producer wrote the
    /// record without the trailer. Give the writer the event's `sample_id` (perfring's
    /// `EventIdentity::sample_id`), or decode with `sample_id_all` off.
    MissingSampleId {
        /// The record, e.g. `"PERF_RECORD_LOST"`.
        record: &'static str,
        /// Bytes of the trailer the context expects.
        trailer: usize,
    },
    /// The record at `offset` of a walked buffer (its header, its body, or an AUXTRACE
    /// record's data) runs past the end of the buffer: a truncated file, or a buffer cut
    /// mid-record (a streaming reader refills from `offset` and walks again).
    Incomplete {
        /// Where the record starts in the walked buffer.
        offset: usize,
        /// Bytes the record needs from `offset`.
        need: u64,
        /// Bytes left from `offset`.
        have: usize,
    },
    /// The walk read a `header.size` that cannot start a record: below the 8-byte header (0
    /// included), or, in a ring walk, not a multiple of 8 (the kernel never writes one). The
    /// buffer is corrupt from here on: the next record cannot be found.
    BadSize {
        /// Where the record starts in the walked buffer.
        offset: usize,
        /// The size read.
        size: u16,
    },
    /// The record is not a SAMPLE: a view or layout of SAMPLE fields was asked of another
    /// type. Test `header.type_` first, or read it through [`view`](super::EventRecord::view).
    NotASample {
        /// `header.type`.
        type_: u32,
    },
    /// The reader has no events to attribute records to: add them first.
    NoEvents,
    /// A perf-only record type (≥ 64, e.g. FINISHED_ROUND) or type 0: these carry no event id,
    /// so no event's layout reads them (their complete decode is
    /// [`Record::Unknown`](super::Record::Unknown)).
    NotAnEventRecord {
        /// `header.type`.
        type_: u32,
    },
    /// Several events, but the first writes neither IDENTIFIER nor ID, so records carry
    /// nothing to tell them apart: record with `PERF_SAMPLE_IDENTIFIER`.
    NoIdPosition,
    /// The record is too short to hold the id where its events' layout puts it.
    IdOutsideRecord {
        /// `header.type`.
        type_: u32,
        /// The id's position in u64 words (`id_pos` from the start of a SAMPLE body, `is_pos`
        /// back from the end of other records).
        pos: usize,
        /// u64 words in the record body.
        words: usize,
    },
    /// The record's id belongs to no event (an event not registered, or a corrupt record).
    /// The record is not read with a guessed layout.
    UnknownId {
        /// The id read.
        id: u64,
    },
    /// The event's `sample_type` is not the one a compile-time layout names
    /// ([`EventRecord::fixed`](super::EventRecord::fixed)): name that one, or read the record
    /// through its run-time view ([`EventRecord::sample`](super::EventRecord::sample)).
    SampleTypeDiffers {
        /// The event's `sample_type`.
        sample_type: u64,
        /// The `sample_type` named.
        fixed: u64,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::Truncated { field, offset, need, have } => {
                write!(f, "{field} at offset {offset} needs {need} bytes, {have} left")
            }
            DecodeError::CountTooLarge { field, count, offset } => {
                write!(f, "{field} = {count} does not fit in the record (items start at offset {offset})")
            }
            DecodeError::SizeMismatch { header_size, len } => {
                write!(f, "header.size is {header_size} but the record has {len} bytes")
            }
            DecodeError::BadString { field, offset } => {
                write!(f, "{field} at offset {offset} has no terminating NUL")
            }
            DecodeError::TrailingBytes { record, offset, extra } => {
                write!(f, "{record}: {extra} unexplained bytes at offset {offset}")
            }
            DecodeError::InvalidValue { field, value, offset } => {
                write!(f, "{field} at offset {offset} has the impossible value {value}")
            }
            DecodeError::MissingSampleId { record, trailer } => write!(
                f,
                "{record} has no room for the {trailer}-byte sample_id trailer that sample_id_all asks for: \
                 it was written without one (give its writer the event's sample_id, or decode with sample_id_all off)"
            ),
            DecodeError::Incomplete { offset, need, have } => {
                write!(f, "record at offset {offset} needs {need} bytes but only {have} are left (truncated input)")
            }
            DecodeError::BadSize { offset, size } if size < 8 => {
                write!(
                    f,
                    "record at offset {offset} has header.size {size}, less than its 8-byte header (corrupt input)"
                )
            }
            DecodeError::BadSize { offset, size } => {
                write!(f, "record at offset {offset} has header.size {size}, not a multiple of 8 (corrupt ring data)")
            }
            DecodeError::NotASample { type_ } => {
                write!(f, "record type {type_} ({}) is not a SAMPLE: test header.type_ first", super::type_name(type_))
            }
            DecodeError::NoEvents => write!(f, "no events to attribute the record to: add the events first"),
            DecodeError::NotAnEventRecord { type_ } => {
                write!(f, "record type {type_} ({}) carries no event id", super::type_name(type_))
            }
            DecodeError::NoIdPosition => write!(
                f,
                "several events, but records carry no id (sample_type lacks IDENTIFIER and ID): \
                 record with PERF_SAMPLE_IDENTIFIER"
            ),
            DecodeError::IdOutsideRecord { type_, pos, words } => {
                write!(f, "record type {type_} has {words} body words, too few for the id at word {pos}")
            }
            DecodeError::UnknownId { id } => {
                write!(f, "id {id} belongs to no event (not registered, or a corrupt record)")
            }
            DecodeError::SampleTypeDiffers { sample_type, fixed } => write!(
                f,
                "the event's sample_type is {sample_type:#x}, not the fixed {fixed:#x}: \
                 read it through its run-time view"
            ),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a record could not be encoded: it does not fit, or its fields disagree with the context
/// (the `perf_event_attr` fields that decide the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output slice is shorter than [`Encode::encoded_size`](super::Encode::encoded_size).
    BufferTooSmall {
        /// Bytes needed.
        need: usize,
        /// Bytes given.
        have: usize,
    },
    /// The record would be larger than `header.size` can say (65535; 65528 for an aligned one).
    TooLarge {
        /// The size it would have.
        size: usize,
    },
    /// An optional field is present although the context says it is not in the layout, or
    /// absent although the context says it is.
    FieldMismatch {
        /// The field, e.g. `"sample.time"` or `"sample_id"`.
        field: &'static str,
        /// Whether the context wants the field.
        expected: bool,
    },
    /// An array has the wrong number of items for the context (e.g. `regs` against the
    /// popcount of `sample_regs_user`, group entries against nothing).
    CountMismatch {
        /// The field.
        field: &'static str,
        /// Items the context asks for.
        expected: usize,
        /// Items given.
        got: usize,
    },
    /// A field holds a value the layout cannot carry (a TEXT_POKE longer than a u16 can say, a
    /// build id above 20 bytes, a `dyn_size` without stack data, …).
    InvalidValue {
        /// The field.
        field: &'static str,
        /// The value.
        value: u64,
    },
    /// A SAMPLE view to encode does not decode: one from
    /// [`sample`](super::EventRecord::sample), whose fields after RAW are checked only when
    /// read (the view of [`decode`](super::EventRecord::decode) always decodes). The decode's
    /// error, which names the field.
    Unreadable(DecodeError),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncodeError::BufferTooSmall { need, have } => write!(f, "record needs {need} bytes, buffer has {have}"),
            EncodeError::TooLarge { size } => write!(f, "record of {size} bytes exceeds header.size's limit"),
            EncodeError::FieldMismatch { field, expected: true } => {
                write!(f, "{field} is required by the context but missing")
            }
            EncodeError::FieldMismatch { field, expected: false } => {
                write!(f, "{field} is present but the context has no place for it")
            }
            EncodeError::CountMismatch { field, expected, got } => {
                write!(f, "{field} has {got} items, the context asks for {expected}")
            }
            EncodeError::InvalidValue { field, value } => write!(f, "{field} cannot carry the value {value}"),
            EncodeError::Unreadable(e) => write!(f, "the SAMPLE does not decode: {e}"),
        }
    }
}

impl core::error::Error for EncodeError {}
