//! `struct perf_event_header` and the record type and misc constants of the uapi.

use super::Endian;

/// `struct perf_event_header`: `{u32 type; u16 misc; u16 size}`. `size` covers the whole
/// record, header included; every record the kernel writes is a multiple of 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// `type`: one of the [`types`] values, or an unknown one.
    pub type_: u32,
    /// `misc`: see [`misc`].
    pub misc: u16,
    /// `size` in bytes, header included.
    pub size: u16,
}

impl Header {
    /// Size of the header in bytes.
    pub const SIZE: usize = 8;

    /// Read a header from the first 8 bytes of `bytes`; `None` if there are fewer.
    #[inline]
    pub fn parse(bytes: &[u8], endian: Endian) -> Option<Header> {
        let b: &[u8; 8] = bytes.get(..8)?.try_into().ok()?;
        Some(Header::from_bytes(*b, endian))
    }

    /// Decode the 8 header bytes.
    #[inline]
    pub fn from_bytes(b: [u8; 8], endian: Endian) -> Header {
        // One 8-byte load, then shifts: `{u32 type; u16 misc; u16 size}` is the low, middle and
        // top part of the word read in the record's order on a little-endian writer, and the
        // top, middle and low part (each already swapped) on a big-endian one.
        match endian {
            Endian::Little => {
                let v = u64::from_le_bytes(b);
                Header { type_: v as u32, misc: (v >> 32) as u16, size: (v >> 48) as u16 }
            }
            Endian::Big => {
                let v = u64::from_be_bytes(b);
                Header { type_: (v >> 32) as u32, misc: (v >> 16) as u16, size: v as u16 }
            }
        }
    }

    /// Encode the header into 8 bytes.
    #[inline]
    pub fn to_bytes(self, endian: Endian) -> [u8; 8] {
        let t = endian.put_u32(self.type_);
        let m = endian.put_u16(self.misc);
        let s = endian.put_u16(self.size);
        [t[0], t[1], t[2], t[3], m[0], m[1], s[0], s[1]]
    }
}

/// `enum perf_event_type`: the record types the kernel writes into a ring (1..=22), and
/// `enum perf_user_event_type`: the ones `perf` writes only into perf.data files and pipes
/// (64 and up, `tools/lib/perf/include/perf/event.h`). [`type_name`](super::type_name) knows
/// every one.
pub mod types {
    /// `PERF_RECORD_MMAP`
    pub const MMAP: u32 = 1;
    /// `PERF_RECORD_LOST`
    pub const LOST: u32 = 2;
    /// `PERF_RECORD_COMM`
    pub const COMM: u32 = 3;
    /// `PERF_RECORD_EXIT`
    pub const EXIT: u32 = 4;
    /// `PERF_RECORD_THROTTLE`
    pub const THROTTLE: u32 = 5;
    /// `PERF_RECORD_UNTHROTTLE`
    pub const UNTHROTTLE: u32 = 6;
    /// `PERF_RECORD_FORK`
    pub const FORK: u32 = 7;
    /// `PERF_RECORD_READ`
    pub const READ: u32 = 8;
    /// `PERF_RECORD_SAMPLE`
    pub const SAMPLE: u32 = 9;
    /// `PERF_RECORD_MMAP2`
    pub const MMAP2: u32 = 10;
    /// `PERF_RECORD_AUX`
    pub const AUX: u32 = 11;
    /// `PERF_RECORD_ITRACE_START`
    pub const ITRACE_START: u32 = 12;
    /// `PERF_RECORD_LOST_SAMPLES`
    pub const LOST_SAMPLES: u32 = 13;
    /// `PERF_RECORD_SWITCH`
    pub const SWITCH: u32 = 14;
    /// `PERF_RECORD_SWITCH_CPU_WIDE`
    pub const SWITCH_CPU_WIDE: u32 = 15;
    /// `PERF_RECORD_NAMESPACES`
    pub const NAMESPACES: u32 = 16;
    /// `PERF_RECORD_KSYMBOL`
    pub const KSYMBOL: u32 = 17;
    /// `PERF_RECORD_BPF_EVENT`
    pub const BPF_EVENT: u32 = 18;
    /// `PERF_RECORD_CGROUP`
    pub const CGROUP: u32 = 19;
    /// `PERF_RECORD_TEXT_POKE`
    pub const TEXT_POKE: u32 = 20;
    /// `PERF_RECORD_AUX_OUTPUT_HW_ID`
    pub const AUX_OUTPUT_HW_ID: u32 = 21;
    /// `PERF_RECORD_CALLCHAIN_DEFERRED` (newest mainline)
    pub const CALLCHAIN_DEFERRED: u32 = 22;
    /// `PERF_RECORD_HEADER_ATTR`: an event's attr and ids (pipe mode, `perf inject`).
    pub const HEADER_ATTR: u32 = 64;
    /// `PERF_RECORD_HEADER_EVENT_TYPE` (deprecated).
    pub const HEADER_EVENT_TYPE: u32 = 65;
    /// `PERF_RECORD_HEADER_TRACING_DATA`: tracing data follows the record (pipe mode).
    pub const HEADER_TRACING_DATA: u32 = 66;
    /// `PERF_RECORD_HEADER_BUILD_ID`.
    pub const HEADER_BUILD_ID: u32 = 67;
    /// `PERF_RECORD_FINISHED_ROUND`: no record after it is older than one before it.
    pub const FINISHED_ROUND: u32 = 68;
    /// `PERF_RECORD_ID_INDEX`: id → cpu/tid/idx.
    pub const ID_INDEX: u32 = 69;
    /// `PERF_RECORD_AUXTRACE_INFO`.
    pub const AUXTRACE_INFO: u32 = 70;
    /// `PERF_RECORD_AUXTRACE`: AUX data follows the record, not counted in `header.size`.
    pub const AUXTRACE: u32 = 71;
    /// `PERF_RECORD_AUXTRACE_ERROR`.
    pub const AUXTRACE_ERROR: u32 = 72;
    /// `PERF_RECORD_THREAD_MAP`.
    pub const THREAD_MAP: u32 = 73;
    /// `PERF_RECORD_CPU_MAP`.
    pub const CPU_MAP: u32 = 74;
    /// `PERF_RECORD_STAT_CONFIG`.
    pub const STAT_CONFIG: u32 = 75;
    /// `PERF_RECORD_STAT`.
    pub const STAT: u32 = 76;
    /// `PERF_RECORD_STAT_ROUND`.
    pub const STAT_ROUND: u32 = 77;
    /// `PERF_RECORD_EVENT_UPDATE`.
    pub const EVENT_UPDATE: u32 = 78;
    /// `PERF_RECORD_TIME_CONV`.
    pub const TIME_CONV: u32 = 79;
    /// `PERF_RECORD_HEADER_FEATURE`: a feature section as a record (pipe mode).
    pub const HEADER_FEATURE: u32 = 80;
    /// `PERF_RECORD_COMPRESSED`: zstd-compressed records.
    pub const COMPRESSED: u32 = 81;
    /// `PERF_RECORD_FINISHED_INIT`: the end of the synthesized records.
    pub const FINISHED_INIT: u32 = 82;
    /// `PERF_RECORD_COMPRESSED2`: zstd-compressed records, 8-byte aligned (perf 6.15+).
    pub const COMPRESSED2: u32 = 83;
    /// `PERF_RECORD_BPF_METADATA` (perf 6.16+).
    pub const BPF_METADATA: u32 = 84;
    /// `PERF_RECORD_SCHEDSTAT_CPU` (newest perf, `perf sched stats`).
    pub const SCHEDSTAT_CPU: u32 = 85;
    /// `PERF_RECORD_SCHEDSTAT_DOMAIN` (newest perf, `perf sched stats`).
    pub const SCHEDSTAT_DOMAIN: u32 = 86;
}

