//! Feature sections (`HEADER_*` bits of the feature bitmap) and the string encoding perf uses
//! for them (`do_write_string`: `{u32 len; char str[len]}`, `len` counting the NUL and zero
//! padding to 64).

use perfring::record::Endian;

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

/// Encode a string feature payload.
pub fn encode_string(s: &str, endian: Endian) -> Vec<u8> {
    let len = (s.len() + 1).next_multiple_of(64);
    let mut out = endian.put_u32(len as u32).to_vec();
    out.extend_from_slice(s.as_bytes());
    out.resize(4 + len, 0);
    out
}

/// Decode a string feature payload (up to the first NUL).
pub fn decode_string(payload: &[u8], endian: Endian) -> Option<String> {
    let len = endian.u32(payload.get(..4)?.try_into().ok()?) as usize;
    let bytes = payload.get(4..4usize.checked_add(len)?)?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
}
