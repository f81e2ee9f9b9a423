//! Loom model of a backward overwrite ring: the producer writes while the consumer pauses,
//! reads newest-first, and resumes. No torn record may ever be returned.
//!
//! Bounds: a 64-byte ring, 3 records of 24 bytes (the third wraps the ring and overwrites the
//! first), one pause-read-resume round with at most 2 attempts, then a quiescent read;
//! `LOOM_MAX_PREEMPTIONS` from the environment (the Makefile uses 3). 4 records and 2 rounds
//! take over 2 minutes here and find nothing more.
#![cfg(loom)]

use loom::thread;
use perfring::backward::BackwardReader;
use perfring::consumer::ReadError;
use perfring::memory::RingMemory;
use perfring::producer::{EventIdentity, ProducerConfig};
use perfring::{memory::ModelRing, split};
use perfring_tests::{check_record, record, Seen};

const CONFIG: ProducerConfig = ProducerConfig { backward: true, overwrite: true, watermark: 0, wakeup_events: 0 };

#[test]
fn backward_pause_read_resume_never_returns_a_torn_record() {
    loom::model(|| {
        let ring: &'static mut ModelRing<8> = Box::leak(Box::new(ModelRing::new().unwrap()));
        let (producer, _consumer) = split(ring, CONFIG).unwrap();
        let mem = *producer.memory();
        let writer = thread::spawn(move || {
            let mut dropped = 0u64;
            for seq in 0..3 {
                if producer.output(&record(seq, 24), &EventIdentity::ANONYMOUS).is_err() {
                    dropped += 1;
                }
            }
            (dropped, producer)
        });
        let mut reader = BackwardReader::new(mem, false).unwrap();
        let mut scratch = vec![0u8; 65536];
        let mut all = Seen::default();
        for _round in 0..1 {
            // PAUSE_OUTPUT through the memory value the producer writes through.
            mem.paused().store(true, perfring::fences::LOCAL);
            for _attempt in 0..2 {
                let mut seen = Seen::default();
                let res = reader.read(&mut scratch, |r| check_record(r.bytes, &mut seen));
                // Newest first: sequence numbers strictly decrease within one read.
                assert!(seen.seqs.windows(2).all(|w| w[0] > w[1]), "newest first: {:?}", seen.seqs);
                all.seqs.extend(seen.seqs);
                all.lost_reported += seen.lost_reported;
                match res {
                    Ok(_) => break,
                    Err(ReadError::WriterActive) | Err(ReadError::Overrun { .. }) => thread::yield_now(),
                    Err(e) => panic!("a protocol-following ring reported corruption: {e}"),
                }
            }
            mem.paused().store(false, perfring::fences::LOCAL);
            thread::yield_now();
        }
        let (dropped, producer) = writer.join().unwrap();
        // Quiescent now: a last read returns exactly the newest records that fit, intact.
        let mut last = Seen::default();
        reader.read(&mut scratch, |r| check_record(r.bytes, &mut last)).unwrap();
        assert!(last.seqs.windows(2).all(|w| w[0] > w[1]));
        // An overwrite ring loses its oldest records by design, LOST records included, so the
        // conservation law of forward rings does not apply. What must hold: losses are never
        // over-reported, and whatever is still pending was dropped.
        let pending = producer.lost_pending() as u64;
        assert!(all.lost_reported + last.lost_reported + pending <= dropped, "losses over-reported");
        // No record is ever seen twice across reads (prev advances).
        let mut every: Vec<u64> = all.seqs.iter().chain(last.seqs.iter()).copied().collect();
        every.sort_unstable();
        assert!(every.windows(2).all(|w| w[0] != w[1]), "a record read twice: {every:?}");
    });
}
