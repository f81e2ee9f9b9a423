//! Reading a path: a perf.data file (either mode) or a directory written by `perf record
//! --threads`, which holds `data` (a file-mode perf.data whose data section holds the records
//! perf synthesized, with the DIR_FORMAT feature) and `data.0`, `data.1`, … (the records of
//! each reader thread, no header).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Take};
use std::path::Path;

use crate::file_header::FileHeader;
use crate::metadata::{pipe_meta, read_file_meta, Seekable};
use crate::open::{read_prefix, read_up_to};
use crate::source::Stream;
use crate::{PerfDataError, Reader, PIPE_HEADER_SIZE};

/// The records of a perf.data path as one stream ([`Reader::open`]): a file's data section (or
/// a pipe-mode file's records), or a directory's `data` data section followed by each `data.N`
/// file whole, in N order.
#[derive(Debug)]
pub struct Files {
    parts: Vec<Take<File>>,
    current: usize,
}

impl Read for Files {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // Each pass reads or moves to the next part: bounded by the number of parts.
        while let Some(part) = self.parts.get_mut(self.current) {
            let n = part.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            self.current += 1;
        }
        Ok(0)
    }
}

fn io(offset: u64) -> impl Fn(std::io::Error) -> PerfDataError {
    move |error| PerfDataError::Io { offset, error }
}

/// A file-system operation on `path` failed: [`PerfDataError::Open`].
fn open_error(path: &Path) -> impl Fn(std::io::Error) -> PerfDataError + '_ {
    move |error| PerfDataError::Open { path: path.to_path_buf(), error }
}

/// An error reading the file at `path`: named by it ([`PerfDataError::InFile`]).
fn in_file(path: &Path) -> impl Fn(PerfDataError) -> PerfDataError + '_ {
    move |error| match error {
        named @ (PerfDataError::Open { .. } | PerfDataError::InFile { .. }) => named,
        error => PerfDataError::InFile { path: path.to_path_buf(), error: Box::new(error) },
    }
}

impl Reader<Stream<BufReader<Files>>> {
    /// Open a perf.data path: a file in either mode (detected from its header; the metadata
    /// read by seeking, then the records through bounded buffered reads), or a directory
    /// written by `perf record --threads` (detected as a directory; see [`Reader::open_dir`]).
    ///
    /// A path that is not a regular file (a FIFO, `/dev/stdin` on a pipe, a process
    /// substitution's `/dev/fd/N`) cannot seek and has no length: it is read forward as a
    /// stream, as [`Reader::from_read`] reads one (either mode; a file-mode file's features
    /// once its records are read).
    ///
    /// An error here names the path: [`PerfDataError::Open`] when it cannot be opened (or listed),
    /// [`PerfDataError::InFile`] around what was wrong in it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, PerfDataError> {
        let path = path.as_ref();
        if path.is_dir() {
            return Reader::open_dir(path);
        }
        let mut file = File::open(path).map_err(open_error(path))?;
        let meta = file.metadata().map_err(open_error(path))?;
        if !meta.is_file() {
            // A FIFO or device: its metadata's length is 0 whatever it holds.
            let stream = Files { parts: vec![file.take(u64::MAX)], current: 0 };
            return Reader::from_read(stream).map_err(in_file(path));
        }
        let len = meta.len();
        let mut prefix = [0u8; 16];
        read_prefix(&mut file, &mut prefix).map_err(in_file(path))?;
        let (endian, size) = FileHeader::prefix(&prefix).map_err(in_file(path))?;
        if size == PIPE_HEADER_SIZE as u64 {
            let rest = len.saturating_sub(PIPE_HEADER_SIZE as u64);
            let files = Files { parts: vec![file.take(rest)], current: 0 };
            let stream = Stream::new(BufReader::with_capacity(1 << 16, files), PIPE_HEADER_SIZE as u64, None);
            return Ok(Reader::with_meta(stream, pipe_meta(endian)));
        }
        file.seek(SeekFrom::Start(0)).map_err(io(0)).map_err(in_file(path))?;
        Reader::from_data_file(file, len, Vec::new()).map_err(in_file(path))
    }

    /// Read a directory written by `perf record --threads` (`path/data` and its `data.N`).
    /// Records come in file order: those of `data`, then `data.0`, `data.1`, …; a record's
    /// offset counts from the start of `data`'s data section through the files in that order
    /// (plus `data.offset`). [`Reader::time_ordered`] sorts within each round of that stream,
    /// not across the files as perf's merge does. An error here names the file, as
    /// [`Reader::open`]'s do.
    pub fn open_dir(path: impl AsRef<Path>) -> Result<Self, PerfDataError> {
        let dir = path.as_ref();
        let data = dir.join("data");
        let header_file = File::open(&data).map_err(open_error(&data))?;
        let len = header_file.metadata().map_err(open_error(&data))?.len();
        let mut numbered: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
            .map_err(open_error(dir))?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n = name.strip_prefix("data.")?.parse().ok()?;
                Some((n, e.path()))
            })
            .collect();
        numbered.sort();
        let mut more = Vec::new();
        for (_, p) in numbered {
            let f = File::open(&p).map_err(open_error(&p))?;
            let n = f.metadata().map_err(open_error(&p))?.len();
            more.push(f.take(n));
        }
        Reader::from_data_file(header_file, len, more).map_err(in_file(&data))
    }

    /// A file-mode `file` of `len` bytes (at its start) whose data section the records of
    /// `more` follow.
    fn from_data_file(mut file: File, len: u64, more: Vec<Take<File>>) -> Result<Self, PerfDataError> {
        let mut head = vec![0u8; crate::HEADER_SIZE];
        let have = read_up_to(&mut file, &mut head)?;
        let header = FileHeader::parse(&head[..have])?;
        let meta = read_file_meta(&mut Seekable::new(&mut file, len), header)?;
        let (start, end) = meta.data;
        file.seek(SeekFrom::Start(start)).map_err(io(start))?;
        let mut total = end;
        for part in &more {
            total = total
                .checked_add(part.limit())
                .ok_or(PerfDataError::Io { offset: total, error: std::io::ErrorKind::InvalidData.into() })?;
        }
        let mut parts = vec![file.take(end - start)];
        parts.extend(more);
        let stream = Stream::file(Files { parts, current: 0 }, start, total);
        Ok(Reader::with_meta(stream, meta))
    }
}
