//! Callchains: the context markers of SAMPLE's CALLCHAIN field (uapi
//! `enum perf_callchain_context`) and `PERF_RECORD_CALLCHAIN_DEFERRED` (22).
//!
//! CALLCHAIN_DEFERRED is newest mainline (after the uapi this crate follows); it is decoded
//! here rather than returned raw, from the layout of kernel/events/core.c:perf_callchain:
//! `{u64 cookie; u64 nr; u64 ips[nr]}` + `sample_id`.

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, Entries, SampleId};

/// The context markers of a callchain (uapi `enum perf_callchain_context`) and the kernel's
/// depth limit.
pub mod callchain {
    /// `PERF_CONTEXT_HV`
    pub const CONTEXT_HV: u64 = (-32i64) as u64;
    /// `PERF_CONTEXT_KERNEL`
    pub const CONTEXT_KERNEL: u64 = (-128i64) as u64;
    /// `PERF_CONTEXT_USER`
    pub const CONTEXT_USER: u64 = (-512i64) as u64;
    /// `PERF_CONTEXT_USER_DEFERRED` (newest mainline): the user part follows in a
    /// CALLCHAIN_DEFERRED record.
    pub const CONTEXT_USER_DEFERRED: u64 = (-640i64) as u64;
    /// `PERF_CONTEXT_GUEST`
    pub const CONTEXT_GUEST: u64 = (-2048i64) as u64;
    /// `PERF_CONTEXT_GUEST_KERNEL`
    pub const CONTEXT_GUEST_KERNEL: u64 = (-2176i64) as u64;
    /// `PERF_CONTEXT_GUEST_USER`
    pub const CONTEXT_GUEST_USER: u64 = (-2560i64) as u64;
    /// `PERF_CONTEXT_MAX`: every entry at or above it is a marker, not an address.
    pub const CONTEXT_MAX: u64 = (-4095i64) as u64;
    /// `PERF_MAX_STACK_DEPTH`: the default maximum number of frames.
    pub const MAX_STACK_DEPTH: usize = 127;

    /// Whether a callchain entry is a context marker rather than an address.
    pub const fn is_context(entry: u64) -> bool {
        entry >= CONTEXT_MAX
    }
}

/// `PERF_RECORD_CALLCHAIN_DEFERRED`: the user part of callchains whose samples carried
/// [`CONTEXT_USER_DEFERRED`](callchain::CONTEXT_USER_DEFERRED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallchainDeferred<'a> {
    /// `header.misc` (the kernel writes `USER`).
    pub misc: u16,
    /// Matches the cookie in the samples it completes.
    pub cookie: u64,
    /// The ips.
    pub ips: Entries<'a, u64>,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for CallchainDeferred<'a> {
    const NAME: &'static str = "PERF_RECORD_CALLCHAIN_DEFERRED";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let cookie = r.u64("callchain_deferred.cookie")?;
        let nr = r.u64("callchain_deferred.nr")?;
        let ips = r.entries(nr, r.endian, "callchain_deferred.nr")?;
        Ok(CallchainDeferred { misc, cookie, ips, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        self.ips.len().checked_mul(8).and_then(|n| n.checked_add(16)).ok_or(EncodeError::TooLarge { size: usize::MAX })
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.cookie);
        w.u64(self.ips.len() as u64);
        w.u64s(&self.ips);
    }
    common_fields!();
}
