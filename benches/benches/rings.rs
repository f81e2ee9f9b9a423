//! `make bench`: perfring and its peers on the same cross-thread workload, in one process.
//!
//! Each row moves `N` records of a fixed payload size from a producer thread pinned to CPU 0 to
//! a consumer thread pinned to CPU 1, through a 64 KiB ring, record by record on the producer
//! side; the consumer reads every payload byte (a checksum of its 8-byte words), so every row
//! moves every byte between the cores and no copy is optimised away. The rows run in rounds (round 1 runs every
//! row once, then round 2, ...; `BENCH_ROUNDS`, 31 by default): a rate is the median of the
//! rounds, and a ratio (`perfring/x`, `x/rtrb`, `ceiling %`) the median of the ratios *within*
//! each round, so that the machine's state (a shared host moves the cross-core cost by up to
//! 5x within minutes) is the same for both sides of every ratio. The spread column gives the
//! rounds' middle half of `perfring/x`. `rings 32` runs one payload size;
//! `BENCH_ROWS=perfring,rtrb` runs the rows whose names contain those words; `BENCH_RAW=1`
//! also prints every round's rate. Rows:
//!
//! * `perfring`: `output` per record (the kernel's protocol: one `data_head` store per record);
//!   the consumer drains everything available per read, with its default `Config` (the tail
//!   store deferred by 4 KiB, a nearly empty ring given 128 spin hints once).
//! * `perfring, tail every batch, unpaced`: the consumer as perf reads a kernel ring (one
//!   `data_tail` store per read, `ProducerConfig::EVERY_BATCH`) — the row before the consumer policy.
//! * `perfring, tail deferred, unpaced`: the deferred tail alone.
//! * `perfring, producer batch<=16`: up to 16 records per `Producer::batch` (one `data_head`
//!   store per batch, ending early when the ring is full), written with `BatchWriter::output` —
//!   batching, reported as such.
//! * `perfring, batch of nested writers`: the same batches, each record a nested writer
//!   (`Producer::output` inside the batch: what `BatchWriter::output` saves).
//! * `perfring, 1 record per read`: the consumer stores `data_tail` after every record.
//! * `rtrb (chunks)`: `write_chunk` / `read_chunk` of one record.
//! * `ringbuf`: `push_slice` / `pop_slice` of one record.
//! * `crossbeam ArrayQueue`: `push` / `pop` of `[u8; P]` values.
//! * `bbqueue (grants)`: `grant_exact` + `commit` / `read` + `release` of one record.
//! * references: single-thread `memcpy` of the payload, and a cross-core copy ceiling (two
//!   threads handing sixteen 4 KiB blocks round-robin, one flag each: the cost of moving the
//!   cache lines between the cores, which no queue can beat).
//! * `consumer alone: perfring` / `rtrb` / `no ring`: one thread reads a ring it filled to
//!   three quarters beforehand (only the reading is timed), with the same consumer loop as the
//!   cross-core rows; `no ring` runs the consumers' own work alone (the checksum of each
//!   payload of a flat buffer). When the lines move cheaply the consumer bounds a cross-core
//!   row, and these rates are what the rows tend to: `no ring / rtrb` is the most any ring can
//!   be over rtrb in that state. Their `perfring/x` and `x/rtrb` compare them with each other.
//!   Like the ceiling, always run.
//!
//! Every perfring row but `1 record per read` reads with `Consumer::for_each`, the way the
//! embeddings read.
//! Why not criterion/divan: they time one closure on one thread; a two-thread, pinned,
//! steady-state transfer needs its own loop. Timing is wall-clock over the whole transfer.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use perfring::consumer::Scratch;
use perfring::memory::RingMemory;
use perfring::producer::{BatchWriter, EventIdentity, ProducerConfig};
use perfring::record::{types, Endian, Header};
use perfring::{
    consumer::Consumer, consumer::ConsumerConfig, consumer::Pace, memory::Mapping, producer::Producer, split,
};

#[path = "common/memory.rs"]
mod memory;
use memory::as_bytes;

/// The kernel tools' release and pacing (the tail after every batch, no pacing); the rows
/// without it take the consumer's default (a deferred tail, a nearly empty ring given a moment).
const EVERY_BATCH: ConsumerConfig = ConsumerConfig::EVERY_BATCH;

