//! Writing a simulated session to a `perf.data` file that the real `perf` reads.
//!
//! The file is written by `perfring_data::Writer` (perf's tools/perf/util/header.c): one VER7 `perf_event_attr`
//! with its id per event; the data section: synthesized COMM and MMAP records for the simulated
//! threads (as `perf record` synthesizes them for existing tasks), then every record the
//! consumers read, with a FINISHED_ROUND after each pass over the buffers. No feature sections.
//! The COMM and MMAP records go through the record encoder.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::io::{BufWriter, Write};

use perfring::record::{attr_flags, misc, Attr, Comm, Endian, Mmap, Record, SampleId};
use perfring_data::{Error, FileAttr, Writer};

use crate::config::SimConfig;
use crate::engine::{Out, Report};
use crate::records::{trailer, EventKind, IP_BASE};

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
pub fn write_perf_data(cfg: &SimConfig, report: &Report, path: &str) -> Result<usize, Error> {
    let e = Endian::NATIVE;
    let attrs = EventKind::ALL.iter().map(|&event| FileAttr { attr: attr(event), ids: vec![event.id()] }).collect();
    let out = std::fs::File::create(path).map_err(|error| Error::Io { offset: 0, error })?;
    let mut file = Writer::new(BufWriter::new(out), e, attrs)?;
    let mut n = 0usize;
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
    for out in &report.out {
        match out {
            Out::Record(r) => {
                file.write_raw(r, &[])?;
                n += 1;
            }
            Out::Round => file.finished_round()?,
            Out::Auxtrace(rec, bytes) => {
                // header.size is 48; the AUX bytes follow, counted only by rec.size.
                file.write_raw(&rec.encode(e), bytes)?;
                n += 1;
            }
        }
    }
    file.finish()?.flush().map_err(|error| Error::Io { offset: 0, error })?;
    Ok(n)
}
