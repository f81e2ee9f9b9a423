//! [`Loc`]: where a record the reader found lies, before it is handed out.

use std::ops::Range;

use perfring::record::Header;

/// Where a record's bytes are: in the source's buffer, in the decompressor's, or in the time
/// order's store.
///
/// A word wide (`repr(u64)`): as one byte, `Loc`'s last word was this byte and seven of
/// padding, which the time order's loop copied out of `next_raw`'s returned value as a byte
/// and two overlapping 4-byte moves, loads that cannot be forwarded from the callee's stores
/// (`perf annotate`: 56% of `next_loc`'s samples). As a word it is one 8-byte move: `make
/// bench-data`'s time order 2.33× → 2.45× (BENCHMARKS.md, 2026-11-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Buf {
    Src,
    Decomp,
    Store,
}

/// A record found in one of the buffers, attributed, before it is handed out.
#[derive(Debug, Clone)]
pub(crate) struct Loc {
    pub(crate) buf: Buf,
    pub(crate) rec: Range<usize>,
    pub(crate) trailing: Range<usize>,
    pub(crate) offset: u64,
    pub(crate) header: Header,
    pub(crate) event: Option<usize>,
}
