//! The BPF ring buffer against a hostile peer (also run under Miri by `make miri`): property
//! tests with arbitrary ring contents and positions and a peer that rewrites any word between
//! any two accesses ([`perfring_tests::hostile_bpf`]), the named attacks of the issue (a header
//! length past the ring, `producer_pos` going backwards or beyond `consumer_pos + size`, a
//! record BUSY forever, a misaligned position, a garbage `pg_off`), and a peer *thread* writing
//! real memory while an untrusted consumer and the user ringbuf's drain read it.
#![cfg(not(loom))]

use std::ops::ControlFlow;
use std::sync::atomic::Ordering::Relaxed;

use perfring::bpf_ringbuf::{
    Config, Drain, Notify, RingbufConsumer, RingbufError, RingbufMapping, RingbufMemory, RingbufProducer, SpinLock,
    BUSY_BIT, DISCARD_BIT,
};
use perfring_tests::hostile_bpf::{
    run_bpf_consumer, run_bpf_producer, BpfConsumerCase, BpfPeerWrite, BpfProducerCase, HostileBpfRing, PAGE_SIZE,
};
use proptest::prelude::*;

fn peer_write() -> impl Strategy<Value = BpfPeerWrite> {
    prop_oneof![
        4 => Just(BpfPeerWrite::Nothing),
        1 => any::<usize>().prop_map(BpfPeerWrite::ProducerPos),
        1 => (0usize..128).prop_map(|v| BpfPeerWrite::ProducerPos(v * 8)),
        1 => any::<usize>().prop_map(BpfPeerWrite::ConsumerPos),
        2 => (any::<usize>(), any::<u32>()).prop_map(|(i, v)| BpfPeerWrite::Word(i, v)),
        2 => (any::<usize>(), 0u32..300, 0u32..4).prop_map(|(i, s, f)| BpfPeerWrite::Word(i, s | (f << 30))),
    ]
}

fn cases() -> u32 {
    if cfg!(miri) {
        8
    } else {
        1000
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn a_hostile_peer_cannot_make_a_consumer_or_drain_panic_read_out_of_bounds_or_loop(
        size_log in 4u8..=8,
        init in prop::collection::vec(any::<u8>(), 0..256),
        producer_pos in prop_oneof![any::<usize>(), (0usize..64).prop_map(|p| p * 8)],
        consumer_pos in prop_oneof![Just(0usize), any::<usize>(), (0usize..32).prop_map(|c| c * 8)],
        mode in 0u8..128,
        script in prop::collection::vec(peer_write(), 0..64),
    ) {
        run_bpf_consumer(&BpfConsumerCase { size_log, init, producer_pos, consumer_pos, mode, script });
    }

    #[test]
    fn a_hostile_consumer_pos_cannot_make_the_producer_write_outside_its_reservation(
        size_log in 4u8..=8,
        ops in prop::collection::vec(
            (prop_oneof![0u16..120, Just(u16::MAX), Just(u16::MAX - 1)],
             prop_oneof![any::<usize>(), (0usize..64).prop_map(|c| c * 8)]),
            1..40,
        ),
    ) {
        run_bpf_producer(&BpfProducerCase { size_log, ops });
    }
}

/// A 64-byte hostile ring with one record at 0 whose header says `len`, `producer_pos` at
/// `prod`.
fn ring_with(len: u32, prod: usize, script: Vec<BpfPeerWrite>) -> HostileBpfRing {
    let ring = HostileBpfRing::new(64, &[], prod, 0, script);
    ring.set_header(0, len, 3);
    ring
}

fn first_error(ring: &HostileBpfRing) -> Option<RingbufError> {
    let mut c = RingbufConsumer::untrusted(ring).unwrap();
    let mut scratch = vec![0u8; 128];
    let mut batch = match c.batch() {
        Ok(b) => b,
        Err(e) => return Some(e),
    };
    let r = batch.next(&mut scratch)?;
    r.err()
}

#[test]
fn attack_header_length_past_the_ring_is_refused() {
    for len in [57, 1000, (1 << 30) - 1] {
        assert_eq!(
            first_error(&ring_with(len, 64, vec![])),
            Some(RingbufError::RecordPastProducer { position: 0, size: len, available: 64 })
        );
    }
}

#[test]
fn attack_header_length_past_the_producer_is_refused() {
    assert_eq!(
        first_error(&ring_with(9, 16, vec![])),
        Some(RingbufError::RecordPastProducer { position: 0, size: 9, available: 16 })
    );
}

#[test]
fn attack_producer_pos_backwards_is_refused() {
    let ring = ring_with(8, 16, vec![]);
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    let mut scratch = [0u8; 64];
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(1));
    ring.producer_pos().store(8, Relaxed);
    assert_eq!(c.batch().err(), Some(RingbufError::ProducerPosBackwards { producer_pos: 8, last_seen: 16 }));
}

#[test]
fn attack_producer_pos_beyond_consumer_pos_plus_size_is_refused() {
    assert_eq!(
        first_error(&ring_with(8, 72, vec![])),
        Some(RingbufError::ProducerPosTooFarAhead { producer_pos: 72, consumer_pos: 0, size: 64 })
    );
}

