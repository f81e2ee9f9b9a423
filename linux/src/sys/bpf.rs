//! `bpf(2)`: a BPF_MAP_TYPE_PERF_EVENT_ARRAY's creation, description and entries (the
//! [`PerfEventArray`](crate::PerfEventArray) reader's), the BPF ring buffers' creation (the
//! [`RingBuffer`](crate::RingBuffer)'s and [`UserRingBuffer`](crate::UserRingBuffer)'s), and the
//! loaded BPF programs, for the KSYMBOL and BPF_EVENT records perf synthesizes.

use std::io;
#[cfg(feature = "perf-data")]
use std::os::fd::AsRawFd;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};

use super::check;

/// A loaded BPF program, as `BPF_OBJ_GET_INFO_BY_FD` describes it: what perf's
/// `perf_event__synthesize_bpf_events` turns into KSYMBOL and BPF_EVENT records.
#[cfg(feature = "perf-data")]
#[derive(Debug, Clone, Default)]
pub(crate) struct BpfProg {
    pub(crate) id: u32,
    pub(crate) tag: [u8; 8],
    pub(crate) name: String,
    /// Each (sub)program's JIT address, length and tag.
    pub(crate) funcs: Vec<(u64, u32, [u8; 8])>,
}

/// `bpf(cmd, attr, size)`.
fn bpf(cmd: i32, attr: &mut [u64; 4]) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is 32 valid, zero-padded bytes of a `union bpf_attr` prefix that the
    // kernel reads (and for some commands writes) within its size.
    check(unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), std::mem::size_of_val(attr)) })
}

/// `BPF_MAP_TYPE_PERF_EVENT_ARRAY`.
pub(crate) const MAP_TYPE_PERF_EVENT_ARRAY: u32 = 4;

