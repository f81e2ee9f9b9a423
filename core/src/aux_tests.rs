//! Unit tests of the AUX area.

extern crate std;

use core::cell::Cell;
use std::vec::Vec;

use crate::aux::{AuxConsumer, AuxProducer};
use crate::consumer::Scratch;
use crate::fences::{B_HEAD_STORE, LOCAL};
use crate::memory::RingMemory;
use crate::memory::{Area, ModelRing, Position};
use crate::producer::{EventIdentity, OutputError, Producer, ProducerConfig};
use crate::record::Aux;
use crate::record::{aux_flags, types, Endian, Header, PidTid};
use crate::split;
use crate::test_memory::LoadHook;

type Ring = ModelRing<64, 8>; // 512-byte data ring, 64-byte AUX area

/// The ends of a data ring over `ring` and the producer of its AUX area (`overwrite` and
/// `watermark` as [`AuxProducer::new`] takes them).
fn aux_ring(ring: &mut Ring, overwrite: bool, watermark: usize) -> (crate::split::Ends<'_, Ring>, AuxProducer<&Ring>) {
    let (data, records) = split(ring, ProducerConfig::default()).unwrap();
    // SAFETY: the only AUX producer of this ring: `split` borrowed the ring exclusively, and
    // the ends returned beside it are its only other users.
    let aux = unsafe { AuxProducer::new(*data.memory(), overwrite, watermark) }.unwrap();
    ((data, records), aux)
}

/// One AUX transaction of all of `bytes` by the anonymous writer: what `output_end` returned.
fn publish(aux: &mut AuxProducer<&Ring>, data: &Producer<&Ring>, bytes: &[u8]) -> (Option<Aux>, bool) {
    let mut h = aux.output_begin().unwrap();
    aux.write(&mut h, bytes).unwrap();
    aux.output_end(h, bytes.len(), data, &EventIdentity::ANONYMOUS).unwrap()
}

fn aux_records<M: crate::memory::RingMemory>(c: &mut crate::consumer::Consumer<M>) -> Vec<Aux> {
    let mut scratch = Scratch::new();
    let mut out = Vec::new();
    c.for_each(&mut scratch, |r| {
        assert_eq!(r.header.type_, types::AUX);
        let u = |o: usize| u64::from_ne_bytes(r.bytes[o..o + 8].try_into().unwrap());
        out.push(Aux { misc: 0, aux_offset: u(8), aux_size: u(16), flags: u(24), sample_id: None });
    })
    .unwrap();
    out
}

#[test]
fn non_overwrite_aux_round_trip_emits_aux_records_with_chunk_start_offsets() {
    let mut ring = Ring::new().unwrap();
    let ((data, mut records), mut aux) = aux_ring(&mut ring, false, 0);
    let mem = *data.memory();
    let mut reader = AuxConsumer::new(mem).unwrap();
    let mut got = Vec::new();
    let mut sent = Vec::new();
    for round in 0..10u8 {
        let bytes: Vec<u8> = (0..20).map(|i| round * 20 + i).collect();
        let (rec, _) = publish(&mut aux, &data, &bytes);
        assert_eq!(
            rec,
            Some(Aux { misc: 0, aux_offset: 20 * u64::from(round), aux_size: 20, flags: 0, sample_id: None })
        );
        sent.extend_from_slice(&bytes);
        let mut out = [0u8; 64];
        let (start, n) = reader.read(&mut out);
        assert_eq!(start, 20 * usize::from(round));
        got.extend_from_slice(&out[..n]);
    }
    assert_eq!(got, sent, "every AUX byte, across 3 wraps of the 64-byte area");
    let recs = aux_records(&mut records);
    assert_eq!(recs.len(), 10);
}

#[test]
fn non_overwrite_aux_without_space_fails_until_the_consumer_frees() {
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, false, 0);
    let mem = *data.memory();
    let mut h = aux.output_begin().unwrap();
    assert_eq!(h.available(), 63, "CIRC_SPACE keeps one byte free");
    aux.write(&mut h, &[1; 63]).unwrap();
    assert!(matches!(aux.write(&mut h, &[1]), Err(OutputError::PastReservation { .. })));
    aux.output_end(h, 63, &data, &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(aux.output_begin().unwrap_err(), OutputError::AuxNoSpace);
    let mut reader = AuxConsumer::new(mem).unwrap();
    let mut out = [0u8; 64];
    assert_eq!(reader.read(&mut out).1, 63);
    assert_eq!(aux.output_begin().unwrap().available(), 63);
}

