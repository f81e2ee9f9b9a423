//! `make bench-decode`: records/s decoding perf.data captures, perfring beside
//! linux-perf-event-reader 0.10 (the parser samply uses) and perf-event-data 0.1.8
//! (perf-event2's), single thread, the same loop over the same bytes in memory.
//!
//! Inputs: `target/decode-captures/*.data`, made by `scripts/decode-captures.sh` (the demo's
//! perf.data and `perf record` captures of common options; the Makefile runs it first).
//!
//! Per record, every library walks to the record, finds its event, and decodes it:
//! * perfring: its own `Walker`, `EventSet` and, for SAMPLE, the event's `SampleView`;
//!   other records through the complete `decode`;
//! * the peers have no walker and no id map: they share one bench-local walker and id map
//!   (`bench_walk`, `IdMap`), then parse each record with their own API.
//!
//! A non-SAMPLE record is decoded whole: its body and its `sample_id` trailer (the pid, tid,
//! time and cpu a reader orders and attributes it by). perfring's complete decode and
//! perf-event-data's parse read both; linux-perf-event-reader's `parse` reads the body only,
//! so its row adds `common_data`, its call for the trailer.
//!
//! For every SAMPLE the same fields are folded (every field all three libraries return):
//! pid, tid, time, ip, period, addr, id, stream_id, cpu, callchain length and raw
//! length — each present in a capture only if its `sample_type` has it, so a lazy view pays for
//! what it is asked. Before timing, the libraries' fields are compared sample by sample; a
//! library that disagrees with perfring (or fails) on a capture is left out of that capture's
//! ratio, and the table says so.
//!
//! `decode [FILTER]` runs the captures whose name contains FILTER.

use std::collections::HashMap;
use std::hint::black_box;
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use perfring::record::{types, Attr, Endian, EventLayout, EventRecord, EventSet, IdEntry, Record, Walker};

// ---------------------------------------------------------------------------------------------
// The file, parsed once, outside the timed loops.

struct File {
    name: String,
    bytes: Vec<u8>,
    endian: Endian,
    /// Each event's raw attr bytes (attr.size of them) and ids.
    attrs: Vec<(Vec<u8>, Vec<u64>)>,
    data: Range<usize>,
}

fn u64_at(b: &[u8], at: usize, e: Endian) -> u64 {
    e.u64(b[at..at + 8].try_into().unwrap())
}

fn parse_file(path: &PathBuf) -> File {
    let bytes = std::fs::read(path).unwrap();
    let endian = if &bytes[..8] == b"PERFILE2" { Endian::Little } else { Endian::Big };
    let attr_size = u64_at(&bytes, 16, endian) as usize;
    let (ao, asz) = (u64_at(&bytes, 24, endian) as usize, u64_at(&bytes, 32, endian) as usize);
    let (d_off, d_size) = (u64_at(&bytes, 40, endian) as usize, u64_at(&bytes, 48, endian) as usize);
    let mut attrs = Vec::new();
    for at in (ao..ao + asz).step_by(attr_size) {
        let attr = bytes[at..at + attr_size - 16].to_vec();
        let (io, isz) =
            (u64_at(&bytes, at + attr_size - 16, endian) as usize, u64_at(&bytes, at + attr_size - 8, endian) as usize);
        let ids = (io..io + isz).step_by(8).map(|i| u64_at(&bytes, i, endian)).collect();
        attrs.push((attr, ids));
    }
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    File { name, bytes, endian, attrs, data: d_off..d_off + d_size }
}

#[path = "common/fields.rs"]
mod fields;
use fields::{fold, Fields};

/// Which of the folded fields after RAW a capture's events write (the fold asks only for those,
/// as it asks only for what each capture has).
#[derive(Clone, Copy)]
struct TailFields {
    phys_addr: bool,
    data_page_size: bool,
    code_page_size: bool,
    regs_user: bool,
    stack_user: bool,
}

fn tail_fields(sample_type: u64) -> TailFields {
    use perfring::record::sample_type as st;
    TailFields {
        phys_addr: sample_type & st::PHYS_ADDR != 0,
        data_page_size: sample_type & st::DATA_PAGE_SIZE != 0,
        code_page_size: sample_type & st::CODE_PAGE_SIZE != 0,
        regs_user: sample_type & st::REGS_USER != 0,
        stack_user: sample_type & st::STACK_USER != 0,
    }
}

