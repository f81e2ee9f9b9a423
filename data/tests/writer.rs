//! What the writer writes is what perf reads, and what perf cannot read is refused with a typed
//! error naming the field (each test was checked against perf 6.1: `perf report -D`).

use perfring::record::EventRecord;
use std::io::Cursor;

use perfring::record::{attr_flags, sample_type as st, types, Attr, Endian, Header, PidTid, Sample};
use perfring_data::{FileAttr, Reader, Writer};

fn attr() -> Attr {
    Attr {
        size: Attr::SIZE_VER7,
        type_: 1,
        sample_period: 1,
        sample_type: st::IP | st::TID | st::TIME,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::default()
    }
}

fn sample(time: u64) -> Sample<'static> {
    Sample { misc: 2, ip: Some(0x1234), tid: Some(PidTid { pid: 42, tid: 42 }), time: Some(time), ..Sample::default() }
}

/// AUXTRACE (71): `{header (48 bytes); u64 size, offset, reference; u32 idx, tid, cpu,
/// reserved}`, and `size` bytes of AUX data after it.
fn auxtrace(endian: Endian, data: &[u8]) -> Vec<u8> {
    let mut rec = Header { type_: types::AUXTRACE, misc: 0, size: 48 }.to_bytes(endian).to_vec();
    for w in [data.len() as u64, 0, 7] {
        rec.extend_from_slice(&endian.put_u64(w));
    }
    for w in [0u32, 42, 0, 0] {
        rec.extend_from_slice(&endian.put_u32(w));
    }
    rec
}

/// (type, decompressed, trailing) of each record.
fn records(bytes: &[u8]) -> Vec<(u32, bool, Vec<u8>)> {
    let mut r = Reader::from_bytes(bytes).unwrap();
    let mut got = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        got.push((rec.raw().header.type_, rec.decompressed(), rec.raw().trailing.to_vec()));
    }
    got
}

/// `perf record -z` writes AUXTRACE records and their data uncompressed, between COMPRESSED
/// records (perf reads the data from the file): so does a compressing writer, in order. Before,
/// the data went into the zstd stream, and perf failed ("failed to process type: 71").
#[cfg(feature = "zstd")]
#[test]
fn a_compressing_writer_writes_auxtrace_and_its_data_uncompressed_in_order() {
    let aux = [0xaa; 32];
    let mut w =
        Writer::new(Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr: attr(), ids: vec![1] }]).unwrap();
    w.compress(1).unwrap();
    w.write_record(&sample(1), 0).unwrap();
    w.write_raw(&auxtrace(Endian::Little, &aux), &aux).unwrap();
    w.write_record(&sample(2), 0).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let c = perfring::record::types::COMPRESSED;
    assert_eq!(
        records(&bytes),
        [
            (c, false, vec![]),
            (types::SAMPLE, true, vec![]),
            (types::AUXTRACE, false, aux.to_vec()),
            (c, false, vec![]),
            (types::SAMPLE, true, vec![]),
        ]
    );
}

/// `write_raw` takes one whole record and the data it carries, nothing else: bytes perf and
/// this crate's reader would refuse are an error naming the field, and nothing is written.
/// Before, `write_raw(&[1, 2, 3], &[])` was `Ok` and the finished file unreadable.
#[test]
fn write_raw_refuses_bytes_that_are_not_one_record() {
    use perfring_data::PerfDataError;
    let e = Endian::Little;
    let mut w = Writer::new(Cursor::new(Vec::new()), e, vec![FileAttr { attr: attr(), ids: vec![1] }]).unwrap();
    let header = |type_, size| Header { type_, misc: 0, size }.to_bytes(e).to_vec();
    let padded = |mut h: Vec<u8>, n: usize| {
        h.resize(n, 0);
        h
    };
    let aux = [7u8; 16];
    // (record, trailing, and the error's type_, field, value, expected)
    type Case<'a> = (Vec<u8>, &'a [u8], u32, &'static str, u64, u64);
    let cases: Vec<Case<'_>> = vec![
        (vec![1, 2, 3], &[], 0, "record length", 3, 8),
        // A header saying more, or less, than the bytes given.
        (padded(header(types::SAMPLE, 32), 24), &[], types::SAMPLE, "header.size", 32, 24),
        (padded(header(types::SAMPLE, 16), 24), &[], types::SAMPLE, "header.size", 16, 24),
        // A kernel record not a multiple of 8; perf's own types may be (COMPRESSED is).
        (padded(header(types::SAMPLE, 12), 12), &[], types::SAMPLE, "header.size % 8", 4, 0),
        // Data after a record that carries none.
        (padded(header(types::SAMPLE, 16), 16), &aux, types::SAMPLE, "trailing length", 16, 0),
        // AUXTRACE: its data is auxtrace.size bytes, and it needs room to say so.
        (auxtrace(e, &aux), &aux[..8], types::AUXTRACE, "auxtrace.size", 16, 8),
        (header(types::AUXTRACE, 8), &[], types::AUXTRACE, "header.size", 8, 16),
    ];
    for (record, trailing, type_, field, value, expected) in cases {
        let err = w.write_raw(&record, trailing).unwrap_err();
        assert!(
            matches!(err, PerfDataError::BadRawRecord { type_: t, field: f, value: v, expected: x }
                if (t, f, v, x) == (type_, field, value, expected)),
            "{record:?}: {err:?}"
        );
        assert!(err.to_string().contains(field), "{err}");
    }
    assert_eq!(w.data_size(), 0, "nothing written");
    // What perf reads is taken: a perf-only record of any size, AUXTRACE and its data.
    w.write_raw(&padded(header(perfring::record::types::COMPRESSED, 13), 13), &[]).unwrap();
    w.write_raw(&auxtrace(e, &aux), &aux).unwrap();
    assert_eq!(w.data_size(), 13 + 48 + 16);
}

