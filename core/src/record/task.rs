//! Task records: `PERF_RECORD_COMM` (3), `PERF_RECORD_EXIT` (4), `PERF_RECORD_FORK` (7)
//! (`perf_event_comm_output`, `perf_event_task_output`).

use core::ffi::CStr;

use super::body::{common_fields, Body};
use super::cursor::{cstr_size, Reader, Writer};
use super::{misc, DecodeContext, DecodeError, EncodeError, SampleId};

/// `PERF_RECORD_COMM`: `{u32 pid, tid; char comm[]}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comm<'a> {
    /// `header.misc`: `COMM_EXEC` when the name changed on exec.
    pub misc: u16,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The new name (8 or 16 bytes on the wire with NUL and padding).
    pub comm: &'a CStr,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl Comm<'_> {
    /// `PERF_RECORD_MISC_COMM_EXEC`.
    pub fn is_exec(&self) -> bool {
        self.misc & misc::COMM_EXEC != 0
    }
}

impl<'a> Body<'a> for Comm<'a> {
    const NAME: &'static str = "PERF_RECORD_COMM";
    #[inline]
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let f = r.fixed::<8>(&[("comm.pid", 4), ("comm.tid", 4)])?;
        Ok(Comm { misc, pid: f.u32(0), tid: f.u32(4), comm: r.cstr_rest("comm.comm")?, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8 + cstr_size(self.comm))
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.tid);
        w.cstr(self.comm);
    }
    common_fields!();
}

/// `PERF_RECORD_FORK` and `PERF_RECORD_EXIT`: `{u32 pid, ppid, tid, ptid; u64 time}` +
/// `sample_id`. On FORK, `ppid`/`ptid` are the forking task's; on EXIT both are the parent's
/// pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Task {
    /// `header.misc`.
    pub misc: u16,
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Thread id.
    pub tid: u32,
    /// Parent thread id.
    pub ptid: u32,
    /// Timestamp.
    pub time: u64,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Task {
    const NAME: &'static str = "PERF_RECORD_FORK/EXIT";
    #[inline]
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let f =
            r.fixed::<24>(&[("task.pid", 4), ("task.ppid", 4), ("task.tid", 4), ("task.ptid", 4), ("task.time", 8)])?;
        Ok(Task { misc, pid: f.u32(0), ppid: f.u32(4), tid: f.u32(8), ptid: f.u32(12), time: f.u64(16), sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(24)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.ppid);
        w.u32(self.tid);
        w.u32(self.ptid);
        w.u64(self.time);
    }
    common_fields!();
}
