//! perfring-data against the real `perf` (6.1 here) on the fixtures of
//! `tests/fixtures/make-fixtures.sh` (file, pipe, `-z`, two events, a group READ, fp and dwarf
//! callchains, tracepoints, `--switch-events`, `perf inject` output):
//!
//! * every capture reads with the record counts by type `perf report -D` prints, and the
//!   samples, in time order, are the (pid, tid, time, cpu, ip, period) tuples `perf script`
//!   prints;
//! * read ∘ write is the identity (records, attrs, ids, features), file and pipe mode,
//!   compressed or not, and `perf report` / `perf script` read what the writer wrote with no
//!   warning and print the same samples;
//! * a writer dropped before `finish` leaves a file perf reads.
//!
//! Without `perf` each test prints one skip line.

use perfring::record::types::{COMPRESSED, COMPRESSED2};
use perfring::record::EventRecord;
use perfring_test_support::perf_available;
use perfring_tests::perf_files::fixtures_in;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfring::record::{sample_type as st, types, Endian, Record};
use perfring_data::{FileAttr, Mode, Reader, Writer};

/// The fixtures of records_golden (file mode) and those of `fixtures/perf-data` (pipe, `-z`,
/// two events, `perf inject`).
fn fixtures() -> Vec<PathBuf> {
    fixtures_in(&["", "perf-data"])
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perfring-data-captures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// perf's name of a record type in `perf report -D`'s "Aggregated stats".
fn stat_name(t: u32) -> String {
    const KERNEL: [&str; 21] = [
        "MMAP",
        "LOST",
        "COMM",
        "EXIT",
        "THROTTLE",
        "UNTHROTTLE",
        "FORK",
        "READ",
        "SAMPLE",
        "MMAP2",
        "AUX",
        "ITRACE_START",
        "LOST_SAMPLES",
        "SWITCH",
        "SWITCH_CPU_WIDE",
        "NAMESPACES",
        "KSYMBOL",
        "BPF_EVENT",
        "CGROUP",
        "TEXT_POKE",
        "AUX_OUTPUT_HW_ID",
    ];
    const PERF: [&str; 19] = [
        "ATTR",
        "EVENT_TYPE",
        "TRACING_DATA",
        "BUILD_ID",
        "FINISHED_ROUND",
        "ID_INDEX",
        "AUXTRACE_INFO",
        "AUXTRACE",
        "AUXTRACE_ERROR",
        "THREAD_MAP",
        "CPU_MAP",
        "STAT_CONFIG",
        "STAT",
        "STAT_ROUND",
        "EVENT_UPDATE",
        "TIME_CONV",
        "FEATURE",
        "COMPRESSED",
        "FINISHED_INIT",
    ];
    match t {
        1..=21 => KERNEL[t as usize - 1].into(),
        64..=82 => PERF[t as usize - 64].into(),
        _ => format!("type {t}"),
    }
}

fn perf(args: &[&str]) -> (String, String) {
    let out = Command::new("perf").args(args).output().unwrap();
    assert!(out.status.success(), "perf {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The "Aggregated stats" of `perf report -D`: type name → count (TOTAL left out).
fn perf_counts(path: &Path) -> BTreeMap<String, u64> {
    let (out, _) = perf(&["report", "-D", "--stdio", "-i", path.to_str().unwrap()]);
    let mut counts = BTreeMap::new();
    let stats = out.split("Aggregated stats:").nth(1).expect("perf report -D prints its stats");
    for line in stats.lines().skip(1) {
        let Some((name, rest)) = line.split_once(" events:") else { break };
        let name = name.trim();
        let n: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
        if name != "TOTAL" {
            counts.insert(name.to_string(), n);
        }
    }
    counts
}

/// One sample as `perf script -F pid,tid,time,[cpu,]ip,period --ns` prints it.
type Tuple = (u32, u32, u64, Option<u32>, u64, u64);

fn perf_script(path: &Path, with_cpu: bool) -> (Vec<Tuple>, String) {
    let fields = if with_cpu { "pid,tid,time,cpu,ip,period" } else { "pid,tid,time,ip,period" };
    let (out, err) = perf(&["script", "--ns", "-G", "-F", fields, "-i", path.to_str().unwrap()]);
    let tuples = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut t = l.split_whitespace();
            let (pid, tid) = t.next().unwrap().split_once('/').unwrap();
            let mut cpu = None;
            let mut tok = t.next().unwrap();
            if with_cpu {
                cpu = Some(tok.trim_matches(|c| c == '[' || c == ']').parse().unwrap());
                tok = t.next().unwrap();
            }
            let (s, ns) = tok.trim_end_matches(':').split_once('.').unwrap();
            let time = s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
            let period = t.next().unwrap().parse().unwrap();
            let ip = u64::from_str_radix(t.next().unwrap(), 16).unwrap();
            (pid.parse().unwrap(), tid.parse().unwrap(), time, cpu, ip, period)
        })
        .collect();
    (tuples, err)
}

/// Our reading of a file: counts by type name, and the samples in time order.
struct Ours {
    counts: BTreeMap<String, u64>,
    samples: Vec<Tuple>,
    with_cpu: bool,
}

fn read_ours(bytes: &[u8], with_cpu_default: Option<bool>) -> Ours {
    let mut counts = BTreeMap::new();
    let mut r = Reader::from_bytes(bytes).unwrap().time_ordered();
    let mut samples = Vec::new();
    let mut with_cpu = with_cpu_default;
    while let Some(rec) = r.next_record().unwrap() {
        *counts.entry(stat_name(rec.raw().header.type_)).or_default() += 1;
        if rec.raw().header.type_ != types::SAMPLE {
            continue;
        }
        let attr = *rec.attribution().expect("every sample has its event").1.attr();
        let cpu_bit = attr.sample_type & st::CPU != 0;
        let with = *with_cpu.get_or_insert(cpu_bit);
        let Record::Sample(s) = rec.decode().unwrap() else { panic!("a SAMPLE decodes to a Sample") };
        let tid = s.tid().unwrap();
        let tuple = |period| {
            (
                tid.pid,
                tid.tid,
                s.time().unwrap(),
                if with { Some(s.cpu().unwrap().cpu) } else { None },
                s.ip().unwrap(),
                period,
            )
        };
        // A READ sample (`:S`): perf delivers one sample per counter that moved, with the
        // difference as its period (`deliver_sample_group`); the reader gives those deliveries.
        if s.read().unwrap().is_some() {
            samples.extend(rec.read_deliveries().iter().map(|d| tuple(d.period)));
            continue;
        }
        samples.push(tuple(s.period().unwrap_or(attr.sample_period)));
    }
    Ours { counts, samples, with_cpu: with_cpu.unwrap_or(false) }
}

#[test]
fn every_capture_reads_as_perf_report_and_perf_script_do() {
    if !perf_available() {
        return;
    }
    let mut kinds = BTreeMap::<&str, usize>::new();
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let ours = read_ours(&bytes, None);
        let name = path.file_name().unwrap().to_string_lossy();
        assert_eq!(ours.counts, perf_counts(&path), "{name}: record counts by type");
        let (theirs, _) = perf_script(&path, ours.with_cpu);
        assert!(!theirs.is_empty(), "{name}: perf script printed samples");
        assert_eq!(ours.samples, theirs, "{name}: samples in time order");
        let r = Reader::from_bytes(&bytes).unwrap();
        if r.metadata().mode() == Mode::Pipe {
            *kinds.entry("pipe").or_default() += 1;
        }
        if ours.counts.contains_key("COMPRESSED") {
            *kinds.entry("compressed").or_default() += 1;
        }
        println!("{name}: {} samples, {:?}", ours.samples.len(), ours.counts);
    }
    assert!(kinds.get("pipe").copied().unwrap_or(0) >= 2 && kinds.get("compressed").copied().unwrap_or(0) >= 2);
}

