//! Unit tests of self-monitoring: the seqlock, counter reads and time conversions.

use crate::fences::LOCAL;
use crate::memory::RingMemory;
use crate::page::{offsets, Capabilities};
use crate::selfmon::*;

/// The uapi's own quot/rem form, for comparison where it does not overflow.
fn uapi_delta(cyc: u64, shift: u32, mult: u64, offset: u64) -> u64 {
    let quot = cyc >> shift;
    let rem = cyc & ((1u64 << shift) - 1);
    offset.wrapping_add(quot.wrapping_mul(mult)).wrapping_add((rem * mult) >> shift)
}

#[test]
fn delta_matches_the_uapi_formula_at_edge_values() {
    for shift in [0u16, 1, 10, 31] {
        for mult in [0u32, 1, 0x8000_0000, u32::MAX - 1, u32::MAX] {
            for cyc in [0u64, 1, 12345, 1 << 40, u64::MAX - 1, u64::MAX] {
                assert_eq!(
                    cycles_to_delta(cyc, shift, mult, 7),
                    uapi_delta(cyc, u32::from(shift), u64::from(mult), 7),
                    "cyc {cyc} shift {shift} mult {mult}"
                );
            }
        }
    }
}

#[test]
fn short_time_rebuilds_cycles_across_a_counter_wrap() {
    // A 32-bit counter that wrapped past time_cycles.
    let (time_cycles, mask) = (0xFFFF_FF00u64, 0xFFFF_FFFFu64);
    assert_eq!(short_cycles(0x0000_0010, time_cycles, mask), time_cycles + 0x110);
    assert_eq!(short_cycles(time_cycles, time_cycles, mask), time_cycles);
    assert_eq!(short_cycles(5, 0, u64::MAX), 5);
}

#[test]
fn sign_extension_at_every_edge_width_and_hostile_widths_do_not_panic() {
    assert_eq!(sign_extend(0xFFFF_FFFF_FFFF, 48), -1);
    assert_eq!(sign_extend(0x7FFF_FFFF_FFFF, 48), 0x7FFF_FFFF_FFFF);
    assert_eq!(sign_extend(1, 1), -1);
    assert_eq!(sign_extend(0, 1), 0);
    assert_eq!(sign_extend(u64::MAX, 64), -1);
    assert_eq!(sign_extend(u64::MAX, 0), 0);
    assert_eq!(sign_extend(5, u16::MAX), 5);
}

#[test]
fn timestamp_and_cycles_convert_both_ways() {
    let (shift, mult, zero) = (31u16, 0x8000_0000u32, 1_000u64); // 1 cycle = 1 ns
    assert_eq!(cycles_to_timestamp(5_000, shift, mult, zero), 6_000);
    assert_eq!(timestamp_to_cycles(6_000, shift, mult, zero), Some(5_000));
    assert_eq!(timestamp_to_cycles(6_000, shift, 0, zero), None);
    // Cycles near 2^64 wrap as the kernel's u64 arithmetic does, without panicking.
    let _ = cycles_to_timestamp(u64::MAX, 63, u32::MAX, u64::MAX);
    let _ = timestamp_to_cycles(0, u16::MAX, 1, u64::MAX);
}

#[test]
fn scale_uses_128_bits_and_refuses_zero_running() {
    assert_eq!(scale(u64::MAX / 2, 4, 2), Some(u64::MAX - 1));
    assert_eq!(scale(u64::MAX, 3, 2), Some(u64::MAX), "saturates");
    assert_eq!(scale(100, 300, 100), Some(300));
    assert_eq!(scale(100, 300, 0), None);
}

#[test]
fn written_fields_read_back_through_the_seqlock() {
    let ring = crate::ModelRing::<8>::new().unwrap();
    let caps = Capabilities(Capabilities::USER_TIME | Capabilities::USER_RDPMC);
    let u = Update {
        index: 3,
        offset: -5,
        time_enabled: 1000,
        time_running: 400,
        capabilities: caps,
        pmc_width: 48,
        time_shift: 10,
        time_mult: 1024,
        time_offset: 7,
        time_zero: 99,
        time_cycles: 1 << 40,
        time_mask: u64::MAX,
    };
    write(&ring, &u);
    struct Src;
    impl CounterSource for Src {
        fn read_pmc(&mut self, index: u32) -> u64 {
            assert_eq!(index, 2, "index - 1");
            0xFFFF_FFFF_FFF0 // -16 in 48 bits
        }
        fn read_cycles(&mut self) -> u64 {
            100
        }
    }
    let r = read(&ring, &mut Src, 3).unwrap();
    assert_eq!(r.retries, 0);
    assert_eq!(r.snapshot.index, 3);
    assert_eq!(r.snapshot.offset, -5);
    assert_eq!(r.snapshot.time_zero, 99);
    assert_eq!(r.snapshot.time_cycles, 1 << 40);
    assert_eq!((r.snapshot.pmc_width, r.snapshot.time_shift, r.snapshot.time_mult), (48, 10, 1024));
    assert_eq!(r.count, (-21i64) as u64, "offset + sign-extended pmc");
    // delta = 7 + (100 * 1024) >> 10 = 107
    assert_eq!((r.enabled, r.running), (1107, 507));
    assert_eq!(r.snapshot.lock % 2, 0);
}

#[test]
fn a_lock_that_never_settles_is_a_typed_error_not_a_spin() {
    let ring = crate::ModelRing::<8>::new().unwrap();
    ring.page_word(offsets::LOCK).store(1, LOCAL); // odd forever: a writer that died mid-update
    assert_eq!(read(&ring, &mut NoCounters, 50), Err(SelfmonError::Unstable { retries: 50 }));
}
