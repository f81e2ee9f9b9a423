//! SAMPLE's REGS_USER and REGS_INTR fields: `u64 abi`, then, only if `abi` is not
//! `PERF_SAMPLE_REGS_ABI_NONE`, one u64 per bit set in the attr's mask, in ascending bit order
//! (`perf_output_sample_regs`). REGS_USER counts `sample_regs_user`, REGS_INTR counts
//! `sample_regs_intr`.

use super::cursor::{Reader, Writer};
use super::{DecodeError, EncodeError, Entries};

/// `PERF_SAMPLE_REGS_ABI_NONE`: no registers follow (e.g. a kernel thread for REGS_USER).
pub const ABI_NONE: u64 = 0;
/// `PERF_SAMPLE_REGS_ABI_32`
pub const ABI_32: u64 = 1;
/// `PERF_SAMPLE_REGS_ABI_64`
pub const ABI_64: u64 = 2;

/// A register dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regs<'a> {
    /// `PERF_SAMPLE_REGS_ABI_*`.
    pub abi: u64,
    /// The values: empty when `abi` is [`ABI_NONE`], else one per bit of the mask.
    pub regs: Entries<'a, u64>,
}

impl<'a> Regs<'a> {
    /// No registers (`abi` = NONE).
    pub const NONE: Regs<'static> = Regs { abi: ABI_NONE, regs: Entries::EMPTY };

    /// Pairs of (register number, value), given the attr mask the dump was taken with: the
    /// register numbers are the mask's set bits (arch-specific: `enum perf_event_x86_regs`, …).
    pub fn with_numbers(&self, mask: u64) -> impl Iterator<Item = (u32, u64)> + 'a {
        let bits = (0..64u32).filter(move |b| mask & (1u64 << b) != 0);
        bits.zip(self.regs.iter())
    }

    /// The block at `r`: the ABI, then `words` registers (the bits of the event's register
    /// mask) unless the ABI is `NONE`.
    #[inline]
    pub(crate) fn decode(r: &mut Reader<'a>, words: u32, field: &'static str) -> Result<Regs<'a>, DecodeError> {
        let abi = r.u64(field)?;
        if abi == ABI_NONE {
            return Ok(Regs { abi, regs: Entries::EMPTY });
        }
        let regs = r.entries(u64::from(words), r.endian, field)?;
        Ok(Regs { abi, regs })
    }

    pub(crate) fn size(&self, mask: u64, field: &'static str) -> Result<usize, EncodeError> {
        let expected = if self.abi == ABI_NONE { 0 } else { mask.count_ones() as usize };
        if self.regs.len() != expected {
            return Err(EncodeError::CountMismatch { field, expected, got: self.regs.len() });
        }
        Ok(8 + 8 * expected)
    }

    pub(crate) fn encode(&self, w: &mut Writer<'_>) {
        w.u64(self.abi);
        w.u64s(&self.regs);
    }
}
