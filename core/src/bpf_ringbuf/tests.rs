//! Unit tests of the BPF ring buffer: the kernel's producer and the consumer together, the
//! wakeup rule, `pending_pos`, hostile positions and headers, and the user ringbuf with its drain.

extern crate std;

use core::ops::ControlFlow;
use std::cell::Cell;
use std::vec;
use std::vec::Vec;

use super::*;
use crate::fences::RB_ONCE;
use crate::stride::PREDICT_AFTER;

/// An 8-aligned buffer for a [`RingbufMapping`].
#[repr(C, align(8))]
struct Aligned<const N: usize>([u8; N]);

/// The samples a batch yields, as vectors.
fn drain<M: RingbufMemory>(c: &mut RingbufConsumer<M>) -> Vec<Vec<u8>> {
    let mut scratch = vec![0u8; 1 << 16];
    let mut out = Vec::new();
    c.for_each(&mut scratch, |r| {
        let mut v = vec![0; r.payload.len()];
        assert_eq!(r.payload.copy_to(&mut v), v.len());
        out.push(v)
    })
    .unwrap();
    out
}

/// A sample of `len` bytes, each `tag + i`.
fn sample(tag: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| tag.wrapping_add(i as u8)).collect()
}

#[test]
fn records_are_read_in_reservation_order_whatever_the_commit_order() {
    let mut ring = ModelRingbuf::<32>::new().unwrap(); // 256 bytes
    let (p, mut c) = split_ringbuf(&mut ring).unwrap();
    let mut a = p.reserve(5).unwrap();
    let mut b = p.reserve(12).unwrap();
    let mut d = p.reserve(0).unwrap();
    assert_eq!((a.position(), b.position(), d.position()), (0, 16, 40), "records are 8 + size, rounded up to 8");
    a.write(0, &sample(1, 5)).unwrap();
    b.write(0, &sample(2, 12)).unwrap();
    assert!(d.is_empty());
    // Commit out of order: nothing before the first record is committed.
    d.write(0, &[]).unwrap();
    d.submit(Notify::Adaptive);
    b.submit(Notify::Adaptive);
    assert!(drain(&mut c).is_empty(), "the first record is BUSY: the consumer stops there");
    assert_eq!(c.position(), 0);
    a.submit(Notify::Adaptive);
    assert_eq!(drain(&mut c), [sample(1, 5), sample(2, 12), vec![]]);
    assert_eq!(c.position(), 48);
    assert_eq!(p.memory().consumer_pos().load(RB_ONCE), 48, "consumer_pos published by the batch");
}

#[test]
fn discarded_and_dropped_reservations_are_skipped_and_never_delivered() {
    let mut ring = ModelRingbuf::<32>::new().unwrap();
    let (p, mut c) = split_ringbuf(&mut ring).unwrap();
    let mut a = p.reserve(8).unwrap();
    a.write(0, &sample(7, 8)).unwrap();
    a.discard(Notify::Adaptive);
    drop(p.reserve(3).unwrap()); // dropped: discarded
    p.output(&sample(9, 4), Notify::Adaptive).unwrap();
    assert_eq!(drain(&mut c), [sample(9, 4)]);
    assert_eq!(c.discarded(), 2);
    assert_eq!(c.position(), 16 + 16 + 16);
}

/// RingbufHooks counting wakeups, and optionally reserving from inside the lock (an NMI).
#[derive(Default)]
struct Count {
    wakeups: Cell<u32>,
    nmi: Cell<bool>,
    nmi_result: Cell<Option<RingbufError>>,
}

impl<M: RingbufMemory> RingbufHooks<M, SpinLock> for Count {
    fn in_lock(&self, producer: &RingbufProducer<M, SpinLock, Self>) {
        if self.nmi.replace(false) {
            self.nmi_result.set(producer.try_reserve(8).err());
        }
    }
    fn wakeup(&self, _: &RingbufProducer<M, SpinLock, Self>) {
        self.wakeups.set(self.wakeups.get() + 1);
    }
}

#[test]
fn the_adaptive_wakeup_fires_only_for_the_record_the_consumer_waits_at() {
    let ring = ModelRingbuf::<32>::new().unwrap();
    // SAFETY: the only producer of `ring`; the consumer below is its only consumer.
    let p = unsafe { RingbufProducer::with_hooks(&ring, SpinLock::new(), Count::default()) }.unwrap();
    // SAFETY: the producer above follows the protocol.
    let mut c = unsafe { RingbufConsumer::trusted(&ring) }.unwrap();
    let a = p.reserve(8).unwrap(); // at 0
    let b = p.reserve(8).unwrap(); // at 16
    assert!(!b.submit(Notify::Adaptive), "the consumer waits at 0, not at 16");
    assert!(a.submit(Notify::Adaptive), "the consumer waits at 0: woken");
    assert_eq!(p.hooks().wakeups.get(), 1);
    assert_eq!(drain(&mut c).len(), 2);
    // Caught up at 32: the next record is the one it waits for.
    assert!(p.output(&[1], Notify::Adaptive).unwrap());
    // Not caught up (it has not read the last one): no wakeup, unless forced.
    assert!(!p.output(&[2], Notify::Adaptive).unwrap());
    assert!(p.output(&[3], Notify::Always).unwrap());
    assert_eq!(drain(&mut c).len(), 3);
    assert!(!p.output(&[4], Notify::Never).unwrap(), "BPF_RB_NO_WAKEUP: never");
    // A discard at the consumer's position wakes it, so that it goes on past it.
    let mut c2_pos = c.position();
    assert_eq!(drain(&mut c).len(), 1);
    c2_pos += 16;
    assert_eq!(c.position(), c2_pos);
    assert!(p.reserve(1).unwrap().discard(Notify::Adaptive));
    assert_eq!(p.hooks().wakeups.get(), 4);
}

#[test]
fn prepare_to_sleep_publishes_and_says_whether_a_commit_will_wake() {
    let mut ring = ModelRingbuf::<32>::new().unwrap();
    let (p, mut c) = split_ringbuf(&mut ring).unwrap();
    c.configure(Config { publish: Publish::PerBatch, ..Config::default() });
    assert_eq!(c.prepare_to_sleep(), Ok(true), "empty");
    let r = p.reserve(4).unwrap();
    assert_eq!(c.prepare_to_sleep(), Ok(true), "BUSY at the head: its commit wakes us");
    r.submit(Notify::Never);
    assert_eq!(c.prepare_to_sleep(), Ok(false), "committed at the head: read on");
    let mut batch = c.batch().unwrap();
    let mut scratch = [0u8; 64];
    assert!(batch.next(&mut scratch).unwrap().is_ok());
    assert_eq!(p.memory().consumer_pos().load(RB_ONCE), 0, "per batch: not yet published");
    drop(batch);
    assert_eq!(p.memory().consumer_pos().load(RB_ONCE), 16);
    assert_eq!(c.prepare_to_sleep(), Ok(true));
    p.reserve(4).unwrap().discard(Notify::Never);
    assert_eq!(c.prepare_to_sleep(), Ok(false), "a discarded record is read past, not slept on");
}

