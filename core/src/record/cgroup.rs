//! `PERF_RECORD_CGROUP` (19): a cgroup was created (`perf_event_cgroup_output`).

use core::ffi::CStr;

use super::body::{common_fields, Body};
use super::cursor::{cstr_size, Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId};

/// `{u64 id; char path[]}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cgroup<'a> {
    /// `header.misc`.
    pub misc: u16,
    /// The cgroup id (what SAMPLE's CGROUP field carries).
    pub id: u64,
    /// Path from the cgroup root.
    pub path: &'a CStr,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Cgroup<'a> {
    const NAME: &'static str = "PERF_RECORD_CGROUP";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(Cgroup { misc, id: r.u64("cgroup.id")?, path: r.cstr_rest("cgroup.path")?, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8 + cstr_size(self.path))
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.id);
        w.cstr(self.path);
    }
    common_fields!();
}
