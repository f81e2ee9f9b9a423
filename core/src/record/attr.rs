//! `struct perf_event_attr` as bytes: [`Attr`], with the offsets of include/uapi/linux/perf_event.h, struct perf_event_attr.
//!
//! Only what a record codec or a perf.data file needs: every field as a plain integer, and the
//! flag bitfield at offset 40 as a u64 in the uapi bit numbering ([`flags`]). Fields beyond
//! `size` read as zero, as the kernel treats them.

use super::bitfield::{from_msb_first, to_msb_first};
use super::cursor::{Reader, Writer};
use super::{DecodeError, EncodeError, Endian};

/// Bits of [`Attr::flags`] (the bitfield after `read_format`), uapi bit numbers.
pub mod flags {
    /// `disabled`
    pub const DISABLED: u64 = 1 << 0;
    /// `inherit`
    pub const INHERIT: u64 = 1 << 1;
    /// `pinned`
    pub const PINNED: u64 = 1 << 2;
    /// `exclusive`
    pub const EXCLUSIVE: u64 = 1 << 3;
    /// `exclude_user`
    pub const EXCLUDE_USER: u64 = 1 << 4;
    /// `exclude_kernel`
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    /// `exclude_hv`
    pub const EXCLUDE_HV: u64 = 1 << 6;
    /// `exclude_idle`
    pub const EXCLUDE_IDLE: u64 = 1 << 7;
    /// `mmap`
    pub const MMAP: u64 = 1 << 8;
    /// `comm`
    pub const COMM: u64 = 1 << 9;
    /// `freq`: `sample_period` is a frequency.
    pub const FREQ: u64 = 1 << 10;
    /// `inherit_stat`
    pub const INHERIT_STAT: u64 = 1 << 11;
    /// `enable_on_exec`
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    /// `task`
    pub const TASK: u64 = 1 << 13;
    /// `watermark`
    pub const WATERMARK: u64 = 1 << 14;
    /// `precise_ip` (two bits, 15 and 16).
    pub const PRECISE_IP_MASK: u64 = 3 << 15;
    /// `mmap_data`
    pub const MMAP_DATA: u64 = 1 << 17;
    /// `sample_id_all`
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    /// `exclude_host`
    pub const EXCLUDE_HOST: u64 = 1 << 19;
    /// `exclude_guest`
    pub const EXCLUDE_GUEST: u64 = 1 << 20;
    /// `exclude_callchain_kernel`
    pub const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
    /// `exclude_callchain_user`
    pub const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    /// `mmap2`
    pub const MMAP2: u64 = 1 << 23;
    /// `comm_exec`
    pub const COMM_EXEC: u64 = 1 << 24;
    /// `use_clockid`
    pub const USE_CLOCKID: u64 = 1 << 25;
    /// `context_switch`
    pub const CONTEXT_SWITCH: u64 = 1 << 26;
    /// `write_backward`
    pub const WRITE_BACKWARD: u64 = 1 << 27;
    /// `namespaces`
    pub const NAMESPACES: u64 = 1 << 28;
    /// `ksymbol`
    pub const KSYMBOL: u64 = 1 << 29;
    /// `bpf_event`
    pub const BPF_EVENT: u64 = 1 << 30;
    /// `aux_output`
    pub const AUX_OUTPUT: u64 = 1 << 31;
    /// `cgroup`
    pub const CGROUP: u64 = 1 << 32;
    /// `text_poke`
    pub const TEXT_POKE: u64 = 1 << 33;
    /// `build_id`
    pub const BUILD_ID: u64 = 1 << 34;
    /// `inherit_thread`
    pub const INHERIT_THREAD: u64 = 1 << 35;
    /// `remove_on_exec`
    pub const REMOVE_ON_EXEC: u64 = 1 << 36;
    /// `sigtrap`
    pub const SIGTRAP: u64 = 1 << 37;
}

/// Widths of the flag bitfield's fields in declaration order (15 one-bit flags, `precise_ip`,
/// then one bit each up to 64), for converting the big-endian layout.
const FLAG_WIDTHS: [u32; 48] = {
    let mut w = [1u32; 48];
    w[15] = 2;
    w
};

