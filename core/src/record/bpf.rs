//! Kernel symbols and BPF programs: `PERF_RECORD_KSYMBOL` (17) and `PERF_RECORD_BPF_EVENT` (18)
//! (`perf_event_ksymbol_output`, `perf_event_bpf_output`).

use core::ffi::CStr;

use super::body::{common_fields, Body};
use super::cursor::{cstr_size, Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId};

/// `PERF_RECORD_KSYMBOL_TYPE_BPF`
pub const KSYMBOL_TYPE_BPF: u16 = 1;
/// `PERF_RECORD_KSYMBOL_TYPE_OOL`: out-of-line code (trampolines, …).
pub const KSYMBOL_TYPE_OOL: u16 = 2;
/// `PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER`
pub const KSYMBOL_FLAGS_UNREGISTER: u16 = 1 << 0;
/// `PERF_BPF_EVENT_PROG_LOAD`
pub const BPF_EVENT_PROG_LOAD: u16 = 1;
/// `PERF_BPF_EVENT_PROG_UNLOAD`
pub const BPF_EVENT_PROG_UNLOAD: u16 = 2;
/// `BPF_TAG_SIZE`
pub const BPF_TAG_SIZE: usize = 8;

/// `PERF_RECORD_KSYMBOL`: `{u64 addr; u32 len; u16 ksym_type; u16 flags; char name[]}` +
/// `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ksymbol<'a> {
    /// `header.misc`.
    pub misc: u16,
    /// Start address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u32,
    /// `PERF_RECORD_KSYMBOL_TYPE_*`.
    pub ksym_type: u16,
    /// `PERF_RECORD_KSYMBOL_FLAGS_*`.
    pub flags: u16,
    /// Symbol name.
    pub name: &'a CStr,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Ksymbol<'a> {
    const NAME: &'static str = "PERF_RECORD_KSYMBOL";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(Ksymbol {
            misc,
            addr: r.u64("ksymbol.addr")?,
            len: r.u32("ksymbol.len")?,
            ksym_type: r.u16("ksymbol.ksym_type")?,
            flags: r.u16("ksymbol.flags")?,
            name: r.cstr_rest("ksymbol.name")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(16 + cstr_size(self.name))
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.addr);
        w.u32(self.len);
        w.u16(self.ksym_type);
        w.u16(self.flags);
        w.cstr(self.name);
    }
    common_fields!();
}

/// `PERF_RECORD_BPF_EVENT`: `{u16 type; u16 flags; u32 id; u8 tag[8]}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BpfEvent {
    /// `header.misc`.
    pub misc: u16,
    /// `PERF_BPF_EVENT_*`.
    pub event_type: u16,
    /// Flags (none defined).
    pub flags: u16,
    /// The program id.
    pub id: u32,
    /// The program tag.
    pub tag: [u8; BPF_TAG_SIZE],
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for BpfEvent {
    const NAME: &'static str = "PERF_RECORD_BPF_EVENT";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        Ok(BpfEvent {
            misc,
            event_type: r.u16("bpf_event.type")?,
            flags: r.u16("bpf_event.flags")?,
            id: r.u32("bpf_event.id")?,
            tag: r.bytes("bpf_event.tag")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(16)
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u16(self.event_type);
        w.u16(self.flags);
        w.u32(self.id);
        w.put(&self.tag);
    }
    common_fields!();
}
