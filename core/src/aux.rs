//! The AUX area: bulk hardware-trace data beside the record ring (Documentation/userspace-api/perf_ring_buffer.rst).
//!
//! A PMU driver (the producer) brackets each stretch of hardware writes with
//! [`AuxProducer::output_begin`] and [`AuxProducer::output_end`]; the end advances `aux_head`
//! and emits a `PERF_RECORD_AUX {aux_offset, aux_size, flags}` into the data ring, so the
//! consumer knows which AUX bytes belong to which stretch (and where the trace is
//! discontinuous). `aux_head`/`aux_tail` are free-running byte counters with the data ring's
//! ordering rules: the tail is loaded with (A), the head stored with (B), loaded with (C), the
//! tail stored with (D) — the same named fences.
//!
//! Two modes, chosen (as in the kernel) by whether the consumer maps the AUX area writable:
//! * **Non-overwrite**: the producer respects `aux_tail`; `output_begin` offers
//!   `CIRC_SPACE(aux_head, aux_tail)` bytes and fails when there are none (the kernel then
//!   disables the event until user space re-enables it). The consumer reads `[aux_tail,
//!   aux_head)` and stores `aux_tail`.
//! * **Overwrite (snapshot)**: the hardware free-runs and overwrites; `aux_tail` is never read.
//!   The consumer takes a *snapshot*: the last `aux_size` bytes before `aux_head` (or fewer, if
//!   fewer were written since its previous snapshot), and learns whether older data was lost.
//!
//! The kernel forbids nesting on the AUX area ("Nesting is not supported"); here the
//! `&mut self` receiver of `output_begin` makes it impossible.

use crate::fences::{A_TAIL_LOAD, B_HEAD_STORE, C_HEAD_LOAD, D_TAIL_STORE, LOCAL};
use crate::memory::{Area, LayoutError, Position, RingMemory};
use crate::producer::{EventIdentity, Hooks, OutputError, Producer};
use crate::record::{aux_flags, encode_body, types, Aux, DecodeContext, Endian, SampleId};

/// The PMU driver's side of the AUX area.
///
/// ```
/// use perfring::aux::{AuxConsumer, AuxProducer};
/// use perfring::producer::{ProducerConfig, Producer, EventIdentity};
/// use perfring::record::{Attr, Endian, EventRecord, EventSet, Record};
/// use perfring::{consumer::Consumer, memory::Mapping};
/// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
/// # #[repr(C, align(8))] struct Aux([u8; 4096]);
/// # let (mut buf, mut aux) = (Buf([0; 4096 + 4096]), Aux([0; 4096]));
/// let map = Mapping::new(&mut buf.0, 4096).unwrap().with_aux(&mut aux.0, None).unwrap();
/// // SAFETY: the only producers of the data ring and of the AUX area.
/// let data = unsafe { Producer::new(&map, ProducerConfig::default()) }.unwrap();
/// let mut driver = unsafe { AuxProducer::new(&map, false, 0) }.unwrap();
///
/// // The "hardware" writes a trace chunk; the driver publishes it and logs PERF_RECORD_AUX.
/// let mut handle = driver.output_begin().unwrap();
/// driver.write(&mut handle, b"trace bytes!").unwrap();
/// let (record, _wakeup) = driver.output_end(handle, 12, &data, &EventIdentity::ANONYMOUS).unwrap();
/// assert_eq!(record.map(|r| (r.aux_offset, r.aux_size)), Some((0, 12)));
///
/// // The tool reads the AUX bytes, and the record that announced them.
/// let mut out = [0u8; 64];
/// let (start, len) = AuxConsumer::new(&map).unwrap().read(&mut out);
/// assert_eq!((start, &out[..len]), (0, &b"trace bytes!"[..]));
/// let mut records = Consumer::untrusted(&map).unwrap();
/// let events = EventSet::single(&Attr::default(), Endian::NATIVE);
/// records
///     .for_each(&mut [0u8; 64], |r| {
///         assert!(matches!(events.attribute(r).decode(), Ok(Record::Aux(a)) if a.aux_size == 12));
///     })
///     .unwrap();
/// ```
pub struct AuxProducer<M: RingMemory> {
    mem: M,
    mask: usize,
    overwrite: bool,
    /// `rb->aux_head`.
    head: usize,
    /// `rb->aux_watermark` (non-overwrite only).
    watermark: usize,
    /// `rb->aux_wakeup`: the last watermark boundary crossed.
    wakeup: usize,
}

