//! Context switches: `PERF_RECORD_SWITCH` (14) and `PERF_RECORD_SWITCH_CPU_WIDE` (15)
//! (`perf_event_switch_output`).

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{misc, DecodeContext, DecodeError, EncodeError, SampleId};

/// `PERF_RECORD_SWITCH`: no body, only `sample_id` (per-task events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Switch {
    /// `header.misc`: `SWITCH_OUT`, and `SWITCH_OUT_PREEMPT` if the task was still runnable.
    pub misc: u16,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

/// `PERF_RECORD_SWITCH_CPU_WIDE`: `{u32 next_prev_pid, next_prev_tid}` + `sample_id`
/// (CPU-wide events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SwitchCpuWide {
    /// `header.misc`: as for [`Switch`].
    pub misc: u16,
    /// Switching out: the next task's pid; switching in: the previous one's.
    pub next_prev_pid: u32,
    /// The same for the thread id.
    pub next_prev_tid: u32,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl Switch {
    /// `PERF_RECORD_MISC_SWITCH_OUT`: switching out (else in).
    pub fn is_out(&self) -> bool {
        self.misc & misc::SWITCH_OUT != 0
    }
    /// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`: switched out while still runnable.
    pub fn is_preempt(&self) -> bool {
        self.misc & misc::SWITCH_OUT_PREEMPT != 0
    }
}

impl SwitchCpuWide {
    /// `PERF_RECORD_MISC_SWITCH_OUT`: switching out (else in).
    pub fn is_out(&self) -> bool {
        self.misc & misc::SWITCH_OUT != 0
    }
    /// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`: switched out while still runnable.
    pub fn is_preempt(&self) -> bool {
        self.misc & misc::SWITCH_OUT_PREEMPT != 0
    }
}

impl<'a> Body<'a> for Switch {
    const NAME: &'static str = "PERF_RECORD_SWITCH";
    fn decode(
        _: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(Switch { misc, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(0)
    }
    fn encode_body(&self, _: &mut Writer<'_>) {}
    common_fields!();
}

impl<'a> Body<'a> for SwitchCpuWide {
    const NAME: &'static str = "PERF_RECORD_SWITCH_CPU_WIDE";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(SwitchCpuWide {
            misc,
            next_prev_pid: r.u32("switch_cpu_wide.next_prev_pid")?,
            next_prev_tid: r.u32("switch_cpu_wide.next_prev_tid")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(8)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.next_prev_pid);
        w.u32(self.next_prev_tid);
    }
    common_fields!();
}
