//! What perf refuses is a typed error naming the field; what perf only warns about or repairs
//! is a [`Warning`] (perf's tools/perf/util/session.c and evlist.c, `header.c`, `session.c`). Files are synthesized with
//! the writer, then patched.

use perfring::record::EventRecord;
use std::io::Cursor;

use perfring::record::{
    attr_flags, sample_type as st, types, Attr, Endian, EventSetError, Header, Record, Sample, SampleId,
};
use perfring_data::{FileAttr, FileHeader, PerfDataError, Reader, Warning, Writer};

fn attr(sample_type: u64, sample_id_all: bool) -> Attr {
    let flags = if sample_id_all { attr_flags::SAMPLE_ID_ALL } else { 0 };
    Attr { size: Attr::SIZE_VER7, sample_type, flags, sample_period: 1, ..Attr::default() }
}

/// A file with `attrs` and one SAMPLE per event (IDENTIFIER = its first id, when it has one).
fn file(attrs: Vec<FileAttr>) -> Vec<u8> {
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs.clone()).unwrap();
    for (i, a) in attrs.iter().enumerate() {
        let t = a.attr.sample_type;
        let s = Sample {
            identifier: (t & st::IDENTIFIER != 0).then(|| a.ids.first().copied().unwrap_or(0)),
            id: (t & st::ID != 0).then(|| a.ids.first().copied().unwrap_or(0)),
            ip: (t & st::IP != 0).then_some(0x1000 + i as u64),
            tid: (t & st::TID != 0).then(Default::default),
            time: (t & st::TIME != 0).then_some(10 - i as u64),
            ..Sample::default()
        };
        w.write_record(&s, i).unwrap();
    }
    w.finished_round().unwrap();
    w.finish().unwrap().into_inner()
}

/// A file whose attrs are `attrs`, events perf refuses (which the writer refuses too): written
/// with attrs it takes (IDENTIFIER everywhere, sample_id_all), then each attr overwritten in
/// place.
fn patched(attrs: Vec<FileAttr>) -> Vec<u8> {
    let t = st::IDENTIFIER | st::IP | st::TID | st::TIME;
    let sane = attrs.iter().map(|a| FileAttr { attr: Attr { size: a.attr.size, ..attr(t, true) }, ids: a.ids.clone() });
    let mut bytes = file(sane.collect());
    let entry = u64_at(&bytes, 16) as usize;
    for (i, a) in attrs.iter().enumerate() {
        let at = 104 + i * entry;
        a.attr.to_bytes(Endian::Little, &mut bytes[at..at + a.attr.size as usize]).unwrap();
    }
    bytes
}

fn two_events() -> Vec<FileAttr> {
    let t = st::IDENTIFIER | st::IP | st::TID | st::TIME;
    vec![FileAttr { attr: attr(t, true), ids: vec![11, 12] }, FileAttr { attr: attr(t, true), ids: vec![22] }]
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn count(r: &mut Reader<perfring_data::Slice<'_>>) -> Result<usize, PerfDataError> {
    let mut n = 0;
    while r.next_record()?.is_some() {
        n += 1;
    }
    Ok(n)
}

#[test]
fn a_well_formed_file_reads_without_warning() {
    let bytes = file(two_events());
    let mut r = Reader::from_bytes(&bytes).unwrap();
    assert!(r.metadata().warnings().is_empty(), "{:?}", r.metadata().warnings());
    let mut events = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        events.push((rec.raw().header.type_, rec.event().ok()));
    }
    assert_eq!(events, [(types::SAMPLE, Some(0)), (types::SAMPLE, Some(1)), (types::FINISHED_ROUND, None)]);
}

#[test]
fn a_pipe_mode_file_given_as_a_file_says_pipe_mode() {
    let mut w = Writer::pipe(Vec::new(), Endian::Little, two_events()).unwrap();
    w.finished_round().unwrap();
    let bytes = w.finish_pipe().unwrap();
    let e = FileHeader::parse(&bytes).unwrap_err();
    assert!(matches!(e, PerfDataError::PipeMode), "{e:?}");
    assert!(e.to_string().contains("pipe mode"), "{e}");
    // The readers detect the mode themselves.
    let mut r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(count(&mut r).unwrap(), 3, "two HEADER_ATTR and a FINISHED_ROUND");
    assert_eq!(r.metadata().attrs(), two_events());
    // A file-mode file given to the pipe reader is refused with its header size.
    let e = Reader::from_pipe(&file(two_events())[..]).unwrap_err();
    assert!(matches!(e, PerfDataError::BadHeaderSize(104)), "{e:?}");
}