#[test]
fn drivers_may_not_set_overwrite_and_truncated_wakes() {
    let mut ring = Ring::new().unwrap();
    let ((data, mut c), mut aux) = aux_ring(&mut ring, false, 1 << 20);
    let mut h = aux.output_begin().unwrap();
    assert_eq!(h.flag(aux_flags::OVERWRITE), Err(OutputError::AuxOverwriteFlag));
    h.flag(aux_flags::TRUNCATED | aux_flags::PARTIAL).unwrap();
    aux.write(&mut h, &[7; 8]).unwrap();
    let (rec, wake) = aux.output_end(h, 8, &data, &EventIdentity::ANONYMOUS).unwrap();
    assert!(wake, "TRUNCATED wakes the consumer");
    assert_eq!(rec.unwrap().flags, aux_flags::TRUNCATED | aux_flags::PARTIAL);
    assert_eq!(aux_records(&mut c)[0].flags, aux_flags::TRUNCATED | aux_flags::PARTIAL);
}

#[test]
fn overwrite_mode_sets_overwrite_reports_the_end_offset_and_suppresses_empty_records() {
    let mut ring = Ring::new().unwrap();
    let ((data, mut c), mut aux) = aux_ring(&mut ring, true, 0);
    let mut h = aux.output_begin().unwrap();
    aux.write(&mut h, &[3; 100]).unwrap(); // wraps the 64-byte area
    let (rec, wake) = aux.output_end(h, 100, &data, &EventIdentity::ANONYMOUS).unwrap();
    assert!(!wake, "no wakeups in overwrite mode");
    assert_eq!(
        rec,
        Some(Aux { misc: 0, aux_offset: 100, aux_size: 100, flags: aux_flags::OVERWRITE, sample_id: None })
    );
    let h = aux.output_begin().unwrap();
    let (rec, _) = aux.output_end(h, 0, &data, &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(rec, None, "an OVERWRITE-only record of size 0 is not emitted");
    assert_eq!(aux_records(&mut c).len(), 1);
}

#[test]
fn snapshot_returns_the_newest_bytes_oldest_first_and_says_when_data_was_overwritten() {
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, true, 0);
    let mem = *data.memory();
    let mut snap = AuxConsumer::new(mem).unwrap();
    let mut all: Vec<u8> = Vec::new();
    let write = |aux: &mut AuxProducer<_>, n: usize, all: &mut Vec<u8>| {
        let bytes: Vec<u8> = (0..n).map(|i| (all.len() + i) as u8).collect();
        publish(aux, &data, &bytes);
        all.extend_from_slice(&bytes);
    };
    write(&mut aux, 40, &mut all);
    let mut out = [0u8; 64];
    let s = snap.snapshot(&mut out);
    assert_eq!((s.start, s.len, s.overwritten), (0, 40, false));
    assert_eq!(&out[..40], &all[..40]);
    write(&mut aux, 50, &mut all); // 50 new bytes: all fit
    let s = snap.snapshot(&mut out);
    assert_eq!((s.start, s.len, s.overwritten), (40, 50, false));
    assert_eq!(&out[..50], &all[40..90]);
    write(&mut aux, 150, &mut all); // more than the area: the last 64 survive
    let s = snap.snapshot(&mut out);
    assert_eq!((s.start, s.len, s.overwritten), (240 - 64, 64, true));
    assert_eq!(&out[..64], &all[240 - 64..240]);
}

#[test]
fn aux_errors_say_what_was_refused() {
    use std::string::ToString;
    assert_eq!(
        OutputError::AuxNoSpace.to_string(),
        "no space in the AUX area: the consumer must free some (the kernel disables the event)"
    );
    assert_eq!(
        OutputError::AuxOverwriteFlag.to_string(),
        "OVERWRITE is set by the core, not by drivers: leave it out of the flags"
    );
}