/// `struct perf_event_attr`, every field up to `config3` (`PERF_ATTR_SIZE_VER8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Attr {
    /// `type` (`PERF_TYPE_*`).
    pub type_: u32,
    /// `size`: bytes of the struct the writer knew (`PERF_ATTR_SIZE_VER*`); 0 means 64.
    pub size: u32,
    /// `config`.
    pub config: u64,
    /// `sample_period`, or `sample_freq` when [`flags::FREQ`] is set.
    pub sample_period: u64,
    /// `sample_type` ([`sample_type`](super::sample_type) bits).
    pub sample_type: u64,
    /// `read_format` ([`read_format`](super::read_format) bits).
    pub read_format: u64,
    /// The bitfield at offset 40, in uapi bit numbers ([`flags`]) whatever the byte order.
    pub flags: u64,
    /// `wakeup_events` / `wakeup_watermark`.
    pub wakeup: u32,
    /// `bp_type`.
    pub bp_type: u32,
    /// `config1` (`bp_addr`, `kprobe_func`, `uprobe_path`).
    pub config1: u64,
    /// `config2` (`bp_len`, `kprobe_addr`, `probe_offset`).
    pub config2: u64,
    /// `branch_sample_type` ([`branch_sample_type`](super::branch_sample_type) bits).
    pub branch_sample_type: u64,
    /// `sample_regs_user`: which user registers a sample carries.
    pub sample_regs_user: u64,
    /// `sample_stack_user`: bytes of user stack to dump.
    pub sample_stack_user: u32,
    /// `clockid` (with `use_clockid`).
    pub clockid: i32,
    /// `sample_regs_intr`: which interrupt registers a sample carries.
    pub sample_regs_intr: u64,
    /// `aux_watermark`.
    pub aux_watermark: u32,
    /// `sample_max_stack`.
    pub sample_max_stack: u16,
    /// `__reserved_2`.
    pub reserved_2: u16,
    /// `aux_sample_size`.
    pub aux_sample_size: u32,
    /// The 32-bit word at offset 116 (`aux_action` bits upstream, `__reserved_3` in 6.1), as a
    /// u32 in the record's byte order (its bitfield is not renumbered).
    pub aux_action: u32,
    /// `sig_data`.
    pub sig_data: u64,
    /// `config3`.
    pub config3: u64,
}

impl Attr {
    /// Every field 0 (`Attr::default()`, usable in `const` contexts).
    pub const ZERO: Attr = Attr {
        type_: 0,
        size: 0,
        config: 0,
        sample_period: 0,
        sample_type: 0,
        read_format: 0,
        flags: 0,
        wakeup: 0,
        bp_type: 0,
        config1: 0,
        config2: 0,
        branch_sample_type: 0,
        sample_regs_user: 0,
        sample_stack_user: 0,
        clockid: 0,
        sample_regs_intr: 0,
        aux_watermark: 0,
        sample_max_stack: 0,
        reserved_2: 0,
        aux_sample_size: 0,
        aux_action: 0,
        sig_data: 0,
        config3: 0,
    };

    /// `PERF_ATTR_SIZE_VER0`: the first published struct, up to `config1`.
    pub const SIZE_VER0: u32 = 64;
    /// `PERF_ATTR_SIZE_VER7`: up to `sig_data`; the largest size perf 6.1 reads.
    pub const SIZE_VER7: u32 = 128;
    /// `PERF_ATTR_SIZE_VER8`: up to `config3`; everything this struct holds.
    pub const SIZE_VER8: u32 = 136;

    /// Whether every bit of `mask` (see [`flags`]) is set.
    pub const fn has(&self, mask: u64) -> bool {
        self.flags & mask == mask
    }

    /// Parse a raw `perf_event_attr` in `endian` order. Fields past `size` (or past the input)
    /// are zero. Fails if fewer than 64 bytes are available or `size` is between 1 and 63.
    pub fn from_bytes(bytes: &[u8], endian: Endian) -> Result<Attr, DecodeError> {
        let mut r = Reader::new(bytes, 0, bytes.len(), endian);
        let type_ = r.u32("attr.type")?;
        let size = r.u32("attr.size")?;
        if size != 0 && size < Self::SIZE_VER0 {
            return Err(DecodeError::InvalidValue { field: "attr.size", value: u64::from(size), offset: 4 });
        }
        let declared = if size == 0 { Self::SIZE_VER0 as usize } else { size as usize };
        let len = declared.min(bytes.len());
        if len < Self::SIZE_VER0 as usize {
            return Err(DecodeError::Truncated { field: "perf_event_attr", offset: 0, need: 64, have: len });
        }
        let mut r = Reader::new(bytes, 8, len, endian);
        let mut a = Attr { type_, size, ..Attr::default() };
        a.config = r.u64("attr.config")?;
        a.sample_period = r.u64("attr.sample_period")?;
        a.sample_type = r.u64("attr.sample_type")?;
        a.read_format = r.u64("attr.read_format")?;
        let raw_flags = r.u64("attr.flags")?;
        a.flags = match endian {
            Endian::Little => raw_flags,
            Endian::Big => from_msb_first(raw_flags, &FLAG_WIDTHS),
        };
        a.wakeup = r.u32("attr.wakeup_events")?;
        a.bp_type = r.u32("attr.bp_type")?;
        a.config1 = r.u64("attr.config1")?;
        // From here on, each field exists only if `size` covers it.
        macro_rules! opt {
            ($field:ident, $read:ident, $name:literal) => {
                if r.remaining() > 0 {
                    a.$field = r.$read($name)?;
                }
            };
        }
        opt!(config2, u64, "attr.config2");
        opt!(branch_sample_type, u64, "attr.branch_sample_type");
        opt!(sample_regs_user, u64, "attr.sample_regs_user");
        opt!(sample_stack_user, u32, "attr.sample_stack_user");
        if r.remaining() > 0 {
            a.clockid = r.u32("attr.clockid")? as i32;
        }
        opt!(sample_regs_intr, u64, "attr.sample_regs_intr");
        opt!(aux_watermark, u32, "attr.aux_watermark");
        opt!(sample_max_stack, u16, "attr.sample_max_stack");
        opt!(reserved_2, u16, "attr.__reserved_2");
        opt!(aux_sample_size, u32, "attr.aux_sample_size");
        opt!(aux_action, u32, "attr.aux_action");
        opt!(sig_data, u64, "attr.sig_data");
        opt!(config3, u64, "attr.config3");
        Ok(a)
    }

