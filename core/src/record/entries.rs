//! [`Entries`]: the arrays of a record — callchain, register and branch-counter values (`u64`),
//! branch entries ([`BranchEntry`](super::BranchEntry)), a group's counters
//! ([`GroupEntry`](super::GroupEntry)), namespace links ([`NamespaceLink`](super::NamespaceLink)) —
//! one type with one set of methods for all of them.
//!
//! Record bytes are neither aligned nor necessarily in the native byte order, so decoded entries
//! keep the bytes and how an entry lies in them, and read each entry when it is asked for. Entries
//! built by the caller (for encoding) wrap a native slice instead.

use core::fmt;
use core::slice;

use super::Endian;

/// An array of entries of a record, borrowed either from record bytes (any alignment, either
/// byte order) or from a native slice (for encoding: [`Entries::from_slice`]). Two arrays are
/// equal when their entries are, however they are stored.
///
/// ```
/// use perfring::record::Entries;
/// let chain = Entries::from_slice(&[0xffff_ff80_0000_1000u64, 0x4005d0]);
/// assert_eq!(chain.len(), 2);
/// assert_eq!(chain.get(1), Some(0x4005d0));
/// assert_eq!(chain.iter().max(), Some(0xffff_ff80_0000_1000));
/// assert_eq!(Entries::<u64>::EMPTY, Entries::from_slice(&[]));
/// ```
pub struct Entries<'a, T: Entry> {
    repr: Repr<'a, T>,
}

/// How an [`Entries`] holds its entries.
enum Repr<'a, T: Entry> {
    /// A whole number of entries of record bytes, laid out as `layout` says.
    Bytes(&'a [u8], T::Layout),
    /// Native entries.
    Slice(&'a [T]),
}

/// A type that [`Entries`] holds: `u64`, [`BranchEntry`](super::BranchEntry),
/// [`GroupEntry`](super::GroupEntry) and [`NamespaceLink`](super::NamespaceLink). (Sealed: how
/// each lies in record bytes is the uapi's.)
pub trait Entry: Copy + PartialEq + fmt::Debug + sealed::Sealed + 'static {}

pub(crate) mod sealed {
    use core::fmt;

    use super::super::Endian;

    /// How an entry type lies in record bytes.
    pub trait Sealed: Sized {
        /// What a decoded array must know besides its bytes: their byte order and, for a
        /// group's counters, which words each entry has.
        type Layout: Copy + PartialEq;
        /// The bytes of one entry.
        fn stride(layout: Self::Layout) -> usize;
        /// The entry in `bytes` (exactly [`stride`](Self::stride) of them).
        fn read(bytes: &[u8], layout: Self::Layout) -> Self;
        /// The byte order of `layout` (the encoder copies bytes in bulk when it is its own).
        fn endian(layout: Self::Layout) -> Endian;
        /// How `Debug` prints one entry.
        fn fmt_entry(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    }
}

impl sealed::Sealed for u64 {
    type Layout = Endian;
    #[inline(always)]
    fn stride(_: Endian) -> usize {
        8
    }
    #[inline(always)]
    fn read(bytes: &[u8], endian: Endian) -> u64 {
        endian.u64_at(bytes, 0).unwrap_or(0)
    }
    fn endian(endian: Endian) -> Endian {
        endian
    }
    /// Addresses and register values: hex.
    fn fmt_entry(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:#x}")
    }
}

impl Entry for u64 {}

impl<'a, T: Entry> Entries<'a, T> {
    /// No entries.
    pub const EMPTY: Entries<'static, T> = Entries { repr: Repr::Slice(&[]) };

    /// Wrap native entries (for building records to encode).
    pub const fn from_slice(entries: &'a [T]) -> Entries<'a, T> {
        Entries { repr: Repr::Slice(entries) }
    }

    /// Wrap record bytes holding a whole number of entries laid out as `layout` says.
    #[inline(always)]
    pub(crate) fn from_bytes(bytes: &'a [u8], layout: T::Layout) -> Entries<'a, T> {
        debug_assert!(bytes.len() % T::stride(layout) == 0);
        Entries { repr: Repr::Bytes(bytes, layout) }
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        match self.repr {
            // (`checked_div`: no division-by-zero path; a stride is never 0.)
            Repr::Bytes(b, layout) => b.len().checked_div(T::stride(layout)).unwrap_or(0),
            Repr::Slice(s) => s.len(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry at `index`, or `None` past the end.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        match self.repr {
            Repr::Bytes(b, layout) => {
                let stride = T::stride(layout);
                let start = index.checked_mul(stride)?;
                Some(T::read(b.get(start..start.checked_add(stride)?)?, layout))
            }
            Repr::Slice(s) => s.get(index).copied(),
        }
    }

    /// The entries in order, each read where it lies (one step of the stride apiece).
    #[inline]
    pub fn iter(&self) -> EntriesIter<'a, T> {
        let repr = match self.repr {
            Repr::Bytes(b, layout) => IterRepr::Bytes(b, layout),
            Repr::Slice(s) => IterRepr::Slice(s.iter()),
        };
        EntriesIter { repr }
    }

    /// The record bytes, if these entries were decoded in `endian` order (the encoder copies
    /// them in bulk then).
    pub(crate) fn bytes_in(&self, endian: Endian) -> Option<&'a [u8]> {
        match self.repr {
            Repr::Bytes(b, layout) if T::endian(layout) == endian => Some(b),
            _ => None,
        }
    }
}

impl<T: Entry> Clone for Repr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Entry> Copy for Repr<'_, T> {}

impl<T: Entry> Clone for Entries<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Entry> Copy for Entries<'_, T> {}

impl<T: Entry> PartialEq for Entries<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Entry> Eq for Entries<'_, T> {}

impl<T: Entry> fmt::Debug for Entries<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(DebugEntry)).finish()
    }
}

/// Prints an entry as its type's [`fmt_entry`](sealed::Sealed::fmt_entry) does.
struct DebugEntry<T>(T);

impl<T: Entry> fmt::Debug for DebugEntry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_entry(f)
    }
}