/// perf counts the attrs with the header's attr_size and reads each by its own attr.size
/// (`header.c:perf_session__read_header`, `read_attr`): a header attr_size that disagrees but
/// still counts both attrs (136 for entries of 144) is read as perf reads it — both events, the
/// records attributed — with a warning. (Before, the reader refused it as "incompatible file
/// format", which perf does not say of it: `perf report` reads such a file.)
#[test]
fn attr_size_disagreeing_with_the_attrs_is_read_as_perf_reads_it() {
    let mut bytes = file(two_events());
    assert_eq!(u64_at(&bytes, 16), 144, "attr.size 128 + the ids section");
    bytes[16..24].copy_from_slice(&136u64.to_le_bytes());
    let mut r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().attrs(), two_events());
    assert_eq!(
        r.metadata().warnings(),
        [Warning::AttrSizeDiffers { event: 0, attr_size: 136, entry_size: 144, events: 2 }],
        "{:?}",
        r.metadata().warnings()
    );
    let mut events = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        events.push(rec.event().ok());
    }
    assert_eq!(events, [Some(0), Some(1), None], "both samples attributed, then the round");

    // An attr_size that counts one attr: perf reads one, and so does the reader.
    bytes[16..24].copy_from_slice(&200u64.to_le_bytes());
    let r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().attrs(), &two_events()[..1]);

    // An attr larger than any this crate knows is refused, naming its size field.
    let mut bytes = file(two_events());
    let second = 104 + 144 + 4;
    bytes[second..second + 4].copy_from_slice(&200u32.to_le_bytes());
    let e = Reader::from_bytes(&bytes).unwrap_err();
    assert!(
        matches!(e, PerfDataError::UnsupportedAttrSize { event: 1, attr_size: 200, offset } if offset == second as u64),
        "{e:?}"
    );
    assert!(e.to_string().contains("unsupported ABI"), "{e}");
}

/// A file with no events: read, with a warning (perf then fails on any record it must
/// attribute).
#[test]
fn a_file_without_events_warns() {
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, Vec::new()).unwrap();
    w.finished_round().unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().warnings(), [Warning::NoEvents]);
    assert_eq!(count(&mut r).unwrap(), 1);
}

#[test]
fn differing_sample_id_all_is_refused() {
    let mut attrs = two_events();
    attrs[1].attr.flags = 0;
    let e = Reader::from_bytes(&patched(attrs)).unwrap_err();
    let entry = u64_at(&file(two_events()), 16);
    assert!(
        matches!(e, PerfDataError::SampleIdAllMismatch { event: 1, offset } if offset == 104 + entry + 40),
        "{e:?}"
    );
    assert!(e.to_string().contains("non matching sample_id_all"), "{e}");
}

#[test]
fn ids_in_different_places_are_refused() {
    // Event 1 has ID after IP, TID and TIME (id_pos 3) instead of IDENTIFIER (0).
    let mut attrs = two_events();
    attrs[1].attr.sample_type = st::ID | st::IP | st::TID | st::TIME;
    let e = Reader::from_bytes(&patched(attrs.clone())).unwrap_err();
    let entry = u64_at(&file(two_events()), 16);
    assert!(
        matches!(e, PerfDataError::NonMatchingSampleType { event: 1, offset, .. } if offset == 104 + entry + 24),
        "{e:?}"
    );
    assert!(e.to_string().contains("non matching sample_type"), "{e}");
    assert!(e.to_string().contains("event 1's sample_type 0x47 (offset 272) puts its id at another position"), "{e}");
    // No id at all, with two events.
    attrs[1].attr.sample_type = st::IP | st::TID;
    let e = Reader::from_bytes(&patched(attrs.clone())).unwrap_err();
    assert!(matches!(e, PerfDataError::NonMatchingSampleType { event: 1, .. }), "{e:?}");
    // Event 0 without an id: the message says so (it said event 0 had its id "elsewhere than
    // event 0").
    attrs[0].attr.sample_type = st::IP | st::TID;
    attrs[1].attr.sample_type = st::IP | st::TID;
    let e = Reader::from_bytes(&patched(attrs)).unwrap_err();
    assert!(matches!(e, PerfDataError::NonMatchingSampleType { event: 0, offset: 128, sample_type: 3 }), "{e:?}");
    assert!(e.to_string().contains("event 0's sample_type 0x3 (offset 128) has neither ID nor IDENTIFIER"), "{e}");
    // One event needs no id.
    let one = vec![FileAttr { attr: attr(st::IP | st::TID, true), ids: vec![] }];
    assert!(Reader::from_bytes(&file(one)).is_ok());
}

