//! Reading figures for BENCHMARKS.md (not a timed test): `make bench-data` runs it.
//!
//! * `compare FILE...`: perfring-data beside linux-perf-data 0.13 (samply's perf.data reader),
//!   each library's own file reader opening the path (perfring-data `Reader::open`, buffered
//!   reads; linux-perf-data `PerfFileReader::parse_file` over a `BufReader<File>`, as its docs
//!   show), every record iterated and attributed to its event by the library, every SAMPLE's
//!   fields folded the same way (`common/fields.rs`, the fold `make bench-decode` uses: each
//!   field through the library's accessor). perfring-data in file order and in time order
//!   (`Reader::time_ordered`, perf's two-round window); linux-perf-data has one order, its own
//!   sorter's (time order by rounds). First a correctness check: the SAMPLEs' fields and events
//!   of the three runs must be the same multiset, or the bench stops. Then paired rounds (each
//!   round one pass of each, the order rotated; a pass opens the file and reads every record),
//!   medians; peak RSS of one pass of each in its own process (`/proc/self/status` VmHWM of a
//!   `once` run); instructions per record under callgrind (the difference of 3 passes and 1
//!   pass, over 2 × the records: the open included, process start-up not).
//! * `once LIB FILE PASSES`: PASSES passes of LIB (`perfring`, `perfring-time`, `lpd`) over
//!   FILE, then its VmHWM (for the RSS and callgrind runs of `compare`).
//! * `open FILE N`: perfring-data's `Reader::open` of FILE N times, no record read (to profile
//!   opening under callgrind).
//! * `read [FILE]` (default): records/s over a perf.data file (the demo's `perf.data`):
//!   memory-mapped in file order and in time order, and streamed by `Reader::open`; each
//!   record walked, attributed, and its SAMPLE's ip/time/period folded through the complete
//!   decode. Best of 5 runs.
//! * `gen-pipe FILE GIB`: write to stdout a pipe-mode stream of FILE's records repeated until
//!   it holds GIB GiB (for the peak-memory run).
//! * `pipe`: read a pipe-mode stream from stdin, print records and bytes; run it under
//!   `/usr/bin/time -v` for the maximum resident set size.

use std::io::{BufWriter, Read, Write};
use std::time::Instant;

use perfring::record::{EventRecord as _, Record};
use perfring_data::{MappedFile, Reader, Source, Writer};

fn fold<S: Source>(r: &mut Reader<S>) -> (u64, u64) {
    fold_bytes(r).0
}

/// (records, checksum) and the bytes of the records read.
fn fold_bytes<S: Source>(r: &mut Reader<S>) -> ((u64, u64), u64) {
    let (mut n, mut acc, mut bytes) = (0u64, 0u64, 0u64);
    while let Some(rec) = r.next_record().expect("a readable file") {
        n += 1;
        bytes += (rec.raw().bytes.len() + rec.raw().trailing.len()) as u64;
        if let Ok(Record::Sample(s)) = rec.decode() {
            acc = acc.wrapping_add(s.ip().unwrap_or(0) ^ s.time().unwrap_or(0) ^ s.period().unwrap_or(0));
        }
    }
    ((n, acc), bytes)
}

