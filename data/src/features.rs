//! Feature sections (`HEADER_*` bits of the feature bitmap) as typed values ([`Feature`]),
//! in the encoding of `header.c` (`write_*`/`process_*`): strings are `{u32 len; char
//! str[len]}`, `len` counting the NUL and zero padding to 64 (`do_write_string`); string lists
//! are `{u32 nr; strings}`. Decoding is bounds-checked: every count is bounded by the bytes
//! left.

use perfring::record::{Attr, Endian};

use crate::cursor::{Cur, Site};
use crate::PerfDataError;

/// `HEADER_TRACING_DATA`
pub const TRACING_DATA: u32 = 1;
/// `HEADER_BUILD_ID`
pub const BUILD_ID: u32 = 2;
/// `HEADER_HOSTNAME`
pub const HOSTNAME: u32 = 3;
/// `HEADER_OSRELEASE`
pub const OSRELEASE: u32 = 4;
/// `HEADER_VERSION`
pub const VERSION: u32 = 5;
/// `HEADER_ARCH`
pub const ARCH: u32 = 6;
/// `HEADER_NRCPUS`: `{u32 nr_cpus_avail; u32 nr_cpus_online}`.
pub const NRCPUS: u32 = 7;
/// `HEADER_CPUDESC`
pub const CPUDESC: u32 = 8;
/// `HEADER_CPUID`
pub const CPUID: u32 = 9;
/// `HEADER_TOTAL_MEM`
pub const TOTAL_MEM: u32 = 10;
/// `HEADER_CMDLINE`
pub const CMDLINE: u32 = 11;
/// `HEADER_EVENT_DESC`
pub const EVENT_DESC: u32 = 12;
/// `HEADER_CPU_TOPOLOGY`
pub const CPU_TOPOLOGY: u32 = 13;
/// `HEADER_NUMA_TOPOLOGY`
pub const NUMA_TOPOLOGY: u32 = 14;
/// `HEADER_BRANCH_STACK`
pub const BRANCH_STACK: u32 = 15;
/// `HEADER_PMU_MAPPINGS`
pub const PMU_MAPPINGS: u32 = 16;
/// `HEADER_GROUP_DESC`
pub const GROUP_DESC: u32 = 17;
/// `HEADER_AUXTRACE`
pub const AUXTRACE: u32 = 18;
/// `HEADER_STAT`
pub const STAT: u32 = 19;
/// `HEADER_CACHE`
pub const CACHE: u32 = 20;
/// `HEADER_SAMPLE_TIME`
pub const SAMPLE_TIME: u32 = 21;
/// `HEADER_MEM_TOPOLOGY`
pub const MEM_TOPOLOGY: u32 = 22;
/// `HEADER_CLOCKID`
pub const CLOCKID: u32 = 23;
/// `HEADER_DIR_FORMAT`
pub const DIR_FORMAT: u32 = 24;
/// `HEADER_BPF_PROG_INFO`
pub const BPF_PROG_INFO: u32 = 25;
/// `HEADER_BPF_BTF`
pub const BPF_BTF: u32 = 26;
/// `HEADER_COMPRESSED`
pub const COMPRESSED: u32 = 27;
/// `HEADER_CPU_PMU_CAPS`
pub const CPU_PMU_CAPS: u32 = 28;
/// `HEADER_CLOCK_DATA`
pub const CLOCK_DATA: u32 = 29;
/// `HEADER_HYBRID_TOPOLOGY`
pub const HYBRID_TOPOLOGY: u32 = 30;
/// `HEADER_PMU_CAPS`
pub const PMU_CAPS: u32 = 31;
/// Bits in the bitmap.
pub const BITS: u32 = 256;