/// `BPF_MAP_CREATE` of a perf event array of `max_entries` (keys and values 4-byte: an index,
/// a perf event's fd).
pub(crate) fn create_perf_event_array(max_entries: u32) -> io::Result<OwnedFd> {
    const MAP_CREATE: i32 = 0;
    // map_type, key_size | value_size, max_entries | map_flags.
    let mut attr = [u64::from(MAP_TYPE_PERF_EVENT_ARRAY) | 4 << 32, 4 | u64::from(max_entries) << 32, 0, 0];
    let fd = bpf(MAP_CREATE, &mut attr)?;
    // SAFETY: the call returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `BPF_MAP_TYPE_RINGBUF`.
pub(crate) const MAP_TYPE_RINGBUF: u32 = 27;
/// `BPF_MAP_TYPE_USER_RINGBUF`.
pub(crate) const MAP_TYPE_USER_RINGBUF: u32 = 31;

/// `BPF_MAP_CREATE` of a ring buffer (`map_type` [`MAP_TYPE_RINGBUF`] or
/// [`MAP_TYPE_USER_RINGBUF`]: no keys, no values) whose data area is `max_entries` bytes.
pub(crate) fn create_ring_map(map_type: u32, max_entries: u32) -> io::Result<OwnedFd> {
    const MAP_CREATE: i32 = 0;
    let mut attr = [u64::from(map_type), u64::from(max_entries) << 32, 0, 0];
    let fd = bpf(MAP_CREATE, &mut attr)?;
    // SAFETY: the call returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// A map as `BPF_OBJ_GET_INFO_BY_FD` describes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MapInfo {
    pub(crate) map_type: u32,
    /// The map's id: the same for every descriptor of it, in every process.
    pub(crate) id: u32,
    pub(crate) key_size: u32,
    pub(crate) value_size: u32,
    pub(crate) max_entries: u32,
}

/// A map as `BPF_OBJ_GET_INFO_BY_FD` describes it.
pub(crate) fn map_info(map: BorrowedFd<'_>) -> io::Result<MapInfo> {
    const OBJ_GET_INFO_BY_FD: i32 = 15;
    // struct bpf_map_info: type, id, key_size, value_size, max_entries, map_flags (24 bytes
    // asked for; the kernel fills at most that).
    let mut info = [0u32; 6];
    let len = std::mem::size_of_val(&info) as u64;
    let mut attr = [fd_word(map) | len << 32, info.as_mut_ptr() as u64, 0, 0];
    bpf(OBJ_GET_INFO_BY_FD, &mut attr)?;
    let [map_type, id, key_size, value_size, max_entries, _] = info;
    Ok(MapInfo { map_type, id, key_size, value_size, max_entries })
}

/// `BPF_MAP_UPDATE_ELEM`: entry `key` of a perf event array set to the perf event `event`.
pub(crate) fn map_set_event(map: BorrowedFd<'_>, key: u32, event: BorrowedFd<'_>) -> io::Result<()> {
    const MAP_UPDATE_ELEM: i32 = 2;
    let value = fd_word(event) as u32;
    // map_fd, key pointer, value pointer, flags (BPF_ANY); both pointees live for the call.
    let mut attr = [fd_word(map), &key as *const u32 as u64, &value as *const u32 as u64, 0];
    bpf(MAP_UPDATE_ELEM, &mut attr).map(drop)
}

/// `BPF_MAP_DELETE_ELEM` of entry `key` (ENOENT if it is empty).
pub(crate) fn map_delete(map: BorrowedFd<'_>, key: u32) -> io::Result<()> {
    const MAP_DELETE_ELEM: i32 = 3;
    let mut attr = [fd_word(map), &key as *const u32 as u64, 0, 0];
    bpf(MAP_DELETE_ELEM, &mut attr).map(drop)
}

/// A descriptor as the first (u32) field of a `bpf_attr`.
fn fd_word(fd: BorrowedFd<'_>) -> u64 {
    use std::os::fd::AsRawFd as _;
    u64::from(fd.as_raw_fd() as u32)
}

#[cfg(feature = "perf-data")]
/// The loaded BPF programs (root, or CAP_SYS_ADMIN: an error otherwise), in id order, each
/// read with `BPF_PROG_GET_NEXT_ID`, `BPF_PROG_GET_FD_BY_ID` and two `BPF_OBJ_GET_INFO_BY_FD`
/// (the counts, then the arrays). A program unloaded meanwhile is passed over.
pub(crate) fn bpf_programs() -> io::Result<Vec<BpfProg>> {
    const PROG_GET_NEXT_ID: i32 = 11;
    const PROG_GET_FD_BY_ID: i32 = 13;
    const OBJ_GET_INFO_BY_FD: i32 = 15;
    let mut out = Vec::new();
    let mut id = 0u32;
    loop {
        let mut attr = [u64::from(id), 0, 0, 0];
        match bpf(PROG_GET_NEXT_ID, &mut attr) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(out),
            Err(e) => return Err(e),
        }
        id = (attr[0] >> 32) as u32; // next_id
        let mut attr = [u64::from(id), 0, 0, 0];
        let Ok(fd) = bpf(PROG_GET_FD_BY_ID, &mut attr) else { continue };
        // SAFETY: the call returned a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        // struct bpf_prog_info up to prog_tags (offset 184) and beyond: 256 bytes.
        let mut info = [0u8; 256];
        let get = |info: &mut [u8; 256]| {
            let mut attr =
                [(fd.as_raw_fd() as u32 as u64) | ((info.len() as u64) << 32), info.as_mut_ptr() as u64, 0, 0];
            bpf(OBJ_GET_INFO_BY_FD, &mut attr).map(drop)
        };
        if get(&mut info).is_err() {
            continue;
        }
        let u32_at = |b: &[u8; 256], at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let (nsyms, nlens, ntags) =
            (u32_at(&info, 104) as usize, u32_at(&info, 108) as usize, u32_at(&info, 180) as usize);
        if nsyms == 0 || nsyms != nlens || nsyms != ntags || nsyms > 4096 {
            continue; // not JIT-compiled, or counts that do not agree (perf passes over it too)
        }
        let mut prog = BpfProg { id: u32_at(&info, 4), ..BpfProg::default() };
        prog.tag.copy_from_slice(&info[8..16]);
        let name = &info[64..80];
        prog.name = String::from_utf8_lossy(&name[..name.iter().position(|&c| c == 0).unwrap_or(16)]).into_owned();
        let mut addrs = vec![0u64; nsyms];
        let mut lens = vec![0u32; nsyms];
        let mut tags = vec![[0u8; 8]; nsyms];
        // Second call: only the three arrays asked for; every other array's count zeroed (a
        // count with no buffer would make the kernel write to address 0).
        let mut second = [0u8; 256];
        let put32 = |b: &mut [u8; 256], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let put64 = |b: &mut [u8; 256], at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        put32(&mut second, 104, nsyms as u32);
        put32(&mut second, 108, nsyms as u32);
        put64(&mut second, 112, addrs.as_mut_ptr() as u64);
        put64(&mut second, 120, lens.as_mut_ptr() as u64);
        put32(&mut second, 180, nsyms as u32);
        put64(&mut second, 184, tags.as_mut_ptr() as u64);
        if get(&mut second).is_err() {
            continue;
        }
        prog.funcs = addrs.into_iter().zip(lens).zip(tags).map(|((a, l), t)| (a, l, t)).collect();
        out.push(prog);
    }
}
