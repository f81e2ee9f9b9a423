//! Self-monitoring: the control page's seqlock, counter reads and time conversions.
//!
//! The kernel keeps `lock`, `index`, `offset`, `time_enabled`, `time_running`, the capability
//! bits and the `time_*` conversion parameters of the control page up to date
//! (`perf_event_update_userpage`), bumping `lock` before and after each update. A reader loops
//! until it sees the same, even `lock` before and after reading the fields ([`read()`]).
//!
//! # Stronger than the kernel, on purpose
//!
//! The kernel's writer uses compiler barriers only: its reader is the task itself on the same
//! CPU, and the writer runs to completion before that reader resumes. A writer on another CPU (a
//! hypervisor exporting counters to a guest, the simulator) needs real fences: [`write()`] uses
//! (S1)/(S2) and the reader (S3)/(S4) of [`crate::fences`], and the reader also refuses an odd
//! `lock` (an update in progress), which the uapi loop does not check. The loom model
//! `tests/tests/loom_selfmon.rs` shows each of S1–S4 is needed.
//!
//! # Hostile writers
//!
//! The reader retries at most `max_retries` times and then returns
//! [`SelfmonError::Unstable`]; all arithmetic is total (wrapping as the kernel's u64 C code,
//! 128-bit intermediates where the uapi's quot/rem form would overflow, shifts clamped to 63),
//! so no page content can make it panic or spin forever.
//!
//! u64 fields are read as two 32-bit halves (targets without 64-bit atomics have no other way);
//! the seqlock makes the pair consistent.

use crate::fences::{fence, LOCAL, S1_SEQ_WRITE_BEGIN, S2_SEQ_WRITE_END, S3_SEQ_READ_BEGIN, S4_SEQ_READ_END};
use crate::memory::RingMemory;
use crate::page::{capabilities, offsets};

/// Retries [`read()`] allows by default before [`SelfmonError::Unstable`].
pub const DEFAULT_MAX_RETRIES: u32 = 1000;

/// The self-monitoring fields of the control page: a consistent copy that [`read()`] took, or
/// what [`write()`] publishes (`perf_event_update_userpage`'s fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UserPage {
    /// The (even) `lock` value the fields were read under. [`write()`] ignores it: the writer
    /// moves the lock itself.
    pub lock: u32,
    /// Hardware counter index + 1; 0: the counter cannot be read directly.
    pub index: u32,
    /// Add to the hardware counter value.
    pub offset: i64,
    /// Time the event was enabled (ns).
    pub time_enabled: u64,
    /// Time the event was running (ns).
    pub time_running: u64,
    /// Capability bits ([`write()`] always adds `cap_bit0_is_deprecated`).
    pub capabilities: u64,
    /// Bit width of the hardware counter.
    pub pmc_width: u16,
    /// Cycles → ns shift.
    pub time_shift: u16,
    /// Cycles → ns multiplier.
    pub time_mult: u32,
    /// Cycles → ns offset.
    pub time_offset: u64,
    /// Perf timestamp at cycle 0 (`cap_user_time_zero`).
    pub time_zero: u64,
    /// Cycle base for `cap_user_time_short`.
    pub time_cycles: u64,
    /// Cycle mask for `cap_user_time_short`.
    pub time_mask: u64,
}

/// How the reader gets the hardware counter and the cycle counter (rdpmc/rdtsc on x86, the PMU
/// and timer registers elsewhere, a fake in tests). Called inside the seqlock loop.
pub trait CounterSource {
    /// The raw value of hardware counter `index` (the page's `index - 1`).
    fn read_pmc(&mut self, index: u32) -> u64;
    /// The cycle counter the `time_*` parameters convert (TSC on x86).
    fn read_cycles(&mut self) -> u64;
}

/// A source with no hardware access: counts come from `offset` and times from the page alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCounters;

impl CounterSource for NoCounters {
    fn read_pmc(&mut self, _index: u32) -> u64 {
        0
    }
    fn read_cycles(&mut self) -> u64 {
        0
    }
}

