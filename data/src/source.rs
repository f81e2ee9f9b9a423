//! Where the records come from: a byte slice (a mapped or in-memory file, zero-copy) or a
//! [`Read`] stream (bounded buffered reads, one record at a time).

use std::io::Read;
use std::ops::Range;

use crate::Error;

/// The input ran short of `n` bytes.
pub(crate) struct Short {
    /// Bytes there were.
    pub(crate) have: u64,
    /// Whether the data section's end (rather than the input's) cut it.
    pub(crate) at_limit: bool,
}

mod sealed {
    pub trait Sealed {}
}

/// A source of record bytes: [`Slice`] or [`Stream`]. Sealed; not implementable outside.
pub trait Source: sealed::Sealed {
    #[doc(hidden)]
    fn begin(&mut self);
    #[doc(hidden)]
    fn take(&mut self, n: u64) -> Result<Result<Range<usize>, ShortOpaque>, Error>;
    #[doc(hidden)]
    fn bytes(&self) -> &[u8];
    #[doc(hidden)]
    fn position(&self) -> u64;
    #[doc(hidden)]
    fn rest(&mut self) -> Result<Vec<u8>, Error>;
}

/// Opaque "the input ran short" marker of [`Source`].
#[doc(hidden)]
pub struct ShortOpaque(pub(crate) Short);

/// Records straight from a byte slice (a memory-mapped file, or bytes in memory): zero-copy.
#[derive(Debug, Clone)]
pub struct Slice<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    /// File mode: `end` is the data section's (a record past it is outside the section);
    /// pipe mode: the input's.
    section: bool,
}

impl<'a> Slice<'a> {
    /// `data[start..end]` is the data section (`end` ≤ `data.len()`), or the records of a
    /// pipe-mode stream (`section` false).
    pub(crate) fn new(data: &'a [u8], start: usize, end: usize, section: bool) -> Slice<'a> {
        let end = end.min(data.len());
        Slice { data, pos: start.min(end), end, section }
    }
}

impl sealed::Sealed for Slice<'_> {}

impl Source for Slice<'_> {
    fn begin(&mut self) {}

    fn take(&mut self, n: u64) -> Result<Result<Range<usize>, ShortOpaque>, Error> {
        let left = self.end - self.pos;
        match usize::try_from(n) {
            Ok(n) if n <= left => {
                self.pos += n;
                Ok(Ok(self.pos - n..self.pos))
            }
            _ => {
                let at_limit = self.section;
                self.pos = self.end;
                Ok(Err(ShortOpaque(Short { have: left as u64, at_limit })))
            }
        }
    }

    fn bytes(&self) -> &[u8] {
        self.data
    }

    fn position(&self) -> u64 {
        self.pos as u64
    }

    fn rest(&mut self) -> Result<Vec<u8>, Error> {
        Ok(self.data.get(self.end..).unwrap_or_default().to_vec())
    }
}

/// Records from a [`Read`] stream: each record is read into one reused buffer (at most 64 KiB
/// plus the data an AUXTRACE or TRACING_DATA record carries, which is read as it arrives, so
/// memory follows the input and never a length field).
#[derive(Debug)]
pub struct Stream<R> {
    inner: R,
    buf: Vec<u8>,
    pos: u64,
    end: Option<u64>,
}

impl<R: Read> Stream<R> {
    /// `inner` is positioned at file offset `pos`; the data section ends at `end` (pipe mode:
    /// `None`, the end of the input).
    pub(crate) fn new(inner: R, pos: u64, end: Option<u64>) -> Stream<R> {
        Stream { inner, buf: Vec::with_capacity(1 << 16), pos, end }
    }
}

impl<R: Read> sealed::Sealed for Stream<R> {}

impl<R: Read> Source for Stream<R> {
    fn begin(&mut self) {
        self.buf.clear();
    }

    fn take(&mut self, n: u64) -> Result<Result<Range<usize>, ShortOpaque>, Error> {
        let (want, at_limit) = match self.end {
            Some(end) if self.pos.saturating_add(n) > end => (end.saturating_sub(self.pos), true),
            _ => (n, false),
        };
        let start = self.buf.len();
        let got = if want <= 1 << 16 {
            // A record: read into the reused buffer directly.
            let want = want as usize;
            self.buf.resize(start + want, 0);
            let mut have = 0;
            while have < want {
                match self.inner.read(&mut self.buf[start + have..]) {
                    Ok(0) => break,
                    Ok(n) => have += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => return Err(Error::Io { offset: self.pos + have as u64, error }),
                }
            }
            self.buf.truncate(start + have);
            have as u64
        } else {
            // Data after an AUXTRACE/TRACING_DATA record: memory grows with what arrives,
            // never with the length field.
            (&mut self.inner)
                .take(want)
                .read_to_end(&mut self.buf)
                .map_err(|error| Error::Io { offset: self.pos, error })? as u64
        };
        self.pos += got;
        if got < n {
            return Ok(Err(ShortOpaque(Short { have: got, at_limit: at_limit && got == want })));
        }
        Ok(Ok(start..self.buf.len()))
    }

    fn bytes(&self) -> &[u8] {
        &self.buf
    }

    fn position(&self) -> u64 {
        self.pos
    }

    /// Everything after the data section (a forward-read file's feature sections): memory
    /// follows what arrives.
    fn rest(&mut self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        self.inner.read_to_end(&mut out).map_err(|error| Error::Io { offset: self.pos, error })?;
        Ok(out)
    }
}
