//! The crate's only `unsafe`: mapping a file.

use std::fs::File;

/// Map `file` read-only.
///
/// # Safety
///
/// The file must not be modified or truncated while the mapping lives (see
/// [`crate::MappedFile::map`]).
pub(crate) unsafe fn map(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: forwarded to the caller: the file is neither modified nor truncated while mapped.
    unsafe { memmap2::Mmap::map(file) }
}
