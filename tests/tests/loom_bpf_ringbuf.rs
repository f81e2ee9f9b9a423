//! Loom models of the BPF ring buffer (`perfring::bpf_ringbuf`) over a [`ModelRingbuf`], whose
//! sample bytes are loom cells (a missing ordering shows up as a data race) and whose header
//! words are loom atomics (a missing ordering lets a header load return an older value: a
//! phantom or torn record, which the checks below catch). Each ordering (R1)–(R10), (U1)–(U6) of
//! `perfring::fences` weakened to `Relaxed` makes one of these models fail (`make loom-mutants`).
//!
//! | model | what it checks | the orderings it needs |
//! |---|---|---|
//! | `kernel_ring_*_wrap` | every committed sample read once, intact, in order; the third reuses the first's bytes | R1, R2, R3, R5, R6, R7 |
//! | `kernel_ring_wakeup_*` | a consumer that decides to sleep is woken by the commit it waits for (publishing per batch, or holding its last record until it prepares to sleep) | R4, R8 |
//! | `kernel_ring_two_producers_*` | two producers never reserve the same bytes | R9, R10 |
//! | `user_ring_*` | a user-ringbuf producer and the kernel's drain, as the first model | U1–U6 |
//!
//! # Steering loom
//!
//! The threads wait for each other at a few points on *hints*: relaxed counters that order
//! nothing (a relaxed load synchronizes with no store), so every interleaving and every stale
//! value the protocol's own orderings allow remains possible; the hints only make loom run the
//! steps that matter in the order that exposes a bug. Loom needs that: its DPOR keeps one last
//! access per atomic, so a producer's load of `producer_pos` before its store hides a
//! consumer's earlier load from that store, and schedules where the consumer runs between a
//! reservation and its commit are never tried; and after a `yield_now` a thread never again
//! reads a value it had seen before it if a newer one exists, which hides a stale read from a
//! thread that yielded after seeing the old value. Each model therefore makes a thread wait
//! (yield) before its first access to the word whose stale value the bug needs, and the
//! producers wait only for what the consumer has done.
//!
//! Bounds: a 64-byte ring, two or three records, `LOOM_MAX_PREEMPTIONS` from the environment
//! (the Makefile uses 3). Run: `make loom`.
#![cfg(loom)]

use std::ops::ControlFlow;

use loom::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use loom::thread;
use perfring::bpf_ringbuf::{
    split_ringbuf, Config, Drain, ModelRingbuf, Notify, Publish, RingbufConsumer, RingbufMemory, RingbufProducer,
    SpinLock, UserProducer,
};

type Ring = ModelRingbuf<8>; // 64 bytes

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

/// A progress counter one thread advances and another waits for. Relaxed: it orders nothing.
struct Hint(AtomicUsize);

impl Hint {
    fn new() -> &'static Hint {
        leak(Hint(AtomicUsize::new(0)))
    }
    fn set(&self, step: usize) {
        self.0.store(step, Relaxed);
    }
    fn wait(&self, step: usize) {
        while self.0.load(Relaxed) < step {
            thread::yield_now();
        }
    }
}

/// The sample of sequence number `seq`: `len` bytes, the first `seq`, every one nonzero, so
/// that a zeroed or older lap's bytes never pass for it.
fn sample(seq: u8, len: usize) -> Vec<u8> {
    let mut s: Vec<u8> = (0..len).map(|i| seq.wrapping_mul(31).wrapping_add(i as u8) | 0x80).collect();
    s[0] = seq;
    s
}

/// Check one sample read from the ring (every byte) and return its sequence number.
fn check(bytes: &[u8]) -> u8 {
    assert!(!bytes.is_empty(), "an empty sample where none was written: torn or corrupt");
    let seq = bytes[0];
    assert_eq!(bytes, &sample(seq, bytes.len())[..], "sample {seq} torn or corrupt");
    seq
}

/// Read one batch of a kernel ring, checking every sample.
fn drain_kernel<M: RingbufMemory>(c: &mut RingbufConsumer<M>, seen: &mut Vec<u8>) {
    let mut scratch = [0u8; 64];
    c.for_each(&mut scratch, |r| {
        let mut bytes = vec![0; r.payload.len()];
        r.payload.copy_to(&mut bytes);
        seen.push(check(&bytes));
    })
    .expect("a protocol-following ring reported corruption");
}

