//! The bounds-checked reader and writer every record codec goes through.
//!
//! [`Reader`] never indexes: each access is a `get` against the current limit, and every length
//! read from the input goes through checked arithmetic before it is used, so a hostile record
//! ends in a [`DecodeError`] naming the field and its offset. [`Writer`] writes into a slice the
//! encoder sized beforehand; a write past its end is recorded, never performed.

use core::ffi::CStr;

use super::{DecodeError, Endian, Entries, Entry};

/// Reads fields in order from `bytes[pos..end]`, where `bytes` is the whole record (so offsets
/// in errors are record offsets) and `end` excludes the `sample_id` trailer, if any.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    /// `bytes[pos..end]`: what is left to read. (A slice rather than an offset: each read
    /// checks one length, and the compiler sees that the read is in bounds.)
    pub(crate) rest: &'a [u8],
    /// The limit, as a record offset: `pos = end - rest.len()`.
    end: usize,
    pub(crate) endian: Endian,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes[start..end]`; `end` is clamped to the input.
    #[inline]
    pub(crate) fn new(bytes: &'a [u8], start: usize, end: usize, endian: Endian) -> Reader<'a> {
        let end = end.min(bytes.len());
        Reader { rest: bytes.get(start.min(end)..end).unwrap_or_default(), end, endian }
    }

    /// The current offset in the record.
    #[inline]
    pub(crate) fn offset(&self) -> usize {
        self.end - self.rest.len()
    }

    /// Bytes left before the limit.
    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The error of a field of `n` bytes that runs past the limit. (The cold constructors
    /// take the reader's values, not the reader: a reader whose address went to an
    /// out-of-line call would live in memory, its position stored at every field read.)
    #[inline(always)]
    fn truncated(&self, n: usize, field: &'static str) -> DecodeError {
        truncated(field, self.offset(), n, self.remaining())
    }

    /// The next `n` bytes, as a fixed-size field.
    #[inline]
    pub(crate) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        match self.rest.split_at_checked(n) {
            Some((s, rest)) => {
                self.rest = rest;
                Ok(s)
            }
            None => Err(self.truncated(n, field)),
        }
    }

    /// The next `N` bytes as a block of fixed fields, with one length check: `fields` names them
    /// in order with their sizes (adding up to `N`), so that a short record is refused with the
    /// field that does not fit, at its offset, as reading them one by one would.
    #[inline(always)]
    pub(crate) fn fixed<const N: usize>(
        &mut self,
        fields: &[(&'static str, usize)],
    ) -> Result<Fixed<'a, N>, DecodeError> {
        debug_assert_eq!(fields.iter().map(|f| f.1).sum::<usize>(), N, "{fields:?}");
        match self.rest.split_first_chunk::<N>() {
            Some((block, rest)) => {
                self.rest = rest;
                Ok(Fixed { block, endian: self.endian })
            }
            None => Err(truncated_in(fields, self.offset(), self.remaining())),
        }
    }

    /// The next `len` bytes, where `len` was read from the input: a length larger than what is
    /// left is [`DecodeError::CountTooLarge`].
    #[inline]
    pub(crate) fn take_counted(&mut self, len: u64, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let too_large = DecodeError::CountTooLarge { field, count: len, offset: self.offset() };
        let n = usize::try_from(len).map_err(|_| too_large)?;
        if n > self.remaining() {
            return Err(too_large);
        }
        self.take(n, field)
    }

    /// `count` entries laid out as `layout` says, where `count` was read from the input;
    /// `CountTooLarge` when the input does not hold them.
    #[inline]
    pub(crate) fn entries<T: Entry>(
        &mut self,
        count: u64,
        layout: T::Layout,
        field: &'static str,
    ) -> Result<Entries<'a, T>, DecodeError> {
        let too_large = DecodeError::CountTooLarge { field, count, offset: self.offset() };
        let bytes = usize::try_from(count).ok().and_then(|c| c.checked_mul(T::stride(layout))).ok_or(too_large)?;
        if bytes > self.remaining() {
            return Err(too_large);
        }
        Ok(Entries::from_bytes(self.take(bytes, field)?, layout))
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        match self.rest.split_first_chunk::<N>() {
            Some((a, rest)) => {
                self.rest = rest;
                Ok(*a)
            }
            None => Err(self.truncated(N, field)),
        }
    }

    /// A u64.
    #[inline]
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, DecodeError> {
        Ok(self.endian.u64(self.array(field)?))
    }

    /// A u32.
    #[inline]
    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        Ok(self.endian.u32(self.array(field)?))
    }

    /// A u16.
    #[inline]
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        Ok(self.endian.u16(self.array(field)?))
    }

    /// A u8.
    #[inline]
    pub(crate) fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(field)?[0])
    }

    /// `N` raw bytes.
    #[inline]
    pub(crate) fn bytes<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], DecodeError> {
        self.array(field)
    }

    /// A NUL-terminated string that fills the rest of the area (the kernel pads it with zeros
    /// to 8 bytes; the padding is not checked). Consumes the whole rest.
    #[inline(always)]
    pub(crate) fn cstr_rest(&mut self, field: &'static str) -> Result<&'a CStr, DecodeError> {
        let offset = self.offset();
        let rest = self.take(self.remaining(), field)?;
        let Some(nul) = first_nul(rest) else { return Err(DecodeError::BadString { field, offset }) };
        let with_nul = rest.get(..=nul).unwrap_or_default();
        debug_assert_eq!(CStr::from_bytes_until_nul(rest).map(|c| c.to_bytes_with_nul().len()), Ok(nul + 1));
        // SAFETY: `first_nul` returned the index of the first NUL of `rest`, so `with_nul` ends
        // with a NUL and holds no other (checked against core's scan by
        // `tests::first_nul_finds_what_core_finds` and, in debug builds, the assertion above).
        // (Core's `from_bytes_with_nul` would scan the bytes a second time.)
        Ok(unsafe { CStr::from_bytes_with_nul_unchecked(with_nul) })
    }
}

#[cold]
fn truncated(field: &'static str, offset: usize, need: usize, have: usize) -> DecodeError {
    DecodeError::Truncated { field, offset, need, have }
}

/// The error of [`Reader::fixed`] at `offset` with `have` bytes left: the first field that
/// runs past the limit.
#[cold]
fn truncated_in(fields: &[(&'static str, usize)], offset: usize, have: usize) -> DecodeError {
    let mut at = 0;
    for &(field, size) in fields {
        if at + size > have {
            return DecodeError::Truncated { field, offset: offset + at, need: size, have: have - at };
        }
        at += size;
    }
    // (Unreachable when the sizes add up to N, as `fixed` asserts in debug builds.)
    truncated(fields.last().map_or("fields", |f| f.0), offset, at, have)
}

/// `N` bytes of fixed fields, checked once by [`Reader::fixed`]; each read is a load at a
/// constant offset (the compiler drops the bounds checks).
pub(crate) struct Fixed<'a, const N: usize> {
    block: &'a [u8; N],
    endian: Endian,
}

impl<const N: usize> Fixed<'_, N> {
    #[inline(always)]
    fn array<const M: usize>(&self, at: usize) -> [u8; M] {
        self.block.get(at..).and_then(|b| b.first_chunk::<M>()).copied().unwrap_or([0; M])
    }
    /// The u32 at `at`.
    #[inline(always)]
    pub(crate) fn u32(&self, at: usize) -> u32 {
        self.endian.u32(self.array(at))
    }
    /// The u64 at `at`.
    #[inline(always)]
    pub(crate) fn u64(&self, at: usize) -> u64 {
        self.endian.u64(self.array(at))
    }
}

/// Writes fields in order into a slice sized by the encoder.
pub(crate) struct Writer<'o> {
    out: &'o mut [u8],
    pos: usize,
    pub(crate) endian: Endian,
    /// Set if a write did not fit: the encoder's size computation and its writes disagree.
    overflow: bool,
}

impl<'o> Writer<'o> {
    /// A writer at the start of `out`.
    pub(crate) fn new(out: &'o mut [u8], endian: Endian) -> Writer<'o> {
        Writer { out, pos: 0, endian, overflow: false }
    }

    /// Bytes written so far, or `None` if a write did not fit.
    pub(crate) fn finish(self) -> Option<usize> {
        if self.overflow {
            None
        } else {
            Some(self.pos)
        }
    }

    /// Raw bytes.
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let end = self.pos.saturating_add(bytes.len());
        match self.out.get_mut(self.pos..end) {
            Some(dst) => dst.copy_from_slice(bytes),
            None => self.overflow = true,
        }
        self.pos = end;
    }

    /// `n` zero bytes.
    pub(crate) fn zeros(&mut self, n: usize) {
        let end = self.pos.saturating_add(n);
        match self.out.get_mut(self.pos..end) {
            Some(dst) => dst.fill(0),
            None => self.overflow = true,
        }
        self.pos = end;
    }

    /// A u64.
    pub(crate) fn u64(&mut self, v: u64) {
        self.put(&self.endian.put_u64(v));
    }

    /// A u32.
    pub(crate) fn u32(&mut self, v: u32) {
        self.put(&self.endian.put_u32(v));
    }

    /// A u16.
    pub(crate) fn u16(&mut self, v: u16) {
        self.put(&self.endian.put_u16(v));
    }

    /// A u8.
    pub(crate) fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    /// Every entry of `entries`, in this writer's order: a bulk copy of the record's bytes when
    /// they already are, else `write_one` for each entry.
    pub(crate) fn entries<T: Entry>(&mut self, entries: &Entries<'_, T>, write_one: impl Fn(&mut Self, T)) {
        match entries.bytes_in(self.endian) {
            Some(bytes) => self.put(bytes),
            None => {
                for e in entries.iter() {
                    write_one(self, e);
                }
            }
        }
    }

    /// Every value of `values`, in this writer's order.
    pub(crate) fn u64s(&mut self, values: &Entries<'_, u64>) {
        self.entries(values, |w, v| w.u64(v));
    }

    /// Bytes, then zeros up to the next multiple of 8 of `bytes.len() + extra` (`extra`: bytes
    /// of the same 8-byte group written before, e.g. RAW's u32 size).
    pub(crate) fn padded(&mut self, bytes: &[u8], extra: usize) {
        self.put(bytes);
        self.zeros(pad8(bytes.len() + extra));
    }

    /// A string, its NUL, and zeros to a multiple of 8 (what the kernel writes).
    pub(crate) fn cstr(&mut self, s: &CStr) {
        self.padded(s.to_bytes_with_nul(), 0);
    }
}

/// Index of the first NUL byte of `bytes`: on x86-64 16 bytes a step (SSE2, which every
/// x86-64 has), then 8 bytes at a time. The strings of records are 8-aligned in the record and
/// padded with NULs to a multiple of 8, so most of a string is read in whole blocks and words
/// (measured against core's `memchr`: `BENCHMARKS.md`, "Decoding").
#[inline]
fn first_nul(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    let bytes = {
        use core::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_setzero_si128};
        let mut blocks = bytes.chunks_exact(16);
        for b in &mut blocks {
            // SAFETY: SSE2 is enabled (the `cfg` above; every x86-64 has it); `b` is 16 bytes
            // long (`chunks_exact(16)`), exactly what the load reads, and `loadu` has no
            // alignment requirement.
            let zeros =
                unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(b.as_ptr().cast()), _mm_setzero_si128())) };
            if zeros != 0 {
                return Some(at + zeros.trailing_zeros() as usize);
            }
            at += 16;
        }
        blocks.remainder()
    };
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        // Bytes in memory order: the first byte is the lowest. A byte is 0 exactly where the
        // subtraction borrows into its high bit with that bit clear; a borrow never reaches
        // below the first 0 byte, so the lowest flagged byte is the first NUL.
        let v = u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or([1; 8]));
        let zero = v.wrapping_sub(ONES) & !v & HIGHS;
        if zero != 0 {
            return Some(at + (zero.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    words.remainder().iter().position(|&b| b == 0).map(|i| at + i)
}

/// Zeros needed after `n` bytes to reach a multiple of 8.
pub(crate) const fn pad8(n: usize) -> usize {
    (8 - n % 8) % 8
}

/// Size of a string field as the kernel writes it: the bytes, the NUL, zeros to 8.
pub(crate) fn cstr_size(s: &CStr) -> usize {
    let n = s.to_bytes_with_nul().len();
    n + pad8(n)
}

#[cfg(test)]
mod tests {
    use super::first_nul;

    #[test]
    fn first_nul_finds_what_core_finds() {
        // Every length up to 40 and every NUL position (or none), with bytes that stress the
        // word test: 0x01 (the borrow's neighbour), 0x80 and 0xff (high bits set).
        // (Under Miri, two words and a remainder, two fills: the whole set takes minutes there.)
        let (lens, fills): (usize, &[u8]) =
            if cfg!(miri) { (18, &[0x01, 0xff]) } else { (40, &[0x01, 0x80, 0xff, b'a']) };
        for len in 0..lens {
            for &fill in fills {
                for nul in (0..len).map(Some).chain([None]) {
                    for second in (0..len).map(Some).chain([None]) {
                        let mut b = [fill; 40];
                        let b = &mut b[..len];
                        if let Some(i) = second {
                            b[i] = 0;
                        }
                        if let Some(i) = nul {
                            b[i] = 0;
                        }
                        assert_eq!(first_nul(b), b.iter().position(|&x| x == 0), "{b:?}");
                    }
                }
            }
        }
    }
}