/// `PERF_RECORD_MISC_*` bits of [`Header::misc`].
pub mod misc {
    /// `PERF_RECORD_MISC_CPUMODE_MASK`
    pub const CPUMODE_MASK: u16 = 7;
    /// `PERF_RECORD_MISC_CPUMODE_UNKNOWN`
    pub const CPUMODE_UNKNOWN: u16 = 0;
    /// `PERF_RECORD_MISC_KERNEL`
    pub const KERNEL: u16 = 1;
    /// `PERF_RECORD_MISC_USER`
    pub const USER: u16 = 2;
    /// `PERF_RECORD_MISC_HYPERVISOR`
    pub const HYPERVISOR: u16 = 3;
    /// `PERF_RECORD_MISC_GUEST_KERNEL`
    pub const GUEST_KERNEL: u16 = 4;
    /// `PERF_RECORD_MISC_GUEST_USER`
    pub const GUEST_USER: u16 = 5;
    /// `PERF_RECORD_MISC_PROC_MAP_PARSE_TIMEOUT` (perf-synthesized records)
    pub const PROC_MAP_PARSE_TIMEOUT: u16 = 1 << 12;
    /// `PERF_RECORD_MISC_MMAP_DATA` (MMAP, MMAP2: a non-executable mapping)
    pub const MMAP_DATA: u16 = 1 << 13;
    /// `PERF_RECORD_MISC_COMM_EXEC` (COMM: the name changed on exec)
    pub const COMM_EXEC: u16 = 1 << 13;
    /// `PERF_RECORD_MISC_FORK_EXEC` (perf-internal FORK)
    pub const FORK_EXEC: u16 = 1 << 13;
    /// `PERF_RECORD_MISC_SWITCH_OUT` (SWITCH, SWITCH_CPU_WIDE)
    pub const SWITCH_OUT: u16 = 1 << 13;
    /// `PERF_RECORD_MISC_EXACT_IP` (SAMPLE: the IP is the exact one)
    pub const EXACT_IP: u16 = 1 << 14;
    /// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT` (SWITCH*: the task was still runnable)
    pub const SWITCH_OUT_PREEMPT: u16 = 1 << 14;
    /// `PERF_RECORD_MISC_MMAP_BUILD_ID` (MMAP2: the build-id form of the union)
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// `PERF_RECORD_MISC_EXT_RESERVED`
    pub const EXT_RESERVED: u16 = 1 << 15;
}

