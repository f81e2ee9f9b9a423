//! perf's own record types (≥ 64), decoded into typed values ([`PerfRecord`]); layouts from
//! `tools/lib/perf/include/perf/event.h`. Every field is bounds-checked against the record.

use perfring::record::{types, Attr, Endian};

use crate::cursor::{Cur, Site};
use crate::PerfDataError;

/// One entry of ID_INDEX: where a sample id was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdIndexEntry {
    /// The sample id.
    pub id: u64,
    /// Index of the event.
    pub idx: u64,
    /// CPU.
    pub cpu: u64,
    /// Thread.
    pub tid: u64,
}

/// A CPU map (`perf_record_cpu_map_data`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuMap<'a> {
    /// `PERF_CPU_MAP__CPUS`: a list of CPUs.
    Cpus(Vec<u16>),
    /// `PERF_CPU_MAP__RANGE_CPUS`: `start..=end`, and whether the "any CPU" (-1) is in.
    Range {
        /// Whether -1 is in the map.
        any_cpu: bool,
        /// First CPU.
        start: u16,
        /// Last CPU.
        end: u16,
    },
    /// `PERF_CPU_MAP__MASK` or another type: its type and raw bytes.
    Other {
        /// The map's `type`.
        type_: u16,
        /// Bytes after `type`.
        bytes: &'a [u8],
    },
}

