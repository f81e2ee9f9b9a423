//! Golden tests of the record decoder and encoder against the real `perf`(
//! "Decoder checks that can fail"): a round trip cannot catch a layout bug that the encoder and
//! the decoder share, so perf's own parser is the oracle.
//!
//! 1. `fixtures_decode_to_what_perf_report_prints`: the perf.data files made by
//!    `tests/fixtures/make-fixtures.sh` with `perf record` (real kernel records) decode, record by
//!    record, to the fields `perf report -D` prints for them.
//! 2. `every_record_type_and_sample_bit_written_by_us_reads_back_in_perf`: a file written with
//!    our encoder and writer, with every record type and every sample_type bit, is read by
//!    `perf report -D` (and `perf report --sort cgroup`, `perf script`) field for field.
//! 3. `big_endian_copies_decode_to_the_same_fields`: each fixture and the file of (2) re-encoded
//!    big-endian; perf reads the big-endian file exactly as the little-endian one (so the copy
//!    is right), and our decoder reads the same records from both.
//!
//! perf runs at test time; without it each test skips (a failure in CI).
#![cfg(not(loom))]

use perfring_test_support::perf_available;
use perfring_tests::perf_files::fixtures_in;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfring::record::*;
use perfring_data::{features, features::Feature, FileAttr, Reader, Writer};
use perfring_tests::decode::{decode, Ctx, Values, HEAD};

// ---------------------------------------------------------------------------------------------
// Running perf and reading its dump.

fn fixtures() -> Vec<PathBuf> {
    let v = fixtures_in(&[""]);
    assert!(v.len() >= 6, "fixtures missing in tests/fixtures: run tests/fixtures/make-fixtures.sh");
    v
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("perfring-golden-{}-{name}", std::process::id()))
}

