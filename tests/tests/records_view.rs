//! The fast path of the decoder against the complete decode and against `perf`:
//!
//! 1. `views_agree_with_the_complete_decode_on_every_record_of_every_fixture`: every record of
//!    every fixture (real `perf record` captures), walked with `Walker`, attributed with
//!    `EventSet`, read through `SampleView`/`RecordView` — each field the views offer equals the
//!    complete `decode`'s, so the two paths cannot drift apart.
//! 2. `multi_event_captures_attribute_every_sample_to_the_event_perf_script_names`: in the
//!    captures with two events (a group with READ, two tracepoints), the event each sample is
//!    attributed to is the one `perf script` names for it.
//! 3. `fixed_layouts_agree_with_the_run_time_layouts_on_every_sample_of_every_fixture`: each
//!    fixture read again through `EventRecord::fixed` with its `sample_type` named at compile
//!    time: every sample goes to the same event and reads the same fixed fields.
//!
//! perf runs at test time for (2); without it the test skips (a failure in CI).
#![cfg(not(loom))]

use perfring_test_support::perf_available;
use perfring_tests::perf_files::fixtures_in;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfring::record::{
    types, Attr, Endian, EventLayout, EventRecord, EventSet, IdEntry, PidTid, RawRecord, ReadValues, Record, Walker,
};
use perfring_data::{FileAttr, Reader};

/// A fixture read whole by `perfring_data`: its bytes, data section and events, and the event
/// the reader attributed each record to (by the record's position in the bytes).
struct PerfData {
    bytes: Vec<u8>,
    data: std::ops::Range<usize>,
    attrs: Vec<FileAttr>,
    endian: Endian,
    events: std::collections::HashMap<usize, Option<usize>>,
}

