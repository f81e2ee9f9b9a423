//! [`Loc`]: where a record the reader found lies, before it is handed out.

use std::ops::Range;

use perfring::record::Header;

/// Where a record's bytes are: in the source's buffer, in the decompressor's, or in the time
/// order's store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