/// `Publish::HoldLast`: a batch publishes up to its last record's start, so the next commit
/// finds the reader not caught up and sends no wakeup; `prepare_to_sleep`, `release` and the
/// consumer's drop publish everything read, so a reader that waits is woken as before.
#[test]
fn holding_the_last_record_spares_the_producer_a_wakeup_until_the_reader_would_wait() {
    let ring = ModelRingbuf::<32>::new().unwrap();
    // SAFETY: the only producer of `ring`; the consumers below are its only consumers, in turn.
    let p = unsafe { RingbufProducer::with_hooks(&ring, SpinLock::new(), Count::default()) }.unwrap();
    // SAFETY: the producer above follows the protocol.
    let mut c = unsafe { RingbufConsumer::trusted(&ring) }.unwrap();
    c.configure(Config { publish: Publish::HoldLast, ..Config::default() });
    let pos = || ring.consumer_pos().load(RB_ONCE);
    for i in 0..3 {
        p.output(&[i], Notify::Never).unwrap(); // at 0, 16, 32
    }
    assert_eq!(drain(&mut c), [[0], [1], [2]]);
    assert_eq!((pos(), c.position()), (32, 48), "the last record read is held");
    assert!(!p.output(&[3], Notify::Adaptive).unwrap(), "not caught up: no wakeup");
    assert_eq!(drain(&mut c), [[3]]);
    assert_eq!(pos(), 48);
    assert!(drain(&mut c).is_empty());
    assert_eq!(pos(), 48, "a batch that reads nothing keeps what is held");
    assert!(!p.output(&[4], Notify::Adaptive).unwrap());
    // A discarded record last: held too.
    p.reserve(1).unwrap().discard(Notify::Never); // at 80
    assert_eq!(drain(&mut c), [[4]]);
    assert_eq!((pos(), c.position()), (80, 96));
    assert_eq!(p.hooks().wakeups.get(), 0);
    // Before a wait: everything published, and the next commit wakes.
    assert_eq!(c.prepare_to_sleep(), Ok(true));
    assert_eq!(pos(), 96);
    assert!(p.output(&[5], Notify::Adaptive).unwrap(), "caught up: woken");
    assert_eq!(drain(&mut c), [[5]]);
    assert_eq!(pos(), 96);
    c.release();
    assert_eq!(pos(), 112, "release: everything read");
    assert!(drain(&mut c).is_empty());
    assert_eq!(pos(), 112, "an empty batch after a release publishes no older position");
    p.output(&[6], Notify::Never).unwrap();
    assert_eq!(drain(&mut c), [[6]]);
    assert_eq!(pos(), 112);
    drop(c);
    assert_eq!(pos(), 128, "dropped: the next reader starts past what this one read");
    // SAFETY: as above; the first consumer is gone.
    let mut next = unsafe { RingbufConsumer::trusted(&ring) }.unwrap();
    assert!(drain(&mut next).is_empty(), "nothing read twice");
}

#[test]
fn per_record_publishing_stores_consumer_pos_after_each_record() {
    let mut ring = ModelRingbuf::<32>::new().unwrap();
    let (p, mut c) = split_ringbuf(&mut ring).unwrap();
    c.configure(Config { publish: Publish::PerRecord, ..Config::default() });
    for i in 0..3 {
        p.output(&[i], Notify::Never).unwrap();
    }
    let mut scratch = [0u8; 64];
    let mut batch = c.batch().unwrap();
    let mut seen = Vec::new();
    while let Some(r) = batch.next(&mut scratch) {
        seen.push((r.unwrap().position, p.memory().consumer_pos().load(RB_ONCE)));
    }
    drop(batch);
    // When record n is handed out, the records before it are released.
    assert_eq!(seen, [(0, 0), (16, 16), (32, 32)]);
    assert_eq!(p.memory().consumer_pos().load(RB_ONCE), 48);
}

#[test]
fn a_full_ring_fails_reservations_and_counts_them() {
    let mut ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    let (p, mut c) = split_ringbuf(&mut ring).unwrap();
    // The kernel keeps new_prod - cons <= size - 1: seven 8-byte records (56 bytes), not eight.
    for _ in 0..7 {
        p.output(&[], Notify::Never).unwrap();
    }
    assert_eq!(p.output(&[], Notify::Never), Err(RingbufError::NoSpace { needed: 8, available: 0 }));
    assert_eq!(p.reserve(57).err(), Some(RingbufError::SampleTooLarge { size: 57, max: 56 }));
    assert_eq!(
        p.reserve(MAX_SAMPLE_SIZE + 1).err(),
        Some(RingbufError::SampleTooLarge { size: MAX_SAMPLE_SIZE + 1, max: 56 })
    );
    assert_eq!(p.failed_reservations(), 3);
    assert_eq!(drain(&mut c).len(), 7);
    // Freed: a record that wraps the end of the area fits now.
    let mut r = p.reserve(40).unwrap();
    assert_eq!(r.position() & 63, 56);
    r.write(0, &sample(3, 40)).unwrap();
    assert_eq!(r.write(1, &sample(3, 40)), Err(RingbufError::PastReservation { at: 1, len: 40, size: 40 }));
    r.submit(Notify::Never);
    assert_eq!(drain(&mut c), [sample(3, 40)]);
}

#[test]
fn pending_pos_keeps_a_reservation_from_lapping_a_busy_record() {
    let mut ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    let (p, _c) = split_ringbuf(&mut ring).unwrap();
    let a = p.reserve(8).unwrap(); // [0, 16), BUSY
    p.output(&[1; 8], Notify::Never).unwrap(); // [16, 32)
    p.output(&[2; 8], Notify::Never).unwrap(); // [32, 48)
                                               // A consumer that claims to have read everything (it cannot have: the first record is
                                               // BUSY): the kernel's consumer_pos check alone would let the next reservations reach [0, 16).
    p.memory().consumer_pos().store(48, RB_ONCE);
    assert_eq!(p.reserve(8).err(), Some(RingbufError::NoSpace { needed: 16, available: 8 }));
    a.submit(Notify::Never);
    // Committed: pending_pos walks past it (and the two after it).
    let b = p.reserve(8).unwrap();
    assert_eq!(b.position(), 48);
    assert_eq!(p.memory().pending_pos().load(RB_ONCE), 48);
}

