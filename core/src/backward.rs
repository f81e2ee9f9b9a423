//! Reading a backward ring newest-first, and reading an overwrite ring that the producer may be
//! writing at the same time.
//!
//! In a backward ring (`attr.write_backward`) `data_head` decreases: the newest record starts at
//! `data_head` and each record's `size` steps to the next older one. The bytes written since a
//! previous head `prev` are `[data_head, prev)`. Once more than `data_size` bytes were written
//! the oldest are gone; the walk stops (like libperf's `overwrite_rb_find_range`):
//! * at a header with `size == 0`: an area never written (the ring is zeroed at setup);
//! * when the next record would end more than `data_size` bytes above `data_head`: its tail was
//!   overwritten.
//!
//! # Racing the producer
//!
//! In overwrite mode nothing stops the producer from writing over the records being read:
//! `PERF_EVENT_IOC_PAUSE_OUTPUT` is not a synchronous barrier (a writer that passed the check
//! finishes). So every byte is copied with atomic word loads ([`RingMemory::load_words`]) and
//! each copy is validated *after* it is taken:
//! * against `data_head` re-read after the copy: a record is intact only if it still lies within
//!   `data_size` bytes above the new head (what libperf cannot do, and what the kernel needs:
//!   this is the only check available over the kernel's own mapping);
//! * against the producer's write generation ([`RingMemory::write_gen`], a seqlock a perfring
//!   producer bumps around each outermost writer in overwrite mode): if a writer was open during
//!   the copy but has not published yet, its bytes are invisible to the head check, so the copy
//!   is refused ([`ReadError::WriterActive`]; pause and retry).
//!
//! A record is returned only when both checks pass. Records that fail are not returned; the
//! error says why. What that guarantees depends on the producer:
//!
//! * **A perfring [`Producer`](crate::producer::Producer) writing through the same memory value** (the
//!   `&Mapping` or `&ModelRing` both ends share, as [`crate::split`] gives them): its write
//!   generation lives in that value, so no torn record is ever returned, paused or not.
//! * **Any other producer** — the kernel, another process, a producer over another `Mapping` of
//!   the same bytes — keeps no write generation this reader can see (over such memory it stays
//!   0). The head check still refuses every record overwritten by a write published during the
//!   copy; a writer that had reserved its space but not yet published can tear the oldest
//!   record read. Pause the producer first (the kernel: `PERF_EVENT_IOC_PAUSE_OUTPUT`) and the
//!   window shrinks to writers already past the pause check, which the kernel lets finish.
//!
//! Memory safety holds for every producer: every byte is copied with atomic word loads and every
//! size is validated before use.

use crate::consumer::{ring_record, ReadError};
use crate::fences::{fence, C_HEAD_LOAD, D_TAIL_STORE, S3_SEQ_READ_BEGIN, S4_SEQ_READ_END};
use crate::memory::{check_area_size, Area, LayoutError, Position, RingMemory, MIN_DATA_SIZE};
use crate::record::{Endian, Header, RawRecord};

/// What one [`BackwardReader::read`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadSummary {
    /// Records delivered.
    pub records: usize,
    /// Bytes delivered.
    pub bytes: usize,
    /// The walk stopped because older records were overwritten (more than `data_size` bytes were
    /// written since the previous read): some records were lost to overwriting.
    pub wrapped: bool,
}

/// Reads a backward ring newest-first (see the [module docs](self)).
///
/// ```
/// use perfring::producer::{ProducerConfig, Producer, EventIdentity};
/// use perfring::{backward::BackwardReader, memory::Mapping};
/// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
/// # let mut buf = Buf([0; 4096 + 4096]);
/// let map = Mapping::new(&mut buf.0, 4096).unwrap();
/// // A flight recorder: backward, overwriting (perf's `--overwrite`).
/// let config = ProducerConfig { backward: true, overwrite: true, ..ProducerConfig::default() };
/// // SAFETY: the only producer of this ring.
/// let producer = unsafe { Producer::new(&map, config) }.unwrap();
/// for misc in 1..=3u8 {
///     producer.output(&[9, 0, 0, 0, misc, 0, 8, 0], &EventIdentity::ANONYMOUS).unwrap();
/// }
/// let mut reader = BackwardReader::new(&map, false).unwrap();
/// let mut seen = [0u16; 3];
/// let mut i = 0;
/// producer.pause_output(true); // PAUSE_OUTPUT around the read, as perf does
/// let summary = reader
///     .read(&mut [0u8; 64], |r| {
///         seen[i] = r.header.misc;
///         i += 1;
///     })
///     .unwrap();
/// producer.pause_output(false);
/// assert_eq!(seen, [3, 2, 1], "newest first");
/// assert_eq!((summary.records, summary.wrapped), (3, false));
/// ```
pub struct BackwardReader<M: RingMemory> {
    mem: M,
    mask: usize,
    /// `data_head` at the previous read (libperf's `md->prev`); 0 at start, where a backward
    /// ring's head begins.
    prev: usize,
    /// Store `data_tail` after each read (backward ring over a writable mapping, where the
    /// producer respects the tail). Off for overwrite rings.
    release_tail: bool,
}

impl<M: RingMemory> BackwardReader<M> {
    /// A reader of a backward ring. `release_tail`: the producer respects `data_tail`
    /// (non-overwrite backward ring), so store it after each read to free the space.
    pub fn new(mem: M, release_tail: bool) -> Result<Self, LayoutError> {
        let size = mem.size(Area::Data);
        check_area_size(size, MIN_DATA_SIZE)?;
        Ok(BackwardReader { mem, mask: size - 1, prev: 0, release_tail })
    }