/// The kernel ring: the main thread produces three samples, a consumer thread reads.
///
/// * the first, 24 bytes: a record of 32, `[0, 32)`;
/// * the second, 16 bytes: `[32, 56)` (it fits beside the first: 56 ≤ 63);
/// * the third, 16 bytes: `[56, 80)`, whose sample `[64, 80)` is the first's bytes `[0, 16)` of
///   the area again: it fits only once the consumer has freed the first, and the producer waits
///   for the consumer's hint that it did (so its reservation loads that `consumer_pos` first).
///
/// A sample that does not fit is counted, not retried. The consumer reads a batch as soon as
/// the first sample is committed (its first loads of `producer_pos` and the header then have
/// older values to choose from), then two more, and the main thread a last one after the join.
/// Checks every byte, the order, and `attempted = read + failed`.
fn kernel_ring_model(untrusted: bool) {
    loom::model(move || {
        let ring: &'static mut Ring = Box::leak(Box::new(Ring::new().unwrap()));
        let (producer, consumer) = split_ringbuf(ring).unwrap();
        let mut consumer = if untrusted { RingbufConsumer::untrusted(*consumer.memory()).unwrap() } else { consumer };
        let (produced, consumed) = (Hint::new(), Hint::new());
        let reader = thread::spawn(move || {
            let mut seen = Vec::new();
            for step in 1..=3 {
                produced.wait(step);
                drain_kernel(&mut consumer, &mut seen);
                consumed.set(step);
            }
            (consumer, seen)
        });
        let mut written = Vec::new();
        for (seq, size) in [(1, 24), (2, 16), (3, 16)] {
            if seq == 3 {
                consumed.wait(1);
            }
            if let Ok(mut r) = producer.reserve(size) {
                r.write(0, &sample(seq, size)).unwrap();
                r.submit(Notify::Adaptive);
                written.push(seq);
            }
            produced.set(usize::from(seq));
        }
        let (mut consumer, mut seen) = reader.join().unwrap();
        drain_kernel(&mut consumer, &mut seen);
        assert_eq!(seen, written, "every record committed is read once, in reservation order");
        assert_eq!(written.len() + producer.failed_reservations(), 3, "every record written or its failure counted");
    });
}

#[test]
fn kernel_ring_three_samples_across_the_wrap() {
    kernel_ring_model(false);
}

#[test]
fn kernel_ring_untrusted_consumer_three_samples_across_the_wrap() {
    kernel_ring_model(true);
}

/// The wakeup: producer A (the main thread) commits the first record; then a consumer thread
/// reads it, prepares to sleep (publish `consumer_pos`, fence, re-check) and sleeps if the
/// re-check finds nothing committed, while producer B (another thread) reserves and commits the
/// second record with the adaptive wakeup. A sleeping consumer waits at a record only that
/// record's commit can wake it for, so: if it sleeps at a position where a record was
/// committed, that commit must have woken it. Without (R4) and (R8) both sides can read the
/// other's old value (store buffering): the commit sees the old `consumer_pos` and does not
/// wake, the re-check sees the old header (or `producer_pos`) and sleeps. (Both threads start
/// after the first commit, so neither yields nor waits: nothing hides a stale value from them.)
/// With `Publish::HoldLast` the read publishes only up to the first record's start, and
/// `prepare_to_sleep` the rest: the same guarantee.
fn wakeup_model(publish: Publish) {
    loom::model(move || {
        let ring: &'static Ring = leak(Ring::new().unwrap());
        // SAFETY: the only producer of `ring`, shared by the two producing threads; the consumer
        // below is its only consumer.
        let producer: &'static RingbufProducer<&'static Ring> =
            leak(unsafe { RingbufProducer::new(ring, SpinLock::new()) }.unwrap());
        // SAFETY: its producer follows the protocol.
        let mut consumer = unsafe { RingbufConsumer::trusted(ring) }.unwrap();
        consumer.configure(Config { publish, ..Config::default() });
        let mut r = producer.reserve(8).unwrap();
        r.write(0, &sample(1, 8)).unwrap();
        assert!(r.submit(Notify::Adaptive), "the consumer waited at the first record from the start");
        let reader = thread::spawn(move || {
            let mut seen = Vec::new();
            drain_kernel(&mut consumer, &mut seen);
            let asleep = consumer.prepare_to_sleep().expect("a protocol-following ring reported corruption");
            (consumer, seen, asleep)
        });
        let second = thread::spawn(move || {
            let mut r = producer.reserve(8).unwrap();
            let pos = r.position();
            r.write(0, &sample(2, 8)).unwrap();
            (pos, r.submit(Notify::Adaptive))
        });
        let (mut consumer, mut seen, asleep) = reader.join().unwrap();
        let (second_pos, woke_second) = second.join().unwrap();
        if asleep {
            let at = consumer.position();
            assert!(
                at != second_pos || woke_second,
                "every record committed must be read or announced: the consumer sleeps at {at} and the commit of the \
                 record there did not wake it (lost wakeup); read {seen:?}"
            );
        }
        drain_kernel(&mut consumer, &mut seen);
        assert_eq!(seen, [1, 2], "every record committed is read once, in order");
    });
}