/// Run perf; returns stdout, asserting success and printing stderr on failure.
fn perf(args: &[&str]) -> String {
    let out = Command::new("perf").args(args).output().expect("run perf");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "perf {args:?} failed: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One record as `perf report -D` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dumped {
    /// The numbers before the offset: cpu and/or time, or "-1 -1".
    prefix: Vec<String>,
    /// `header.size` from `[0x..]`.
    size: usize,
    /// Everything after `PERF_RECORD_`, whitespace-normalized.
    head: String,
    /// The lines that follow (whitespace-normalized), without perf's symbol-resolution lines.
    details: Vec<String>,
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parse `perf report -D` output into records by file offset.
fn parse_dump(text: &str) -> BTreeMap<usize, Dumped> {
    let mut out = BTreeMap::new();
    let mut current: Option<usize> = None;
    for line in text.lines() {
        if let Some((left, rest)) = line.split_once("]: PERF_RECORD_") {
            let toks: Vec<&str> = left.split_whitespace().collect();
            let n = toks.len();
            if n >= 2 && toks[n - 2].starts_with("0x") && toks[n - 1].starts_with("[0x") {
                let offset = usize::from_str_radix(&toks[n - 2][2..], 16).unwrap();
                let size = usize::from_str_radix(&toks[n - 1][3..], 16).unwrap();
                let prefix = toks[..n - 2].iter().map(|s| s.to_string()).collect();
                out.insert(offset, Dumped { prefix, size, head: norm(rest), details: Vec::new() });
                current = Some(offset);
                continue;
            }
        }
        let is_dump = line == "." || line.starts_with(". ") || line.is_empty() || line.contains("@");
        let is_symbol = line.contains(" ... thread:") || line.contains(" ...... dso:");
        if is_dump {
            if line.is_empty() || line.contains('@') {
                current = None;
            }
            continue;
        }
        let is_detail = line.starts_with(['.', ' ', '\t']);
        if let (Some(off), false, true) = (current, is_symbol, is_detail) {
            out.get_mut(&off).unwrap().details.push(norm(line));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// What perf prints for a record, computed from our decoded fields (formats observed from
// perf 6.1's `perf report -D`).

/// C's `%#lx`: "0" for zero.
fn chex(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// perf's page-size names: divide by 1024 while the quotient is above 1.
fn page_size_name(v: u64) -> String {
    if v == 0 {
        return "N/A".into();
    }
    let units = ['B', 'K', 'M', 'G', 'T', 'P', 'E'];
    let (mut n, mut i) = (v, 0);
    while n / 1024 > 1 && i < 6 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

fn abi_name(abi: u64) -> &'static str {
    match abi {
        REGS_ABI_NONE => "none",
        REGS_ABI_32 => "32-bit",
        REGS_ABI_64 => "64-bit",
        _ => "unknown",
    }
}

fn cstr(s: &std::ffi::CStr) -> String {
    String::from_utf8_lossy(s.to_bytes()).into_owned()
}

/// Context of one file for the expectations.
struct FileView<'f> {
    file: &'f Capture,
    combined_sample_type: u64,
    sample_id_all: bool,
}

impl<'f> FileView<'f> {
    fn new(file: &'f Capture) -> Self {
        let combined_sample_type = file.attrs.iter().fold(0, |a, f| a | f.attr.sample_type);
        let sample_id_all = file.attrs[0].attr.has(attr_flags::SAMPLE_ID_ALL);
        FileView { file, combined_sample_type, sample_id_all }
    }

    fn prefix(&self, cpu: Option<u32>, time: Option<u64>, sample: bool) -> Vec<String> {
        if !sample && !self.sample_id_all {
            return vec!["-1".into(), "-1".into()];
        }
        let mut p = Vec::new();
        if self.combined_sample_type & sample_type::CPU != 0 {
            p.push(cpu.unwrap_or(u32::MAX).to_string());
        }
        if self.combined_sample_type & sample_type::TIME != 0 {
            p.push(time.unwrap_or(0).to_string());
        }
        p
    }

    /// The dump perf prints for `rec` (decoded from `fr`, written by event `attr`).
    fn expect(&self, fr: &Captured<'_>, rec: &Record<'_>, attr: usize) -> Dumped {
        let a = &self.file.attrs[attr].attr;
        let sid = rec.sample_id().copied().unwrap_or_default();
        let mut details = Vec::new();
        let mut prefix = self.prefix(Some(sid.cpu.map_or(0, |c| c.cpu)), Some(sid.time.unwrap_or(0)), false);
        let head = match rec {
            Record::Sample(s) => {
                prefix = self.prefix(s.cpu().map(|c| c.cpu), s.time(), true);
                self.sample_details(fr, &s.to_sample().unwrap(), a, &mut details);
                let (pid, tid) = s.tid().map_or((-1, -1), |t| (t.pid as i32, t.tid as i32));
                format!(
                    "SAMPLE(IP, {:#x}): {pid}/{tid}: {} period: {} addr: {}",
                    rec.misc(),
                    chex(s.ip().unwrap_or(0)),
                    s.period().unwrap_or(a.sample_period),
                    chex(s.addr().unwrap_or(0))
                )
            }
            Record::Mmap(m) => format!(
                "MMAP {}/{}: [{:#x}({:#x}) @ {}]: {} {}",
                m.pid as i32,
                m.tid as i32,
                m.addr,
                m.len,
                chex(m.pgoff),
                if m.misc & misc::MMAP_DATA != 0 { 'r' } else { 'x' },
                cstr(m.filename)
            ),
            Record::Mmap2(m) => {
                let file = match m.file {
                    Mmap2File::Device { maj, min, ino, ino_generation } => {
                        format!("{maj:02x}:{min:02x} {ino} {ino_generation}")
                    }
                    Mmap2File::BuildId(id) => {
                        format!("<{}>", id.iter().map(|b| format!("{b:02x}")).collect::<String>())
                    }
                };
                let p = |bit: u32, c: char| if m.prot & bit != 0 { c } else { '-' };
                format!(
                    "MMAP2 {}/{}: [{:#x}({:#x}) @ {} {file}]: {}{}{}{} {}",
                    m.pid as i32,
                    m.tid as i32,
                    m.addr,
                    m.len,
                    chex(m.pgoff),
                    p(1, 'r'),
                    p(2, 'w'),
                    p(4, 'x'),
                    if m.flags & 1 != 0 { 's' } else { 'p' },
                    cstr(m.filename)
                )
            }
            Record::Comm(c) => format!(
                "COMM{}: {}:{}/{}",
                if c.is_exec() { " exec" } else { "" },
                cstr(c.comm),
                c.pid as i32,
                c.tid as i32
            ),
            Record::Fork(t) | Record::Exit(t) => format!(
                "{}({}:{}):({}:{})",
                if matches!(rec, Record::Fork(_)) { "FORK" } else { "EXIT" },
                t.pid as i32,
                t.tid as i32,
                t.ppid as i32,
                t.ptid as i32
            ),
            Record::Read(r) => {
                let ReadValues::Single(v) = r.values else { panic!("perf cannot read group READ records") };
                for (name, val) in
                    [("time enabled", v.time_enabled), ("time running", v.time_running), ("id", v.id), ("lost", v.lost)]
                {
                    if let Some(val) = val {
                        details.push(format!("... {name} : {val}"));
                    }
                }
                // perf prints the event's name third; `{name}` is filled in by the caller.
                format!("READ: {} {} {{name}} {}", r.pid as i32, r.tid as i32, v.value)
            }
            Record::Switch(s) => {
                format!(
                    "SWITCH {}",
                    if !s.is_out() {
                        "IN"
                    } else if s.is_preempt() {
                        "OUT preempt"
                    } else {
                        "OUT"
                    }
                )
            }
            Record::SwitchCpuWide(s) => format!(
                "SWITCH_CPU_WIDE {} {} pid/tid: {}/{}",
                if !s.is_out() {
                    "IN"
                } else if s.is_preempt() {
                    "OUT preempt"
                } else {
                    "OUT"
                },
                if s.is_out() { "next" } else { "prev" },
                s.next_prev_pid as i32,
                s.next_prev_tid as i32
            ),
            Record::Namespaces(n) => {
                let names = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];
                let links: Vec<String> = n
                    .links
                    .iter()
                    .enumerate()
                    .map(|(i, l)| format!("{i}/{}: {}/{:#x}", names.get(i).unwrap_or(&"?"), l.dev, l.ino))
                    .collect();
                // Four per line: "[0/net: dev/ino, …, 3/pid: dev/ino," then "4/user: …]".
                let chunks: Vec<String> = links.chunks(4).map(|c| c.join(", ")).collect();
                let last = chunks.len().saturating_sub(1);
                for (i, c) in chunks.iter().enumerate() {
                    let open = if i == 0 { "[" } else { "" };
                    details.push(format!("{open}{c}{}", if i == last { "]" } else { "," }));
                }
                format!("NAMESPACES {}/{} - nr_namespaces: {}", n.pid as i32, n.tid as i32, n.links.len())
            }
            Record::Cgroup(c) => format!("CGROUP cgroup: {} {}", c.id, cstr(c.path)),
            Record::Lost(l) => format!("LOST: id:{}: lost:{}", l.id, l.lost),
            // perf 6.1 prints no fields of these; the size, the trailer's cpu/time and the
            // round trip of perf's re-reading (test 3) are what is checked.
            Record::Throttle(_) => "THROTTLE: unhandled!".into(),
            Record::Unthrottle(_) => "UNTHROTTLE: unhandled!".into(),
            Record::Aux(x) => {
                let f = |bit: u64, c: &'static str| if x.flags & bit != 0 { c } else { "" };
                format!(
                    "AUX offset: {:#x} size: {:#x} flags: {:#x} [{}{}{}]",
                    x.aux_offset,
                    x.aux_size,
                    x.flags,
                    f(aux_flags::TRUNCATED, "T"),
                    f(aux_flags::OVERWRITE, "O"),
                    f(aux_flags::PARTIAL, "P")
                )
            }
            Record::ItraceStart(i) => format!("ITRACE_START pid: {} tid: {}", i.pid as i32, i.tid as i32),
            Record::LostSamples(l) => {
                format!(
                    "LOST_SAMPLES: id:{}: lost samples :{}",
                    sid.id.filter(|&i| i != 0).or(sid.identifier).unwrap_or(0),
                    l.lost
                )
            }
            Record::Ksymbol(k) => format!(
                "KSYMBOL addr {:x} len {} type {} flags 0x{:x} name {}",
                k.addr,
                k.len,
                k.ksym_type,
                k.flags,
                cstr(k.name)
            ),
            Record::BpfEvent(b) => format!("BPF_EVENT type {}, flags {}, id {}", b.event_type, b.flags, b.id),
            Record::TextPoke(t) => {
                let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ");
                details.push(format!("Old bytes: {}", hex(t.old_bytes)));
                details.push(format!("New bytes: {}", hex(t.new_bytes)));
                // `{sym}`: perf resolves the address against this machine's kallsyms.
                format!("TEXT_POKE {:x} {{sym}} old len {} new len {}", t.addr, t.old_bytes.len(), t.new_bytes.len())
            }
            Record::AuxOutputHwId(h) => format!("AUX_OUTPUT_HW_ID hw_id: {:#x}", h.hw_id),
            other => panic!("no perf format for {other:?}"),
        };
        Dumped { prefix, size: fr.bytes.len(), head: norm(&head), details }
    }

    fn sample_details(&self, fr: &Captured<'_>, s: &Sample<'_>, a: &Attr, d: &mut Vec<String>) {
        if let Some(c) = &s.callchain {
            d.push(format!("... FP chain: nr:{}", c.len()));
            for (i, ip) in c.iter().enumerate() {
                d.push(format!("..... {i:2}: {ip:016x}"));
            }
        }
        if let Some(b) = &s.branch_stack {
            // perf 6.1 does not print hw_idx (the position of everything after it checks it).
            d.push(format!("... branch stack: nr:{}", b.entries.len()));
            for (i, e) in b.entries.iter().enumerate() {
                let f = e.flags;
                let letter = |on: bool, c: &'static str| if on { c } else { "" };
                let kind = match f.branch_type() {
                    0 => "",
                    1 => "COND",
                    4 => "CALL",
                    _ => "{name}",
                };
                d.push(format!(
                    "..... {i:2}: {:016x} -> {:016x} {} cycles {}{}{}{} {{name}} {kind}",
                    e.from,
                    e.to,
                    f.cycles(),
                    letter(f.mispred(), "M"),
                    letter(f.predicted(), "P"),
                    letter(f.abort(), "A"),
                    letter(f.in_tx(), "T"),
                ));
            }
        }
        for (name, regs, mask) in [("user", s.regs_user, a.sample_regs_user), ("intr", s.regs_intr, a.sample_regs_intr)]
        {
            if let Some(r) = regs.filter(|r| r.abi != REGS_ABI_NONE) {
                d.push(format!("... {name} regs: mask {mask:#x} ABI {}", abi_name(r.abi)));
                for v in r.regs.iter() {
                    d.push(format!(".... {{reg}} {v:#018x}"));
                }
            }
        }
        if let Some(st) = &s.stack_user {
            // perf prints dyn_size and the offset of the size word in the record.
            let size_word = st.data.as_ptr() as usize - fr.bytes.as_ptr() as usize - 8;
            let dyn_size = if st.data.is_empty() { 0 } else { st.dyn_size };
            d.push(format!("... ustack: size {dyn_size}, offset {size_word:#x}"));
        }
        match s.weight {
            Some(Weight::Full(w)) => d.push(format!("... weight: {w}")),
            // perf 6.1 on x86 keeps var3_w only on powerpc (p_stage_cyc) and prints 0 here.
            Some(Weight::Struct(w)) => d.push(format!("... weight: {},{:#x},0x0", w.var1_dw, w.var2_w)),
            None => {}
        }
        if let Some(v) = s.data_src {
            d.push(format!(". data_src: {v:#x}"));
        }
        if let Some(v) = s.phys_addr {
            d.push(format!(".. phys_addr: {v:#x}"));
        }
        if let Some(v) = s.data_page_size {
            d.push(format!(".. data page size: {}", page_size_name(v)));
        }
        if let Some(v) = s.code_page_size {
            d.push(format!(".. code page size: {}", page_size_name(v)));
        }
        if let Some(v) = s.transaction {
            d.push(format!("... transaction: {v:x}"));
        }
        if let Some(r) = &s.read {
            d.push("... sample_read:".into());
            match r {
                ReadValues::Single(v) => {
                    if let Some(t) = v.time_enabled {
                        d.push(format!("...... time enabled {t:016x}"));
                    }
                    if let Some(t) = v.time_running {
                        d.push(format!("...... time running {t:016x}"));
                    }
                    let lost = v.lost.map(|l| format!(", lost {l}")).unwrap_or_default();
                    d.push(format!("..... id {:016x}, value {:016x}{lost}", v.id.unwrap_or(0), v.value));
                }
                ReadValues::Group(g) => {
                    if let Some(t) = g.time_enabled {
                        d.push(format!("...... time enabled {t:016x}"));
                    }
                    if let Some(t) = g.time_running {
                        d.push(format!("...... time running {t:016x}"));
                    }
                    d.push(format!(".... group nr {}", g.entries.len()));
                    for e in g.entries.iter() {
                        let lost = e.lost.map(|l| format!(", lost {l}")).unwrap_or_default();
                        d.push(format!("..... id {:016x}, value {:016x}{lost}", e.id.unwrap_or(0), e.value));
                    }
                }
            }
        }
        for line in d.iter_mut() {
            *line = norm(line);
        }
    }
}

/// Compare our expectation with perf's dump token by token. In ours, `{name}` and `{reg}` match
/// any one token (event, register and flag names are perf's business) and `{sym}` any number
/// of tokens (a symbol perf may or may not resolve).
fn same(ours: &str, perf: &str) -> bool {
    fn go(a: &[&str], b: &[&str]) -> bool {
        match (a.first(), b.first()) {
            (None, None) => true,
            (Some(&"{sym}"), _) => (0..=b.len()).any(|k| go(&a[1..], &b[k..])),
            (Some(x), Some(y)) => (x == y || *x == "{name}" || *x == "{reg}") && go(&a[1..], &b[1..]),
            _ => false,
        }
    }
    let a: Vec<&str> = ours.split_whitespace().collect();
    let b: Vec<&str> = perf.split_whitespace().collect();
    go(&a, &b)
}

/// Decode every record of `path` and compare it with `perf report -D`. Returns how many records
/// were compared, per type name.
fn check_file_against_perf(path: &Path) -> BTreeMap<&'static str, usize> {
    let file = Capture::open(path);
    let dump = parse_dump(&perf(&["report", "-D", "--stdio", "-i", path.to_str().unwrap()]));
    let view = FileView::new(&file);
    let mut counts = BTreeMap::new();
    let mut ours_kernel_offsets = Vec::new();
    for fr in file.records() {
        let (attr, rec) = file.decode(&fr).unwrap_or_else(|e| panic!("{path:?} at {:#x}: {e}", fr.offset));
        if let Record::Unknown { .. } = rec {
            continue;
        }
        ours_kernel_offsets.push(fr.offset);
        let attr = attr.unwrap_or_else(|| panic!("{path:?} at {:#x}: no event for {rec:?}", fr.offset));
        let theirs =
            dump.get(&fr.offset).unwrap_or_else(|| panic!("perf did not print the record at {:#x}", fr.offset));
        let ours = view.expect(&fr, &rec, attr);
        let ctx = || format!("{path:?} record at {:#x}:\n ours: {ours:#?}\nperf: {theirs:#?}\n{rec:#?}", fr.offset);
        assert_eq!(ours.size, theirs.size, "{}", ctx());
        assert_eq!(ours.prefix, theirs.prefix, "{}", ctx());
        assert!(same(&ours.head, &theirs.head), "{}", ctx());
        let their_details: Vec<&String> = theirs.details.iter().collect();
        assert_eq!(ours.details.len(), their_details.len(), "{}", ctx());
        for (o, t) in ours.details.iter().zip(their_details) {
            assert!(same(o, t), "{}\nline: {o:?} vs {t:?}", ctx());
        }
        *counts.entry(rec.name()).or_default() += 1;
    }
    // Every kernel record perf printed is one we decoded (perf's own types ≥ 64 aside).
    let perf_kernel: Vec<usize> = dump
        .iter()
        .filter(|(_, d)| {
            let name = d.head.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next().unwrap_or("");
            (1..=22).any(|t| type_name(t) == format!("PERF_RECORD_{name}"))
        })
        .map(|(o, _)| *o)
        .collect();
    ours_kernel_offsets.sort();
    assert_eq!(ours_kernel_offsets, perf_kernel, "{path:?}: the records perf printed");
    counts
}

// ---------------------------------------------------------------------------------------------
// Test 1: real `perf record` fixtures.

#[test]
fn fixtures_decode_to_what_perf_report_prints() {
    if !perf_available() {
        return;
    }
    let mut total: BTreeMap<&str, usize> = BTreeMap::new();
    for path in fixtures() {
        let counts = check_file_against_perf(&path);
        println!("{}: {counts:?}", path.file_name().unwrap().to_string_lossy());
        for (k, v) in counts {
            *total.entry(k).or_default() += v;
        }
        check_raw_tracepoint_headers(&path);
    }
    println!("all fixtures: {total:?}");
    for t in ["PERF_RECORD_SAMPLE", "PERF_RECORD_MMAP2", "PERF_RECORD_COMM", "PERF_RECORD_FORK", "PERF_RECORD_EXIT"] {
        assert!(total.get(t).copied().unwrap_or(0) > 0, "no {t} in the fixtures");
    }
    for t in ["PERF_RECORD_READ", "PERF_RECORD_SWITCH", "PERF_RECORD_SWITCH_CPU_WIDE", "PERF_RECORD_NAMESPACES"] {
        assert!(total.get(t).copied().unwrap_or(0) > 0, "no {t} in the fixtures");
    }
}

/// RAW is opaque to perf's dump; for tracepoints its first 8 bytes are the common fields
/// `{u16 common_type, u8 flags, u8 preempt_count, i32 common_pid}`: the type is the attr's
/// `config` (the tracepoint id) and the pid the sample's tid.
fn check_raw_tracepoint_headers(path: &Path) {
    let file = Capture::open(path);
    let mut n = 0;
    for fr in file.records() {
        if let (Some(i), Record::Sample(s)) = file.decode(&fr).unwrap() {
            let a = &file.attrs[i].attr;
            if let (2, Some(raw)) = (a.type_, s.raw().unwrap()) {
                assert_eq!(u64::from(file.endian.u16(raw[..2].try_into().unwrap())), a.config);
                assert_eq!(file.endian.u32(raw[4..8].try_into().unwrap()), s.tid().unwrap().tid);
                assert_eq!((raw.len() + 4) % 8, 0);
                n += 1;
            }
        }
    }
    if n > 0 {
        println!("{}: {n} tracepoint RAW payloads checked", path.file_name().unwrap().to_string_lossy());
    }
}

// ---------------------------------------------------------------------------------------------
// Test 2: a file of every record type and sample bit, written by our encoder.

/// Ids of the events in the synthetic file.
const ID_ALL: u64 = 0x1001;
const ID_FULL_WEIGHT: u64 = 0x2002;
const ID_SIDEBAND: u64 = 0x3003;
/// The id of the second counter of the group read in ID_ALL's samples (not an event of the
/// file: perf counts its values as "samples with id not present in the header").
const ID_SIBLING: u64 = 0x1111;

fn synthetic_attrs() -> Vec<(Attr, u64)> {
    use sample_type as st;
    let base = Attr {
        type_: 1, // PERF_TYPE_SOFTWARE
        size: Attr::SIZE_VER7,
        sample_period: 4000,
        flags: attr_flags::SAMPLE_ID_ALL
            | attr_flags::MMAP
            | attr_flags::COMM
            | attr_flags::TASK
            | attr_flags::MMAP2
            | attr_flags::COMM_EXEC,
        ..Attr::default()
    };
    let all = Attr {
        config: 10, // PERF_COUNT_SW_BPF_OUTPUT: perf script prints its RAW data
        sample_type: st::ALL & !st::WEIGHT,
        read_format: read_format::ALL,
        branch_sample_type: branch_sample_type::ANY | branch_sample_type::HW_INDEX,
        sample_regs_user: 0b1_0000_0101, // AX, CX, IP on x86
        sample_stack_user: 64,
        sample_regs_intr: 0b11,
        ..base
    };
    let full_weight = Attr {
        config: 0, // cpu-clock
        sample_type: st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::READ | st::WEIGHT,
        read_format: read_format::ALL & !read_format::GROUP,
        ..base
    };
    let sideband = Attr {
        config: 9, // dummy
        sample_type: st::IDENTIFIER | st::TID | st::TIME | st::CPU | st::STREAM_ID | st::ID,
        read_format: read_format::ID,
        ..base
    };
    vec![(all, ID_ALL), (full_weight, ID_FULL_WEIGHT), (sideband, ID_SIDEBAND)]
}

/// Owned storage the synthetic records borrow from.
struct Store {
    strings: Vec<CString>,
}

impl Store {
    fn new() -> Store {
        let s = |x: &str| CString::new(x).unwrap();
        Store {
            strings: vec![
                s("[kernel.kallsyms]_text"),
                s("/usr/bin/perfring-golden"),
                s("/usr/lib/libgolden.so.1"),
                s("golden"),
                s("golden-exec"),
                s("/perfring/a"),
                s("/perfring/b/deeper"),
                s("bpf_prog_0123456789abcdef_golden"),
                s("[heap]"),
            ],
        }
    }
}

const KTEXT: u64 = 0xffff_ffff_8100_0000;
const UBASE: u64 = 0x5555_5555_0000;
const CGROUP_A: u64 = 0x77;
const CGROUP_B: u64 = 0x78;
const PID: u32 = 4242;
const TID: u32 = 4243;

fn sid(ctx: &Ctx, identifier: u64, time: u64, cpu: u32) -> SampleId {
    SampleId {
        tid: Some(PidTid { pid: PID, tid: TID }),
        time: Some(time),
        id: Some(identifier),
        stream_id: Some(identifier + 1),
        cpu: Some(SampleCpu { cpu, res: 0 }),
        identifier: Some(identifier),
    }
    .masked(ctx.attr.sample_type)
}

/// The records of the synthetic file, each with the index of the event whose context encodes it.
fn synthetic_records<'a>(store: &'a Store, ctxs: &[Ctx], arrays: &'a Arrays) -> Vec<(usize, Values<'a>)> {
    let s = &store.strings;
    let sb = &ctxs[2];
    let t0 = 1_000_000;
    let side = |k: u64| Some(sid(sb, ID_SIDEBAND, t0 + k, (k % 2) as u32));
    let v: Vec<(usize, Record<'a>)> = vec![
        (
            2,
            Record::Mmap(Mmap {
                misc: misc::KERNEL,
                pid: u32::MAX,
                tid: 0,
                addr: KTEXT,
                len: 0x100_0000,
                pgoff: KTEXT,
                filename: &s[0],
                sample_id: side(0),
            }),
        ),
        (2, Record::Comm(Comm { misc: 0, pid: PID, tid: TID, comm: &s[3], sample_id: side(1) })),
        (2, Record::Comm(Comm { misc: misc::COMM_EXEC, pid: PID, tid: TID, comm: &s[4], sample_id: side(2) })),
        (
            2,
            Record::Mmap(Mmap {
                misc: misc::USER | misc::MMAP_DATA,
                pid: PID,
                tid: TID,
                addr: UBASE + 0x10_0000,
                len: 0x2000,
                pgoff: 0,
                filename: &s[8],
                sample_id: side(3),
            }),
        ),
        (
            2,
            Record::Mmap2(Mmap2 {
                misc: misc::USER,
                pid: PID,
                tid: TID,
                addr: UBASE,
                len: 0x1_0000,
                pgoff: 0x3000,
                file: Mmap2File::Device { maj: 0xfe, min: 1, ino: 123_456, ino_generation: 7 },
                prot: 5,
                flags: 2,
                filename: &s[1],
                sample_id: side(4),
            }),
        ),
        (
            2,
            Record::Mmap2(Mmap2 {
                misc: misc::USER | misc::MMAP_BUILD_ID,
                pid: PID,
                tid: TID,
                addr: UBASE + 0x1_0000,
                len: 0x8000,
                pgoff: 0,
                file: Mmap2File::BuildId(&arrays.build_id),
                prot: 7,
                flags: 1,
                filename: &s[2],
                sample_id: side(5),
            }),
        ),
        (
            2,
            Record::Fork(Task {
                misc: 0,
                pid: PID,
                ppid: PID,
                tid: TID + 1,
                ptid: TID,
                time: t0 + 6,
                sample_id: side(6),
            }),
        ),
        (2, Record::Exit(Task { misc: 0, pid: PID, ppid: 1, tid: TID + 1, ptid: 1, time: t0 + 7, sample_id: side(7) })),
        (2, Record::Throttle(Throttle { misc: 0, time: t0 + 8, id: ID_SIDEBAND, stream_id: 99, sample_id: side(8) })),
        (2, Record::Unthrottle(Throttle { misc: 0, time: t0 + 9, id: ID_SIDEBAND, stream_id: 99, sample_id: side(9) })),
        (2, Record::Lost(Lost { misc: 0, id: ID_SIDEBAND, lost: 17, sample_id: side(10) })),
        (
            1,
            Record::Read(ReadRecord {
                misc: 0,
                pid: PID,
                tid: TID,
                values: ReadValues::Single(ReadSingle {
                    value: 123_456,
                    time_enabled: Some(1000),
                    time_running: Some(900),
                    id: Some(ID_FULL_WEIGHT),
                    lost: Some(3),
                }),
                sample_id: Some(sid(&ctxs[1], ID_FULL_WEIGHT, t0 + 11, 1)),
            }),
        ),
        (2, Record::Aux(Aux { misc: 0, aux_offset: 0x1000, aux_size: 0x800, flags: 0x5, sample_id: side(12) })),
        (2, Record::ItraceStart(ItraceStart { misc: 0, pid: PID, tid: TID, sample_id: side(13) })),
        (2, Record::LostSamples(LostSamples { misc: 0, lost: 5, sample_id: side(14) })),
        (2, Record::Switch(Switch { misc: 0, sample_id: side(15) })),
        (2, Record::Switch(Switch { misc: misc::SWITCH_OUT, sample_id: side(16) })),
        (2, Record::Switch(Switch { misc: misc::SWITCH_OUT | misc::SWITCH_OUT_PREEMPT, sample_id: side(17) })),
        (
            2,
            Record::SwitchCpuWide(SwitchCpuWide {
                misc: misc::SWITCH_OUT,
                next_prev_pid: 77,
                next_prev_tid: 78,
                sample_id: side(18),
            }),
        ),
        (
            2,
            Record::SwitchCpuWide(SwitchCpuWide { misc: 0, next_prev_pid: 79, next_prev_tid: 80, sample_id: side(19) }),
        ),
        (
            2,
            Record::Namespaces(Namespaces {
                misc: 0,
                pid: PID,
                tid: TID,
                links: Entries::from_slice(&arrays.namespaces),
                sample_id: side(20),
            }),
        ),
        (
            2,
            Record::Ksymbol(Ksymbol {
                misc: 0,
                addr: KTEXT + 0x20_0000,
                len: 0x100,
                ksym_type: KSYMBOL_TYPE_BPF,
                flags: 0,
                name: &s[7],
                sample_id: side(21),
            }),
        ),
        (
            2,
            Record::BpfEvent(BpfEvent {
                misc: 0,
                event_type: BPF_EVENT_PROG_LOAD,
                flags: 0,
                id: 31,
                tag: [1, 2, 3, 4, 5, 6, 7, 8],
                sample_id: side(22),
            }),
        ),
        (2, Record::Cgroup(Cgroup { misc: 0, id: CGROUP_A, path: &s[5], sample_id: side(23) })),
        (2, Record::Cgroup(Cgroup { misc: 0, id: CGROUP_B, path: &s[6], sample_id: side(24) })),
        (
            2,
            Record::TextPoke(TextPoke {
                misc: misc::KERNEL,
                addr: KTEXT + 0x1234,
                old_bytes: &[0x0f, 0x1f, 0x44, 0x00, 0x00],
                new_bytes: &[0xe8, 0x11, 0x22, 0x33, 0x44],
                sample_id: side(25),
            }),
        ),
        (2, Record::AuxOutputHwId(AuxOutputHwId { misc: 0, hw_id: 0xabc, sample_id: side(26) })),
    ];
    let mut v: Vec<(usize, Values<'_>)> = v.into_iter().map(|(i, r)| (i, Values::Record(r))).collect();
    v.extend(arrays.samples());
    v
}

/// Arrays the synthetic samples borrow.
struct Arrays {
    build_id: [u8; 20],
    namespaces: [NamespaceLink; 7],
    callchain_k: [u64; 4],
    callchain_u: [u64; 3],
    group: [[GroupEntry; 2]; 4],
    branches: [BranchEntry; 3],
    regs_user: [u64; 3],
    regs_intr: [u64; 2],
    raw: [[u8; 12]; 4],
    stack: [u8; 64],
    aux: [u8; 16],
}

impl Arrays {
    fn new() -> Arrays {
        let mut build_id = [0u8; 20];
        for (i, b) in build_id.iter_mut().enumerate() {
            *b = 0xa0 + i as u8;
        }
        let mut stack = [0u8; 64];
        for (i, b) in stack.iter_mut().enumerate() {
            *b = i as u8;
        }
        Arrays {
            build_id,
            namespaces: core::array::from_fn(|i| NamespaceLink { dev: 4 + i as u64, ino: 0xf000_0000 + i as u64 }),
            callchain_k: [callchain::CONTEXT_KERNEL, KTEXT + 0x10, KTEXT + 0x20, callchain::CONTEXT_USER],
            callchain_u: [callchain::CONTEXT_USER, UBASE + 0x100, UBASE + 0x200],
            // Growing values: perf turns group reads into deltas and drops zero periods.
            group: core::array::from_fn(|k| {
                let k = k as u64;
                [
                    GroupEntry { value: 1000 * (k + 1), id: Some(ID_ALL), lost: Some(k) },
                    GroupEntry { value: 2000 * (k + 1), id: Some(ID_SIBLING), lost: Some(2 * k) },
                ]
            }),
            branches: [
                // mispred, 12 cycles, type COND.
                BranchEntry { from: UBASE + 0x10, to: UBASE + 0x40, flags: BranchFlags(0b0001 | 12 << 4 | 1 << 20) },
                // predicted, 3 cycles.
                BranchEntry { from: UBASE + 0x50, to: UBASE + 0x90, flags: BranchFlags(0b0010 | 3 << 4) },
                // in_tx and abort, 65535 cycles, type CALL. (No `spec`, `new_type` or `priv`: perf
                // 6.1's own `struct branch_flags` has no `spec` field, so from bit 24 on its
                // layout disagrees with the uapi's, and its big-endian renumbering with ours.)
                BranchEntry {
                    from: UBASE + 0xa0,
                    to: UBASE + 0xb0,
                    flags: BranchFlags(0b1100 | 0xffff << 4 | 4 << 20),
                },
            ],
            regs_user: [0x1111, 0x2222, UBASE + 0x123],
            regs_intr: [0xaaaa, 0xbbbb],
            raw: [*b"golden-raw-0", *b"golden-raw-1", *b"golden-raw-2", *b"golden-raw-3"],
            stack,
            aux: *b"AUX-sample-data!",
        }
    }

    /// Four samples of the every-bit event (kernel and user, each register ABI, with and
    /// without a stack dump, two cgroups) and two of the full-WEIGHT event.
    fn samples(&self) -> Vec<(usize, Values<'_>)> {
        let full = |k: u64, kernel: bool, abi: u64, stack: bool, cgroup: u64| Sample {
            misc: if kernel { misc::KERNEL } else { misc::USER | misc::EXACT_IP },
            identifier: Some(ID_ALL),
            ip: Some(if kernel { KTEXT + 0x10 + k } else { UBASE + 0x100 + k }),
            tid: Some(PidTid { pid: PID, tid: TID }),
            time: Some(2_000_000 + k),
            addr: Some(UBASE + 0x10_0000 + 8 * k),
            id: Some(ID_ALL),
            stream_id: Some(0x5757),
            cpu: Some(SampleCpu { cpu: (k % 2) as u32, res: 0 }),
            period: Some(4000 + k),
            read: Some(ReadValues::Group(ReadGroup {
                time_enabled: Some(5000 + k),
                time_running: Some(4000 + k),
                entries: Entries::from_slice(&self.group[k as usize]),
            })),
            callchain: Some(if kernel {
                Entries::from_slice(&self.callchain_k)
            } else {
                Entries::from_slice(&self.callchain_u)
            }),
            raw: Some(&self.raw[k as usize]),
            branch_stack: Some(BranchStack {
                hw_idx: Some(k),
                entries: Entries::from_slice(if k % 2 == 0 { &self.branches } else { &self.branches[..1] }),
                counters: None,
            }),
            regs_user: Some(if abi == REGS_ABI_NONE {
                Regs::NONE
            } else {
                Regs { abi, regs: Entries::from_slice(&self.regs_user) }
            }),
            stack_user: Some(if stack { StackUser { data: &self.stack, dyn_size: 40 } } else { StackUser::default() }),
            weight: Some(Weight::Struct(WeightStruct { var1_dw: 300 + k as u32, var2_w: 0x12, var3_w: 0x34 })),
            data_src: Some(0x001e_0508_0021 + k),
            transaction: Some(0xab + k),
            regs_intr: Some(Regs { abi: REGS_ABI_64, regs: Entries::from_slice(&self.regs_intr) }),
            phys_addr: Some(0x1_2345_6000 + k),
            cgroup: Some(cgroup),
            data_page_size: Some(if k % 2 == 0 { 4096 } else { 2 << 20 }),
            code_page_size: Some(if k % 2 == 0 { 0 } else { 4096 }),
            aux: Some(&self.aux),
        };
        let weight = |k: u64| Sample {
            misc: misc::USER,
            identifier: Some(ID_FULL_WEIGHT),
            ip: Some(UBASE + 0x300 + k),
            tid: Some(PidTid { pid: PID, tid: TID }),
            time: Some(3_000_000 + k),
            cpu: Some(SampleCpu { cpu: 1, res: 0 }),
            period: Some(100 + k),
            read: Some(ReadValues::Single(ReadSingle {
                value: 777 + k,
                time_enabled: Some(10),
                time_running: Some(9),
                id: Some(ID_FULL_WEIGHT),
                lost: Some(k),
            })),
            weight: Some(Weight::Full(0x1_0000_0000 + k)),
            ..Sample::default()
        };
        vec![
            (0, Values::Sample(full(0, true, REGS_ABI_64, true, CGROUP_A))),
            (0, Values::Sample(full(1, false, REGS_ABI_64, false, CGROUP_B))),
            (0, Values::Sample(full(2, false, REGS_ABI_NONE, true, CGROUP_B))),
            (0, Values::Sample(full(3, false, REGS_ABI_32, true, CGROUP_B))),
            (1, Values::Sample(weight(0))),
            (1, Values::Sample(weight(1))),
        ]
    }
}

/// Write the synthetic file in `endian`, with the records `keep` accepts; returns its path.
fn write_synthetic(endian: Endian, name: &str, keep: &dyn Fn(&Values<'_>) -> bool) -> PathBuf {
    let store = Store::new();
    let arrays = Arrays::new();
    let attrs = synthetic_attrs().into_iter().map(|(attr, id)| FileAttr { attr, ids: vec![id] }).collect();
    let mut w = Writer::new(std::io::Cursor::new(Vec::new()), endian, attrs).unwrap();
    let ctxs: Vec<Ctx> = w.attrs().iter().map(|a| Ctx { attr: a.attr, endian }).collect();
    for (i, rec) in synthetic_records(&store, &ctxs, &arrays).into_iter().filter(|(_, r)| keep(r)) {
        w.write_record(&rec, i).unwrap_or_else(|e| panic!("{e}: {rec:?}"));
    }
    w.finished_round().unwrap();
    for (bit, value) in [
        (features::HOSTNAME, "perfring-golden"),
        (features::OSRELEASE, "6.1.0-golden"),
        (features::VERSION, "6.1"),
        (features::ARCH, "x86_64"),
    ] {
        w.set_feature(bit, &Feature::String(value.into())).unwrap();
    }
    w.set_feature(features::NRCPUS, &Feature::NrCpus { available: 2, online: 2 }).unwrap();
    let path = tmp(name);
    std::fs::write(&path, w.finish().unwrap().into_inner()).unwrap();
    path
}

/// The synthetic file decodes, with our reader, to exactly the records we wrote.
fn check_synthetic_decodes(path: &Path, keep: &dyn Fn(&Values<'_>) -> bool) -> usize {
    let store = Store::new();
    let arrays = Arrays::new();
    let file = Capture::open(path);
    let ctxs: Vec<Ctx> = (0..3).map(|i| file.context(i).unwrap()).collect();
    let expected: Vec<(usize, Values<'_>)> =
        synthetic_records(&store, &ctxs, &arrays).into_iter().filter(|(_, r)| keep(r)).collect();
    let mut n = 0;
    for fr in file.records() {
        let (attr, rec) = file.decode(&fr).unwrap();
        if fr.header.type_ == types::FINISHED_ROUND {
            continue;
        }
        let (want_attr, want) = &expected[n];
        assert_eq!(attr, Some(*want_attr), "event of record {n}");
        assert_eq!(&Values::of(rec).unwrap(), want, "record {n} ({:?})", file.endian);
        n += 1;
    }
    assert_eq!(n, expected.len());
    n
}

#[test]
fn every_record_type_and_sample_bit_written_by_us_reads_back_in_perf() {
    let path = write_synthetic(Endian::Little, "all-le.data", &|_| true);
    let n = check_synthetic_decodes(&path, &|_| true);
    if !perf_available() {
        return;
    }
    let file = Capture::open(&path);
    // Between them the events set every sample_type bit, and every read_format bit.
    let bits = file.attrs.iter().fold(0, |a, f| a | f.attr.sample_type);
    assert_eq!(bits, sample_type::ALL);
    assert_eq!(file.attrs[0].attr.read_format, read_format::ALL);

    // 1. perf report -D: every record, field by field.
    let counts = check_file_against_perf(&path);
    println!("synthetic file: {n} records; perf report -D agrees on {counts:?}");
    for t in 1..=21 {
        assert!(counts.contains_key(type_name(t)), "{} not checked", type_name(t));
    }

    // 2. Fields perf's dump does not show. RAW: `perf script` prints the bpf-output payloads.
    let out = Command::new("perf").args(["script", "-F", "bpf-output", "-i", path.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for bad in ["Can't parse", "failed", "Error"] {
        assert!(!stderr.contains(bad), "perf script: {stderr}");
    }
    let mut payloads: Vec<Vec<u8>> = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let rest = match line.split_once("BPF output:") {
            Some((_, rest)) => {
                payloads.push(Vec::new());
                rest
            }
            None if line.trim_start().starts_with(|c: char| c.is_ascii_hexdigit()) && line.contains(": ") => line,
            None => continue,
        };
        // "0008: 61 77 21 00   aw!." — up to 8 bytes after the offset, then the ASCII column.
        let bytes = rest.split_once(": ").map_or("", |(_, b)| b);
        let last = payloads.last_mut().unwrap();
        for tok in bytes.split_whitespace().take(8) {
            match u8::from_str_radix(tok, 16) {
                Ok(b) if tok.len() == 2 => last.push(b),
                _ => break,
            }
        }
    }
    let arrays = Arrays::new();
    let want: Vec<Vec<u8>> = arrays.raw.iter().map(|r| r.to_vec()).collect();
    assert_eq!(payloads, want, "perf script's RAW payloads");

    // CGROUP: perf maps each sample's cgroup id to the path of our CGROUP records.
    let report =
        perf(&["report", "--sort", "cgroup", "--stdio", "-g", "none", "--no-children", "-i", path.to_str().unwrap()]);
    let mut names: Vec<&str> = report
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names, ["/perfring/a", "/perfring/b/deeper", "N/A"], "perf report --sort cgroup:\n{report}");
    std::fs::remove_file(&path).ok();
}

// ---------------------------------------------------------------------------------------------
// Test 3: big-endian.

/// Compare perf's dumps of the same records in the two byte orders. perf 6.1 has three bugs in
/// reading the other order, checked here to be exactly a missing byte swap: MMAP2's `prot` and
/// `flags` (`perf_event__mmap2_swap` leaves them), the READ record's `lost`
/// (`perf_event__read_swap` leaves it) and `sample_regs_intr` (`perf_event__attr_swap` leaves
/// it, so the mask and the register names it prints are wrong; the values are right).
fn compare_dumps(le: &BTreeMap<usize, Dumped>, be: &BTreeMap<usize, Dumped>, what: &str) -> (usize, usize) {
    assert_eq!(le.keys().collect::<Vec<_>>(), be.keys().collect::<Vec<_>>(), "{what}: records perf printed");
    let mut quirks = 0;
    for (off, l) in le {
        let b = &be[off];
        let ctx = || format!("{what} at {off:#x}:\n LE: {l:#?}\n BE: {b:#?}");
        assert_eq!((&l.prefix, l.size), (&b.prefix, b.size), "{}", ctx());
        if l.head != b.head {
            // perf_event__mmap2_swap leaves `prot` and `flags`: small values swapped have none
            // of PROT_READ/WRITE/EXEC or MAP_SHARED, so perf prints "---p" for every map.
            let (lt, bt): (Vec<&str>, Vec<&str>) = (l.head.split(' ').collect(), b.head.split(' ').collect());
            let at = lt.iter().position(|t| t.ends_with("]:")).map(|i| i + 1);
            let ok = l.head.starts_with("MMAP2 ")
                && lt.len() == bt.len()
                && at.is_some_and(|i| bt[i] == "---p" && lt[..i] == bt[..i] && lt[i + 1..] == bt[i + 1..]);
            assert!(ok, "{}", ctx());
            quirks += 1;
        }
        assert_eq!(l.details.len(), b.details.len(), "{}", ctx());
        for (x, y) in l.details.iter().zip(&b.details) {
            if x == y {
                continue;
            }
            let (xt, yt): (Vec<&str>, Vec<&str>) = (x.split(' ').collect(), y.split(' ').collect());
            let swapped = |a: &str, b: &str, radix: u32| {
                let p = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), radix).ok();
                matches!((p(a), p(b)), (Some(a), Some(b)) if a.swap_bytes() == b)
            };
            let ok = if x.starts_with("... lost :") {
                swapped(xt[3], yt[3], 10)
            } else if x.starts_with("... intr regs: mask") {
                xt.len() == yt.len() && swapped(xt[4], yt[4], 16) && xt[5..] == yt[5..]
            } else {
                // A register line: `.... NAME value`; the name follows the (wrong) mask.
                xt.len() == 3 && yt.len() == 3 && xt[0] == "...." && xt[2] == yt[2]
            };
            assert!(ok, "{}\nline {x:?} vs {y:?}", ctx());
            quirks += 1;
        }
    }
    (le.len(), quirks)
}

/// A copy of `file` with every kernel record re-encoded in `endian` from its decoded form (perf's
/// own records dropped but FINISHED_ROUND, no features, tracepoints presented as software
/// events). Returns the copy and, per record, the original record's bytes.
fn rewrite(file: &Capture, endian: Endian) -> (Vec<u8>, Vec<&[u8]>) {
    let attrs = file
        .attrs
        .iter()
        .map(|a| {
            let mut attr = a.attr;
            if attr.type_ == 2 {
                // A tracepoint needs the TRACING_DATA feature (event formats, in a layout of
                // its own per byte order), which the copy does not carry: present the event as
                // a bpf-output software event, whose samples perf dumps the same way.
                (attr.type_, attr.config) = (1, 10);
            }
            FileAttr { attr, ids: a.ids.clone() }
        })
        .collect();
    let mut w = Writer::new(std::io::Cursor::new(Vec::new()), endian, attrs).unwrap();
    let mut originals = Vec::new();
    for fr in file.records() {
        let (attr, rec) = file.decode(&fr).unwrap();
        match rec {
            Record::Unknown { header, .. } if header.type_ == types::FINISHED_ROUND => w.finished_round().unwrap(),
            Record::Unknown { .. } => continue,
            rec => {
                w.write_record(&rec, attr.unwrap()).unwrap();
                originals.push(fr.bytes);
            }
        }
    }
    (w.finish().unwrap().into_inner(), originals)
}

#[test]
fn big_endian_copies_decode_to_the_same_fields() {
    let perf_ok = perf_available();
    // The synthetic file of test 2, written big-endian by our encoder: our reader gets the same
    // records back (every type, KSYMBOL and BPF_EVENT included).
    let be = write_synthetic(Endian::Big, "all-be.data", &|_| true);
    let n = check_synthetic_decodes(&be, &|_| true);
    println!("synthetic, big-endian: {n} records decode to what was written");
    std::fs::remove_file(&be).ok();
    if perf_ok {
        // perf 6.1 has no byte-swap for KSYMBOL and BPF_EVENT (it then reads garbage and
        // stops): leave them out of the files perf compares.
        let keep = |r: &Values<'_>| !matches!(r, Values::Record(Record::Ksymbol(_) | Record::BpfEvent(_)));
        let le = write_synthetic(Endian::Little, "perf-le.data", &keep);
        let be = write_synthetic(Endian::Big, "perf-be.data", &keep);
        let dump = |p: &Path| parse_dump(&perf(&["report", "-D", "--stdio", "-i", p.to_str().unwrap()]));
        let (records, quirks) = compare_dumps(&dump(&le), &dump(&be), "synthetic");
        println!(
            "synthetic: perf prints the same {records} records from both orders \
             ({quirks} lines differ by perf 6.1's missing swaps)"
        );
        std::fs::remove_file(&le).ok();
        std::fs::remove_file(&be).ok();
    }

    // Every fixture, copied record by record into both orders.
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let file = Capture::open(&path);
        let (le_bytes, originals) = rewrite(&file, Endian::Little);
        let (be_bytes, _) = rewrite(&file, Endian::Big);
        let le = Capture::parse(le_bytes.clone());
        let be = Capture::parse(be_bytes.clone());
        assert_eq!(be.endian, Endian::Big);
        let mut n = 0;
        let mut be_records = be.records();
        for (i, fr) in le.records().enumerate() {
            let fb = be_records.next().unwrap();
            assert_eq!((fr.offset, fr.header.size), (fb.offset, fb.header.size));
            if fr.header.type_ == types::FINISHED_ROUND {
                continue;
            }
            // The kernel's bytes re-encode exactly (strings zero-padded, sizes as written).
            assert_eq!(fr.bytes, originals[n], "{name}: record {i} re-encoded");
            let (la, lr) = le.decode(&fr).unwrap();
            let (ba, br) = be.decode(&fb).unwrap();
            let (lr, br) = (Values::of(lr).unwrap(), Values::of(br).unwrap());
            assert_eq!((la, lr), (ba, br), "{name}: record {i} in both orders");
            n += 1;
        }
        assert!(be_records.next().is_none());
        let mut line = format!("{name}: {n} records re-encode byte-exactly and decode the same from a big-endian copy");
        if perf_ok {
            let le_path = tmp(&format!("{name}-le"));
            let be_path = tmp(&format!("{name}-be"));
            std::fs::write(&le_path, &le_bytes).unwrap();
            std::fs::write(&be_path, &be_bytes).unwrap();
            let dump = |p: &Path| parse_dump(&perf(&["report", "-D", "--stdio", "-i", p.to_str().unwrap()]));
            let (records, quirks) = compare_dumps(&dump(&le_path), &dump(&be_path), &name);
            line += &format!("; perf agrees on {records} records ({quirks} perf-6.1 swap quirks)");
            std::fs::remove_file(&le_path).ok();
            std::fs::remove_file(&be_path).ok();
        }
        println!("{line}");
    }
}

// ---------------------------------------------------------------------------------------------
// Fuzz seeds: the golden records, in the input layout of `fuzz/fuzz_targets/decode.rs`.

/// `[5 × u64 LE attr fields][u8 flags][record]` for one record of `file`.
fn seed(file: &Capture, attr: usize, record: &[u8]) -> Vec<u8> {
    let a = &file.attrs[attr].attr;
    let mut s = Vec::new();
    for v in [a.sample_type, a.read_format, a.sample_regs_user, a.sample_regs_intr, a.branch_sample_type] {
        s.extend_from_slice(&v.to_le_bytes());
    }
    let flags = u8::from(a.has(attr_flags::SAMPLE_ID_ALL)) | if file.endian == Endian::Big { 2 } else { 0 };
    s.push(flags);
    s.extend_from_slice(record);
    s
}

/// Every kernel record of the fixtures and of the synthetic file, in both orders, as fuzz
/// inputs named `<type>-<le|be>-<n>`.
fn seed_inputs() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<Capture> = fixtures().iter().map(Capture::open).collect();
    for (endian, name) in [(Endian::Little, "seed-le.data"), (Endian::Big, "seed-be.data")] {
        let p = write_synthetic(endian, name, &|_| true);
        files.push(Capture::open(&p));
        std::fs::remove_file(&p).ok();
    }
    let be: Vec<Capture> =
        files.iter().take(fixtures().len()).map(|f| Capture::parse(rewrite(f, Endian::Big).0)).collect();
    files.extend(be);
    let mut out = Vec::new();
    let mut n = BTreeMap::<String, usize>::new();
    for file in &files {
        for fr in file.records() {
            let Some(attr) = file.attr_index(fr.bytes) else { continue };
            let order = if file.endian == Endian::Big { "be" } else { "le" };
            let key =
                format!("{}-{order}", type_name(fr.header.type_).trim_start_matches("PERF_RECORD_").to_lowercase());
            let k = n.entry(key.clone()).or_default();
            out.push((format!("{key}-{k}"), seed(file, attr, fr.bytes)));
            *k += 1;
        }
    }
    out
}

/// The checked-in seeds decode as the fuzz target reads them. `PERFRING_FUZZ_CORPUS=<dir>`
/// writes every golden record there (for `cargo fuzz run decode <dir>`);
/// `PERFRING_FUZZ_SEEDS=<dir>` writes the first two of each type and order (what
/// `fuzz/seeds/decode/` holds).
#[test]
fn fuzz_seeds_are_golden_records() {
    let inputs = seed_inputs();
    let write = |dir: &str, all: bool| {
        std::fs::create_dir_all(dir).unwrap();
        let mut n = 0;
        for (name, bytes) in &inputs {
            if all || name.ends_with("-0") || name.ends_with("-1") {
                std::fs::write(Path::new(dir).join(name), bytes).unwrap();
                n += 1;
            }
        }
        println!("wrote {n} fuzz inputs to {dir}");
    };
    if let Ok(dir) = std::env::var("PERFRING_FUZZ_CORPUS") {
        write(&dir, true);
    }
    if let Ok(dir) = std::env::var("PERFRING_FUZZ_SEEDS") {
        write(&dir, false);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/decode");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let (head, record) = bytes.split_at(HEAD);
        let ctx = Ctx::from_head(head.try_into().unwrap());
        let rec = decode(record, &ctx).unwrap();
        assert!(!matches!(rec, Record::Unknown { .. }));
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} seeds in {dir:?}: PERFRING_FUZZ_SEEDS=fuzz/seeds/decode cargo test ...");
    println!("{} golden fuzz inputs; {checked} checked-in seeds decode", inputs.len());
}

/// A perf.data file read once with `perfring_data::Reader`, its records kept with their
/// offset, header, bytes and event, so that tests can walk it more than once and side by side
/// with another file.
struct Capture {
    bytes: Vec<u8>,
    endian: Endian,
    attrs: Vec<FileAttr>,
    contexts: Vec<Ctx>,
    records: Vec<(usize, Header, std::ops::Range<usize>, Option<usize>)>,
}

/// One record of a [`Capture`].
#[derive(Debug, Clone, Copy)]
struct Captured<'a> {
    offset: usize,
    header: Header,
    bytes: &'a [u8],
    event: Option<usize>,
}

