//! [`MappedFile`]: a perf.data file read where it lies in memory, and the crate's only
//! `unsafe`, mapping it.

use std::fs::File;

use crate::source::Slice;
use crate::{PerfDataError, Reader};

/// A memory-mapped perf.data file; [`MappedFile::reader`] reads it without copying (feature
/// `mmap`, on by default).
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
}

impl MappedFile {
    /// Map `file`.
    ///
    /// # Safety
    ///
    /// As for [`memmap2::Mmap::map`]: the file must not be modified or truncated while the
    /// mapping lives (by this or another process). A file rewritten under the mapping is
    /// undefined behaviour; one truncated under it kills the process with SIGBUS when a
    /// record past the new end is read.
    pub unsafe fn map(file: &File) -> Result<MappedFile, PerfDataError> {
        // SAFETY: the caller promises the file is neither modified nor truncated while mapped.
        let map = unsafe { map(file) }.map_err(|error| PerfDataError::Io { offset: 0, error })?;
        Ok(MappedFile { map })
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// A reader over the mapping (either mode).
    pub fn reader(&self) -> Result<Reader<Slice<'_>>, PerfDataError> {
        Reader::from_bytes(&self.map)
    }
}

/// Map `file` read-only.
///
/// # Safety
///
/// The file must not be modified or truncated while the mapping lives (see
/// [`MappedFile::map`]).
unsafe fn map(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: forwarded to the caller: the file is neither modified nor truncated while mapped.
    unsafe { memmap2::Mmap::map(file) }
}