/// One stretch of hardware writes, between `output_begin` and `output_end`.
#[must_use = "end the AUX handle with AuxProducer::output_end"]
#[derive(Debug)]
pub struct AuxHandle {
    /// Free-running position where this stretch starts (`handle->head`).
    start: usize,
    /// Bytes written so far.
    written: usize,
    /// Bytes available (non-overwrite: free space; overwrite: unlimited, the ring wraps).
    available: usize,
    flags: u64,
}

impl AuxHandle {
    /// Bytes the hardware may still write in this stretch.
    pub fn available(&self) -> usize {
        self.available - self.written
    }

    /// Free-running AUX position of the next byte.
    pub fn position(&self) -> usize {
        self.start.wrapping_add(self.written)
    }

    /// Record a condition (`perf_aux_output_flag`): TRUNCATED, PARTIAL, COLLISION or PMU format
    /// bits. OVERWRITE is refused ([`OutputError::AuxOverwriteFlag`]): the core sets it.
    pub fn flag(&mut self, flags: u64) -> Result<(), OutputError> {
        if flags & aux_flags::OVERWRITE != 0 {
            return Err(OutputError::AuxOverwriteFlag);
        }
        self.flags |= flags;
        Ok(())
    }
}

impl<M: RingMemory> AuxProducer<M> {
    /// The driver side of the AUX area of `mem`. `overwrite`: snapshot mode (the consumer
    /// mapped the AUX area read-only). `watermark`: bytes between wakeups in non-overwrite mode
    /// (0: half the area, the kernel's default).
    ///
    /// # Safety
    /// Only one `AuxProducer` may write this AUX area, and nobody else writes it.
    pub unsafe fn new(mem: M, overwrite: bool, watermark: usize) -> Result<Self, LayoutError> {
        let size = mem.size(Area::Aux);
        if size == 0 {
            return Err(LayoutError::NoArea);
        }
        let head = mem.position(Position::AuxHead).load(LOCAL);
        let watermark = if overwrite {
            0
        } else if watermark == 0 {
            size / 2
        } else {
            watermark.min(size)
        };
        Ok(AuxProducer { mask: size - 1, overwrite, head, watermark, wakeup: head, mem })
    }

    /// `perf_aux_output_begin`: start a stretch of hardware writes. Non-overwrite mode with no
    /// free space: [`OutputError::AuxNoSpace`].
    pub fn output_begin(&mut self) -> Result<AuxHandle, OutputError> {
        let size = self.mask + 1;
        let available = if self.overwrite {
            // No tail, no (A): the hardware free-runs over the ring.
            usize::MAX
        } else {
            // (A): the tail load before our data stores; pairs with the consumer's (D).
            let tail = self.mem.position(Position::AuxTail).load(A_TAIL_LOAD);
            let used = self.head.wrapping_sub(tail);
            if used < size {
                // CIRC_SPACE(head, tail, size)
                size - used - 1
            } else {
                0
            }
        };
        if available == 0 {
            return Err(OutputError::AuxNoSpace);
        }
        Ok(AuxHandle { start: self.head, written: 0, available, flags: 0 })
    }

    /// The hardware writes `bytes` at the handle's position (wrapping the area's end). More
    /// than the handle offers: [`OutputError::PastReservation`], nothing written.
    pub fn write(&mut self, handle: &mut AuxHandle, bytes: &[u8]) -> Result<(), OutputError> {
        if bytes.len() > handle.available() {
            return Err(OutputError::PastReservation { requested: bytes.len(), remaining: handle.available() });
        }
        let size = self.mask + 1;
        let mut pos = handle.position();
        let mut rest = bytes;
        while !rest.is_empty() {
            let off = pos & self.mask;
            let n = rest.len().min(size - off);
            // SAFETY: off + n <= size. In non-overwrite mode these bytes are free space (the
            // tail check (A) kept them clear of unread data); in overwrite mode the consumer
            // reads them only with atomic loads and validates (snapshot), per the protocol.
            unsafe { self.mem.write(Area::Aux, off, &rest[..n]) };
            pos = pos.wrapping_add(n);
            rest = &rest[n..];
        }
        handle.written += bytes.len();
        Ok(())
    }

