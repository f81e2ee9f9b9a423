//! Shared helpers of the cross-crate tests: record builders and a checking drain that every
//! model uses, so that each model checks every byte and the conservation law the same way.

/// Decoding a record laid out by a bare context (`decode::Ctx`), through the one public door.
pub mod decode;
/// The scripted hostile peer.
pub mod hostile;
/// The scripted hostile peer of the BPF ring buffer.
pub mod hostile_bpf;
/// A model of the kernel's ring-buffer write path (v6.1.172) with the proposed patches of
/// `docs/kernel-findings.md` as switches, and each finding's reproducer.
pub mod kernel_model;
/// The perf.data fixtures and the `perf` oracle.
pub mod perf_files;

use perfring::consumer::{Consumer, ReadError, Trust};
use perfring::memory::RingMemory;
use perfring::record::{types, Endian, Header};

/// The end of a property test over a generator: print how many cases met each situation, fail
/// with the run's error if it had one, then fail if no case met a situation (the generator no
/// longer covers it).
pub fn report_coverage<E: std::fmt::Display>(test: &str, cases: u32, counters: &[(&str, u64)], result: Result<(), E>) {
    println!("{test}: {cases} cases;");
    for (name, n) in counters {
        println!("  cases {name}: {n}");
    }
    if let Err(e) = result {
        panic!("{e}");
    }
    for (name, n) in counters {
        assert!(*n > 0, "no case {name}: the generator no longer covers it");
    }
}

/// A test record of `len` bytes (a multiple of 8, ≥ 16): header {SAMPLE, misc 0, len}, then the
/// 8-byte sequence number `seq`, then bytes derived from `seq` so that every byte is checkable.
pub fn record(seq: u64, len: usize) -> Vec<u8> {
    assert!(len >= 16 && len % 8 == 0);
    let mut r = Header { type_: types::SAMPLE, misc: 0, size: len as u16 }.to_bytes(Endian::NATIVE).to_vec();
    r.extend_from_slice(&seq.to_ne_bytes());
    r.extend((0..len - 16).map(|i| fill_byte(seq, i)));
    r
}

/// The byte at body index `i` (after the sequence number) of record `seq`.
pub fn fill_byte(seq: u64, i: usize) -> u8 {
    (seq as u8).wrapping_mul(31).wrapping_add(i as u8).wrapping_add(1)
}

/// What a consumer saw: the sequence numbers of the test records, in ring order, and the sum of
/// the `lost` fields of the PERF_RECORD_LOST records.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Sequence numbers of SAMPLE records, in the order read.
    pub seqs: Vec<u64>,
    /// Σ lost over PERF_RECORD_LOST records.
    pub lost_reported: u64,
    /// Number of LOST records.
    pub lost_records: u64,
}

/// Check one record read from the ring: a well-formed test record (every byte) or a LOST.
/// Panics with a description if it is torn or corrupt.
pub fn check_record(bytes: &[u8], seen: &mut Seen) {
    let h = Header::parse(bytes, Endian::NATIVE).expect("header");
    assert_eq!(usize::from(h.size), bytes.len(), "header size matches record length");
    match h.type_ {
        types::LOST => {
            assert!(bytes.len() >= 24, "LOST record too short");
            seen.lost_reported += u64::from_ne_bytes(bytes[16..24].try_into().unwrap());
            seen.lost_records += 1;
        }
        types::SAMPLE => {
            let seq = u64::from_ne_bytes(bytes[8..16].try_into().unwrap());
            assert_eq!(bytes, &record(seq, bytes.len())[..], "record {seq} torn or corrupt");
            seen.seqs.push(seq);
        }
        t => panic!("unexpected record type {t}"),
    }
}

/// Read one batch, checking every record. Returns how many were read.
pub fn drain_batch<M: RingMemory, T: Trust>(c: &mut Consumer<M, T>, seen: &mut Seen) -> Result<usize, ReadError> {
    let mut scratch = vec![0u8; 65536];
    c.for_each(&mut scratch, |r| check_record(r.bytes, seen))
}