#[test]
fn in_pipe_mode_the_same_mismatches_are_warnings() {
    let mut attrs = two_events();
    attrs[1].attr.flags = 0;
    let w = Writer::pipe(Vec::new(), Endian::Little, attrs).unwrap();
    let bytes = w.finish_pipe().unwrap();
    let mut r = Reader::from_pipe(&bytes[..]).unwrap();
    while r.next_record().unwrap().is_some() {}
    assert_eq!(r.metadata().warnings(), [Warning::Inconsistent(EventSetError::SampleIdAllDiffers { event: 1 })]);
}

#[test]
fn sample_read_without_format_id_is_refused() {
    let t = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::READ;
    let mut attrs = vec![FileAttr { attr: attr(t, true), ids: vec![1] }];
    attrs[0].attr.read_format = perfring::record::read_format::TOTAL_TIME_ENABLED;
    let e = Reader::from_bytes(&patched(attrs)).unwrap_err();
    assert!(matches!(e, PerfDataError::NonMatchingReadFormat { offset: 136, read_format: 1 }), "{e:?}");
    assert!(e.to_string().contains("non matching read_format"), "{e}");
}

#[test]
fn a_record_past_the_data_section_is_outside_the_data_section() {
    let mut bytes = file(two_events());
    let data_offset = u64_at(&bytes, 40) as usize;
    let data_size = u64_at(&bytes, 48);
    // The first record's size reaches past the data section (into the feature table).
    bytes[data_offset + 6..data_offset + 8].copy_from_slice(&(data_size as u16 + 8).to_le_bytes());
    let mut r = Reader::from_bytes(&bytes).unwrap();
    let e = count(&mut r).unwrap_err();
    assert!(matches!(e, PerfDataError::OutsideDataSection { offset, .. } if offset == data_offset as u64), "{e:?}");
    assert!(e.to_string().contains("outside the data section"), "{e}");
    // The streaming reader says the same.
    let mut s = Reader::new(Cursor::new(&bytes)).unwrap();
    let e = loop {
        match s.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error"),
            Err(e) => break e,
        }
    };
    assert!(matches!(e, PerfDataError::OutsideDataSection { .. }), "{e:?}");
    assert!(s.next_record().unwrap().is_none(), "nothing after an error");
}

#[test]
fn record_sizes_below_8_are_refused() {
    for size in [0u16, 7] {
        let mut bytes = file(two_events());
        let data_offset = u64_at(&bytes, 40) as usize;
        bytes[data_offset + 6..data_offset + 8].copy_from_slice(&size.to_le_bytes());
        let e = count(&mut Reader::from_bytes(&bytes).unwrap()).unwrap_err();
        assert!(matches!(e, PerfDataError::BadRecordSize { size: s, .. } if s == size), "{e:?}");
    }
}

#[test]
fn an_ids_array_not_a_multiple_of_8_is_rounded_down_with_a_warning() {
    let mut bytes = file(two_events());
    let entry = u64_at(&bytes, 16) as usize;
    // Event 0's ids section: {offset, size} at the end of its entry; size 16 → 13.
    let size_at = 104 + entry - 8;
    assert_eq!(u64_at(&bytes, size_at), 16);
    bytes[size_at..size_at + 8].copy_from_slice(&13u64.to_le_bytes());
    let r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().attrs()[0].ids, [11], "rounded down to one id");
    assert!(
        matches!(r.metadata().warnings(), [Warning::IdsNotMultipleOf8 { event: 0, size: 13, .. }]),
        "{:?}",
        r.metadata().warnings()
    );
}

#[test]
fn an_empty_data_section_is_a_warning() {
    let w = Writer::new(Cursor::new(Vec::new()), Endian::Little, two_events()).unwrap();
    let mut w = w;
    w.set_feature(perfring_data::features::HOSTNAME, &perfring_data::features::Feature::String("h".into())).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().warnings(), [Warning::EmptyDataSection]);
    assert_eq!(count(&mut r).unwrap(), 0);
}

#[test]
fn a_duplicated_id_goes_to_the_last_event_listing_it_with_a_warning() {
    let mut attrs = two_events();
    attrs[1].ids = vec![22, 11]; // 11 is event 0's too
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs.clone()).unwrap();
    let s =
        Sample { identifier: Some(11), ip: Some(1), tid: Some(Default::default()), time: Some(1), ..Sample::default() };
    w.write_record(&s, 0).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().warnings(), [Warning::DuplicateId { count: 1, id: 11, previous: 0, event: 1 }]);
    assert_eq!(r.next_record().unwrap().unwrap().event().ok(), Some(1), "perf: the last event listing the id");
}

