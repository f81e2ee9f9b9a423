//! The simulated AUX tracer's format: Intel BTS (Branch Trace Store), as perf 6.1 decodes it
//! without the hardware (tools/perf/util/intel-bts.c; what `perf record -e intel_bts//`
//! writes: tools/perf/arch/x86/util/intel-bts.c).
//!
//! * The AUX area holds 24-byte records `{u64 from; u64 to; u64 misc}`, little-endian; perf
//!   reads `misc` only for bit 4 ("predicted"). The simulated tracer also puts the record's
//!   index in its stream (its AUX position / 24) in bits 8..63, as the simulated samples carry
//!   their sequence number in `ip`: the oracle checks every record by it, and no two records are
//!   equal, which perf's snapshot overlap search relies on (below).
//! * The tracer's event has `attr.type` = the PMU type named in the file's
//!   PERF_RECORD_AUXTRACE_INFO ([`auxtrace_info`]), and ids in the file; perf synthesizes its
//!   `branches` samples only if there is such an event.
//! * perf decodes a buffer per AUXTRACE queue; the samples take the queue's tid, so the tracer
//!   traces one thread (perf record: "intel_bts does not support per-cpu recording").
//!
//! Two behaviours of perf's decoder shape what the simulated consumer writes:
//!
//! * **The last record of every buffer is dropped.** `intel_bts_process_buffer` loops
//!   `for (; sz > bsz; ...)` with `bsz` = 24, so a buffer of exactly N records yields N - 1
//!   branches (a bug in perf: the loop wants `>=`). Every AUXTRACE buffer the simulation
//!   writes therefore ends with one all-zero record after its last branch ([`DECODER_PAD`],
//!   counted in the AUXTRACE `size`): perf drops that one, and a fixed perf skips it (it skips
//!   records whose `from` and `to` are both 0). `perf report -D` lists it as `0 -> 0 miss`.
//! * **Snapshot buffers are de-overlapped by memcmp.** In snapshot mode perf drops the front of
//!   each buffer that equals a tail of the previous one (`intel_bts_find_overlap`, stepping 24
//!   bytes). The simulated consumer writes only what is new since its previous snapshot
//!   (`AuxConsumer::snapshot`), so consecutive buffers never overlap, and the search must find
//!   nothing: it cannot, because no two records are equal (the index in `misc`) and a buffer's
//!   zero record could match only a record with a zero `from`, which no branch has. (A real trace of a loop
//!   repeats records, and perf can cut a buffer that merely looks like the previous one's tail.)

use perfring::record::{attr_flags, Attr, SampleId};

use crate::program::Branch;
use crate::records::EventKind;

/// Bytes of one BTS record.
pub const RECORD_SIZE: usize = 24;

/// Zero bytes after the last record of each AUXTRACE buffer (one all-zero record), so that
/// perf's decoder reads the last branch (see the module docs).
pub const DECODER_PAD: usize = RECORD_SIZE;

/// `PERF_AUXTRACE_INTEL_BTS` (tools/perf/util/auxtrace.h `enum auxtrace_type`).
pub const AUXTRACE_INTEL_BTS: u32 = 2;

/// The simulated `intel_bts` PMU's type: the kernel gives a PMU a dynamic type at boot, and
/// perf matches the event by the AUXTRACE_INFO's copy of it, never against this machine's PMUs.
pub const PMU_TYPE: u32 = 64;

/// The id of the tracer's event (the simulated events are 1..=4).
pub const EVENT_ID: u64 = 5;

/// The `misc` bit BTS sets when the branch was predicted (perf prints "pred"/"miss" by it).
pub const MISC_PREDICTED: u64 = 0x10;

/// The simulated TSC: 2 GHz, counting from time 0, so `tsc = 2 * ns`. Written into the
/// AUXTRACE_INFO as `time_shift` 1, `time_mult` 1, `time_zero` 0 (perf's
/// `tsc_to_perf_time`: `ns = (tsc >> shift) * mult + ((tsc & mask) * mult >> shift)`), and
/// used for each AUXTRACE's `reference`, which perf compares with `perf_time_to_tsc` of the
/// events' times to decide when to decode the buffer.
pub const TIME_SHIFT: u64 = 1;
/// See [`TIME_SHIFT`].
pub const TIME_MULT: u64 = 1;
/// See [`TIME_SHIFT`].
pub const TIME_ZERO: u64 = 0;

