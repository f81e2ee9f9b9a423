//! AUX-area side-band records: `PERF_RECORD_AUX` (11), `PERF_RECORD_ITRACE_START` (12),
//! `PERF_RECORD_AUX_OUTPUT_HW_ID` (21).

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId};

/// `PERF_AUX_FLAG_*`: bits of [`Aux::flags`].
pub mod aux_flags {
    /// `PERF_AUX_FLAG_TRUNCATED`: the record was truncated to fit.
    pub const TRUNCATED: u64 = 0x01;
    /// `PERF_AUX_FLAG_OVERWRITE`: snapshot from overwrite mode.
    pub const OVERWRITE: u64 = 0x02;
    /// `PERF_AUX_FLAG_PARTIAL`: the record contains gaps.
    pub const PARTIAL: u64 = 0x04;
    /// `PERF_AUX_FLAG_COLLISION`: the sample collided with another.
    pub const COLLISION: u64 = 0x08;
    /// `PERF_AUX_FLAG_PMU_FORMAT_TYPE_MASK`: PMU-specific trace format.
    pub const PMU_FORMAT_TYPE_MASK: u64 = 0xff00;
}

/// `PERF_RECORD_AUX`: `{u64 aux_offset, aux_size, flags}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aux {
    /// `header.misc`.
    pub misc: u16,
    /// Where the chunk starts in the AUX area (overwrite mode: where it ends).
    pub aux_offset: u64,
    /// Bytes in the chunk.
    pub aux_size: u64,
    /// [`aux_flags`].
    pub flags: u64,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Aux {
    const NAME: &'static str = "PERF_RECORD_AUX";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(Aux {
            misc,
            aux_offset: r.u64("aux.aux_offset")?,
            aux_size: r.u64("aux.aux_size")?,
            flags: r.u64("aux.flags")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(24)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.aux_offset);
        w.u64(self.aux_size);
        w.u64(self.flags);
    }
    common_fields!();
}

/// `PERF_RECORD_ITRACE_START`: `{u32 pid, tid}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ItraceStart {
    /// `header.misc`.
    pub misc: u16,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for ItraceStart {
    const NAME: &'static str = "PERF_RECORD_ITRACE_START";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(ItraceStart { misc, pid: r.u32("itrace_start.pid")?, tid: r.u32("itrace_start.tid")?, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.tid);
    }
    common_fields!();
}

/// `PERF_RECORD_AUX_OUTPUT_HW_ID`: `{u64 hw_id}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AuxOutputHwId {
    /// `header.misc`.
    pub misc: u16,
    /// The PMU-specific hardware id of the AUX output.
    pub hw_id: u64,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for AuxOutputHwId {
    const NAME: &'static str = "PERF_RECORD_AUX_OUTPUT_HW_ID";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(AuxOutputHwId { misc, hw_id: r.u64("aux_output_hw_id.hw_id")?, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.hw_id);
    }
    common_fields!();
}