#[test]
fn unknown_ids_are_counted_in_one_warning() {
    let attrs = two_events();
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs).unwrap();
    for id in [99, 98, 11] {
        let s = Sample {
            identifier: Some(id),
            ip: Some(1),
            tid: Some(Default::default()),
            time: Some(1),
            ..Sample::default()
        };
        w.write_record(&s, 0).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    let mut events = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        events.push(rec.event().ok());
    }
    assert_eq!(events, [None, None, Some(0)]);
    assert!(
        matches!(r.metadata().warnings(), [Warning::Unattributed { count: 2, .. }]),
        "{:?}",
        r.metadata().warnings()
    );
}

/// perf's ordered delivery (`ordered_events.c`): a FINISHED_ROUND delivers the queued records
/// up to the largest time seen before the previous FINISHED_ROUND, sorted (so a late record
/// of the next round still comes in order); untimed and perf-only records come as read.
#[test]
fn time_order_holds_two_rounds_as_perf_does() {
    let t = st::IDENTIFIER | st::IP | st::TID | st::TIME;
    let attrs = vec![FileAttr { attr: attr(t, true), ids: vec![7] }];
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs).unwrap();
    let sample = |time| Sample {
        identifier: Some(7),
        ip: Some(time),
        tid: Some(Default::default()),
        time: Some(time),
        ..Sample::default()
    };
    // Round 1: samples at 5, 3, 4 and a COMM at 2; round 2: a late sample at 1, then 7;
    // round 3: 6.
    for time in [5, 3, 4] {
        w.write_record(&sample(time), 0).unwrap();
    }
    let comm = perfring::record::Comm {
        misc: 0,
        pid: 1,
        tid: 1,
        comm: c"x",
        sample_id: Some(SampleId { time: Some(2), identifier: Some(7), ..SampleId::default() }),
    };
    w.write_record(&Record::Comm(comm), 0).unwrap();
    w.finished_round().unwrap();
    for time in [1, 7] {
        w.write_record(&sample(time), 0).unwrap();
    }
    w.finished_round().unwrap();
    w.write_record(&sample(6), 0).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap().time_ordered();
    let mut seen = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        let time = match rec.decode().unwrap() {
            Record::Sample(s) => s.time(),
            Record::Comm(c) => c.sample_id.and_then(|s| s.time),
            _ => None,
        };
        seen.push((rec.raw().header.type_, time));
    }
    let (s, round) = (types::SAMPLE, (types::FINISHED_ROUND, None));
    assert_eq!(
        seen,
        [
            round, // round 1 ends: nothing is older than the (empty) previous round
            (s, Some(1)),
            (types::COMM, Some(2)),
            (s, Some(3)),
            (s, Some(4)),
            (s, Some(5)), // round 2 ends: everything up to 5, round 1's largest time
            round,
            (s, Some(6)),
            (s, Some(7)), // the end: the rest
        ]
    );
}

#[cfg(feature = "zstd")]
#[test]
fn compressed2_records_are_decompressed() {
    // perf 6.1 cannot write type 83; synthesize it: {header; u64 data_size; data; padding}.
    let plain = file(two_events());
    let mut r = Reader::from_bytes(&plain).unwrap();
    let mut records = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        records.extend_from_slice(rec.raw().bytes);
    }
    let frame = zstd::bulk::compress(&records, 1).unwrap();
    let mut body = (frame.len() as u64).to_le_bytes().to_vec();
    body.extend_from_slice(&frame);
    body.resize(body.len().next_multiple_of(8), 0);
    let mut rec = Header { type_: perfring::record::types::COMPRESSED2, misc: 0, size: 8 + body.len() as u16 }
        .to_bytes(Endian::Little)
        .to_vec();
    rec.extend_from_slice(&body);
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, two_events()).unwrap();
    w.write_raw(&rec, &[]).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    let mut got = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        got.push((rec.raw().header.type_, rec.decompressed(), rec.event().ok()));
    }
    assert_eq!(
        got,
        [
            (perfring::record::types::COMPRESSED2, false, None),
            (types::SAMPLE, true, Some(0)),
            (types::SAMPLE, true, Some(1)),
            (types::FINISHED_ROUND, true, None)
        ]
    );
}

