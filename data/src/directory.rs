//! Directory mode: `perf record --threads` writes a directory holding `data` (a file-mode
//! perf.data whose data section holds the records perf synthesized, with the DIR_FORMAT
//! feature) and `data.0`, `data.1`, … (the records of each reader thread, no header).

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Take};
use std::path::Path;

use crate::file_header::FileHeader;
use crate::metadata::{read_file_meta, Seekable};
use crate::reader::read_up_to;
use crate::source::Stream;
use crate::{Error, Reader};

/// The data of a directory as one stream: the `data` file's data section, then each
/// `data.N` file whole, in N order.
#[derive(Debug)]
pub struct DirFiles {
    parts: Vec<Take<File>>,
    current: usize,
}

impl Read for DirFiles {
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

fn io(offset: u64) -> impl Fn(std::io::Error) -> Error {
    move |error| Error::Io { offset, error }
}

impl Reader<Stream<BufReader<DirFiles>>> {
    /// Read a directory written by `perf record --threads` (`path/data` and its `data.N`).
    /// Records come in file order: those of `data`, then `data.0`, `data.1`, …; a record's
    /// offset counts from the start of `data`'s data section through the files in that order
    /// (plus `data.offset`). [`Reader::time_ordered`] sorts within each round of that stream,
    /// not across the files as perf's merge does.
    pub fn open_dir(path: impl AsRef<Path>) -> Result<Self, Error> {
        let dir = path.as_ref();
        let mut header_file = File::open(dir.join("data")).map_err(io(0))?;
        let len = header_file.metadata().map_err(io(0))?.len();
        let mut head = vec![0u8; crate::HEADER_SIZE];
        let have = read_up_to(&mut header_file, &mut head)?;
        let header = FileHeader::parse(&head[..have])?;
        let meta = read_file_meta(&mut Seekable { inner: &mut header_file, len }, header)?;
        let (start, end) = meta.data;
        header_file.seek(SeekFrom::Start(start)).map_err(io(start))?;
        let mut parts = vec![header_file.take(end - start)];
        let mut numbered: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
            .map_err(io(0))?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n = name.strip_prefix("data.")?.parse().ok()?;
                Some((n, e.path()))
            })
            .collect();
        numbered.sort();
        let mut total = end;
        for (_, p) in numbered {
            let f = File::open(&p).map_err(io(0))?;
            let n = f.metadata().map_err(io(0))?.len();
            total = total
                .checked_add(n)
                .ok_or(Error::Io { offset: total, error: std::io::ErrorKind::InvalidData.into() })?;
            parts.push(f.take(n));
        }
        let files = DirFiles { parts, current: 0 };
        let stream = Stream::new(BufReader::with_capacity(1 << 16, files), start, Some(total));
        Ok(Reader::with_meta(stream, meta))
    }
}