/// A group READ capture (`-e '{cpu-clock,task-clock}:S'`): the reader delivers each sample's
/// counters as perf does — to the member's own event, with the period since that member's
/// previous value, none for a period of 0 — which is what `perf script` prints, event for event;
/// and the record's metadata (held while walking) names the event of each id.
#[test]
fn read_samples_are_delivered_per_member_as_perf_script_prints_them() {
    if !perf_available() {
        return;
    }
    let path = fixtures().into_iter().find(|p| p.ends_with("group-read.data")).expect("the group-read fixture");
    let (out, _) = perf(&["script", "--ns", "-F", "tid,time,period,event", "-i", path.to_str().unwrap()]);
    let theirs: Vec<(u64, u64, String)> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (secs, ns) = f[1].trim_end_matches(':').split_once('.').unwrap();
            (
                secs.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap(),
                f[2].parse().unwrap(),
                f[3].trim_end_matches(':').to_string(),
            )
        })
        .collect();
    // perf's event names, by event index: the EVENT_DESC feature, in attr order.
    let (evlist, _) = perf(&["evlist", "-i", path.to_str().unwrap()]);
    let names: Vec<String> = evlist.lines().map(|l| l.trim().to_string()).collect();
    let bytes = std::fs::read(&path).unwrap();
    let mut r = Reader::from_bytes(&bytes).unwrap().time_ordered();
    let mut ours = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        for d in rec.read_deliveries() {
            assert_eq!(
                rec.metadata().event_set().event_of_id(d.id),
                Some(d.event),
                "the id's event, through the record's metadata"
            );
            assert!(rec.metadata().attrs()[d.event].ids.contains(&d.id));
            let Record::Sample(s) = rec.decode().unwrap() else { panic!("only samples deliver") };
            ours.push((s.time().unwrap(), d.period, names[d.event].clone()));
        }
    }
    assert!(ours.len() > 20 && names.len() == 2, "{} deliveries, events {names:?}", ours.len());
    assert_eq!(ours, theirs, "(time, period, event) of every delivery");
}

