//! A producer writing into a ring whose `data_tail` the fuzzer sets before every operation.
//! Invariants: see `perfring_tests::hostile::run_producer` (no byte outside the reservation
//! changes, never a reservation over unread bytes of a valid tail, nest back to 0).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfring_tests::hostile::{run_producer, ProducerCase};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let ops = data[2..]
        .chunks(5)
        .map(|c| {
            let mut b = [0u8; 5];
            b[..c.len()].copy_from_slice(c);
            let tail = u32::from_le_bytes([b[1], b[2], b[3], b[4]]) as usize;
            // Half the tails are small aligned values (plausible), half arbitrary.
            let tail = if b[0] & 0x80 != 0 { (tail % 512) * 8 } else { tail.wrapping_mul(0x9E37_79B9) };
            (u16::from(b[0] & 0x3f), tail)
        })
        .collect();
    run_producer(&ProducerCase { size_log: 6 + data[0] % 5, mode: data[1] % 4, ops });
});