/// `Attr::size` 0 means 64 (`Attr::default()` has it): the writer takes it, in both modes, and
/// writes 64, as perf reads a 0; a field set past the size, which the file would drop, is an
/// error saying the size that keeps it. Before, `Writer::new` refused 0 ("attr.size cannot
/// carry the value 0").
#[test]
fn an_attr_size_of_0_is_written_as_64() {
    use perfring_data::PerfDataError;
    let a = Attr { sample_type: st::IDENTIFIER | st::IP | st::TID, sample_period: 1, ..Attr::default() };
    assert_eq!(a.size, 0);
    let w = Writer::new(Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr: a, ids: vec![1] }]).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().header().attr_size, 64 + 16);
    assert_eq!(r.metadata().attrs()[0].attr, Attr { size: 64, ..a });
    // With another event of size 64, one attr_size.
    let b = Attr { size: 64, ..a };
    let attrs = vec![FileAttr { attr: a, ids: vec![1] }, FileAttr { attr: b, ids: vec![2] }];
    Writer::new(Cursor::new(Vec::new()), Endian::Big, attrs.clone()).unwrap();
    let mut p = Writer::pipe(Vec::new(), Endian::Little, attrs).unwrap();
    p.finished_round().unwrap();
    let bytes = p.finish_pipe().unwrap();
    let mut r = Reader::from_bytes(&bytes).unwrap();
    while r.next_record().unwrap().is_some() {}
    // Pipe mode: written as 128 bytes, where perf 6.1 looks for the ids.
    let c = Attr { size: Attr::SIZE_VER7, ..a };
    assert_eq!(r.metadata().attrs(), [FileAttr { attr: c, ids: vec![1] }, FileAttr { attr: c, ids: vec![2] }]);
    // clockid sits past 64 bytes (VER3: 96): kept only by a size that holds it.
    let c = Attr { clockid: 1, ..a };
    let e = Writer::new(Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr: c, ids: vec![] }]).unwrap_err();
    assert!(matches!(e, PerfDataError::AttrFieldsPastSize { event: 0, size: 0, need: 96 }), "{e:?}");
    assert!(e.to_string().contains("set attr.size to 96"), "{e}");
    let e = Writer::pipe(Vec::new(), Endian::Little, vec![FileAttr { attr: Attr { size: 88, ..c }, ids: vec![] }])
        .unwrap_err();
    assert!(matches!(e, PerfDataError::AttrFieldsPastSize { event: 0, size: 88, need: 96 }), "{e:?}");
    Writer::new(Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr: Attr { size: 96, ..c }, ids: vec![] }])
        .unwrap();
}

/// What perf refuses in a file's events, the writer refuses before writing, with the error the
/// reader gives for such a file (before, `Writer::new` wrote a file its own reader and perf
/// refused: two events without ID/IDENTIFIER). Pipe mode, where perf only warns, takes them.
#[test]
fn the_writer_refuses_events_perf_refuses() {
    use perfring::record::read_format;
    use perfring_data::PerfDataError;
    let no_id = vec![FileAttr { attr: attr(), ids: vec![1] }, FileAttr { attr: attr(), ids: vec![2] }];
    let e = Writer::new(Cursor::new(Vec::new()), Endian::Little, no_id.clone()).unwrap_err();
    // Event 0's sample_type, at 104 + 24 in the file.
    assert!(matches!(e, PerfDataError::NonMatchingSampleType { event: 0, offset: 128, .. }), "{e:?}");
    assert!(e.to_string().contains("has neither ID nor IDENTIFIER"), "{e}");
    Writer::pipe(Vec::new(), Endian::Little, no_id).unwrap();
    let with_id = Attr { sample_type: st::IDENTIFIER | st::IP, ..attr() };
    let other = Attr { flags: 0, ..with_id };
    let attrs = vec![FileAttr { attr: with_id, ids: vec![1] }, FileAttr { attr: other, ids: vec![2] }];
    let e = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs).unwrap_err();
    assert!(matches!(e, PerfDataError::SampleIdAllMismatch { event: 1, offset } if offset == 104 + 144 + 40), "{e:?}");
    let read = Attr { sample_type: st::IDENTIFIER | st::READ, read_format: 0, ..attr() };
    let e =
        Writer::new(Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr: read, ids: vec![1] }]).unwrap_err();
    assert!(matches!(e, PerfDataError::NonMatchingReadFormat { offset: 136, .. }), "{e:?}");
    let read = Attr { read_format: read_format::ID, ..read };
    Writer::new(Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr: read, ids: vec![1] }]).unwrap();
}

