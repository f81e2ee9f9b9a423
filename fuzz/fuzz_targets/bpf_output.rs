//! perfring-linux's perf-event-array read path over a ring whose bytes and positions come
//! from the fuzzer: core's `Batch::next_split` (one or two views of each record), then
//! `BpfRecord::parse` (a SAMPLE's RAW size and payload, a LOST count) and
//! `RawSample::contiguous` (the copy into the caller's buffer), as `PerfEventArray` reads each
//! record. Invariants: no panic; every record and payload lies inside the ring and its record;
//! the copy equals the two parts; the walk ends (each record advances by at least 8 bytes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfring::consumer::Consumer;
use perfring::fences::LOCAL;
use perfring::memory::{Area, Mapping, Position, RingMemory};
use perfring_linux::{BpfRecord, LinuxError};

const PAGE: usize = 4096;

#[repr(C, align(8))]
struct Buf([u8; PAGE + 4096]);

fuzz_target!(|data: &[u8]| {
    if data.len() < 20 {
        return;
    }
    // Data area 64 to 4096 bytes; positions anywhere (the consumer validates them).
    let size = 64usize << (data[0] % 7);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap()) as usize;
    let (tail, head) = (word(&data[2..10]), word(&data[10..18]));
    let (head, tail) = if data[1] & 1 == 0 { (tail.wrapping_add(head % (2 * size)), tail & !7) } else { (head, tail) };
    let scratch_len = usize::from(data[18]) * 8;
    let bytes = &data[19..];
    let mut buf = Buf([0; PAGE + 4096]);
    let map = Mapping::new(&mut buf.0[..PAGE + size], PAGE).unwrap();
    let fill = bytes.len().min(size) & !7;
    // SAFETY: inside the data area; nothing else reads or writes this ring.
    unsafe { map.write(Area::Data, 0, &bytes[..fill]) };
    map.position(Position::DataTail).store(tail, LOCAL);
    map.position(Position::DataHead).store(head, LOCAL);
    // SAFETY: nothing writes the ring while it is read (the trusted contract holds, whatever
    // its bytes are: they are fixed).
    let Ok(mut consumer) = (unsafe { Consumer::trusted(&map) }) else { return };
    let Ok(mut batch) = consumer.batch() else { return };
    let mut scratch = vec![0u8; scratch_len];
    let mut copy = vec![0u8; scratch_len];
    let mut steps = 0;
    while let Some(record) = batch.next_split(&mut scratch) {
        steps += 1;
        assert!(steps <= size / 8, "the walk advances by at least 8 bytes a record");
        let Ok(record) = record else { break };
        let len = usize::from(record.header.size);
        assert_eq!(record.first.len() + record.second.len(), len, "the parts are the record");
        assert!(len >= 8 && len % 8 == 0 && len <= size);
        match BpfRecord::parse(&record, 0) {
            Ok(BpfRecord::Sample(sample)) => {
                assert!(12 + sample.len() <= len, "the payload lies inside its record");
                let (a, b) = sample.parts();
                match sample.contiguous(&mut copy) {
                    Ok(one) => assert_eq!(one, [a, b].concat().as_slice()),
                    Err(LinuxError::BufferTooSmall { needed, len }) => {
                        assert!(!b.is_empty() && needed == sample.len() && len < needed)
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            Ok(BpfRecord::Lost(_)) => assert!(len >= 24),
            Ok(BpfRecord::Other { record_type }) => assert!(record_type != 9 && record_type != 2),
            Err(LinuxError::BadBpfRecord { needs, size, .. }) => assert!(needs > u64::from(size)),
            Err(e) => panic!("{e}"),
        }
    }
});