#[cfg(not(feature = "zstd"))]
#[test]
fn without_zstd_a_compressed_record_names_the_feature() {
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, two_events()).unwrap();
    let mut rec =
        Header { type_: perfring::record::types::COMPRESSED, misc: 0, size: 16 }.to_bytes(Endian::Little).to_vec();
    rec.extend_from_slice(&[0; 8]);
    w.write_raw(&rec, &[]).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let e = count(&mut Reader::from_bytes(&bytes).unwrap()).unwrap_err();
    assert!(matches!(e, PerfDataError::ZstdDisabled { .. }), "{e:?}");
    assert!(e.to_string().contains("zstd"), "{e}");
}

/// A record as read: type, bytes, trailing data, event.
type Seen = (u32, Vec<u8>, Vec<u8>, Option<usize>);

/// AUXTRACE (71): `{header (48 bytes); u64 size, offset, reference; u32 idx, tid, cpu, reserved}`
/// and `size` bytes of AUX data after it, not counted in `header.size`: yielded with the
/// record by every reader, in file and pipe mode, and copied by the writer.
#[test]
fn auxtrace_data_comes_with_its_record() {
    let aux: Vec<u8> = (0..40u8).collect();
    let mut rec = Header { type_: types::AUXTRACE, misc: 0, size: 48 }.to_bytes(Endian::Little).to_vec();
    for w in [aux.len() as u64, 0x1000, 7] {
        rec.extend_from_slice(&w.to_le_bytes());
    }
    for w in [2u32, 33, 1, 0] {
        rec.extend_from_slice(&w.to_le_bytes());
    }
    let attrs = two_events();
    let sample =
        Sample { identifier: Some(22), ip: Some(5), tid: Some(Default::default()), time: Some(1), ..Sample::default() };
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs.clone()).unwrap();
    w.write_raw(&rec, &aux).unwrap();
    w.write_record(&sample, 1).unwrap();
    let file_bytes = w.finish().unwrap().into_inner();
    let mut p = Writer::pipe(Vec::new(), Endian::Little, attrs).unwrap();
    p.write_raw(&rec, &aux).unwrap();
    p.write_record(&sample, 1).unwrap();
    let pipe_bytes = p.finish_pipe().unwrap();
    let check = |r: &mut dyn FnMut() -> Option<Seen>| {
        let mut got = Vec::new();
        while let Some(x) = r() {
            if x.0 != types::HEADER_ATTR {
                got.push(x);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, &got[0].1, &got[0].2), (types::AUXTRACE, &rec, &aux));
        assert_eq!((got[1].0, got[1].3), (types::SAMPLE, Some(1)));
    };
    for bytes in [&file_bytes, &pipe_bytes] {
        let mut s = Reader::from_bytes(bytes).unwrap();
        let mut next = || {
            s.next_record()
                .unwrap()
                .map(|r| (r.raw().header.type_, r.raw().bytes.to_vec(), r.raw().trailing.to_vec(), r.event().ok()))
        };
        check(&mut next);
        let mut t = Reader::new(Cursor::new(bytes)).unwrap();
        let mut next = || {
            t.next_record()
                .unwrap()
                .map(|r| (r.raw().header.type_, r.raw().bytes.to_vec(), r.raw().trailing.to_vec(), r.event().ok()))
        };
        check(&mut next);
    }
    let mut s = Reader::from_bytes(&file_bytes).unwrap();
    let first = s.next_record().unwrap().unwrap();
    let Some(perfring_data::PerfRecord::Auxtrace { size, offset, reference, idx, tid, cpu, data }) =
        first.perf_record().unwrap()
    else {
        panic!("an AUXTRACE")
    };
    assert_eq!((size, offset, reference, idx, tid, cpu, data), (40, 0x1000, 7, 2, 33, 1, &aux[..]));
    // AUX data reaching past the data section is outside it.
    let mut cut = file_bytes.clone();
    let data_offset = u64_at(&cut, 40) as usize;
    cut[data_offset + 8..data_offset + 16].copy_from_slice(&10_000u64.to_le_bytes());
    let e = count(&mut Reader::from_bytes(&cut).unwrap()).unwrap_err();
    assert!(matches!(e, PerfDataError::OutsideDataSection { what: "AUXTRACE data", .. }), "{e:?}");
}

