//! Where the data goes, opened before anything runs, as perf record opens it
//! (tools/perf/util/data.c): a non-empty file already at the path is kept as `PATH.old`
//! (the previous `.old` removed), the new one is created with mode 0600; `-` is pipe mode on
//! stdout.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;

use crate::aio::AioFile;

use perfring_linux::perf_data::OUTPUT_BUFFER;
use perfring_linux::LinuxError;

/// The output, opened.
pub enum Output {
    /// A perf.data file.
    File(FileOut),
    /// Pipe mode to stdout.
    Stdout,
    /// `--threads`: a directory's `data` file, and the rings of each reader thread.
    Directory(BufWriter<File>, Vec<Vec<usize>>),
}

/// A perf.data file's writer: buffered, or (`--aio`) written by a thread of its own.
pub enum FileOut {
    /// Written a buffer at a time by the recorder.
    Buffered(BufWriter<File>),
    /// `--aio`: buffers handed to a writer thread.
    Aio(AioFile),
}

impl Write for FileOut {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            FileOut::Buffered(w) => w.write(bytes),
            FileOut::Aio(w) => w.write(bytes),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            FileOut::Buffered(w) => w.write_all(bytes),
            FileOut::Aio(w) => w.write_all(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            FileOut::Buffered(w) => w.flush(),
            FileOut::Aio(w) => w.flush(),
        }
    }
}

impl Seek for FileOut {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        match self {
            FileOut::Buffered(w) => w.seek(to),
            FileOut::Aio(w) => w.seek(to),
        }
    }
}

/// Open `path` (`-`: stdout) as perf does: an existing non-empty file becomes `path.old`.
/// `aio`: `--aio`'s buffers in flight (0: written by the recorder itself).
pub fn open(path: &str, aio: usize) -> Result<Output, LinuxError> {
    if path == "-" {
        return Ok(Output::Stdout);
    }
    let io = |what: &'static str| move |error| LinuxError::File { what, path: path.into(), error };
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0) {
        let old = format!("{path}.old");
        match std::fs::remove_file(&old) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io("removing the old data at")(e)),
            _ => {}
        }
        std::fs::rename(path, &old).map_err(io("keeping the previous recording as PATH.old:"))?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(io("creating the output"))?;
    if aio > 0 {
        let out = AioFile::new(file, aio).map_err(io("starting the writer thread of"))?;
        return Ok(Output::File(FileOut::Aio(out)));
    }
    Ok(Output::File(FileOut::Buffered(BufWriter::with_capacity(OUTPUT_BUFFER, file))))
}