/// A pipe-mode tracepoint capture (`perf record -e sched:sched_switch -o -`) carries the tracing
/// data after its HEADER_TRACING_DATA record, which `header.size` does not count: core's
/// `Walker::perf_data` walks past it to every record perf reports (before, it read the tracing
/// data as a record header and stopped with a false truncation), and so does the reader.
#[test]
fn a_pipe_mode_tracepoint_capture_walks_to_its_end() {
    use perfring::record::Walker;
    if !perf_available() {
        return;
    }
    if let Err(why) = perfring_test_support::mount_tracefs() {
        return perfring_test_support::skip(why);
    }
    let path = tmp("pipe-tracepoint.data");
    let out = std::fs::File::create(&path).unwrap();
    let rec = Command::new("perf")
        .args(["record", "-q", "-e", "sched:sched_switch", "-o", "-", "--", "sh", "-c", "sleep 0.01; sleep 0.01"])
        .stdout(out)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", String::from_utf8_lossy(&rec.stderr));
    let bytes = std::fs::read(&path).unwrap();
    let mut types = BTreeMap::<u32, u64>::new();
    let mut tracing_data = 0;
    for r in Walker::perf_data(&bytes[16..], Endian::NATIVE) {
        let r = r.unwrap_or_else(|e| panic!("walking the pipe capture: {e}"));
        *types.entry(r.header.type_).or_default() += 1;
        if r.header.type_ == types::HEADER_TRACING_DATA {
            tracing_data += r.trailing.len();
            assert!(r.trailing.starts_with(b"\x17\x08\x44tracing"), "the tracing data follows its record");
        }
    }
    assert!(tracing_data > 1000, "the capture carries its tracing data: {tracing_data} bytes");
    assert!(types.get(&types::SAMPLE).copied().unwrap_or(0) >= 2, "sched_switch samples: {types:?}");
    let by_name: BTreeMap<String, u64> = types.iter().map(|(t, n)| (stat_name(*t), *n)).collect();
    assert_eq!(by_name, perf_counts(&path), "the records of the walk are the ones perf report counts");
    std::fs::remove_file(&path).ok();
}

