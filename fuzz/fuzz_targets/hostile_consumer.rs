//! A consumer (forward untrusted, and backward) over a ring whose contents, positions and
//! every change between two accesses come from the fuzzer. Invariants: see
//! `perfring_tests::hostile::run_consumer` (no panic, no out-of-bounds request, bounded work,
//! self-consistent records).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfring_tests::hostile::{run_consumer, script_from_bytes, ConsumerCase};

fn word(b: &[u8], aligned: bool) -> usize {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    let v = u64::from_le_bytes(w) as usize;
    if aligned {
        (v % 1024) * 8
    } else {
        v
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 20 {
        return;
    }
    let (head_raw, rest) = data[2..].split_at(8);
    let (tail_raw, rest) = rest.split_at(8);
    let (init, script) = rest.split_at(rest.len().min(128));
    run_consumer(&ConsumerCase {
        size_log: 6 + data[0] % 5,
        init: init.to_vec(),
        head: word(head_raw, data[1] & 1 == 0),
        tail: word(tail_raw, data[1] & 2 == 0),
        script: script_from_bytes(script),
    });
});
