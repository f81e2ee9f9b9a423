//! `struct perf_event_mmap_page`: the control page at the start of every perf mapping.
//!
//! [`MmapPage`] is the ABI struct, byte for byte as `include/uapi/linux/perf_event.h` defines
//! it, with compile-time checks on every offset. It is a plain `#[repr(C)]` struct for layout and
//! documentation; the protocol never forms a reference to a page that a peer may write. It reaches
//! the page's words through the [`crate::memory::RingMemory`] seam, which uses atomics at the
//! fields' offsets: `core::mem::offset_of!(MmapPage, data_head)` and so on (each is checked here
//! against the number the ABI fixes).

/// The control page of a perf mapping, `struct perf_event_mmap_page`.
///
/// Who writes each field: the producer (the kernel) writes everything except `data_tail`,
/// `aux_tail`, `aux_offset` and `aux_size`, which the consumer (user space) writes. See the
/// field docs for the meaning, and [`crate::selfmon`] for the self-monitoring fields.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MmapPage {
    /// Version number of this structure (the kernel leaves it 0).
    pub version: u32,
    /// Lowest version this is compatible with (the kernel leaves it 0).
    pub compat_version: u32,
    /// Seqcount protecting the self-monitoring fields below (`index` … `time_mask`).
    pub lock: u32,
    /// Hardware counter index + 1; 0 means the counter cannot be read with `rdpmc`.
    pub index: u32,
    /// Add to the hardware counter value to get the event count.
    pub offset: i64,
    /// Time the event was enabled, in ns.
    pub time_enabled: u64,
    /// Time the event was running on a CPU, in ns.
    pub time_running: u64,
    /// Capability bits, see [`capabilities`].
    pub capabilities: u64,
    /// Bit width of the value read with `rdpmc`, for sign extension.
    pub pmc_width: u16,
    /// Shift of the cycles → ns conversion.
    pub time_shift: u16,
    /// Multiplier of the cycles → ns conversion.
    pub time_mult: u32,
    /// Offset of the cycles → ns conversion.
    pub time_offset: u64,
    /// Perf timestamp at cycle count 0 (for `cap_user_time_zero`).
    pub time_zero: u64,
    /// Size of the header up to `__reserved` (96 on current kernels).
    pub size: u32,
    /// Reserved, 0.
    pub reserved_1: u32,
    /// Cycle counter base for `cap_user_time_short`.
    pub time_cycles: u64,
    /// Mask of the short cycle counter for `cap_user_time_short`.
    pub time_mask: u64,
    /// Reserved so that `data_head` is at 1024 ("align to 1k").
    pub reserved: [u8; 116 * 8],
    /// Free-running byte counter: end of the published records (written by the producer).
    pub data_head: u64,
    /// Free-running byte counter: end of the consumed records (written by the consumer).
    pub data_tail: u64,
    /// Where the data area starts, from the start of the mapping.
    pub data_offset: u64,
    /// Size of the data area, a power of two.
    pub data_size: u64,
    /// Free-running byte counter of the AUX area (producer).
    pub aux_head: u64,
    /// Free-running byte counter of the AUX area (consumer).
    pub aux_tail: u64,
    /// Where the AUX area starts, written by the consumer before mapping it.
    pub aux_offset: u64,
    /// Size of the AUX area, written by the consumer before mapping it.
    pub aux_size: u64,
}

/// Byte offsets of the fields of [`MmapPage`], as the kernel ABI fixes them.
pub(crate) mod offsets {
    /// `lock`
    pub const LOCK: usize = 8;
    /// `index`
    pub const INDEX: usize = 12;
    /// `offset`
    pub const OFFSET: usize = 16;
    /// `time_enabled`
    pub const TIME_ENABLED: usize = 24;
    /// `time_running`
    pub const TIME_RUNNING: usize = 32;
    /// `capabilities`
    pub const CAPABILITIES: usize = 40;
    /// `pmc_width` (u16) and `time_shift` (u16) share the 32-bit word at 48.
    pub const PMC_WIDTH: usize = 48;
    /// `time_shift`
    // Read only by the offset assertion below, which Rust 1.81 (the minimum) does not count as
    // a use; later compilers do.
    #[allow(dead_code)]
    pub const TIME_SHIFT: usize = 50;
    /// `time_mult`
    pub const TIME_MULT: usize = 52;
    /// `time_offset`
    pub const TIME_OFFSET: usize = 56;
    /// `time_zero`
    pub const TIME_ZERO: usize = 64;
    /// `size`
    pub const SIZE: usize = 72;
    /// `time_cycles`
    pub const TIME_CYCLES: usize = 80;
    /// `time_mask`
    pub const TIME_MASK: usize = 88;
    /// Start of `__reserved`; also the value of `size` the kernel writes.
    pub const RESERVED: usize = 96;
    /// `data_head`
    pub const DATA_HEAD: usize = 1024;
    /// `data_tail`
    pub const DATA_TAIL: usize = 1032;
    /// `data_offset`
    pub const DATA_OFFSET: usize = 1040;
    /// `data_size`
    pub const DATA_SIZE: usize = 1048;
    /// `aux_head`
    pub const AUX_HEAD: usize = 1056;
    /// `aux_tail`
    pub const AUX_TAIL: usize = 1064;
    /// `aux_offset`
    pub const AUX_OFFSET: usize = 1072;
    /// `aux_size`
    pub const AUX_SIZE: usize = 1080;
    /// `sizeof(struct perf_event_mmap_page)`
    pub const END: usize = 1088;
}