const RING: usize = 64 * 1024;

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it; sched_setaffinity on the
    // calling thread (pid 0) reads it. Failure (fewer CPUs) just leaves the thread unpinned.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn records_for(payload: usize) -> usize {
    // About 32 MiB per run for big payloads, 500k records for small ones; BENCH_SCALE divides.
    let scale: usize = std::env::var("BENCH_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    (32 * 1024 * 1024 / payload.max(64)).min(500_000) / scale.max(1)
}

/// Rounds of the table (`BENCH_ROUNDS`, at least 3).
fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(31).max(3)
}

/// Run producer and consumer on two pinned threads; returns the wall time.
fn two_threads(producer: impl FnOnce() + Send, consumer: impl FnOnce() -> u64 + Send) -> Duration {
    let go = AtomicBool::new(false);
    let start = std::thread::scope(|s| {
        let p = s.spawn(|| {
            pin(0);
            while !go.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            producer();
        });
        let c = s.spawn(|| {
            pin(1);
            while !go.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            black_box(consumer());
        });
        let start = Instant::now();
        go.store(true, Ordering::Release);
        p.join().unwrap();
        c.join().unwrap();
        start
    });
    start.elapsed()
}

/// The memory of one perfring bench ring, 8-aligned: a 4 KiB control page and `RING` bytes of
/// data area.
fn ring_memory() -> Vec<u64> {
    vec![0u64; (4096 + RING) / 8]
}

/// The ring laid out over `mem` (from [`ring_memory`]).
fn mapping(mem: &mut [u64]) -> Mapping<'_> {
    Mapping::new(as_bytes(mem), 4096).unwrap()
}

/// How the perfring producer publishes: per record (the kernel's way), or in batches of up to
/// `k` records (one `data_head` store per batch, through [`perfring::producer::Producer::batch`]), each
/// record written with `BatchWriter::output` or, if `nested`, as a nested writer
/// (`Producer::output`).
#[derive(Clone, Copy)]
enum Publish {
    PerRecord,
    Batch { k: usize, nested: bool },
}

/// One `Producer::batch` of up to `k` records, each written by `write` until it refuses one.
/// Returns how many were written.
fn batch_of<M: RingMemory>(producer: &Producer<M>, k: usize, write: impl Fn(&BatchWriter<'_, M>) -> bool) -> usize {
    producer
        .batch(|b| {
            let mut wrote = 0;
            while wrote < k && write(b) {
                wrote += 1;
            }
            wrote
        })
        .0
}

/// A SAMPLE record of `payload` bytes after its header.
fn sample_of(payload: usize) -> Vec<u8> {
    let size = 8 + payload;
    let mut record = vec![0xABu8; size];
    record[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: size as u16 }.to_bytes(Endian::NATIVE));
    record
}

fn perfring_run(payload: usize, n: usize, consumer_batch: bool, publish: Publish, config: ConsumerConfig) -> Duration {
    let mut mem = ring_memory();
    let mut map = mapping(&mut mem);
    let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
    consumer.configure(config);
    let record = sample_of(payload);
    two_threads(
        move || {
            // A full ring drops and counts the record (then a PERF_RECORD_LOST precedes the
            // next one): retry until every record is written, like the peers wait for space.
            let mut sent = 0;
            while sent < n {
                match publish {
                    Publish::PerRecord => {
                        if producer.output(&record, &EventIdentity::ANONYMOUS).is_ok() {
                            sent += 1;
                        } else {
                            std::hint::spin_loop();
                        }
                    }
                    // Adaptive: a batch ends at the first full-ring refusal.
                    Publish::Batch { k, nested: false } => {
                        sent += batch_of(&producer, k.min(n - sent), |b| {
                            b.output(&record, &EventIdentity::ANONYMOUS).is_ok()
                        });
                    }
                    Publish::Batch { k, nested: true } => {
                        sent += batch_of(&producer, k.min(n - sent), |b| {
                            Producer::output(b, &record, &EventIdentity::ANONYMOUS).is_ok()
                        });
                    }
                }
            }
        },
        move || perfring_consume(&mut consumer, &mut Scratch::new(), n, consumer_batch),
    )
}

