//! The streaming readers hand out the records a mapped reader does — the same offsets, bytes
//! and trailing data — when records straddle the read-ahead chunks and an AUXTRACE record
//! carries more data than the buffer holds; and time order gives the same records in the same
//! order from every reader, with rounds whose records carry over (the round store compacts).

use perfring::record::EventRecord;
use std::io::Cursor;

use perfring::record::{attr_flags, sample_type as st, types, Attr, Endian, Sample};
use perfring_data::{FileAttr, Reader, Source, Writer};

const ST: u64 = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CPU | st::PERIOD;

/// ~6000 SAMPLEs of two "CPUs" whose times interleave across FINISHED_ROUNDs (each round holds
/// records older than the previous round's newest), an AUXTRACE of 300 KiB of data in the
/// middle, in `endian`, file or pipe mode.
fn file(endian: Endian, pipe: bool) -> Vec<u8> {
    let attr = Attr {
        size: Attr::SIZE_VER7,
        sample_type: ST,
        sample_period: 1,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::default()
    };
    let attrs = vec![FileAttr { attr, ids: vec![3] }];
    let aux_data: Vec<u8> = (0..300 * 1024).map(|i| (i * 7 % 251) as u8).collect();
    let mut aux = vec![0u8; 48];
    let put = |b: &mut [u8], at: usize, v: u64| {
        b[at..at + 8].copy_from_slice(&if endian == Endian::Little { v.to_le_bytes() } else { v.to_be_bytes() })
    };
    aux[..8].copy_from_slice(&perfring::record::Header { type_: types::AUXTRACE, misc: 0, size: 48 }.to_bytes(endian));
    put(&mut aux, 8, aux_data.len() as u64);
    macro_rules! write {
        ($w:expr) => {{
            for round in 0..60u64 {
                for i in 0..100u64 {
                    // CPU 0 is one round behind CPU 1: its records go out a round later.
                    let (cpu, time) = if i % 2 == 0 { (0, 1000 * round + i) } else { (1, 1000 * (round + 1) + i) };
                    let s = Sample {
                        identifier: Some(3),
                        ip: Some(0x1000 + round * 100 + i),
                        tid: Some(perfring::record::PidTid { pid: 1, tid: 2 }),
                        time: Some(time),
                        cpu: Some(perfring::record::SampleCpu { cpu, res: 0 }),
                        period: Some(1),
                        ..Sample::default()
                    };
                    $w.write_record(&s, 0).unwrap();
                }
                if round == 30 {
                    $w.write_raw(&aux, &aux_data).unwrap();
                }
                $w.finished_round().unwrap();
            }
        }};
    }
    if pipe {
        let mut w = Writer::pipe(Vec::new(), endian, attrs).unwrap();
        write!(w);
        return w.finish_pipe().unwrap();
    }
    let mut w = Writer::new(Cursor::new(Vec::new()), endian, attrs).unwrap();
    write!(w);
    w.finish().unwrap().into_inner()
}

/// Every record's offset, type, bytes and trailing data, and its time if it has one.
fn records<S: Source>(mut r: Reader<S>) -> Vec<(u64, u32, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push((rec.raw().offset, rec.raw().header.type_, rec.raw().bytes.to_vec(), rec.raw().trailing.to_vec()));
    }
    out
}

#[test]
fn streamed_readers_give_the_mapped_readers_records_in_either_order() {
    for endian in [Endian::Little, Endian::Big] {
        for pipe in [false, true] {
            let bytes = file(endian, pipe);
            let what = format!("{endian:?}, pipe {pipe}");
            let mapped = records(Reader::from_bytes(&bytes).unwrap());
            assert_eq!(mapped.iter().filter(|r| r.1 == types::SAMPLE).count(), 6000, "{what}");
            let aux = mapped.iter().find(|r| r.1 == types::AUXTRACE).expect("the AUXTRACE record");
            assert_eq!(aux.3.len(), 300 * 1024, "{what}");
            assert_eq!(records(Reader::from_read(Cursor::new(&bytes)).unwrap()), mapped, "{what}: from_read");
            if pipe {
                assert_eq!(records(Reader::from_pipe(Cursor::new(&bytes)).unwrap()), mapped, "{what}: from_pipe");
            } else {
                assert_eq!(records(Reader::new(Cursor::new(&bytes)).unwrap()), mapped, "{what}: new");
            }

            // Time order: the same from each reader; every record once; SAMPLE times never
            // go back (each round holds only records newer than what went out before).
            let timed = records(Reader::from_bytes(&bytes).unwrap().time_ordered());
            assert_eq!(records(Reader::from_read(Cursor::new(&bytes)).unwrap().time_ordered()), timed, "{what}");
            let (mut a, mut b) = (timed.clone(), mapped.clone());
            a.sort();
            b.sort();
            assert!(a == b, "{what}: time order holds every record once");
            let time_at = 8 + 8 + 8 + 8; // header, IDENTIFIER, IP, TID: TIME
            let times: Vec<u64> = timed
                .iter()
                .filter(|r| r.1 == types::SAMPLE)
                .map(|r| {
                    let b: [u8; 8] = r.2[time_at..time_at + 8].try_into().unwrap();
                    if endian == Endian::Little {
                        u64::from_le_bytes(b)
                    } else {
                        u64::from_be_bytes(b)
                    }
                })
                .collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{what}: SAMPLEs in time order");
            assert_ne!(timed, mapped, "{what}: the file is not in time order, so the test sorts");
        }
    }
}
