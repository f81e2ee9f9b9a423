//! Writing a simulated session to a `perf.data` file that the real `perf` reads.
//!
//! The file is written by `perfring_data::Writer` (perf's tools/perf/util/header.c): one VER7 `perf_event_attr`
//! with its id per event; the data section: synthesized COMM and MMAP records for the simulated
//! threads (as `perf record` synthesizes them for existing tasks), then every record the
//! consumers read, with a FINISHED_ROUND after each pass over the buffers. No feature sections.
//! The COMM and MMAP records go through the record encoder.
//!
//! With AUX tracing ([`crate::bts`]) the file is what `perf record -e intel_bts//u --per-thread`
//! writes: the tracer's event beside the others, a PERF_RECORD_AUXTRACE_INFO first, each
//! AUXTRACE record followed by its data; and, for perf to decode the branches, the simulated
//! program's code as an ELF file ([`crate::elf`]) written beside the output as
//! [`PROGRAM_FILE`], mapped by an MMAP record into every simulated process and listed with its
//! build-id in the BUILD_ID feature; the events are named in EVENT_DESC.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::io::{BufWriter, Write};

use perfring::record::{attr_flags, misc, Attr, Comm, Endian, Mmap, Record, SampleId};
use perfring_data::features::{self, EventDesc};
use perfring_data::{features::Feature, FileAttr, PerfDataError, Writer};

use crate::config::{AuxMode, SimConfig};
use crate::engine::{Out, Report};
use crate::program::{Program, LOAD_BASE};
use crate::records::{trailer, EventKind, IP_BASE};
use crate::{bts, elf};

/// The simulated program's ELF file, written into the output's directory by an AUX session.
pub const PROGRAM_FILE: &str = "perfring-sim-app";

/// The attr of `event` as `perf record` would have opened it (period 1, `sample_id_all`; the
/// first event, cpu-clock, also carries the COMM/MMAP/task sideband).
fn attr(event: EventKind) -> Attr {
    let (type_, config) = event.perf_type_config();
    let sideband =
        if event == EventKind::CpuClock { attr_flags::MMAP | attr_flags::COMM | attr_flags::TASK } else { 0 };
    Attr {
        type_,
        size: Attr::SIZE_VER7,
        config,
        sample_period: 1,
        sample_type: event.sample_type(),
        flags: attr_flags::SAMPLE_ID_ALL | sideband,
        ..Attr::default()
    }
}

/// The trailer of the first event (id 1) for `pid`/`tid`, as the sideband records carry it.
fn sideband_id(pid: u32, tid: u32) -> SampleId {
    trailer(EventKind::CpuClock, pid, tid, 0, 0).1
}