/// The consumer loop of every perfring row: read until `n` SAMPLE records are read (a LOST
/// record is read and not counted), checksumming each payload; every available record per
/// batch, or one if not `per_batch`. Out of line, so that every row runs the same machine code
/// (inlined, its register allocation followed the surrounding closure, and moved the
/// consumer-alone row by up to 20% between builds that changed nothing in it).
#[inline(never)]
fn perfring_consume<M: RingMemory>(
    consumer: &mut Consumer<M>,
    scratch: &mut Scratch,
    n: usize,
    per_batch: bool,
) -> u64 {
    let (mut got, mut sum) = (0usize, 0u64);
    while got < n {
        if per_batch {
            consumer
                .for_each(scratch, |r| {
                    if r.header.type_ == types::SAMPLE {
                        sum += checksum(&r.bytes[8..]);
                        got += 1;
                    }
                })
                .unwrap();
        } else if let Some(r) = consumer.batch().unwrap().next(scratch) {
            let r = r.unwrap();
            if r.header.type_ == types::SAMPLE {
                sum += checksum(&r.bytes[8..]);
                got += 1;
            }
        }
    }
    sum
}

fn rtrb_run(payload: usize, n: usize) -> Duration {
    let (mut p, mut c) = rtrb::RingBuffer::<u8>::new(RING);
    let data = vec![0xABu8; payload];
    two_threads(
        move || {
            for _ in 0..n {
                loop {
                    if let Ok(mut chunk) = p.write_chunk(payload) {
                        let (a, b) = chunk.as_mut_slices();
                        a.copy_from_slice(&data[..a.len()]);
                        b.copy_from_slice(&data[a.len()..]);
                        chunk.commit_all();
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
        },
        move || rtrb_consume(&mut c, payload, n),
    )
}

/// The consumer loop of the rtrb rows: `n` chunks of `payload` bytes read and checksummed (out
/// of line, as [`perfring_consume`]).
#[inline(never)]
fn rtrb_consume(c: &mut rtrb::Consumer<u8>, payload: usize, n: usize) -> u64 {
    let (mut got, mut sum) = (0usize, 0u64);
    while got < n {
        if let Ok(chunk) = c.read_chunk(payload) {
            let (a, b) = chunk.as_slices();
            sum += checksum(a) + checksum(b);
            chunk.commit_all();
            got += 1;
        }
    }
    sum
}

/// Records of one fill of a ring read alone: three quarters of it, at most `n`.
fn fill_of(size: usize, n: usize) -> usize {
    (RING * 3 / 4 / size).min(n)
}

/// One thread, perfring: the ring filled to three quarters by the producer (not timed), then
/// read by [`perfring_consume`] (timed), until `n` records are read. The consumer's rate when
/// every record is published and in its cache: what a cross-core row tends to when the
/// consumer bounds it.
fn perfring_alone(payload: usize, n: usize) -> Duration {
    let mut mem = ring_memory();
    let mut map = mapping(&mut mem);
    let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
    let record = sample_of(payload);
    let mut scratch = Scratch::new();
    let (mut read, mut took, mut sum) = (0, Duration::ZERO, 0);
    while read < n {
        let k = fill_of(record.len(), n - read);
        for _ in 0..k {
            producer.output(&record, &EventIdentity::ANONYMOUS).unwrap();
        }
        let start = Instant::now();
        sum += perfring_consume(&mut consumer, &mut scratch, k, true);
        took += start.elapsed();
        read += k;
    }
    black_box(sum);
    took
}

/// One thread, rtrb: as [`perfring_alone`], with [`rtrb_consume`].
fn rtrb_alone(payload: usize, n: usize) -> Duration {
    let (mut p, mut c) = rtrb::RingBuffer::<u8>::new(RING);
    let data = vec![0xABu8; payload];
    let (mut read, mut took, mut sum) = (0, Duration::ZERO, 0);
    while read < n {
        let k = fill_of(payload, n - read);
        for _ in 0..k {
            let mut chunk = p.write_chunk(payload).unwrap();
            let (a, b) = chunk.as_mut_slices();
            a.copy_from_slice(&data[..a.len()]);
            b.copy_from_slice(&data[a.len()..]);
            chunk.commit_all();
        }
        let start = Instant::now();
        sum += rtrb_consume(&mut c, payload, k);
        took += start.elapsed();
        read += k;
    }
    black_box(sum);
    took
}

/// One thread, no ring: the consumers' own work alone — `n` payloads of a flat buffer (three
/// quarters of a ring, read again and again) checksummed. No ring's consumer can be faster.
fn no_ring_alone(payload: usize, n: usize) -> Duration {
    let buf = vec![0xABu8; fill_of(payload, usize::MAX) * payload];
    let (mut read, mut sum) = (0, 0);
    let start = Instant::now();
    while read < n {
        let buf = black_box(&buf[..]);
        for p in buf.chunks_exact(black_box(payload)).take(n - read) {
            sum += checksum(p);
            read += 1;
        }
    }
    black_box(sum);
    start.elapsed()
}

fn ringbuf_run(payload: usize, n: usize) -> Duration {
    use ringbuf::traits::{Consumer as _, Observer as _, Producer as _, Split};
    let (mut p, mut c) = ringbuf::HeapRb::<u8>::new(RING).split();
    let data = vec![0xABu8; payload];
    two_threads(
        move || {
            for _ in 0..n {
                while p.vacant_len() < payload {
                    std::hint::spin_loop();
                }
                p.push_slice(&data);
            }
        },
        move || {
            let mut buf = vec![0u8; payload];
            let (mut got, mut sum) = (0usize, 0u64);
            while got < n {
                if c.occupied_len() >= payload {
                    c.pop_slice(&mut buf);
                    sum += checksum(&buf);
                    got += 1;
                }
            }
            sum
        },
    )
}

fn arrayqueue_run<const P: usize>(n: usize) -> Duration {
    let q = crossbeam_queue::ArrayQueue::<[u8; P]>::new(RING / P);
    let q = &q;
    two_threads(
        move || {
            for _ in 0..n {
                let mut v = [0xABu8; P];
                while let Err(back) = q.push(v) {
                    v = back;
                    std::hint::spin_loop();
                }
            }
        },
        move || {
            let (mut got, mut sum) = (0usize, 0u64);
            while got < n {
                if let Some(v) = q.pop() {
                    sum += checksum(&v);
                    got += 1;
                }
            }
            sum
        },
    )
}

fn bbqueue_run(payload: usize, n: usize) -> Duration {
    let bb: bbqueue::nicknames::Churrasco<RING> = bbqueue::nicknames::Churrasco::new();
    let bb = &bb;
    let data = vec![0xABu8; payload];
    two_threads(
        move || {
            let p = bb.stream_producer();
            for _ in 0..n {
                loop {
                    if let Ok(mut g) = p.grant_exact(payload) {
                        g.copy_from_slice(&data);
                        g.commit(payload);
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
        },
        move || {
            let c = bb.stream_consumer();
            let (mut got, mut sum) = (0usize, 0u64);
            while got < n {
                if let Ok(g) = c.read() {
                    if g.len() >= payload {
                        sum += checksum(&g[..payload]);
                        g.release(payload);
                        got += 1;
                    } else {
                        g.release(0);
                    }
                }
            }
            sum
        },
    )
}

fn memcpy_run(payload: usize, n: usize) -> Duration {
    let src = vec![0xABu8; payload];
    let mut dst = vec![0u8; RING];
    let start = Instant::now();
    let mut off = 0;
    for _ in 0..n {
        if off + payload > RING {
            off = 0;
        }
        dst[off..off + payload].copy_from_slice(black_box(&src));
        off += payload;
    }
    black_box(&dst);
    start.elapsed()
}

/// Two threads hand 16 blocks of 4 KiB over round-robin with one flag each: the cross-core
/// ceiling for moving `payload`-byte records (records are packed into blocks).
fn ceiling_run(payload: usize, n: usize) -> Duration {
    const BLOCK: usize = 4096;
    const BLOCKS: usize = 16;
    let per_block = (BLOCK / payload).max(1);
    let blocks = n.div_ceil(per_block);
    let buf: Vec<AtomicUsize> = (0..BLOCKS * BLOCK / 8).map(|_| AtomicUsize::new(0)).collect();
    let full: Vec<AtomicBool> = (0..BLOCKS).map(|_| AtomicBool::new(false)).collect();
    let (buf, full) = (&buf, &full);
    two_threads(
        move || {
            for i in 0..blocks {
                let b = i % BLOCKS;
                while full[b].load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                for w in &buf[b * BLOCK / 8..(b + 1) * BLOCK / 8] {
                    w.store(i, Ordering::Relaxed);
                }
                full[b].store(true, Ordering::Release);
            }
        },
        move || {
            let mut sum = 0u64;
            for i in 0..blocks {
                let b = i % BLOCKS;
                while !full[b].load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                for w in &buf[b * BLOCK / 8..(b + 1) * BLOCK / 8] {
                    sum = sum.wrapping_add(w.load(Ordering::Relaxed) as u64);
                }
                full[b].store(false, Ordering::Release);
            }
            sum
        },
    )
}

/// Read every byte (the same work for every row): the sum of the payload's 8-byte words, then
/// of its last bytes one by one.
///
/// Until 2026-11-26 this summed byte by byte: about 8 ns per 32-byte payload (the `no ring`
/// row), three times the ring's own cost. Every consumer was then slower than every producer,
/// a ring ran full in the machine's fast states, and the bench did not measure a consumer that
/// keeps pace there (`BENCHMARKS.md`, 2026-11-26, fourth pass).
#[inline]
fn checksum(bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    let mut sum = 0u64;
    for word in &mut words {
        let word: [u8; 8] = word.try_into().expect("chunks_exact(8) yields 8 bytes");
        sum = sum.wrapping_add(u64::from_ne_bytes(word));
    }
    words.remainder().iter().fold(sum, |sum, &b| sum.wrapping_add(u64::from(b)))
}

/// The rows of one thread reading a prefilled ring (always run, compared with each other).
const ALONE: &str = "consumer alone";

/// A row of the table: its name and one timed run.
type Row<'a> = (&'static str, Box<dyn Fn() -> Duration + 'a>);

/// Every row's time in each of `rounds` rounds (`times[row][round]`); each round runs every row
/// once, so the rows of one round see the same state of the machine.
fn rounds_of(rows: &[Row<'_>], rounds: usize) -> Vec<Vec<Duration>> {
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); rows.len()];
    for _ in 0..rounds {
        for (row, t) in rows.iter().zip(&mut times) {
            t.push((row.1)());
        }
    }
    times
}

/// The median and the quartiles of `v` (sorted in place).
fn quartiles(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_unstable_by(f64::total_cmp);
    let at = |q: usize| v[(v.len() - 1) * q / 4];
    (at(1), at(2), at(3))
}

fn main() {
    // `rings [PAYLOAD]`: one payload size; `BENCH_ROWS=rtrb,perfring`: rows whose name contains
    // one of the words (the ceiling row is always run: the last column needs it; so are the
    // consumer-alone rows: they say what bounds the state the machine is in).
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let wanted: Option<Vec<String>> =
        std::env::var("BENCH_ROWS").ok().map(|v| v.split(',').map(|w| w.trim().to_string()).collect());
    let rounds = rounds();
    println!(
        "perfring bench: producer on CPU 0, consumer on CPU 1, 64 KiB rings, {rounds} rounds; \
         rates: median of the rounds; ratios: median of each round's ratio"
    );
    println!(
        "{:<36} {:>7} {:>12} {:>8} {:>10} {:>13} {:>8} {:>9}",
        "row", "payload", "records/s", "GB/s", "perfring/x", "(middle half)", "x/rtrb", "ceiling %"
    );
    for payload in [8usize, 32, 256, 4096] {
        if filter.as_deref().is_some_and(|f| f != payload.to_string()) {
            continue;
        }
        let n = records_for(payload);
        let rate = |d: Duration| n as f64 / d.as_secs_f64();
        let rows: Vec<Row<'_>> = vec![
            (
                "perfring",
                Box::new(move || perfring_run(payload, n, true, Publish::PerRecord, ConsumerConfig::default())),
            ),
            (
                "perfring, producer batch<=16",
                Box::new(move || {
                    perfring_run(payload, n, true, Publish::Batch { k: 16, nested: false }, ConsumerConfig::default())
                }),
            ),
            (
                "perfring, tail every batch, unpaced",
                Box::new(move || perfring_run(payload, n, true, Publish::PerRecord, EVERY_BATCH)),
            ),
            (
                "perfring, tail deferred, unpaced",
                Box::new(move || {
                    perfring_run(
                        payload,
                        n,
                        true,
                        Publish::PerRecord,
                        ConsumerConfig { pace: Pace::OFF, ..ConsumerConfig::default() },
                    )
                }),
            ),
            (
                "perfring, 1 record per read",
                Box::new(move || perfring_run(payload, n, false, Publish::PerRecord, EVERY_BATCH)),
            ),
            (
                "perfring, batch of nested writers",
                Box::new(move || {
                    perfring_run(payload, n, true, Publish::Batch { k: 16, nested: true }, ConsumerConfig::default())
                }),
            ),
            ("rtrb (chunks)", Box::new(move || rtrb_run(payload, n))),
            ("ringbuf", Box::new(move || ringbuf_run(payload, n))),
            (
                "crossbeam ArrayQueue",
                Box::new(move || match payload {
                    8 => arrayqueue_run::<8>(n),
                    32 => arrayqueue_run::<32>(n),
                    256 => arrayqueue_run::<256>(n),
                    _ => arrayqueue_run::<4096>(n),
                }),
            ),
            ("bbqueue (grants)", Box::new(move || bbqueue_run(payload, n))),
            ("cross-core copy ceiling", Box::new(move || ceiling_run(payload, n))),
            ("memcpy, one thread", Box::new(move || memcpy_run(payload, n))),
            ("consumer alone: perfring", Box::new(move || perfring_alone(payload, n))),
            ("consumer alone: rtrb", Box::new(move || rtrb_alone(payload, n))),
            ("consumer alone: no ring", Box::new(move || no_ring_alone(payload, n))),
        ];
        let rows: Vec<Row<'_>> = rows
            .into_iter()
            .filter(|(name, _)| {
                name.starts_with("cross-core")
                    || name.starts_with(ALONE)
                    || wanted.as_ref().map_or(true, |w| w.iter().any(|w| name.contains(w.as_str())))
            })
            .collect();
        let times = rounds_of(&rows, rounds);
        if std::env::var_os("BENCH_RAW").is_some() {
            for ((name, _), t) in rows.iter().zip(&times) {
                let v: Vec<String> = t.iter().map(|d| format!("{:.1}", rate(*d) / 1e6)).collect();
                println!("raw {name:<36} {}", v.join(" "));
            }
        }
        let find = |name: &str| rows.iter().position(|r| r.0 == name).map(|i| &times[i]);
        let ceiling = find("cross-core copy ceiling").expect("the ceiling row is always run");
        // The consumer-alone rows are compared with each other; every other row with the
        // cross-core perfring and rtrb rows.
        let (perfring, rtrb) = (find("perfring"), find("rtrb (chunks)"));
        let (perfring_alone, rtrb_alone) = (find("consumer alone: perfring"), find("consumer alone: rtrb"));
        // Per round: `a`'s rate over `b`'s.
        let ratios = |a: &[Duration], b: &[Duration]| -> Vec<f64> {
            a.iter().zip(b).map(|(a, b)| b.as_secs_f64() / a.as_secs_f64()).collect()
        };
        for ((name, _), t) in rows.iter().zip(&times) {
            let (perfring, rtrb) =
                if name.starts_with(ALONE) { (perfring_alone, rtrb_alone) } else { (perfring, rtrb) };
            let (_, r, _) = quartiles(&mut t.iter().map(|d| rate(*d)).collect::<Vec<_>>());
            let (ratio, spread) = match perfring {
                Some(p) => {
                    let (lo, mid, hi) = quartiles(&mut ratios(p, t));
                    (format!("{mid:.2}"), format!("{lo:.2}-{hi:.2}"))
                }
                None => (String::from("-"), String::new()),
            };
            let of_rtrb = rtrb.map_or(String::from("-"), |b| format!("{:.2}", quartiles(&mut ratios(t, b)).1));
            let (_, of_ceiling, _) = quartiles(&mut ratios(t, ceiling));
            println!(
                "{:<36} {:>7} {:>12.3e} {:>8.2} {:>10} {:>13} {:>8} {:>8.0}%",
                name,
                payload,
                r,
                r * payload as f64 / 1e9,
                ratio,
                spread,
                of_rtrb,
                100.0 * of_ceiling
            );
        }
    }
}
