//! One test per attack on the ring from the kernel's history and the literature, each named
//! after what it tries. The peer is scripted ([`perfring_tests::hostile`]): it can rewrite any
//! word between any two of our accesses.
#![cfg(not(loom))]

use perfring::consumer::Consumer;
use perfring::consumer::ReadError;
use perfring::memory::Position;
use perfring::producer::{EventIdentity, OutputError, Producer, ProducerConfig};
use perfring::record::{Endian, Header};
use perfring_tests::hostile::{HostileRing, PeerWrite};

fn header_word(size: u16) -> usize {
    let h = Header { type_: 9, misc: 0, size }.to_bytes(Endian::NATIVE);
    usize::from_ne_bytes(h[..std::mem::size_of::<usize>()].try_into().unwrap())
}

fn ring_with_record(size: u16, head: usize, script: Vec<PeerWrite>) -> HostileRing {
    let ring = HostileRing::new(64, &[], head, 0, script);
    // SAFETY: test setup, single-threaded; offset 0 is inside the 64-byte area.
    unsafe {
        perfring::memory::RingMemory::write(
            &ring,
            perfring::memory::Area::Data,
            0,
            &Header { type_: 9, misc: 0, size }.to_bytes(Endian::NATIVE),
        )
    };
    ring
}

fn first_error(ring: &HostileRing) -> Option<ReadError> {
    let mut c = Consumer::untrusted(ring).unwrap();
    c.configure(perfring::consumer::ConsumerConfig::EVERY_BATCH); // the scripts count its accesses
    let mut scratch = vec![0u8; 65536];
    let mut batch = match c.batch() {
        Ok(b) => b,
        Err(e) => return Some(e),
    };
    let r = batch.next(&mut scratch)?;
    r.err()
}

#[test]
fn attack_head_behind_tail_is_refused() {
    let ring = HostileRing::new(64, &[], 0, 0, vec![]);
    ring.set(Position::DataTail, 32);
    let mut c = Consumer::untrusted(&ring).unwrap();
    c.configure(perfring::consumer::ConsumerConfig::EVERY_BATCH); // the scripts count its accesses
    ring.set(Position::DataHead, 16);
    assert_eq!(c.batch().err(), Some(ReadError::HeadBehindTail { head: 16, tail: 32 }));
}

#[test]
fn attack_head_beyond_tail_plus_size_is_refused() {
    let ring = HostileRing::new(64, &[], 64 + 8, 0, vec![]);
    assert_eq!(first_error(&ring), Some(ReadError::HeadTooFarAhead { head: 72, tail: 0, data_size: 64 }));
}

#[test]
fn attack_size_zero_record_does_not_loop() {
    let ring = ring_with_record(0, 16, vec![]);
    assert_eq!(first_error(&ring), Some(ReadError::ZeroSize { position: 0 }));
}

#[test]
fn attack_size_not_a_multiple_of_8_is_refused() {
    let ring = ring_with_record(20, 24, vec![]);
    assert_eq!(first_error(&ring), Some(ReadError::MisalignedSize { position: 0, size: 20 }));
}

#[test]
fn attack_size_crossing_head_is_refused() {
    let ring = ring_with_record(48, 16, vec![]);
    assert_eq!(first_error(&ring), Some(ReadError::SizeBeyondHead { position: 0, size: 48, available: 16 }));
}

#[test]
fn attack_record_changed_between_header_read_and_body_read_cannot_change_its_size() {
    // The peer acts before each access: 0 the tail load at attach, 1 the head load, 2 the
    // header word. Before access 3 (the first body word) it rewrites the header to claim 65528.
    let script =
        vec![PeerWrite::Nothing, PeerWrite::Nothing, PeerWrite::Nothing, PeerWrite::DataWord(0, header_word(65528))];
    let ring = ring_with_record(24, 24, script);
    let mut c = Consumer::untrusted(&ring).unwrap();
    c.configure(perfring::consumer::ConsumerConfig::EVERY_BATCH); // the scripts count its accesses
    let mut scratch = vec![0u8; 65536];
    let mut batch = c.batch().unwrap();
    let r = batch.next(&mut scratch).unwrap().unwrap();
    assert_eq!(r.header.size, 24, "the size checked is the size used");
    assert_eq!(r.bytes.len(), 24);
    assert_eq!(Header::parse(r.bytes, Endian::NATIVE).unwrap().size, 24, "the copy holds the checked header");
    assert!(batch.next(&mut scratch).is_none(), "and the batch ends at the head it validated");
}

#[test]
fn attack_head_moved_during_a_batch_is_ignored_until_the_next_batch() {
    // The peer moves data_head far ahead after we loaded it: this batch reads only what it
    // validated, and the next batch refuses the bad head.
    let script = vec![PeerWrite::Nothing, PeerWrite::Nothing, PeerWrite::Position(Position::DataHead, 1 << 40)];
    let ring = ring_with_record(16, 16, script);
    let mut c = Consumer::untrusted(&ring).unwrap();
    c.configure(perfring::consumer::ConsumerConfig::EVERY_BATCH); // the scripts count its accesses
    let mut scratch = vec![0u8; 65536];
    assert_eq!(c.for_each(&mut scratch, |_| {}).unwrap(), 1);
    assert!(matches!(c.batch().err(), Some(ReadError::HeadTooFarAhead { .. })));
}

/// A SAMPLE record of `len` bytes: its header, then `fill`.
fn record(fill: u8, len: usize) -> Vec<u8> {
    let mut r = vec![fill; len];
    r[..8].copy_from_slice(&Header { type_: 9, misc: 0, size: len as u16 }.to_bytes(Endian::NATIVE));
    r
}

/// A producer whose ring holds 56 unread bytes (the fullest state of a 64-byte ring), so the
/// next reservation cannot be justified by the tail it cached and must load the peer's tail.
fn producer_after_one_record(ring: &HostileRing) -> Producer<&HostileRing> {
    // SAFETY: the only producer of this ring.
    let p = unsafe { Producer::new(ring, ProducerConfig::default()) }.unwrap();
    p.output(&record(0xAB, 56), &EventIdentity::ANONYMOUS).unwrap();
    p
}

#[test]
fn attack_tail_moved_backwards_makes_the_producer_drop_not_overwrite() {
    let ring = HostileRing::new(64, &[], 0, 0, vec![]);
    let p = producer_after_one_record(&ring);
    let before = ring.snapshot();
    ring.set(Position::DataTail, 0usize.wrapping_sub(64)); // claims 120 unread bytes
    assert_eq!(p.output(&record(0xCD, 8), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    assert_eq!(ring.snapshot(), before, "nothing written");
    assert_eq!(p.lost_pending(), 1, "the drop is counted");
}

#[test]
fn attack_tail_beyond_head_makes_the_producer_drop_not_overwrite() {
    let ring = HostileRing::new(64, &[], 0, 0, vec![]);
    let p = producer_after_one_record(&ring);
    let before = ring.snapshot();
    ring.set(Position::DataTail, 64); // beyond head (56)
    assert_eq!(p.output(&record(0xCD, 8), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    assert_eq!(ring.snapshot(), before);
    assert_eq!(p.nest(), 0);
}

#[test]
fn attack_unaligned_tail_at_attach_is_refused() {
    let ring = HostileRing::new(64, &[], 0, 3, vec![]);
    assert!(Consumer::untrusted(&ring).is_err());
}
