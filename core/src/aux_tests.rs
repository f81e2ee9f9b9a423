//! Unit tests of the AUX area.

extern crate std;

use std::vec::Vec;

use crate::aux::{flags, AuxConsumer, AuxError, AuxProducer, AuxRecord, AuxtraceRecord};
use crate::consumer::Scratch;
use crate::memory::ModelRing;
use crate::producer::{Config, Writer};
use crate::record::{types, Endian, Header};
use crate::split;

type Ring = ModelRing<64, 8>; // 512-byte data ring, 64-byte AUX area

fn aux_records<M: crate::RingMemory>(c: &mut crate::Consumer<M>) -> Vec<AuxRecord> {
    let mut scratch = Scratch::new();
    let mut out = Vec::new();
    c.for_each(&mut scratch, |r| {
        assert_eq!(r.header.type_, types::AUX);
        let u = |o: usize| u64::from_ne_bytes(r.bytes[o..o + 8].try_into().unwrap());
        out.push(AuxRecord { aux_offset: u(8), aux_size: u(16), flags: u(24) });
    })
    .unwrap();
    out
}

#[test]
fn non_overwrite_aux_round_trip_emits_aux_records_with_chunk_start_offsets() {
    let mut ring = Ring::new().unwrap();
    let (data, mut records) = split(&mut ring, Config::default()).unwrap();
    let mem = *data.memory();
    // SAFETY: the only AUX producer of this ring.
    let mut aux = unsafe { AuxProducer::new(mem, false, 0) }.unwrap();
    let mut reader = AuxConsumer::new(mem).unwrap();
    let mut got = Vec::new();
    let mut sent = Vec::new();
    for round in 0..10u8 {
        let bytes: Vec<u8> = (0..20).map(|i| round * 20 + i).collect();
        let mut h = aux.output_begin().unwrap();
        aux.write(&mut h, &bytes).unwrap();
        let (rec, _) = aux.output_end(h, 20, &data, &Writer::ANONYMOUS).unwrap();
        assert_eq!(rec, Some(AuxRecord { aux_offset: 20 * u64::from(round), aux_size: 20, flags: 0 }));
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
    let (data, _c) = split(&mut ring, Config::default()).unwrap();
    let mem = *data.memory();
    // SAFETY: the only AUX producer of this ring.
    let mut aux = unsafe { AuxProducer::new(mem, false, 0) }.unwrap();
    let mut h = aux.output_begin().unwrap();
    assert_eq!(h.available(), 63, "CIRC_SPACE keeps one byte free");
    aux.write(&mut h, &[1; 63]).unwrap();
    assert!(matches!(aux.write(&mut h, &[1]), Err(AuxError::TooLarge { .. })));
    aux.output_end(h, 63, &data, &Writer::ANONYMOUS).unwrap();
    assert_eq!(aux.output_begin().unwrap_err(), AuxError::NoSpace);
    let mut reader = AuxConsumer::new(mem).unwrap();
    let mut out = [0u8; 64];
    assert_eq!(reader.read(&mut out).1, 63);
    assert_eq!(aux.output_begin().unwrap().available(), 63);
}

#[test]
fn drivers_may_not_set_overwrite_and_truncated_wakes() {
    let mut ring = Ring::new().unwrap();
    let (data, mut c) = split(&mut ring, Config::default()).unwrap();
    // SAFETY: the only AUX producer of this ring.
    let mut aux = unsafe { AuxProducer::new(*data.memory(), false, 1 << 20) }.unwrap();
    let mut h = aux.output_begin().unwrap();
    assert_eq!(h.flag(flags::OVERWRITE), Err(AuxError::OverwriteFlag));
    h.flag(flags::TRUNCATED | flags::PARTIAL).unwrap();
    aux.write(&mut h, &[7; 8]).unwrap();
    let (rec, wake) = aux.output_end(h, 8, &data, &Writer::ANONYMOUS).unwrap();
    assert!(wake, "TRUNCATED wakes the consumer");
    assert_eq!(rec.unwrap().flags, flags::TRUNCATED | flags::PARTIAL);
    assert_eq!(aux_records(&mut c)[0].flags, flags::TRUNCATED | flags::PARTIAL);
}

#[test]
fn overwrite_mode_sets_overwrite_reports_the_end_offset_and_suppresses_empty_records() {
    let mut ring = Ring::new().unwrap();
    let (data, mut c) = split(&mut ring, Config::default()).unwrap();
    // SAFETY: the only AUX producer of this ring.
    let mut aux = unsafe { AuxProducer::new(*data.memory(), true, 0) }.unwrap();
    let mut h = aux.output_begin().unwrap();
    aux.write(&mut h, &[3; 100]).unwrap(); // wraps the 64-byte area
    let (rec, wake) = aux.output_end(h, 100, &data, &Writer::ANONYMOUS).unwrap();
    assert!(!wake, "no wakeups in overwrite mode");
    assert_eq!(rec, Some(AuxRecord { aux_offset: 100, aux_size: 100, flags: flags::OVERWRITE }));
    let h = aux.output_begin().unwrap();
    let (rec, _) = aux.output_end(h, 0, &data, &Writer::ANONYMOUS).unwrap();
    assert_eq!(rec, None, "an OVERWRITE-only record of size 0 is not emitted");
    assert_eq!(aux_records(&mut c).len(), 1);
}

#[test]
fn snapshot_returns_the_newest_bytes_oldest_first_and_says_when_data_was_overwritten() {
    let mut ring = Ring::new().unwrap();
    let (data, _c) = split(&mut ring, Config::default()).unwrap();
    let mem = *data.memory();
    // SAFETY: the only AUX producer of this ring.
    let mut aux = unsafe { AuxProducer::new(mem, true, 0) }.unwrap();
    let mut snap = AuxConsumer::new(mem).unwrap();
    let mut all: Vec<u8> = Vec::new();
    let write = |aux: &mut AuxProducer<_>, n: usize, all: &mut Vec<u8>| {
        let bytes: Vec<u8> = (0..n).map(|i| (all.len() + i) as u8).collect();
        let mut h = aux.output_begin().unwrap();
        aux.write(&mut h, &bytes).unwrap();
        aux.output_end(h, n, &data, &Writer::ANONYMOUS).unwrap();
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
fn auxtrace_record_is_48_bytes_and_excludes_its_data() {
    let r = AuxtraceRecord { size: 64, offset: 128, reference: 7, idx: 2, tid: 1000, cpu: 2 };
    let b = r.encode(Endian::NATIVE);
    let h = Header::parse(&b, Endian::NATIVE).unwrap();
    assert_eq!((h.type_, h.size), (types::AUXTRACE, 48));
    assert_eq!(u64::from_ne_bytes(b[8..16].try_into().unwrap()), 64);
    assert_eq!(u64::from_ne_bytes(b[16..24].try_into().unwrap()), 128);
    assert_eq!(u32::from_ne_bytes(b[32..36].try_into().unwrap()), 2);
    assert_eq!(u32::from_ne_bytes(b[40..44].try_into().unwrap()), 2);
}