#[test]
fn a_consumer_pos_ahead_of_the_producer_is_refused_not_believed() {
    let mut ring = ModelRingbuf::<8>::new().unwrap();
    let (p, _c) = split_ringbuf(&mut ring).unwrap();
    p.output(&[1], Notify::Never).unwrap();
    p.memory().consumer_pos().store(64, RB_ONCE);
    assert_eq!(p.reserve(1).err(), Some(RingbufError::ConsumerPosInvalid { consumer_pos: 64, producer_pos: 16 }));
    p.memory().consumer_pos().store(16usize.wrapping_sub(72), RB_ONCE);
    assert!(matches!(p.reserve(1), Err(RingbufError::ConsumerPosInvalid { .. })));
}

#[test]
fn an_nmi_inside_the_lock_fails_its_reservation_and_it_is_counted() {
    let ring = ModelRingbuf::<32>::new().unwrap();
    let hooks = Count::default();
    hooks.nmi.set(true);
    // SAFETY: the only producer of `ring`.
    let p = unsafe { RingbufProducer::with_hooks(&ring, SpinLock::new(), hooks) }.unwrap();
    let r = p.reserve(8).unwrap();
    assert_eq!(p.hooks().nmi_result.get(), Some(RingbufError::Contended));
    assert_eq!(p.failed_reservations(), 1);
    assert_eq!(r.position(), 0);
    r.submit(Notify::Never);
    // The lock is free again: the NMI path succeeds.
    assert!(p.try_reserve(8).is_ok());
}

/// Seven 8-byte samples output and read: the next record starts at 112, 16 bytes before the end
/// of a 128-byte area, so a sample of more than 8 bytes there wraps it.
fn read_to_112<M: RingbufMemory>(p: &RingbufProducer<M>, c: &mut RingbufConsumer<M>) {
    for _ in 0..7 {
        p.output(&[0; 8], Notify::Never).unwrap();
    }
    assert_eq!(drain(c).len(), 7);
    assert_eq!(c.position(), 112);
}

#[test]
fn a_record_wrapping_a_single_mapping_is_copied_split_or_loaded() {
    let mut buf = Aligned([0u8; 2 * 64 + 128]);
    let mut map = RingbufMapping::new(&mut buf.0, 64).unwrap();
    let (p, mut c) = split_ringbuf(&mut map).unwrap();
    read_to_112(&p, &mut c);
    p.output(&sample(5, 24), Notify::Never).unwrap(); // header at 112, sample [120, 144): wraps
    let mut scratch = [0u8; 64];
    {
        let mut batch = c.batch().unwrap();
        let r = batch.next(&mut scratch).unwrap().unwrap();
        assert_eq!(r.payload, Payload::One(&sample(5, 24)[..]), "copied into scratch by default");
        assert_eq!(r.payload.parts().0.as_ptr(), scratch.as_ptr());
    }
    for i in 0..3 {
        p.output(&sample(6 + i, 24), Notify::Never).unwrap(); // headers at 144, 176, 208
    }
    c.configure(Config { wrapped: Wrapped::Split, ..Config::default() });
    let mut batch = c.batch().unwrap();
    let one = batch.next(&mut scratch).unwrap().unwrap().payload;
    assert_eq!(one, Payload::One(&sample(6, 24)[..]));
    let data_start = one.parts().0.as_ptr().wrapping_sub(24); // the sample at 144 + 8 = 128 + 24
    assert_eq!(batch.next(&mut scratch).unwrap().unwrap().payload.len(), 24);
    assert_eq!(batch.next(&mut scratch).unwrap().unwrap().payload.len(), 24);
    assert!(batch.next(&mut scratch).is_none());
    drop(batch);
    p.output(&sample(9, 24), Notify::Never).unwrap(); // header at 240 (112): wraps again
    let mut batch = c.batch().unwrap();
    let two = batch.next(&mut scratch).unwrap().unwrap().payload;
    let want = sample(9, 24);
    assert_eq!(two, Payload::Two(&want[..8], &want[8..]), "the two pieces, zero-copy");
    assert_eq!(two.parts().1.as_ptr(), data_start, "the second piece is the ring's start");
    let mut joined = [0u8; 24];
    assert_eq!(two.copy_to(&mut joined), 24);
    assert_eq!(&joined[..], &want[..]);
    drop(batch);
    // An untrusted consumer over the same memory copies with atomic loads, wrapped or not.
    let mut u = RingbufConsumer::untrusted(c.memory()).unwrap();
    p.output(&sample(8, 13), Notify::Never).unwrap(); // header at 272 (16)
    for i in 0..2 {
        p.output(&sample(10 + i, 24), Notify::Never).unwrap(); // 296 (40), 328 (72)
    }
    assert_eq!(drain(&mut u), [sample(8, 13), sample(10, 24), sample(11, 24)]);
    p.output(&sample(12, 4), Notify::Never).unwrap(); // 360 (104)
    p.output(&sample(13, 17), Notify::Never).unwrap(); // 376 (120): sample [0, 17)
    assert_eq!(drain(&mut u), [sample(12, 4), sample(13, 17)]);
}

#[test]
fn area_sizes_at_the_bounds_are_accepted_and_past_them_refused() {
    use super::memory::check_size;
    assert_eq!(check_size(MIN_SIZE), Ok(()));
    assert_eq!(check_size(MAX_SIZE), Ok(()));
    assert_eq!(check_size(MIN_SIZE / 2), Err(RingbufError::RingTooSmall { size: MIN_SIZE / 2 }));
    assert_eq!(check_size(MAX_SIZE + 8), Err(RingbufError::RingTooLarge { size: MAX_SIZE + 8 }));
    assert_eq!(check_size(MIN_SIZE + 8), Err(RingbufError::RingNotPowerOfTwo { size: MIN_SIZE + 8 }));
}

#[test]
fn a_mapping_loads_whole_words_inside_its_area_and_refuses_the_rest() {
    let mut buf = Aligned([0u8; 2 * 64 + 128]);
    let map = RingbufMapping::new(&mut buf.0, 64).unwrap();
    put_header(&map, 120, 0x0403_0201, 0x0807_0605); // the area's last 8 bytes
    let mut dst = [0u8; 8];
    assert!(map.load_words(120, &mut dst));
    let mut want = [0u8; 8];
    want[..4].copy_from_slice(&0x0403_0201u32.to_ne_bytes());
    want[4..].copy_from_slice(&0x0807_0605u32.to_ne_bytes());
    assert_eq!(dst, want);
    let mut word = [0u8; 4];
    assert!(map.load_words(124, &mut word), "the area's last word");
    for (offset, len, why) in
        [(122, 4, "a misaligned offset"), (120, 6, "a part of a word"), (124, 8, "past the area's end")]
    {
        let mut dst = [0xEEu8; 8];
        assert!(!map.load_words(offset, &mut dst[..len]), "{why}");
        assert_eq!(dst, [0xEE; 8], "{why}: nothing copied");
    }
}