/// Write the session to `path`; returns the number of records in the data section.
///
/// An AUX session also writes [`PROGRAM_FILE`] into `path`'s directory (replacing it
/// atomically: every session writes the same program). perf decodes BTS per thread only: a
/// session in another mode gets AUXTRACE records with `tid` -1, whose branches perf cannot
/// attribute to a thread nor read the instructions of ("Failed to get instruction").
pub fn write_perf_data(cfg: &SimConfig, report: &Report, path: &str) -> Result<usize, PerfDataError> {
    let e = Endian::NATIVE;
    let io = |error| PerfDataError::Io { offset: 0, error };
    let aux = cfg.aux != AuxMode::Off;
    let mut attrs: Vec<FileAttr> =
        EventKind::ALL.iter().map(|&event| FileAttr { attr: attr(event), ids: vec![event.id()] }).collect();
    let program = if aux {
        attrs.push(FileAttr { attr: bts::attr(), ids: vec![bts::EVENT_ID] });
        Some(write_program(path).map_err(io)?)
    } else {
        None
    };
    let out = std::fs::File::create(path).map_err(io)?;
    let mut file = Writer::new(BufWriter::new(out), e, attrs)?;
    let mut n = 0usize;
    if let Some((elf_path, _, build_id)) = &program {
        let names = ["cpu-clock", "page-faults", "bpf-output", "task-clock", "intel_bts//u"];
        let desc = file.attrs().iter().zip(names).map(|(a, name)| EventDesc {
            attr: a.attr,
            name: name.to_string(),
            ids: a.ids.clone(),
        });
        file.set_feature(features::EVENT_DESC, &Feature::EventDesc(desc.collect()))?;
        let entry = build_id_record(build_id, elf_path);
        file.set_feature(features::BUILD_ID, &Feature::BuildIds(vec![entry]))?;
        file.write_raw(&bts::auxtrace_info(cfg.aux == AuxMode::Snapshot), &[])?;
        n += 1;
    }
    // COMM for every simulated thread, MMAP for every process's code, through the record
    // encoder with the first event's (cpu-clock's) context.
    let threads: Vec<(u32, u32)> = (0..cfg.threads.max(1))
        .map(|i| {
            let tid = 1000 + i;
            (if i < cfg.threads.max(2) / 2 { 1000 } else { tid }, tid)
        })
        .collect();
    let pids: BTreeSet<u32> = threads.iter().map(|t| t.0).collect();
    for &(pid, tid) in &threads {
        let comm = CString::new(format!("sim-{tid}")).expect("no NUL in a thread name");
        let rec = Comm { misc: 0, pid, tid, comm: &comm, sample_id: Some(sideband_id(pid, tid)) };
        file.write_record(&Record::Comm(rec), 0)?;
        n += 1;
    }
    for &pid in &pids {
        let rec = Mmap {
            misc: misc::USER,
            pid,
            tid: pid,
            addr: IP_BASE,
            len: 1 << 40,
            pgoff: 0,
            filename: c"/perfring-sim/simulated-app",
            sample_id: Some(sideband_id(pid, pid)),
        };
        file.write_record(&Record::Mmap(rec), 0)?;
        n += 1;
        if let Some((elf_path, len, _)) = &program {
            let filename = CString::new(elf_path.as_str()).map_err(|_| {
                io(std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in the program's path"))
            })?;
            let rec = Mmap {
                misc: misc::USER,
                pid,
                tid: pid,
                addr: LOAD_BASE,
                len: *len,
                pgoff: 0,
                filename: &filename,
                sample_id: Some(sideband_id(pid, pid)),
            };
            file.write_record(&Record::Mmap(rec), 0)?;
            n += 1;
        }
    }
    // The kernel map, as perf synthesizes it (perf's util/synthetic-events.c:perf_event__synthesize_kernel_mmap), so perf resolves kernel
    // addresses from the file and not from this machine's /proc/kallsyms.
    let ktext: u64 = 0xffff_ffff_8100_0000;
    let kmap = Mmap {
        misc: misc::KERNEL,
        pid: u32::MAX,
        tid: 0,
        addr: ktext,
        len: 0x0100_0000,
        pgoff: ktext,
        filename: c"[kernel.kallsyms]_text",
        sample_id: Some(sideband_id(u32::MAX, 0)),
    };
    file.write_record(&Record::Mmap(kmap), 0)?;
    n += 1;
    file.finished_round()?;
    let mut auxtrace_index = Vec::new();
    for out in &report.out {
        match out {
            Out::Record(r) => {
                file.write_raw(r, &[])?;
                n += 1;
            }
            Out::Round => file.finished_round()?,
            Out::Auxtrace(rec, bytes) => {
                auxtrace_index.push((file.data_offset() + file.data_size(), 48));
                // header.size is 48; the AUX bytes follow, counted only by rec.size.
                file.write_raw(&rec.encode(e), bytes)?;
                n += 1;
            }
        }
    }
    if aux {
        // HEADER_AUXTRACE, the index of AUXTRACE records (`auxtrace_index__write`): u64 count,
        // then {u64 file offset, u64 header size} each. perf queues every buffer from it before
        // decoding; without it, it queues each as it reads the file, and a decoder that has
        // caught up with the last queued buffer of a thread marks that queue done and never
        // decodes its later buffers (tools/perf/util/intel-bts.c:intel_bts_process_queue).
        let mut index = e.put_u64(auxtrace_index.len() as u64).to_vec();
        for (offset, size) in auxtrace_index {
            index.extend_from_slice(&e.put_u64(offset));
            index.extend_from_slice(&e.put_u64(size));
        }
        file.set_feature_bytes(features::AUXTRACE, index)?;
    }
    file.finish()?.flush().map_err(|error| PerfDataError::Io { offset: 0, error })?;
    Ok(n)
}

/// Write the simulated program's ELF beside `data_path` (to a temporary name, then renamed
/// over [`PROGRAM_FILE`]); returns its absolute path, the length to map, and its build-id.
fn write_program(data_path: &str) -> std::io::Result<(String, u64, [u8; elf::BUILD_ID_SIZE])> {
    let dir = match std::path::Path::new(data_path).parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(dir)?;
    let (image, build_id) = elf::image(&Program::new());
    let target = dir.join(PROGRAM_FILE);
    let temporary = dir.join(format!(".{PROGRAM_FILE}.{}", std::process::id()));
    std::fs::write(&temporary, &image)?;
    std::fs::rename(&temporary, &target)?;
    let path = target.into_os_string().into_string().map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the output directory's path is not UTF-8")
    })?;
    Ok((path, (image.len() as u64).next_multiple_of(4096), build_id))
}

/// One BUILD_ID feature entry as perf's `write_buildid` (tools/perf/util/build-id.c) writes it:
/// `{header (type 0; misc PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BUILD_ID_SIZE; size);
/// i32 pid (-1: the host); u8 id[20]; u8 id size; u8 pad[3]; the path, NUL-padded to 64}`.
fn build_id_record(id: &[u8; elf::BUILD_ID_SIZE], path: &str) -> Vec<u8> {
    let e = Endian::NATIVE;
    let name_len = (path.len() + 1).next_multiple_of(64);
    let size = 36 + name_len;
    let mut r = Vec::with_capacity(size);
    r.extend_from_slice(&e.put_u32(0));
    r.extend_from_slice(&e.put_u16(misc::USER | 1 << 15));
    r.extend_from_slice(&e.put_u16(size as u16));
    r.extend_from_slice(&e.put_u32(u32::MAX));
    r.extend_from_slice(id);
    r.extend_from_slice(&[elf::BUILD_ID_SIZE as u8, 0, 0, 0]);
    r.extend_from_slice(path.as_bytes());
    r.resize(size, 0);
    r
}