const _: () = assert!(core::mem::size_of::<MmapPage>() == offsets::END);
const _: () = assert!(core::mem::align_of::<MmapPage>() == 8);
const _: () = assert!(core::mem::offset_of!(MmapPage, lock) == offsets::LOCK);
const _: () = assert!(core::mem::offset_of!(MmapPage, index) == offsets::INDEX);
const _: () = assert!(core::mem::offset_of!(MmapPage, offset) == offsets::OFFSET);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_enabled) == offsets::TIME_ENABLED);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_running) == offsets::TIME_RUNNING);
const _: () = assert!(core::mem::offset_of!(MmapPage, capabilities) == offsets::CAPABILITIES);
const _: () = assert!(core::mem::offset_of!(MmapPage, pmc_width) == offsets::PMC_WIDTH);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_shift) == offsets::TIME_SHIFT);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_mult) == offsets::TIME_MULT);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_offset) == offsets::TIME_OFFSET);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_zero) == offsets::TIME_ZERO);
const _: () = assert!(core::mem::offset_of!(MmapPage, size) == offsets::SIZE);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_cycles) == offsets::TIME_CYCLES);
const _: () = assert!(core::mem::offset_of!(MmapPage, time_mask) == offsets::TIME_MASK);
const _: () = assert!(core::mem::offset_of!(MmapPage, reserved) == offsets::RESERVED);
const _: () = assert!(core::mem::offset_of!(MmapPage, data_head) == offsets::DATA_HEAD);
const _: () = assert!(core::mem::offset_of!(MmapPage, data_tail) == offsets::DATA_TAIL);
const _: () = assert!(core::mem::offset_of!(MmapPage, data_offset) == offsets::DATA_OFFSET);
const _: () = assert!(core::mem::offset_of!(MmapPage, data_size) == offsets::DATA_SIZE);
const _: () = assert!(core::mem::offset_of!(MmapPage, aux_head) == offsets::AUX_HEAD);
const _: () = assert!(core::mem::offset_of!(MmapPage, aux_tail) == offsets::AUX_TAIL);
const _: () = assert!(core::mem::offset_of!(MmapPage, aux_offset) == offsets::AUX_OFFSET);
const _: () = assert!(core::mem::offset_of!(MmapPage, aux_size) == offsets::AUX_SIZE);
// data_head and data_tail share one 64-byte cache line by ABI: padding cannot separate them.
const _: () = assert!(offsets::DATA_HEAD / 64 == offsets::DATA_TAIL / 64);

impl MmapPage {
    /// An all-zero page, as the kernel allocates it (`__GFP_ZERO`), before initialisation.
    pub const ZEROED: MmapPage = MmapPage {
        version: 0,
        compat_version: 0,
        lock: 0,
        index: 0,
        offset: 0,
        time_enabled: 0,
        time_running: 0,
        capabilities: 0,
        pmc_width: 0,
        time_shift: 0,
        time_mult: 0,
        time_offset: 0,
        time_zero: 0,
        size: 0,
        reserved_1: 0,
        time_cycles: 0,
        time_mask: 0,
        reserved: [0; 116 * 8],
        data_head: 0,
        data_tail: 0,
        data_offset: 0,
        data_size: 0,
        aux_head: 0,
        aux_tail: 0,
        aux_offset: 0,
        aux_size: 0,
    };
}

/// The capability bits of `perf_event_mmap_page` (the bitfield union at offset 40):
/// [`MmapPage::capabilities`] and [`UserPage::capabilities`](crate::selfmon::UserPage::capabilities)
/// hold them; test one with `caps & capabilities::USER_TIME != 0`.
pub mod capabilities {
    /// Bit 0, `cap_bit0`: deprecated, always 0 on current kernels.
    pub const BIT0: u64 = 1 << 0;
    /// Bit 1, `cap_bit0_is_deprecated`: always 1 on current kernels.
    pub const BIT0_IS_DEPRECATED: u64 = 1 << 1;
    /// Bit 2, `cap_user_rdpmc`: the counter can be read with `rdpmc` (see `index`).
    pub const USER_RDPMC: u64 = 1 << 2;
    /// Bit 3, `cap_user_time`: `time_shift`/`time_mult`/`time_offset` are valid.
    pub const USER_TIME: u64 = 1 << 3;
    /// Bit 4, `cap_user_time_zero`: `time_zero` is valid.
    pub const USER_TIME_ZERO: u64 = 1 << 4;
    /// Bit 5, `cap_user_time_short`: `time_cycles`/`time_mask` are valid.
    pub const USER_TIME_SHORT: u64 = 1 << 5;
}