/// A decoder under test: `run` decodes every record of the data section, calling `sample` with
/// each SAMPLE's fields, and returns (records, errors). `sample` is a generic closure, so the
/// fold inlines into each library's loop and the harness adds as little as it can.
trait Decoder {
    const NAME: &'static str;
    fn prepare(file: &File) -> Self;
    fn run<F: FnMut(&Fields)>(&self, file: &File, sample: F) -> (usize, usize);
}

// ---------------------------------------------------------------------------------------------
// perfring: its own walker, event set and views.

/// How perfring reads a record (the tiers of `perfring::record`).
const VIEWS: u8 = 0;
/// The views, every folded field asked for through its accessor whatever the capture's events
/// write (as a generic tool does; an absent field is then its accessor's `None`).
const VIEWS_ALL: u8 = 1;
/// The complete decode of every record, SAMPLEs included (`match rec.decode()`), the fields
/// read from the decoded `Sample`.
const DECODE: u8 = 2;

struct Perfring<const TIER: u8> {
    set: EventSet<Vec<EventLayout>, Vec<IdEntry>>,
}

impl<const TIER: u8> Decoder for Perfring<TIER> {
    const NAME: &'static str = match TIER {
        VIEWS => "perfring views",
        VIEWS_ALL => "perfring views, every accessor",
        _ => "perfring decode",
    };
    fn prepare(file: &File) -> Self {
        let n_ids: usize = file.attrs.iter().map(|a| a.1.len()).sum();
        let mut set = EventSet::new(vec![EventLayout::EMPTY; file.attrs.len()], vec![IdEntry::EMPTY; 2 * n_ids]);
        for (attr, ids) in &file.attrs {
            let i = set.add_event(&Attr::from_bytes(attr, file.endian).unwrap(), file.endian).unwrap();
            for &id in ids {
                set.add_id(i, id).unwrap();
            }
        }
        Perfring { set }
    }
    #[inline(never)]
    fn run<F: FnMut(&Fields)>(&self, file: &File, sample: F) -> (usize, usize) {
        // The walk in a constant byte order, one copy per order: each field read is then one
        // load (the views read in the walk's order), as linux-perf-event-reader's parser is
        // generic over its byte order.
        match (TIER, file.endian) {
            (DECODE, Endian::Little) => perfring_decode(&self.set, file, Endian::Little, sample),
            (DECODE, Endian::Big) => perfring_decode(&self.set, file, Endian::Big, sample),
            (_, Endian::Little) => perfring_walk::<F, TIER>(&self.set, file, Endian::Little, sample),
            (_, Endian::Big) => perfring_walk::<F, TIER>(&self.set, file, Endian::Big, sample),
        }
    }
}

#[inline(always)]
fn perfring_walk<F: FnMut(&Fields), const TIER: u8>(
    set: &EventSet<Vec<EventLayout>, Vec<IdEntry>>,
    file: &File,
    endian: Endian,
    mut sample: F,
) -> (usize, usize) {
    let (mut n, mut errors) = (0, 0);
    // VIEWS asks for the fields after RAW only in a capture whose events write them;
    // VIEWS_ALL asks for every one.
    let tail = tail_fields(if TIER == VIEWS_ALL {
        u64::MAX
    } else {
        set.events().iter().fold(0, |t, e| t | e.attr().sample_type)
    });
    for r in Walker::perf_data(&file.bytes[file.data.clone()], endian) {
        let Ok(r) = r else {
            errors += 1;
            break;
        };
        n += 1;
        if r.header.type_ >= types::HEADER_ATTR {
            continue;
        }
        let rec = set.attribute(&r);
        if r.header.type_ == types::SAMPLE {
            let Ok(v) = rec.sample() else {
                errors += 1;
                continue;
            };
            let pt = v.tid();
            let f = Fields {
                pid: pt.map(|p| p.pid),
                tid: pt.map(|p| p.tid),
                time: v.time(),
                ip: v.ip(),
                period: v.period(),
                addr: v.addr(),
                // perf's `sample->id`: IDENTIFIER if the event writes it, else ID.
                id: v.identifier().or_else(|| v.id()),
                stream_id: v.stream_id(),
                cpu: v.cpu().map(|c| c.cpu),
                callchain: v.callchain().ok().flatten().map(|c| c.len()),
                raw: v.raw().ok().flatten().map(<[u8]>::len),
                phys_addr: if tail.phys_addr { v.phys_addr().ok().flatten() } else { None },
                data_page_size: if tail.data_page_size { v.data_page_size().ok().flatten() } else { None },
                code_page_size: if tail.code_page_size { v.code_page_size().ok().flatten() } else { None },
                regs_user: if tail.regs_user { v.regs_user().ok().flatten().and_then(|r| r.regs.get(0)) } else { None },
                stack_user: if tail.stack_user { v.stack_user().ok().flatten().map(|s| s.data.len()) } else { None },
            };
            sample(&f);
        } else {
            match rec.decode() {
                Ok(other) => {
                    black_box(&other);
                }
                Err(_) => errors += 1,
            }
        }
    }
    (n, errors)
}

