//! Unit tests of self-monitoring: the seqlock, counter reads and time conversions.

use crate::fences::LOCAL;
use crate::memory::RingMemory;
extern crate std;
use crate::page::{capabilities, offsets};
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
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    let caps = capabilities::USER_TIME | capabilities::USER_RDPMC;
    let u = UserPage {
        // Odd on purpose: `write` ignores it and moves the page's lock itself.
        lock: 7,
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
    assert_eq!(r.snapshot.lock, 2, "one write: the lock went 0 -> 1 -> 2, whatever u.lock said");
}

#[test]
fn a_lock_that_never_settles_is_a_typed_error_not_a_spin() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    ring.page_word(offsets::LOCK).store(1, LOCAL); // odd forever: a writer that died mid-update
    assert_eq!(read(&ring, &mut NoCounters, 50), Err(SelfmonError::Unstable { retries: 50 }));
}

#[test]
fn selfmon_error_says_how_many_reads_it_tried() {
    use std::string::ToString;
    assert_eq!(SelfmonError::Unstable { retries: 7 }.to_string(), "control page never stable over 7 reads");
}

#[test]
fn no_counters_adds_nothing_to_the_count_or_the_times() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    write(
        &ring,
        &UserPage {
            index: 1,
            offset: 1000,
            time_enabled: 500,
            time_running: 250,
            capabilities: capabilities::USER_RDPMC | capabilities::USER_TIME,
            pmc_width: 48,
            time_mult: 1,
            ..UserPage::default()
        },
    );
    let r = read(&ring, &mut NoCounters, 3).unwrap();
    // A counter value and a cycle count of 0: the count is the offset, the times the page's.
    assert_eq!(r.count, 1000);
    assert_eq!((r.enabled, r.running), (500, 250));
}

#[test]
fn a_lock_stuck_at_any_odd_value_is_unstable_and_an_unwritten_page_reads() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    let lock = ring.page_word(offsets::LOCK);
    let r = read(&ring, &mut NoCounters, 0).unwrap();
    assert_eq!((r.snapshot.lock, r.retries), (0, 0), "lock 0: never written, stable");
    for odd in [3u32, 5, 0xFFFF_FFFF] {
        lock.store(odd, LOCAL);
        assert_eq!(read(&ring, &mut NoCounters, 4), Err(SelfmonError::Unstable { retries: 4 }), "lock {odd}");
    }
    lock.store(6, LOCAL);
    assert_eq!(read(&ring, &mut NoCounters, 0).unwrap().snapshot.lock, 6);
}

/// Counts the hardware reads; `rdpmc` faults without `cap_user_rdpmc`, and the cycle counter is
/// read only when the page asks for a time conversion.
#[derive(Default)]
struct Calls {
    pmc: u32,
    cycles: u32,
}

impl CounterSource for Calls {
    fn read_pmc(&mut self, _index: u32) -> u64 {
        self.pmc += 1;
        5
    }
    fn read_cycles(&mut self) -> u64 {
        self.cycles += 1;
        100
    }
}

#[test]
fn the_reader_touches_the_hardware_only_when_the_page_allows_it() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    let read_with = |caps: u64, index: u32, enabled: u64, running: u64| {
        write(
            &ring,
            &UserPage {
                index,
                offset: 1000,
                time_enabled: enabled,
                time_running: running,
                capabilities: caps,
                pmc_width: 48,
                time_mult: 1,
                time_offset: 7,
                ..UserPage::default()
            },
        );
        let mut calls = Calls::default();
        let r = read(&ring, &mut calls, 0).unwrap();
        (calls.pmc, calls.cycles, r.count, r.enabled, r.running)
    };
    let (rdpmc, time) = (capabilities::USER_RDPMC, capabilities::USER_TIME);
    // Both allowed and needed: one read each; delta = 7 + 100 * 1 >> 0.
    assert_eq!(read_with(rdpmc | time, 2, 500, 250), (1, 1, 1005, 607, 357));
    // No cap_user_rdpmc, or index 0 (no counter to read): no rdpmc, the count is the offset.
    assert_eq!(read_with(time, 2, 500, 250), (0, 1, 1000, 607, 357));
    assert_eq!(read_with(rdpmc | time, 0, 500, 250), (0, 1, 1000, 607, 250));
    // No cap_user_time, or enabled == running (nothing to advance): no cycle read, and the
    // times are the page's own (time_offset is not added).
    assert_eq!(read_with(rdpmc, 2, 500, 250), (1, 0, 1005, 500, 250));
    assert_eq!(read_with(rdpmc | time, 2, 500, 500), (1, 0, 1005, 500, 500));
}