/// A feature section, decoded.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Feature {
    /// HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC or CPUID: one string.
    String(String),
    /// NRCPUS: CPUs available and online.
    NrCpus {
        /// `nr_cpus_avail`.
        available: u32,
        /// `nr_cpus_online`.
        online: u32,
    },
    /// TOTAL_MEM: kB of memory.
    TotalMem(u64),
    /// CMDLINE: the command line's arguments.
    Cmdline(Vec<String>),
    /// EVENT_DESC: each event's attr, name and ids.
    EventDesc(Vec<EventDesc>),
    /// CPU_TOPOLOGY: core and thread sibling lists; the per-CPU ids and dies that follow are
    /// kept raw.
    CpuTopology {
        /// `core_siblings` lists.
        cores: Vec<String>,
        /// `thread_siblings` lists.
        threads: Vec<String>,
        /// The rest of the section.
        rest: Vec<u8>,
    },
    /// NUMA_TOPOLOGY: one entry per node.
    NumaTopology(Vec<NumaNode>),
    /// SAMPLE_TIME: first and last sample times.
    SampleTime {
        /// First sample's time.
        first: u64,
        /// Last sample's time.
        last: u64,
    },
    /// CLOCKID: the clock's resolution in ns.
    ClockId(u64),
    /// CLOCK_DATA: a reference point of the clock against the time of day.
    ClockData {
        /// Format version (1).
        version: u32,
        /// `clockid`.
        clockid: u32,
        /// Time of day, ns.
        tod_ns: u64,
        /// The clock at that time, ns.
        clockid_ns: u64,
    },
    /// BUILD_ID: the build-id records, each raw (header included).
    BuildIds(Vec<Vec<u8>>),
    /// PMU_MAPPINGS: `(type, name)` of each PMU.
    PmuMappings(Vec<(u32, String)>),
    /// GROUP_DESC: the event groups.
    GroupDesc(Vec<GroupDesc>),
    /// COMPRESSED: how the records were compressed.
    Compressed {
        /// Format version (1).
        version: u32,
        /// Compressor (1: zstd).
        type_: u32,
        /// Level.
        level: u32,
        /// Ratio perf measured.
        ratio: u32,
        /// Largest decompressed size of one COMPRESSED record (perf: its ring's size).
        mmap_len: u32,
    },
    /// Any other feature, raw.
    Bytes(Vec<u8>),
}

/// One event of EVENT_DESC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDesc {
    /// The attr.
    pub attr: Attr,
    /// The event's name.
    pub name: String,
    /// Its ids.
    pub ids: Vec<u64>,
}

/// One node of NUMA_TOPOLOGY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaNode {
    /// Node number.
    pub node: u32,
    /// kB total.
    pub mem_total: u64,
    /// kB free.
    pub mem_free: u64,
    /// Its CPUs (a list such as "0-3").
    pub cpus: String,
}

/// One group of GROUP_DESC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    /// Group name.
    pub name: String,
    /// Index of the leader event.
    pub leader: u32,
    /// Number of members.
    pub members: u32,
}

/// perf's name of feature `bit` (`HEADER_` left out), for messages; `None` for a bit perf
/// 6.x does not name.
pub(crate) fn name(bit: u32) -> Option<&'static str> {
    const NAMES: [&str; 31] = [
        "TRACING_DATA",
        "BUILD_ID",
        "HOSTNAME",
        "OSRELEASE",
        "VERSION",
        "ARCH",
        "NRCPUS",
        "CPUDESC",
        "CPUID",
        "TOTAL_MEM",
        "CMDLINE",
        "EVENT_DESC",
        "CPU_TOPOLOGY",
        "NUMA_TOPOLOGY",
        "BRANCH_STACK",
        "PMU_MAPPINGS",
        "GROUP_DESC",
        "AUXTRACE",
        "STAT",
        "CACHE",
        "SAMPLE_TIME",
        "MEM_TOPOLOGY",
        "CLOCKID",
        "DIR_FORMAT",
        "BPF_PROG_INFO",
        "BPF_BTF",
        "COMPRESSED",
        "CPU_PMU_CAPS",
        "CLOCK_DATA",
        "HYBRID_TOPOLOGY",
        "PMU_CAPS",
    ];
    NAMES.get(usize::try_from(bit).ok()?.checked_sub(1)?).copied()
}

/// The [`Feature`] variant feature `bit` takes: the one [`Feature::parse`] gives for it.
pub(crate) fn variant_of_bit(bit: u32) -> &'static str {
    match bit {
        HOSTNAME | OSRELEASE | VERSION | ARCH | CPUDESC | CPUID => "String",
        NRCPUS => "NrCpus",
        TOTAL_MEM => "TotalMem",
        CMDLINE => "Cmdline",
        EVENT_DESC => "EventDesc",
        CPU_TOPOLOGY => "CpuTopology",
        NUMA_TOPOLOGY => "NumaTopology",
        SAMPLE_TIME => "SampleTime",
        CLOCKID => "ClockId",
        CLOCK_DATA => "ClockData",
        BUILD_ID => "BuildIds",
        PMU_MAPPINGS => "PmuMappings",
        GROUP_DESC => "GroupDesc",
        COMPRESSED => "Compressed",
        _ => "Bytes",
    }
}

