//! `PERF_RECORD_READ` (8): counter values of an inherited event whose task exited
//! (`perf_event_read_event`, with `inherit_stat`).

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, ReadValues, SampleId};

/// `{u32 pid, tid; read_format block}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRecord<'a> {
    /// `header.misc`.
    pub misc: u16,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The values, laid out by `read_format`.
    pub values: ReadValues<'a>,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for ReadRecord<'a> {
    const NAME: &'static str = "PERF_RECORD_READ";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        ctx: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(ReadRecord {
            misc,
            pid: r.u32("read.pid")?,
            tid: r.u32("read.tid")?,
            values: ReadValues::decode(r, ctx.read_format)?,
            sample_id,
        })
    }
    fn body_size(&self, ctx: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8 + self.values.size(ctx.read_format)?)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.tid);
        self.values.encode(w);
    }
    common_fields!();
}
