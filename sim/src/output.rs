//! Writing a simulated session to a `perf.data` file that the real `perf` reads.
//!
//! Layout (KERNEL-NOTES §9): the 104-byte `perf_file_header`; one `perf_file_attr` (a 128-byte
//! VER7 `perf_event_attr` + the section of its ids) per event; the id arrays; the data section:
//! synthesized COMM and MMAP records for the simulated threads (as `perf record` synthesizes
//! them for existing tasks), then every record the consumers read, with a FINISHED_ROUND after
//! each pass over the buffers. No feature sections.

use std::collections::BTreeSet;
use std::io::Write;

use perfring::record::{misc, types, Endian, Header, SampleId};

use crate::config::SimConfig;
use crate::engine::{Out, Report};
use crate::records::{trailer, EventKind, IP_BASE};

/// `sizeof(struct perf_event_attr)` in perf 6.1 (PERF_ATTR_SIZE_VER7).
const ATTR_SIZE: usize = 128;
/// `attr.flags` bit 18: `sample_id_all`.
const SAMPLE_ID_ALL: u64 = 1 << 18;
/// `attr.flags` bits: `comm` (9), `mmap` (8), `task` (13).
const SIDEBAND: u64 = 1 << 8 | 1 << 9 | 1 << 13;

fn attr(event: EventKind) -> [u8; ATTR_SIZE] {
    let e = Endian::NATIVE;
    let mut a = [0u8; ATTR_SIZE];
    let (type_, config) = event.perf_type_config();
    a[0..4].copy_from_slice(&e.put_u32(type_));
    a[4..8].copy_from_slice(&e.put_u32(ATTR_SIZE as u32));
    a[8..16].copy_from_slice(&e.put_u64(config));
    a[16..24].copy_from_slice(&e.put_u64(1)); // sample_period
    a[24..32].copy_from_slice(&e.put_u64(event.sample_type()));
    let flags = SAMPLE_ID_ALL | if event == EventKind::CpuClock { SIDEBAND } else { 0 };
    a[40..48].copy_from_slice(&e.put_u64(flags));
    a
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
pub fn write_perf_data(cfg: &SimConfig, report: &Report, path: &str) -> std::io::Result<usize> {
    let e = Endian::NATIVE;
    let events = EventKind::ALL;
    let mut data: Vec<u8> = Vec::new();
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
        data.extend_from_slice(&sideband(types::COMM, 0, &body, pid, tid));
        n += 1;
    }
    for &pid in &pids {
        let mut body = e.pair_u32(pid, pid).to_vec();
        body.extend_from_slice(&e.put_u64(IP_BASE));
        body.extend_from_slice(&e.put_u64(1 << 40));
        body.extend_from_slice(&e.put_u64(0));
        body.extend_from_slice(&padded_string("/perfring-sim/simulated-app"));
        data.extend_from_slice(&sideband(types::MMAP, misc::USER, &body, pid, pid));
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
    data.extend_from_slice(&sideband(types::MMAP, misc::KERNEL, &body, u32::MAX, 0));
    n += 1;
    let round = Header { type_: types::FINISHED_ROUND, misc: 0, size: 8 }.to_bytes(e);
    data.extend_from_slice(&round);
    for out in &report.out {
        match out {
            Out::Record(r) => {
                data.extend_from_slice(r);
                n += 1;
            }
            Out::Round => data.extend_from_slice(&round),
            Out::Auxtrace(rec, bytes) => {
                // header.size is 48; the AUX bytes follow, counted only by rec.size.
                data.extend_from_slice(&rec.encode(e));
                data.extend_from_slice(bytes);
                n += 1;
            }
        }
    }
    // File: header | attrs | ids | data.
    let header_size = 104usize;
    let attr_entry = ATTR_SIZE + 16;
    let attrs_off = header_size;
    let ids_off = attrs_off + events.len() * attr_entry;
    let data_off = ids_off + events.len() * 8;
    let mut file = Vec::with_capacity(data_off + data.len());
    file.extend_from_slice(b"PERFILE2");
    file.extend_from_slice(&e.put_u64(header_size as u64));
    file.extend_from_slice(&e.put_u64(attr_entry as u64));
    for (off, size) in [
        (attrs_off, events.len() * attr_entry),
        (data_off, data.len()),
        (0, 0), // event_types: unused
    ] {
        file.extend_from_slice(&e.put_u64(off as u64));
        file.extend_from_slice(&e.put_u64(size as u64));
    }
    file.extend_from_slice(&[0u8; 32]); // feature bitmap: none
    for (i, ev) in events.iter().enumerate() {
        file.extend_from_slice(&attr(*ev));
        file.extend_from_slice(&e.put_u64((ids_off + 8 * i) as u64));
        file.extend_from_slice(&e.put_u64(8));
    }
    for ev in events {
        file.extend_from_slice(&e.put_u64(ev.id()));
    }
    file.extend_from_slice(&data);
    let mut f = std::fs::File::create(path)?;
    f.write_all(&file)?;
    Ok(n)
}