impl Feature {
    /// The variant's name, as [`variant_of_bit`] gives it.
    pub(crate) fn variant(&self) -> &'static str {
        match self {
            Feature::String(_) => "String",
            Feature::NrCpus { .. } => "NrCpus",
            Feature::TotalMem(_) => "TotalMem",
            Feature::Cmdline(_) => "Cmdline",
            Feature::EventDesc(_) => "EventDesc",
            Feature::CpuTopology { .. } => "CpuTopology",
            Feature::NumaTopology(_) => "NumaTopology",
            Feature::SampleTime { .. } => "SampleTime",
            Feature::ClockId(_) => "ClockId",
            Feature::ClockData { .. } => "ClockData",
            Feature::BuildIds(_) => "BuildIds",
            Feature::PmuMappings(_) => "PmuMappings",
            Feature::GroupDesc(_) => "GroupDesc",
            Feature::Compressed { .. } => "Compressed",
            Feature::Bytes(_) => "Bytes",
        }
    }

    /// Decode feature `bit`'s payload.
    pub fn parse(bit: u32, payload: &[u8], endian: Endian) -> Result<Feature, PerfDataError> {
        let mut c = Cur::new(payload, 0, endian, Site::Feature(bit));
        Ok(match bit {
            HOSTNAME | OSRELEASE | VERSION | ARCH | CPUDESC | CPUID => Feature::String(c.string("string")?),
            NRCPUS => Feature::NrCpus { available: c.u32("nr_cpus_avail")?, online: c.u32("nr_cpus_online")? },
            TOTAL_MEM => Feature::TotalMem(c.u64("total_mem")?),
            CMDLINE => Feature::Cmdline(c.strings("cmdline")?),
            EVENT_DESC => Feature::EventDesc(event_descs(&mut c, payload, endian)?),
            CPU_TOPOLOGY => {
                let cores = c.strings("core_siblings")?;
                let threads = c.strings("thread_siblings")?;
                Feature::CpuTopology { cores, threads, rest: payload[c.at..].to_vec() }
            }
            NUMA_TOPOLOGY => {
                let n = c.count_u32(24, "nr_nodes")?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(NumaNode {
                        node: c.u32("node")?,
                        mem_total: c.u64("mem_total")?,
                        mem_free: c.u64("mem_free")?,
                        cpus: c.string("cpus")?,
                    });
                }
                Feature::NumaTopology(v)
            }
            SAMPLE_TIME => Feature::SampleTime { first: c.u64("first_sample_time")?, last: c.u64("last_sample_time")? },
            CLOCKID => Feature::ClockId(c.u64("clockid_res_ns")?),
            CLOCK_DATA => Feature::ClockData {
                version: c.u32("version")?,
                clockid: c.u32("clockid")?,
                tod_ns: c.u64("tod_ns")?,
                clockid_ns: c.u64("clockid_ns")?,
            },
            BUILD_ID => Feature::BuildIds(build_ids(&mut c, payload, endian)?),
            PMU_MAPPINGS => {
                let n = c.count_u32(8, "pmu_num")?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push((c.u32("type")?, c.string("name")?));
                }
                Feature::PmuMappings(v)
            }
            GROUP_DESC => {
                let n = c.count_u32(12, "nr_groups")?;
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(GroupDesc {
                        name: c.string("name")?,
                        leader: c.u32("leader_idx")?,
                        members: c.u32("nr_members")?,
                    });
                }
                Feature::GroupDesc(v)
            }
            COMPRESSED => Feature::Compressed {
                version: c.u32("version")?,
                type_: c.u32("type")?,
                level: c.u32("level")?,
                ratio: c.u32("ratio")?,
                mmap_len: c.u32("mmap_len")?,
            },
            _ => Feature::Bytes(payload.to_vec()),
        })
    }

    /// Encode as feature `bit`'s payload (the inverse of [`Feature::parse`]).
    pub fn encode(&self, endian: Endian) -> Result<Vec<u8>, PerfDataError> {
        let mut o = Vec::new();
        let u32s = |o: &mut Vec<u8>, v: u32| o.extend_from_slice(&endian.put_u32(v));
        let u64s = |o: &mut Vec<u8>, v: u64| o.extend_from_slice(&endian.put_u64(v));
        let string = |o: &mut Vec<u8>, s: &str| o.extend_from_slice(&encode_string(s, endian));
        let count = |n: usize| {
            u32::try_from(n).map_err(|_| PerfDataError::BadFeature { feature: 0, offset: 0, field: "count" })
        };
        match self {
            Feature::String(s) => string(&mut o, s),
            Feature::NrCpus { available, online } => {
                u32s(&mut o, *available);
                u32s(&mut o, *online);
            }
            Feature::TotalMem(v) | Feature::ClockId(v) => u64s(&mut o, *v),
            Feature::Cmdline(v) => {
                u32s(&mut o, count(v.len())?);
                v.iter().for_each(|s| string(&mut o, s));
            }
            Feature::EventDesc(v) => encode_event_descs(v, endian, &mut o)?,
            Feature::CpuTopology { cores, threads, rest } => {
                for list in [cores, threads] {
                    u32s(&mut o, count(list.len())?);
                    list.iter().for_each(|s| string(&mut o, s));
                }
                o.extend_from_slice(rest);
            }
            Feature::NumaTopology(v) => {
                u32s(&mut o, count(v.len())?);
                for n in v {
                    u32s(&mut o, n.node);
                    u64s(&mut o, n.mem_total);
                    u64s(&mut o, n.mem_free);
                    string(&mut o, &n.cpus);
                }
            }
            Feature::SampleTime { first, last } => {
                u64s(&mut o, *first);
                u64s(&mut o, *last);
            }
            Feature::ClockData { version, clockid, tod_ns, clockid_ns } => {
                u32s(&mut o, *version);
                u32s(&mut o, *clockid);
                u64s(&mut o, *tod_ns);
                u64s(&mut o, *clockid_ns);
            }
            Feature::BuildIds(v) => v.iter().for_each(|r| o.extend_from_slice(r)),
            Feature::PmuMappings(v) => {
                u32s(&mut o, count(v.len())?);
                for (t, name) in v {
                    u32s(&mut o, *t);
                    string(&mut o, name);
                }
            }
            Feature::GroupDesc(v) => {
                u32s(&mut o, count(v.len())?);
                for g in v {
                    string(&mut o, &g.name);
                    u32s(&mut o, g.leader);
                    u32s(&mut o, g.members);
                }
            }
            Feature::Compressed { version, type_, level, ratio, mmap_len } => {
                for v in [version, type_, level, ratio, mmap_len] {
                    u32s(&mut o, *v);
                }
            }
            Feature::Bytes(b) => o.extend_from_slice(b),
        }
        Ok(o)
    }
}

