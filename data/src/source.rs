//! Where the records come from: a byte slice (a mapped or in-memory file, zero-copy) or a
//! [`Read`] stream (bounded read-ahead into one buffer, records handed out where they lie).

use std::io::Read;
use std::ops::Range;

use crate::PerfDataError;

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
    fn take(&mut self, n: u64) -> Result<Result<Range<usize>, ShortOpaque>, PerfDataError>;
    #[doc(hidden)]
    fn bytes(&self) -> &[u8];
    #[doc(hidden)]
    fn position(&self) -> u64;
    #[doc(hidden)]
    fn rest(&mut self) -> Result<Vec<u8>, PerfDataError>;
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

    fn take(&mut self, n: u64) -> Result<Result<Range<usize>, ShortOpaque>, PerfDataError> {
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

    fn rest(&mut self) -> Result<Vec<u8>, PerfDataError> {
        Ok(self.data.get(self.end..).unwrap_or_default().to_vec())
    }
}

/// Records from a [`Read`] stream, read ahead in chunks into one reused buffer (128 KiB, more
/// only while one record and the data an AUXTRACE or TRACING_DATA record carries need it,
/// grown as the data arrives, so memory follows the input and never a length field); a record
/// is handed out where it lies in the buffer, not copied. Never reads past the data section's
/// end (file mode), so what follows it is read by `rest`.
#[derive(Debug)]
pub struct Stream<R> {
    inner: R,
    /// Initialised bytes: `[start, filled)` read, `[filled, len)` room.
    buf: Vec<u8>,
    /// The current record's first byte (`begin`); the ranges `take` returns count from it.
    start: usize,
    /// The next byte `take` hands out.
    cur: usize,
    /// The end of what has been read.
    filled: usize,
    /// File offset of `cur`.
    pos: u64,
    /// File offset of `filled`.
    read_pos: u64,
    end: Option<u64>,
}

/// The read-ahead chunk.
const CHUNK: usize = 1 << 16;

/// The smallest buffer a [`Stream`] starts with, and the capacity of the `BufReader` below a
/// file's ([`Stream::file`]).
const MIN_BUF: usize = 1 << 12;

impl<R: Read> Stream<std::io::BufReader<R>> {
    /// A file's data section `[pos, end)` from `inner` (positioned at `pos`), through a 4 KiB
    /// `BufReader`: the stream reads its buffer's room (at least that, mostly a chunk or more),
    /// so its reads bypass the `BufReader` (one copy), and a larger one would only add to the
    /// heap that reading a file needs.
    pub(crate) fn file(inner: R, pos: u64, end: u64) -> Self {
        Stream::new(std::io::BufReader::with_capacity(MIN_BUF, inner), pos, Some(end))
    }
}

impl<R: Read> Stream<R> {
    /// `inner` is positioned at file offset `pos`; the data section ends at `end` (pipe mode:
    /// `None`, the end of the input). The buffer starts at 128 KiB, or at the data section's
    /// size when that is smaller (at least 4 KiB): a small file's records are read in one
    /// read into a buffer no larger than they are (a 128 KiB buffer per small file opened
    /// was, through the allocator's trimming, most of the page faults of reading one).
    pub(crate) fn new(inner: R, pos: u64, end: Option<u64>) -> Stream<R> {
        let len = Self::initial_len(pos, end);
        Stream { inner, buf: vec![0; len], start: 0, cur: 0, filled: 0, pos, read_pos: pos, end }
    }

    /// The buffer's first size for a data section `[pos, end)` (see [`Stream::new`]).
    fn initial_len(pos: u64, end: Option<u64>) -> usize {
        let section = end.map_or(u64::MAX, |end| end.saturating_sub(pos));
        usize::try_from(section).unwrap_or(usize::MAX).clamp(MIN_BUF, 2 * CHUNK)
    }

    /// Read more, at least one byte unless the input (or the data section) ends: `Ok(false)`
    /// then. The record being read (from `start`) moves to the front when the buffer is
    /// full; the buffer grows only when that record fills it, by what the record still needs
    /// (at most the buffer's size again, so growth follows the bytes that arrived).
    fn fill(&mut self, need: usize) -> Result<bool, PerfDataError> {
        if self.buf.len() - self.filled < CHUNK && self.start > 0 {
            // Room for a whole chunk, so a read bypasses a `BufReader` below (one copy).
            self.buf.copy_within(self.start..self.filled, 0);
            (self.cur, self.filled, self.start) = (self.cur - self.start, self.filled - self.start, 0);
        }
        if self.filled == self.buf.len() {
            let more = need.saturating_sub(self.filled - self.cur).clamp(CHUNK, self.buf.len().max(CHUNK));
            self.buf.resize(self.buf.len() + more, 0);
        }
        let room = self.buf.len() - self.filled;
        let room = match self.end {
            Some(end) => room.min(usize::try_from(end.saturating_sub(self.read_pos)).unwrap_or(usize::MAX)),
            None => room,
        };
        if room == 0 {
            return Ok(false);
        }
        loop {
            match self.inner.read(&mut self.buf[self.filled..self.filled + room]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.filled += n;
                    self.read_pos += n as u64;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(PerfDataError::Io { offset: self.read_pos, error }),
            }
        }
    }
}

impl<R: Read> sealed::Sealed for Stream<R> {}

impl<R: Read> Source for Stream<R> {
    fn begin(&mut self) {
        if self.cur == self.filled {
            // Nothing read ahead: start again at the front.
            (self.start, self.cur, self.filled) = (0, 0, 0);
        } else {
            self.start = self.cur;
        }
    }

    fn take(&mut self, n: u64) -> Result<Result<Range<usize>, ShortOpaque>, PerfDataError> {
        let (want, at_limit) = match self.end {
            Some(end) if self.pos.saturating_add(n) > end => (end.saturating_sub(self.pos), true),
            _ => (n, false),
        };
        let need = usize::try_from(want).unwrap_or(usize::MAX);
        while self.filled - self.cur < need {
            if !self.fill(need)? {
                break;
            }
        }
        let got = (self.filled - self.cur).min(need);
        let from = self.cur - self.start;
        self.cur += got;
        self.pos += got as u64;
        if (got as u64) < n {
            return Ok(Err(ShortOpaque(Short { have: got as u64, at_limit: at_limit && got as u64 == want })));
        }
        Ok(Ok(from..from + got))
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.filled]
    }

    fn position(&self) -> u64 {
        self.pos
    }

    /// Everything after the data section (a forward-read file's feature sections): memory
    /// follows what arrives.
    fn rest(&mut self) -> Result<Vec<u8>, PerfDataError> {
        let mut out = self.buf[self.cur..self.filled].to_vec();
        self.cur = self.filled;
        self.inner.read_to_end(&mut out).map_err(|error| PerfDataError::Io { offset: self.read_pos, error })?;
        Ok(out)
    }
}
