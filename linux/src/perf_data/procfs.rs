//! What already runs, as perf synthesizes it before recording (`perf_event__synthesize_threads`):
//! a COMM for each thread and an MMAP2 for each executable mapping of a process, read from
//! `/proc/PID/task/*/comm` and `/proc/PID/maps`. A process that exits while it is read is
//! skipped, not an error.

use std::ffi::CString;
use std::io::Write;

use perfring::record::{Comm, Mmap2, Mmap2File, Record, SampleId};
use perfring_data::Writer;

use super::PerfDataError;

/// `PERF_RECORD_MISC_USER`.
const MISC_USER: u16 = 2;

/// Every pid in /proc.
pub fn all_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut pids: Vec<i32> = dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    pids.sort_unstable();
    pids
}

/// COMM records for `pid`'s threads and MMAP2 records for its executable mappings, with
/// event 0's context; each mapping is also passed to `mapped(pid, start, len, path)`.
pub fn synthesize<W: Write>(
    w: &mut Writer<W>,
    pid: i32,
    mapped: &mut impl FnMut(u32, u64, u64, &str),
) -> Result<(), PerfDataError> {
    let Some(ctx) = w.context(0) else { return Ok(()) };
    let sid = |tid: u32| Some(SampleId { pid: pid as u32, tid, ..SampleId::default() }.masked(ctx.sample_type));
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Ok(()) };
    let mut tids: Vec<u32> = dir.flatten().filter_map(|t| t.file_name().to_str()?.parse().ok()).collect();
    tids.sort_unstable();
    for tid in tids {
        let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")) else { continue };
        let Ok(comm) = CString::new(comm.trim_end()) else { continue };
        let rec = Record::Comm(Comm { misc: 0, pid: pid as u32, tid, comm: &comm, sample_id: sid(tid) });
        w.write_record(&rec, 0)?;
    }
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return Ok(()) };
    for line in maps.lines() {
        // start-end perms offset maj:min inode path
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || !f[1].contains('x') {
            continue;
        }
        let (Some((s, e)), Some((maj, min))) = (f[0].split_once('-'), f[3].split_once(':')) else { continue };
        let hex = |x: &str| u64::from_str_radix(x, 16).unwrap_or(0);
        let prot = [('r', 1), ('w', 2), ('x', 4)].iter().filter(|(c, _)| f[1].contains(*c)).map(|(_, b)| b).sum();
        let name = f[5..].join(" ");
        let Ok(path) = CString::new(name.as_str()) else { continue };
        let (start, len) = (hex(s), hex(e).saturating_sub(hex(s)));
        mapped(pid as u32, start, len, &name);
        let rec = Record::Mmap2(Mmap2 {
            misc: MISC_USER,
            pid: pid as u32,
            tid: pid as u32,
            addr: start,
            len,
            pgoff: hex(f[2]),
            file: Mmap2File::Device {
                maj: hex(maj) as u32,
                min: hex(min) as u32,
                ino: f[4].parse().unwrap_or(0),
                ino_generation: 0,
            },
            prot,
            flags: if f[1].ends_with('p') { 2 } else { 1 }, // MAP_PRIVATE / MAP_SHARED
            filename: &path,
            sample_id: sid(pid as u32),
        });
        w.write_record(&rec, 0)?;
    }
    Ok(())
}

/// `PERF_RECORD_MISC_KERNEL`.
const MISC_KERNEL: u16 = 1;

/// The kernel's text as `/proc/kallsyms` gives it: `(start, end)` of `_text` to the last text
/// symbol outside modules; `None` where the addresses are hidden (`kptr_restrict`) or absent.
fn kernel_text() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/kallsyms").ok()?;
    let (mut start, mut end) = (None, 0u64);
    for l in text.lines() {
        let mut f = l.split_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (f.next(), f.next(), f.next()) else { continue };
        if f.next().is_some() {
            continue; // a module's symbol: "[module]" follows
        }
        let Ok(addr) = u64::from_str_radix(addr, 16) else { continue };
        if name == "_text" {
            start = Some(addr);
        }
        if matches!(kind, "T" | "t") {
            end = end.max(addr);
        }
    }
    let start = start.filter(|&s| s != 0)?;
    (end > start).then_some((start, end))
}

/// The kernel's map, as perf synthesizes it first (`perf_event__synthesize_kernel_mmap`): an
/// MMAP of `[kernel.kallsyms]_text` for pid -1 at `_text`, `pgoff` its address, so that
/// `perf report` attributes kernel samples to the kernel. Nothing where kallsyms hides the
/// addresses.
pub fn synthesize_kernel<W: Write>(w: &mut Writer<W>) -> Result<(), PerfDataError> {
    let (Some(ctx), Some((start, end))) = (w.context(0), kernel_text()) else { return Ok(()) };
    let sid = Some(SampleId { pid: u32::MAX, tid: 0, ..SampleId::default() }.masked(ctx.sample_type));
    let name = CString::new("[kernel.kallsyms]_text").unwrap_or_default();
    let rec = Record::Mmap(perfring::record::Mmap {
        misc: MISC_KERNEL,
        pid: u32::MAX,
        tid: 0,
        addr: start,
        len: end - start,
        pgoff: start,
        filename: &name,
        sample_id: sid,
    });
    w.write_record(&rec, 0)?;
    Ok(())
}
