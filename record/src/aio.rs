//! `--aio[=N]`: perf record's asynchronous trace writing (builtin-record.c `record__aio_*`,
//! POSIX `aio_write` of each ring's data while the next ring is read). Here the file is
//! written by a thread of its own, with up to N buffers in flight: the recorder fills a
//! buffer, hands it over and goes on reading the rings while the writer thread writes it at
//! its offset (`pwrite`). The bytes, and where they go, are those the synchronous output
//! writes; only who waits for the disk changes. A seek (the header's `data.size`, the feature
//! sections) or a flush first waits for every buffer in flight.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use perfring_linux::perf_data::OUTPUT_BUFFER;

/// perf's `nr_cblocks_max`: at most 4 buffers in flight.
pub const MAX_IN_FLIGHT: usize = 4;

/// A file written by a thread of its own: see the [module docs](self).
pub struct AioFile {
    /// The buffer being filled, and the file offset where it starts.
    buf: Vec<u8>,
    at: u64,
    /// To the writer thread: (offset, bytes); `None` once closed.
    to_writer: Option<SyncSender<(u64, Vec<u8>)>>,
    /// From it: each write's result, in order.
    done: Receiver<io::Result<()>>,
    /// Buffers handed over and not yet reported done.
    in_flight: usize,
    file: File,
    writer: Option<JoinHandle<()>>,
}

impl AioFile {
    /// Write `file` (at its current offset) through a writer thread with up to `in_flight`
    /// buffers (1 to [`MAX_IN_FLIGHT`]) handed over at once.
    pub fn new(mut file: File, in_flight: usize) -> io::Result<AioFile> {
        let at = file.stream_position()?;
        // One buffer in the thread's hands, the rest queued.
        let (to_writer, jobs) = sync_channel::<(u64, Vec<u8>)>(in_flight.clamp(1, MAX_IN_FLIGHT) - 1);
        let (report, done) = sync_channel(MAX_IN_FLIGHT + 1);
        let out = file.try_clone()?;
        let writer = std::thread::Builder::new().name("perfring-aio".into()).spawn(move || {
            for (at, bytes) in jobs {
                if report.send(out.write_all_at(&bytes, at)).is_err() {
                    break;
                }
            }
        })?;
        let buf = Vec::with_capacity(OUTPUT_BUFFER);
        Ok(AioFile { buf, at, to_writer: Some(to_writer), done, in_flight: 0, file, writer: Some(writer) })
    }

    /// Hand the buffer over (waiting while the writer has as many as it may).
    fn hand_over(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::replace(&mut self.buf, Vec::with_capacity(OUTPUT_BUFFER));
        let len = bytes.len() as u64;
        let gone = || io::Error::new(io::ErrorKind::BrokenPipe, "the output's writer thread ended");
        self.to_writer.as_ref().ok_or_else(gone)?.send((self.at, bytes)).map_err(|_| gone())?;
        self.at += len;
        self.in_flight += 1;
        // Results already in: an error shows at the next write, not only at the end.
        while let Ok(result) = self.done.try_recv() {
            self.in_flight -= 1;
            result?;
        }
        Ok(())
    }

    /// Hand the buffer over and wait until everything handed over is written.
    fn settle(&mut self) -> io::Result<()> {
        self.hand_over()?;
        while self.in_flight > 0 {
            let result = self.done.recv().map_err(|_| io::Error::other("the output's writer thread ended"))?;
            self.in_flight -= 1;
            result?;
        }
        Ok(())
    }
}

impl Write for AioFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.buf.len() + bytes.len() > OUTPUT_BUFFER {
            self.hand_over()?;
        }
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.settle()
    }
}

impl Seek for AioFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.settle()?;
        self.at = match to {
            SeekFrom::Start(n) => n,
            SeekFrom::End(d) => self.file.metadata()?.len().checked_add_signed(d).ok_or(io::ErrorKind::InvalidInput)?,
            SeekFrom::Current(d) => self.at.checked_add_signed(d).ok_or(io::ErrorKind::InvalidInput)?,
        };
        Ok(self.at)
    }
}

impl Drop for AioFile {
    fn drop(&mut self) {
        let _ = self.settle();
        drop(self.to_writer.take());
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_what_a_plain_file_gets_in_place() {
        let path = std::env::temp_dir().join(format!("perfring-aio-{}", std::process::id()));
        let file = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        let mut w = AioFile::new(file, 2).unwrap();
        let chunk: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        for _ in 0..10 {
            w.write_all(&chunk).unwrap();
        }
        w.seek(SeekFrom::Start(8)).unwrap();
        w.write_all(b"HEADER").unwrap();
        assert_eq!(w.seek(SeekFrom::End(0)).unwrap(), 1_000_000);
        w.write_all(b"END").unwrap();
        drop(w);
        let got = std::fs::read(&path).unwrap();
        let mut want: Vec<u8> = chunk.repeat(10);
        want[8..14].copy_from_slice(b"HEADER");
        want.extend_from_slice(b"END");
        assert!(got == want, "the file as a synchronous writer leaves it");
        std::fs::remove_file(path).ok();
    }
}
