//! [`DecodeContext`]: the `perf_event_attr` fields that decide a record's layout.

use super::attr::{flags, Attr};
use super::Endian;

/// What a codec must know besides the bytes: the fields of the writer's `perf_event_attr` that
/// shape its records, and the byte order. The same context encodes and decodes.
///
/// A ring or a perf.data file can carry records of several events; pick the context of the
/// event that wrote each record (perf does it by the id at the fixed IDENTIFIER position,
/// perf's tools/perf/util/session.c and evlist.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeContext {
    /// `attr.sample_type`: the fields of SAMPLE records and of the `sample_id` trailer.
    pub sample_type: u64,
    /// `attr.read_format`: the layout of READ records and of SAMPLE's READ field.
    pub read_format: u64,
    /// `attr.sample_id_all`: whether non-SAMPLE records end with a `sample_id` trailer.
    pub sample_id_all: bool,
    /// `attr.sample_regs_user`: one u64 per set bit in REGS_USER (when its ABI is not 0).
    pub sample_regs_user: u64,
    /// `attr.sample_regs_intr`: one u64 per set bit in REGS_INTR (when its ABI is not 0).
    pub sample_regs_intr: u64,
    /// `attr.branch_sample_type`: `HW_INDEX` adds `hw_idx` to BRANCH_STACK, `COUNTERS` adds
    /// one counter word per branch.
    pub branch_sample_type: u64,
    /// Byte order of the records.
    pub endian: Endian,
}

impl DecodeContext {
    /// A context with every field 0: SAMPLE records are a bare header, no trailers.
    pub const fn new(endian: Endian) -> DecodeContext {
        DecodeContext {
            sample_type: 0,
            read_format: 0,
            sample_id_all: false,
            sample_regs_user: 0,
            sample_regs_intr: 0,
            branch_sample_type: 0,
            endian,
        }
    }

    /// The context of records written for `attr`.
    pub const fn from_attr(attr: &Attr, endian: Endian) -> DecodeContext {
        DecodeContext {
            sample_type: attr.sample_type,
            read_format: attr.read_format,
            sample_id_all: attr.has(flags::SAMPLE_ID_ALL),
            sample_regs_user: attr.sample_regs_user,
            sample_regs_intr: attr.sample_regs_intr,
            branch_sample_type: attr.branch_sample_type,
            endian,
        }
    }

    /// The `sample_type` bits that make up the trailer of non-SAMPLE records, or `None` without
    /// `sample_id_all`.
    pub const fn trailer_type(&self) -> Option<u64> {
        if self.sample_id_all {
            Some(self.sample_type)
        } else {
            None
        }
    }
}