#[test]
fn payloads_measure_and_copy_both_pieces() {
    let (a, b) = ([1u8, 2, 3], [4u8, 5]);
    let two = Payload::Two(&a, &b);
    assert_eq!((two.len(), two.is_empty()), (5, false));
    assert!(Payload::One(&[]).is_empty() && Payload::Two(&[], &[]).is_empty());
    assert!(!Payload::One(&a).is_empty());
    let mut dst = [0u8; 4];
    assert_eq!(two.copy_to(&mut dst), 4, "as much as fits");
    assert_eq!(dst, [1, 2, 3, 4]);
    let mut small = [0u8; 2];
    assert_eq!(two.copy_to(&mut small), 2);
    assert_eq!(small, [1, 2]);
}

/// An untrusted consumer copies a sample that wraps a single mapping's end in two loads.
#[test]
fn an_untrusted_consumer_loads_a_wrapped_sample_in_two_pieces() {
    let mut buf = Aligned([0u8; 2 * 64 + 128]);
    let mut map = RingbufMapping::new(&mut buf.0, 64).unwrap();
    let (p, c) = split_ringbuf(&mut map).unwrap();
    let mut u = RingbufConsumer::untrusted(c.memory()).unwrap();
    for _ in 0..7 {
        p.output(&[0; 8], Notify::Never).unwrap(); // to 112
    }
    assert_eq!(drain(&mut u).len(), 7);
    p.output(&sample(5, 24), Notify::Never).unwrap(); // header at 112, sample [120, 144): wraps
    assert_eq!(drain(&mut u), [sample(5, 24)]);
}

/// `producer_pos` exactly the ring's size ahead is a full ring (read); half the counter's range
/// ahead is too far ahead, not behind.
#[test]
fn producer_positions_at_the_bounds() {
    let ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    c.configure(Config { check_pg_off: false, ..Config::default() });
    ring.producer_pos().store(1 << (usize::BITS - 1), RB_ONCE);
    assert_eq!(
        c.batch().err(),
        Some(RingbufError::ProducerPosTooFarAhead { producer_pos: 1 << (usize::BITS - 1), consumer_pos: 0, size: 64 })
    );
    for off in (0..64).step_by(8) {
        put_header(&ring, off, 0, 0); // eight empty samples: the whole ring
    }
    ring.producer_pos().store(64, RB_ONCE);
    assert_eq!(drain(&mut c).len(), 8);
    assert_eq!(c.position(), 64);
}

#[test]
fn a_consumer_and_its_batch_say_where_they_are() {
    let ring = ModelRingbuf::<8>::new().unwrap();
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    let shown = std::format!("{c:?}");
    assert!(shown.contains("size: 64") && shown.contains("trusted: false"), "{shown}");
    let batch = c.batch().unwrap();
    let shown = std::format!("{batch:?}");
    assert!(shown.contains("position: 0") && shown.contains("producer_pos: 0"), "{shown}");
}

#[test]
fn page_offsets_are_the_kernels_and_a_wrong_one_is_an_error() {
    let mut buf = Aligned([0u8; 2 * 16 + 64]);
    let mut map = RingbufMapping::new(&mut buf.0, 16).unwrap(); // 16-byte "pages": offsets 0..64 span 4
    let (p, mut c) = split_ringbuf(&mut map).unwrap();
    for i in 0..3 {
        p.output(&[i; 8], Notify::Never).unwrap();
    }
    let mem = p.memory();
    assert_eq!([0, 16, 32].map(|off| mem.pg_off_word(off).load(RB_ONCE)), [3, 4, 5]);
    mem.pg_off_word(16).store(9, RB_ONCE);
    let mut scratch = [0u8; 64];
    let mut batch = c.batch().unwrap();
    assert!(batch.next(&mut scratch).unwrap().is_ok());
    let err = batch.next(&mut scratch).unwrap().unwrap_err();
    assert_eq!(err, RingbufError::BadPageOffset { position: 16, pg_off: 9, expected: 4 });
    assert_eq!(batch.next(&mut scratch).unwrap().unwrap_err(), err, "the batch stays at the fault");
    drop(batch);
    assert_eq!(c.position(), 16);
    c.configure(Config { check_pg_off: false, ..Config::default() });
    assert_eq!(drain(&mut c).len(), 2);
}

/// Set a header by hand (a hostile producer).
fn put_header<M: RingbufMemory>(mem: &M, off: usize, len: u32, pg: u32) {
    mem.len_word(off).store(len, RB_ONCE);
    mem.pg_off_word(off).store(pg, RB_ONCE);
}

#[test]
fn hostile_positions_are_typed_errors() {
    let ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    let prod = ring.producer_pos();
    prod.store(12, RB_ONCE);
    assert_eq!(c.batch().err(), Some(RingbufError::MisalignedProducerPos { producer_pos: 12 }));
    prod.store(72, RB_ONCE);
    assert_eq!(
        c.batch().err(),
        Some(RingbufError::ProducerPosTooFarAhead { producer_pos: 72, consumer_pos: 0, size: 64 })
    );
    prod.store(usize::MAX - 7, RB_ONCE);
    assert!(matches!(c.batch().err(), Some(RingbufError::ProducerPosBackwards { .. })));
    // Accepted at 16, then moved back to 8.
    put_header(&ring, 0, BUSY_BIT, 3);
    prod.store(16, RB_ONCE);
    assert_eq!(drain(&mut c).len(), 0);
    prod.store(8, RB_ONCE);
    assert_eq!(c.batch().err(), Some(RingbufError::ProducerPosBackwards { producer_pos: 8, last_seen: 16 }));
    assert_eq!(c.available(), Err(RingbufError::ProducerPosBackwards { producer_pos: 8, last_seen: 16 }));
}

#[test]
fn a_header_length_past_the_producer_or_the_ring_is_an_error_not_a_read() {
    let ring = ModelRingbuf::<8>::new().unwrap();
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    let mut scratch = vec![0u8; 1 << 16];
    for len in [9, 56, !BUSY_BIT, DISCARD_BIT | 200] {
        put_header(&ring, 0, len, 3);
        ring.producer_pos().store(16, RB_ONCE);
        let mut batch = c.batch().unwrap();
        let err = batch.next(&mut scratch).unwrap().unwrap_err();
        assert!(
            matches!(err, RingbufError::RecordPastProducer { position: 0, available: 16, .. }),
            "{len:#x}: {err:?}"
        );
    }
}