/// The byte order that is not this host's.
fn foreign() -> Endian {
    match Endian::NATIVE {
        Endian::Little => Endian::Big,
        Endian::Big => Endian::Little,
    }
}

/// perf reading a file of the other byte order keeps its features only if HOSTNAME is set: the
/// writer sets an empty one when given none (before, perf ignored every feature of such a
/// file, COMPRESSED included, and could not decompress its records). A file in this host's
/// order is left as given.
#[test]
fn a_file_of_the_other_byte_order_gets_a_hostname() {
    use perfring_data::{features, features::Feature};
    for endian in [foreign(), Endian::NATIVE] {
        let mut w =
            Writer::new(Cursor::new(Vec::new()), endian, vec![FileAttr { attr: attr(), ids: vec![1] }]).unwrap();
        #[cfg(feature = "zstd")]
        w.compress(1).unwrap();
        w.write_record(&sample(5), 0).unwrap();
        w.set_feature(features::OSRELEASE, &Feature::String("6.1-test".into())).unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let r = Reader::from_bytes(&bytes).unwrap();
        assert!(r.metadata().warnings().is_empty(), "{:?}", r.metadata().warnings());
        let mut bits: Vec<u32> = r.metadata().features().map(|(bit, _)| bit).collect();
        bits.retain(|&b| b != features::COMPRESSED);
        if endian == Endian::NATIVE {
            assert_eq!(bits, [features::OSRELEASE]);
        } else {
            assert_eq!(bits, [features::HOSTNAME, features::OSRELEASE]);
            assert_eq!(
                r.metadata().feature_value(features::HOSTNAME).unwrap().unwrap(),
                Feature::String(String::new())
            );
        }
        #[cfg(feature = "zstd")]
        assert!(r.metadata().feature(features::COMPRESSED).is_some());
        assert_eq!(records(&bytes).iter().filter(|r| r.0 == types::SAMPLE).count(), 1);
    }
    // A HOSTNAME given is kept.
    let mut w = Writer::new(Cursor::new(Vec::new()), foreign(), vec![FileAttr { attr: attr(), ids: vec![1] }]).unwrap();
    w.set_feature(features::HOSTNAME, &Feature::String("box".into())).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let r = Reader::from_bytes(&bytes).unwrap();
    assert_eq!(r.metadata().feature_value(features::HOSTNAME).unwrap().unwrap(), Feature::String("box".into()));
}

/// A writer stopped before `finish` (a recorder killed mid-run) leaves a file perf 6.1 reads up
/// to its last `checkpoint`: `finished_round` writes the round marker only, `checkpoint` brings
/// the header's `data.size` up to date (a seek), so the records after it stay out of what is read.
/// (With `data.size` 0 perf 6.1 reads nothing; this crate's reader then reads to the end of the
/// file with a warning, as later perfs do.)
#[test]
fn a_writer_stopped_before_finish_is_read_up_to_its_last_checkpoint() {
    let path = std::env::temp_dir().join(format!("perfring-checkpoint-{}.data", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let mut w = Writer::new(file, Endian::Little, vec![FileAttr { attr: attr(), ids: vec![1] }]).unwrap();
    // (data.size in the header, the types of the records read)
    let read = |w: &mut Writer<std::fs::File>| {
        w.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let mut r = Reader::from_bytes(&bytes).unwrap();
        let mut types = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            types.push(rec.raw().header.type_);
        }
        (r.metadata().header().data.size, types)
    };
    let (sample_size, round) = (8 + 8 + 8 + 8, 8);
    w.write_record(&sample(1), 0).unwrap();
    w.finished_round().unwrap();
    assert_eq!(read(&mut w).0, 0, "no checkpoint yet");
    w.checkpoint().unwrap();
    assert_eq!(read(&mut w), (sample_size + round, vec![types::SAMPLE, types::FINISHED_ROUND]));
    w.write_record(&sample(2), 0).unwrap();
    w.finished_round().unwrap();
    assert_eq!(read(&mut w), (sample_size + round, vec![types::SAMPLE, types::FINISHED_ROUND]), "past the checkpoint");
    w.checkpoint().unwrap();
    assert_eq!(read(&mut w), (2 * (sample_size + round), [types::SAMPLE, types::FINISHED_ROUND].repeat(2)));
    drop(w);
    std::fs::remove_file(&path).unwrap();
}
