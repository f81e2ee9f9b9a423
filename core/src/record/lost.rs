//! `PERF_RECORD_LOST`, the record the producer itself writes to report drops.

use super::{types, Endian, Header, SampleId};

/// Size of a `PERF_RECORD_LOST` without its `sample_id` trailer: header, `id`, `lost`.
pub const LOST_BODY_SIZE: usize = 24;

/// `PERF_RECORD_LOST`: `{header; u64 id; u64 lost; struct sample_id}`.
///
/// The kernel writes one at the start of the first successful reservation after drops
/// (`__perf_output_begin`). `id` is the id of the event writing *now* (not necessarily the one
/// whose records were lost), and `lost` may be 0 when a nested writer took the pending count
/// first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostRecord {
    /// `id` of the event that wrote this record.
    pub id: u64,
    /// Number of records dropped since the previous LOST record.
    pub lost: u64,
    /// The trailer, present when the writer has `sample_id_all`.
    pub sample_id: Option<SampleId>,
}

impl LostRecord {
    /// Encoded size for a writer whose trailer follows `sample_type` (`None`: no trailer).
    pub const fn size(trailer: Option<u64>) -> usize {
        LOST_BODY_SIZE
            + match trailer {
                Some(st) => SampleId::size(st),
                None => 0,
            }
    }

    /// Encode into `out`, the trailer laid out by `trailer_type` (the writer's `sample_type`,
    /// used only if [`LostRecord::sample_id`] is `Some`). Returns the size written, or `None` if
    /// `out` is too short.
    pub fn encode(&self, trailer_type: u64, endian: Endian, out: &mut [u8]) -> Option<usize> {
        let size = Self::size(self.sample_id.map(|_| trailer_type));
        let out = out.get_mut(..size)?;
        let header = Header { type_: types::LOST, misc: 0, size: size as u16 };
        out[..8].copy_from_slice(&header.to_bytes(endian));
        out[8..16].copy_from_slice(&endian.put_u64(self.id));
        out[16..24].copy_from_slice(&endian.put_u64(self.lost));
        if let Some(sid) = &self.sample_id {
            sid.encode(trailer_type, endian, &mut out[24..])?;
        }
        Some(size)
    }
}
