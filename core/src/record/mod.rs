//! `PERF_RECORD_*`: headers, layouts, decoding and encoding.
//!
//! Records are what travels through the ring: an 8-byte [`Header`] and a body whose layout is
//! decided by the header's type and by the `perf_event_attr` of the event that wrote it.

mod endian;
mod header;
mod lost;
mod sample_id;
pub mod sample_type;

pub use endian::Endian;
pub use header::{misc, types, CpuMode, Header};
pub use lost::{LostRecord, LOST_BODY_SIZE};
pub use sample_id::SampleId;

/// Largest record size: `header.size` is a u16 and every record is a multiple of 8 bytes.
pub const MAX_RECORD_SIZE: usize = 65528;
