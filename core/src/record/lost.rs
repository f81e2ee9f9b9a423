//! `PERF_RECORD_LOST` (2), the record the producer itself writes to report drops, and
//! `PERF_RECORD_LOST_SAMPLES` (13), which PMU drivers write (kernel/events/ring_buffer.c).

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId};

/// Size of a `PERF_RECORD_LOST` without its `sample_id` trailer: header, `id`, `lost`.
pub const LOST_BODY_SIZE: usize = 24;

/// `PERF_RECORD_LOST`: `{header; u64 id; u64 lost; struct sample_id}`.
///
/// The kernel writes one at the start of the first successful reservation after drops
/// (`__perf_output_begin`); so does [`Producer`](crate::producer::Producer). `id` is the id of
/// the event writing *now* (not necessarily the one whose records were lost), and `lost` may be
/// 0 when a nested writer took the pending count first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    use crate::record::decode::decode;
    use crate::record::encode::encode_body;
    use crate::record::layout::SampleLayout;
    use crate::record::{sample_type as st, types, Endian, PidTid, Record, SampleCpu};

    /// The producer's LOST encoder (the body's codec alone) writes the bytes the general
    /// encoder writes, and they decode back.
    #[test]
    fn lost_record_encodes_as_the_general_encoder_and_decodes_back() {
        let sid = SampleId {
            tid: Some(PidTid { pid: 1, tid: 2 }),
            time: Some(3),
            cpu: Some(SampleCpu { cpu: 4, res: 0 }),
            identifier: Some(5),
            ..SampleId::default()
        };
        let t = st::TID | st::TIME | st::CPU | st::IDENTIFIER;
        for endian in [Endian::Little, Endian::Big] {
            for (trailer, sample_id) in [(t, Some(sid)), (0, None)] {
                let rec = Lost { misc: 0, id: 42, lost: 7, sample_id };
                let ctx = DecodeContext {
                    sample_type: trailer,
                    sample_id_all: sample_id.is_some(),
                    ..DecodeContext::new(endian)
                };
                let mut buf = [0u8; 64];
                let n = encode_body(types::LOST, &rec, &ctx, &mut buf).unwrap();
                assert_eq!(n, LOST_BODY_SIZE + sample_id.map_or(0, |_| SampleId::size(trailer)));
                assert!(encode_body(types::LOST, &rec, &ctx, &mut buf[..n - 1]).is_err());
                let mut general = [0u8; 64];
                assert_eq!(Record::Lost(rec).encode_in(&ctx, &mut general), Ok(n));
                assert_eq!(buf[..n], general[..n], "same bytes as the general encoder");
                let expect = Lost { sample_id: sample_id.map(|s| s.masked(trailer)), ..rec };
                assert_eq!(decode(&buf[..n], &SampleLayout::new(&ctx)), Ok(Record::Lost(expect)));
            }
        }
    }
}