/// Encode a string as perf does (`do_write_string`).
pub fn encode_string(s: &str, endian: Endian) -> Vec<u8> {
    let len = (s.len() + 1).next_multiple_of(64);
    let mut out = endian.put_u32(len as u32).to_vec();
    out.extend_from_slice(s.as_bytes());
    out.resize(4 + len, 0);
    out
}

/// EVENT_DESC's events: `{u32 nre, u32 sz; nre × {attr (sz bytes), u32 nr_ids, string name,
/// u64 ids[nr_ids]}}`.
fn event_descs(c: &mut Cur<'_>, payload: &[u8], endian: Endian) -> Result<Vec<EventDesc>, PerfDataError> {
    let n = c.count_u32(4, "nre")?;
    let sz = c.u32("sz")? as usize;
    if !(Attr::SIZE_VER0 as usize..=4096).contains(&sz) {
        return Err(c.err("sz"));
    }
    let mut v = Vec::with_capacity(n.min(payload.len() / sz));
    for _ in 0..n {
        let a = c.bytes(sz, "attr")?;
        let attr = Attr::from_bytes(a, endian).map_err(|_| c.err("attr"))?;
        let nr_ids = c.u32("nr_ids")? as usize;
        let name = c.string("name")?;
        if nr_ids > (payload.len() - c.at) / 8 {
            return Err(c.err("nr_ids"));
        }
        let ids = (0..nr_ids).map(|_| c.u64("id")).collect::<Result<_, _>>()?;
        v.push(EventDesc { attr, name, ids });
    }
    Ok(v)
}

/// BUILD_ID's records, each `{header; …}` as written (`header.size` bytes).
fn build_ids(c: &mut Cur<'_>, payload: &[u8], endian: Endian) -> Result<Vec<Vec<u8>>, PerfDataError> {
    let mut v = Vec::new();
    // Each pass consumes at least 8 bytes.
    while c.at < payload.len() {
        let h = c.bytes(8, "build_id.header")?;
        let size = endian.u16([h[6], h[7]]) as usize;
        if size < 8 {
            return Err(c.err("build_id.header.size"));
        }
        let body = c.bytes(size - 8, "build_id")?;
        let mut r = h.to_vec();
        r.extend_from_slice(body);
        v.push(r);
    }
    Ok(v)
}

/// EVENT_DESC's payload of `v` into `o` (the inverse of `event_descs`).
fn encode_event_descs(v: &[EventDesc], endian: Endian, o: &mut Vec<u8>) -> Result<(), PerfDataError> {
    let count =
        |n: usize| u32::try_from(n).map_err(|_| PerfDataError::BadFeature { feature: 0, offset: 0, field: "count" });
    o.extend_from_slice(&endian.put_u32(count(v.len())?));
    // One size for all (perf's `sz`): the first's, 0 counting as 64.
    let sz = v.first().map_or(Attr::SIZE_VER7, |e| e.attr.size.max(Attr::SIZE_VER0));
    o.extend_from_slice(&endian.put_u32(sz));
    for e in v {
        let mut a = vec![0u8; sz as usize];
        Attr { size: sz, ..e.attr }.to_bytes(endian, &mut a)?;
        o.extend_from_slice(&a);
        o.extend_from_slice(&endian.put_u32(count(e.ids.len())?));
        o.extend_from_slice(&encode_string(&e.name, endian));
        e.ids.iter().for_each(|&id| o.extend_from_slice(&endian.put_u64(id)));
    }
    Ok(())
}