#[test]
fn aux_record_carries_the_writers_sample_id_trailer() {
    use crate::record::{sample_type, DecodeContext, Record, SampleId};
    let mut ring = Ring::new().unwrap();
    let ((data, mut c), mut aux) = aux_ring(&mut ring, false, 0);
    let st = sample_type::TID | sample_type::TIME | sample_type::IDENTIFIER;
    let sid = SampleId {
        tid: Some(PidTid { pid: 10, tid: 11 }),
        time: Some(12345),
        identifier: Some(42),
        ..SampleId::default()
    };
    let w = EventIdentity { id: 42, sample_id: Some((st, sid)) };
    let mut h = aux.output_begin().unwrap();
    aux.write(&mut h, &[5; 16]).unwrap();
    let (rec, _) = aux.output_end(h, 16, &data, &w).unwrap();
    assert_eq!(rec, Some(Aux { misc: 0, aux_offset: 0, aux_size: 16, flags: 0, sample_id: Some(sid) }));
    let ctx = DecodeContext { sample_type: st, sample_id_all: true, ..DecodeContext::new(Endian::NATIVE) };
    let mut expect = [0u8; 56];
    assert_eq!(Record::Aux(rec.unwrap()).encode_in(&ctx, &mut expect), Ok(56));
    let mut got = Vec::new();
    c.for_each(&mut Scratch::new(), |r| got.push(r.bytes.to_vec())).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(Header::parse(&got[0], Endian::NATIVE).unwrap().size, 32 + 24, "body + trailer");
    assert_eq!(&got[0][..], &expect[..]);
    assert_eq!(&got[0][32..36], &10u32.to_ne_bytes(), "the trailer follows the 32-byte body");
    assert_eq!(&got[0][48..56], &42u64.to_ne_bytes());
}

#[test]
fn non_overwrite_output_end_publishes_at_most_the_bytes_written() {
    let mut ring = Ring::new().unwrap();
    let ((data, mut c), mut aux) = aux_ring(&mut ring, false, 0);
    let mut h = aux.output_begin().unwrap();
    aux.write(&mut h, &[1; 8]).unwrap();
    assert_eq!(
        aux.output_end(h, 9, &data, &EventIdentity::ANONYMOUS),
        Err(OutputError::PastReservation { requested: 9, remaining: 8 }),
        "publishing bytes the hardware never wrote"
    );
    assert_eq!(aux.head(), 0, "nothing was published");
    assert!(aux_records(&mut c).is_empty());
    // Fewer than written is allowed: the driver keeps only what it vouches for.
    let mut h = aux.output_begin().unwrap();
    aux.write(&mut h, &[1; 16]).unwrap();
    let (rec, _) = aux.output_end(h, 8, &data, &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(rec, Some(Aux { misc: 0, aux_offset: 0, aux_size: 8, flags: 0, sample_id: None }));
    assert_eq!(aux.head(), 8);
}

#[test]
fn a_hostile_aux_tail_leaves_no_space_and_no_overflow() {
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, false, 0);
    let mem = *data.memory();
    let tail = mem.position(Position::AuxTail);
    // A tail exactly one area behind the head: "used" is the whole area.
    tail.store(0usize.wrapping_sub(64), LOCAL);
    assert_eq!(aux.output_begin().unwrap_err(), OutputError::AuxNoSpace);
    // A tail ahead of the head: "used" wraps to nearly 2^64.
    tail.store(8, LOCAL);
    assert_eq!(aux.output_begin().unwrap_err(), OutputError::AuxNoSpace);
    // One byte less than the area used: no space either (CIRC_SPACE keeps one byte free).
    tail.store(0usize.wrapping_sub(63), LOCAL);
    assert_eq!(aux.output_begin().unwrap_err(), OutputError::AuxNoSpace);
    tail.store(0usize.wrapping_sub(62), LOCAL);
    assert_eq!(aux.output_begin().unwrap().available(), 1);
}

#[test]
fn the_watermark_wakes_the_consumer_once_per_boundary_crossed() {
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, false, 16);
    let mem = *data.memory();
    let mut reader = AuxConsumer::new(mem).unwrap();
    let mut wakes = Vec::new();
    for _ in 0..10 {
        wakes.push(publish(&mut aux, &data, &[9; 10]).1);
        reader.read(&mut [0u8; 64]);
    }
    // Heads 10, 20, …, 100 against boundaries every 16 bytes: a wakeup when the head is a
    // watermark past the last boundary crossed (16 at 20, 32 at 40, 48 at 50, 64 at 70, 80 at
    // 80, 96 at 100), as the kernel's `rb->aux_wakeup` rounding down to the watermark.
    assert_eq!(wakes, [false, true, false, true, true, false, true, true, false, true]);
    assert_eq!(aux.head(), 100);
}