/// Why a self-monitoring read failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelfmonError {
    /// The writer never left the fields stable for a whole read (`lock` odd or changed) within
    /// the retry bound.
    Unstable {
        /// Reads attempted.
        retries: u32,
    },
}

impl core::fmt::Display for SelfmonError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SelfmonError::Unstable { retries } => write!(f, "control page never stable over {retries} reads"),
        }
    }
}

impl core::error::Error for SelfmonError {}

/// A counter reading: the snapshot and what was computed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// The fields read.
    pub snapshot: UserPage,
    /// `offset` + the sign-extended hardware counter (if `cap_user_rdpmc` and `index != 0`).
    pub count: u64,
    /// `time_enabled`, advanced to now when `cap_user_time` (and enabled ≠ running).
    pub enabled: u64,
    /// `time_running`, advanced to now like `enabled` when the counter is active.
    pub running: u64,
    /// Times the seqlock loop had to retry.
    pub retries: u32,
}

fn load_u64<M: RingMemory>(mem: &M, off: usize) -> u64 {
    // The field's 8 bytes in memory order, as `split_u16s`: one path for either byte order.
    let a = mem.page_word(off).load(LOCAL).to_ne_bytes();
    let b = mem.page_word(off + 4).load(LOCAL).to_ne_bytes();
    u64::from_ne_bytes([a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]])
}

fn store_u64<M: RingMemory>(mem: &M, off: usize, v: u64) {
    let b = v.to_ne_bytes();
    mem.page_word(off).store(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]), LOCAL);
    mem.page_word(off + 4).store(u32::from_ne_bytes([b[4], b[5], b[6], b[7]]), LOCAL);
}

/// The two u16 fields at offset 48 (`pmc_width`, `time_shift`) from their 32-bit word.
fn split_u16s(w: u32) -> (u16, u16) {
    let b = w.to_ne_bytes();
    (u16::from_ne_bytes([b[0], b[1]]), u16::from_ne_bytes([b[2], b[3]]))
}

fn join_u16s(first: u16, second: u16) -> u32 {
    let (a, b) = (first.to_ne_bytes(), second.to_ne_bytes());
    u32::from_ne_bytes([a[0], a[1], b[0], b[1]])
}

fn read_fields<M: RingMemory>(mem: &M, lock: u32) -> UserPage {
    let (pmc_width, time_shift) = split_u16s(mem.page_word(offsets::PMC_WIDTH).load(LOCAL));
    UserPage {
        lock,
        index: mem.page_word(offsets::INDEX).load(LOCAL),
        offset: load_u64(mem, offsets::OFFSET) as i64,
        time_enabled: load_u64(mem, offsets::TIME_ENABLED),
        time_running: load_u64(mem, offsets::TIME_RUNNING),
        capabilities: load_u64(mem, offsets::CAPABILITIES),
        pmc_width,
        time_shift,
        time_mult: mem.page_word(offsets::TIME_MULT).load(LOCAL),
        time_offset: load_u64(mem, offsets::TIME_OFFSET),
        time_zero: load_u64(mem, offsets::TIME_ZERO),
        time_cycles: load_u64(mem, offsets::TIME_CYCLES),
        time_mask: load_u64(mem, offsets::TIME_MASK),
    }
}

