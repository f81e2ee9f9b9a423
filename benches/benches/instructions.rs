//! `make bench-instructions`: the work per record, counted by callgrind (instructions, which do
//! not depend on machine noise). The Makefile runs this binary under callgrind twice, with N and
//! 2N records, and divides the difference of the totals by N, so setup cost cancels out.
//!
//! `instructions producer N`: N × (`output_begin` + copy of a 40-byte record, an 8-byte header
//! and 32 bytes of payload + `output_end`) into a ring large enough never to fill (no hooks:
//! `NoHooks` compiles the preemption points away). `instructions producer-owned N`: the same by
//! a producer that owns its `Mapping` (`Producer::new(map, ..)`), as a firmware or guest
//! producer does whose consumer is on the other side: every control word and the data area are
//! one load from the producer, where through `split`'s shared `&Mapping` they are two.
//! `instructions producer32 N`: the same with a 32-byte record (header and 24 bytes of payload:
//! a 32-byte copy in all). `instructions producer-batch N`: the 40-byte records written 16 at a
//! time with `BatchWriter::output` inside `Producer::batch` (the batch's open and publish
//! included, shared by its 16 records).
//! `instructions consumer N`: the same N writes, then one batch reading all N records; the
//! Makefile subtracts the producer run to get the consumer's share. `instructions consumer-split
//! N`: the same, the batch read with `Batch::next_split` (one or two views a record, the loop of
//! perfring-linux's BPF perf-event-array reader).
//! `instructions ringbuf-producer N` / `ringbuf-consumer N`: the BPF ring buffer: N ×
//! `RingbufProducer::output` of an 8-byte sample (a 16-byte record, `Notify::Never`), then one
//! batch reading them (`RingbufConsumer::for_each`, as perfring-linux's `RingBuffer` reads:
//! trusted, `pg_off` unchecked, so each sample is read in place); the Makefile subtracts the
//! producer run.
//!
//! `instructions decode N`: N SAMPLE records of two events (IDENTIFIER|IP|TID|TIME|
//! PERIOD, 48 bytes, ids alternating over four), built in a buffer, then walked with `Walker`,
//! attributed with `EventSet::attribute` (storage in `Vec`s), and the event's index, ip, pid,
//! tid, time and period read through the record's `sample()` view into a fold; `decode-fixed N`
//! the same through `fixed::<ST>()`, the layout named at compile time; `decode-absent N` the
//! view and the 18 fields the event lacks. `decode-setup N` only builds the buffer: the
//! Makefile subtracts it.
//!
//! `instructions rtrb-producer N` / `rtrb-consumer N`: the same counts for rtrb, the fastest
//! peer of `make bench`, as a reference: N × (`write_chunk(32)` + 32-byte copy + `commit_all`),
//! then N × (`read_chunk(32)` + reading a byte + `commit_all`). rtrb gets its best case: when the
//! chunk is one slice (always, here) the copy is a fixed-size one.

use std::hint::black_box;

use perfring::consumer::Scratch;
use perfring::memory::RingMemory;
use perfring::producer::{EventIdentity, ProducerConfig};
use perfring::record::{
    sample_type as st, types, Attr, Endian, EventLayout, EventRecord, EventSet, Header, IdEntry, Walker,
};
use perfring::{memory::Mapping, producer::Producer, split};

#[path = "common/memory.rs"]
mod memory;
use memory::as_bytes;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "producer".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    match mode.as_str() {
        "producer32" => run::<32>(n, Ends::Split(false)),
        "producer-owned" => run::<40>(n, Ends::Owned),
        "producer-batch" => run::<40>(n, Ends::Batch),
        "consumer" => run::<40>(n, Ends::Split(true)),
        "consumer-split" => run::<40>(n, Ends::SplitViews),
        "ringbuf-producer" => ringbuf_run(n, false),
        "ringbuf-consumer" => ringbuf_run(n, true),
        "rtrb-producer" => rtrb_run(n, false),
        "rtrb-consumer" => rtrb_run(n, true),
        "decode-setup" => decode_run::<{ Decode::SETUP }>(n),
        "decode" => decode_run::<{ Decode::VIEW }>(n),
        "decode-fixed" => decode_run::<{ Decode::FIXED }>(n),
        "decode-absent" => decode_run::<{ Decode::ABSENT }>(n),
        "decode-tail-setup" => tail_run(n, None),
        "decode-in-order" => tail_run(n, Some(false)),
        "decode-reverse" => tail_run(n, Some(true)),
        _ => run::<40>(n, Ends::Split(false)),
    }
}