/// The simulated TSC at `ns` (perf's `perf_time_to_tsc` with the conversion above).
pub fn tsc(ns: u64) -> u64 {
    perf_time_to_tsc(ns, TIME_ZERO, TIME_MULT, TIME_SHIFT)
}

/// tools/perf/util/tsc.c:perf_time_to_tsc.
fn perf_time_to_tsc(ns: u64, zero: u64, mult: u64, shift: u64) -> u64 {
    let t = ns.wrapping_sub(zero);
    ((t / mult) << shift) + ((t % mult) << shift) / mult
}

/// The BTS record of `branch`, the `index`-th record of its buffer's stream.
pub fn record(branch: &Branch, index: u64) -> [u8; RECORD_SIZE] {
    let misc = index << 8 | if branch.predicted { MISC_PREDICTED } else { 0 };
    let mut r = [0u8; RECORD_SIZE];
    r[..8].copy_from_slice(&branch.from.to_le_bytes());
    r[8..16].copy_from_slice(&branch.to.to_le_bytes());
    r[16..].copy_from_slice(&misc.to_le_bytes());
    r
}

/// `(from, to)` of a record.
pub fn from_to(r: &[u8]) -> Option<(u64, u64)> {
    let word = |o: usize| Some(u64::from_le_bytes(r.get(o..o + 8)?.try_into().ok()?));
    Some((word(0)?, word(8)?))
}

/// The tracer's event as `perf record -e intel_bts//u` opens it (user space only, period 1),
/// with the simulated events' sample layout (perf needs the id at the same place in every
/// event of a file).
pub fn attr() -> Attr {
    Attr {
        type_: PMU_TYPE,
        size: Attr::SIZE_VER7,
        config: 0,
        sample_period: 1,
        sample_type: EventKind::CpuClock.sample_type(),
        flags: attr_flags::SAMPLE_ID_ALL | attr_flags::EXCLUDE_KERNEL | attr_flags::EXCLUDE_HV,
        ..Attr::default()
    }
}

/// The `sample_id` trailer of the tracer's records (its PERF_RECORD_AUX).
pub fn trailer(pid: u32, tid: u32, time: u64, cpu: u32) -> (u64, SampleId) {
    let (bits, sid) = crate::records::trailer(EventKind::CpuClock, pid, tid, time, cpu);
    (bits, SampleId { identifier: Some(EVENT_ID), ..sid })
}

/// PERF_RECORD_AUXTRACE_INFO (70) for BTS: `{header; u32 type; u32 reserved; u64 priv[6]}`,
/// the private words in `enum` order of tools/perf/util/intel-bts.h: PMU type, time shift,
/// time multiplier, time zero, `cap_user_time_zero`, snapshot mode.
pub fn auxtrace_info(snapshot: bool) -> Vec<u8> {
    let e = perfring::record::Endian::NATIVE;
    let priv_ = [u64::from(PMU_TYPE), TIME_SHIFT, TIME_MULT, TIME_ZERO, 1, u64::from(snapshot)];
    let size = 16 + 8 * priv_.len();
    let header = perfring::record::Header { type_: perfring::record::types::AUXTRACE_INFO, misc: 0, size: size as u16 };
    let mut out = header.to_bytes(e).to_vec();
    out.extend_from_slice(&e.put_u32(AUXTRACE_INTEL_BTS));
    out.extend_from_slice(&[0; 4]);
    for p in priv_ {
        out.extend_from_slice(&e.put_u64(p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::BranchKind;

    #[test]
    fn the_tsc_runs_at_twice_the_nanoseconds_and_records_round_trip() {
        assert_eq!(tsc(1_000), 2_000);
        let b = Branch { from: 0x4000_0000_1005, to: 0x4000_0000_1030, kind: BranchKind::Call, predicted: false };
        let r = record(&b, 3);
        assert_eq!(from_to(&r), Some((b.from, b.to)));
        assert_eq!(u64::from_le_bytes(r[16..].try_into().unwrap()), 3 << 8);
        assert_eq!(auxtrace_info(true).len(), 64);
    }
}
