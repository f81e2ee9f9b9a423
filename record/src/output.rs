//! Where the data goes, opened before anything runs, as perf record opens it
//! (tools/perf/util/data.c): a non-empty file already at the path is kept as `PATH.old`
//! (the previous `.old` removed), the new one is created with mode 0600; `-` is pipe mode on
//! stdout.

use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::os::unix::fs::OpenOptionsExt;

use perfring_linux::perf_data::OUTPUT_BUFFER;
use perfring_linux::LinuxError;

/// The output, opened.
pub enum Output {
    /// A perf.data file.
    File(BufWriter<File>),
    /// Pipe mode to stdout.
    Stdout,
    /// `--threads`: a directory's `data` file, and the rings of each reader thread.
    Directory(BufWriter<File>, Vec<Vec<usize>>),
}

/// Open `path` (`-`: stdout) as perf does: an existing non-empty file becomes `path.old`.
pub fn open(path: &str) -> Result<Output, LinuxError> {
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
    Ok(Output::File(BufWriter::with_capacity(OUTPUT_BUFFER, file)))
}
