//! `make bench-loops`: the readers' loops timed, one thread, no peer: nanoseconds a record of
//! perf ring reading (`Batch::next_split`, the BPF perf-event-array reader's loop, and
//! `Consumer::for_each`) and of BPF ring buffer reading (`RingbufConsumer::for_each`, trusted,
//! in place), each over records of one size (8-byte and 256-byte payloads) and of sizes drawn
//! at random (four, from a xorshift generator: every record's length unpredictable).
//!
//! Each round fills a 256 KiB ring (it stays in the second-level cache, so that what is timed
//! is the loop and not the memory) and reads it in one batch, timed; the figure is the best
//! round of `ROUNDS`, the one least disturbed by the host. `make bench-instructions` counts the
//! same loops' instructions; this bench shows what those instructions cost in time, where a
//! chain of loads (each header's position from the header before) counts and a count of
//! instructions does not.

use std::hint::black_box;
use std::time::Instant;

use perfring::bpf_ringbuf::{split_ringbuf, Config, Notify, RingbufMapping};
use perfring::consumer::Scratch;
use perfring::memory::Mapping;
use perfring::producer::{EventIdentity, ProducerConfig};
use perfring::record::{types, Endian, Header};

#[path = "common/memory.rs"]
mod memory;
use memory::as_bytes;

/// Rounds of each row; the best is printed.
const ROUNDS: usize = 500;
/// The ring's data area.
const RING: usize = 256 << 10;

/// Payload sizes of a row: one size, or sizes drawn at random.
#[derive(Clone, Copy)]
enum Sizes {
    One(usize),
    Random,
}

impl Sizes {
    /// The payload size of the next record.
    fn next(self, rng: &mut u64) -> usize {
        match self {
            Sizes::One(n) => n,
            Sizes::Random => {
                *rng ^= *rng << 13;
                *rng ^= *rng >> 7;
                *rng ^= *rng << 17;
                8 + (*rng % 4) as usize * 8
            }
        }
    }

    fn name(self) -> String {
        match self {
            Sizes::One(n) => format!("{n}-byte payloads"),
            Sizes::Random => "payloads of 8 to 32 bytes at random".into(),
        }
    }
}

/// The perf ring: records of a SAMPLE header, a u32 RAW size and the payload (padded to 8),
/// as `bpf_perf_event_output` writes them; read with `next_split` (`split`) or `for_each`.
fn perf(sizes: Sizes, split_views: bool) -> f64 {
    let mut mem = vec![0u64; (4096 + RING) / 8];
    let mut map = Mapping::new(as_bytes(&mut mem), 4096).unwrap();
    let (producer, mut consumer) = perfring::split(&mut map, ProducerConfig::default()).unwrap();
    let (mut record, mut scratch, mut views) = ([0x5Au8; 512], Scratch::new(), [0u8; 512]);
    let mut best = f64::MAX;
    for round in 0..ROUNDS {
        let mut rng = 0x9E37_79B9_7F4A_7C15 ^ round as u64;
        loop {
            let size = 8 + (4 + sizes.next(&mut rng)).div_ceil(8) * 8;
            let header = Header { type_: types::SAMPLE, misc: 0, size: size as u16 };
            record[..8].copy_from_slice(&header.to_bytes(Endian::NATIVE));
            record[8..12].copy_from_slice(&((size - 12) as u32).to_ne_bytes());
            if producer.output(&record[..size], &EventIdentity::ANONYMOUS).is_err() {
                break;
            }
        }
        let (mut sum, mut n) = (0u64, 0usize);
        let t = Instant::now();
        if split_views {
            let mut batch = consumer.batch().unwrap();
            while let Some(r) = batch.next_split(&mut views) {
                let Ok(r) = r else { std::process::abort() };
                sum += u64::from(*r.first.last().unwrap_or(&0));
                n += 1;
            }
        } else {
            n = consumer.for_each(&mut scratch, |r| sum += u64::from(r.bytes[8])).unwrap();
        }
        let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
        black_box(sum);
        best = best.min(ns);
    }
    best
}

/// The BPF ring buffer: `bpf_ringbuf_output`'s records read by a trusted `for_each` (in place).
fn ringbuf(sizes: Sizes) -> f64 {
    let mut mem = vec![0u64; (2 * 4096 + RING) / 8];
    let mut map = RingbufMapping::new(as_bytes(&mut mem), 4096).unwrap();
    let (producer, mut consumer) = split_ringbuf(&mut map).unwrap();
    consumer.configure(Config { check_pg_off: false, ..Config::default() });
    let (sample, mut scratch) = ([0x5Au8; 256], [0u8; 512]);
    let mut best = f64::MAX;
    for round in 0..ROUNDS {
        let mut rng = 0x9E37_79B9_7F4A_7C15 ^ round as u64;
        while producer.output(&sample[..sizes.next(&mut rng)], Notify::Never).is_ok() {}
        let mut sum = 0u64;
        let t = Instant::now();
        let n = consumer.for_each(&mut scratch, |r| sum += u64::from(r.payload.parts().0[0])).unwrap();
        let ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;
        black_box(sum);
        best = best.min(ns);
    }
    best
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("bench-loops: ns a record, one thread, a 256 KiB ring refilled and read {ROUNDS} times (best round)");
    for sizes in [Sizes::One(8), Sizes::One(256), Sizes::Random] {
        println!("  {}", sizes.name());
        println!("    perf ring, Batch::next_split                {:6.2}", perf(sizes, true));
        println!("    perf ring, Consumer::for_each               {:6.2}", perf(sizes, false));
        println!("    BPF ring buffer, RingbufConsumer::for_each  {:6.2}", ringbuf(sizes));
    }
}
