//! The bounds-checked cursor that feature sections and perf's own records are read with: every
//! read is checked against the end of its slice, every count bounded by the bytes left, and a
//! failure is an [`PerfDataError`] that names the field and where it is ([`Site`]).

use perfring::record::Endian;

use crate::error::PerfDataError;

/// What is being read, for the errors: a feature section (offsets within its payload) or one
/// of perf's records (the record's offset in the file).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Site {
    /// Feature section `bit`.
    Feature(u32),
    /// A record of `type_` at file offset `offset`.
    Record { type_: u32, offset: u64 },
}

/// Reads fields in order from `b[at..]`.
pub(crate) struct Cur<'a> {
    pub(crate) b: &'a [u8],
    pub(crate) at: usize,
    endian: Endian,
    site: Site,
}

impl<'a> Cur<'a> {
    /// A cursor at `at` of `b`.
    pub(crate) fn new(b: &'a [u8], at: usize, endian: Endian, site: Site) -> Self {
        Cur { b, at, endian, site }
    }

    /// The error for `field`, at the current position.
    pub(crate) fn err(&self, field: &'static str) -> PerfDataError {
        self.err_at(self.at, field)
    }

    fn err_at(&self, at: usize, field: &'static str) -> PerfDataError {
        match self.site {
            Site::Feature(feature) => PerfDataError::BadFeature { feature, offset: at as u64, field },
            Site::Record { type_, offset } => PerfDataError::BadPerfRecord { type_, offset, field },
        }
    }

    /// The next `n` bytes.
    pub(crate) fn bytes(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], PerfDataError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or_else(|| self.err(field))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// A u16.
    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, PerfDataError> {
        Ok(self.endian.u16(self.bytes(2, field)?.try_into().expect("2 bytes")))
    }

    /// A u32.
    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, PerfDataError> {
        Ok(self.endian.u32(self.bytes(4, field)?.try_into().expect("4 bytes")))
    }

    /// A u64.
    pub(crate) fn u64(&mut self, field: &'static str) -> Result<u64, PerfDataError> {
        Ok(self.endian.u64(self.bytes(8, field)?.try_into().expect("8 bytes")))
    }

    /// Everything left.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let s = &self.b[self.at.min(self.b.len())..];
        self.at = self.b.len();
        s
    }

    /// A u32 count of entries of at least `min` bytes each, bounded by the bytes left (the
    /// counts of feature sections); refused at the count's own offset.
    pub(crate) fn count_u32(&mut self, min: usize, field: &'static str) -> Result<usize, PerfDataError> {
        let at = self.at;
        let n = self.u32(field)? as usize;
        if n > (self.b.len() - self.at) / min.max(1) {
            return Err(self.err_at(at, field));
        }
        Ok(n)
    }

    /// A u64 count of `each`-byte entries, bounded by the bytes left (the counts of perf's
    /// records).
    pub(crate) fn count_u64(&mut self, each: usize, field: &'static str) -> Result<usize, PerfDataError> {
        let n = self.u64(field)?;
        let left = (self.b.len() - self.at) / each.max(1);
        usize::try_from(n).ok().filter(|&n| n <= left).ok_or_else(|| self.err(field))
    }

    /// A `{u32 len; char str[len]}` string (NUL-padded), lossily as UTF-8.
    pub(crate) fn string(&mut self, field: &'static str) -> Result<String, PerfDataError> {
        let len = self.u32(field)? as usize;
        let b = self.bytes(len, field)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }

    /// A u32 count of [`string`](Self::string)s, then the strings.
    pub(crate) fn strings(&mut self, field: &'static str) -> Result<Vec<String>, PerfDataError> {
        let n = self.count_u32(4, field)?;
        (0..n).map(|_| self.string(field)).collect()
    }
}
