//! The self-monitoring conversions against a 128-bit reference, on random values including the
//! edges (shift 0 and 31, mult near u32::MAX, cycles near 2^64, short-time masks).
#![cfg(not(loom))]

use perfring::page::MmapPage;
use perfring::selfmon::{cycles_to_delta, cycles_to_timestamp, scale, short_cycles, sign_extend, timestamp_to_cycles};
use proptest::prelude::*;
use std::mem::offset_of;

fn edge_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        (0u64..1 << 20).prop_map(|d| u64::MAX - d)
    ]
}

fn edge_mult() -> impl Strategy<Value = u32> {
    prop_oneof![any::<u32>(), Just(1u32), Just(u32::MAX), Just(u32::MAX - 1), Just(1 << 31)]
}

fn shift() -> impl Strategy<Value = u16> {
    prop_oneof![0u16..=31, Just(0), Just(31)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn delta_and_timestamp_equal_the_128_bit_reference(cyc in edge_u64(), mult in edge_mult(), shift in shift(), base in edge_u64()) {
        let exact = ((u128::from(cyc) * u128::from(mult)) >> shift) as u64;
        prop_assert_eq!(cycles_to_delta(cyc, shift, mult, base), base.wrapping_add(exact));
        prop_assert_eq!(cycles_to_timestamp(cyc, shift, mult, base), base.wrapping_add(exact));
        // The uapi's quot/rem form, which is exact for shift <= 31 (rem * mult < 2^63).
        let quot = cyc >> shift;
        let rem = cyc & ((1u64 << shift) - 1);
        let uapi = base.wrapping_add(quot.wrapping_mul(u64::from(mult))).wrapping_add((rem * u64::from(mult)) >> shift);
        prop_assert_eq!(cycles_to_delta(cyc, shift, mult, base), uapi);
    }

    #[test]
    fn timestamp_to_cycles_equals_the_128_bit_reference_and_inverts(ts in edge_u64(), zero in edge_u64(), mult in edge_mult(), shift in shift()) {
        let time = ts.wrapping_sub(zero);
        let reference = ((u128::from(time) << shift) / u128::from(mult)) as u64;
        prop_assert_eq!(timestamp_to_cycles(ts, shift, mult, zero), Some(reference));
        // Round trip: cycles -> timestamp -> cycles loses at most one cycle of rounding when the
        // conversion does not overflow.
        if u128::from(time) << shift < 1u128 << 64 && mult >= 1 << shift {
            let cyc = reference;
            let back = cycles_to_timestamp(cyc, shift, mult, zero);
            // floor twice: at most one cycle's worth of ns (mult / 2^shift, rounded up) + 1.
            prop_assert!(ts.wrapping_sub(back) <= (u64::from(mult) >> shift) + 1, "{ts} -> {cyc} -> {back}");
        }
    }

    #[test]
    fn scale_equals_the_128_bit_reference(count in edge_u64(), enabled in edge_u64(), running in edge_u64()) {
        let got = scale(count, enabled, running);
        if running == 0 {
            prop_assert_eq!(got, None);
        } else {
            let r = u128::from(count) * u128::from(enabled) / u128::from(running);
            prop_assert_eq!(got, Some(u64::try_from(r).unwrap_or(u64::MAX)));
        }
    }

    #[test]
    fn short_time_and_sign_extension_match_their_formulas(cyc in edge_u64(), base in edge_u64(), bits in 1u32..=64, width in 0u16..=80) {
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let full = short_cycles(cyc, base, mask);
        prop_assert_eq!(full.wrapping_sub(base) & !mask, 0, "within one mask of the base");
        prop_assert_eq!(full & mask, cyc.wrapping_sub(base).wrapping_add(base) & mask);
        let v = sign_extend(cyc, width);
        match width {
            0 => prop_assert_eq!(v, 0),
            w if w >= 64 => prop_assert_eq!(v, cyc as i64),
            w => {
                let reference = (i128::from(cyc & ((1u64 << w) - 1)) << (128 - w)) >> (128 - w);
                prop_assert_eq!(i128::from(v), reference);
            }
        }
    }
}

/// A writer thread racing the reader: the reader must retry (and does), and never returns a
/// torn snapshot (the writer keeps `time_running == time_enabled / 2` and `offset == -enabled`).
#[test]
fn a_racing_writer_makes_the_reader_retry_and_never_tear() {
    use perfring::memory::RingMemory;
    use perfring::selfmon::{read, write, NoCounters, UserPage};
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let ring = perfring::memory::ModelRing::<8>::new().unwrap();
    let stop = AtomicBool::new(false);
    let (mut reads, mut retries) = (0u64, 0u64);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut t = 2u64;
            while !stop.load(Relaxed) {
                write(
                    &ring,
                    &UserPage {
                        time_enabled: t,
                        time_running: t / 2,
                        offset: -(t as i64),
                        time_zero: t,
                        ..UserPage::default()
                    },
                );
                t += 2;
            }
        });
        // Wait for the writer to start (its first update), then read until it has made the
        // reader retry, or 20 million reads (a bound, not a time limit).
        while ring.page_word(offset_of!(MmapPage, lock)).load(Relaxed) == 0 {
            std::hint::spin_loop();
        }
        for _ in 0..20_000_000 {
            if retries > 0 && reads > 100_000 {
                break;
            }
            if let Ok(r) = read(&ring, &mut NoCounters, 10_000) {
                let s = r.snapshot;
                assert_eq!(s.time_running, s.time_enabled / 2, "torn snapshot: {s:?}");
                assert_eq!(s.offset, -(s.time_enabled as i64), "torn snapshot: {s:?}");
                assert_eq!(s.time_zero, s.time_enabled, "torn snapshot: {s:?}");
                reads += 1;
                retries += u64::from(r.retries);
            }
        }
        stop.store(true, Relaxed);
    });
    println!("selfmon race: {reads} consistent reads, {retries} retries");
    assert!(reads > 0);
    assert!(retries > 0, "the writer never made the reader retry: the race did not happen");
}
