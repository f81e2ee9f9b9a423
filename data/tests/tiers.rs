//! A `FileRecord` read through each of `perfring::record`'s tiers — `sample()` (the view),
//! `fixed::<ST>()` (the compile-time layout), `decode()` (the complete decode) and `view()` —
//! gives the same fields, from every reader (mapped, streamed, pipe, time-ordered), in both
//! byte orders; a record of no known event is the same typed error in every tier.

use std::io::Cursor;

use perfring::record::{
    attr_flags, sample_type as st, types, Attr, Comm, DecodeError, Endian, Entries, EventRecord, PidTid, Record,
    Sample, SampleId,
};
use perfring_data::{FileAttr, Reader, Writer};

/// Event 0: the fixed fields only; event 1: a callchain and a field after it (walked).
const ST0: u64 = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD;
const ST1: u64 = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CALLCHAIN | st::PHYS_ADDR;

fn attrs() -> Vec<FileAttr> {
    let attr = |sample_type| Attr {
        size: Attr::SIZE_VER7,
        sample_type,
        sample_period: 1,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::default()
    };
    vec![FileAttr { attr: attr(ST0), ids: vec![10, 11] }, FileAttr { attr: attr(ST1), ids: vec![20] }]
}

/// Two SAMPLEs of each event, a COMM, in `endian`, file or pipe mode.
fn file(endian: Endian, pipe: bool) -> Vec<u8> {
    let ips: &'static [u64] = &[0x100, 0x200, 0x300];
    let records: Vec<(Sample<'static>, usize)> = (0..2u64)
        .flat_map(|i| {
            let tid = Some(PidTid { pid: 7, tid: 8 + i as u32 });
            let s0 = Sample {
                identifier: Some(10 + i),
                ip: Some(0x4000 + i),
                tid,
                time: Some(1000 + 10 * i),
                period: Some(1),
                ..Sample::default()
            };
            let s1 = Sample {
                identifier: Some(20),
                ip: Some(0x5000 + i),
                tid,
                time: Some(1005 + 10 * i),
                callchain: Some(Entries::from_slice(ips)),
                phys_addr: Some(0x9000 + i),
                ..Sample::default()
            };
            [(s0, 0), (s1, 1)]
        })
        .collect();
    let sid =
        SampleId { tid: Some(PidTid { pid: 7, tid: 8 }), time: Some(999), identifier: Some(10), ..SampleId::default() }
            .masked(ST0);
    let comm = Record::Comm(Comm { misc: 0, pid: 7, tid: 8, comm: c"worker", sample_id: Some(sid) });
    macro_rules! write {
        ($w:expr) => {{
            $w.write_record(&comm, 0).unwrap();
            for (r, event) in &records {
                $w.write_record(r, *event).unwrap();
            }
            $w.finished_round().unwrap();
        }};
    }
    if pipe {
        let mut w = Writer::pipe(Vec::new(), endian, attrs()).unwrap();
        write!(w);
        return w.finish_pipe().unwrap();
    }
    let mut w = Writer::new(Cursor::new(Vec::new()), endian, attrs()).unwrap();
    write!(w);
    w.finish().unwrap().into_inner()
}

/// Every record of `reader` through every tier; returns the SAMPLEs seen.
fn check<S: perfring_data::Source>(mut reader: Reader<S>) -> usize {
    let mut samples = 0;
    while let Some(r) = reader.next_record().unwrap() {
        let full = r.decode().unwrap();
        if let Err(e) = r.event() {
            assert_eq!(e, DecodeError::NotAnEventRecord { type_: r.raw().header.type_ }, "{r:?}");
            let not_a_sample = DecodeError::NotASample { type_: r.raw().header.type_ };
            assert_eq!((r.sample().err(), r.view().err()), (Some(not_a_sample), Some(e)), "{r:?}");
            assert!(matches!(full, Record::Unknown { .. }), "{r:?}");
            continue;
        }
        let view = r.view().unwrap();
        // The decode's own: a SAMPLE's fields, another record's trailer's.
        let decoded = match &full {
            Record::Sample(s) => (s.time(), s.identifier().or(s.id()), s.tid()),
            other => other.sample_id().map_or((None, None, None), |t| (t.time, t.event_id(), t.tid)),
        };
        assert_eq!((view.time(), view.id(), view.tid()), decoded, "{r:?}");
        let Record::Sample(s) = full else {
            assert!(matches!(r.sample(), Err(DecodeError::NotASample { .. })));
            assert!(matches!(r.fixed::<ST0>(), Err(DecodeError::NotASample { .. })), "{r:?}");
            continue;
        };
        samples += 1;
        let v = r.sample().unwrap();
        assert_eq!(
            (v.identifier(), v.ip(), v.tid(), v.time(), v.period()),
            (s.identifier(), s.ip(), s.tid(), s.time(), s.period())
        );
        assert_eq!((v.callchain(), v.phys_addr()), (Ok(s.callchain().unwrap()), Ok(s.phys_addr().unwrap())));
        match r.event().ok() {
            Some(0) => {
                let f = r.fixed::<ST0>().unwrap();
                assert_eq!(
                    (f.identifier(), f.ip(), f.time(), f.period()),
                    (s.identifier(), s.ip(), s.time(), s.period())
                );
                assert_eq!(
                    r.fixed::<ST1>().err(),
                    Some(DecodeError::SampleTypeDiffers { sample_type: ST0, fixed: ST1 })
                );
            }
            _ => {
                let f = r.fixed::<ST1>().unwrap();
                assert_eq!((f.identifier(), f.ip(), f.tid()), (s.identifier(), s.ip(), s.tid()));
            }
        }
    }
    samples
}

#[test]
fn every_reader_offers_the_three_tiers_and_they_agree() {
    for endian in [Endian::Little, Endian::Big] {
        for pipe in [false, true] {
            let bytes = file(endian, pipe);
            let what = format!("{endian:?}, pipe {pipe}");
            assert_eq!(check(Reader::from_bytes(&bytes).unwrap()), 4, "{what}: mapped");
            assert_eq!(check(Reader::from_bytes(&bytes).unwrap().time_ordered()), 4, "{what}: time order");
            assert_eq!(check(Reader::from_read(Cursor::new(&bytes)).unwrap()), 4, "{what}: streamed");
            if pipe {
                assert_eq!(check(Reader::from_pipe(Cursor::new(&bytes)).unwrap()), 4, "{what}: pipe");
            }
        }
    }
}

/// A SAMPLE whose id no event lists, in a file and in a pipe of either byte order: every tier
/// refuses it with the id, the complete decode too (perf cannot parse it either:
/// `evlist__parse_sample` fails with no event), never read with a guessed layout.
#[test]
fn a_record_of_no_known_event_is_refused_with_the_reason() {
    for endian in [Endian::Little, Endian::Big] {
        for pipe in [false, true] {
            let mut bytes = file(endian, pipe);
            // The first SAMPLE's IDENTIFIER (10) becomes 99. A record's `offset` is its file
            // offset, in pipe mode counted from the end of the 16-byte pipe header.
            let first = {
                let mut reader = Reader::from_bytes(&bytes).unwrap();
                let mut at = None;
                while let Some(r) = reader.next_record().unwrap() {
                    if r.raw().header.type_ == types::SAMPLE {
                        at = Some(r.raw().offset as usize + if pipe { 16 } else { 0 });
                        break;
                    }
                }
                at.unwrap() + 8
            };
            let id = |v: u64| if endian == Endian::Little { v.to_le_bytes() } else { v.to_be_bytes() };
            assert_eq!(bytes[first..first + 8], id(10));
            bytes[first..first + 8].copy_from_slice(&id(99));
            let what = format!("{endian:?}, pipe {pipe}");
            let count = |mut reader: Reader<_>| {
                let mut refused = 0;
                while let Some(r) = reader.next_record().unwrap() {
                    if r.raw().header.type_ == types::SAMPLE && r.event().is_err() {
                        let unknown = Some(DecodeError::UnknownId { id: 99 });
                        assert_eq!((r.event().err(), r.sample().err(), r.view().err()), (unknown, unknown, unknown));
                        assert_eq!((r.fixed::<ST0>().err(), r.decode().err()), (unknown, unknown), "{what}");
                        refused += 1;
                    }
                }
                refused
            };
            assert_eq!(count(Reader::from_bytes(&bytes).unwrap()), 1, "{what}: mapped");
            assert_eq!(count(Reader::from_bytes(&bytes).unwrap().time_ordered()), 1, "{what}: time order");
            if pipe {
                let mut r = Reader::from_pipe(Cursor::new(&bytes)).unwrap();
                let mut refused = 0;
                while let Some(rec) = r.next_record().unwrap() {
                    if rec.raw().header.type_ == types::SAMPLE && rec.event().is_err() {
                        assert!(rec.sample().is_err(), "{what}: pipe");
                        assert!(rec.fixed::<ST0>().is_err(), "{what}: pipe");
                        refused += 1;
                    }
                }
                assert_eq!(refused, 1, "{what}: pipe");
            }
        }
    }
}