#[test]
fn attack_misaligned_producer_pos_is_refused() {
    assert_eq!(first_error(&ring_with(8, 20, vec![])), Some(RingbufError::MisalignedProducerPos { producer_pos: 20 }));
}

#[test]
fn attack_garbage_pg_off_is_refused() {
    let ring = ring_with(8, 16, vec![]);
    ring.set_header(0, 8, 0xdead_beef);
    assert_eq!(first_error(&ring), Some(RingbufError::BadPageOffset { position: 0, pg_off: 0xdead_beef, expected: 3 }));
    assert_eq!(PAGE_SIZE, ring.page_size());
}

#[test]
fn attack_record_busy_forever_is_reported_not_waited_for() {
    let ring = ring_with(8 | BUSY_BIT, 16, vec![]);
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    c.configure(Config { busy_limit: Some(5), ..Config::default() });
    let mut scratch = [0u8; 64];
    let results: Vec<_> = (0..5).map(|_| c.for_each(&mut scratch, |_| ())).collect();
    assert_eq!(results[..4], [Ok(0), Ok(0), Ok(0), Ok(0)]);
    assert_eq!(results[4], Err(RingbufError::BusyTooLong { position: 0, polls: 5 }));
    assert_eq!(c.skip_to_producer(), 16, "the caller gives up on it: the bytes are skipped and counted");
    assert_eq!(c.position(), 16);
}

#[test]
fn attack_header_rewritten_between_its_check_and_the_copy_cannot_change_the_size_used() {
    // Accesses: 0 consumer_pos (at attach), 1 producer_pos, 2 the len word, 3 the pg_off word;
    // before access 4 (the first sample word) the peer rewrites the header to claim a sample
    // past the ring.
    let script = vec![
        BpfPeerWrite::Nothing,
        BpfPeerWrite::Nothing,
        BpfPeerWrite::Nothing,
        BpfPeerWrite::Nothing,
        BpfPeerWrite::Word(0, 1000),
    ];
    let ring = ring_with(8, 16, script);
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    let mut scratch = vec![0u8; 128];
    let mut batch = c.batch().unwrap();
    let r = batch.next(&mut scratch).unwrap().unwrap();
    assert_eq!(r.payload.len(), 8, "the size checked is the size used");
    assert!(batch.next(&mut scratch).is_none(), "and the batch ends at the producer_pos it validated");
}

#[test]
fn attack_producer_pos_moved_during_a_batch_is_ignored_until_the_next() {
    // Accesses: 0 consumer_pos (at attach), 1 producer_pos; before 2 (the header) it moves.
    let script = vec![BpfPeerWrite::Nothing, BpfPeerWrite::Nothing, BpfPeerWrite::ProducerPos(1 << 40)];
    let ring = ring_with(8, 16, script);
    let mut c = RingbufConsumer::untrusted(&ring).unwrap();
    let mut scratch = [0u8; 64];
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(1));
    assert!(matches!(c.batch().err(), Some(RingbufError::ProducerPosTooFarAhead { .. })));
}

#[test]
fn attack_on_the_drain_a_discard_loop_is_bounded_and_garbage_is_typed() {
    // The user ringbuf: user space writes everything. A misaligned producer_pos, a length past
    // it, one larger than the ring: the kernel's errors.
    let ring = HostileBpfRing::new(64, &[], 12, 0, vec![]);
    let drain = Drain::new(&ring, SpinLock::new()).unwrap();
    let mut scratch = [0u8; 64];
    let mut go = |_: &[u8]| ControlFlow::Continue(());
    assert_eq!(
        drain.drain(&mut scratch, Notify::Never, &mut go),
        Err(RingbufError::MisalignedProducerPos { producer_pos: 12 })
    );
    let ring = ring_with(9, 16, vec![]);
    let drain = Drain::new(&ring, SpinLock::new()).unwrap();
    assert_eq!(
        drain.drain(&mut scratch, Notify::Never, &mut go),
        Err(RingbufError::RecordPastProducer { position: 0, size: 9, available: 16 })
    );
    // A ring of discarded records and a peer that moves producer_pos 8 bytes on before every
    // peek (each takes four accesses: producer_pos, consumer_pos, the header, the skip's store):
    // every skip moves consumer_pos on, and the drain ends once the peer stops (it would at
    // MAX_DRAIN_SAMPLES otherwise).
    let init: Vec<u8> = [DISCARD_BIT.to_ne_bytes(), [0; 4]].concat();
    let script: Vec<_> = (0..100)
        .flat_map(|j| {
            [
                BpfPeerWrite::ProducerPos(8 * (j + 2)),
                BpfPeerWrite::Nothing,
                BpfPeerWrite::Nothing,
                BpfPeerWrite::Nothing,
            ]
        })
        .collect();
    let ring = HostileBpfRing::new(64, &init, 8, 0, script);
    let drain = Drain::new(&ring, SpinLock::new()).unwrap();
    let d = drain.drain(&mut scratch, Notify::Never, &mut go).unwrap();
    assert!(d.discarded >= 100 && d.samples == 0, "{d:?}");
    let (cons, prod) = (ring.consumer_pos().load(Relaxed), ring.producer_pos().load(Relaxed));
    assert_eq!(cons, prod, "drained to producer_pos");
    assert!(ring.accesses.get() < 1000);
    // A producer_pos that runs more than a ring ahead is refused: the kernel would drain the
    // ring's bytes again and again.
    ring.producer_pos().store(prod + 72, Relaxed);
    assert_eq!(
        drain.drain(&mut scratch, Notify::Never, &mut go),
        Err(RingbufError::ProducerPosTooFarAhead { producer_pos: prod + 72, consumer_pos: cons, size: 64 })
    );
}

