//! The records the simulated kernel writes, and how the oracle recognises them.
//!
//! Every event uses `sample_type = IDENTIFIER | IP | TID | TIME | CPU | PERIOD` (plus `RAW` for
//! the tracepoint), with `sample_id_all`, so perf can attribute records in a multi-event file.
//! A sample's `ip` carries its unique sequence number, so the oracle can rebuild every byte a
//! record must have and detect any torn or misplaced record.

use perfring::record::{misc, sample_type as st, types, Endian, Header, SampleId};

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
        out.extend_from_slice(&e.pair_u32(self.pid, self.tid));
        out.extend_from_slice(&e.put_u64(self.time));
        out.extend_from_slice(&e.pair_u32(self.cpu, 0));
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
    let sid = SampleId { pid, tid, time, cpu, identifier: event.id(), ..SampleId::default() };
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