#[test]
fn a_record_busy_forever_is_reported_after_the_limit_and_can_be_skipped() {
    let mut ring = ModelRingbuf::<8>::new().unwrap();
    let (p, mut c) = split_ringbuf(&mut ring).unwrap();
    c.configure(Config { busy_limit: Some(3), ..Config::default() });
    let stuck = p.reserve(8).unwrap();
    p.output(&[1], Notify::Never).unwrap();
    let mut scratch = [0u8; 64];
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(0));
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(0));
    assert_eq!(c.for_each(&mut scratch, |_| ()), Err(RingbufError::BusyTooLong { position: 0, polls: 3 }));
    assert_eq!(c.skip_to_producer(), 32);
    assert_eq!(p.memory().consumer_pos().load(RB_ONCE), 32);
    // The producer does not lap the record still being written, whatever the consumer did.
    assert!(matches!(p.reserve(24), Err(RingbufError::NoSpace { .. })));
    stuck.submit(Notify::Never);
    p.output(&[2], Notify::Never).unwrap();
    assert_eq!(drain(&mut c), [vec![2]]);
}

#[test]
fn a_stale_producer_position_yields_no_phantom_records() {
    // aya#1309: a reader whose producer position started at 0 while consumer_pos was not, read
    // zero-length items from headers it had no business reading.
    let ring = ModelRingbuf::<8>::new().unwrap();
    ring.consumer_pos().store(4096, RB_ONCE);
    ring.producer_pos().store(4096, RB_ONCE);
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    assert_eq!(drain(&mut c).len(), 0);
    assert_eq!(c.prepare_to_sleep(), Ok(true));
    ring.producer_pos().store(0, RB_ONCE);
    assert_eq!(c.batch().err(), Some(RingbufError::ProducerPosBackwards { producer_pos: 0, last_seen: 4096 }));
    ring.consumer_pos().store(4100, RB_ONCE);
    assert_eq!(
        RingbufConsumer::untrusted(&ring).err(),
        Some(RingbufError::MisalignedConsumerPos { consumer_pos: 4100 })
    );
}

#[test]
fn a_small_scratch_or_a_failing_memory_is_an_error_and_consumes_nothing() {
    let mut ring = ModelRingbuf::<32>::new().unwrap();
    let (p, _) = split_ringbuf(&mut ring).unwrap();
    p.output(&sample(1, 20), Notify::Never).unwrap();
    let mut u = RingbufConsumer::untrusted(p.memory()).unwrap();
    let mut small = [0u8; 16];
    assert_eq!(u.for_each(&mut small, |_| ()), Err(RingbufError::ScratchTooSmall { needed: 20, scratch: 16 }));
    assert_eq!(u.position(), 0);
    assert_eq!(drain(&mut u), [sample(1, 20)]);
}

#[test]
fn layouts_are_validated_with_typed_errors() {
    let mut buf = Aligned([0u8; 2 * 64 + 96]);
    assert_eq!(RingbufMapping::new(&mut buf.0, 64).err(), Some(RingbufError::RingNotPowerOfTwo { size: 96 }));
    assert_eq!(RingbufMapping::new(&mut buf.0[..2 * 64 + 8], 64).err(), Some(RingbufError::RingTooSmall { size: 8 }));
    assert_eq!(RingbufMapping::new(&mut buf.0, 24).err(), Some(RingbufError::BadPageSize { page_size: 24 }));
    assert_eq!(
        RingbufMapping::new(&mut buf.0[1..], 64).err().map(|e| matches!(e, RingbufError::Misaligned { .. })),
        Some(true)
    );
    assert_eq!(RingbufMapping::new(&mut buf.0[..100], 64).err(), Some(RingbufError::RingTooSmall { size: 0 }));
    assert_eq!(ModelRingbuf::<3>::new().err(), Some(RingbufError::RingNotPowerOfTwo { size: 24 }));
    assert_eq!(ModelRingbuf::<1>::new().err(), Some(RingbufError::RingTooSmall { size: 8 }));
}

/// The messages spell out the constants they name (the error file imports none of them).
#[test]
fn error_messages_carry_the_constants_they_name() {
    use std::string::ToString;
    let small = RingbufError::RingTooSmall { size: 8 }.to_string();
    assert!(small.contains(&std::format!("{MIN_SIZE} bytes (MIN_SIZE)")), "{small}");
    let flags = RingbufError::UnknownFlags { flags: 4 }.to_string();
    let named = std::format!("BPF_RB_NO_WAKEUP ({BPF_RB_NO_WAKEUP}) and BPF_RB_FORCE_WAKEUP ({BPF_RB_FORCE_WAKEUP})");
    assert!(flags.contains(&named), "{flags}");
    let write = RingbufError::PastReservation { at: 1, len: 40, size: 40 }.to_string();
    assert_eq!(write, "40 bytes at 1 do not fit a 40-byte reservation: write within the sample");
}

#[test]
fn wakeup_flags_are_the_kernels() {
    assert_eq!(Notify::from_flags(0), Ok(Notify::Adaptive));
    assert_eq!(Notify::from_flags(BPF_RB_NO_WAKEUP), Ok(Notify::Never));
    assert_eq!(Notify::from_flags(BPF_RB_FORCE_WAKEUP), Ok(Notify::Always));
    assert_eq!(Notify::from_flags(3), Ok(Notify::Always), "the kernel tests FORCE first");
    assert_eq!(Notify::from_flags(4), Err(RingbufError::UnknownFlags { flags: 4 }));
    for n in [Notify::Adaptive, Notify::Never, Notify::Always] {
        assert_eq!(Notify::from_flags(n.flags()), Ok(n));
    }
    assert_eq!(record_len(0), Some(8));
    assert_eq!(record_len(1), Some(16));
    assert_eq!(record_len(8), Some(16));
    assert_eq!(record_len(usize::MAX - 3), None);
    assert_eq!(pg_off(4095, 4096), 3);
    assert_eq!(pg_off(4096, 4096), 4);
    assert_eq!(pg_off(8, 0), 3, "no division by zero");
}

/// A user ringbuf over `ring`: its producer and the kernel's drain.
fn user_ring<M: RingbufMemory + Copy>(ring: M) -> (UserProducer<M>, Drain<M>) {
    // SAFETY: the only producer, and its consumer is the drain below, which releases only what
    // it has read.
    (unsafe { UserProducer::new(ring, SpinLock::new()) }.unwrap(), Drain::new(ring, SpinLock::new()).unwrap())
}

/// Drain everything once, collecting the samples.
fn drain_user<M: RingbufMemory>(d: &Drain<M>, notify: Notify) -> (Vec<Vec<u8>>, Result<Drained, RingbufError>) {
    let mut scratch = vec![0u8; 1 << 16];
    let mut got = Vec::new();
    let r = d.drain(&mut scratch, notify, |s| {
        got.push(s.to_vec());
        ControlFlow::Continue(())
    });
    (got, r)
}

