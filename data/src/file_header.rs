//! `struct perf_file_header` (file mode, 104 or 72 bytes) and `struct perf_pipe_file_header`
//! (pipe mode, 16 bytes): perf's tools/perf/util/header.c, `header.c:perf_file_header__read` and
//! `perf_file_header__read_pipe`.

use perfring::record::Endian;

use crate::{PerfDataError, HEADER_SIZE, LEGACY_HEADER_SIZE, MAGIC, PIPE_HEADER_SIZE};

/// `struct perf_file_section`: `{u64 offset, u64 size}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Section {
    /// File offset.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

impl Section {
    /// `offset + size`, or `None` if it overflows.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.size)
    }

    pub(crate) fn parse(b: &[u8], endian: Endian) -> Section {
        Section { offset: u64_of(b, 0, endian), size: u64_of(b, 8, endian) }
    }
}

/// How the file was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `perf record -o file`: a 104-byte (or legacy 72-byte) header with sections.
    File,
    /// `perf record -o -`: a 16-byte header; attrs and features arrive as records.
    Pipe,
}

/// The file header, either mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// Byte order (from the magic).
    pub endian: Endian,
    /// File or pipe mode.
    pub mode: Mode,
    /// `size`: 104, 72 (legacy) or 16 (pipe).
    pub size: u64,
    /// `attr_size`: bytes per attrs entry (file mode).
    pub attr_size: u64,
    /// The attrs section (file mode).
    pub attrs: Section,
    /// The data section (file mode).
    pub data: Section,
    /// The event_types section (ignored by perf).
    pub event_types: Section,
    /// The 256-bit feature bitmap (zero in the legacy header and in pipe mode), as the file
    /// has it ([`FileHeader::parse`]); a reader's header has it as perf reads it, which differs
    /// for a file of the other byte order without HOSTNAME ([`crate::Warning::ForeignFeatureBitmap`]).
    pub features: [u64; 4],
}

pub(crate) fn u64_of(b: &[u8], at: usize, endian: Endian) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    endian.u64(a)
}

impl FileHeader {
    /// The byte order the magic says, or [`PerfDataError::BadMagic`].
    pub fn endian_of(magic: [u8; 8]) -> Result<Endian, PerfDataError> {
        if u64::from_le_bytes(magic) == MAGIC {
            Ok(Endian::Little)
        } else if u64::from_be_bytes(magic) == MAGIC {
            Ok(Endian::Big)
        } else {
            Err(PerfDataError::BadMagic(magic))
        }
    }

    /// The first 16 bytes: the byte order and the header's `size` (16 means pipe mode).
    pub(crate) fn prefix(b: &[u8; 16]) -> Result<(Endian, u64), PerfDataError> {
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&b[..8]);
        let endian = FileHeader::endian_of(magic)?;
        let size = u64_of(b, 8, endian);
        if ![HEADER_SIZE as u64, LEGACY_HEADER_SIZE as u64, PIPE_HEADER_SIZE as u64].contains(&size) {
            return Err(PerfDataError::BadHeaderSize(size));
        }
        Ok((endian, size))
    }

    /// The pipe-mode header.
    pub(crate) fn pipe(endian: Endian) -> FileHeader {
        FileHeader {
            endian,
            mode: Mode::Pipe,
            size: PIPE_HEADER_SIZE as u64,
            attr_size: 0,
            attrs: Section::default(),
            data: Section::default(),
            event_types: Section::default(),
            features: [0; 4],
        }
    }

    /// Parse a file-mode header from its first bytes (at least `size` of them). A pipe-mode
    /// header is [`PerfDataError::PipeMode`].
    pub fn parse(b: &[u8]) -> Result<FileHeader, PerfDataError> {
        let short =
            |need: u64| PerfDataError::Truncated { what: "perf_file_header", offset: 0, need, have: b.len() as u64 };
        let prefix: &[u8; 16] = b.get(..16).and_then(|p| p.try_into().ok()).ok_or_else(|| short(16))?;
        let (endian, size) = FileHeader::prefix(prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Err(PerfDataError::PipeMode);
        }
        if (b.len() as u64) < size {
            return Err(short(size));
        }
        let mut features = [0u64; 4];
        if size == HEADER_SIZE as u64 {
            for (i, w) in features.iter_mut().enumerate() {
                *w = u64_of(b, 72 + 8 * i, endian);
            }
            features[0] &= !1; // bit 0 is reserved (HEADER_RESERVED)
        }
        Ok(FileHeader {
            endian,
            mode: Mode::File,
            size,
            attr_size: u64_of(b, 16, endian),
            attrs: Section::parse(&b[24..40], endian),
            data: Section::parse(&b[40..56], endian),
            event_types: Section::parse(&b[56..72], endian),
            features,
        })
    }

    /// The feature bits set, ascending.
    pub fn feature_bits(&self) -> impl Iterator<Item = u32> + '_ {
        (0..256u32).filter(|&b| self.features[b as usize / 64] & (1 << (b % 64)) != 0)
    }
}