    /// `perf_aux_output_end`: publish `size` bytes of the stretch and emit a `PERF_RECORD_AUX`
    /// into the data ring through `data` (written as `writer`). Returns the record emitted
    /// (`None` if the kernel would suppress it: size 0 and no flag but OVERWRITE) and whether
    /// the consumer should be woken.
    ///
    /// Errors: more than the stretch wrote (or, in overwrite mode, than the handle offers) is
    /// [`OutputError::PastReservation`], and nothing is published; any other error is the data
    /// ring's refusal of the `PERF_RECORD_AUX` (say [`OutputError::NoSpace`]): the stretch *is*
    /// published, and the record was dropped (and counted lost, as the data ring counts).
    pub fn output_end<D: RingMemory, H: Hooks<D>>(
        &mut self,
        handle: AuxHandle,
        size: usize,
        data: &Producer<D, H>,
        writer: &EventIdentity,
    ) -> Result<(Option<Aux>, bool), OutputError> {
        if size > handle.available || (!self.overwrite && size > handle.written) {
            return Err(OutputError::PastReservation { requested: size, remaining: handle.written });
        }
        let mut wakeup = handle.flags & aux_flags::TRUNCATED != 0;
        let mut flags = handle.flags;
        let offset;
        if self.overwrite {
            flags |= aux_flags::OVERWRITE;
            // The driver's head: the end of what it wrote.
            self.head = handle.start.wrapping_add(size);
            offset = self.head;
        } else {
            offset = self.head;
            self.head = self.head.wrapping_add(size);
        }
        let record = Aux {
            misc: 0,
            aux_offset: offset as u64,
            aux_size: size as u64,
            flags,
            sample_id: writer.sample_id.map(|(_, sid)| sid),
        };
        let emit = size != 0 || flags & !aux_flags::OVERWRITE != 0;
        // (B): the hardware's data stores before aux_head; pairs with the consumer's (C). (The
        // kernel leaves this to the driver; for software writes it is this release store.)
        self.mem.position(Position::AuxHead).store(self.head, B_HEAD_STORE);
        if !self.overwrite && self.watermark != 0 && self.head.wrapping_sub(self.wakeup) >= self.watermark {
            self.wakeup = self.head - self.head % self.watermark;
            wakeup = true;
        }
        if emit {
            let mut buf = [0u8; 32 + SampleId::size(crate::record::sample_type::SAMPLE_ID_BITS)];
            let ctx = DecodeContext {
                sample_type: writer.sample_id.map_or(0, |(st, _)| st),
                sample_id_all: writer.sample_id.is_some(),
                ..DecodeContext::new(Endian::NATIVE)
            };
            // The AUX body's codec alone, as the producer's LOST (see `encode_body`).
            let n = encode_body(types::AUX, &record, &ctx, &mut buf).unwrap_or(0);
            data.output(&buf[..n], writer)?;
        }
        Ok((emit.then_some(record), wakeup))
    }

    /// `rb->aux_head`.
    pub fn head(&self) -> usize {
        self.head
    }
}

/// What a snapshot found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxSnapshot {
    /// Free-running position of the first byte returned.
    pub start: usize,
    /// Bytes returned (oldest first).
    pub len: usize,
    /// Older data written since the previous snapshot was overwritten before this one.
    pub overwritten: bool,
}

/// The consumer's side of the AUX area: [`read`](AuxConsumer::read) for a writable AUX
/// mapping (frees what it read), [`snapshot`](AuxConsumer::snapshot) for an overwriting one.
///
/// ```
/// use perfring::aux::{AuxConsumer, AuxProducer};
/// use perfring::producer::{ProducerConfig, Producer, EventIdentity};
/// use perfring::memory::Mapping;
/// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
/// # #[repr(C, align(8))] struct Aux([u8; 16]);
/// # let (mut buf, mut aux) = (Buf([0; 4096 + 4096]), Aux([0; 16]));
/// let map = Mapping::new(&mut buf.0, 4096).unwrap().with_aux(&mut aux.0, None).unwrap();
/// // SAFETY: the only producers of the data ring and of the AUX area.
/// let data = unsafe { Producer::new(&map, ProducerConfig { overwrite: true, ..ProducerConfig::default() }) }.unwrap();
/// let mut driver = unsafe { AuxProducer::new(&map, true, 0) }.unwrap(); // snapshot mode
/// for chunk in [&b"0123456789"[..], &b"abcdefghij"[..]] {
///     let mut h = driver.output_begin().unwrap();
///     driver.write(&mut h, chunk).unwrap();
///     driver.output_end(h, chunk.len(), &data, &EventIdentity::ANONYMOUS).unwrap();
/// }
/// // 20 bytes went through a 16-byte area: the snapshot is the newest 16, flagged.
/// let mut out = [0u8; 16];
/// let snap = AuxConsumer::new(&map).unwrap().snapshot(&mut out);
/// assert_eq!(&out[..snap.len], b"456789abcdefghij");
/// assert!(snap.overwritten);
/// ```
pub struct AuxConsumer<M: RingMemory> {
    mem: M,
    mask: usize,
    /// Non-overwrite: our tail. AuxSnapshot mode: the head at the previous snapshot (perf's
    /// `mm->prev`).
    prev: usize,
}