#[test]
fn the_user_ringbuf_drains_in_reservation_order_skipping_discards() {
    let ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    let (p, d) = user_ring(&ring);
    let mut a = p.reserve(5).unwrap();
    let mut b = p.reserve(8).unwrap();
    let c = p.reserve(1).unwrap();
    a.write(0, &sample(1, 5)).unwrap();
    b.write(0, &sample(2, 8)).unwrap();
    b.submit();
    c.discard();
    assert_eq!(drain_user(&d, Notify::Adaptive), (vec![], Ok(Drained::default())), "the first is BUSY");
    a.submit();
    let (got, r) = drain_user(&d, Notify::Adaptive);
    assert_eq!(got, [sample(1, 5), sample(2, 8)]);
    assert_eq!(r, Ok(Drained { samples: 2, discarded: 1, woke: true }));
    assert_eq!(ring.consumer_pos().load(RB_ONCE), 48);
    assert_eq!(drain_user(&d, Notify::Always).1, Ok(Drained { samples: 0, discarded: 0, woke: true }));
    assert_eq!(drain_user(&d, Notify::Never).1, Ok(Drained::default()));
}

#[test]
fn the_user_ringbuf_fills_the_whole_area_and_wraps() {
    let ring = ModelRingbuf::<8>::new().unwrap(); // 64 bytes
    let (p, d) = user_ring(&ring);
    for i in 0..4 {
        let mut r = p.reserve(8).unwrap();
        r.write(0, &[i; 8]).unwrap();
        drop(r); // discarded
    }
    // libbpf fills all 64 bytes.
    assert_eq!(p.reserve(0).err(), Some(RingbufError::NoSpace { needed: 8, available: 0 }));
    assert_eq!(p.failed_reservations(), 1);
    assert_eq!(drain_user(&d, Notify::Never).1, Ok(Drained { samples: 0, discarded: 4, woke: false }));
    let mut r = p.reserve(20).unwrap(); // [64, 96)
    r.write(0, &sample(4, 20)).unwrap();
    r.submit();
    assert_eq!(drain_user(&d, Notify::Never).0, [sample(4, 20)]);
    let mut r = p.reserve(40).unwrap(); // [96, 144): the sample [104, 144) wraps at 128
    r.write(0, &sample(5, 40)).unwrap();
    r.submit();
    assert_eq!(drain_user(&d, Notify::Never).0, [sample(5, 40)]);
    assert_eq!(p.reserve(57).err(), Some(RingbufError::SampleTooLarge { size: 57, max: 56 }));
}

#[test]
fn a_drain_stops_when_the_callback_says_and_one_drain_runs_at_a_time() {
    let ring = ModelRingbuf::<32>::new().unwrap();
    let (p, d) = user_ring(&ring);
    for i in 0..3 {
        let mut r = p.reserve(1).unwrap();
        r.write(0, &[i]).unwrap();
        r.submit();
    }
    let mut scratch = [0u8; 64];
    let mut inner = None;
    let r = d.drain(&mut scratch, Notify::Adaptive, |_| {
        // The BPF program drains again from its callback: the ring is busy.
        let mut s = [0u8; 64];
        inner = Some(d.drain(&mut s, Notify::Adaptive, |_| ControlFlow::Continue(())));
        ControlFlow::Break(())
    });
    assert_eq!(inner, Some(Err(RingbufError::DrainBusy)));
    assert_eq!(r, Ok(Drained { samples: 1, discarded: 0, woke: true }));
    assert_eq!(drain_user(&d, Notify::Never).0, [vec![1], vec![2]]);
}

#[test]
fn the_drain_validates_what_user_space_wrote() {
    let ring = ModelRingbuf::<8>::new().unwrap();
    let d = Drain::new(&ring, SpinLock::new()).unwrap();
    ring.producer_pos().store(12, RB_ONCE);
    assert_eq!(drain_user(&d, Notify::Adaptive).1, Err(RingbufError::MisalignedProducerPos { producer_pos: 12 }));
    ring.producer_pos().store(16, RB_ONCE);
    put_header(&ring, 0, 9, 0);
    assert_eq!(
        drain_user(&d, Notify::Adaptive).1,
        Err(RingbufError::RecordPastProducer { position: 0, size: 9, available: 16 })
    );
    ring.producer_pos().store(64, RB_ONCE);
    put_header(&ring, 0, 100, 0);
    assert_eq!(
        drain_user(&d, Notify::Adaptive).1,
        Err(RingbufError::RecordPastProducer { position: 0, size: 100, available: 64 })
    );
    ring.producer_pos().store(72, RB_ONCE);
    assert_eq!(
        drain_user(&d, Notify::Adaptive).1,
        Err(RingbufError::ProducerPosTooFarAhead { producer_pos: 72, consumer_pos: 0, size: 64 }),
        "the kernel would drain such a ring's bytes again and again: refused"
    );
    // A producer position behind the consumer's: nothing to drain, as in the kernel.
    ring.consumer_pos().store(64, RB_ONCE);
    ring.producer_pos().store(32, RB_ONCE);
    assert_eq!(drain_user(&d, Notify::Adaptive).1, Ok(Drained::default()));
    // BUSY | DISCARD: skipped as discarded (the kernel tests DISCARD first).
    ring.producer_pos().store(64 + 16, RB_ONCE);
    put_header(&ring, 0, BUSY_BIT | DISCARD_BIT | 3, 0);
    assert_eq!(drain_user(&d, Notify::Never).1, Ok(Drained { samples: 0, discarded: 1, woke: false }));
    assert_eq!(ring.consumer_pos().load(RB_ONCE), 80);
    // Sample larger than the scratch.
    ring.producer_pos().store(80 + 64, RB_ONCE);
    put_header(&ring, 16, 40, 0);
    let mut small = [0u8; 8];
    assert_eq!(
        d.drain(&mut small, Notify::Never, |_| ControlFlow::Continue(())),
        Err(RingbufError::ScratchTooSmall { needed: 40, scratch: 8 })
    );
}