/// Who holds the ring in [`run`].
#[derive(Clone, Copy)]
enum Ends {
    /// `split`: a producer and a consumer over a shared `&Mapping`; the consumer reads the
    /// records after the producer wrote them all, if `true`.
    Split(bool),
    /// A producer owning its `Mapping` (no consumer in this process).
    Owned,
    /// `split`'s producer writing in batches of 16 (`BatchWriter::output` in `Producer::batch`).
    Batch,
    /// `split`, the records read in one batch by `Batch::next_split` (the BPF readers' loop).
    SplitViews,
}

/// N records of `SIZE` bytes (8-byte header + payload), then optionally one batch read of them.
fn run<const SIZE: usize>(n: usize, ends: Ends) {
    // A fixed size (setup cost must not grow with N): room for 400,000 records of 40 bytes.
    let ring = 16 << 20;
    assert!(n * SIZE < ring);
    let mut mem = vec![0u64; (4096 + ring) / 8];
    let mut map = Mapping::new(as_bytes(&mut mem), 4096).unwrap();
    let mut record = [0x5Au8; SIZE];
    let header = Header { type_: types::SAMPLE, misc: 0, size: SIZE as u16 };
    record[..8].copy_from_slice(&header.to_bytes(Endian::NATIVE));
    // The record's address is opaque, its length is not: the fast path is measured for a
    // fixed-size record, as the kernel's output paths copy fixed-size fields.
    let record: &[u8; SIZE] = black_box(&record);
    match ends {
        Ends::Owned => {
            // SAFETY: the only producer of this ring.
            let producer = unsafe { Producer::new(map, ProducerConfig::default()) }.unwrap();
            write_records(&producer, record, n);
            black_box(producer.head());
        }
        Ends::Batch => {
            let (producer, _consumer) = split(&mut map, ProducerConfig::default()).unwrap();
            for _ in 0..n / 16 {
                producer.batch(|b| {
                    for _ in 0..16 {
                        if b.output(record, &EventIdentity::ANONYMOUS).is_err() {
                            std::process::abort();
                        }
                    }
                });
            }
            write_records(&producer, record, n % 16);
        }
        Ends::SplitViews => {
            let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
            write_records(&producer, record, n);
            let mut scratch = [0u8; 64];
            let (mut sum, mut read) = (0u64, 0usize);
            let mut batch = consumer.batch().unwrap();
            while let Some(r) = batch.next_split(&mut scratch) {
                let Ok(r) = r else { std::process::abort() };
                sum += u64::from(r.first[8]);
                read += 1;
            }
            drop(batch);
            assert_eq!(read, n);
            black_box(sum);
        }
        Ends::Split(consume) => {
            let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
            write_records(&producer, record, n);
            if consume {
                let mut scratch = Scratch::new();
                let mut sum = 0u64;
                let read = consumer.for_each(&mut scratch, |r| sum += u64::from(r.bytes[8])).unwrap();
                assert_eq!(read, n);
                black_box(sum);
            }
        }
    }
}

/// The BPF ring buffer: `n` 8-byte samples output, then, if `consume`, read in one batch.
fn ringbuf_run(n: usize, consume: bool) {
    use perfring::bpf_ringbuf::{split_ringbuf, Config, Notify, RingbufMapping};
    // 4 MiB of data (room for 262,144 records of 16 bytes) after the two control pages.
    let (page, ring) = (4096, 4 << 20);
    assert!(n * 16 < ring);
    let mut mem = vec![0u64; (2 * page + ring) / 8];
    let mut map = RingbufMapping::new(as_bytes(&mut mem), page).unwrap();
    let (producer, mut consumer) = split_ringbuf(&mut map).unwrap();
    consumer.configure(Config { check_pg_off: false, ..Config::default() });
    let sample: &[u8; 8] = black_box(&[0x5A; 8]);
    for _ in 0..n {
        if producer.output(sample, Notify::Never).is_err() {
            std::process::abort();
        }
    }
    if consume {
        let mut sum = 0u64;
        let Ok(read) = consumer.for_each(&mut [], |r| sum += u64::from(r.payload.parts().0[0])) else {
            std::process::abort()
        };
        assert_eq!(read, n);
        black_box(sum);
    }
}

