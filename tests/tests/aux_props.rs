//! Property: for random stretch sizes and snapshot times, the AUX snapshot returns exactly the
//! newest bytes written since the previous snapshot (at most `aux_size`), oldest first, says
//! whether older ones were overwritten, and the PERF_RECORD_AUX records in the data ring carry
//! the offsets, sizes and flags of what the tracer wrote. The non-overwrite reader gets every
//! byte. The oracle is the plain list of bytes written.
#![cfg(not(loom))]

use perfring::aux::{AuxConsumer, AuxProducer};
use perfring::producer::{EventIdentity, ProducerConfig};
use perfring::record::aux_flags as flags;
use perfring::record::types;
use perfring::record::Aux;
use perfring::{memory::Mapping, split};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Write(usize),
    Snapshot,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(prop_oneof![4 => (0usize..300).prop_map(Op::Write), 1 => Just(Op::Snapshot)], 1..60)
}

fn aligned(len: usize) -> Vec<u8> {
    let mut v: Vec<u64> = vec![0; len.div_ceil(8)];
    let p = v.as_mut_ptr().cast::<u8>();
    let cap = v.len() * 8;
    std::mem::forget(v);
    // SAFETY: the leaked u64 allocation reinterpreted as bytes (same size, alignment 8 ≥ 1);
    // leaked deliberately so the buffer is 8-aligned; tests only.
    unsafe { Vec::from_raw_parts(p, cap, cap) }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn snapshot_returns_exactly_the_newest_bytes_and_aux_records_match(aux_log in 6u32..=9, overwrite in any::<bool>(), ops in ops()) {
        let aux_size = 1usize << aux_log;
        let mut main = aligned(4096 + 65536);
        let mut aux_mem = aligned(aux_size);
        let map = Mapping::new(&mut main[..4096 + 65536], 4096).unwrap();
        let mut map = map.with_aux(&mut aux_mem[..aux_size], Some(4096 + 65536)).unwrap();
        let (data, mut records) = split(&mut map, ProducerConfig::default()).unwrap();
        let mem = *data.memory();
        // SAFETY: the only AUX producer of this mapping.
        let mut aux = unsafe { AuxProducer::new(mem, overwrite, 0) }.unwrap();
        let mut reader = AuxConsumer::new(mem).unwrap();
        let mut written: Vec<u8> = Vec::new();
        let mut received: Vec<u8> = Vec::new();
        let mut last_snapshot = 0usize;
        let mut expected_records = Vec::new();
        let mut out = vec![0u8; aux_size];
        for op in ops {
            match op {
                Op::Write(n) => {
                    let Ok(mut h) = aux.output_begin() else {
                        // Non-overwrite and full: read to free space, like a consumer woken up.
                        let (_, got) = reader.read(&mut out);
                        received.extend_from_slice(&out[..got]);
                        continue;
                    };
                    let n = n.min(h.available());
                    let bytes: Vec<u8> = (0..n).map(|i| (written.len() + i) as u8 ^ 0x5a).collect();
                    aux.write(&mut h, &bytes).unwrap();
                    let start = written.len();
                    written.extend_from_slice(&bytes);
                    let (rec, _) = aux.output_end(h, n, &data, &EventIdentity::ANONYMOUS).unwrap();
                    let expect = if overwrite {
                        (n != 0).then_some(Aux { misc: 0, aux_offset: (start + n) as u64, aux_size: n as u64, flags: flags::OVERWRITE, sample_id: None })
                    } else {
                        (n != 0).then_some(Aux { misc: 0, aux_offset: start as u64, aux_size: n as u64, flags: 0, sample_id: None })
                    };
                    prop_assert_eq!(rec, expect);
                    expected_records.extend(expect);
                }
                Op::Snapshot if overwrite => {
                    let s = reader.snapshot(&mut out);
                    let new = written.len() - last_snapshot;
                    let len = new.min(aux_size);
                    prop_assert_eq!(s.len, len);
                    prop_assert_eq!(s.start, written.len() - len);
                    prop_assert_eq!(s.overwritten, new > aux_size);
                    prop_assert_eq!(&out[..len], &written[written.len() - len..]);
                    last_snapshot = written.len();
                }
                Op::Snapshot => {
                    let (start, got) = reader.read(&mut out);
                    prop_assert_eq!(start, received.len());
                    received.extend_from_slice(&out[..got]);
                }
            }
        }
        if !overwrite {
            let (_, got) = reader.read(&mut out);
            received.extend_from_slice(&out[..got]);
            prop_assert_eq!(&received, &written, "the non-overwrite reader gets every byte");
        }
        let mut scratch = vec![0u8; 65536];
        let mut recs = Vec::new();
        records.for_each(&mut scratch, |r| {
            assert_eq!(r.header.type_, types::AUX);
            let u = |o: usize| u64::from_ne_bytes(r.bytes[o..o + 8].try_into().unwrap());
            recs.push(Aux { misc: 0, aux_offset: u(8), aux_size: u(16), flags: u(24), sample_id: None });
        }).unwrap();
        prop_assert_eq!(recs, expected_records);
    }
}