#[test]
fn overwrite_mode_head_is_the_end_of_the_last_stretch() {
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, true, 0);
    assert_eq!(aux.head(), 0);
    for n in [3usize, 70, 1] {
        publish(&mut aux, &data, &std::vec![4; n]);
    }
    assert_eq!(aux.head(), 74);
}

#[test]
fn a_hostile_aux_head_reads_at_most_one_area() {
    let mut ring = Ring::new().unwrap();
    let (data, _c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let mem = *data.memory();
    mem.position(Position::AuxHead).store(1000, LOCAL);
    let mut reader = AuxConsumer::new(mem).unwrap();
    let mut out = [0u8; 256];
    assert_eq!(reader.read(&mut out), (0, 64), "the whole area, once: not 1000 bytes");
    assert_eq!(mem.position(Position::AuxTail).load(LOCAL), 64);
}

/// Snapshots and reads at every alignment against the plain list of bytes written: starts and
/// ends that are not multiples of 8, stretches that wrap the area, exactly one area of new data.
#[test]
fn snapshots_and_reads_at_unaligned_positions_return_exactly_the_bytes_written() {
    let sizes = [13usize, 29, 3, 64, 71, 1, 0, 8, 57, 130, 63, 65, 7];
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, true, 0);
    let mem = *data.memory();
    let mut snap = AuxConsumer::new(mem).unwrap();
    let mut all: Vec<u8> = Vec::new();
    let mut last = 0;
    for n in sizes {
        let bytes: Vec<u8> = (0..n).map(|i| (all.len() + i) as u8 ^ 0xa5).collect();
        publish(&mut aux, &data, &bytes);
        all.extend_from_slice(&bytes);
        let mut out = [0u8; 64];
        let s = snap.snapshot(&mut out);
        let new = all.len() - last;
        let len = new.min(64);
        assert_eq!((s.start, s.len, s.overwritten), (all.len() - len, len, new > 64), "after {n} bytes");
        assert_eq!(&out[..len], &all[all.len() - len..], "after {n} bytes");
        last = all.len();
    }

    // The same stretches through a writable AUX area, read into a 5-byte buffer.
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, false, 0);
    let mem = *data.memory();
    let mut reader = AuxConsumer::new(mem).unwrap();
    let (mut sent, mut got) = (Vec::new(), Vec::new());
    for n in sizes {
        let n = n.min(63);
        let bytes: Vec<u8> = (0..n).map(|i| (sent.len() + i) as u8 ^ 0x3c).collect();
        publish(&mut aux, &data, &bytes);
        sent.extend_from_slice(&bytes);
        loop {
            let mut out = [0u8; 5];
            let (start, len) = reader.read(&mut out);
            assert_eq!(start, got.len());
            got.extend_from_slice(&out[..len]);
            if len == 0 {
                break;
            }
        }
        assert_eq!(got, sent);
    }
}

#[test]
fn a_snapshot_overwritten_during_its_copy_returns_only_the_bytes_still_there() {
    let mut ring = Ring::new().unwrap();
    let ((data, _c), mut aux) = aux_ring(&mut ring, true, 0);
    let ring = *data.memory();
    let all: Vec<u8> = (0..64).collect();
    publish(&mut aux, &data, &all);
    // The "hardware" overwrites the AUX area in the middle of the copy: on the consumer's first
    // atomic load of AUX bytes, 20 more are written after the head.
    let bytes = Cell::new(20);
    let overwrite = |ring: &Ring, area, offset, dst: &mut [u8]| {
        let head = ring.position(Position::AuxHead);
        for _ in 0..bytes.take() {
            let at = head.load(LOCAL);
            // SAFETY: (at & 63) + 1 <= 64, the AUX area's size; nothing else runs.
            unsafe { ring.write(Area::Aux, at & 63, &[0xee]) };
            head.store(at + 1, B_HEAD_STORE);
        }
        ring.load_words(area, offset, dst)
    };
    let racing = LoadHook { ring, load: &overwrite };
    let mut snap = AuxConsumer::new(&racing).unwrap();
    let mut out = [0u8; 64];
    let s = snap.snapshot(&mut out);
    // Bytes 64..84 landed on offsets 0..20 during the copy: the 44 bytes after them are all
    // that is still what was written there.
    assert_eq!((s.start, s.len, s.overwritten), (20, 44, true));
    assert_eq!(&out[..44], &all[20..64]);
}
