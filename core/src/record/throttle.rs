//! `PERF_RECORD_THROTTLE` (5) and `PERF_RECORD_UNTHROTTLE` (6) (`perf_log_throttle`).

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId};

/// `{u64 time, u64 id, u64 stream_id}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Throttle {
    /// `header.misc`.
    pub misc: u16,
    /// Timestamp.
    pub time: u64,
    /// The event's primary id.
    pub id: u64,
    /// The event's own id (`event->id`).
    pub stream_id: u64,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Throttle {
    const NAME: &'static str = "PERF_RECORD_(UN)THROTTLE";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(Throttle {
            misc,
            time: r.u64("throttle.time")?,
            id: r.u64("throttle.id")?,
            stream_id: r.u64("throttle.stream_id")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(24)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.time);
        w.u64(self.id);
        w.u64(self.stream_id);
    }
    common_fields!();
}