    /// A reader that goes on where an earlier one stopped: `prev` is that reader's
    /// [`prev`](BackwardReader::prev), so the first read delivers only what was written since
    /// (libperf keeps `md->prev` across reads the same way). For a caller that cannot keep the
    /// reader itself, e.g. one whose memory borrows a mapping it holds beside the position. Any
    /// `prev` is safe: a wrong one reads as the ring having wrapped, or errs.
    pub fn resume(mem: M, release_tail: bool, prev: usize) -> Result<Self, LayoutError> {
        let mut reader = Self::new(mem, release_tail)?;
        reader.prev = prev;
        Ok(reader)
    }

    /// The head of the previous read.
    pub fn prev(&self) -> usize {
        self.prev
    }

    /// The memory this reader reads.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// Deliver every intact record written since the previous read, newest first, each copied
    /// into `scratch` and validated before `f` sees it. Then remember the head (and store the
    /// tail if `release_tail`). On an error, the records delivered so far were intact and the
    /// read position still moves to the head (what was not read is lost to overwriting).
    pub fn read(&mut self, scratch: &mut [u8], mut f: impl FnMut(&RawRecord<'_>)) -> Result<ReadSummary, ReadError> {
        let size = self.mask + 1;
        // (S3): the generation before the head and the data; pairs with the producer's (S2).
        let gen = self.mem.write_gen().load(S3_SEQ_READ_BEGIN);
        // (C): the head before the data; pairs with (B).
        let head = self.mem.position(Position::DataHead).load(C_HEAD_LOAD);
        let mut summary = ReadSummary::default();
        let result = if gen & 1 == 1 {
            Err(ReadError::WriterActive)
        } else {
            self.walk(head, gen, size, scratch, &mut f, &mut summary)
        };
        self.prev = head;
        if self.release_tail {
            // (D): our copies before the tail store; pairs with (A).
            self.mem.position(Position::DataTail).store(head, D_TAIL_STORE);
        }
        result.map(|()| summary)
    }

    fn walk(
        &self,
        head: usize,
        gen: usize,
        size: usize,
        scratch: &mut [u8],
        f: &mut impl FnMut(&RawRecord<'_>),
        summary: &mut ReadSummary,
    ) -> Result<(), ReadError> {
        let written = self.prev.wrapping_sub(head);
        let mut pos = head;
        // Each step advances by at least 8 bytes and never past `size` above head: bounded.
        loop {
            let done = pos.wrapping_sub(head);
            if done == written {
                return Ok(());
            }
            if done >= size {
                summary.wrapped = true;
                return Ok(());
            }
            let off = pos & self.mask;
            let mut raw = [0u8; 8];
            if !self.mem.load_words(Area::Data, off, &mut raw) {
                // `off` is aligned and in bounds (our arithmetic), so the memory itself failed.
                return Err(ReadError::LoadFailed { position: pos, len: 8 });
            }
            let header = Header::from_bytes(raw, Endian::NATIVE);
            let len = usize::from(header.size);
            if len == 0 {
                // Never written: the ring has not wrapped yet.
                return Ok(());
            }
            if len % 8 != 0 {
                // Garbage, or a header a racing writer is overwriting: say which.
                return Err(self
                    .interference(gen, head, done + 8, size)
                    .unwrap_or(ReadError::MisalignedSize { position: pos, size: header.size }));
            }
            if done + len > size {
                // Its tail lies in the overwritten region.
                summary.wrapped = true;
                return Ok(());
            }
            if done + len > written {
                return Err(self
                    .interference(gen, head, done + 8, size)
                    .unwrap_or(ReadError::CrossesPrevious { position: pos }));
            }
            let scratch_len = scratch.len();
            let dst =
                scratch.get_mut(..len).ok_or(ReadError::ScratchTooSmall { size: header.size, scratch: scratch_len })?;
            let first = len.min(size - off);
            dst[..8].copy_from_slice(&raw);
            let ok = self.mem.load_words(Area::Data, off + 8, &mut dst[8..first])
                && self.mem.load_words(Area::Data, 0, &mut dst[first..]);
            if !ok {
                return Err(ReadError::LoadFailed { position: pos, len });
            }
            if let Some(e) = self.interference(gen, head, done + len, size) {
                return Err(e);
            }
            f(&ring_record(header, dst, pos));
            summary.records += 1;
            summary.bytes += len;
            pos = pos.wrapping_add(len);
        }
    }

    /// After copying bytes up to `end` (relative to `head`): did a writer touch them? `None` if
    /// the copy is certainly intact.
    fn interference(&self, gen: usize, head: usize, end: usize, size: usize) -> Option<ReadError> {
        // (S4): the copy before the re-reads below; pairs with the producer's (S1).
        fence(S4_SEQ_READ_END);
        // (S3) again: if a writer finished meanwhile (even generation), its data_head store
        // happened-before this load, so the head re-read below covers its bytes.
        let now = self.mem.write_gen().load(S3_SEQ_READ_BEGIN);
        if now != gen && now & 1 == 1 {
            // A writer opened since `gen` and has not finished: its bytes may not be covered by
            // the head re-read below. Refuse rather than risk a torn record.
            return Some(ReadError::WriterActive);
        }
        let new_head = self.mem.position(Position::DataHead).load(C_HEAD_LOAD);
        let overwritten = head.wrapping_sub(new_head);
        if overwritten > size || end > size - overwritten {
            return Some(ReadError::Overrun { position: head.wrapping_add(end) });
        }
        None
    }
}
