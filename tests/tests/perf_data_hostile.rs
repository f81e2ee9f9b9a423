//! perfring-data on damaged files (the fixtures of `tests/fixtures` and `fixtures/perf-data`,
//! truncated, byte-flipped, with record sizes 0, 7 and 65535): a typed error or a warning,
//! never a panic or a hang; and the typed views (features, perf's own records) of every
//! fixture decode, features re-encoding to the same bytes.

use perfring::record::EventRecord;
use perfring_tests::perf_files::fixtures_in;
use std::io::Cursor;
use std::path::PathBuf;

use perfring::record::types;
use perfring_data::{features, features::Feature, Mode, PerfDataError, PerfRecord, Reader, Slice, PIPE_HEADER_SIZE};

fn fixtures() -> Vec<PathBuf> {
    let v = fixtures_in(&["", "perf-data"]);
    assert!(v.len() >= 11, "fixtures missing: run tests/fixtures/make-fixtures.sh");
    v
}

/// Read everything (file order, then time order), decoding each record and its typed view.
/// Returns the first error and the number of warnings; the loop is bounded by the input.
fn read_all(bytes: &[u8]) -> (Option<PerfDataError>, usize) {
    let mut first = None;
    let mut warnings = 0;
    for ordered in [false, true] {
        let mut r = match Reader::from_bytes(bytes) {
            Ok(r) => r,
            Err(e) => return (Some(e), 0),
        };
        if ordered {
            r = r.time_ordered();
        }
        let result = walk(&mut r, bytes.len());
        warnings = warnings.max(r.metadata().warnings().len());
        for bit in r.metadata().features().map(|(b, _)| b).collect::<Vec<_>>() {
            let _ = r.metadata().feature_value(bit);
        }
        if let Err(e) = result {
            first.get_or_insert(e);
        }
    }
    (first, warnings)
}

fn walk(r: &mut Reader<Slice<'_>>, len: usize) -> Result<(), PerfDataError> {
    // Every record is at least 8 bytes of input, and decompressed ones at most
    // MAX_DECOMPRESSED per 8 input bytes: far below this bound.
    let mut budget = len * 1024 + 1024;
    while let Some(rec) = r.next_record()? {
        budget = budget.checked_sub(1).expect("the reader loops");
        let _ = rec.decode();
        let _ = rec.perf_record();
    }
    Ok(())
}

/// File offsets at which a record (or the data after it) ends, for a pipe-mode stream:
/// truncating there leaves a shorter, valid stream. (A pipe-mode record's offset counts from
/// the end of the pipe header, as perf prints it.)
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut r = Reader::from_bytes(bytes).unwrap();
    let mut v = vec![PIPE_HEADER_SIZE];
    while let Some(rec) = r.next_record().unwrap() {
        if !rec.decompressed() {
            v.push(PIPE_HEADER_SIZE + rec.raw().offset as usize + rec.raw().bytes.len() + rec.raw().trailing.len());
        }
    }
    v
}

fn positions(len: usize, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).map(|i| i * len / n).collect();
    v.extend([0, 7, 8, 15, 16, 17, 71, 72, 103, 104, 105].iter().filter(|&&p| p < len));
    v.sort();
    v.dedup();
    v
}

#[test]
fn truncated_files_are_an_error_or_a_warning() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let pipe = Reader::from_bytes(&bytes).unwrap().metadata().mode() == Mode::Pipe;
        let ends = if pipe { boundaries(&bytes) } else { Vec::new() };
        let mut errors = 0;
        for at in positions(bytes.len(), 300) {
            let cut = &bytes[..at];
            let (error, warnings) = read_all(cut);
            if pipe && ends.contains(&at) {
                // A pipe cut between records is a shorter valid stream; perf cannot tell either.
                continue;
            }
            assert!(error.is_some() || warnings > 0, "{path:?} cut at {at}: read without error or warning");
            errors += usize::from(error.is_some());
            // The streaming readers agree that something is wrong.
            let streamed = Reader::new(Cursor::new(cut)).and_then(|mut r| {
                while r.next_record()?.is_some() {}
                Ok(r.metadata().warnings().len())
            });
            assert!(!matches!(streamed, Ok(0)), "{path:?} cut at {at}: the stream reader saw nothing wrong");
        }
        assert!(errors > 0, "{path:?}");
    }
}