impl PerfData {
    fn open(path: &Path) -> Result<PerfData, perfring_data::PerfDataError> {
        let bytes = std::fs::read(path).map_err(|error| perfring_data::PerfDataError::Io { offset: 0, error })?;
        let mut r = Reader::from_bytes(&bytes)?;
        let (start, end) = r.metadata().data_range();
        let (attrs, endian) = (r.metadata().attrs().to_vec(), r.metadata().endian());
        let mut events = std::collections::HashMap::new();
        while let Some(rec) = r.next_record()? {
            events.insert(rec.raw().bytes.as_ptr() as usize - bytes.as_ptr() as usize, rec.event().ok());
        }
        drop(r);
        Ok(PerfData { data: start as usize..end as usize, bytes, attrs, endian, events })
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The event perfring-data's reader gave the record at `record` (a slice of `bytes`).
    fn attr_index(&self, record: &[u8]) -> Option<usize> {
        self.events.get(&(record.as_ptr() as usize - self.bytes.as_ptr() as usize)).copied().flatten()
    }
}

fn fixtures() -> Vec<PathBuf> {
    let v = fixtures_in(&[""]);
    assert!(v.len() >= 6, "fixtures missing in tests/fixtures: run tests/fixtures/make-fixtures.sh");
    v
}

/// The event set of a file: its attrs and their ids, in `Vec` storage.
fn event_set(file: &PerfData) -> EventSet<Vec<EventLayout>, Vec<IdEntry>> {
    let n_ids: usize = file.attrs.iter().map(|a| a.ids.len()).sum();
    let mut set = EventSet::new(vec![EventLayout::EMPTY; file.attrs.len()], vec![IdEntry::EMPTY; 2 * n_ids]);
    for a in &file.attrs {
        let index = set.add_event(&a.attr, file.endian).unwrap();
        for &id in &a.ids {
            assert_eq!(set.add_id(index, id).unwrap(), None, "duplicate id {id}");
        }
    }
    set
}

fn data_section(file: &PerfData) -> &[u8] {
    &file.bytes()[file.data.clone()]
}

/// Check one record's views against its complete decode; returns whether it was a SAMPLE.
fn check_record(set: &EventSet<Vec<EventLayout>, Vec<IdEntry>>, file: &PerfData, r: &RawRecord<'_>) -> bool {
    let rec = set.attribute(r);
    let index = rec.event().unwrap_or_else(|e| panic!("record at {}: {e}", r.offset));
    // perfring-data's reader and the event set agree.
    assert_eq!(file.attr_index(r.bytes), Some(index), "record at {}", r.offset);
    let full = rec.decode().unwrap();
    let view = rec.view().unwrap();
    let what = format!("record at {} ({})", r.offset, full.name());
    if !matches!(full, Record::Unknown { .. }) {
        let wide = |v: Option<u32>| v.map(u64::from);
        let (pid, tid) = (view.tid().map(|t| t.pid), view.tid().map(|t| t.tid));
        let seen = [view.time(), view.id(), view.stream_id(), wide(view.cpu().map(|c| c.cpu)), wide(pid), wide(tid)];
        assert_eq!(seen, perfring_tests::decode::identifying(&full), "{what}: time, id, stream_id, cpu, pid, tid");
    }
    let Record::Sample(d) = full else {
        assert_eq!(rec.sample().err(), Some(perfring::record::DecodeError::NotASample { type_: r.header.type_ }));
        return false;
    };
    let v = rec.sample().unwrap();
    // The complete decode's SAMPLE is the same view, checked whole; its values the reference.
    assert_eq!(d, v, "{what}");
    let s = d.to_sample().unwrap();
    assert_eq!(r.header.misc, s.misc, "{what}");
    assert_eq!(v.exact_ip(), s.exact_ip(), "{what}");
    assert_eq!(v.identifier(), s.identifier, "{what}");
    assert_eq!(v.ip(), s.ip, "{what}");
    assert_eq!(v.tid(), s.tid, "{what}");
    assert_eq!(v.time(), s.time, "{what}");
    assert_eq!(v.addr(), s.addr, "{what}");
    assert_eq!(v.id(), s.id.or(s.identifier), "{what}: perf's sample->id, ID or else IDENTIFIER");
    assert_eq!(v.stream_id(), s.stream_id, "{what}");
    assert_eq!(v.cpu(), s.cpu, "{what}");
    assert_eq!(v.period(), s.period, "{what}");
    assert_eq!(v.read().unwrap(), s.read, "{what}");
    assert_eq!(v.callchain().unwrap(), s.callchain, "{what}");
    assert_eq!(v.raw().unwrap(), s.raw, "{what}");
    // Each field after RAW as the view reads it and as the complete decode has it, read in
    // output order on this view and in reverse order on a fresh one: each must read the same
    // whichever came first.
    type Field = (fn(&perfring::record::SampleView<'_>) -> String, fn(&perfring::record::Sample<'_>) -> String);
    let fields: [Field; 12] = [
        (|v| format!("{:?}", v.branch_stack().unwrap()), |s| format!("{:?}", s.branch_stack)),
        (|v| format!("{:?}", v.regs_user().unwrap()), |s| format!("{:?}", s.regs_user)),
        (|v| format!("{:?}", v.stack_user().unwrap()), |s| format!("{:?}", s.stack_user)),
        (|v| format!("{:?}", v.weight().unwrap()), |s| format!("{:?}", s.weight)),
        (|v| format!("{:?}", v.data_src().unwrap()), |s| format!("{:?}", s.data_src)),
        (|v| format!("{:?}", v.transaction().unwrap()), |s| format!("{:?}", s.transaction)),
        (|v| format!("{:?}", v.regs_intr().unwrap()), |s| format!("{:?}", s.regs_intr)),
        (|v| format!("{:?}", v.phys_addr().unwrap()), |s| format!("{:?}", s.phys_addr)),
        (|v| format!("{:?}", v.cgroup().unwrap()), |s| format!("{:?}", s.cgroup)),
        (|v| format!("{:?}", v.data_page_size().unwrap()), |s| format!("{:?}", s.data_page_size)),
        (|v| format!("{:?}", v.code_page_size().unwrap()), |s| format!("{:?}", s.code_page_size)),
        (|v| format!("{:?}", v.aux().unwrap()), |s| format!("{:?}", s.aux)),
    ];
    let want: Vec<String> = fields.iter().map(|(_, of)| of(&s)).collect();
    let forward: Vec<String> = fields.iter().map(|(read, _)| read(&v)).collect();
    assert_eq!(forward, want, "{what}: the fields after RAW");
    let fresh = rec.sample().unwrap();
    let mut reversed: Vec<String> = fields.iter().rev().map(|(read, _)| read(&fresh)).collect();
    reversed.reverse();
    assert_eq!(reversed, want, "{what}: the fields after RAW, read last to first");
    true
}

#[test]
fn views_agree_with_the_complete_decode_on_every_record_of_every_fixture() {
    let mut total = (0, 0);
    for path in fixtures() {
        let file = PerfData::open(&path).unwrap();
        let set = event_set(&file);
        let mut n = (0, 0);
        for r in Walker::perf_data(data_section(&file), file.endian) {
            let r = r.unwrap();
            if r.header.type_ >= types::HEADER_ATTR {
                continue;
            }
            n.0 += 1;
            n.1 += usize::from(check_record(&set, &file, &r));
        }
        println!("{}: {} records, {} samples: views and decode agree", path.display(), n.0, n.1);
        assert!(n.1 > 0, "{}: no samples", path.display());
        total = (total.0 + n.0, total.1 + n.1);
    }
    println!("all fixtures: {} records, {} samples", total.0, total.1);
}

#[test]
fn big_endian_layouts_read_the_same_fields() {
    // A SAMPLE with IDENTIFIER|IP|TID|TIME|PERIOD, written in both orders.
    use perfring::record::sample_type as st;
    use perfring_tests::decode::Ctx;
    let t = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD;
    for endian in [Endian::Little, Endian::Big] {
        let ctx = Ctx { attr: Attr { sample_type: t, ..Attr::ZERO }, endian };
        let set = perfring_tests::decode::events_of(&ctx);
        let words: [u64; 5] = [7, 0xffff_8000_1234, (42u64 << 32) | 43, 1_000_000, 4000];
        let mut rec = vec![0u8; 48];
        let hdr = perfring::record::Header { type_: types::SAMPLE, misc: 1, size: 48 };
        rec[..8].copy_from_slice(&hdr.to_bytes(endian));
        for (i, w) in words.iter().enumerate() {
            let b = match endian {
                Endian::Little => w.to_le_bytes(),
                Endian::Big => w.to_be_bytes(),
            };
            rec[8 + 8 * i..16 + 8 * i].copy_from_slice(&b);
        }
        // TID is two u32s in the record's order: pid first.
        let (pid, tid) = (42u32, 43u32);
        let pair: Vec<u8> = match endian {
            Endian::Little => [pid.to_le_bytes(), tid.to_le_bytes()].concat(),
            Endian::Big => [pid.to_be_bytes(), tid.to_be_bytes()].concat(),
        };
        rec[24..32].copy_from_slice(&pair);
        let raw = perfring_tests::decode::raw(&rec, &ctx).unwrap();
        let r = set.attribute(&raw);
        let v = r.sample().unwrap();
        assert_eq!(
            (v.identifier(), v.ip(), v.tid()),
            (Some(7), Some(0xffff_8000_1234), Some(PidTid { pid: 42, tid: 43 }))
        );
        assert_eq!((v.time(), v.period(), v.addr(), r.raw().header.misc), (Some(1_000_000), Some(4000), None, 1));
        let Ok(decoded @ Record::Sample(s)) = r.decode() else { panic!("{:?}", r.decode()) };
        assert_eq!(
            (s.identifier(), s.ip(), s.time(), s.period(), decoded.misc()),
            (Some(7), Some(0xffff_8000_1234), Some(1_000_000), Some(4000), 1)
        );
        // A record shorter than the fixed fields is a typed error, not a short read.
        assert!(set.attribute(&RawRecord { bytes: &rec[..40], ..raw }).sample().is_err());
    }
}

/// `perf evlist -i FILE`: the event names, in attr order.
fn event_names(path: &Path) -> Vec<String> {
    let out = Command::new("perf").args(["evlist", "-i"]).arg(path).output().unwrap();
    assert!(out.status.success(), "perf evlist: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
fn multi_event_captures_attribute_every_sample_to_the_event_perf_script_names() {
    if !perf_available() {
        return;
    }
    let mut checked = 0;
    for path in fixtures() {
        let file = PerfData::open(&path).unwrap();
        if file.attrs.len() < 2 {
            continue;
        }
        let names = event_names(&path);
        assert_eq!(names.len(), file.attrs.len(), "{}: {names:?}", path.display());
        // Ours: (tid, time in ns) → event name, for every sample.
        let set = event_set(&file);
        let mut samples = Vec::new();
        for r in Walker::perf_data(data_section(&file), file.endian) {
            let r = r.unwrap();
            if r.header.type_ == types::SAMPLE {
                samples.push(r);
            }
        }
        // perf delivers samples in time order; a sample that READs a group stands for one
        // sample per member, attributed by the member's id, and only when that member's count
        // moved since its last sample (`deliver_sample_group`, `deliver_sample_value`).
        samples.sort_by_key(|r| set.attribute(r).sample().unwrap().time());
        let mut last: BTreeMap<u64, u64> = BTreeMap::new();
        let mut ours: BTreeMap<(u32, u64), Vec<String>> = BTreeMap::new();
        for r in &samples {
            let rec = set.attribute(r);
            let (index, v) = (rec.event().unwrap(), rec.sample().unwrap());
            let key = (v.tid().unwrap().tid, v.time().unwrap());
            match v.read().unwrap() {
                Some(ReadValues::Group(g)) => {
                    for e in g.entries.iter() {
                        let id = e.id.expect("group READ without ids");
                        let before = last.insert(id, e.value).unwrap_or(0);
                        if e.value != before {
                            let member = set.event_of_id(id).expect("READ entry id of no event");
                            ours.entry(key).or_default().push(names[member].clone());
                        }
                    }
                }
                _ => ours.entry(key).or_default().push(names[index].clone()),
            }
        }
        // perf's: `perf script -F tid,time,event --ns` prints "tid secs.nanos: name:".
        let out =
            Command::new("perf").args(["script", "-F", "tid,time,event", "--ns", "-i"]).arg(&path).output().unwrap();
        assert!(out.status.success(), "perf script: {}", String::from_utf8_lossy(&out.stderr));
        let mut theirs: BTreeMap<(u32, u64), Vec<String>> = BTreeMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let toks: Vec<&str> = line.split_whitespace().collect();
            let Some(i) = toks.iter().position(|t| t.ends_with(':') && t.contains('.')) else { continue };
            let (Ok(tid), Some(name)) = (toks[i - 1].parse::<u32>(), toks.get(i + 1)) else { continue };
            let (secs, nanos) = toks[i].trim_end_matches(':').split_once('.').unwrap();
            let time = secs.parse::<u64>().unwrap() * 1_000_000_000 + nanos.parse::<u64>().unwrap();
            theirs.entry((tid, time)).or_default().push(name.trim_end_matches(':').to_string());
        }
        for v in ours.values_mut().chain(theirs.values_mut()) {
            v.sort();
        }
        let n: usize = ours.values().map(Vec::len).sum();
        assert!(n > 0, "{}: no samples", path.display());
        assert_eq!(ours, theirs, "{}: events per (tid, time) differ from perf script", path.display());
        println!("{}: {n} samples of {} events attributed as perf script names them", path.display(), names.len());
        checked += 1;
    }
    assert!(checked >= 2, "fewer than two multi-event fixtures");
}

/// Every SAMPLE of `file` through `EventRecord::fixed::<ST>`: the same fixed fields as the
/// event's run-time view. Returns the samples checked.
fn fixed_agrees<const ST: u64>(file: &PerfData, set: &EventSet<Vec<EventLayout>, Vec<IdEntry>>) -> usize {
    let mut n = 0;
    for r in Walker::perf_data(data_section(file), file.endian) {
        let r = r.unwrap();
        if r.header.type_ != types::SAMPLE {
            continue;
        }
        let rec = set.attribute(&r);
        let f = rec.fixed::<ST>().unwrap_or_else(|e| panic!("record at {}: {e}", r.offset));
        let v = rec.sample().unwrap();
        let what = format!("sample at {}", r.offset);
        assert_eq!((f.identifier(), f.ip(), f.tid()), (v.identifier(), v.ip(), v.tid()), "{what}");
        assert_eq!((f.time(), f.addr(), f.id(), f.stream_id()), (v.time(), v.addr(), v.id(), v.stream_id()), "{what}");
        assert_eq!((f.cpu(), f.period()), (v.cpu(), v.period()), "{what}");
        n += 1;
    }
    n
}

#[test]
fn fixed_layouts_agree_with_the_run_time_layouts_on_every_sample_of_every_fixture() {
    use perfring::record::sample_type as st;
    // The fixtures' sample_types (`perf evlist -v`), each named at compile time.
    const BASE: u64 = st::IP | st::TID | st::TIME;
    const SWITCH: u64 = BASE | st::ID | st::CPU;
    const DWARF: u64 = BASE | st::ADDR | st::CALLCHAIN | st::REGS_USER | st::STACK_USER | st::REGS_INTR | st::DATA_SRC;
    const GROUP: u64 = BASE | st::READ | st::IDENTIFIER;
    const MANY: u64 = BASE
        | st::ADDR
        | st::CALLCHAIN
        | st::CPU
        | st::DATA_SRC
        | st::PHYS_ADDR
        | st::CGROUP
        | st::DATA_PAGE_SIZE
        | st::CODE_PAGE_SIZE
        | st::WEIGHT_STRUCT;
    const RAW: u64 = BASE | st::ID | st::CPU | st::PERIOD | st::RAW;
    let mut checked = 0;
    for path in fixtures() {
        let file = PerfData::open(&path).unwrap();
        let set = event_set(&file);
        let sample_type = set.event(0).unwrap().attr().sample_type;
        let n = match sample_type {
            BASE => fixed_agrees::<BASE>(&file, &set),
            SWITCH => fixed_agrees::<SWITCH>(&file, &set),
            DWARF => fixed_agrees::<DWARF>(&file, &set),
            GROUP => fixed_agrees::<GROUP>(&file, &set),
            MANY => fixed_agrees::<MANY>(&file, &set),
            RAW => fixed_agrees::<RAW>(&file, &set),
            other => panic!("{}: sample_type {other:#x}: name it here", path.display()),
        };
        assert!(n > 0, "{}: no samples", path.display());
        println!("{}: {n} samples, fixed and run-time layouts agree", path.display());
        checked += 1;
    }
    assert!(checked >= 6);
}
