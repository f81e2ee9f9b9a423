#![deny(missing_docs)]
#![doc = include_str!("../README.md")]
//!
//! # Layout (perf's tools/perf/util/header.c)
//!
//! ```text
//! file mode:
//! 0     perf_file_header (104 bytes): magic "PERFILE2", size 104, attr_size,
//!       attrs {offset, size}, data {offset, size}, event_types {0, 0}, feature bitmap[4]
//! 104   attrs: one perf_file_attr per event = perf_event_attr (attr.size bytes) + ids section
//!       the ids arrays (u64 each)
//!       data: records in the writer's byte order
//!       feature sections: one {offset, size} per set feature bit, ascending; their payloads
//! pipe mode:
//! 0     perf_pipe_file_header (16 bytes): magic, size 16
//! 16    records: HEADER_ATTR (64), HEADER_FEATURE (80), … and the kernel's records
//! ```

mod attribution;
mod cursor;
mod decompress;
mod directory;
mod error;
pub mod features;
mod file_header;
mod file_order;
mod file_record;
mod loc;
mod metadata;
#[cfg(feature = "mmap")]
mod mmap;
mod open;
mod perf_records;
mod read_deliveries;
mod reader;
mod source;
mod time_order;
mod warning;
mod writer;

pub use decompress::MAX_DECOMPRESSED;
pub use directory::Files;
pub use error::PerfDataError;
pub use file_header::{FileHeader, Mode, Section};
pub use file_record::FileRecord;
pub use metadata::{FileAttr, Metadata};
#[cfg(feature = "mmap")]
pub use mmap::MappedFile;
pub use perf_records::{CpuMap, IdIndexEntry, PerfRecord};
pub use read_deliveries::ReadDelivery;
pub use reader::Reader;
pub use source::{ShortOpaque, Slice, Source, Stream};
pub use warning::Warning;
#[cfg(feature = "zstd")]
pub use writer::compressed_records;
pub use writer::Writer;

/// "PERFILE2" as the u64 perf compares against (`PERF_MAGIC`), little-endian on disk.
pub const MAGIC: u64 = 0x3245_4c49_4652_4550;
/// Size of `struct perf_file_header`.
pub const HEADER_SIZE: usize = 104;
/// Size of the legacy header without the feature bitmap.
pub const LEGACY_HEADER_SIZE: usize = 72;
/// Size of `struct perf_pipe_file_header` (pipe mode).
pub const PIPE_HEADER_SIZE: usize = 16;
/// Size of a `perf_file_section` (`{u64 offset, u64 size}`).
pub const SECTION_SIZE: usize = 16;

/// A small file for the README's examples: one event, one SAMPLE at ip 0x1234.
#[doc(hidden)]
pub fn doc_example_file() -> Result<Vec<u8>, PerfDataError> {
    use perfring::record::{attr_flags, sample_type as st, Attr, Endian, Sample};
    let attr = Attr {
        size: Attr::SIZE_VER7,
        sample_type: st::IP | st::TID,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::default()
    };
    let mut w = Writer::new(std::io::Cursor::new(Vec::new()), Endian::NATIVE, vec![FileAttr { attr, ids: vec![1] }])?;
    w.write_record(&Sample { ip: Some(0x1234), tid: Some(Default::default()), ..Sample::default() }, 0)?;
    Ok(w.finish()?.into_inner())
}
