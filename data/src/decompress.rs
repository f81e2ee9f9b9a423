//! COMPRESSED (81) and COMPRESSED2 (83) records: one zstd stream across the records, as perf's
//! `perf_session__process_compressed_event` keeps it; a record's output may end inside a record,
//! whose start is kept for the next COMPRESSED record.

use crate::PerfDataError;

/// Largest output of one COMPRESSED record (perf bounds it by the COMPRESSED feature's
/// `mmap_len`, 512 KiB for its default ring; a larger one is refused as a decompression bomb).
pub const MAX_DECOMPRESSED: usize = 64 << 20;

/// Decompressed bytes not yet yielded, and the stream state.
#[derive(Default)]
pub(crate) struct Decompressor {
    pub(crate) buf: Vec<u8>,
    pub(crate) pos: usize,
    #[cfg(feature = "zstd")]
    stream: Option<zstd::stream::raw::Decoder<'static>>,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor").field("pending", &(self.buf.len() - self.pos)).finish()
    }
}

impl Decompressor {
    /// Bytes decompressed and not yet yielded.
    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Decompress `input` (the payload of the record at `offset`) after the pending bytes.
    #[cfg(feature = "zstd")]
    pub(crate) fn feed(&mut self, input: &[u8], offset: u64) -> Result<(), PerfDataError> {
        use zstd::stream::raw::Operation;
        self.buf.drain(..self.pos);
        self.pos = 0;
        let limit = self.buf.len() + MAX_DECOMPRESSED;
        let io = |error| PerfDataError::Decompress { offset, error };
        let stream = match &mut self.stream {
            Some(s) => s,
            None => self.stream.insert(zstd::stream::raw::Decoder::new().map_err(io)?),
        };
        let mut read = 0;
        // Each pass consumes input or fills output; a pass doing neither ends the loop.
        loop {
            let written = self.buf.len();
            if written >= limit {
                return Err(PerfDataError::DecompressedTooLarge { offset, limit: MAX_DECOMPRESSED });
            }
            let room = (limit - written).min(1 << 18);
            self.buf.resize(written + room, 0);
            let status = stream.run_on_buffers(&input[read..], &mut self.buf[written..]).map_err(io);
            let status = match status {
                Ok(s) => s,
                Err(e) => {
                    self.buf.truncate(written);
                    return Err(e);
                }
            };
            self.buf.truncate(written + status.bytes_written);
            read += status.bytes_read;
            let output_full = status.bytes_written == room;
            if (read == input.len() && !output_full) || (status.bytes_read == 0 && status.bytes_written == 0) {
                return Ok(());
            }
        }
    }

    /// Without the `zstd` feature a COMPRESSED record is an error naming the feature.
    #[cfg(not(feature = "zstd"))]
    pub(crate) fn feed(&mut self, _input: &[u8], offset: u64) -> Result<(), PerfDataError> {
        Err(PerfDataError::ZstdDisabled { offset })
    }
}