fn best_of<F: FnMut() -> (u64, u64)>(what: &str, bytes: u64, mut f: F) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let (records, acc) = f();
        std::hint::black_box(acc);
        best = best.min(t.elapsed().as_secs_f64());
        n = records;
    }
    println!(
        "{what:<34} {n} records in {:.1} ms: {:.1} M records/s, {:.0} MB/s",
        best * 1e3,
        n as f64 / best / 1e6,
        bytes as f64 / best / 1e6
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.first().map(String::as_str) {
        Some("compare") => compare::main(&args[1..]),
        Some("once") => compare::once(&args[1], &args[2], args[3].parse().expect("passes")),
        Some("open") => {
            let n: usize = args[2].parse().expect("N");
            for _ in 0..n {
                std::hint::black_box(Reader::open(&args[1]).expect("a perf.data file").metadata().attrs().len());
            }
        }
        Some("gen-pipe") => gen_pipe(&args[1], args[2].parse().expect("GiB")),
        Some("pipe") => {
            let stdin = std::io::stdin().lock();
            let t = Instant::now();
            let mut r = Reader::from_pipe(stdin).expect("a pipe stream");
            let ((n, acc), bytes) = fold_bytes(&mut r);
            std::hint::black_box(acc);
            let s = t.elapsed().as_secs_f64();
            println!(
                "pipe: {n} records, {:.2} GB, in {s:.2} s ({:.1} M records/s, {:.0} MB/s)",
                bytes as f64 / 1e9,
                n as f64 / s / 1e6,
                bytes as f64 / s / 1e6
            );
        }
        _ => {
            let path = args.iter().find(|a| a.as_str() != "read").cloned().unwrap_or_else(|| "../perf.data".into());
            let Ok(file) = std::fs::File::open(&path) else {
                println!("skipped: no {path} (run `make demo` first)");
                return;
            };
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            // SAFETY: the benchmark's input is not modified while mapped.
            let map = unsafe { MappedFile::map(&file) }.expect("mappable");
            println!("{path}: {len} bytes");
            best_of("mapped, walk + attribute only", len, || {
                let mut r = map.reader().unwrap();
                let (mut n, mut acc) = (0u64, 0u64);
                while let Some(rec) = r.next_record().unwrap() {
                    n += 1;
                    acc = acc.wrapping_add(rec.event().ok().unwrap_or(0) as u64 + rec.raw().bytes.len() as u64);
                }
                (n, acc)
            });
            best_of("mapped, file order", len, || fold(&mut map.reader().unwrap()));
            best_of("mapped, time order", len, || fold(&mut map.reader().unwrap().time_ordered()));
            best_of("streamed (Reader::open), file order", len, || fold(&mut Reader::open(&path).unwrap()));
        }
    }
}

fn gen_pipe(path: &str, gib: u64) {
    let bytes = std::fs::read(path).expect("the input file");
    let mut r = Reader::from_bytes(&bytes).expect("a perf.data file");
    let attrs = r.metadata().attrs().to_vec();
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().expect("readable") {
        records.push((rec.raw().bytes.to_vec(), rec.raw().trailing.to_vec()));
    }
    let out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut w = Writer::pipe(out, r.metadata().endian(), attrs).expect("writable");
    let target = gib << 30;
    // Each pass writes the whole input's records again (bounded by the target size).
    while w.data_size() < target {
        for (rec, trailing) in &records {
            w.write_raw(rec, trailing).expect("writable");
        }
    }
    w.finish_pipe().expect("writable").flush().expect("writable");
    let _ = std::io::stdin().read(&mut [0u8; 0]);
}

#[path = "common/fields.rs"]
mod fields;

/// perfring-data beside linux-perf-data 0.13 (`compare`).
mod compare {
    use std::io::BufReader;
    use std::path::Path;
    use std::process::Command;
    use std::time::Instant;

    use linux_perf_data::linux_perf_event_reader::{EventRecord, RecordType};
    use linux_perf_data::{PerfFileReader, PerfFileRecord};
    use perfring::record::EventRecord as _;
    use perfring_data::Reader;

    use super::fields::{fold, of_lper, of_view, Fields};

    /// The libraries (and perfring-data's orders), as `once` names them.
    pub const LIBS: [&str; 3] = ["perfring", "perfring-time", "lpd"];

    /// One pass: open `path`, read every record, attribute it, fold every SAMPLE's fields.
    /// Returns (records the library yields, fold); `each` sees every SAMPLE's event and fields.
    pub fn pass(lib: &str, path: &Path, mut each: impl FnMut(usize, &Fields)) -> (u64, u64) {
        let (mut n, mut acc) = (0u64, 0u64);
        match lib {
            "perfring" | "perfring-time" => {
                let r = Reader::open(path).expect("perfring-data opens the file");
                let mut r = if lib == "perfring" { r } else { r.time_ordered() };
                while let Some(rec) = r.next_record().expect("perfring-data reads the file") {
                    n += 1;
                    let Some(event) = rec.event().ok() else { continue };
                    acc = acc.wrapping_add(event as u64);
                    if let Ok(s) = rec.sample() {
                        let f = of_view(&s);
                        each(event, &f);
                        acc = fold(acc, &f);
                    }
                }
            }
            _ => {
                let file = std::fs::File::open(path).expect("the file");
                let PerfFileReader { mut perf_file, mut record_iter } =
                    PerfFileReader::parse_file(BufReader::new(file)).expect("linux-perf-data opens the file");
                let regs: Vec<u64> = perf_file.event_attributes().iter().map(|a| a.attr.sample_regs_user).collect();
                while let Some(rec) = record_iter.next_record(&mut perf_file).expect("linux-perf-data reads the file") {
                    n += 1;
                    let PerfFileRecord::EventRecord { attr_index, record } = rec else { continue };
                    acc = acc.wrapping_add(attr_index as u64);
                    if record.record_type == RecordType::SAMPLE {
                        if let Ok(EventRecord::Sample(s)) = record.parse() {
                            let f = of_lper(&s, regs.get(attr_index).copied().unwrap_or(0));
                            each(attr_index, &f);
                            acc = fold(acc, &f);
                        }
                    }
                }
            }
        }
        (n, acc)
    }

