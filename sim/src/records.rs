//! The records the simulated kernel writes, and how the oracle recognises them.
//!
//! Every event uses `sample_type = IDENTIFIER | IP | TID | TIME | CPU | PERIOD` (plus `RAW` for
//! the tracepoint), with `sample_id_all`, so perf can attribute records in a multi-event file.
//! A sample's `ip` carries its unique sequence number, so the oracle can rebuild every byte a
//! record must have and detect any torn or misplaced record.

use perfring::record::{misc, sample_type as st, types, Endian, Header, PidTid, SampleCpu, SampleId};

/// The simulated events. Their ids are the `id`/`IDENTIFIER` values in records and perf.data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// `cpu-clock`: sampled from the timer interrupt (hardirq context).
    CpuClock,
    /// A software event counted in task context (`page-faults`), sampled every `period`.
    PageFaults,
    /// A tracepoint with a raw payload (task or softirq context); written to perf.data as a
    /// `bpf-output` software event, which perf prints with its raw data.
    Tracepoint,
    /// A sample taken in NMI context (as a hardware PMU overflow would).
    Nmi,
}

impl EventKind {
    /// Every event, in id order.
    pub const ALL: [EventKind; 4] = [EventKind::CpuClock, EventKind::PageFaults, EventKind::Tracepoint, EventKind::Nmi];

    /// The event id.
    pub fn id(self) -> u64 {
        match self {
            EventKind::CpuClock => 1,
            EventKind::PageFaults => 2,
            EventKind::Tracepoint => 3,
            EventKind::Nmi => 4,
        }
    }

    /// The event for an id.
    pub fn from_id(id: u64) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|e| e.id() == id)
    }

    /// `attr.sample_type`.
    pub fn sample_type(self) -> u64 {
        let base = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CPU | st::PERIOD;
        if self == EventKind::Tracepoint {
            base | st::RAW
        } else {
            base
        }
    }

    /// `(attr.type, attr.config)` used in perf.data: software events.
    pub fn perf_type_config(self) -> (u32, u64) {
        match self {
            EventKind::CpuClock => (1, 0),    // PERF_COUNT_SW_CPU_CLOCK
            EventKind::PageFaults => (1, 2),  // PERF_COUNT_SW_PAGE_FAULTS
            EventKind::Tracepoint => (1, 10), // PERF_COUNT_SW_BPF_OUTPUT
            EventKind::Nmi => (1, 1),         // PERF_COUNT_SW_TASK_CLOCK
        }
    }

    /// A name for tables.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::CpuClock => "cpu-clock",
            EventKind::PageFaults => "page-faults",
            EventKind::Tracepoint => "tracepoint",
            EventKind::Nmi => "nmi-sample",
        }
    }
}

/// Base of the synthetic user-space addresses; `ip = IP_BASE + 4 * seq`.
pub const IP_BASE: u64 = 0x5555_0000_0000;

/// What a sample says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// The event.
    pub event: EventKind,
    /// Unique sequence number (in the ip).
    pub seq: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Time (ns).
    pub time: u64,
    /// CPU.
    pub cpu: u32,
    /// Period.
    pub period: u64,
}

impl Sample {
    /// Encoded size: header + id, ip, pid/tid, time, cpu/res, period (+ u32 raw size + 12 bytes).
    pub fn size(&self) -> usize {
        8 + 6 * 8 + if self.event == EventKind::Tracepoint { 16 } else { 0 }
    }

    /// The record's bytes, in the kernel's field order.
    pub fn encode(&self) -> Vec<u8> {
        let e = Endian::NATIVE;
        let mut out = Vec::with_capacity(self.size());
        let h = Header { type_: types::SAMPLE, misc: misc::USER, size: self.size() as u16 };
        out.extend_from_slice(&h.to_bytes(e));
        out.extend_from_slice(&e.put_u64(self.event.id()));
        out.extend_from_slice(&e.put_u64(IP_BASE + 4 * self.seq));
        out.extend_from_slice(&e.put_u32(self.pid));
        out.extend_from_slice(&e.put_u32(self.tid));
        out.extend_from_slice(&e.put_u64(self.time));
        out.extend_from_slice(&e.put_u32(self.cpu));
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&e.put_u64(self.period));
        if self.event == EventKind::Tracepoint {
            // RAW: u32 size (12, so that size + 4 is a multiple of 8), then 12 bytes: the seq and
            // 4 bytes of zero padding.
            out.extend_from_slice(&e.put_u32(12));
            out.extend_from_slice(&e.put_u64(self.seq));
            out.extend_from_slice(&[0; 4]);
        }
        out
    }

    /// Decode a SAMPLE written by [`Sample::encode`]; `None` if it is not one.
    pub fn decode(bytes: &[u8]) -> Option<Sample> {
        let e = Endian::NATIVE;
        let u64_at = |o: usize| Some(e.u64(bytes.get(o..o + 8)?.try_into().ok()?));
        let u32_at = |o: usize| Some(e.u32(bytes.get(o..o + 4)?.try_into().ok()?));
        let h = Header::parse(bytes, e)?;
        if h.type_ != types::SAMPLE {
            return None;
        }
        let event = EventKind::from_id(u64_at(8)?)?;
        let ip = u64_at(16)?;
        let seq = ip.checked_sub(IP_BASE)? / 4;
        Some(Sample {
            event,
            seq,
            pid: u32_at(24)?,
            tid: u32_at(28)?,
            time: u64_at(32)?,
            cpu: u32_at(40)?,
            period: u64_at(48)?,
        })
    }
}

