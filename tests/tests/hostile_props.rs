//! The hostile-peer scenarios of the fuzz targets as property tests (also run under Miri by
//! `make miri`): arbitrary initial ring contents and positions, and a peer that rewrites any
//! word between any two accesses. See [`perfring_tests::hostile`] for the invariants.
#![cfg(not(loom))]

use perfring::memory::Position;
use perfring::page::MmapPage;
use perfring_tests::hostile::{run_consumer, run_producer, ConsumerCase, PeerWrite, ProducerCase};
use proptest::prelude::*;
use std::mem::offset_of;

fn peer_write() -> impl Strategy<Value = PeerWrite> {
    prop_oneof![
        4 => Just(PeerWrite::Nothing),
        1 => any::<usize>().prop_map(|v| PeerWrite::Position(Position::DataHead, v)),
        1 => (0usize..64).prop_map(|v| PeerWrite::Position(Position::DataHead, v * 8)),
        1 => any::<usize>().prop_map(|v| PeerWrite::Position(Position::DataTail, v)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(i, v)| PeerWrite::DataWord(i, v)),
        2 => (any::<usize>(), 0u16..200).prop_map(|(i, s)| PeerWrite::DataWord(i, (s as usize) << 48)),
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
    fn hostile_peer_cannot_make_the_consumer_panic_read_out_of_bounds_or_loop(
        size_log in 6u8..=9,
        init in prop::collection::vec(any::<u8>(), 0..256),
        head in prop_oneof![any::<usize>(), (0usize..128).prop_map(|h| h * 8)],
        tail in prop_oneof![Just(0usize), any::<usize>(), (0usize..64).prop_map(|t| t * 8)],
        script in prop::collection::vec(peer_write(), 0..64),
    ) {
        run_consumer(&ConsumerCase { size_log, init, head, tail, script });
    }

    #[test]
    fn hostile_tail_cannot_make_the_producer_write_outside_its_reservation(
        size_log in 6u8..=9,
        mode in 0u8..4,
        ops in prop::collection::vec((1u16..40, prop_oneof![any::<usize>(), (0usize..256).prop_map(|t| t * 8)]), 1..40),
    ) {
        run_producer(&ProducerCase { size_log, mode, ops });
    }
}

/// A peer *thread* rewriting the shared memory with atomic stores while an untrusted consumer
/// reads it through a real [`perfring::memory::Mapping`]: under Miri this shows the untrusted read path
/// is defined behaviour even when the peer writes concurrently (not only between accesses).
#[test]
fn untrusted_consumer_racing_a_peer_thread_on_real_memory_is_defined_behaviour() {
    use perfring::loom::AtomicUsize;
    use std::sync::atomic::Ordering::Relaxed;

    const PAGE: usize = 2048;
    const DATA: usize = 256;
    let words = (PAGE + DATA) / 8;
    let mut buf: Vec<u64> = vec![0; words];
    let base = buf.as_mut_ptr().cast::<u8>();
    // data_offset and data_size, written as the page's owner would.
    for (off, v) in [(offset_of!(MmapPage, data_offset), PAGE as u64), (offset_of!(MmapPage, data_size), DATA as u64)] {
        // SAFETY: 8-aligned u64 fields inside the buffer; nothing else accesses them yet.
        unsafe { base.add(off).cast::<u64>().write(v) };
    }
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
                // Any data word, and sometimes the head.
                let word = PAGE + 8 * (x % (DATA / 8));
                // SAFETY: aligned usize words inside the buffer, accessed only atomically by both threads.
                unsafe { AtomicUsize::from_ptr(shared.0.add(word).cast()).store(x, Relaxed) };
                if i % 3 == 0 {
                    let head = offset_of!(MmapPage, data_head);
                    // SAFETY: as above.
                    unsafe { AtomicUsize::from_ptr(shared.0.add(head).cast()).store((x % 64) * 8, Relaxed) };
                }
            }
        });
        // SAFETY: the buffer outlives the scope; every access to it is atomic on both sides.
        let map = unsafe { perfring::memory::Mapping::attach(shared.0, PAGE + DATA) }.unwrap();
        let mut consumer = perfring::consumer::Consumer::untrusted(&map).unwrap();
        let mut scratch = vec![0u8; 65536];
        for _ in 0..rounds / 4 {
            if consumer.for_each(&mut scratch, |r| assert_eq!(usize::from(r.header.size), r.bytes.len())).is_err() {
                consumer.skip_to_head();
            }
        }
    });
    drop(buf);
}