/// Read the self-monitoring fields consistently, and the counters through `source` inside the
/// same critical section (the uapi loop), then compute the count and the times.
///
/// ```
/// use perfring::page::capabilities;
/// use perfring::selfmon::{self, CounterSource, UserPage, DEFAULT_MAX_RETRIES};
/// use perfring::memory::Mapping;
/// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
/// # let mut buf = Buf([0; 4096 + 4096]);
/// let map = Mapping::new(&mut buf.0, 4096).unwrap();
/// // The exporter (a hypervisor, the kernel) publishes a counter and its clock.
/// selfmon::write(&map, &UserPage {
///     index: 1,
///     offset: 1000,
///     time_enabled: 500,
///     time_running: 250,
///     capabilities: capabilities::USER_RDPMC | capabilities::USER_TIME,
///     pmc_width: 48,
///     time_shift: 1,
///     time_mult: 1,
///     ..UserPage::default()
/// });
/// // The reader supplies the hardware reads (rdpmc/rdtsc on x86; fixed values here).
/// struct Fixed;
/// impl CounterSource for Fixed {
///     fn read_pmc(&mut self, _index: u32) -> u64 { (1 << 48) - 10 } // -10 in 48 bits
///     fn read_cycles(&mut self) -> u64 { 200 }                        // 100 ns at mult 1, shift 1
/// }
/// let r = selfmon::read(&map, &mut Fixed, DEFAULT_MAX_RETRIES).unwrap();
/// assert_eq!(r.count, 990); // offset + sign-extended counter
/// assert_eq!((r.enabled, r.running), (600, 350));
/// assert_eq!(selfmon::scale(r.count, r.enabled, r.running), Some(990 * 600 / 350));
/// ```
pub fn read<M: RingMemory, C: CounterSource>(
    mem: &M,
    source: &mut C,
    max_retries: u32,
) -> Result<Reading, SelfmonError> {
    for retries in 0..=max_retries {
        // (S3): the first lock load before the field loads; pairs with the writer's (S2).
        let seq = mem.page_word(offsets::LOCK).load(S3_SEQ_READ_BEGIN);
        if seq & 1 == 1 {
            continue;
        }
        let s = read_fields(mem, seq);
        let cycles = if s.capabilities & capabilities::USER_TIME != 0 && s.time_enabled != s.time_running {
            source.read_cycles()
        } else {
            0
        };
        let pmc = if s.capabilities & capabilities::USER_RDPMC != 0 && s.index != 0 {
            sign_extend(source.read_pmc(s.index - 1), s.pmc_width)
        } else {
            0
        };
        // (S4): the field loads before the second lock load; pairs with the writer's (S1).
        fence(S4_SEQ_READ_END);
        if mem.page_word(offsets::LOCK).load(LOCAL) != seq {
            continue;
        }
        let count = (s.offset as u64).wrapping_add(pmc as u64);
        let (mut enabled, mut running) = (s.time_enabled, s.time_running);
        if s.capabilities & capabilities::USER_TIME != 0 && enabled != running {
            let cyc = if s.capabilities & capabilities::USER_TIME_SHORT != 0 {
                short_cycles(cycles, s.time_cycles, s.time_mask)
            } else {
                cycles
            };
            let delta = cycles_to_delta(cyc, s.time_shift, s.time_mult, s.time_offset);
            enabled = enabled.wrapping_add(delta);
            if s.index != 0 {
                running = running.wrapping_add(delta);
            }
        }
        return Ok(Reading { snapshot: s, count, enabled, running, retries });
    }
    Err(SelfmonError::Unstable { retries: max_retries })
}

/// Publish `u` (all but its `lock`) under the seqlock (the kernel's
/// `perf_event_update_userpage`). Writers must not nest or run concurrently on one page
/// ("otherwise the seqlock logic goes bad").
pub fn write<M: RingMemory>(mem: &M, u: &UserPage) {
    let lock = mem.page_word(offsets::LOCK);
    let seq = lock.load(LOCAL);
    lock.store(seq.wrapping_add(1) | 1, LOCAL);
    // (S1): the odd lock before the field stores; pairs with the reader's (S4).
    fence(S1_SEQ_WRITE_BEGIN);
    mem.page_word(offsets::INDEX).store(u.index, LOCAL);
    store_u64(mem, offsets::OFFSET, u.offset as u64);
    store_u64(mem, offsets::TIME_ENABLED, u.time_enabled);
    store_u64(mem, offsets::TIME_RUNNING, u.time_running);
    store_u64(mem, offsets::CAPABILITIES, u.capabilities | capabilities::BIT0_IS_DEPRECATED);
    mem.page_word(offsets::PMC_WIDTH).store(join_u16s(u.pmc_width, u.time_shift), LOCAL);
    mem.page_word(offsets::TIME_MULT).store(u.time_mult, LOCAL);
    store_u64(mem, offsets::TIME_OFFSET, u.time_offset);
    store_u64(mem, offsets::TIME_ZERO, u.time_zero);
    store_u64(mem, offsets::TIME_CYCLES, u.time_cycles);
    store_u64(mem, offsets::TIME_MASK, u.time_mask);
    // (S2): the field stores before the even lock; pairs with the reader's (S3).
    lock.store((seq.wrapping_add(1) | 1).wrapping_add(1), S2_SEQ_WRITE_END);
}

