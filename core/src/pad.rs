//! [`CachePadded`]: a value alone on its cache line(s), for the words of ours that two cores
//! write (the ABI page itself cannot be padded: its offsets are fixed).

use core::ops::Deref;

/// `T`, aligned (and so padded) to 128 bytes: two 64-byte lines, because x86_64's adjacent-line
/// prefetcher pulls lines in pairs, and aarch64's big cores have 128-byte lines — the choice
/// `crossbeam_utils::CachePadded` makes for both, which this replaces (the language's
/// `repr(align)` does the job; no dependency needed).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct CachePadded<T>(T);

impl<T> CachePadded<T> {
    /// `value`, padded.
    pub(crate) const fn new(value: T) -> Self {
        CachePadded(value)
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

const _: () =
    assert!(core::mem::align_of::<CachePadded<u8>>() == 128 && core::mem::size_of::<CachePadded<u64>>() == 128);