#[test]
fn kernel_ring_wakeup_is_never_lost_when_the_consumer_sleeps() {
    wakeup_model(Publish::PerBatch);
}

#[test]
fn kernel_ring_wakeup_is_never_lost_when_the_consumer_held_its_last_record() {
    wakeup_model(Publish::HoldLast);
}

/// Two producer threads, one record each, and the main thread reading: the lock must give the
/// second producer the first's `producer_pos`, or both reserve the same bytes.
#[test]
fn kernel_ring_two_producers_never_share_a_reservation() {
    loom::model(|| {
        let ring: &'static mut Ring = Box::leak(Box::new(Ring::new().unwrap()));
        let (producer, mut consumer) = split_ringbuf(ring).unwrap();
        let producer: &'static RingbufProducer<&'static Ring> = leak(producer);
        let writers: Vec<_> = (1..=2u8)
            .map(|seq| {
                thread::spawn(move || {
                    let mut r = producer.reserve(8).unwrap();
                    r.write(0, &sample(seq, 8)).unwrap();
                    r.submit(Notify::Never);
                })
            })
            .collect();
        let mut seen = Vec::new();
        drain_kernel(&mut consumer, &mut seen);
        for w in writers {
            w.join().unwrap();
        }
        drain_kernel(&mut consumer, &mut seen);
        seen.sort_unstable();
        assert_eq!(seen, [1, 2], "every record committed is read once");
    });
}

/// The user ringbuf, as the kernel-ring model: the main thread is the user-space producer of
/// three 24-byte samples (records of 32: the second discarded; the third, `[64, 96)`, reuses
/// the first's bytes, and fits once the drain has freed the first: libbpf fills the whole
/// area), and the kernel's drain runs on another thread after each, then on the main thread.
/// Checks every byte, the order, the discard skipped, and
/// `attempted = drained + discarded + failed`.
#[test]
fn user_ring_three_samples_across_the_wrap() {
    loom::model(|| {
        let ring: &'static Ring = leak(Ring::new().unwrap());
        // SAFETY: the only producer; its consumer is the drain below.
        let producer = unsafe { UserProducer::new(ring, SpinLock::new()) }.unwrap();
        let drain: &'static Drain<&'static Ring> = leak(Drain::new(ring, SpinLock::new()).unwrap());
        let (produced, consumed) = (Hint::new(), Hint::new());
        let drain_once = move |seen: &mut Vec<u8>| {
            let mut scratch = [0u8; 64];
            let d = drain
                .drain(&mut scratch, Notify::Adaptive, |s| {
                    seen.push(check(s));
                    ControlFlow::Continue(())
                })
                .expect("a protocol-following ring reported corruption");
            d.discarded
        };
        let kernel = thread::spawn(move || {
            let (mut seen, mut skipped) = (Vec::new(), 0);
            for step in 1..=3 {
                produced.wait(step);
                skipped += drain_once(&mut seen);
                consumed.set(step);
            }
            (seen, skipped)
        });
        let (mut submitted, mut discarded) = (Vec::new(), 0);
        for seq in 1..=3u8 {
            if seq == 3 {
                consumed.wait(1);
            }
            if let Ok(mut r) = producer.reserve(24) {
                r.write(0, &sample(seq, 24)).unwrap();
                if seq == 2 {
                    r.discard();
                    discarded += 1;
                } else {
                    r.submit();
                    submitted.push(seq);
                }
            }
            produced.set(usize::from(seq));
        }
        let (mut seen, mut skipped) = kernel.join().unwrap();
        skipped += drain_once(&mut seen);
        assert_eq!(seen, submitted, "every sample submitted is drained once, in order, discards never");
        assert_eq!(skipped, discarded, "every record discarded is skipped");
        assert_eq!(
            submitted.len() + discarded + producer.failed_reservations(),
            3,
            "every record written or its failure counted"
        );
    });
}