/// Sign-extend a `width`-bit counter value (uapi: `pmc <<= 64 - width; pmc >>= 64 - width`).
/// Width 0 gives 0; widths of 64 or more (a hostile page) use all 64 bits.
pub fn sign_extend(pmc: u64, width: u16) -> i64 {
    match width {
        0 => 0,
        w if w >= 64 => pmc as i64,
        w => ((pmc << (64 - w)) as i64) >> (64 - w),
    }
}

/// `cap_user_time_short`: rebuild a full cycle count from a short counter value.
pub fn short_cycles(cyc: u64, time_cycles: u64, time_mask: u64) -> u64 {
    time_cycles.wrapping_add(cyc.wrapping_sub(time_cycles) & time_mask)
}

/// Cycles → ns since `time_enabled` was stamped: `time_offset + (cyc * mult) >> shift`, with a
/// 128-bit product (libperf's `mul_u64_u32_shr`); equal to the uapi's quot/rem form whenever
/// that form does not overflow. `shift` is clamped to 63.
pub fn cycles_to_delta(cyc: u64, shift: u16, mult: u32, offset: u64) -> u64 {
    offset.wrapping_add(mul_shr(cyc, mult, shift))
}

/// Cycles → perf timestamp (`cap_user_time_zero`): `time_zero + (cyc * mult) >> shift`.
///
/// ```
/// use perfring::selfmon::{cycles_to_timestamp, timestamp_to_cycles};
/// // A 3 GHz TSC: 1 ns = 3 cycles, i.e. ns = cycles * mult >> shift with mult/2^shift = 1/3.
/// let (shift, mult, time_zero) = (31, 715_827_883, 1_000_000_000);
/// let ts = cycles_to_timestamp(3_000_000_000, shift, mult, time_zero);
/// assert_eq!(ts, time_zero + 1_000_000_000); // one second later
/// let cyc = timestamp_to_cycles(ts, shift, mult, time_zero).unwrap();
/// assert!(cyc.abs_diff(3_000_000_000) <= 3); // back, within a nanosecond's cycles
/// assert_eq!(timestamp_to_cycles(ts, shift, 0, time_zero), None);
/// ```
pub fn cycles_to_timestamp(cyc: u64, shift: u16, mult: u32, time_zero: u64) -> u64 {
    time_zero.wrapping_add(mul_shr(cyc, mult, shift))
}

/// Perf timestamp → cycles (`cap_user_time_zero`): `((ts - time_zero) << shift) / mult`, exact
/// in 128 bits (the uapi's quot/rem form, without its overflow). `None` if `mult` is 0.
pub fn timestamp_to_cycles(ts: u64, shift: u16, mult: u32, time_zero: u64) -> Option<u64> {
    if mult == 0 {
        return None;
    }
    let time = u128::from(ts.wrapping_sub(time_zero));
    Some(((time << shift.min(63)) / u128::from(mult)) as u64)
}

/// Scale a count by enabled/running time (the counter was multiplexed):
/// `count * enabled / running` in 128 bits, saturating at `u64::MAX`. `None` if `running` is 0
/// (the counter never ran: nothing to scale from).
pub fn scale(count: u64, enabled: u64, running: u64) -> Option<u64> {
    if running == 0 {
        return None;
    }
    let v = u128::from(count) * u128::from(enabled) / u128::from(running);
    Some(u64::try_from(v).unwrap_or(u64::MAX))
}

fn mul_shr(cyc: u64, mult: u32, shift: u16) -> u64 {
    ((u128::from(cyc) * u128::from(mult)) >> shift.min(63)) as u64
}