impl<M: RingMemory> AuxConsumer<M> {
    /// The consumer side of the AUX area of `mem`.
    pub fn new(mem: M) -> Result<Self, LayoutError> {
        let size = mem.size(Area::Aux);
        if size == 0 {
            return Err(LayoutError::NoArea);
        }
        let prev = mem.position(Position::AuxTail).load(LOCAL);
        Ok(AuxConsumer { mask: size - 1, prev, mem })
    }

    /// Non-overwrite mode: copy `[aux_tail, aux_head)` (up to `out.len()` bytes) into `out`,
    /// then free it by storing `aux_tail`. Returns the free-running start and the length.
    pub fn read(&mut self, out: &mut [u8]) -> (usize, usize) {
        // (C): the head before the data; pairs with the producer's (B).
        let head = self.mem.position(Position::AuxHead).load(C_HEAD_LOAD);
        let avail = head.wrapping_sub(self.prev).min(self.mask + 1).min(out.len());
        let start = self.prev;
        self.copy(start, &mut out[..avail]);
        self.prev = start.wrapping_add(avail);
        // (D): our reads before the tail store; pairs with the producer's (A).
        self.mem.position(Position::AuxTail).store(self.prev, D_TAIL_STORE);
        (start, avail)
    }

    /// AuxSnapshot mode: copy the newest data written since the previous snapshot, oldest first,
    /// at most `aux_size` bytes (and at most `out.len()`), into `out`. Bytes the hardware
    /// overwrote while we copied are trimmed from the front (validated against `aux_head`
    /// re-read after the copy), so every byte returned is what was written there.
    pub fn snapshot(&mut self, out: &mut [u8]) -> AuxSnapshot {
        let size = self.mask + 1;
        // (C): the head before the data; pairs with the producer's (B).
        let head = self.mem.position(Position::AuxHead).load(C_HEAD_LOAD);
        let new = head.wrapping_sub(self.prev);
        let len = new.min(size).min(out.len());
        let mut overwritten = new > size;
        let start = head.wrapping_sub(len);
        self.copy(start, &mut out[..len]);
        // Whatever the hardware wrote after `head` overwrote the oldest bytes of our copy.
        crate::fences::fence(crate::fences::S4_SEQ_READ_END);
        let moved = self.mem.position(Position::AuxHead).load(C_HEAD_LOAD).wrapping_sub(head);
        let (start, len) = if moved == 0 {
            (start, len)
        } else {
            overwritten = true;
            let keep = (size.saturating_sub(moved)).min(len);
            out.copy_within(len - keep..len, 0);
            (head.wrapping_sub(keep), keep)
        };
        self.prev = head;
        AuxSnapshot { start, len, overwritten }
    }

    /// Copy `out.len()` bytes from free-running `start`, wrapping at the area's end. Every byte
    /// is an atomic word load: this consumer is safe to make over any memory, so it cannot rely
    /// on the producer (hardware, a peer, a snapshot-mode area read with [`AuxConsumer::read`])
    /// leaving the bytes alone while they are copied.
    fn copy(&self, start: usize, out: &mut [u8]) {
        let size = self.mask + 1;
        let mut pos = start;
        let mut done = 0;
        while done < out.len() {
            let off = pos & self.mask;
            let n = (out.len() - done).min(size - off);
            copy_atomic(&self.mem, off, &mut out[done..done + n]);
            pos = pos.wrapping_add(n);
            done += n;
        }
    }
}

/// Copy AUX bytes that the hardware may be overwriting: word-aligned atomic loads, with the
/// unaligned edges taken from the covering words.
fn copy_atomic<M: RingMemory>(mem: &M, off: usize, dst: &mut [u8]) {
    let mut word = [0u8; 8];
    let mut pos = off;
    let mut done = 0;
    while done < dst.len() {
        let base = pos & !7;
        let in_word = pos - base;
        let n = (8 - in_word).min(dst.len() - done);
        if mem.load_words(Area::Aux, base, &mut word) {
            dst[done..done + n].copy_from_slice(&word[in_word..in_word + n]);
        }
        pos += n;
        done += n;
    }
}
