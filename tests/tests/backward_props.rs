//! Property: for random record-size sequences, ring sizes and read points, the backward reader
//! returns exactly the newest records written since the previous read that still fit in the
//! ring, newest first, bit-identical. The oracle is a plain list of what was written.
#![cfg(not(loom))]

use perfring::backward::BackwardReader;
use perfring::producer::{EventIdentity, ProducerConfig};
use perfring::{memory::Mapping, split};
use perfring_tests::{check_record, record, Seen};
use proptest::prelude::*;

const CONFIG: ProducerConfig = ProducerConfig { backward: true, overwrite: true, watermark: 0, wakeup_events: 0 };

/// Ops: write a record of `8 * (2 + n)` bytes, or read.
#[derive(Debug, Clone)]
enum Op {
    Write(usize),
    Read,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(prop_oneof![6 => (0usize..30).prop_map(Op::Write), 1 => Just(Op::Read)], 1..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn backward_reader_returns_exactly_the_newest_records_that_fit(size_log in 6u32..=10, ops in ops()) {
        let data_size = 1usize << size_log;
        let mut mem = vec![0u64; (4096 + data_size) / 8];
        // SAFETY: the u64 buffer viewed as bytes: same allocation, 8-aligned, length × 8.
        let bytes = unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr().cast::<u8>(), mem.len() * 8) };
        let mut map = Mapping::new(bytes, 4096).unwrap();
        let (producer, _c) = split(&mut map, CONFIG).unwrap();
        let mut reader = BackwardReader::new(*producer.memory(), false).unwrap();
        let mut since_read: Vec<u64> = Vec::new(); // seqs written since the last read
        let mut lens = std::collections::HashMap::new();
        let mut scratch = vec![0u8; 65536];
        for (seq, op) in ops.iter().chain(std::iter::once(&Op::Read)).enumerate() {
            let seq = seq as u64;
            match *op {
                Op::Write(n) => {
                    let len = 8 * (2 + n);
                    if len < data_size {
                        producer.output(&record(seq, len), &EventIdentity::ANONYMOUS).unwrap();
                        since_read.push(seq);
                        lens.insert(seq, len);
                    }
                }
                Op::Read => {
                    let mut seen = Seen::default();
                    reader.read(&mut scratch, |r| check_record(r.bytes, &mut seen)).unwrap();
                    // Oracle: newest first, while the running total fits in the ring.
                    let mut total = 0;
                    let expect: Vec<u64> = since_read
                        .iter()
                        .rev()
                        .take_while(|s| { total += lens[s]; total <= data_size })
                        .copied()
                        .collect();
                    prop_assert_eq!(&seen.seqs, &expect);
                    since_read.clear();
                }
            }
        }
    }
}