/// Every record's offset is the one `perf report -D` prints before it, in file and pipe mode
/// alike (pipe mode counts from the end of the 16-byte pipe header: "0x98@pipe" is the record
/// at file offset 0xa8; before, the reader gave the file offset there). A record that came out
/// of a COMPRESSED record has that record's offset, as perf prints it. Compared as multisets of
/// (offset, size, type): perf prints a compressed file's records in its processing order.
#[test]
fn record_offsets_are_the_ones_perf_report_dump_prints() {
    if !perf_available() {
        return;
    }
    let mut pipe_files = 0;
    for path in fixtures() {
        let (out, _) = perf(&["report", "-D", "--stdio", "-i", path.to_str().unwrap()]);
        let mut theirs: Vec<(u64, u64, u32)> = out
            .lines()
            .filter_map(|l| {
                // "0x98@pipe [0x54]: event: 80", "0x1a8@path [0x90]: event: 69"; printf's %#x
                // prints 0 as "0@pipe".
                let (at, rest) = l.split_once('@')?;
                let at = at.strip_prefix("0x").unwrap_or(at);
                let size = rest.split_once(" [0x")?.1.split_once("]: event: ")?;
                let type_ = size.1.split_whitespace().next()?.parse().ok()?;
                Some((u64::from_str_radix(at, 16).ok()?, u64::from_str_radix(size.0, 16).ok()?, type_))
            })
            .collect();
        let bytes = std::fs::read(&path).unwrap();
        let mut r = Reader::from_bytes(&bytes).unwrap();
        pipe_files += usize::from(r.metadata().mode() == Mode::Pipe);
        let mut ours = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            // perf does not print a COMPRESSED record itself, only what it holds.
            if ![perfring::record::types::COMPRESSED, perfring::record::types::COMPRESSED2]
                .contains(&rec.raw().header.type_)
            {
                ours.push((rec.raw().offset, u64::from(rec.raw().header.size), rec.raw().header.type_));
            }
        }
        assert!(!ours.is_empty(), "{path:?}");
        ours.sort_unstable();
        theirs.sort_unstable();
        assert_eq!(ours, theirs, "{path:?}: (offset, size, type) of every record");
    }
    assert!(pipe_files >= 2, "pipe-mode captures among the fixtures");
}

/// The streaming reader (bounded reads from a `Read + Seek`) and the pipe reader (a `Read`
/// only) yield the same records as the zero-copy one.
#[test]
fn stream_pipe_and_slice_readers_agree() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let mut slice = Reader::from_bytes(&bytes).unwrap();
        let mut stream = Reader::open(&path).unwrap();
        let mut want = Vec::new();
        while let Some(r) = slice.next_record().unwrap() {
            want.push((r.raw().offset, r.event().ok(), r.raw().bytes.to_vec(), r.raw().trailing.to_vec()));
        }
        let mut got = Vec::new();
        while let Some(r) = stream.next_record().unwrap() {
            got.push((r.raw().offset, r.event().ok(), r.raw().bytes.to_vec(), r.raw().trailing.to_vec()));
        }
        assert_eq!(got, want, "{path:?}");
        assert_eq!(slice.metadata().attrs(), stream.metadata().attrs());
        // Either mode from a stream that cannot seek (`&[u8]` is Read and not Seek): the same
        // records, attrs and, once read to the end, features.
        let mut forward = Reader::from_read(&bytes[..]).unwrap();
        let mut n = 0;
        while let Some(r) = forward.next_record().unwrap() {
            assert_eq!(
                (r.raw().offset, r.event().ok(), r.raw().bytes, r.raw().trailing),
                (want[n].0, want[n].1, &want[n].2[..], &want[n].3[..])
            );
            n += 1;
        }
        assert_eq!(n, want.len(), "{path:?}");
        assert_eq!(
            (forward.metadata().attrs(), forward.metadata().warnings()),
            (slice.metadata().attrs(), slice.metadata().warnings()),
            "{path:?}"
        );
        assert!(forward.metadata().features().eq(slice.metadata().features()), "{path:?}: features");
        if slice.metadata().mode() == Mode::Pipe {
            // A pipe: `&[u8]` is Read and not Seek.
            let mut pipe = Reader::from_pipe(&bytes[..]).unwrap();
            let mut n = 0;
            while let Some(r) = pipe.next_record().unwrap() {
                assert_eq!((r.raw().offset, r.raw().bytes), (want[n].0, &want[n].2[..]));
                n += 1;
            }
            assert_eq!(n, want.len());
        }
        // Mapped.
        let f = std::fs::File::open(&path).unwrap();
        // SAFETY: the fixture is not modified while the test maps it.
        let map = unsafe { perfring_data::MappedFile::map(&f) }.unwrap();
        let mut mapped = map.reader().unwrap();
        let mut n = 0;
        while let Some(r) = mapped.next_record().unwrap() {
            assert_eq!(r.raw().bytes, &want[n].2[..]);
            n += 1;
        }
        assert_eq!(n, want.len());
    }
}

/// What a file holds, for the identity: attrs, features (pipe mode's FEATURE records become
/// features), and the records perf delivers (COMPRESSED containers and the pipe-mode
/// ATTR/FEATURE/TRACING_DATA records aside: they are how a file is written, not what it holds).
#[derive(Debug, PartialEq)]
struct Contents {
    attrs: Vec<FileAttr>,
    features: Vec<(u32, Vec<u8>)>,
    records: Vec<(Option<usize>, Vec<u8>, Vec<u8>)>,
}

