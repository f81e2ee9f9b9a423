//! Opening a perf.data file or stream: a [`Reader`] over a seekable file, a pipe, any
//! [`Read`], or bytes in memory; the mode detected from the header, the metadata read.

use std::io::{BufReader, Read, Seek, SeekFrom};

use crate::file_header::FileHeader;
use crate::metadata::{pipe_meta, read_file_meta, read_meta_before_data, Prefix, Seekable};
use crate::source::{Slice, Stream};
use crate::{PerfDataError, Reader, PIPE_HEADER_SIZE};

impl<R: Read + Seek> Reader<Stream<BufReader<R>>> {
    /// Read a file (either mode, detected from the header) through bounded buffered reads:
    /// the metadata by seeking, then the data section read ahead in chunks (a record is
    /// handed out where it lies in the read-ahead buffer).
    pub fn new(mut inner: R) -> Result<Self, PerfDataError> {
        let start = inner.stream_position().map_err(|error| PerfDataError::Io { offset: 0, error })?;
        let len =
            inner.seek(SeekFrom::End(0)).map_err(|error| PerfDataError::Io { offset: 0, error })?.saturating_sub(start);
        inner.seek(SeekFrom::Start(start)).map_err(|error| PerfDataError::Io { offset: 0, error })?;
        let mut prefix = [0u8; 16];
        read_prefix(&mut inner, &mut prefix)?;
        let (endian, size) = FileHeader::prefix(&prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Ok(Reader::with_meta(Stream::new(BufReader::new(inner), 16, None), pipe_meta(endian)));
        }
        let mut head = vec![0u8; size as usize];
        head[..16].copy_from_slice(&prefix);
        let have = 16 + read_up_to(&mut inner, &mut head[16..])?;
        let header = FileHeader::parse(&head[..have])?;
        let meta = read_file_meta(&mut Seekable::new(&mut OffsetBy(&mut inner, start), len), header)?;
        let (data_start, data_end) = meta.data;
        inner
            .seek(SeekFrom::Start(start + data_start))
            .map_err(|error| PerfDataError::Io { offset: data_start, error })?;
        let stream = Stream::file(inner, data_start, data_end);
        Ok(Reader::with_meta(stream, meta))
    }
}

impl<R: Read> Reader<Stream<BufReader<R>>> {
    /// Read a pipe-mode stream (`perf record -o -`) from any [`Read`] (buffered here): attrs
    /// and features arrive as records and are taken in as they come. A file-mode header is
    /// [`PerfDataError::BadHeaderSize`]; [`Reader::from_read`] takes either mode.
    pub fn from_pipe(inner: R) -> Result<Self, PerfDataError> {
        let mut inner = BufReader::with_capacity(1 << 16, inner);
        let mut prefix = [0u8; 16];
        read_prefix(&mut inner, &mut prefix)?;
        let (endian, size) = FileHeader::prefix(&prefix)?;
        if size != PIPE_HEADER_SIZE as u64 {
            return Err(PerfDataError::BadHeaderSize(size));
        }
        Ok(Reader::with_meta(Stream::new(inner, 16, None), pipe_meta(endian)))
    }

    /// Read either mode from any [`Read`], seekable or not (stdin, a socket, a decompressor),
    /// the mode detected from the header. Pipe mode as [`Reader::from_pipe`]. File mode is read
    /// forward, as perf writes it: the header, the attrs and ids before the data section (held
    /// in memory), the records one at a time, and, once [`Reader::next_record`] has returned
    /// `None`, the feature sections after the data section ([`Metadata::features`](crate::Metadata::features) is
    /// empty until then). A file with a section where a stream cannot go back to is
    /// [`PerfDataError::NeedsSeekableInput`].
    pub fn from_read(inner: R) -> Result<Self, PerfDataError> {
        let mut inner = BufReader::with_capacity(1 << 16, inner);
        let mut prefix = [0u8; 16];
        read_prefix(&mut inner, &mut prefix)?;
        let (endian, size) = FileHeader::prefix(&prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Ok(Reader::with_meta(Stream::new(inner, 16, None), pipe_meta(endian)));
        }
        let mut head = prefix.to_vec();
        let want = size.saturating_sub(16).min(crate::HEADER_SIZE as u64);
        (&mut inner).take(want).read_to_end(&mut head).map_err(|error| PerfDataError::Io { offset: 16, error })?;
        let header = FileHeader::parse(&head)?;
        // The bytes before the data section (attrs and ids): memory follows what arrives.
        let data_start = header.data.offset;
        if data_start < head.len() as u64 {
            return Err(PerfDataError::NeedsSeekableInput {
                what: "a data section inside the header",
                offset: data_start,
            });
        }
        let before = data_start - head.len() as u64;
        let at = head.len() as u64;
        (&mut inner).take(before).read_to_end(&mut head).map_err(|error| PerfDataError::Io { offset: at, error })?;
        if (head.len() as u64) < data_start {
            let have = head.len() as u64;
            return Err(PerfDataError::Truncated {
                what: "the bytes before the data section",
                offset: 0,
                need: data_start,
                have,
            });
        }
        let meta = read_meta_before_data(&mut Prefix { bytes: head }, header, true)?;
        let end = meta.data.1;
        let stream = Stream::new(inner, data_start, (end != u64::MAX).then_some(end));
        Ok(Reader::with_meta(stream, meta))
    }
}

impl<'a> Reader<Slice<'a>> {
    /// Read a whole file held in memory (either mode), zero-copy.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, PerfDataError> {
        let prefix: &[u8; 16] = bytes.get(..16).and_then(|p| p.try_into().ok()).ok_or(PerfDataError::Truncated {
            what: "perf_file_header",
            offset: 0,
            need: 16,
            have: bytes.len() as u64,
        })?;
        let (endian, size) = FileHeader::prefix(prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Ok(Reader::with_meta(Slice::new(bytes, 16, bytes.len(), false), pipe_meta(endian)));
        }
        let header = FileHeader::parse(bytes)?;
        let meta = read_file_meta(&mut &bytes[..], header)?;
        let (start, end) = meta.data;
        Ok(Reader::with_meta(Slice::new(bytes, start as usize, end as usize, true), meta))
    }
}

pub(crate) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, PerfDataError> {
    let mut have = 0;
    while have < buf.len() {
        match r.read(&mut buf[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(PerfDataError::Io { offset: have as u64, error }),
        }
    }
    Ok(have)
}

pub(crate) fn read_prefix(r: &mut impl Read, prefix: &mut [u8; 16]) -> Result<(), PerfDataError> {
    let have = read_up_to(r, prefix)?;
    if have < 16 {
        return Err(PerfDataError::Truncated { what: "perf_file_header", offset: 0, need: 16, have: have as u64 });
    }
    Ok(())
}

/// A seekable reader whose file starts at `.1`.
struct OffsetBy<'r, R>(&'r mut R, u64);

impl<R: Read> Read for OffsetBy<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Seek> Seek for OffsetBy<'_, R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            SeekFrom::Start(o) => Ok(self.0.seek(SeekFrom::Start(o.saturating_add(self.1)))? - self.1),
            other => Ok(self.0.seek(other)?.saturating_sub(self.1)),
        }
    }
}
