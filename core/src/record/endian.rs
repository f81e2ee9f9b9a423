//! Byte order of record data.

/// The byte order records are encoded in. A ring uses the producer's native order; a perf.data
/// file may come from a machine of the other order (its magic says which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Least significant byte first (x86, most ARM and RISC-V systems).
    Little,
    /// Most significant byte first (s390x, some PowerPC and MIPS systems).
    Big,
}

impl Endian {
    /// The byte order of the machine this code runs on.
    pub const NATIVE: Endian = if cfg!(target_endian = "little") { Endian::Little } else { Endian::Big };

    /// The u64 at `at` in `bytes` (one load), or `None` past the end.
    #[inline(always)]
    pub fn u64_at(self, bytes: &[u8], at: usize) -> Option<u64> {
        let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(self.u64(b))
    }
    /// The u32 at `at` in `bytes`, or `None` past the end.
    #[inline(always)]
    pub fn u32_at(self, bytes: &[u8], at: usize) -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(self.u32(b))
    }
    /// The two u32s at `at` (e.g. `{pid, tid}`), in their order in `bytes`, with one load.
    #[inline(always)]
    pub(crate) fn u32_pair_at(self, bytes: &[u8], at: usize) -> Option<(u32, u32)> {
        let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
        // Read as one u64 in this order: the first u32 in memory is its low half in
        // little-endian order and its high half in big-endian order.
        Some(match self {
            Endian::Little => {
                let v = u64::from_le_bytes(b);
                (v as u32, (v >> 32) as u32)
            }
            Endian::Big => {
                let v = u64::from_be_bytes(b);
                ((v >> 32) as u32, v as u32)
            }
        })
    }
    /// Decode a u16.
    #[inline(always)]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    /// Decode a u32.
    #[inline(always)]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    /// Decode a u64.
    #[inline(always)]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }
    /// Encode a u16.
    #[inline(always)]
    pub fn put_u16(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    /// Encode a u32.
    #[inline(always)]
    pub fn put_u32(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    /// Encode a u64.
    #[inline(always)]
    pub fn put_u64(self, v: u64) -> [u8; 8] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
    /// Encode two u32 fields that share one 8-byte slot (`{u32 pid, tid}`, `{u32 cpu, res}`):
    /// the first field at the lower address, each in this byte order.
    #[inline(always)]
    pub(crate) fn pair_u32(self, first: u32, second: u32) -> [u8; 8] {
        let a = self.put_u32(first);
        let b = self.put_u32(second);
        [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
    }
}