/// The measured loop: `n` × (`output_begin`, one write of `record`, `end`).
#[inline(always)]
fn write_records<M: RingMemory, const SIZE: usize>(producer: &Producer<M>, record: &[u8; SIZE], n: usize) {
    for _ in 0..n {
        // No unwrap: an unwinding panic would make the handle's drop glue keep it in memory,
        // which a `panic = "abort"` kernel or firmware build never pays.
        let Ok(mut h) = producer.output_begin(SIZE, &EventIdentity::ANONYMOUS) else { std::process::abort() };
        if h.write(record).is_err() {
            std::process::abort();
        }
        h.end();
    }
}

/// rtrb, the reference: N chunks of 32 bytes written, then optionally read one by one.
fn rtrb_run(n: usize, consume: bool) {
    const SIZE: usize = 32;
    let (mut p, mut c) = rtrb::RingBuffer::<u8>::new(16 << 20);
    assert!(n * SIZE < p.buffer().capacity());
    let data: &[u8; SIZE] = black_box(&[0x5Au8; SIZE]);
    for _ in 0..n {
        let Ok(mut chunk) = p.write_chunk(SIZE) else { std::process::abort() };
        let (a, b) = chunk.as_mut_slices();
        if let Ok(a) = <&mut [u8; SIZE]>::try_from(&mut *a) {
            *a = *data;
        } else {
            let (head, tail) = data.split_at(a.len());
            a.copy_from_slice(head);
            b.copy_from_slice(tail);
        }
        chunk.commit_all();
    }
    if consume {
        let mut sum = 0u64;
        for _ in 0..n {
            let Ok(chunk) = c.read_chunk(SIZE) else { std::process::abort() };
            let (a, b) = chunk.as_slices();
            sum += u64::from(a.first().or(b.first()).copied().unwrap_or(0));
            chunk.commit_all();
        }
        black_box(sum);
    }
}

/// What `decode_run` does after building its records (its const parameter: one function per
/// row, so that one row's code does not change another's register allocation).
struct Decode;

impl Decode {
    /// Nothing (the Makefile subtracts this run).
    const SETUP: u8 = 0;
    /// Attribution (`EventSet::attribute`), then the record's run-time view (`sample()`).
    const VIEW: u8 = 1;
    /// Attribution, then a `FixedSample` of the compile-time layout (`fixed::<ST>()`).
    const FIXED: u8 = 2;
    /// `VIEW`, and every accessor of a field the event lacks (18), each value added to the
    /// fold when there is one (`if let`).
    const ABSENT: u8 = 3;
}

