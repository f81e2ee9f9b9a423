//! C bitfields on big-endian machines.
//!
//! A C bitfield in a u64 (`perf_branch_entry`'s flags, `perf_event_attr`'s flags) is laid out
//! from the least significant bit on little-endian ABIs and from the most significant bit on
//! big-endian ones (GCC), each field keeping its own bit order. This crate always presents such
//! words in the little-endian numbering (the uapi bit numbers); [`to_msb_first`] and
//! [`from_msb_first`] convert between the two given the field widths in declaration order.

/// Move each field from `[lo, lo + w)` (allocated from bit 0) to `[64 - lo - w, 64 - lo)`
/// (allocated from bit 63), its bits in the same order. `widths` should sum to 64; bits past
/// their sum are dropped.
pub(crate) fn to_msb_first(value: u64, widths: &[u32]) -> u64 {
    let mut out = 0u64;
    for (lo, w) in fields(widths) {
        out |= ((value >> lo) & mask(w)) << (64 - lo - w);
    }
    out
}

/// The inverse of [`to_msb_first`].
pub(crate) fn from_msb_first(value: u64, widths: &[u32]) -> u64 {
    let mut out = 0u64;
    for (lo, w) in fields(widths) {
        out |= ((value >> (64 - lo - w)) & mask(w)) << lo;
    }
    out
}

const fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// `(lo, width)` of each field allocated from bit 0, up to 64 bits.
fn fields(widths: &[u32]) -> impl Iterator<Item = (u32, u32)> + '_ {
    widths
        .iter()
        .scan(0u32, |lo, &w| {
            let at = *lo;
            *lo = at.checked_add(w)?;
            Some((at, w))
        })
        .take_while(|&(lo, w)| w > 0 && lo + w <= 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_move_to_the_top_and_keep_their_bit_order() {
        let widths = [1, 1, 1, 1, 16, 4, 2, 4, 3, 31];
        // mispred (bit 0) goes to bit 63; cycles (bits 4..20) to bits 44..60, in order.
        assert_eq!(to_msb_first(1, &widths), 1 << 63);
        assert_eq!(to_msb_first(0x1234 << 4, &widths), 0x1234 << 44);
        assert_eq!(from_msb_first(1 << 63, &widths), 1);
        for v in [0u64, 1, 0xdead_beef_0123_4567, u64::MAX, 0x8000_0000_0000_0001] {
            assert_eq!(from_msb_first(to_msb_first(v, &widths), &widths), v);
            assert_eq!(to_msb_first(from_msb_first(v, &widths), &widths), v);
        }
    }
}