#[test]
fn flipped_bytes_never_panic_or_hang() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let header_end = if Reader::from_bytes(&bytes).unwrap().metadata().mode() == Mode::Pipe { 16 } else { 104 };
        // The header, the attrs and ids after it, the start of the data, and a spread of the
        // rest (records, feature sections).
        let mut spots: Vec<usize> = (0..header_end.min(bytes.len())).collect();
        spots.extend((header_end..bytes.len()).step_by(7).take(400));
        spots.extend(positions(bytes.len(), 200));
        let mut outcomes = [0usize; 2];
        for at in spots {
            for mask in [0xff, 0x01, 0x80] {
                let mut m = bytes.clone();
                m[at] ^= mask;
                let (error, _) = read_all(&m);
                outcomes[usize::from(error.is_some())] += 1;
            }
        }
        assert!(outcomes[1] > 0, "{path:?}: some flip is an error");
    }
}

#[test]
fn record_sizes_0_7_and_65535_are_refused() {
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let mut r = Reader::from_bytes(&bytes).unwrap();
        let data_end = r.metadata().data_range().1.min(bytes.len() as u64);
        // File offsets: a pipe-mode record's offset counts from the end of the pipe header.
        let base = if r.metadata().mode() == Mode::Pipe { PIPE_HEADER_SIZE } else { 0 };
        let mut offsets = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            if !rec.decompressed() && offsets.len() < 40 {
                offsets.push(base + rec.raw().offset as usize);
            }
        }
        let endian = r.metadata().endian();
        for at in offsets {
            for size in [0u16, 7, 65535] {
                let mut m = bytes.clone();
                m[at + 6..at + 8].copy_from_slice(&endian.put_u16(size));
                let (error, _) = read_all(&m);
                if size < 8 || at as u64 + 65535 > data_end {
                    let e = error.unwrap_or_else(|| panic!("{path:?}: size {size} at {at} accepted"));
                    assert!(
                        matches!(
                            e,
                            PerfDataError::BadRecordSize { .. }
                                | PerfDataError::OutsideDataSection { .. }
                                | PerfDataError::Truncated { .. }
                        ),
                        "{path:?}: size {size} at {at}: {e:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn every_feature_and_perf_record_of_the_fixtures_decodes() {
    let mut typed = std::collections::BTreeSet::new();
    let mut perf_types = std::collections::BTreeSet::new();
    for path in fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let mut r = Reader::from_bytes(&bytes).unwrap();
        let mut indexed = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            let Some(p) = rec.perf_record().unwrap_or_else(|e| panic!("{path:?}: {e}")) else { continue };
            perf_types.insert(rec.raw().header.type_);
            match p {
                PerfRecord::IdIndex(entries) => {
                    assert!(!entries.is_empty());
                    indexed.extend(entries.iter().map(|e| e.id));
                }
                PerfRecord::ThreadMap(threads) => assert!(!threads.is_empty()),
                PerfRecord::HeaderAttr { ids, .. } => assert!(!ids.is_empty()),
                PerfRecord::Other { type_, .. } => panic!("{path:?}: type {type_} not typed"),
                _ => {}
            }
        }
        let ids: Vec<u64> = r.metadata().attrs().iter().flat_map(|a| a.ids.iter().copied()).collect();
        assert!(indexed.iter().all(|id| ids.contains(id)), "{path:?}: ID_INDEX ids are the attrs' ids");
        for (bit, payload) in r.metadata().features() {
            let f = Feature::parse(bit, payload, r.metadata().endian())
                .unwrap_or_else(|e| panic!("{path:?} feature {bit}: {e}"));
            if !matches!(f, Feature::Bytes(_)) {
                typed.insert(bit);
            }
            assert_eq!(f.encode(r.metadata().endian()).unwrap(), payload, "{path:?} feature {bit} re-encodes");
        }
        if let Some(Ok(Feature::String(h))) = r.metadata().feature_value(features::HOSTNAME) {
            assert!(!h.is_empty());
        }
    }
    println!("typed features seen: {typed:?}; perf record types seen: {perf_types:?}");
    for bit in [features::HOSTNAME, features::NRCPUS, features::CMDLINE, features::EVENT_DESC, features::CPU_TOPOLOGY] {
        assert!(typed.contains(&bit), "feature {bit} typed in some fixture");
    }
    for t in
        [types::ID_INDEX, perfring::record::types::THREAD_MAP, perfring::record::types::CPU_MAP, types::FINISHED_ROUND]
    {
        assert!(perf_types.contains(&t), "record type {t} in some fixture");
    }
}