/// The complete decode: `match rec.decode()` of every record, the loop a user writes first
/// (the result bound by value); every field of a SAMPLE read from the decode's checked view.
#[inline(always)]
fn perfring_decode<F: FnMut(&Fields)>(
    set: &EventSet<Vec<EventLayout>, Vec<IdEntry>>,
    file: &File,
    endian: Endian,
    mut sample: F,
) -> (usize, usize) {
    let (mut n, mut errors) = (0, 0);
    for r in Walker::perf_data(&file.bytes[file.data.clone()], endian) {
        let Ok(r) = r else {
            errors += 1;
            break;
        };
        n += 1;
        if r.header.type_ >= types::HEADER_ATTR {
            continue;
        }
        match set.attribute(&r).decode() {
            Ok(Record::Sample(s)) => sample(&Fields {
                pid: s.tid().map(|t| t.pid),
                tid: s.tid().map(|t| t.tid),
                time: s.time(),
                ip: s.ip(),
                period: s.period(),
                addr: s.addr(),
                id: s.identifier().or(s.id()),
                stream_id: s.stream_id(),
                cpu: s.cpu().map(|c| c.cpu),
                callchain: s.callchain().ok().flatten().map(|c| c.len()),
                raw: s.raw().ok().flatten().map(<[u8]>::len),
                phys_addr: s.phys_addr().ok().flatten(),
                data_page_size: s.data_page_size().ok().flatten(),
                code_page_size: s.code_page_size().ok().flatten(),
                regs_user: s.regs_user().ok().flatten().and_then(|r| r.regs.get(0)),
                stack_user: s.stack_user().ok().flatten().map(|s| s.data.len()),
            }),
            Ok(other) => {
                black_box(&other);
            }
            Err(_) => errors += 1,
        }
    }
    (n, errors)
}

// ---------------------------------------------------------------------------------------------
// What the peers share: a walker over the data section and an id → event map.

struct IdMap {
    ids: HashMap<u64, usize>,
    id_pos: Option<usize>,
    is_pos: Option<usize>,
    sample_id_all: bool,
    events: usize,
}

impl IdMap {
    fn new(file: &File) -> IdMap {
        let mut ids = HashMap::new();
        for (i, (_, list)) in file.attrs.iter().enumerate() {
            for &id in list {
                ids.insert(id, i);
            }
        }
        let first = Attr::from_bytes(&file.attrs[0].0, file.endian).unwrap();
        let layout = EventLayout::new(&first, file.endian);
        IdMap {
            ids,
            id_pos: layout.id_pos(),
            is_pos: layout.is_pos(),
            sample_id_all: first.has(perfring::record::attr_flags::SAMPLE_ID_ALL),
            events: file.attrs.len(),
        }
    }
    /// perf's `evlist__event2evsel`.
    #[inline]
    fn event(&self, type_: u32, rec: &[u8], e: Endian) -> Option<usize> {
        if self.events == 1 {
            return Some(0);
        }
        let words = (rec.len() - 8) / 8;
        let at = if type_ == types::SAMPLE {
            8 + 8 * self.id_pos?
        } else {
            if !self.sample_id_all {
                return Some(0);
            }
            8 + 8 * words.checked_sub(self.is_pos?)?
        };
        let id = e.u64(rec.get(at..at + 8)?.try_into().ok()?);
        if id == 0 {
            return Some(0);
        }
        self.ids.get(&id).copied()
    }
}