/// N two-event samples, then the walk + attribution + five fields of each (`how`).
#[inline(never)]
fn decode_run<const HOW: u8>(n: usize) {
    const SIZE: usize = 48;
    const ST: u64 = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD;
    let attr = Attr { sample_type: ST, ..Attr::ZERO };
    // Storage whose sizes the compiler does not know, as a tool's (with arrays the id table's
    // length folds into the hash: 3 fewer instructions for the compile-time layout).
    let mut set = EventSet::new(black_box(vec![EventLayout::EMPTY; 2]), black_box(vec![IdEntry::EMPTY; 8]));
    for ids in [[11, 12], [21, 22]] {
        let e = set.add_event(&attr, Endian::NATIVE).unwrap();
        for id in ids {
            set.add_id(e, id).unwrap();
        }
    }
    let mut buf = vec![0u8; n * SIZE];
    let header = Header { type_: types::SAMPLE, misc: 2, size: SIZE as u16 }.to_bytes(Endian::NATIVE);
    for (i, rec) in buf.chunks_exact_mut(SIZE).enumerate() {
        let id = [11u64, 21, 12, 22][i % 4];
        rec[..8].copy_from_slice(&header);
        for (k, w) in [id, 0x40_0000 + i as u64, (7 << 32) | 8, 1000 * i as u64, 1].iter().enumerate() {
            rec[8 + 8 * k..16 + 8 * k].copy_from_slice(&w.to_ne_bytes());
        }
    }
    let buf = black_box(buf);
    // Each record: `$step` gives (event index, view) or the run aborts; the index and five
    // fields go into the fold (the three views have the same accessors).
    macro_rules! walk_and_fold {
        (|$r:ident| $step:expr) => {{
            let mut acc = 0u64;
            for r in Walker::perf_data(&buf, Endian::NATIVE) {
                let Ok($r) = r else { std::process::abort() };
                let Some((index, v)) = ($step) else { std::process::abort() };
                acc = acc
                    .wrapping_add(index as u64)
                    .wrapping_add(v.ip().unwrap_or(0))
                    .wrapping_add(u64::from(v.tid().map(|t| t.pid).unwrap_or(0)))
                    .wrapping_add(u64::from(v.tid().map(|t| t.tid).unwrap_or(0)))
                    .wrapping_add(v.time().unwrap_or(0))
                    .wrapping_add(v.period().unwrap_or(0));
            }
            acc
        }};
    }
    let acc = match HOW {
        Decode::SETUP => return,
        Decode::VIEW => walk_and_fold!(|r| {
            let rec = set.attribute(&r);
            match (rec.event(), rec.sample()) {
                (Ok(index), Ok(v)) => Some((index, v)),
                _ => None,
            }
        }),
        Decode::ABSENT => {
            let mut acc = 0u64;
            for r in Walker::perf_data(&buf, Endian::NATIVE) {
                let Ok(r) = r else { std::process::abort() };
                let rec = set.attribute(&r);
                let (Ok(index), Ok(v)) = (rec.event(), rec.sample()) else { std::process::abort() };
                // The five fields and the index, as the other rows …
                acc = acc
                    .wrapping_add(index as u64)
                    .wrapping_add(v.ip().unwrap_or(0))
                    .wrapping_add(u64::from(v.tid().map(|t| t.pid).unwrap_or(0)))
                    .wrapping_add(u64::from(v.tid().map(|t| t.tid).unwrap_or(0)))
                    .wrapping_add(v.time().unwrap_or(0))
                    .wrapping_add(v.period().unwrap_or(0));
                // … and the 18 fields this event does not write, each added when it is there.
                macro_rules! add {
                    ($($e:expr),*) => {
                        $(if let Some(x) = $e {
                            acc = acc.wrapping_add(x);
                        })*
                    };
                }
                add!(
                    v.addr(),
                    v.stream_id(),
                    v.cpu().map(|c| u64::from(c.cpu)),
                    v.read().ok().flatten().map(|_| 1),
                    v.callchain().ok().flatten().map(|c| c.len() as u64),
                    v.raw().ok().flatten().map(|r| r.len() as u64),
                    v.branch_stack().ok().flatten().map(|b| b.entries.len() as u64),
                    v.regs_user().ok().flatten().map(|r| r.abi),
                    v.stack_user().ok().flatten().map(|s| s.data.len() as u64),
                    v.weight().ok().flatten().map(|w| w.full()),
                    v.data_src().ok().flatten(),
                    v.transaction().ok().flatten(),
                    v.regs_intr().ok().flatten().map(|r| r.abi),
                    v.phys_addr().ok().flatten(),
                    v.cgroup().ok().flatten(),
                    v.data_page_size().ok().flatten(),
                    v.code_page_size().ok().flatten(),
                    v.aux().ok().flatten().map(|a| a.len() as u64)
                );
                // (ID's accessor gives IDENTIFIER, which the event writes: not an absent field.)
            }
            acc
        }
        Decode::FIXED => walk_and_fold!(|r| {
            let rec = set.attribute(&r);
            match (rec.event(), rec.fixed::<ST>()) {
                (Ok(index), Ok(f)) => Some((index, f)),
                _ => None,
            }
        }),
        _ => std::process::abort(),
    };
    black_box(acc);
}