/// Two singly mapped rings written alike (commits, discards, a record left BUSY across a read,
/// records wrapping the area's end): one consumer reads in place (`for_each`'s loop for trusted
/// views, `pg_off` unchecked), the other by the general loop alone (`pg_off` checked); they
/// must agree on every sample, position, discard count and published `consumer_pos`.
///
/// Miri's weak-memory emulation stops with an internal error on this producer's store pattern
/// (with or without the in-place reader: `weak_memory.rs`, "cannot have empty store buffer when
/// previous write was atomic"); `make miri` runs it alone with that emulation off.
#[test]
#[cfg_attr(miri, ignore = "a Miri ICE under weak-memory emulation: `make miri` runs it without")]
fn reading_in_place_agrees_with_the_general_loop() {
    // Sizes drawn anew for every record, or (`runs`) kept for most: runs of one length, which
    // the in-place loop reads with the next position predicted, broken by other lengths.
    let cases = [
        (Publish::PerBatch, Wrapped::Copy, false),
        (Publish::HoldLast, Wrapped::Split, false),
        (Publish::PerBatch, Wrapped::Copy, true),
        (Publish::HoldLast, Wrapped::Split, true),
    ];
    for (publish, wrapped, runs) in cases {
        let (mut fast_buf, mut slow_buf) = (Aligned([0u8; 2 * 64 + 1024]), Aligned([0u8; 2 * 64 + 1024]));
        let mut fast_map = RingbufMapping::new(&mut fast_buf.0, 64).unwrap();
        let mut slow_map = RingbufMapping::new(&mut slow_buf.0, 64).unwrap();
        let (fp, mut fc) = split_ringbuf(&mut fast_map).unwrap();
        let (sp, mut sc) = split_ringbuf(&mut slow_map).unwrap();
        fc.configure(Config { publish, wrapped, check_pg_off: false, ..Config::default() });
        sc.configure(Config { publish, wrapped, ..Config::default() });
        let area = fp.memory().consumer_pos() as *const _ as usize + 2 * 64;
        let (mut seed, mut in_place, mut held, mut size, mut read) = (0x2545_f491_u32, 0, None, 0, 0);
        let steps = if cfg!(miri) { 100 } else { 4_000u32 };
        for step in 0..steps {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            if !runs || (seed >> 24) % 16 == 0 {
                size = (seed >> 8) as usize % 41;
            }
            // Runs: records pile up (below) until a batch holds a run past the prediction's start.
            let action = if runs { (seed >> 20) % 64 } else { (seed >> 20) % 8 };
            let data = sample(step as u8, size);
            let reserved = (fp.reserve(size), sp.reserve(size));
            match reserved {
                (Ok(mut f), Ok(mut s)) => {
                    f.write(0, &data).unwrap();
                    s.write(0, &data).unwrap();
                    match action {
                        0 => {
                            f.discard(Notify::Never);
                            s.discard(Notify::Never);
                        }
                        1 if held.is_none() => {
                            held = Some((f, s)); // BUSY until a later step
                            continue;
                        }
                        _ => {
                            f.submit(Notify::Never);
                            s.submit(Notify::Never);
                        }
                    }
                }
                (Err(RingbufError::NoSpace { .. }), Err(RingbufError::NoSpace { .. })) => {}
                other => panic!("step {step}: the rings differ: {other:?}"),
            }
            if action < 3 || (runs && action < 61) {
                continue; // records pile up: batches of several, wrapping the end
            }
            let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
            let mut got = Vec::new();
            fc.for_each(&mut a, |r| {
                let (one, two) = r.payload.parts();
                if (area..area + 1024).contains(&(one.as_ptr() as usize)) && two.is_empty() {
                    in_place += 1;
                }
                got.push((r.position, [one, two].concat()));
            })
            .unwrap();
            let mut want = Vec::new();
            sc.for_each(&mut b, |r| want.push((r.position, [r.payload.parts().0, r.payload.parts().1].concat())))
                .unwrap();
            assert_eq!(got, want, "step {step}");
            read += got.len();
            assert_eq!((fc.position(), fc.discarded()), (sc.position(), sc.discarded()), "step {step}");
            assert_eq!(fp.memory().consumer_pos().load(RB_ONCE), sp.memory().consumer_pos().load(RB_ONCE));
            if action == if runs { 63 } else { 7 } {
                if let Some((f, s)) = held.take() {
                    f.submit(Notify::Never);
                    s.submit(Notify::Never);
                }
            }
        }
        assert!(in_place > read / 2, "{publish:?}: {in_place} of {read} samples read in place");
        if runs && !cfg!(miri) {
            let predicted = fc.predicted_count();
            assert!(predicted > read / 10, "{publish:?}: {predicted} of {read} positions predicted");
        }
    }
}

/// `for_each` over records of one length predicts each next position from the last length
/// after `PREDICT_AFTER` of them in a row, and a record of another length (or the end of the
/// batch) ends the prediction: every record is read, in order, whole.
#[test]
fn reading_in_place_predicts_positions_only_over_records_of_one_length() {
    let mut buf = Aligned([0u8; 2 * 64 + 1024]);
    let mut map = RingbufMapping::new(&mut buf.0, 64).unwrap();
    let (p, mut c) = split_ringbuf(&mut map).unwrap();
    c.configure(Config { check_pg_off: false, ..Config::default() });
    // 20 records of 16 bytes, one of 24, 20 of 16 again, one of 8 (a header alone), 3 of 16.
    let sizes: Vec<usize> = [vec![8; 20], vec![16], vec![8; 20], vec![0], vec![8; 3]].concat();
    for (i, &size) in sizes.iter().enumerate() {
        p.output(&sample(i as u8, size), Notify::Never).unwrap();
    }
    let mut got = Vec::new();
    assert_eq!(c.for_each(&mut [], |r| got.push((r.position, r.payload.parts().0.to_vec()))), Ok(sizes.len()));
    let mut at = 0;
    let want: Vec<(usize, Vec<u8>)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            at += record_len(size).unwrap();
            (at - record_len(size).unwrap(), sample(i as u8, size))
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(c.position(), at);
    // Each run of 20: its first 9 records read as the header says (the 9th the 8th in a row of
    // its length), the next position predicted after each of the other 11. The run of 3 is
    // too short.
    let run = 20 - (PREDICT_AFTER + 1);
    assert_eq!((c.read_in_place_count(), c.predicted_count()), (sizes.len(), 2 * run));
}

