//! The ABI of the BPF ring buffer: `include/uapi/linux/bpf.h`'s constants, the 8-byte record
//! header, and the arithmetic the kernel and libbpf both apply to it.

use super::error::RingbufError;

/// Bit 31 of a header's `len` word: the record is reserved and not yet committed
/// (`BPF_RINGBUF_BUSY_BIT`). A consumer stops at the first header that has it.
pub const BUSY_BIT: u32 = 1 << 31;

/// Bit 30 of a header's `len` word: the record was discarded (`BPF_RINGBUF_DISCARD_BIT`). A
/// consumer skips it; its bytes stay in the ring until then.
pub const DISCARD_BIT: u32 = 1 << 30;

/// Size of the record header (`BPF_RINGBUF_HDR_SZ`): `struct bpf_ringbuf_hdr { u32 len; u32
/// pg_off; }`, with `len` at offset 0 and `pg_off` at offset 4 in either byte order.
pub const HEADER_SIZE: usize = 8;

/// Largest sample the kernel reserves (`RINGBUF_MAX_RECORD_SZ`, `UINT_MAX / 4`): the two top
/// bits of `len` are the flags.
pub const MAX_SAMPLE_SIZE: usize = (u32::MAX / 4) as usize;

/// Largest sample a BPF program can be handed by `bpf_user_ringbuf_drain`: a dynptr's size
/// (`DYNPTR_MAX_SIZE`, 2²⁴ − 1); a larger one fails the drain with `-E2BIG`.
pub const MAX_DRAIN_SAMPLE_SIZE: usize = (1 << 24) - 1;

/// Most samples one `bpf_user_ringbuf_drain` call takes (`BPF_MAX_USER_RINGBUF_SAMPLES`,
/// include/linux/bpf.h).
pub const MAX_DRAIN_SAMPLES: usize = 128 * 1024;

/// `BPF_RB_NO_WAKEUP`: a commit (or `bpf_ringbuf_output`, or a drain) sends no notification.
pub const BPF_RB_NO_WAKEUP: u64 = 1 << 0;

/// `BPF_RB_FORCE_WAKEUP`: a commit (or a drain) sends a notification unconditionally.
pub const BPF_RB_FORCE_WAKEUP: u64 = 1 << 1;

/// Pages of `struct bpf_ringbuf` before its data area, which a header's `pg_off` counts: the
/// kernel-only fields (`RINGBUF_PGOFF`: the wait queue, irq_work, lock and busy word fit one
/// page), the consumer page and the producer page (`RINGBUF_POS_PAGES`).
pub const META_PAGES: usize = 3;

/// Bytes a record of a `size`-byte sample occupies in the ring: header and sample, rounded up to
/// 8 (the kernel's `round_up(size + BPF_RINGBUF_HDR_SZ, 8)`, libbpf's `roundup_len`). `None` if
/// that overflows `usize` (only on a 32-bit target, for a size near 4 GiB).
pub const fn record_len(size: usize) -> Option<usize> {
    match size.checked_add(HEADER_SIZE + 7) {
        Some(n) => Some(n & !7),
        None => None,
    }
}

/// The `pg_off` the kernel writes into the header at data offset `offset`: the header's page
/// counted from the start of `struct bpf_ringbuf`, which `bpf_ringbuf_commit` uses to find the
/// ring from a sample pointer (`bpf_ringbuf_rec_pg_off`). It means nothing to user space; a
/// consumer may check it as a sign of corruption (see the consumer's `Config`). The user
/// ringbuf's producer (libbpf) writes 0 there, and the kernel does not read it.
pub const fn pg_off(offset: usize, page_size: usize) -> u32 {
    let page = match offset.checked_div(page_size) {
        Some(page) => page,
        None => 0,
    };
    (META_PAGES + page) as u32
}

/// When a commit (or a drain) notifies the other side: the kernel's wakeup flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Notify {
    /// Flags 0: the adaptive notification. A commit wakes the consumer only if it has caught up
    /// to this very record (its `consumer_pos` is the record's position); a drain wakes the
    /// producer if it drained anything.
    #[default]
    Adaptive,
    /// `BPF_RB_NO_WAKEUP`: never.
    Never,
    /// `BPF_RB_FORCE_WAKEUP`: always.
    Always,
}

impl Notify {
    /// The notification the kernel's flags ask for. Both bits set is [`Notify::Always`]: the
    /// kernel tests `BPF_RB_FORCE_WAKEUP` first.
    pub const fn from_flags(flags: u64) -> Result<Notify, RingbufError> {
        if flags & !(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP) != 0 {
            Err(RingbufError::UnknownFlags { flags })
        } else if flags & BPF_RB_FORCE_WAKEUP != 0 {
            Ok(Notify::Always)
        } else if flags & BPF_RB_NO_WAKEUP != 0 {
            Ok(Notify::Never)
        } else {
            Ok(Notify::Adaptive)
        }
    }

    /// The kernel's flags for this notification.
    pub const fn flags(self) -> u64 {
        match self {
            Notify::Adaptive => 0,
            Notify::Never => BPF_RB_NO_WAKEUP,
            Notify::Always => BPF_RB_FORCE_WAKEUP,
        }
    }
}
