//! perf's own record types decode into typed values; layouts from
//! `tools/lib/perf/include/perf/event.h`, bytes assembled here field by field. Also the
//! legacy 72-byte header and big-endian files.

use perfring::record::EventRecord;
use std::io::Cursor;

use perfring::record::{attr_flags, sample_type as st, types, Attr, Endian, Header, Record, Sample};
use perfring_data::{CpuMap, FileAttr, PerfDataError, PerfRecord, Reader, Writer};

fn record(type_: u32, words: &[u64], tail: &[u8]) -> Vec<u8> {
    let size = 8 + 8 * words.len() + tail.len();
    let mut b = Header { type_, misc: 0, size: size as u16 }.to_bytes(Endian::Little).to_vec();
    words.iter().for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
    b.extend_from_slice(tail);
    b
}

fn parse(b: &[u8]) -> Result<Option<PerfRecord<'_>>, PerfDataError> {
    PerfRecord::parse(b, &[], Endian::Little, 0)
}

#[test]
fn id_index_thread_map_cpu_map_stat_time_conv_event_update() {
    let b = record(types::ID_INDEX, &[2, 11, 0, 0, 100, 12, 0, 1, 101], &[]);
    let Some(PerfRecord::IdIndex(v)) = parse(&b).unwrap() else { panic!() };
    assert_eq!((v.len(), v[1].id, v[1].cpu, v[1].tid), (2, 12, 1, 101));
    // nr larger than the record: refused, naming the field.
    let b = record(types::ID_INDEX, &[3, 11, 0, 0, 100], &[]);
    assert!(matches!(parse(&b), Err(PerfDataError::BadPerfRecord { field: "id_index.nr", .. })));

    let comm = *b"sh\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    let b = record(perfring::record::types::THREAD_MAP, &[1, 42], &comm);
    assert_eq!(parse(&b).unwrap(), Some(PerfRecord::ThreadMap(vec![(42, &b"sh"[..])])));

    // CPU_MAP type 0: {u16 type; u16 nr; u16 cpu[nr]}, padded.
    let tail = [0u8, 0, 3, 0, 0, 0, 1, 0, 7, 0, 0, 0, 0, 0, 0, 0];
    let b = record(perfring::record::types::CPU_MAP, &[], &tail);
    assert_eq!(parse(&b).unwrap(), Some(PerfRecord::CpuMap(CpuMap::Cpus(vec![0, 1, 7]))));
    // type 2: {u16 type; u8 any_cpu; u8 pad; u16 start; u16 end}.
    let tail = [2u8, 0, 1, 0, 2, 0, 5, 0];
    let b = record(perfring::record::types::CPU_MAP, &[], &tail);
    assert_eq!(parse(&b).unwrap(), Some(PerfRecord::CpuMap(CpuMap::Range { any_cpu: true, start: 2, end: 5 })));

    let mut stat = record(perfring::record::types::STAT, &[9], &[]);
    stat.extend_from_slice(&3u32.to_le_bytes());
    stat.extend_from_slice(&4u32.to_le_bytes());
    [100u64, 200, 150].iter().for_each(|w| stat.extend_from_slice(&w.to_le_bytes()));
    let size = stat.len() as u16;
    stat[6..8].copy_from_slice(&size.to_le_bytes());
    assert_eq!(
        parse(&stat).unwrap(),
        Some(PerfRecord::Stat { id: 9, cpu: 3, thread: 4, val: 100, ena: 200, run: 150 })
    );

    let mut tail = vec![0u8; 8];
    tail[0] = 1; // cap_user_time_zero
    let b = record(perfring::record::types::TIME_CONV, &[10, 500, 1_000_000, 7, u64::MAX], &tail);
    assert!(matches!(
        parse(&b).unwrap(),
        Some(PerfRecord::TimeConv {
            time_shift: 10,
            time_mult: 500,
            time_zero: 1_000_000,
            time_cycles: 7,
            cap_user_time_zero: true,
            cap_user_time_short: false,
            ..
        })
    ));
    // The older 32-byte record: shift, mult, zero only.
    let b = record(perfring::record::types::TIME_CONV, &[10, 500, 1_000_000], &[]);
    assert!(matches!(parse(&b).unwrap(), Some(PerfRecord::TimeConv { time_cycles: 0, time_mask: 0, .. })));

    let b = record(perfring::record::types::EVENT_UPDATE, &[3, 11], b"cycles\0\0");
    assert_eq!(parse(&b).unwrap(), Some(PerfRecord::EventUpdate { type_: 3, id: 11, payload: &b"cycles\0\0"[..] }));

    assert_eq!(parse(&record(types::FINISHED_ROUND, &[], &[])).unwrap(), Some(PerfRecord::FinishedRound));
    assert_eq!(parse(&record(types::FINISHED_INIT, &[], &[])).unwrap(), Some(PerfRecord::FinishedInit));
    assert_eq!(parse(&record(types::SAMPLE, &[1], &[])).unwrap(), None, "kernel types are not perf's");
    // Truncated fields name themselves.
    assert!(matches!(
        parse(&record(perfring::record::types::STAT, &[9], &[])),
        Err(PerfDataError::BadPerfRecord { field: "cpu", .. })
    ));
}

fn sample_file(endian: Endian) -> Vec<u8> {
    let attr = Attr {
        size: Attr::SIZE_VER7,
        sample_type: st::IP | st::TID | st::TIME,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::default()
    };
    let mut w = Writer::new(Cursor::new(Vec::new()), endian, vec![FileAttr { attr, ids: vec![5] }]).unwrap();
    for ip in [0x10, 0x20] {
        let s = Sample { ip: Some(ip), tid: Some(Default::default()), time: Some(ip), ..Sample::default() };
        w.write_record(&s, 0).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn ips(bytes: &[u8]) -> Vec<u64> {
    let mut r = Reader::from_bytes(bytes).unwrap();
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Record::Sample(s) = rec.decode().unwrap() {
            v.push(s.ip().unwrap());
        }
    }
    v
}

#[test]
fn big_endian_and_legacy_headers_read() {
    let be = sample_file(Endian::Big);
    assert_eq!(&be[..8], b"2ELIFREP", "the magic's bytes in big-endian order");
    assert_eq!(Reader::from_bytes(&be).unwrap().metadata().endian(), Endian::Big);
    assert_eq!(ips(&be), [0x10, 0x20]);
    // The legacy header: size 72, no feature bitmap (the sections sit where they were).
    let mut legacy = sample_file(Endian::Little);
    legacy[8..16].copy_from_slice(&72u64.to_le_bytes());
    let r = Reader::from_bytes(&legacy).unwrap();
    assert_eq!((r.metadata().header().size, r.metadata().header().features), (72, [0; 4]));
    assert_eq!(ips(&legacy), [0x10, 0x20]);
    // Any other size is refused with it.
    legacy[8..16].copy_from_slice(&80u64.to_le_bytes());
    assert!(matches!(Reader::from_bytes(&legacy), Err(PerfDataError::BadHeaderSize(80))));
    // Not a perf.data file.
    assert!(matches!(Reader::from_bytes(b"PERFILE3 and more bytes"), Err(PerfDataError::BadMagic(_))));
}