/// `for_each` reads in place exactly what it may: a trusted consumer's committed samples that
/// end within the area (or its double mapping), never a wrapped sample of a single mapping, a
/// length past `producer_pos`, an untrusted consumer's sample, one whose `pg_off` is to be
/// checked, or one whose consumer publishes per record.
#[test]
fn for_each_reads_in_place_only_what_it_may() {
    let fast = Config { check_pg_off: false, ..Config::default() };
    let mut buf = Aligned([0u8; 2 * 64 + 128]);
    let mut map = RingbufMapping::new(&mut buf.0, 64).unwrap();
    let (p, mut c) = split_ringbuf(&mut map).unwrap();
    c.configure(fast);
    let mut scratch = [0u8; 64];
    let read = |c: &mut RingbufConsumer<_>, scratch: &mut [u8]| {
        let mut got = Vec::new();
        let n = c.for_each(scratch, |r| got.push([r.payload.parts().0, r.payload.parts().1].concat()));
        (n, got)
    };
    for i in 0..7 {
        p.output(&[i; 8], Notify::Never).unwrap(); // 16 bytes each, to 112
    }
    assert_eq!(read(&mut c, &mut scratch).0, Ok(7));
    assert_eq!(c.read_in_place_count(), 7);
    for i in 7..14 {
        p.output(&[i; 8], Notify::Never).unwrap(); // the first at 112 ends at the area's end
    }
    let (n, got) = read(&mut c, &mut scratch);
    assert_eq!((n, got), (Ok(7), (7..14).map(|i| vec![i; 8]).collect::<Vec<_>>()));
    assert_eq!(c.read_in_place_count(), 14, "the record ending at the area's end included");
    p.output(&[0; 8], Notify::Never).unwrap(); // at 224 (96)
    p.output(&sample(5, 24), Notify::Never).unwrap(); // header at 240 (112), sample [120, 144): wraps
    let (n, got) = read(&mut c, &mut scratch);
    assert_eq!((n, got), (Ok(2), vec![vec![0; 8], sample(5, 24)]));
    assert_eq!(c.read_in_place_count(), 15, "the wrapped sample copied, not read in place");

    // A length past producer_pos: an error, nothing delivered, nothing consumed.
    let at = c.position();
    assert_eq!(at, 272); // 16 in the area
    p.memory().len_word(16).store(64, RB_ONCE);
    p.memory().producer_pos().store(at + 16, RB_ONCE);
    assert_eq!(
        c.for_each(&mut scratch, |_| panic!("delivered")),
        Err(RingbufError::RecordPastProducer { position: at, size: 64, available: 16 })
    );
    assert_eq!((c.position(), c.read_in_place_count()), (at, 15));
    p.memory().len_word(16).store(8, RB_ONCE);
    assert_eq!(read(&mut c, &mut scratch).0, Ok(1));
    assert_eq!(c.read_in_place_count(), 16);

    // pg_off checked: not in place, and a wrong one is found.
    p.memory().len_word(32).store(8, RB_ONCE);
    p.memory().pg_off_word(32).store(7, RB_ONCE);
    p.memory().producer_pos().store(at + 32, RB_ONCE);
    c.configure(Config::default());
    assert!(matches!(c.for_each(&mut scratch, |_| {}), Err(RingbufError::BadPageOffset { .. })));
    // Per record: not in place either (consumer_pos moves before each record).
    c.configure(Config { publish: Publish::PerRecord, ..fast });
    assert_eq!(read(&mut c, &mut scratch).0, Ok(1));
    assert_eq!(c.read_in_place_count(), 16);

    // Untrusted: every sample copied into the scratch, none read in place.
    let mut u = RingbufConsumer::untrusted(c.memory()).unwrap();
    u.configure(fast);
    let (start, end) = (scratch.as_ptr() as usize, scratch.as_ptr() as usize + scratch.len());
    let mut in_scratch = 0;
    p.memory().len_word(48).store(8, RB_ONCE);
    p.memory().pg_off_word(48).store(pg_off(48, 64), RB_ONCE);
    p.memory().producer_pos().store(at + 48, RB_ONCE);
    let copied = |r: &RingbufRecord<'_>| (start..end).contains(&(r.payload.parts().0.as_ptr() as usize));
    assert_eq!(u.for_each(&mut scratch, |r| in_scratch += u32::from(copied(r))), Ok(1));
    assert_eq!((in_scratch, u.read_in_place_count()), (1, 0));
}

/// Over the kernel's double mapping a sample that wraps the area is one view, read in place.
#[test]
fn for_each_reads_a_wrapped_sample_of_a_double_mapping_in_place() {
    // The ring as a producer leaves it (a single mapping): a 24-byte sample at 112 that wraps.
    let mut single = Aligned([0u8; 2 * 64 + 128]);
    let mut map = RingbufMapping::new(&mut single.0, 64).unwrap();
    let (p, mut c) = split_ringbuf(&mut map).unwrap();
    read_to_112(&p, &mut c);
    p.output(&sample(9, 24), Notify::Never).unwrap();
    drop((p, c));
    // The same pages, the data area twice: what the kernel's second mapping shows.
    let mut double = Aligned([0u8; 2 * 64 + 2 * 128]);
    double.0[..2 * 64 + 128].copy_from_slice(&single.0);
    double.0[2 * 64 + 128..].copy_from_slice(&single.0[2 * 64..]);
    let base = double.0.as_mut_ptr();
    // SAFETY: `double` holds the two pages and the area twice, and outlives `mapping`; its
    // second copy of the area equals the first and nothing writes either while it is read.
    let mapping = unsafe { RingbufMapping::attach(base, base.add(64), 128, 64, true) }.unwrap();
    // SAFETY: nothing produces into this image; this is its only consumer.
    let mut c = unsafe { RingbufConsumer::trusted(&mapping) }.unwrap();
    c.configure(Config { check_pg_off: false, ..Config::default() });
    let (mut got, mut at) = (Vec::new(), 0);
    assert_eq!(
        c.for_each(&mut [], |r| {
            let (one, two) = r.payload.parts();
            (got, at) = ([one, two].concat(), one.as_ptr() as usize);
        }),
        Ok(1)
    );
    assert_eq!(got, sample(9, 24));
    assert_eq!(at, base as usize + 2 * 64 + 120, "one view across the area's end");
    assert_eq!(c.read_in_place_count(), 1);
}

/// A BUSY record's count of polls is its own: once the position moved past it (here by the
/// in-place loop, which does not touch the count), a record BUSY at the next position starts
/// from one.
#[test]
fn the_busy_count_restarts_at_the_next_record() {
    let mut buf = Aligned([0u8; 2 * 64 + 128]);
    let mut map = RingbufMapping::new(&mut buf.0, 64).unwrap();
    let (p, mut c) = split_ringbuf(&mut map).unwrap();
    c.configure(Config { check_pg_off: false, busy_limit: Some(2), ..Config::default() });
    let mut scratch = [0u8; 64];
    let first = p.reserve(8).unwrap(); // at 0
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(0), "BUSY once");
    first.submit(Notify::Never);
    let second = p.reserve(8).unwrap(); // at 16
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(1), "the first read in place, the second BUSY once");
    assert_eq!(c.read_in_place_count(), 1);
    assert_eq!(c.for_each(&mut scratch, |_| ()), Err(RingbufError::BusyTooLong { position: 16, polls: 2 }));
    second.submit(Notify::Never);
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(1));
}
