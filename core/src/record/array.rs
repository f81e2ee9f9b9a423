//! [`U64Array`]: a zero-copy array of u64 values (callchains, registers, counters).
//!
//! Record bytes are neither aligned nor necessarily in the native byte order, so a decoded array
//! keeps the bytes and the [`Endian`] and converts each value when it is read. An array built by
//! the caller (for encoding) can also wrap a native `&[u64]`.

use core::fmt;

use super::Endian;

/// An array of u64 values, borrowed either from record bytes (any alignment, either byte order)
/// or from a native slice. Two arrays are equal when their values are, however they are stored.
#[derive(Clone, Copy)]
pub struct U64Array<'a> {
    repr: Repr<'a>,
}

#[derive(Clone, Copy)]
enum Repr<'a> {
    /// `len * 8` bytes of record data in `endian` order.
    Bytes(&'a [u8], Endian),
    /// Native values.
    Slice(&'a [u64]),
}

impl<'a> U64Array<'a> {
    /// The empty array.
    pub const EMPTY: U64Array<'static> = U64Array { repr: Repr::Slice(&[]) };

    /// Wrap native values (for building records to encode).
    pub const fn from_slice(values: &'a [u64]) -> U64Array<'a> {
        U64Array { repr: Repr::Slice(values) }
    }

    /// Wrap record bytes holding `bytes.len() / 8` values in `endian` order; `None` if the length
    /// is not a multiple of 8.
    pub(crate) fn from_bytes(bytes: &'a [u8], endian: Endian) -> Option<U64Array<'a>> {
        if bytes.len() % 8 == 0 {
            Some(U64Array { repr: Repr::Bytes(bytes, endian) })
        } else {
            None
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Bytes(b, _) => b.len() / 8,
            Repr::Slice(s) => s.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `index`, or `None` past the end.
    pub fn get(&self, index: usize) -> Option<u64> {
        match self.repr {
            Repr::Bytes(b, endian) => {
                let start = index.checked_mul(8)?;
                let chunk: [u8; 8] = b.get(start..start.checked_add(8)?)?.try_into().ok()?;
                Some(endian.u64(chunk))
            }
            Repr::Slice(s) => s.get(index).copied(),
        }
    }

    /// The values in order.
    pub fn iter(&self) -> U64Iter<'a> {
        U64Iter { array: *self, next: 0 }
    }

    /// The underlying bytes and their order, if this array was decoded from a record (used by
    /// the encoder to copy in bulk when the order matches).
    pub(crate) fn raw_bytes(&self) -> Option<(&'a [u8], Endian)> {
        match self.repr {
            Repr::Bytes(b, e) => Some((b, e)),
            Repr::Slice(_) => None,
        }
    }
}

impl PartialEq for U64Array<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for U64Array<'_> {}

impl fmt::Debug for U64Array<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(Hex)).finish()
    }
}

/// Prints a u64 in hex inside `Debug` lists (addresses, register values).
struct Hex(u64);

impl fmt::Debug for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl<'a> IntoIterator for U64Array<'a> {
    type Item = u64;
    type IntoIter = U64Iter<'a>;
    fn into_iter(self) -> U64Iter<'a> {
        self.iter()
    }
}

/// Iterator over the values of a [`U64Array`].
#[derive(Clone, Debug)]
pub struct U64Iter<'a> {
    array: U64Array<'a>,
    next: usize,
}

impl Iterator for U64Iter<'_> {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        let v = self.array.get(self.next)?;
        self.next += 1;
        Some(v)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.array.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for U64Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_slices_compare_by_value() {
        let le = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0];
        let be = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2];
        let a = U64Array::from_bytes(&le, Endian::Little).unwrap();
        let b = U64Array::from_bytes(&be, Endian::Big).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, U64Array::from_slice(&[1, 2]));
        assert_ne!(a, U64Array::from_slice(&[1]));
        assert_eq!(a.get(2), None);
        assert_eq!(a.iter().len(), 2);
        assert!(U64Array::from_bytes(&le[..15], Endian::Little).is_none());
    }
}