/// A perf-only record, typed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PerfRecord<'a> {
    /// HEADER_ATTR (64): an event's attr and ids (pipe mode).
    HeaderAttr {
        /// The attr.
        attr: Attr,
        /// Its ids.
        ids: Vec<u64>,
    },
    /// HEADER_EVENT_TYPE (65, deprecated): an event id and its name.
    EventType {
        /// `event_id`.
        event_id: u64,
        /// The name (up to its NUL).
        name: &'a [u8],
    },
    /// HEADER_TRACING_DATA (66): the tracing data that follows the record.
    TracingData {
        /// The data (`size` bytes).
        data: &'a [u8],
    },
    /// HEADER_BUILD_ID (67): `{pid; build_id; filename}`, raw after the header.
    BuildId {
        /// Bytes after the header.
        body: &'a [u8],
    },
    /// FINISHED_ROUND (68).
    FinishedRound,
    /// ID_INDEX (69).
    IdIndex(Vec<IdIndexEntry>),
    /// AUXTRACE_INFO (70): `{u32 type; u32 reserved; u64 priv[]}`.
    AuxtraceInfo {
        /// AUX area type.
        type_: u32,
        /// The driver's private words, raw.
        private: &'a [u8],
    },
    /// AUXTRACE (71) and the AUX data that follows it.
    Auxtrace {
        /// Bytes of data.
        size: u64,
        /// Offset in the AUX area.
        offset: u64,
        /// `reference`.
        reference: u64,
        /// Index of the AUX buffer.
        idx: u32,
        /// Thread.
        tid: u32,
        /// CPU.
        cpu: u32,
        /// The data.
        data: &'a [u8],
    },
    /// AUXTRACE_ERROR (72), raw after the header.
    AuxtraceError {
        /// Bytes after the header.
        body: &'a [u8],
    },
    /// THREAD_MAP (73): `(pid, comm)` pairs.
    ThreadMap(Vec<(u64, &'a [u8])>),
    /// CPU_MAP (74).
    CpuMap(CpuMap<'a>),
    /// STAT_CONFIG (75): `(tag, value)` pairs.
    StatConfig(Vec<(u64, u64)>),
    /// STAT (76): one counter reading.
    Stat {
        /// Sample id of the counter.
        id: u64,
        /// CPU.
        cpu: u32,
        /// Thread index.
        thread: u32,
        /// Value.
        val: u64,
        /// Time enabled.
        ena: u64,
        /// Time running.
        run: u64,
    },
    /// STAT_ROUND (77).
    StatRound {
        /// `type`.
        type_: u64,
        /// `time`.
        time: u64,
    },
    /// EVENT_UPDATE (78): `{u64 type; u64 id; payload}` (type 1 unit, 2 scale, 3 name, 4 cpus).
    EventUpdate {
        /// `type`.
        type_: u64,
        /// The event's id.
        id: u64,
        /// The payload, raw (a string, a double or a CPU map).
        payload: &'a [u8],
    },
    /// TIME_CONV (79): the perf clock ↔ TSC conversion.
    TimeConv {
        /// `time_shift`.
        time_shift: u64,
        /// `time_mult`.
        time_mult: u64,
        /// `time_zero`.
        time_zero: u64,
        /// `time_cycles` (0 in the older, 32-byte record).
        time_cycles: u64,
        /// `time_mask` (0 in the older record).
        time_mask: u64,
        /// `cap_user_time_zero`.
        cap_user_time_zero: bool,
        /// `cap_user_time_short`.
        cap_user_time_short: bool,
    },
    /// HEADER_FEATURE (80): a feature section (pipe mode).
    HeaderFeature {
        /// Feature bit.
        feature: u64,
        /// Its payload.
        payload: &'a [u8],
    },
    /// COMPRESSED (81) / COMPRESSED2 (83): the compressed payload.
    Compressed {
        /// zstd bytes.
        data: &'a [u8],
    },
    /// FINISHED_INIT (82).
    FinishedInit,
    /// Another type ≥ 64: raw bytes after the header.
    Other {
        /// `header.type`.
        type_: u32,
        /// Bytes after the header.
        body: &'a [u8],
    },
}

impl<'a> PerfRecord<'a> {
    /// Decode the record `bytes` (header included; `trailing` is the data after an AUXTRACE
    /// or TRACING_DATA record) at file offset `offset`. `Ok(None)` for kernel types (< 64).
    pub fn parse(
        bytes: &'a [u8],
        trailing: &'a [u8],
        endian: Endian,
        offset: u64,
    ) -> Result<Option<Self>, PerfDataError> {
        let Some(header) = perfring::record::Header::parse(bytes, endian) else {
            return Err(PerfDataError::BadPerfRecord { type_: 0, offset, field: "header" });
        };
        let t = header.type_;
        if t < types::HEADER_ATTR {
            return Ok(None);
        }
        let mut c = Cur::new(bytes, 8, endian, Site::Record { type_: t, offset });
        let r = match t {
            types::HEADER_ATTR => header_attr(bytes, &mut c, endian, offset)?,
            types::HEADER_EVENT_TYPE => {
                let event_id = c.u64("event_id")?;
                let name = c.rest();
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                PerfRecord::EventType { event_id, name: &name[..end] }
            }
            types::HEADER_TRACING_DATA => PerfRecord::TracingData { data: trailing },
            types::HEADER_BUILD_ID => PerfRecord::BuildId { body: c.rest() },
            types::FINISHED_ROUND => PerfRecord::FinishedRound,
            types::ID_INDEX => PerfRecord::IdIndex(id_index(&mut c)?),
            types::AUXTRACE_INFO => {
                let type_ = c.u32("type")?;
                c.u32("reserved")?;
                PerfRecord::AuxtraceInfo { type_, private: c.rest() }
            }
            types::AUXTRACE => PerfRecord::Auxtrace {
                size: c.u64("size")?,
                offset: c.u64("offset")?,
                reference: c.u64("reference")?,
                idx: c.u32("idx")?,
                tid: c.u32("tid")?,
                cpu: c.u32("cpu")?,
                data: trailing,
            },
            types::AUXTRACE_ERROR => PerfRecord::AuxtraceError { body: c.rest() },
            types::THREAD_MAP => PerfRecord::ThreadMap(thread_map(&mut c)?),
            types::CPU_MAP => PerfRecord::CpuMap(cpu_map(&mut c)?),
            types::STAT_CONFIG => {
                let n = c.count_u64(16, "stat_config.nr")?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push((c.u64("tag")?, c.u64("val")?));
                }
                PerfRecord::StatConfig(v)
            }
            types::STAT => PerfRecord::Stat {
                id: c.u64("id")?,
                cpu: c.u32("cpu")?,
                thread: c.u32("thread")?,
                val: c.u64("val")?,
                ena: c.u64("ena")?,
                run: c.u64("run")?,
            },
            types::STAT_ROUND => PerfRecord::StatRound { type_: c.u64("type")?, time: c.u64("time")? },
            types::EVENT_UPDATE => {
                PerfRecord::EventUpdate { type_: c.u64("type")?, id: c.u64("id")?, payload: c.rest() }
            }
            types::TIME_CONV => time_conv(&mut c, bytes.len())?,
            types::HEADER_FEATURE => PerfRecord::HeaderFeature { feature: c.u64("feat_id")?, payload: c.rest() },
            types::COMPRESSED => PerfRecord::Compressed { data: c.rest() },
            types::COMPRESSED2 => {
                let n = c.u64("data_size")?;
                let n = usize::try_from(n).map_err(|_| PerfDataError::BadPerfRecord {
                    type_: t,
                    offset,
                    field: "data_size",
                })?;
                PerfRecord::Compressed { data: c.bytes(n, "data_size")? }
            }
            types::FINISHED_INIT => PerfRecord::FinishedInit,
            _ => PerfRecord::Other { type_: t, body: c.rest() },
        };
        Ok(Some(r))
    }
}

/// HEADER_ATTR: `{header; perf_event_attr (attr.size bytes); u64 ids[]}`.
fn header_attr<'a>(
    bytes: &'a [u8],
    c: &mut Cur<'a>,
    endian: Endian,
    offset: u64,
) -> Result<PerfRecord<'a>, PerfDataError> {
    let attr = Attr::from_bytes(&bytes[8..], endian).map_err(|_| PerfDataError::BadPerfRecord {
        type_: types::HEADER_ATTR,
        offset,
        field: "attr",
    })?;
    let size = if attr.size == 0 { 64 } else { attr.size as usize };
    c.bytes(size, "attr.size")?;
    let ids = c.rest().chunks_exact(8).map(|w| endian.u64(w.try_into().expect("8 bytes"))).collect();
    Ok(PerfRecord::HeaderAttr { attr, ids })
}