/// The bench-local walker: (type, misc, record bytes) of each record, AUXTRACE data skipped.
#[inline]
fn bench_walk(file: &File, mut f: impl FnMut(u32, u16, &[u8])) -> usize {
    let d = &file.bytes[file.data.clone()];
    let e = file.endian;
    let (mut pos, mut n) = (0, 0);
    while pos + 8 <= d.len() {
        let type_ = e.u32(d[pos..pos + 4].try_into().unwrap());
        let misc = e.u16(d[pos + 4..pos + 6].try_into().unwrap());
        let size = e.u16(d[pos + 6..pos + 8].try_into().unwrap()) as usize;
        if size < 8 || pos + size > d.len() {
            break;
        }
        let mut next = pos + size;
        if type_ == types::AUXTRACE {
            next += u64_at(d, pos + 8, e) as usize;
        }
        f(type_, misc, &d[pos..pos + size]);
        n += 1;
        pos = next;
    }
    n
}

// ---------------------------------------------------------------------------------------------
// linux-perf-event-reader 0.10.

mod lper {
    use super::*;
    use byteorder::{BigEndian, LittleEndian};
    use linux_perf_event_reader::{
        Endianness, EventRecord, PerfEventAttr, RawData, RawEventRecord, RecordParseInfo, RecordType,
    };

    pub struct Lper {
        map: IdMap,
        infos: Vec<RecordParseInfo>,
        /// Each event's `sample_regs_user` (to ask for the same register the others give first).
        regs_mask: Vec<u64>,
    }

