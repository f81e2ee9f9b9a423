//! [`PerfDataError`].

use std::fmt;

use perfring::record::{DecodeError, EncodeError};

/// Why a perf.data file could not be read or written.
#[derive(Debug)]
pub enum PerfDataError {
    /// Reading or writing the file failed.
    Io(std::io::Error),
    /// The first 8 bytes are not "PERFILE2" in either byte order.
    BadMagic([u8; 8]),
    /// `header.size` is neither 104 nor 72.
    BadHeaderSize(u64),
    /// A section or record points outside the file.
    OutOfBounds {
        /// What was being read.
        what: &'static str,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
    },
    /// An attr entry could not be parsed.
    BadAttr {
        /// Index of the entry.
        index: usize,
        /// Why.
        error: DecodeError,
    },
    /// `attr_size` is too small for an attr plus its ids section, or the attrs section is not a
    /// whole number of entries.
    BadAttrSize(u64),
    /// A record header says less than 8 bytes.
    BadRecordSize {
        /// File offset of the record.
        offset: u64,
        /// `header.size`.
        size: u16,
    },
    /// The writer's attrs disagree (every `attr.size` must be equal: the file has one
    /// `attr_size`).
    MixedAttrSizes,
    /// A record could not be encoded.
    Encode(EncodeError),
}

impl fmt::Display for PerfDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfDataError::Io(e) => write!(f, "perf.data I/O: {e}"),
            PerfDataError::BadMagic(m) => write!(f, "not a perf.data file (magic {m:02x?})"),
            PerfDataError::BadHeaderSize(s) => write!(f, "perf_file_header.size is {s}, expected 104 or 72"),
            PerfDataError::OutOfBounds { what, offset, size } => {
                write!(f, "{what} at offset {offset} ({size} bytes) is outside the file")
            }
            PerfDataError::BadAttr { index, error } => write!(f, "attr {index}: {error}"),
            PerfDataError::BadAttrSize(s) => write!(f, "attr_size {s} does not fit the attrs section"),
            PerfDataError::BadRecordSize { offset, size } => write!(f, "record at offset {offset} has size {size}"),
            PerfDataError::MixedAttrSizes => f.write_str("every attr must have the same attr.size"),
            PerfDataError::Encode(e) => write!(f, "encoding a record: {e}"),
        }
    }
}

impl std::error::Error for PerfDataError {}

impl From<std::io::Error> for PerfDataError {
    fn from(e: std::io::Error) -> Self {
        PerfDataError::Io(e)
    }
}

impl From<EncodeError> for PerfDataError {
    fn from(e: EncodeError) -> Self {
        PerfDataError::Encode(e)
    }
}
