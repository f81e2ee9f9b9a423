//! `perfring-sim`: run a session through the real perfring producer and consumer and print what
//! happened.

use std::time::Instant;

use perfring::consumer::Scratch;
use perfring::producer::{Config, Writer};
use perfring::record::{types, Endian, Header};
use perfring::{split, Mapping};

const RECORDS: u64 = 2_000_000;

fn main() {
    // One control page + 64 KiB of data, 8-byte aligned.
    let mut memory = vec![0u64; (4096 + 65536) / 8];
    // SAFETY: a u64 buffer reinterpreted as bytes: same memory, 8-byte aligned, length × 8.
    let bytes = unsafe { std::slice::from_raw_parts_mut(memory.as_mut_ptr().cast::<u8>(), memory.len() * 8) };
    let mut map = Mapping::new(bytes, 4096).expect("layout");
    let (producer, mut consumer) = split(&mut map, Config::default()).expect("ring");
    let start = Instant::now();
    let (produced, lost_pending, consumed, lost_reported) = std::thread::scope(|s| {
        let writer = s.spawn(move || {
            let mut record = [0u8; 64];
            let mut produced = 0u64;
            for seq in 0..RECORDS {
                let len = 16 + 8 * (seq % 7) as usize;
                let header = Header { type_: types::SAMPLE, misc: 0, size: len as u16 };
                record[..8].copy_from_slice(&header.to_bytes(Endian::NATIVE));
                record[8..16].copy_from_slice(&seq.to_ne_bytes());
                if producer.output(&record[..len], &Writer::ANONYMOUS).is_ok() {
                    produced += 1;
                }
            }
            (produced, producer.lost_pending() as u64)
        });
        let mut scratch = Scratch::new();
        let (mut consumed, mut lost) = (0u64, 0u64);
        loop {
            let done = writer.is_finished();
            consumer
                .for_each(&mut scratch, |r| match r.header.type_ {
                    types::LOST => lost += u64::from_ne_bytes(r.bytes[16..24].try_into().unwrap()),
                    _ => consumed += 1,
                })
                .expect("a perfring producer never corrupts its ring");
            if done {
                break;
            }
            // A consumer slower than the producer, so that some records are lost.
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        let (produced, pending) = writer.join().unwrap();
        (produced, pending, consumed, lost)
    });
    let secs = start.elapsed().as_secs_f64();
    println!("two-thread run over a 64 KiB perfring ring ({RECORDS} write attempts, {secs:.2} s):");
    println!("  produced (written)   {produced:>10}");
    println!("  consumed             {consumed:>10}");
    println!("  lost (LOST records)  {lost_reported:>10}");
    println!("  lost (still pending) {lost_pending:>10}");
    let ok = produced == consumed && produced + lost_reported + lost_pending == RECORDS;
    println!(
        "  conservation: attempts = consumed + lost_reported + lost_pending: {}",
        if ok { "holds" } else { "VIOLATED" }
    );
    if !ok {
        std::process::exit(1);
    }
}