/// A page that looks at the lock when the writer stores its first field (`index`), and runs a
/// reader there: what a reader on another CPU would see in the middle of an update.
struct MidWrite<'a> {
    ring: &'a crate::memory::ModelRing<8>,
    seen: core::cell::Cell<Option<(u32, Result<Reading, SelfmonError>)>>,
}

// SAFETY: forwards every call to `ring`, which upholds the contract.
unsafe impl RingMemory for MidWrite<'_> {
    fn size(&self, area: crate::memory::Area) -> usize {
        self.ring.size(area)
    }
    fn position(&self, p: crate::memory::Position) -> &crate::loom::AtomicUsize {
        self.ring.position(p)
    }
    fn page_word(&self, offset: usize) -> &crate::loom::AtomicU32 {
        if offset == offsets::INDEX {
            let lock = self.ring.page_word(offsets::LOCK).load(LOCAL);
            self.seen.set(Some((lock, read(self.ring, &mut NoCounters, 2))));
        }
        self.ring.page_word(offset)
    }
    fn paused(&self) -> &crate::loom::AtomicBool {
        self.ring.paused()
    }
    fn write_gen(&self) -> &crate::loom::AtomicUsize {
        self.ring.write_gen()
    }
    unsafe fn write(&self, area: crate::memory::Area, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract.
        unsafe { self.ring.write(area, offset, src) }
    }
    unsafe fn read(&self, area: crate::memory::Area, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract.
        unsafe { self.ring.read(area, offset, dst) }
    }
    fn load_words(&self, area: crate::memory::Area, offset: usize, dst: &mut [u8]) -> bool {
        self.ring.load_words(area, offset, dst)
    }
    unsafe fn view(&self, area: crate::memory::Area, offset: usize, len: usize) -> Option<&[u8]> {
        // SAFETY: the caller upholds `view`'s contract.
        unsafe { self.ring.view(area, offset, len) }
    }
}

#[test]
fn each_write_holds_the_lock_odd_while_it_stores_and_leaves_it_two_higher() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    let mid = MidWrite { ring: &ring, seen: core::cell::Cell::new(None) };
    let lock = || ring.page_word(offsets::LOCK).load(LOCAL);
    for (i, before) in [0u32, 2, 4].into_iter().enumerate() {
        assert_eq!(lock(), before);
        write(&mid, &UserPage { time_enabled: i as u64, ..UserPage::default() });
        let (during, reader) = mid.seen.take().unwrap();
        assert_eq!(during, before + 1, "odd while the fields change");
        assert_eq!(reader, Err(SelfmonError::Unstable { retries: 2 }), "a reader mid-update retries");
        assert_eq!(lock(), before + 2, "even again, and changed: a reader that started before retries");
    }
    // A writer that died mid-update left the lock odd: the next update is still odd while it
    // stores, and even after.
    ring.page_word(offsets::LOCK).store(7, LOCAL);
    write(&mid, &UserPage::default());
    assert_eq!(mid.seen.take().unwrap().0, 9);
    assert_eq!(lock(), 10);
}

#[test]
fn written_capabilities_always_carry_bit0_is_deprecated() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap();
    for caps in [0, capabilities::USER_TIME, capabilities::USER_TIME | capabilities::BIT0_IS_DEPRECATED] {
        write(&ring, &UserPage { capabilities: caps, ..UserPage::default() });
        let got = read(&ring, &mut NoCounters, 0).unwrap().snapshot.capabilities;
        assert_eq!(got, caps | capabilities::BIT0_IS_DEPRECATED, "written {caps:#x}");
    }
}
