//! Reading figures for BENCHMARKS.md (not a timed test): `make bench-data` runs it.
//!
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

use perfring::record::Record;
use perfring_data::{MappedFile, Reader, Source, Writer};

fn fold<S: Source>(r: &mut Reader<S>) -> (u64, u64) {
    fold_bytes(r).0
}

/// (records, checksum) and the bytes of the records read.
fn fold_bytes<S: Source>(r: &mut Reader<S>) -> ((u64, u64), u64) {
    let (mut n, mut acc, mut bytes) = (0u64, 0u64, 0u64);
    while let Some(rec) = r.next_record().expect("a readable file") {
        n += 1;
        bytes += (rec.bytes.len() + rec.trailing.len()) as u64;
        if let Ok(Record::Sample(s)) = rec.decode() {
            acc = acc.wrapping_add(s.ip.unwrap_or(0) ^ s.time.unwrap_or(0) ^ s.period.unwrap_or(0));
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
                    acc = acc.wrapping_add(rec.event.unwrap_or(0) as u64 + rec.bytes.len() as u64);
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
    let attrs = r.attrs().to_vec();
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().expect("readable") {
        records.push((rec.bytes.to_vec(), rec.trailing.to_vec()));
    }
    let out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut w = Writer::pipe(out, r.endian(), attrs).expect("writable");
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