    /// `once LIB FILE PASSES`: the passes, then the process's peak RSS.
    pub fn once(lib: &str, path: &str, passes: usize) {
        let mut acc = 0u64;
        for _ in 0..passes {
            acc = acc.wrapping_add(pass(lib, Path::new(path), |_, _| {}).1);
        }
        std::hint::black_box(acc);
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let hwm = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or("VmHWM: ? kB");
        println!("{lib} {path}: {hwm}");
    }

    /// The peak RSS (kB) of one pass of `lib` in a process of its own.
    fn rss(lib: &str, path: &Path) -> u64 {
        let exe = std::env::current_exe().expect("this binary");
        let out = Command::new(exe).args(["once", lib, &path.to_string_lossy(), "1"]).output().expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace().rev().nth(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no VmHWM: {text}"))
    }

    /// Instructions (callgrind) of `passes` passes of `lib`, or `None` without valgrind.
    fn instructions(lib: &str, path: &Path, passes: usize) -> Option<u64> {
        let exe = std::env::current_exe().expect("this binary");
        let out = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(exe)
            .args(["once", lib, &path.to_string_lossy(), &passes.to_string()])
            .output()
            .ok()?;
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err.lines().find(|l| l.contains("Collected :"))?;
        line.split_whitespace().last()?.parse().ok()
    }

    /// `path`, or — for a file of several events without EVENT_DESC, whose ids linux-perf-data
    /// does not read (it takes ids from EVENT_DESC only, and gives every record of such a file
    /// to event 0) — a copy with the EVENT_DESC perf writes: the same records and features,
    /// written by perfring-data's `Writer` under `target/bench-data/`.
    fn with_event_desc(path: &Path) -> std::path::PathBuf {
        use perfring_data::{features, features::Feature, Writer};
        let r = Reader::open(path).expect("perfring-data opens the file");
        if r.metadata().attrs().len() < 2 || r.metadata().feature(features::EVENT_DESC).is_some() {
            return path.to_path_buf();
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data");
        std::fs::create_dir_all(&dir).expect("target/bench-data");
        let stem = path.file_stem().unwrap().to_string_lossy();
        let copy = dir.join(format!("{stem}+event_desc.data"));
        let fresh = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
        if copy.exists() && fresh(&copy) >= fresh(path) {
            return copy;
        }
        let mut bytes = Vec::new();
        let mut r = Reader::open(path).unwrap();
        let descs = r
            .metadata()
            .attrs()
            .iter()
            .enumerate()
            .map(|(i, a)| features::EventDesc { attr: a.attr, name: format!("event{i}"), ids: a.ids.clone() })
            .collect();
        let feats: Vec<(u32, Vec<u8>)> = r.metadata().features().map(|(bit, b)| (bit, b.to_vec())).collect();
        let mut w = Writer::new(std::io::Cursor::new(&mut bytes), r.metadata().endian(), r.metadata().attrs().to_vec())
            .unwrap();
        while let Some(rec) = r.next_record().unwrap() {
            w.write_raw(rec.raw().bytes, rec.raw().trailing).unwrap();
        }
        for (bit, b) in feats {
            w.set_feature_bytes(bit, b).unwrap();
        }
        w.set_feature(features::EVENT_DESC, &Feature::EventDesc(descs)).unwrap();
        w.finish().unwrap();
        std::fs::write(&copy, &bytes).expect("target/bench-data");
        copy
    }

    fn median(v: &mut [f64]) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    pub fn main(paths: &[String]) {
        let callgrind = std::env::var("BENCH_DATA_CALLGRIND").map_or(true, |v| v != "0")
            && Command::new("valgrind").arg("--version").output().is_ok();
        println!("bench-data: perfring-data beside linux-perf-data 0.13; records/s = the file's records (as perfring-data counts them) / median time of a pass (open + read + attribute + fold), paired rounds; ratio = median of the rounds' (linux-perf-data time / perfring-data time)");
        println!("| file | records | SAMPLEs | lpd rec/s | perfring file order rec/s | ratio | perfring time order rec/s | ratio | peak RSS kB lpd / file / time | instructions/record lpd / file / time |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
        let mut logs: [Vec<f64>; 2] = Default::default();
        for path in paths.iter().map(Path::new) {
            if !path.exists() {
                println!("skipped: no {} (make demo, scripts/decode-captures.sh)", path.display());
                continue;
            }
            let path = &with_event_desc(path);
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // The check: the same SAMPLEs (event and fields), in any order, from the three runs.
            let mut samples: [Vec<(usize, Fields)>; 3] = Default::default();
            let mut counts = [(0, 0); 3];
            for (i, lib) in LIBS.iter().enumerate() {
                counts[i] = pass(lib, path, |e, f| samples[i].push((e, *f)));
                samples[i].sort_unstable();
            }
            assert_eq!(counts[0], counts[1], "{name}: perfring-data's file and time order disagree");
            assert!(samples[0] == samples[1], "{name}: perfring-data's file and time order disagree");
            if samples[2] != samples[0] {
                let bad = samples[2].iter().zip(&samples[0]).find(|(a, b)| a != b);
                panic!(
                    "{name}: linux-perf-data and perfring-data disagree: {} SAMPLEs against {}, first difference {bad:?}",
                    samples[2].len(),
                    samples[0].len()
                );
            }
            // (The folds include each record's event; linux-perf-data gives unattributable
            // records to event 0 where perfring-data gives none, so only the SAMPLEs compare.)
            let records = counts[0].0;
            let reps = (20_000 / records.max(1)).max(1) as usize;
            let rounds = (3_000_000 / (records as usize * reps)).clamp(9, 101);
            let mut t: [Vec<f64>; 3] = Default::default();
            let mut ratio: [Vec<f64>; 2] = Default::default();
            for round in 0..rounds {
                let mut this = [0f64; 3];
                for k in 0..3 {
                    let i = (k + round) % 3;
                    let start = Instant::now();
                    for _ in 0..reps {
                        std::hint::black_box(pass(LIBS[i], path, |_, _| {}));
                    }
                    this[i] = start.elapsed().as_secs_f64() / reps as f64;
                }
                for i in 0..3 {
                    t[i].push(this[i]);
                }
                ratio[0].push(this[2] / this[0]);
                ratio[1].push(this[2] / this[1]);
            }
            let rate = |v: &mut Vec<f64>| records as f64 / median(v);
            let (r_file, r_time) = (median(&mut ratio[0]), median(&mut ratio[1]));
            logs[0].push(r_file.ln());
            logs[1].push(r_time.ln());
            let rss: Vec<String> = [2, 0, 1].iter().map(|&i| rss(LIBS[i], path).to_string()).collect();
            let ipr: Vec<String> = [2, 0, 1]
                .iter()
                .map(|&i| match (callgrind, records) {
                    (true, n) if n > 0 => match (instructions(LIBS[i], path, 1), instructions(LIBS[i], path, 3)) {
                        (Some(a), Some(b)) => format!("{:.0}", b.saturating_sub(a) as f64 / (2 * n) as f64),
                        _ => "?".into(),
                    },
                    _ => "-".into(),
                })
                .collect();
            println!(
                "| {name} | {records} | {} | {:.3e} | {:.3e} | {r_file:.2}× | {:.3e} | {r_time:.2}× | {} | {} |",
                samples[0].len(),
                rate(&mut t[2]),
                rate(&mut t[0]),
                rate(&mut t[1]),
                rss.join(" / "),
                ipr.join(" / "),
            );
        }
        let geo = |v: &[f64]| (v.iter().sum::<f64>() / v.len().max(1) as f64).exp();
        println!(
            "geometric mean of the ratios ({} files): file order {:.2}×, time order {:.2}×",
            logs[0].len(),
            geo(&logs[0]),
            geo(&logs[1])
        );
    }
}