/// The CPU mode of a record (`misc & PERF_RECORD_MISC_CPUMODE_MASK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuMode {
    /// 0
    Unknown,
    /// 1
    Kernel,
    /// 2
    User,
    /// 3
    Hypervisor,
    /// 4
    GuestKernel,
    /// 5
    GuestUser,
    /// 6 or 7: not defined by the uapi.
    Other(u8),
}

impl CpuMode {
    /// The mode encoded in `misc`.
    pub fn from_misc(misc: u16) -> CpuMode {
        match misc & misc::CPUMODE_MASK {
            0 => CpuMode::Unknown,
            1 => CpuMode::Kernel,
            2 => CpuMode::User,
            3 => CpuMode::Hypervisor,
            4 => CpuMode::GuestKernel,
            5 => CpuMode::GuestUser,
            n => CpuMode::Other(n as u8),
        }
    }
}

/// The name of a record type — the uapi's (1–22) and perf's own (64–86) — or `"unknown"`.
pub fn type_name(type_: u32) -> &'static str {
    match type_ {
        types::MMAP => "PERF_RECORD_MMAP",
        types::LOST => "PERF_RECORD_LOST",
        types::COMM => "PERF_RECORD_COMM",
        types::EXIT => "PERF_RECORD_EXIT",
        types::THROTTLE => "PERF_RECORD_THROTTLE",
        types::UNTHROTTLE => "PERF_RECORD_UNTHROTTLE",
        types::FORK => "PERF_RECORD_FORK",
        types::READ => "PERF_RECORD_READ",
        types::SAMPLE => "PERF_RECORD_SAMPLE",
        types::MMAP2 => "PERF_RECORD_MMAP2",
        types::AUX => "PERF_RECORD_AUX",
        types::ITRACE_START => "PERF_RECORD_ITRACE_START",
        types::LOST_SAMPLES => "PERF_RECORD_LOST_SAMPLES",
        types::SWITCH => "PERF_RECORD_SWITCH",
        types::SWITCH_CPU_WIDE => "PERF_RECORD_SWITCH_CPU_WIDE",
        types::NAMESPACES => "PERF_RECORD_NAMESPACES",
        types::KSYMBOL => "PERF_RECORD_KSYMBOL",
        types::BPF_EVENT => "PERF_RECORD_BPF_EVENT",
        types::CGROUP => "PERF_RECORD_CGROUP",
        types::TEXT_POKE => "PERF_RECORD_TEXT_POKE",
        types::AUX_OUTPUT_HW_ID => "PERF_RECORD_AUX_OUTPUT_HW_ID",
        types::CALLCHAIN_DEFERRED => "PERF_RECORD_CALLCHAIN_DEFERRED",
        types::HEADER_ATTR => "PERF_RECORD_HEADER_ATTR",
        types::HEADER_EVENT_TYPE => "PERF_RECORD_HEADER_EVENT_TYPE",
        types::HEADER_TRACING_DATA => "PERF_RECORD_HEADER_TRACING_DATA",
        types::HEADER_BUILD_ID => "PERF_RECORD_HEADER_BUILD_ID",
        types::FINISHED_ROUND => "PERF_RECORD_FINISHED_ROUND",
        types::ID_INDEX => "PERF_RECORD_ID_INDEX",
        types::AUXTRACE_INFO => "PERF_RECORD_AUXTRACE_INFO",
        types::AUXTRACE => "PERF_RECORD_AUXTRACE",
        types::AUXTRACE_ERROR => "PERF_RECORD_AUXTRACE_ERROR",
        types::THREAD_MAP => "PERF_RECORD_THREAD_MAP",
        types::CPU_MAP => "PERF_RECORD_CPU_MAP",
        types::STAT_CONFIG => "PERF_RECORD_STAT_CONFIG",
        types::STAT => "PERF_RECORD_STAT",
        types::STAT_ROUND => "PERF_RECORD_STAT_ROUND",
        types::EVENT_UPDATE => "PERF_RECORD_EVENT_UPDATE",
        types::TIME_CONV => "PERF_RECORD_TIME_CONV",
        types::HEADER_FEATURE => "PERF_RECORD_HEADER_FEATURE",
        types::COMPRESSED => "PERF_RECORD_COMPRESSED",
        types::FINISHED_INIT => "PERF_RECORD_FINISHED_INIT",
        types::COMPRESSED2 => "PERF_RECORD_COMPRESSED2",
        types::BPF_METADATA => "PERF_RECORD_BPF_METADATA",
        types::SCHEDSTAT_CPU => "PERF_RECORD_SCHEDSTAT_CPU",
        types::SCHEDSTAT_DOMAIN => "PERF_RECORD_SCHEDSTAT_DOMAIN",
        _ => "unknown",
    }
}