/// ID_INDEX: `{u64 nr; nr × {id, idx, cpu, tid}}`.
fn id_index(c: &mut Cur<'_>) -> Result<Vec<IdIndexEntry>, PerfDataError> {
    let n = c.count_u64(32, "id_index.nr")?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(IdIndexEntry { id: c.u64("id")?, idx: c.u64("idx")?, cpu: c.u64("cpu")?, tid: c.u64("tid")? });
    }
    Ok(v)
}

/// THREAD_MAP: `{u64 nr; nr × {u64 pid; char comm[16]}}`.
fn thread_map<'a>(c: &mut Cur<'a>) -> Result<Vec<(u64, &'a [u8])>, PerfDataError> {
    let n = c.count_u64(24, "thread_map.nr")?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let pid = c.u64("pid")?;
        let comm = c.bytes(16, "comm")?;
        let end = comm.iter().position(|&b| b == 0).unwrap_or(16);
        v.push((pid, &comm[..end]));
    }
    Ok(v)
}

/// TIME_CONV (`len` bytes): the short form (shift, mult, zero) or the long one with the cycles,
/// mask and the two capability bytes.
fn time_conv<'a>(c: &mut Cur<'a>, len: usize) -> Result<PerfRecord<'a>, PerfDataError> {
    let (time_shift, time_mult, time_zero) = (c.u64("time_shift")?, c.u64("time_mult")?, c.u64("time_zero")?);
    let (time_cycles, time_mask, caps) = if len >= 8 + 48 {
        (c.u64("time_cycles")?, c.u64("time_mask")?, c.bytes(2, "cap_user_time_zero")?)
    } else {
        (0, 0, &[0u8, 0][..])
    };
    Ok(PerfRecord::TimeConv {
        time_shift,
        time_mult,
        time_zero,
        time_cycles,
        time_mask,
        cap_user_time_zero: caps[0] != 0,
        cap_user_time_short: caps[1] != 0,
    })
}

fn cpu_map<'a>(c: &mut Cur<'a>) -> Result<CpuMap<'a>, PerfDataError> {
    let type_ = c.u16("cpu_map.type")?;
    Ok(match type_ {
        0 => {
            let nr = c.u16("cpus.nr")?;
            let mut v = Vec::with_capacity(usize::from(nr).min(c.b.len() / 2));
            for _ in 0..nr {
                v.push(c.u16("cpu")?);
            }
            CpuMap::Cpus(v)
        }
        2 => {
            let b = c.bytes(2, "range.any_cpu")?;
            let start = c.u16("range.start_cpu")?;
            let end = c.u16("range.end_cpu")?;
            CpuMap::Range { any_cpu: b[0] != 0, start, end }
        }
        _ => CpuMap::Other { type_, bytes: c.rest() },
    })
}