#[test]
fn attack_consumer_pos_garbage_never_makes_the_producer_overwrite_a_record_being_written() {
    let ring = HostileBpfRing::new(64, &[], 0, 0, vec![]);
    // SAFETY: the only producer of this ring.
    let p = unsafe { RingbufProducer::new(&ring, SpinLock::new()) }.unwrap();
    let mut open = p.reserve(8).unwrap(); // [0, 16), BUSY
    open.write(0, &[0xAB; 8]).unwrap();
    let before = ring.snapshot();
    let mut refused = 0;
    for cons in [64usize, 1 << 40, usize::MAX - 7, 48, 16usize.wrapping_sub(64), 0, usize::MAX - 63] {
        ring_set_consumer(&ring, cons);
        match p.reserve(8) {
            // Anything reserved lies after the open record and before it comes round again.
            Ok(r) => assert!(r.position() >= 16 && r.position() + 16 <= 64, "consumer_pos {cons:#x}: {r:?}"),
            Err(RingbufError::ConsumerPosInvalid { .. } | RingbufError::NoSpace { .. }) => refused += 1,
            Err(e) => panic!("consumer_pos {cons:#x}: {e}"),
        }
    }
    assert_eq!(ring.snapshot()[..16], before[..16], "the open record's header and sample are untouched");
    assert!(refused >= 3, "the impossible positions are refused");
    assert_eq!(p.failed_reservations(), refused);
    drop(open);
}

/// Store `consumer_pos` as a hostile consumer would.
fn ring_set_consumer(ring: &HostileBpfRing, v: usize) {
    ring.consumer_pos().store(v, Relaxed);
}

/// A peer *thread* rewriting real memory (a [`RingbufMapping`]) with 32-bit and position-sized atomic
/// stores while an untrusted consumer and the user ringbuf's drain read it: under Miri this
/// shows their read paths are defined behaviour even when the peer writes concurrently, not
/// only between accesses (the peer's stores have the sizes of our loads: 32-bit words, and the
/// positions' `usize`).
#[test]
fn untrusted_readers_racing_a_peer_thread_on_real_memory_are_defined_behaviour() {
    use std::sync::atomic::{AtomicU32, AtomicUsize};

    const PAGE: usize = 64;
    const DATA: usize = 128;
    let mut buf: Vec<u64> = vec![0; (2 * PAGE + DATA) / 8];
    let base = buf.as_mut_ptr().cast::<u8>();
    struct Shared(*mut u8);
    // SAFETY: the pointer is only used for atomic accesses inside the live buffer.
    unsafe impl Sync for Shared {}
    let shared = Shared(base);
    let rounds = if cfg!(miri) { 20 } else { 20_000 };
    std::thread::scope(|s| {
        let shared = &shared;
        s.spawn(move || {
            let mut x = 0x9E37_79B9_7F4A_7C15usize;
            for i in 0..rounds {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let word = 2 * PAGE + 4 * (x % (DATA / 4));
                let value = if i % 2 == 0 { (x as u32) & 0xff } else { x as u32 };
                // SAFETY: an aligned u32 inside the buffer, accessed only atomically by both threads.
                unsafe { AtomicU32::from_ptr(shared.0.add(word).cast()).store(value, Relaxed) };
                if i % 3 == 0 {
                    // SAFETY: producer_pos, an aligned usize at the producer page's start.
                    unsafe { AtomicUsize::from_ptr(shared.0.add(PAGE).cast()).store((x % 32) * 8, Relaxed) };
                }
            }
        });
        // SAFETY: the buffer outlives the scope; the pages and the data area are inside it, and
        // every access to them is atomic on both sides (the untrusted consumer and the drain
        // read the data with 32-bit atomic loads only).
        let map = unsafe { RingbufMapping::attach(shared.0, shared.0.add(PAGE), DATA, PAGE, false) }.unwrap();
        let mut consumer = RingbufConsumer::untrusted(&map).unwrap();
        let drain = Drain::new(&map, SpinLock::new()).unwrap();
        let mut scratch = vec![0u8; DATA];
        for i in 0..rounds / 4 {
            if consumer.for_each(&mut scratch, |r| assert!(r.payload.len() <= DATA - 8)).is_err() {
                consumer.skip_to_producer();
            }
            if i % 2 == 0 {
                let _ = drain.drain(&mut scratch, Notify::Never, |s| {
                    assert!(s.len() <= DATA - 8);
                    ControlFlow::Continue(())
                });
            }
        }
    });
    drop(buf);
}