fn contents(bytes: &[u8]) -> Contents {
    let mut r = Reader::from_bytes(bytes).unwrap();
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if [COMPRESSED, COMPRESSED2, types::HEADER_ATTR, types::HEADER_FEATURE, types::HEADER_TRACING_DATA]
            .contains(&rec.raw().header.type_)
        {
            continue;
        }
        records.push((rec.event().ok(), rec.raw().bytes.to_vec(), rec.raw().trailing.to_vec()));
    }
    let mut features: Vec<(u32, Vec<u8>)> = r.metadata().features().map(|(b, p)| (b, p.to_vec())).collect();
    // Pipe mode carries tracing data padded to 8 bytes.
    for (bit, p) in &mut features {
        if *bit == perfring_data::features::TRACING_DATA {
            p.resize(p.len().next_multiple_of(8), 0);
        }
    }
    features.sort();
    features.dedup_by_key(|f| f.0);
    Contents { attrs: r.metadata().attrs().to_vec(), features, records }
}

/// Write `bytes`' contents again: file or pipe mode, compressed or not.
fn rewrite(bytes: &[u8], pipe: bool, compress: bool) -> Vec<u8> {
    let mut r = Reader::from_bytes(bytes).unwrap();
    // Pipe mode: the attrs come as records; gather them first.
    let c = contents(bytes);
    let endian = r.metadata().endian();
    let out = Cursor::new(Vec::new());
    let mut w =
        if pipe { Writer::pipe(out, endian, c.attrs.clone()) } else { Writer::new(out, endian, c.attrs.clone()) }
            .unwrap();
    if compress {
        w.compress(3).unwrap();
    }
    for (bit, payload) in &c.features {
        if *bit != perfring_data::features::COMPRESSED {
            w.set_feature_bytes(*bit, payload.clone()).unwrap();
        }
    }
    while let Some(rec) = r.next_record().unwrap() {
        match rec.raw().header.type_ {
            COMPRESSED | COMPRESSED2 | types::HEADER_ATTR | types::HEADER_FEATURE | types::HEADER_TRACING_DATA => {}
            types::FINISHED_ROUND => w.finished_round().unwrap(),
            _ => w.write_raw(rec.raw().bytes, rec.raw().trailing).unwrap(),
        }
    }
    if pipe {
        w.finish_pipe().unwrap().into_inner()
    } else {
        w.finish().unwrap().into_inner()
    }
}

#[test]
fn read_then_write_is_the_identity_and_perf_reads_the_copies() {
    let perf_ok = perf_available();
    let new_lines = |err: &str, base: &str| -> Vec<String> {
        let base: Vec<&str> = base.lines().collect();
        err.lines().filter(|l| !base.contains(l) && !l.contains("lost")).map(String::from).collect()
    };
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let original = contents(&bytes);
        assert!(!original.records.is_empty());
        // What perf says of the original, once for the four copies: its samples as we read them,
        // and the warnings perf gives the original itself (missing kallsyms, lost events).
        let base = perf_ok.then(|| {
            let ours = read_ours(&bytes, None);
            let (_, script_err) = perf_script(&path, ours.with_cpu);
            let (_, report_err) = perf(&["report", "--stdio", "-i", path.to_str().unwrap()]);
            (ours, script_err, report_err)
        });
        for (pipe, compress) in [(false, false), (true, false), (false, true), (true, true)] {
            let copy = rewrite(&bytes, pipe, compress);
            let again = contents(&copy);
            // Compressing adds the COMPRESSED feature: compare the others.
            let mut want_features = original.features.clone();
            want_features.retain(|(b, _)| *b != perfring_data::features::COMPRESSED);
            let mut got_features = again.features.clone();
            got_features.retain(|(b, _)| *b != perfring_data::features::COMPRESSED);
            assert_eq!(again.attrs, original.attrs, "{name} pipe={pipe} z={compress}: attrs and ids");
            assert_eq!(got_features, want_features, "{name} pipe={pipe} z={compress}: features");
            assert_eq!(again.records.len(), original.records.len(), "{name} pipe={pipe} z={compress}: records");
            if let Some(i) = (0..again.records.len()).find(|&i| again.records[i] != original.records[i]) {
                panic!(
                    "{name} pipe={pipe} z={compress}: record {i}: {:?} vs {:?}",
                    again.records[i], original.records[i]
                );
            }
            if let Some((ours, script_err, report_err)) = &base {
                let out = tmp(&format!("{name}-{pipe}-{compress}"));
                std::fs::write(&out, &copy).unwrap();
                // No warning but those perf gives the original.
                let (theirs, err) = perf_script(&out, ours.with_cpu);
                assert_eq!(theirs, ours.samples, "{name} pipe={pipe} z={compress}: perf script of the copy");
                let extra = new_lines(&err, script_err);
                assert!(extra.is_empty(), "{name} pipe={pipe} z={compress}: perf script warned: {extra:?}");
                let (_, err) = perf(&["report", "--stdio", "-i", out.to_str().unwrap()]);
                let extra = new_lines(&err, report_err);
                assert!(extra.is_empty(), "{name} pipe={pipe} z={compress}: perf report warned: {extra:?}");
            }
        }
    }
}