/// Many rounds whose records each wait for the next round (the queue never empties, so the
/// round buffer is compacted as it goes): all delivered, in time order.
#[test]
fn time_order_over_many_rounds_delivers_everything_sorted() {
    let t = st::IDENTIFIER | st::IP | st::TID | st::TIME;
    let attrs = vec![FileAttr { attr: attr(t, true), ids: vec![7] }];
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs).unwrap();
    let mut times = Vec::new();
    for round in 0..400u64 {
        // Out of order within the round, and overlapping the previous round's times.
        for k in [7u64, 2, 9, 0, 5, 11, 3, 8, 1, 6] {
            let time = round * 10 + k;
            times.push(time);
            let s = Sample {
                identifier: Some(7),
                ip: Some(time),
                tid: Some(Default::default()),
                time: Some(time),
                ..Sample::default()
            };
            w.write_record(&s, 0).unwrap();
        }
        w.finished_round().unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let mut r = Reader::from_bytes(&bytes).unwrap().time_ordered();
    let mut seen = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Record::Sample(s) = rec.decode().unwrap() {
            assert_eq!(s.ip(), s.time(), "the record's bytes are its own after compaction");
            seen.push(s.time().unwrap());
        }
    }
    times.sort();
    assert_eq!(seen, times);
}

/// A file read forward from a stream that cannot seek: an ids section placed after the data
/// section (perf writes them before it) cannot be reached any more: a typed error saying to
/// read from a seekable input, which reads the same file.
#[test]
fn a_stream_read_forward_says_when_it_needs_to_seek() {
    let mut bytes = file(two_events());
    let ids_at = 104 + 128; // attr 0's ids section {offset, size}, after its 128-byte attr
    let old = u64_at(&bytes, ids_at) as usize;
    let n = u64_at(&bytes, ids_at + 8) as usize;
    let moved = bytes.len();
    bytes.extend_from_within(old..old + n);
    bytes[ids_at..ids_at + 8].copy_from_slice(&(moved as u64).to_le_bytes());
    let seekable = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(seekable.metadata().attrs(), two_events(), "the ids, read where they now are");
    let e = Reader::from_read(&bytes[..]).unwrap_err();
    assert!(matches!(e, PerfDataError::NeedsSeekableInput { offset, .. } if offset == moved as u64), "{e:?}");
    assert!(e.to_string().contains("seekable input"), "{e}");
    // The file as written reads forward.
    let written = file(two_events());
    let mut r = Reader::from_read(&written[..]).unwrap();
    assert_eq!(count_stream(&mut r).unwrap(), 3);
    assert_eq!(r.metadata().attrs(), two_events());
}

fn count_stream<R: std::io::Read>(
    r: &mut Reader<perfring_data::Stream<std::io::BufReader<R>>>,
) -> Result<usize, PerfDataError> {
    let mut n = 0;
    while r.next_record()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// The metadata is reachable from each record while it is held (no second borrow of the
/// reader): in pipe mode it grows with the stream's HEADER_ATTR records; the id of each sample
/// leads back to its event.
#[test]
fn metadata_is_read_through_the_record_while_walking() {
    let mut w = Writer::pipe(Vec::new(), Endian::Little, two_events()).unwrap();
    for (event, id) in [(0, 12), (1, 22)] {
        let s = Sample {
            identifier: Some(id),
            ip: Some(1),
            tid: Some(Default::default()),
            time: Some(1),
            ..Sample::default()
        };
        w.write_record(&s, event).unwrap();
    }
    let bytes = w.finish_pipe().unwrap();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    let mut seen = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        let meta = rec.metadata();
        let of_id = match rec.decode() {
            Ok(Record::Sample(s)) => meta.event_set().event_of_id(s.identifier().unwrap()),
            _ => None,
        };
        seen.push((rec.raw().header.type_, meta.attrs().len(), rec.event().ok(), of_id, meta.warnings().len()));
    }
    assert_eq!(
        seen,
        [
            (types::HEADER_ATTR, 1, None, None, 0),
            (types::HEADER_ATTR, 2, None, None, 0),
            (types::SAMPLE, 2, Some(0), Some(0), 0),
            (types::SAMPLE, 2, Some(1), Some(1), 0),
        ]
    );
    assert_eq!(r.metadata().event_set().event_of_id(11), Some(0));
    assert_eq!(r.metadata().event_set().event_of_id(99), None);
}

