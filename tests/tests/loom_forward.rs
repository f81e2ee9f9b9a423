//! Loom models of the forward ring: one producer thread, one consumer thread, over a
//! [`ModelRing`] whose data slots are loom cells (a wrong fence shows up as a data race).
//!
//! Bounds: a 64-byte ring, 3–4 records of 24 bytes (so the third wraps the end and reuses the
//! bytes the consumer freed), `LOOM_MAX_PREEMPTIONS` from the environment (the Makefile uses 3).
//! Run: `make loom`.
#![cfg(loom)]

use loom::thread;
use perfring::producer::{EventIdentity, ProducerConfig};
use perfring::{memory::ModelRing, split};
use perfring_tests::{check_record, drain_batch, record, Seen};

type Ring = ModelRing<8>; // 64 bytes: at most 56 unread

fn leak_ring() -> &'static mut Ring {
    Box::leak(Box::new(Ring::new().unwrap()))
}

/// Producer writes `n` 24-byte records while the consumer drains twice; the main thread drains
/// the rest. Checks every byte of every record, order, and
/// `produced = consumed + Σ LOST.lost + lost_pending`. With `batch` above 1 the producer writes
/// them `batch` at a time with `BatchWriter::output` inside `Producer::batch` (one publish each).
fn forward_model(n: u64, batch: u64) {
    loom::model(move || {
        let ring = leak_ring();
        let (producer, mut consumer) = split(ring, ProducerConfig::default()).unwrap();
        let writer = thread::spawn(move || {
            let mut written = 0u64;
            if batch > 1 {
                for first in (0..n).step_by(batch as usize) {
                    let (wrote, _) = producer.batch(|b| {
                        (first..n.min(first + batch))
                            .filter(|&seq| b.output(&record(seq, 24), &EventIdentity::ANONYMOUS).is_ok())
                            .count() as u64
                    });
                    written += wrote;
                }
            } else {
                for seq in 0..n {
                    if producer.output(&record(seq, 24), &EventIdentity::ANONYMOUS).is_ok() {
                        written += 1;
                    }
                }
            }
            (written, producer)
        });
        let mut seen = Seen::default();
        for _ in 0..2 {
            drain_batch(&mut consumer, &mut seen).unwrap();
            thread::yield_now();
        }
        let (written, producer) = writer.join().unwrap();
        drain_batch(&mut consumer, &mut seen).unwrap();
        // Flush the pending count with one more write, as the kernel would on its next record.
        let pending = producer.lost_pending() as u64;
        assert_eq!(written + seen.lost_reported + pending, n, "every record written or counted");
        assert_eq!(seen.seqs.len() as u64, written, "everything written was consumed");
        assert!(seen.seqs.windows(2).all(|w| w[0] < w[1]), "ring order is write order: {:?}", seen.seqs);
        if pending > 0 {
            producer.output(&record(99, 16), &EventIdentity::ANONYMOUS).unwrap();
            let mut last = Seen::default();
            drain_batch(&mut consumer, &mut last).unwrap();
            assert_eq!(last.lost_reported, pending, "pending losses reported by the next write");
            let _ = check_record;
        }
    });
}

#[test]
fn forward_three_records_across_the_wrap() {
    forward_model(3, 1);
}

#[test]
fn forward_lost_counting_under_a_full_ring() {
    // Four 24-byte records into 56 bytes of room: at least one is lost unless the consumer
    // frees space in time; the law must hold in every interleaving.
    forward_model(4, 1);
}

#[test]
fn forward_batched_records_published_together() {
    // Two batches of two (`BatchWriter::output`: no writer per record, one publish per batch): the
    // consumer may see a batch only whole, and the second batch reuses freed bytes or counts
    // its losses.
    forward_model(4, 2);
}