/// A writer dropped mid-way (no `finish`): the header's `data.size` is the one of its last
/// `checkpoint`; perf reads the records up to there, and so do we.
#[test]
fn a_writer_dropped_before_finish_leaves_a_file_perf_reads() {
    let path = fixtures().into_iter().find(|p| p.ends_with("two-events.data")).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let original = contents(&bytes);
    let out = tmp("dropped.data");
    {
        let f = std::fs::File::create(&out).unwrap();
        let mut w = Writer::new(f, Endian::NATIVE, original.attrs.clone()).unwrap();
        for (_, rec, trailing) in &original.records {
            w.write_raw(rec, trailing).unwrap();
        }
        w.finished_round().unwrap();
        w.checkpoint().unwrap();
        // Records after the last checkpoint: perf does not see them (data.size stops before).
        w.write_raw(&original.records[0].1, &[]).unwrap();
        // Dropped here: no finish.
    }
    let written = std::fs::read(&out).unwrap();
    let mut r = Reader::from_bytes(&written).unwrap();
    assert!(r.metadata().warnings().is_empty(), "{:?}", r.metadata().warnings());
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, original.records.len() + 1, "the records and the round");
    if perf_available() {
        let ours = read_ours(&bytes, None);
        let (theirs, _) = perf_script(&out, ours.with_cpu);
        assert_eq!(theirs, ours.samples, "perf script of the unfinished file");
    }
}

/// Directory mode (`perf record --threads`), recorded at test time: the records perf reports
/// and the samples perf script prints (as multisets: perf merges the files by time, the
/// reader yields them file after file).
#[test]
fn a_threads_directory_reads_as_perf_reads_it() {
    if !perf_available() {
        return;
    }
    let dir = tmp("threads.data");
    let _ = std::fs::remove_dir_all(&dir);
    let status = Command::new("perf")
        .args(["record", "-q", "--threads", "-e", "cpu-clock", "-c", "100000", "-o", dir.to_str().unwrap()])
        .args(["--", "sh", "-c", "for i in 1 2 3; do ls -R /usr/share/doc > /dev/null; done"])
        .status()
        .unwrap();
    assert!(status.success() && dir.join("data").exists() && dir.join("data.0").exists(), "perf record --threads");
    // Reader::open sees a directory and reads it as open_dir does.
    let mut opened = Reader::open(&dir).unwrap();
    let mut by_open = Vec::new();
    while let Some(rec) = opened.next_record().unwrap() {
        by_open.push((rec.raw().offset, rec.raw().bytes.to_vec()));
    }
    let mut by_open_dir = Vec::new();
    let mut r = Reader::open_dir(&dir).unwrap();
    while let Some(rec) = r.next_record().unwrap() {
        by_open_dir.push((rec.raw().offset, rec.raw().bytes.to_vec()));
    }
    assert!(!by_open.is_empty() && by_open == by_open_dir, "Reader::open of a directory");
    let mut r = Reader::open_dir(&dir).unwrap();
    let mut counts = BTreeMap::new();
    let mut samples = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        *counts.entry(stat_name(rec.raw().header.type_)).or_default() += 1;
        if let Ok(Record::Sample(s)) = rec.decode() {
            let t = s.tid().unwrap();
            samples.push((t.pid, t.tid, s.time().unwrap(), None, s.ip().unwrap(), s.period().unwrap_or(100000)));
        }
    }
    assert_eq!(counts, perf_counts(&dir), "record counts by type");
    let (mut theirs, _) = perf_script(&dir, false);
    assert!(!samples.is_empty());
    samples.sort();
    theirs.sort();
    assert_eq!(samples, theirs, "samples");
}