/// A zstd stream that ends inside a record whose header is whole: the error says the record's
/// size (before, always the header's 8 bytes).
#[cfg(feature = "zstd")]
#[test]
fn a_decompressed_record_cut_short_says_its_own_size() {
    let mut cut = Header { type_: types::SAMPLE, misc: 0, size: 40 }.to_bytes(Endian::Little).to_vec();
    cut.extend_from_slice(&[0; 16]);
    // A file whose one COMPRESSED record holds `payload`, read to its error.
    let read_error = |payload: &[u8]| {
        let frame = zstd::bulk::compress(payload, 1).unwrap();
        let mut rec = Header { type_: perfring::record::types::COMPRESSED, misc: 0, size: 8 + frame.len() as u16 }
            .to_bytes(Endian::Little)
            .to_vec();
        rec.extend_from_slice(&frame);
        let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, two_events()).unwrap();
        w.write_raw(&rec, &[]).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        count(&mut Reader::from_bytes(&bytes).unwrap()).unwrap_err()
    };
    let e = read_error(&cut);
    assert!(matches!(e, PerfDataError::Truncated { what: "decompressed record", need: 40, have: 24, .. }), "{e:?}");
    // A stream that ends inside a header still needs the header's 8 bytes.
    let e = read_error(&cut[..5]);
    assert!(matches!(e, PerfDataError::Truncated { what: "decompressed record", need: 8, have: 5, .. }), "{e:?}");
}

/// A file of `n` events (64-byte attrs, sample_type IP|TID|TIME|ID) whose ids sections all point
/// at one array of the ids 1..=`k`, and one SAMPLE of id 1 (the reviewer's `mkbomb.py`).
fn shared_ids(n: usize, k: usize) -> Vec<u8> {
    let (attr_off, entry) = (104u64, 80u64);
    let ids_off = attr_off + n as u64 * entry;
    let data_off = ids_off + 8 * k as u64;
    let mut rec = Header { type_: types::SAMPLE, misc: 2, size: 40 }.to_bytes(Endian::Little).to_vec();
    for w in [0x1234u64, 1 | (1 << 32), 1000, 1] {
        rec.extend_from_slice(&w.to_le_bytes());
    }
    let mut b = b"PERFILE2".to_vec();
    for w in [104, entry, attr_off, n as u64 * entry, data_off, rec.len() as u64, 0, 0, 0, 0, 0, 0] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    let attr =
        Attr { size: 64, sample_type: st::IP | st::TID | st::TIME | st::ID, sample_period: 1, ..Attr::default() };
    let mut a = [0u8; 64];
    attr.to_bytes(Endian::Little, &mut a).unwrap();
    for _ in 0..n {
        b.extend_from_slice(&a);
        b.extend_from_slice(&ids_off.to_le_bytes());
        b.extend_from_slice(&(8 * k as u64).to_le_bytes());
    }
    (1..=k as u64).for_each(|id| b.extend_from_slice(&id.to_le_bytes()));
    b.extend_from_slice(&rec);
    b
}