    /// Encode `size` bytes (64 ≤ `size` ≤ 136, a multiple of 8) into `out`; fields past `size`
    /// are left out. Returns `size`.
    pub fn to_bytes(&self, endian: Endian, out: &mut [u8]) -> Result<usize, EncodeError> {
        let size = self.size as usize;
        if !(Self::SIZE_VER0..=Self::SIZE_VER8).contains(&self.size) || size % 8 != 0 {
            return Err(EncodeError::InvalidValue { field: "attr.size", value: u64::from(self.size) });
        }
        let have = out.len();
        let out = out.get_mut(..size).ok_or(EncodeError::BufferTooSmall { need: size, have })?;
        let mut full = [0u8; Self::SIZE_VER8 as usize];
        let mut w = Writer::new(&mut full, endian);
        w.u32(self.type_);
        w.u32(self.size);
        w.u64(self.config);
        w.u64(self.sample_period);
        w.u64(self.sample_type);
        w.u64(self.read_format);
        w.u64(match endian {
            Endian::Little => self.flags,
            Endian::Big => to_msb_first(self.flags, &FLAG_WIDTHS),
        });
        w.u32(self.wakeup);
        w.u32(self.bp_type);
        w.u64(self.config1);
        w.u64(self.config2);
        w.u64(self.branch_sample_type);
        w.u64(self.sample_regs_user);
        w.u32(self.sample_stack_user);
        w.u32(self.clockid as u32);
        w.u64(self.sample_regs_intr);
        w.u32(self.aux_watermark);
        w.u16(self.sample_max_stack);
        w.u16(self.reserved_2);
        w.u32(self.aux_sample_size);
        w.u32(self.aux_action);
        w.u64(self.sig_data);
        w.u64(self.config3);
        debug_assert_eq!(w.finish(), Some(Self::SIZE_VER8 as usize));
        out.copy_from_slice(&full[..size]);
        Ok(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_round_trips_in_both_orders_and_short_sizes_read_zero() {
        let a = Attr {
            type_: 1,
            size: Attr::SIZE_VER8,
            config: 2,
            sample_period: 3,
            sample_type: 4,
            read_format: 5,
            flags: flags::SAMPLE_ID_ALL | flags::MMAP2 | (2 << 15),
            wakeup: 6,
            bp_type: 7,
            config1: 8,
            config2: 9,
            branch_sample_type: 10,
            sample_regs_user: 11,
            sample_stack_user: 12,
            clockid: -1,
            sample_regs_intr: 13,
            aux_watermark: 14,
            sample_max_stack: 15,
            reserved_2: 16,
            aux_sample_size: 17,
            aux_action: 18,
            sig_data: 19,
            config3: 20,
        };
        for endian in [Endian::Little, Endian::Big] {
            let mut buf = [0u8; 136];
            assert_eq!(a.to_bytes(endian, &mut buf), Ok(136));
            assert_eq!(Attr::from_bytes(&buf, endian), Ok(a));
            let short = Attr { size: Attr::SIZE_VER0, ..a };
            let mut buf = [0u8; 64];
            short.to_bytes(endian, &mut buf).unwrap();
            let back = Attr::from_bytes(&buf, endian).unwrap();
            assert_eq!(back.config1, 8);
            assert_eq!(back.config2, 0);
            assert_eq!(back.sample_regs_intr, 0);
        }
        let mut buf = [0u8; 136];
        a.to_bytes(Endian::Big, &mut buf).unwrap();
        // Big endian: `disabled` would be the top bit of the first byte; sample_id_all (18) is
        // bit 45 of the big-endian word, i.e. bit 5 of byte 2.
        assert_eq!(buf[40 + 2] & (1 << 5), 1 << 5);
        assert!(Attr::from_bytes(&buf[..63], Endian::Big).is_err());
    }
}
