//! perfring-data's readers on arbitrary bytes: a whole perf.data file (file or pipe
//! mode, detected), read in file order and in time order through the zero-copy reader, the
//! streaming reader and, for pipe mode, the pipe reader; every record decoded, its perf-only
//! view and every feature decoded. Invariants: no panic, no hang; the three readers agree on
//! the records they yield before any error.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use perfring::record::EventRecord;
use perfring_data::{Mode, Reader, Source};

fn walk<S: Source>(r: &mut Reader<S>) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    while let Ok(Some(rec)) = r.next_record() {
        let _ = (rec.decode(), rec.sample().map(|s| (s.ip(), s.callchain(), s.raw())), rec.view());
        let _ = rec.perf_record();
        out.push((rec.raw().offset, rec.raw().bytes.to_vec()));
    }
    let meta = r.metadata();
    for bit in meta.features().map(|(b, _)| b).collect::<Vec<_>>() {
        let _ = meta.feature_value(bit);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut slice) = Reader::from_bytes(data) else { return };
    let pipe = slice.metadata().mode() == Mode::Pipe;
    let want = walk(&mut slice);
    if let Ok(r) = Reader::from_bytes(data) {
        walk(&mut r.time_ordered());
    }
    if let Ok(mut stream) = Reader::new(Cursor::new(data)) {
        assert_eq!(walk(&mut stream), want, "stream and slice readers");
    }
    if pipe {
        if let Ok(mut p) = Reader::from_pipe(data) {
            assert_eq!(walk(&mut p), want, "pipe and slice readers");
        }
    }
});