/// Events sharing one ids array: one warning counting the ids listed again (before, one
/// warning per id: a 320 KB file took 2.2 GB and 40 M warnings), the ids going to the last
/// event as in perf; and all the sections together listing more ids than the file has bytes
/// is refused at once, before reading them.
#[test]
fn shared_ids_arrays_give_one_warning_and_a_bounded_read() {
    let bytes = shared_ids(4, 1000);
    let check = |warnings: &[Warning], attrs: &[FileAttr]| {
        assert_eq!(warnings, [Warning::DuplicateId { count: 3000, id: 1, previous: 0, event: 1 }]);
        assert!(attrs.iter().all(|a| a.ids.len() == 1000 && a.ids[999] == 1000));
    };
    let mut r = Reader::from_bytes(&bytes).unwrap();
    check(r.metadata().warnings(), r.metadata().attrs());
    assert_eq!(r.next_record().unwrap().unwrap().event().ok(), Some(3), "perf: the last event listing the id");
    let r = Reader::from_read(&bytes[..]).unwrap();
    check(r.metadata().warnings(), r.metadata().attrs());
    // Pipe mode: one warning as well, counted across the HEADER_ATTR records.
    let mut attrs = two_events();
    attrs[1].ids = vec![11, 12];
    attrs.push(attrs[1].clone());
    let pipe = Writer::pipe(Vec::new(), Endian::Little, attrs).unwrap().finish_pipe().unwrap();
    let mut r = Reader::from_bytes(&pipe).unwrap();
    while r.next_record().unwrap().is_some() {}
    assert_eq!(r.metadata().warnings(), [Warning::DuplicateId { count: 4, id: 11, previous: 0, event: 1 }]);
    // 2000 events × 20000 ids in 320 KB: refused when the ids listed pass the file's size.
    let bomb = shared_ids(2000, 20_000);
    let start = std::time::Instant::now();
    let e = Reader::from_bytes(&bomb).unwrap_err();
    let len = bomb.len() as u64;
    assert!(
        matches!(e, PerfDataError::TooManyIds { event: 16, ids: 340_000, file_size, .. } if file_size == len),
        "{e:?}"
    );
    assert!(e.to_string().contains("overlap"), "{e}");
    let e = Reader::new(Cursor::new(&bomb)).unwrap_err();
    assert!(matches!(e, PerfDataError::TooManyIds { event: 16, .. }), "{e:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "{:?}", start.elapsed());
}

/// A file of the other byte order whose bitmap lacks HOSTNAME: its features read as perf reads
/// them (`header.c:perf_file_header__read`), with a warning; before, all were read.
#[test]
fn a_foreign_bitmap_without_hostname_is_read_as_perf_reads_it() {
    use perfring_data::{features, features::Feature};
    let endian = match Endian::NATIVE {
        Endian::Little => Endian::Big,
        Endian::Big => Endian::Little,
    };
    let attrs = vec![FileAttr { attr: attr(st::IP | st::TID, true), ids: vec![1] }];
    let mut w = Writer::new(Cursor::new(Vec::new()), endian, attrs).unwrap();
    let s = Sample { ip: Some(1), tid: Some(Default::default()), ..Sample::default() };
    w.write_record(&s, 0).unwrap();
    w.set_feature(features::OSRELEASE, &Feature::String("6.1".into())).unwrap();
    w.set_feature_bytes(35, features::encode_string("a", endian)).unwrap();
    w.set_feature_bytes(36, features::encode_string("b", endian)).unwrap();
    let written = w.finish().unwrap().into_inner();
    // The writer set HOSTNAME (3): the sections are those of bits 3, 4, 35 and 36.
    let bitmap = |b: &[u8]| endian.u64(b[72..80].try_into().unwrap());
    assert_eq!(bitmap(&written), 1 << 3 | 1 << 4 | 1 << 35 | 1 << 36);
    let with_bitmap = |word: u64| {
        let mut b = written.clone();
        b[72..80].copy_from_slice(&endian.put_u64(word));
        b
    };
    let string =
        |r: &Reader<_>, bit| r.metadata().feature_value(bit).map(|v: Result<Feature, PerfDataError>| v.unwrap());
    // Without HOSTNAME: bits 4, 35, 36 as a 32-bit host's are 36, 3, 4, which has HOSTNAME:
    // perf reads the sections in that order (3: the first, 4: the second, 36: the third).
    let bytes = with_bitmap(1 << 4 | 1 << 35 | 1 << 36);
    let r = Reader::from_bytes(&bytes).unwrap();
    let used = [1 << 3 | 1 << 4 | 1 << 36, 0, 0, 0];
    assert_eq!(
        r.metadata().warnings(),
        [Warning::ForeignFeatureBitmap { file: [1 << 4 | 1 << 35 | 1 << 36, 0, 0, 0], used }]
    );
    assert_eq!(r.metadata().header().features, used);
    assert_eq!(string(&r, features::HOSTNAME), Some(Feature::String(String::new())));
    assert_eq!(string(&r, features::OSRELEASE), Some(Feature::String("6.1".into())));
    assert_eq!(r.metadata().feature(35), None);
    // Not even as a 32-bit host's: the bitmap is ignored, the first section taken for BUILD_ID.
    let bytes = with_bitmap(1 << 4 | 1 << 11);
    let r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(
        r.metadata().warnings(),
        [Warning::ForeignFeatureBitmap { file: [1 << 4 | 1 << 11, 0, 0, 0], used: [1 << 2, 0, 0, 0] }]
    );
    assert_eq!(r.metadata().features().map(|(bit, _)| bit).collect::<Vec<_>>(), [features::BUILD_ID]);
    assert!(
        r.metadata().warnings()[0].to_string().contains("the first section taken for BUILD_ID"),
        "{}",
        r.metadata().warnings()[0]
    );
    // Read forward, the same.
    let mut r = Reader::from_read(&bytes[..]).unwrap();
    while r.next_record().unwrap().is_some() {}
    assert_eq!(r.metadata().features().map(|(bit, _)| bit).collect::<Vec<_>>(), [features::BUILD_ID]);
    // In this host's order, a bitmap without HOSTNAME is read as it is.
    let attrs = vec![FileAttr { attr: attr(st::IP | st::TID, true), ids: vec![1] }];
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::NATIVE, attrs).unwrap();
    w.write_record(&s, 0).unwrap();
    w.set_feature(features::OSRELEASE, &Feature::String("6.1".into())).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let r = Reader::from_bytes(&bytes).unwrap();
    assert!(r.metadata().warnings().is_empty());
    assert_eq!(r.metadata().features().map(|(bit, _)| bit).collect::<Vec<_>>(), [features::OSRELEASE]);
}
