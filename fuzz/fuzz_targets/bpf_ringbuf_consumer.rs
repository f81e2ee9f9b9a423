//! A BPF ring buffer consumer (trusted or untrusted, every publishing and validation setting)
//! or the user ringbuf's drain, over a ring whose contents, positions and every change between
//! two accesses come from the fuzzer. Invariants: see
//! `perfring_tests::hostile_bpf::run_bpf_consumer` (no panic, no out-of-bounds request, bounded
//! work, records inside the ring and the batch).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfring_tests::hostile_bpf::{bpf_script_from_bytes, run_bpf_consumer, BpfConsumerCase};

fn word(b: &[u8], aligned: bool) -> usize {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    let v = u64::from_le_bytes(w) as usize;
    if aligned {
        (v % 512) * 8
    } else {
        v
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 20 {
        return;
    }
    let (producer_raw, rest) = data[3..].split_at(8);
    let (consumer_raw, rest) = rest.split_at(8);
    let (init, script) = rest.split_at(rest.len().min(128));
    run_bpf_consumer(&BpfConsumerCase {
        size_log: 4 + data[0] % 7,
        init: init.to_vec(),
        producer_pos: word(producer_raw, data[1] & 1 == 0),
        consumer_pos: word(consumer_raw, data[1] & 2 == 0),
        mode: data[2],
        script: bpf_script_from_bytes(script),
    });
});
