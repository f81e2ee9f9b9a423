//! What the writer writes is what perf reads, and what perf cannot read is refused with a typed
//! error naming the field (each test was checked against perf 6.1: `perf report -D`).

use std::io::Cursor;

use perfring::record::{attr_flags, sample_type as st, types, Attr, Endian, Header, PidTid, Record, Sample};
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

fn sample(time: u64) -> Record<'static> {
    Record::Sample(Sample {
        misc: 2,
        ip: Some(0x1234),
        tid: Some(PidTid { pid: 42, tid: 42 }),
        time: Some(time),
        ..Sample::default()
    })
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
        got.push((rec.header.type_, rec.decompressed, rec.trailing.to_vec()));
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
    let c = perfring_data::COMPRESSED;
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