/// The `sample_id` trailer every non-sample record of a writer carries.
pub fn trailer(event: EventKind, pid: u32, tid: u32, time: u64, cpu: u32) -> (u64, SampleId) {
    let sid = SampleId {
        tid: Some(PidTid { pid, tid }),
        time: Some(time),
        cpu: Some(SampleCpu { cpu, res: 0 }),
        identifier: Some(event.id()),
        ..SampleId::default()
    };
    (event.sample_type() & st::SAMPLE_ID_BITS, sid)
}

/// `PERF_RECORD_THROTTLE` / `UNTHROTTLE`: `{time, id, stream_id}` + sample_id trailer.
pub fn throttle(unthrottle: bool, event: EventKind, pid: u32, tid: u32, time: u64, cpu: u32) -> Vec<u8> {
    let e = Endian::NATIVE;
    let (trailer_type, sid) = trailer(event, pid, tid, time, cpu);
    let size = 8 + 24 + SampleId::size(trailer_type);
    let type_ = if unthrottle { types::UNTHROTTLE } else { types::THROTTLE };
    let mut out = Header { type_, misc: 0, size: size as u16 }.to_bytes(e).to_vec();
    out.extend_from_slice(&e.put_u64(time));
    out.extend_from_slice(&e.put_u64(event.id()));
    out.extend_from_slice(&e.put_u64(event.id()));
    let mut t = vec![0u8; SampleId::size(trailer_type)];
    sid.encode(trailer_type, e, &mut t);
    out.extend_from_slice(&t);
    out
}

/// `PERF_RECORD_AUXTRACE` (perf.data only, type 71): how `perf record` writes AUX data out.
/// `header.size` is 48 and does **not** include the `size` bytes of AUX data that follow the
/// record in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxtraceRecord {
    /// Bytes of AUX data following the record (padded to 8).
    pub size: u64,
    /// Free-running AUX offset of the data.
    pub offset: u64,
    /// A reference (perf uses a timestamp or counter) tying the data to its AUX records.
    pub reference: u64,
    /// Index of the AUX mmap (the CPU in per-CPU mode).
    pub idx: u32,
    /// Thread id (per-thread mode), or -1.
    pub tid: u32,
    /// CPU, or -1.
    pub cpu: u32,
}

impl AuxtraceRecord {
    /// The 48-byte record.
    pub fn encode(&self, endian: Endian) -> [u8; 48] {
        let mut out = [0u8; 48];
        out[..8].copy_from_slice(&Header { type_: types::AUXTRACE, misc: 0, size: 48 }.to_bytes(endian));
        out[8..16].copy_from_slice(&endian.put_u64(self.size));
        out[16..24].copy_from_slice(&endian.put_u64(self.offset));
        out[24..32].copy_from_slice(&endian.put_u64(self.reference));
        out[32..36].copy_from_slice(&endian.put_u32(self.idx));
        out[36..40].copy_from_slice(&endian.put_u32(self.tid));
        out[40..44].copy_from_slice(&endian.put_u32(self.cpu));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auxtrace_record_is_48_bytes_and_excludes_its_data() {
        let r = AuxtraceRecord { size: 64, offset: 128, reference: 7, idx: 2, tid: 1000, cpu: 2 };
        let b = r.encode(Endian::NATIVE);
        let h = Header::parse(&b, Endian::NATIVE).unwrap();
        assert_eq!((h.type_, h.size), (types::AUXTRACE, 48));
        assert_eq!(u64::from_ne_bytes(b[8..16].try_into().unwrap()), 64);
        assert_eq!(u64::from_ne_bytes(b[16..24].try_into().unwrap()), 128);
        assert_eq!(u32::from_ne_bytes(b[32..36].try_into().unwrap()), 2);
        assert_eq!(u32::from_ne_bytes(b[40..44].try_into().unwrap()), 2);
    }
}