    impl Decoder for Lper {
        const NAME: &'static str = "linux-perf-event-reader";
        fn prepare(file: &File) -> Self {
            let endian = match file.endian {
                Endian::Little => Endianness::LittleEndian,
                Endian::Big => Endianness::BigEndian,
            };
            let infos = file
                .attrs
                .iter()
                .map(|(a, _)| {
                    let (attr, _) = match file.endian {
                        Endian::Little => PerfEventAttr::parse::<_, LittleEndian>(&a[..]),
                        Endian::Big => PerfEventAttr::parse::<_, BigEndian>(&a[..]),
                    }
                    .unwrap();
                    RecordParseInfo::new(&attr, endian)
                })
                .collect();
            let regs_mask =
                file.attrs.iter().map(|(a, _)| Attr::from_bytes(a, file.endian).unwrap().sample_regs_user).collect();
            Lper { map: IdMap::new(file), infos, regs_mask }
        }
        #[inline(never)]
        fn run<F: FnMut(&Fields)>(&self, file: &File, mut sample: F) -> (usize, usize) {
            let mut errors = 0;
            let n = bench_walk(file, |type_, misc, rec| {
                if type_ >= types::HEADER_ATTR {
                    return;
                }
                let Some(ev) = self.map.event(type_, rec, file.endian) else {
                    errors += 1;
                    return;
                };
                let raw = RawEventRecord::new(RecordType(type_), misc, RawData::Single(&rec[8..]), self.infos[ev]);
                match raw.parse() {
                    Ok(EventRecord::Sample(s)) => sample(&fields::of_lper(&s, self.regs_mask[ev])),
                    // Its `parse` reads a non-SAMPLE record's body only; `common_data` reads the
                    // `sample_id` trailer, which the other two decode with the body.
                    Ok(other) => match raw.common_data() {
                        Ok(common) => {
                            black_box((&other, &common));
                        }
                        Err(_) => errors += 1,
                    },
                    Err(_) => errors += 1,
                }
            });
            (n, errors)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// perf-event-data 0.1.8.

mod ped {
    use super::*;
    use perf_event_data::endian::Little;
    use perf_event_data::parse::{ParseConfig, Parser};
    use perf_event_data::Record;
    use perf_event_open_sys::bindings::perf_event_attr;

    pub struct Ped {
        map: IdMap,
        configs: Vec<ParseConfig<Little>>,
    }

    impl Decoder for Ped {
        const NAME: &'static str = "perf-event-data";
        fn prepare(file: &File) -> Self {
            assert_eq!(file.endian, Endian::Little, "the perf-event-data row reads little-endian files only");
            let configs = file
                .attrs
                .iter()
                .map(|(a, _)| {
                    // Its attr parser reads past `attr.size` on short files: give it zeros there.
                    let mut padded = a.clone();
                    padded.resize(a.len().max(256), 0);
                    let attr: perf_event_attr =
                        Parser::new(&padded[..], ParseConfig::<Little>::default()).parse().unwrap();
                    ParseConfig::<Little>::from(attr)
                })
                .collect();
            Ped { map: IdMap::new(file), configs }
        }
        #[inline(never)]
        fn run<F: FnMut(&Fields)>(&self, file: &File, mut sample: F) -> (usize, usize) {
            let mut errors = 0;
            let n = bench_walk(file, |type_, _misc, rec| {
                if type_ >= types::HEADER_ATTR {
                    return;
                }
                let Some(ev) = self.map.event(type_, rec, file.endian) else {
                    errors += 1;
                    return;
                };
                let mut p = Parser::new(rec, self.configs[ev].clone());
                match p.parse::<Record>() {
                    Ok(Record::Sample(s)) => sample(&Fields {
                        pid: s.pid(),
                        tid: s.tid(),
                        time: s.time(),
                        ip: s.ip(),
                        period: s.period(),
                        addr: s.addr(),
                        id: s.id(),
                        stream_id: s.stream_id(),
                        cpu: s.cpu(),
                        callchain: s.callchain().map(<[u64]>::len),
                        raw: s.raw().map(<[u8]>::len),
                        phys_addr: s.phys_addr(),
                        data_page_size: s.data_page_size(),
                        code_page_size: s.code_page_size(),
                        regs_user: s.regs_user().and_then(|r| r.regs.first().copied()),
                        stack_user: s.stack_user().map(<[u8]>::len),
                    }),
                    Ok(other) => {
                        black_box(&other);
                    }
                    Err(_) => errors += 1,
                }
            });
            (n, errors)
        }
    }
}

// ---------------------------------------------------------------------------------------------

/// Every SAMPLE's fields, in file order, and the error count.
fn fields_of<D: Decoder>(d: &D, file: &File) -> (Vec<Fields>, usize) {
    let mut v = Vec::new();
    let (_, errors) = d.run(file, |f| v.push(*f));
    (v, errors)
}

/// Seconds per pass over the file, the pass repeated `reps` times.
fn time_pass<D: Decoder>(d: &D, file: &File, reps: usize) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..reps {
        d.run(file, |f| acc = fold(acc, f));
    }
    black_box(acc);
    t.elapsed().as_secs_f64() / reps as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with("--")).unwrap_or_default();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/decode-captures");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|_| panic!("{dir:?} missing: run scripts/decode-captures.sh (make bench-decode does)"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .filter(|p| p.to_string_lossy().contains(&filter))
        .collect();
    paths.sort();
    // `DECODE_ONLY=perfring|perfring-all|perfring-decode|lper|ped`: one library (or perfring
    // tier), `DECODE_PASSES` (20) passes per capture, no table (for callgrind: instructions per
    // record, which machine noise does not move).
    if let Ok(only) = std::env::var("DECODE_ONLY") {
        let passes = std::env::var("DECODE_PASSES").ok().and_then(|p| p.parse().ok()).unwrap_or(20);
        for path in &paths {
            let file = parse_file(path);
            let records = bench_walk(&file, |_, _, _| {});
            let t = match only.as_str() {
                "lper" => time_pass(&lper::Lper::prepare(&file), &file, passes),
                "ped" => time_pass(&ped::Ped::prepare(&file), &file, passes),
                "perfring-all" => time_pass(&Perfring::<VIEWS_ALL>::prepare(&file), &file, passes),
                "perfring-decode" => time_pass(&Perfring::<DECODE>::prepare(&file), &file, passes),
                _ => time_pass(&Perfring::<VIEWS>::prepare(&file), &file, passes),
            };
            println!("{only} {}: {records} records, {:.1} ns/record", file.name, t * 1e9 / records as f64);
        }
        return;
    }
    println!("decode: records/s, single thread, median pass of paired rounds; each ratio = median of the rounds' (peer time / perfring time)");
    println!("perfring's tiers: views (the fields each capture's events write), views asking every field (whatever the events write), the complete decode");
    println!("| capture | records | linux-perf-event-reader rec/s | views rec/s | ratio | every accessor rec/s | ratio | decode rec/s | ratio | perf-event-data rec/s | views ratio |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    // Per perfring tier, the ratios to linux-perf-event-reader (demo and captures alike), and
    // the views' to perf-event-data.
    let mut logs: [Vec<(String, f64)>; 3] = Default::default();
    let mut logs_p = Vec::new();
    for path in &paths {
        let file = parse_file(path);
        let views = Perfring::<VIEWS>::prepare(&file);
        let all = Perfring::<VIEWS_ALL>::prepare(&file);
        let dec = Perfring::<DECODE>::prepare(&file);
        let l = lper::Lper::prepare(&file);
        let p = ped::Ped::prepare(&file);
        // Agreement, sample by sample, before any timing: perfring's three tiers with each
        // other (a disagreement stops the bench), the peers with perfring.
        let (f_ours, e_ours) = fields_of(&views, &file);
        assert_eq!(e_ours, 0, "{}: perfring reported {e_ours} errors", file.name);
        for (name, (f, e)) in
            [(Perfring::<VIEWS_ALL>::NAME, fields_of(&all, &file)), (Perfring::<DECODE>::NAME, fields_of(&dec, &file))]
        {
            assert_eq!(e, 0, "{}: {name} reported {e} errors", file.name);
            assert!(f == f_ours, "{}: {name} disagrees with perfring's views", file.name);
        }
        let verdict = |name: &str, (f, e): (Vec<Fields>, usize)| -> Option<String> {
            if e != 0 {
                return Some(format!("{name}: {e} records fail to parse"));
            }
            if f.len() != f_ours.len() {
                return Some(format!("{name}: {} samples, perfring {}", f.len(), f_ours.len()));
            }
            let bad = f.iter().zip(&f_ours).filter(|(a, b)| a != b).count();
            (bad != 0).then(|| {
                let (a, b) = f.iter().zip(&f_ours).find(|(a, b)| a != b).unwrap();
                format!("{name}: {bad} samples differ, e.g. {a:?} vs perfring {b:?}")
            })
        };
        let bad_l = verdict(lper::Lper::NAME, fields_of(&l, &file));
        let bad_p = verdict(ped::Ped::NAME, fields_of(&p, &file));
        let records = bench_walk(&file, |_, _, _| {});
        // Paired rounds: a round times one pass of each library back to back (a pass repeated
        // to ~20,000 records for the small captures), so the shared machine's slow swings
        // (clock, the other core's load) fall on all alike. A rate is from the median pass; a
        // ratio is the median of the rounds' ratios.
        let reps = (20_000 / records.max(1)).max(1);
        let rounds = (4_000_000 / (records * reps)).clamp(15, 201);
        let mut t: [Vec<f64>; 5] = Default::default();
        for _ in 0..rounds {
            t[0].push(time_pass(&l, &file, reps));
            t[1].push(time_pass(&views, &file, reps));
            t[2].push(time_pass(&all, &file, reps));
            t[3].push(time_pass(&dec, &file, reps));
            t[4].push(time_pass(&p, &file, reps));
        }
        let paired = |peer: &[f64], ours: &[f64]| median(peer.iter().zip(ours).map(|(p, o)| p / o).collect());
        let x: [f64; 3] = std::array::from_fn(|k| paired(&t[0], &t[k + 1]));
        let x_p = paired(&t[4], &t[1]);
        let rate = |t: &[f64]| format!("{:.3e}", records as f64 / median(t.to_vec()));
        let ratio = |x: f64| if bad_l.is_none() { format!("{x:.2}") } else { "excluded".into() };
        let (cp, rp) = match bad_p {
            None => (rate(&t[4]), format!("{x_p:.2}")),
            Some(_) => (format!("({})", rate(&t[4])), "excluded".into()),
        };
        println!(
            "| {} | {records} | {} | {} | {} | {} | {} | {} | {} | {cp} | {rp} |",
            file.name,
            rate(&t[0]),
            rate(&t[1]),
            ratio(x[0]),
            rate(&t[2]),
            ratio(x[1]),
            rate(&t[3]),
            ratio(x[2]),
        );
        for why in bad_l.iter().chain(&bad_p) {
            println!("|   excluded: {why} | | | | | | | | | | |");
        }
        if bad_l.is_none() {
            for k in 0..3 {
                logs[k].push((file.name.clone(), x[k]));
            }
        }
        if bad_p.is_none() {
            logs_p.push(x_p.ln());
        }
    }
    let geo = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
        }
    };
    for (k, name) in ["views", "views, every accessor", "complete decode"].iter().enumerate() {
        let x: Vec<f64> = logs[k].iter().map(|(_, x)| *x).collect();
        let low = logs[k].iter().min_by(|a, b| a.1.total_cmp(&b.1));
        println!(
            "perfring {name} / linux-perf-event-reader: geometric mean {:.2}x over {} files (demo included), lowest {}",
            geo(&x),
            x.len(),
            low.map_or("-".into(), |(n, x)| format!("{x:.2}x ({n})")),
        );
    }
    let gp = if logs_p.is_empty() { f64::NAN } else { (logs_p.iter().sum::<f64>() / logs_p.len() as f64).exp() };
    println!("perfring views / perf-event-data: geometric mean {gp:.2}x over {} files", logs_p.len());
}
