//! Writing a simulated session to a `perf.data` file that the real `perf` reads.
//!
//! The file is laid out by [`PerfDataWriter`] (KERNEL-NOTES §9): one VER7 `perf_event_attr`
//! with its id per event; the data section: synthesized COMM and MMAP records for the simulated
//! threads (as `perf record` synthesizes them for existing tasks), then every record the
//! consumers read, with a FINISHED_ROUND after each pass over the buffers. No feature sections.

use std::collections::BTreeSet;

use perfring::record::{attr_flags, misc, types, Attr, Endian, Header, SampleId};

use crate::config::SimConfig;
use crate::engine::{Out, Report};
use perfring_data::{PerfDataError, PerfDataWriter};
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

fn padded_string(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.push(0);
    while v.len() % 8 != 0 {
        v.push(0);
    }
    v
}

/// A non-sample record with the trailer of the first event (id 1) for `pid`/`tid`.
fn sideband(type_: u32, misc: u16, body: &[u8], pid: u32, tid: u32) -> Vec<u8> {
    let e = Endian::NATIVE;
    let (tt, sid) = trailer(EventKind::CpuClock, pid, tid, 0, 0);
    let size = 8 + body.len() + SampleId::size(tt);
    let mut out = Header { type_, misc, size: size as u16 }.to_bytes(e).to_vec();
    out.extend_from_slice(body);
    let mut t = vec![0u8; SampleId::size(tt)];
    sid.encode(tt, e, &mut t);
    out.extend_from_slice(&t);
    out
}

/// Write the session to `path`; returns the number of records in the data section.
pub fn write_perf_data(cfg: &SimConfig, report: &Report, path: &str) -> Result<usize, PerfDataError> {
    let e = Endian::NATIVE;
    let mut file = PerfDataWriter::new(e);
    for event in EventKind::ALL {
        file.add_attr(attr(event), &[event.id()]);
    }
    let mut n = 0usize;
    // COMM for every simulated thread, MMAP for every process's code.
    let threads: Vec<(u32, u32)> = (0..cfg.threads.max(1))
        .map(|i| {
            let tid = 1000 + i;
            (if i < cfg.threads.max(2) / 2 { 1000 } else { tid }, tid)
        })
        .collect();
    let pids: BTreeSet<u32> = threads.iter().map(|t| t.0).collect();
    for &(pid, tid) in &threads {
        let mut body = e.pair_u32(pid, tid).to_vec();
        body.extend_from_slice(&padded_string(&format!("sim-{tid}")));
        file.push_bytes(&sideband(types::COMM, 0, &body, pid, tid));
        n += 1;
    }
    for &pid in &pids {
        let mut body = e.pair_u32(pid, pid).to_vec();
        body.extend_from_slice(&e.put_u64(IP_BASE));
        body.extend_from_slice(&e.put_u64(1 << 40));
        body.extend_from_slice(&e.put_u64(0));
        body.extend_from_slice(&padded_string("/perfring-sim/simulated-app"));
        file.push_bytes(&sideband(types::MMAP, misc::USER, &body, pid, pid));
        n += 1;
    }
    // The kernel map, as perf synthesizes it (KERNEL-NOTES §9.8), so perf resolves kernel
    // addresses from the file and not from this machine's /proc/kallsyms.
    let ktext: u64 = 0xffff_ffff_8100_0000;
    let mut body = e.pair_u32(u32::MAX, 0).to_vec();
    body.extend_from_slice(&e.put_u64(ktext));
    body.extend_from_slice(&e.put_u64(0x0100_0000));
    body.extend_from_slice(&e.put_u64(ktext));
    body.extend_from_slice(&padded_string("[kernel.kallsyms]_text"));
    file.push_bytes(&sideband(types::MMAP, misc::KERNEL, &body, u32::MAX, 0));
    n += 1;
    file.finished_round();
    for out in &report.out {
        match out {
            Out::Record(r) => {
                file.push_bytes(r);
                n += 1;
            }
            Out::Round => file.finished_round(),
            Out::Auxtrace(rec, bytes) => {
                // header.size is 48; the AUX bytes follow, counted only by rec.size.
                file.push_bytes(&rec.encode(e));
                file.push_bytes(bytes);
                n += 1;
            }
        }
    }
    file.write(path)?;
    Ok(n)
}
