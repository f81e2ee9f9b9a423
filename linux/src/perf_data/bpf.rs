//! The BPF programs already loaded, as perf record synthesizes them
//! (tools/perf/util/bpf-event.c): per JIT-compiled (sub)program a KSYMBOL record (address,
//! length, `bpf_prog_<tag>_<name>`), then a BPF_EVENT (PROG_LOAD, id, tag), so that
//! `perf report` names BPF code in samples. Programs loaded during the recording come from
//! the kernel (the tracking event's `ksymbol` and `bpf_event`).

use std::ffi::CString;
use std::io::Write;

use perfring_data::Writer;

use perfring::record::{BpfEvent, Ksymbol, Record, SampleId};

use crate::sys::BpfProg;

/// The kernel's name for (sub)program `i` of `p`, as /proc/kallsyms lists it (the BTF
/// function name, where the kernel has one, is the kernel's to give: taken from `kallsyms`
/// when it is there), else perf's rule without BTF: `bpf_prog_<tag>_<name>` for a lone
/// program, `_F` for subprograms.
fn name(p: &BpfProg, i: usize, kallsyms: &std::collections::HashMap<u64, String>) -> String {
    let (addr, _, tag) = p.funcs[i];
    if let Some(n) = kallsyms.get(&addr) {
        return n.clone();
    }
    let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    match (p.funcs.len(), p.name.is_empty()) {
        (1, false) => format!("bpf_prog_{hex}_{}", p.name),
        (1, true) => format!("bpf_prog_{hex}"),
        _ => format!("bpf_prog_{hex}_F"),
    }
}

/// The `[bpf]` symbols of /proc/kallsyms by address.
fn bpf_kallsyms() -> std::collections::HashMap<u64, String> {
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    text.lines()
        .filter(|l| l.ends_with("[bpf]"))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let addr = u64::from_str_radix(f.next()?, 16).ok()?;
            Some((addr, f.nth(1)?.to_string()))
        })
        .collect()
}

/// Write the KSYMBOL and BPF_EVENT records of every loaded program with event 0's context
/// (none without the privilege to list them: perf then warns "Couldn't synthesize bpf
/// events" and goes on, as this does); the BPF_EVENT records only with `bpf_events` (an
/// event of the file asks for them: perf's `--no-bpf-event` leaves the KSYMBOLs alone);
/// returns how many programs.
pub fn synthesize<W: Write>(w: &mut Writer<W>, bpf_events: bool) -> Result<usize, perfring_data::PerfDataError> {
    let Ok(progs) = crate::sys::bpf_programs() else { return Ok(0) };
    if progs.is_empty() {
        return Ok(0);
    }
    let kallsyms = bpf_kallsyms();
    for p in &progs {
        for (i, &(addr, len, _)) in p.funcs.iter().enumerate() {
            let Ok(n) = CString::new(name(p, i, &kallsyms)) else { continue };
            let rec = Record::Ksymbol(Ksymbol {
                misc: 0,
                addr,
                len,
                ksym_type: perfring::record::KSYMBOL_TYPE_BPF,
                flags: 0,
                name: &n,
                sample_id: Some(SampleId::default()),
            });
            w.write_record(&rec, 0)?;
        }
        if !bpf_events {
            continue;
        }
        let rec = Record::BpfEvent(BpfEvent {
            misc: 0,
            event_type: perfring::record::BPF_EVENT_PROG_LOAD,
            flags: 0,
            id: p.id,
            tag: p.tag,
            sample_id: Some(SampleId::default()),
        });
        w.write_record(&rec, 0)?;
    }
    Ok(progs.len())
}