impl Capture {
    fn open(path: impl AsRef<Path>) -> Capture {
        Capture::parse(std::fs::read(path).unwrap())
    }

    fn parse(bytes: Vec<u8>) -> Capture {
        let mut reader = Reader::from_bytes(&bytes).unwrap();
        let (endian, attrs) = (reader.metadata().endian(), reader.metadata().attrs().to_vec());
        let contexts = attrs.iter().map(|a| Ctx { attr: a.attr, endian }).collect();
        let base = bytes.as_ptr() as usize;
        let mut records = Vec::new();
        while let Some(r) = reader.next_record().unwrap() {
            assert!(!r.decompressed(), "these tests read uncompressed files");
            let start = r.raw().bytes.as_ptr() as usize - base;
            records.push((r.raw().offset as usize, r.raw().header, start..start + r.raw().bytes.len(), r.event().ok()));
        }
        drop(reader);
        Capture { bytes, endian, attrs, contexts, records }
    }

    fn records(&self) -> impl Iterator<Item = Captured<'_>> + '_ {
        self.records.iter().map(|(offset, header, range, event)| Captured {
            offset: *offset,
            header: *header,
            bytes: &self.bytes[range.clone()],
            event: *event,
        })
    }

    fn context(&self, index: usize) -> Option<Ctx> {
        self.contexts.get(index).copied()
    }

    fn attr_index(&self, record: &[u8]) -> Option<usize> {
        let at = record.as_ptr() as usize - self.bytes.as_ptr() as usize;
        self.records.iter().find(|r| r.2.start == at).and_then(|r| r.3)
    }

    /// The record's event (the file's first for records without one) and its complete decode.
    fn decode<'a>(&self, fr: &Captured<'a>) -> Result<(Option<usize>, Record<'a>), DecodeError> {
        let ctx = fr.event.or(if self.attrs.is_empty() { None } else { Some(0) });
        let ctx = ctx.and_then(|i| self.context(i)).unwrap_or(Ctx::new(self.endian));
        Ok((fr.event, decode(fr.bytes, &ctx)?))
    }
}
