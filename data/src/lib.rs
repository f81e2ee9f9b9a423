#![deny(missing_docs)]
//! `perf.data` files (KERNEL-NOTES §9): a [`PerfDataWriter`] and a [`PerfData`] reader.
//!
//! Layout written and read:
//!
//! ```text
//! 0     perf_file_header (104 bytes): magic "PERFILE2", size 104, attr_size,
//!       attrs {offset, size}, data {offset, size}, event_types {0, 0}, feature bitmap[4]
//! 104   attrs: one perf_file_attr per event = perf_event_attr (attr.size bytes) + ids section
//!       the ids arrays (u64 each)
//!       data: records in the writer's byte order
//!       feature sections: one {offset, size} per set feature bit, ascending; their payloads
//! ```
//!
//! The reader accepts both byte orders (the magic tells which), the legacy 72-byte header (no
//! features), and attributes records to events as perf does (`evlist__event2evsel`: the id at
//! the IDENTIFIER/ID position, id 0 and single-event files to the first event). AUXTRACE
//! records (type 71) are yielded with the AUX bytes that follow them.

mod error;
pub mod features;
mod reader;
mod writer;

pub use error::PerfDataError;
pub use reader::{id_pos, is_pos, FileAttr, FileRecord, PerfData, Records};
pub use writer::PerfDataWriter;

/// "PERFILE2" as the u64 perf compares against (`PERF_MAGIC`), little-endian on disk.
pub const MAGIC: u64 = 0x3245_4c49_4652_4550;
/// Size of `struct perf_file_header`.
pub const HEADER_SIZE: usize = 104;
/// Size of the legacy header without the feature bitmap.
pub const LEGACY_HEADER_SIZE: usize = 72;
/// Size of a `perf_file_section` (`{u64 offset, u64 size}`).
pub const SECTION_SIZE: usize = 16;