impl<'a, T: Entry> IntoIterator for Entries<'a, T> {
    type Item = T;
    type IntoIter = EntriesIter<'a, T>;
    fn into_iter(self) -> EntriesIter<'a, T> {
        self.iter()
    }
}

/// The entries of an [`Entries`] in order ([`Entries::iter`]).
pub struct EntriesIter<'a, T: Entry> {
    repr: IterRepr<'a, T>,
}

/// How an [`EntriesIter`] holds the entries not yet read.
enum IterRepr<'a, T: Entry> {
    /// Record bytes, a whole number of entries.
    Bytes(&'a [u8], T::Layout),
    /// Native entries.
    Slice(slice::Iter<'a, T>),
}

impl<T: Entry> Clone for EntriesIter<'_, T> {
    fn clone(&self) -> Self {
        let repr = match &self.repr {
            IterRepr::Bytes(b, layout) => IterRepr::Bytes(b, *layout),
            IterRepr::Slice(s) => IterRepr::Slice(s.clone()),
        };
        EntriesIter { repr }
    }
}

impl<T: Entry> fmt::Debug for EntriesIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone().map(DebugEntry)).finish()
    }
}

impl<T: Entry> Iterator for EntriesIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match &mut self.repr {
            IterRepr::Bytes(bytes, layout) => {
                let (entry, rest) = bytes.split_at_checked(T::stride(*layout))?;
                *bytes = rest;
                Some(T::read(entry, *layout))
            }
            IterRepr::Slice(s) => s.next().copied(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.repr {
            IterRepr::Bytes(b, layout) => b.len().checked_div(T::stride(*layout)).unwrap_or(0),
            IterRepr::Slice(s) => s.len(),
        };
        (n, Some(n))
    }
}

impl<T: Entry> ExactSizeIterator for EntriesIter<'_, T> {}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn bytes_and_slices_compare_by_value() {
        let le = [1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0];
        let be = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2];
        let a = Entries::<u64>::from_bytes(&le, Endian::Little);
        let b = Entries::<u64>::from_bytes(&be, Endian::Big);
        assert_eq!(a, b);
        assert_eq!(a, Entries::from_slice(&[1, 2]));
        assert_ne!(a, Entries::from_slice(&[1]));
        assert_ne!(a, Entries::from_slice(&[1, 3]), "as many entries, one differs");
        assert!(!a.is_empty());
        assert!(Entries::<u64>::from_bytes(&le[..0], Endian::Little).is_empty());
        assert_eq!(a.get(1), Some(2));
        assert_eq!(a.get(2), None);
        assert_eq!(a.get(usize::MAX), None);
        assert_eq!(a.iter().len(), 2);
        assert_eq!(a.bytes_in(Endian::Little), Some(&le[..]));
        assert_eq!(a.bytes_in(Endian::Big), None);
        assert_eq!(std::format!("{a:?}"), "[0x1, 0x2]");
        let mut it = b.into_iter();
        assert_eq!((it.next(), it.len()), (Some(1), 1));
        assert_eq!(std::format!("{it:?}"), "[0x2]");
    }
}
