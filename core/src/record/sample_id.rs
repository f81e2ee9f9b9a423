//! `struct sample_id`: the trailer of non-sample records when `attr.sample_id_all` is set.

use super::{sample_type, Endian};

/// The values of a `sample_id` trailer. Which of them are present in a record is decided by the
/// event's `sample_type` (see [`SampleId::size`]); absent fields are ignored when encoding and 0
/// when decoding.
///
/// Order on the wire (`__perf_event__output_id_sample`): `{pid, tid}` (TID), `time` (TIME),
/// `id` (ID), `stream_id` (STREAM_ID), `{cpu, res}` (CPU), `identifier` (IDENTIFIER, always
/// last, so it sits at a fixed distance from the end of the record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct SampleId {
    /// Process id (TID).
    pub pid: u32,
    /// Thread id (TID).
    pub tid: u32,
    /// Timestamp (TIME).
    pub time: u64,
    /// Event id (ID).
    pub id: u64,
    /// Stream id (STREAM_ID).
    pub stream_id: u64,
    /// CPU (CPU).
    pub cpu: u32,
    /// Reserved word after `cpu` (CPU); the kernel writes 0.
    pub res: u32,
    /// Event id again (IDENTIFIER).
    pub identifier: u64,
}

impl SampleId {
    /// Size in bytes of the trailer for `sample_type` (the kernel's `id_header_size`).
    pub const fn size(sample_type: u64) -> usize {
        let mut n = 0;
        if sample_type & sample_type::TID != 0 {
            n += 8;
        }
        if sample_type & sample_type::TIME != 0 {
            n += 8;
        }
        if sample_type & sample_type::ID != 0 {
            n += 8;
        }
        if sample_type & sample_type::STREAM_ID != 0 {
            n += 8;
        }
        if sample_type & sample_type::CPU != 0 {
            n += 8;
        }
        if sample_type & sample_type::IDENTIFIER != 0 {
            n += 8;
        }
        n
    }

    /// Write the trailer for `sample_type` into `out`; returns the bytes written, or `None` if
    /// `out` is shorter than [`SampleId::size`] (nothing is written then).
    pub fn encode(&self, sample_type: u64, endian: Endian, out: &mut [u8]) -> Option<usize> {
        let n = Self::size(sample_type);
        let out = out.get_mut(..n)?;
        let mut at = 0;
        let mut put = |bytes: [u8; 8]| {
            out[at..at + 8].copy_from_slice(&bytes);
            at += 8;
        };
        if sample_type & sample_type::TID != 0 {
            put(endian.pair_u32(self.pid, self.tid));
        }
        if sample_type & sample_type::TIME != 0 {
            put(endian.put_u64(self.time));
        }
        if sample_type & sample_type::ID != 0 {
            put(endian.put_u64(self.id));
        }
        if sample_type & sample_type::STREAM_ID != 0 {
            put(endian.put_u64(self.stream_id));
        }
        if sample_type & sample_type::CPU != 0 {
            put(endian.pair_u32(self.cpu, self.res));
        }
        if sample_type & sample_type::IDENTIFIER != 0 {
            put(endian.put_u64(self.identifier));
        }
        Some(n)
    }
}