/// N one-event SAMPLEs of 12 fields — IDENTIFIER, IP, TID, TIME, ADDR, PERIOD, CALLCHAIN (3
/// ips), REGS_USER (2 registers), STACK_USER (16 bytes), PHYS_ADDR, DATA_PAGE_SIZE,
/// CODE_PAGE_SIZE — then (`Some(reverse)`) the walk + `EventSet::sample` + every field through
/// its accessor into a fold, in output order or last to first; `None` only builds them.
#[inline(never)]
fn tail_run(n: usize, reverse: Option<bool>) {
    const ST: u64 = st::IDENTIFIER
        | st::IP
        | st::TID
        | st::TIME
        | st::ADDR
        | st::PERIOD
        | st::CALLCHAIN
        | st::REGS_USER
        | st::STACK_USER
        | st::PHYS_ADDR
        | st::DATA_PAGE_SIZE
        | st::CODE_PAGE_SIZE;
    let attr = Attr { sample_type: ST, sample_regs_user: 0b11, ..Attr::ZERO };
    let mut set = EventSet::new(black_box(vec![EventLayout::EMPTY; 1]), black_box(vec![IdEntry::EMPTY; 2]));
    let e = set.add_event(&attr, Endian::NATIVE).unwrap();
    set.add_id(e, 11).unwrap();
    let words = |i: u64| -> [u64; 20] {
        [
            11,
            0x40_0000 + i,
            (7 << 32) | 8,
            1000 * i,
            0x9000,
            1,
            3,
            1,
            2,
            3,
            2,
            0xa,
            0xb,
            16,
            0,
            0,
            16,
            0x5000,
            4096,
            4096,
        ]
    };
    const SIZE: usize = 8 + 8 * 20;
    let mut buf = vec![0u8; n * SIZE];
    let header = Header { type_: types::SAMPLE, misc: 2, size: SIZE as u16 }.to_bytes(Endian::NATIVE);
    for (i, rec) in buf.chunks_exact_mut(SIZE).enumerate() {
        rec[..8].copy_from_slice(&header);
        for (k, w) in words(i as u64).iter().enumerate() {
            rec[8 + 8 * k..16 + 8 * k].copy_from_slice(&w.to_ne_bytes());
        }
    }
    let buf = black_box(buf);
    let Some(reverse) = reverse else { return };
    let mut acc = 0u64;
    for r in Walker::perf_data(&buf, Endian::NATIVE) {
        let Ok(r) = r else { std::process::abort() };
        let rec = set.attribute(&r);
        let (Ok(index), Ok(v)) = (rec.event(), rec.sample()) else { std::process::abort() };
        // Every field through its accessor, as a tool that does not know the event would: in
        // output order, or the same list last to first.
        macro_rules! fields {
            ($($f:expr),*) => {{
                acc = acc.wrapping_add(index as u64)$(.wrapping_add($f))*;
            }};
        }
        if reverse {
            fields!(
                v.code_page_size().ok().flatten().unwrap_or(0),
                v.data_page_size().ok().flatten().unwrap_or(0),
                v.phys_addr().ok().flatten().unwrap_or(0),
                v.weight().ok().flatten().map_or(0, |w| w.full()),
                v.stack_user().ok().flatten().map_or(0, |s| s.data.len() as u64),
                v.regs_user().ok().flatten().and_then(|r| r.regs.get(0)).unwrap_or(0),
                v.raw().ok().flatten().map_or(0, |r| r.len() as u64),
                v.callchain().ok().flatten().map_or(0, |c| c.len() as u64),
                v.period().unwrap_or(0),
                v.cpu().map_or(0, |c| u64::from(c.cpu)),
                v.stream_id().unwrap_or(0),
                v.addr().unwrap_or(0),
                v.time().unwrap_or(0),
                u64::from(v.tid().map(|t| t.pid ^ t.tid).unwrap_or(0)),
                v.ip().unwrap_or(0),
                v.identifier().unwrap_or(0)
            );
        } else {
            fields!(
                v.identifier().unwrap_or(0),
                v.ip().unwrap_or(0),
                u64::from(v.tid().map(|t| t.pid ^ t.tid).unwrap_or(0)),
                v.time().unwrap_or(0),
                v.addr().unwrap_or(0),
                v.stream_id().unwrap_or(0),
                v.cpu().map_or(0, |c| u64::from(c.cpu)),
                v.period().unwrap_or(0),
                v.callchain().ok().flatten().map_or(0, |c| c.len() as u64),
                v.raw().ok().flatten().map_or(0, |r| r.len() as u64),
                v.regs_user().ok().flatten().and_then(|r| r.regs.get(0)).unwrap_or(0),
                v.stack_user().ok().flatten().map_or(0, |s| s.data.len() as u64),
                v.weight().ok().flatten().map_or(0, |w| w.full()),
                v.phys_addr().ok().flatten().unwrap_or(0),
                v.data_page_size().ok().flatten().unwrap_or(0),
                v.code_page_size().ok().flatten().unwrap_or(0)
            );
        }
    }
    black_box(acc);
}
