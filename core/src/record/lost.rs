//! `PERF_RECORD_LOST` (2), the record the producer itself writes to report drops, and
//! `PERF_RECORD_LOST_SAMPLES` (13), which PMU drivers write (kernel/events/ring_buffer.c).

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, Endian, SampleId};

/// Size of a `PERF_RECORD_LOST` without its `sample_id` trailer: header, `id`, `lost`.
pub const LOST_BODY_SIZE: usize = 24;

/// `PERF_RECORD_LOST`: `{header; u64 id; u64 lost; struct sample_id}`.
///
/// The kernel writes one at the start of the first successful reservation after drops
/// (`__perf_output_begin`). `id` is the id of the event writing *now* (not necessarily the one
/// whose records were lost), and `lost` may be 0 when a nested writer took the pending count
/// first. `misc` is always 0 here; [`Lost`] is the general form.
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
    /// `out` is too short. The same bytes as [`Record::encode`](super::Record::encode) of a
    /// [`Record::Lost`](super::Record::Lost) (a test
    /// checks it), through the LOST body's codec alone.
    pub fn encode(&self, trailer_type: u64, endian: Endian, out: &mut [u8]) -> Option<usize> {
        let ctx = DecodeContext {
            sample_type: trailer_type,
            sample_id_all: self.sample_id.is_some(),
            ..DecodeContext::new(endian)
        };
        super::encode::encode_body(super::types::LOST, &Lost::from(*self), &ctx, out).ok()
    }
}

/// `PERF_RECORD_LOST` as decoded: [`LostRecord`] plus `misc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Lost {
    /// `header.misc` (the kernel writes 0).
    pub misc: u16,
    /// `id` of the event that wrote this record.
    pub id: u64,
    /// Number of records dropped since the previous LOST record (may be 0).
    pub lost: u64,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl From<LostRecord> for Lost {
    fn from(r: LostRecord) -> Lost {
        Lost { misc: 0, id: r.id, lost: r.lost, sample_id: r.sample_id }
    }
}

impl<'a> Body<'a> for Lost {
    const NAME: &'static str = "PERF_RECORD_LOST";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(Lost { misc, id: r.u64("lost.id")?, lost: r.u64("lost.lost")?, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(16)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.id);
        w.u64(self.lost);
    }
    common_fields!();
}

/// `PERF_RECORD_LOST_SAMPLES`: `{u64 lost}` + `sample_id` (`perf_log_lost_samples`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct LostSamples {
    /// `header.misc`.
    pub misc: u16,
    /// Samples the hardware dropped.
    pub lost: u64,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for LostSamples {
    const NAME: &'static str = "PERF_RECORD_LOST_SAMPLES";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(LostSamples { misc, lost: r.u64("lost_samples.lost")?, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.lost);
    }
    common_fields!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{decode, sample_type as st, Record};

    #[test]
    fn lost_record_encodes_as_the_general_encoder_and_decodes_back() {
        let sid = SampleId { pid: 1, tid: 2, time: 3, cpu: 4, identifier: 5, ..SampleId::default() };
        let t = st::TID | st::TIME | st::CPU | st::IDENTIFIER;
        for endian in [Endian::Little, Endian::Big] {
            for (trailer, sample_id) in [(t, Some(sid)), (0, None)] {
                let rec = LostRecord { id: 42, lost: 7, sample_id };
                let mut buf = [0u8; 64];
                let n = rec.encode(trailer, endian, &mut buf).unwrap();
                assert_eq!(n, LostRecord::size(sample_id.map(|_| trailer)));
                assert!(rec.encode(trailer, endian, &mut buf[..n - 1]).is_none());
                let mut general = [0u8; 64];
                let ctx_w = DecodeContext {
                    sample_type: trailer,
                    sample_id_all: sample_id.is_some(),
                    ..DecodeContext::new(endian)
                };
                assert_eq!(Record::Lost(Lost::from(rec)).encode(&ctx_w, &mut general), Ok(n));
                assert_eq!(buf[..n], general[..n], "same bytes as the general encoder");
                let ctx = DecodeContext {
                    sample_type: trailer,
                    sample_id_all: sample_id.is_some(),
                    ..DecodeContext::new(endian)
                };
                let expect = LostRecord { sample_id: sample_id.map(|s| s.masked(trailer)), ..rec };
                assert_eq!(decode(&buf[..n], &ctx), Ok(Record::Lost(Lost::from(expect))));
            }
        }
    }
}
