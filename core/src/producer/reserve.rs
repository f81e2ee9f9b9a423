//! Reservation and publication: `perf_output_begin` (the fast path, the general path with
//! losses, watermarks and both directions), `perf_output_get_handle` / `put_handle` (the nest
//! protocol and barrier (B)), and the copies into the data area.

use super::{
    check_size, lost_record_size, unlikely, EventIdentity, Handle, Hooks, OutputError, PreemptPoint, Producer,
    FAST_PATH_CLOSED, LOST_ONE, OVERWRITE_OUTERMOST, OVERWRITE_WRITER,
};
use crate::fences::{fence, B_HEAD_STORE, LOCAL, S1_SEQ_WRITE_BEGIN, S2_SEQ_WRITE_END};
use crate::loom::{compiler_barrier, local_compare_exchange};
use crate::memory::{Area, Position, RingMemory};
use crate::record::{encode_body, types, DecodeContext, Endian, Lost, SampleId, LOST_BODY_SIZE};

impl<M: RingMemory, H: Hooks<M>> Producer<M, H> {
    /// Reserve `size` bytes for one record (`perf_output_begin`).
    ///
    /// `size` includes the 8-byte header the caller writes first; it must be a multiple of 8,
    /// at most [`MAX_RECORD_SIZE`](crate::record::MAX_RECORD_SIZE). If records were lost since the last successful reservation,
    /// a `PERF_RECORD_LOST` (with `writer`'s id and trailer) is written first, in the same
    /// reservation. Fill the handle with exactly `size` bytes, then drop it or call
    /// [`Handle::end`] to publish.
    #[inline]
    pub fn output_begin(&self, size: usize, writer: &EventIdentity) -> Result<Handle<'_, M, H>, OutputError> {
        check_size(size)?;
        // The fast path: forward, respecting the tail (what `perf record` maps), not paused, and
        // the record ends by `fast_end` (fits by the cached tail, crosses no watermark, nothing
        // lost to report). Everything else takes one out-of-line call. Both paths hand back
        // plain values (where the caller's `size` bytes go, after any LOST record the slow path
        // wrote, and the wakeup stamp), so the handle is built here, stays in registers, and has
        // `size` bytes remaining on both: a fixed-size record leaves nothing to check at the end.
        let head = self.head.load(LOCAL);
        let (off, wakeup) = if !self.fast_path_takes(head, size) {
            unlikely();
            self.output_begin_general(size, writer)?
        } else {
            // Enter after the test: an interrupt in between that reserves moves `rb->head`,
            // and the reservation below then fails and retries out of line.
            let nest = self.get_handle_in::<false>();
            self.preempt(PreemptPoint::AfterNestIncrement);
            let handle_wakeup = self.wakeup_at.load(LOCAL);
            let start = if self.reserve_fast(head, size) {
                head
            } else {
                // A nested writer reserved first.
                self.reserve_raced(size, nest, handle_wakeup)?
            };
            (start & self.mask, handle_wakeup)
        };
        Ok(Handle::at(self, off, size, wakeup))
    }

    /// `output_begin` for every other case: another mode, the ring paused, or a
    /// `PERF_RECORD_LOST` to write first. Returns the data offset where the caller's `size`
    /// bytes go and the opening wakeup stamp.
    #[inline(never)]
    pub(super) fn output_begin_general(
        &self,
        size: usize,
        writer: &EventIdentity,
    ) -> Result<(usize, usize), OutputError> {
        if self.mem.paused().load(LOCAL) {
            self.count_lost();
            return Err(OutputError::Paused);
        }
        let have_lost = self.lost_pending();
        let lost_size = lost_record_size(have_lost, writer);
        let total = size + lost_size;
        let (start, wakeup) = self.reserve(total)?;
        let mut handle = Handle::open(self, start, total, wakeup);
        if have_lost != 0 {
            let record = Lost {
                misc: 0,
                id: writer.id,
                lost: (self.lost.swap(self.other_mode(), LOCAL) / LOST_ONE) as u64,
                sample_id: writer.sample_id.map(|(_, v)| v),
            };
            let mut buf = [0u8; LOST_BODY_SIZE + SampleId::size(crate::record::sample_type::SAMPLE_ID_BITS)];
            let ctx = DecodeContext {
                sample_type: writer.sample_id.map_or(0, |(st, _)| st),
                sample_id_all: writer.sample_id.is_some(),
                ..DecodeContext::new(Endian::NATIVE)
            };
            // The LOST body's codec alone, not the encoder's dispatch over every type: a firmware
            // image links this record's code only.
            let n = encode_body(types::LOST, &record, &ctx, &mut buf).unwrap_or(0);
            debug_assert_eq!(n, lost_size);
            handle.copy_in(&buf[..n]);
        }
        self.refresh_fast_end();
        let (off, remaining, wakeup) = handle.into_parts();
        debug_assert_eq!(remaining, size);
        Ok((off, wakeup))
    }

    /// The fast path's reservation lost a race with a nested writer (already entered, with
    /// its wakeup stamp): reserve as the general path does, then reopen the fast path.
    #[cold]
    #[inline(never)]
    pub(super) fn reserve_raced(&self, total: usize, nest: u32, handle_wakeup: usize) -> Result<usize, OutputError> {
        let (start, _) = self.reserve_entered::<false, false>(total, nest, handle_wakeup)?;
        self.refresh_fast_end();
        Ok(start)
    }

    /// Set [`Producer::fast_end`] from the current space end, wakeup stamp and `lost` word.
    /// Closed again (relative to the current `rb->head`) at once while `lost` is nonzero: a
    /// backward or overwrite producer comes here on every reservation. Otherwise stored first,
    /// then the `lost` word re-read: a nested writer that counted a loss in between closed the
    /// path, and this store must not reopen it.
    pub(super) fn refresh_fast_end(&self) {
        if self.lost.load(LOCAL) != 0 {
            self.close_fast_path();
            return;
        }
        let limit = self.fast_limit();
        self.preempt(PreemptPoint::FastPathRefresh);
        self.fast_end.store(limit, LOCAL);
        compiler_barrier();
        if self.lost.load(LOCAL) != 0 {
            self.close_fast_path();
        }
    }

    /// Lower [`Producer::fast_end`] to `end` if that is nearer (never raise it). As in
    /// [`Producer::refresh_fast_end`], the `lost` word is read again after the store: a nested
    /// writer that counted a loss between the load and the store closed the path, and this
    /// store must not reopen it.
    #[cold]
    #[inline(never)]
    pub(super) fn lower_fast_end(&self, end: usize) {
        let head = self.head.load(LOCAL);
        let fast_end = self.fast_end.load(LOCAL);
        if (end.wrapping_sub(head) as isize) < (fast_end.wrapping_sub(head) as isize) {
            self.preempt(PreemptPoint::FastPathRefresh);
            self.fast_end.store(end, LOCAL);
            compiler_barrier();
            if self.lost.load(LOCAL) != 0 {
                self.close_fast_path();
            }
        }
    }

    /// The nearest of the space end, the wakeup stamp and an open batch's
    /// [`Producer::batch_end`], seen from `rb->head`.
    pub(super) fn fast_limit(&self) -> usize {
        let head = self.head.load(LOCAL);
        let nearer =
            |a: usize, b: usize| if (a.wrapping_sub(head) as isize) < (b.wrapping_sub(head) as isize) { a } else { b };
        let limit = nearer(self.space_end.load(LOCAL), self.wakeup_at.load(LOCAL));
        if self.batch_limited.load(LOCAL) != 0 {
            nearer(limit, self.batch_end.load(LOCAL))
        } else {
            limit
        }
    }

    /// Whether a record of `size` bytes at `head` (`rb->head` as just loaded) may take the fast
    /// path: not paused, and it ends by [`Producer::fast_end`].
    #[inline(always)]
    pub(super) fn fast_path_takes(&self, head: usize, size: usize) -> bool {
        !self.mem.paused().load(LOCAL) && (self.fast_end.load(LOCAL).wrapping_sub(head) as isize) >= size as isize
    }

    /// The fast path's reservation of `size` bytes at `head` (`rb->head` as loaded before the
    /// test): false, reserving nothing, if a nested writer moved `rb->head` since.
    #[inline(always)]
    pub(super) fn reserve_fast(&self, head: usize, size: usize) -> bool {
        self.preempt(PreemptPoint::AfterHeadLoad);
        if local_compare_exchange(&self.head, head, head.wrapping_add(size)).is_err() {
            return false;
        }
        compiler_barrier();
        self.preempt(PreemptPoint::AfterReserve);
        true
    }

    /// Send every writer down the general path until [`Producer::refresh_fast_end`] reopens
    /// the fast path: [`Producer::fast_end`] set [`FAST_PATH_CLOSED`] behind `rb->head`.
    #[inline(always)]
    pub(super) fn close_fast_path(&self) {
        self.fast_end.store(self.head.load(LOCAL).wrapping_sub(FAST_PATH_CLOSED), LOCAL);
    }

    /// Reserve `total` bytes as a writer: enter (`nest`), reserve, stamp the watermark. Returns
    /// where the reservation starts and the wakeup stamp the writer opened with.
    #[inline]
    pub(super) fn reserve(&self, total: usize) -> Result<(usize, usize), OutputError> {
        match (self.backward, self.overwrite) {
            (false, false) => self.reserve_in::<false, false>(total),
            (false, true) => self.reserve_in::<false, true>(total),
            (true, false) => self.reserve_in::<true, false>(total),
            (true, true) => self.reserve_in::<true, true>(total),
        }
    }

    /// [`Producer::reserve`] for one mode, known at compile time so its branches vanish.
    #[inline(always)]
    pub(super) fn reserve_in<const BACKWARD: bool, const OVERWRITE: bool>(
        &self,
        total: usize,
    ) -> Result<(usize, usize), OutputError> {
        if OVERWRITE && total > self.mask {
            // Would wrap onto itself: dropped and counted, like a full ring. (Without overwrite
            // the space check refuses it: the space is never above size - 1.)
            self.count_lost();
            return Err(OutputError::NoSpace);
        }
        let nest = self.get_handle_in::<OVERWRITE>();
        self.preempt(PreemptPoint::AfterNestIncrement);
        let handle_wakeup = self.wakeup_at.load(LOCAL);
        self.reserve_entered::<BACKWARD, OVERWRITE>(total, nest, handle_wakeup)
    }

    /// The reservation of [`Producer::reserve_in`] by a writer already entered (`nest` is the
    /// value before its increment, `handle_wakeup` its opening stamp).
    #[inline(always)]
    pub(super) fn reserve_entered<const BACKWARD: bool, const OVERWRITE: bool>(
        &self,
        total: usize,
        nest: u32,
        handle_wakeup: usize,
    ) -> Result<(usize, usize), OutputError> {
        let mut offset = self.head.load(LOCAL);
        let new_head = loop {
            self.preempt(PreemptPoint::AfterHeadLoad);
            if !OVERWRITE && !self.fits::<BACKWARD>(offset, total) && !self.reload_space::<BACKWARD>(offset, total) {
                self.count_lost();
                self.put_handle(handle_wakeup);
                return Err(OutputError::NoSpace);
            }
            let new = if BACKWARD { offset.wrapping_sub(total) } else { offset.wrapping_add(total) };
            if OVERWRITE && nest > 0 && !self.episode_fits::<BACKWARD>(new) {
                // In overwrite mode an open (interrupted) writer finishes its payload after
                // the nested ones; if the nested data made the in-flight span exceed the ring,
                // those late writes would overwrite the newer records. The kernel lets that
                // happen; perfring drops (and counts) the nested record instead, so a reader
                // never gets a torn record. (A deliberate difference, found by the simulator.)
                self.count_lost();
                self.put_handle(handle_wakeup);
                return Err(OutputError::NoSpace);
            }
            match local_compare_exchange(&self.head, offset, new) {
                Ok(_) => break new,
                // A nested writer reserved first: retry from its head.
                Err(current) => {
                    unlikely();
                    offset = current;
                }
            }
        };
        compiler_barrier();
        self.preempt(PreemptPoint::AfterReserve);

        // The record occupies [start, start + total) in both directions.
        let (start, written) = if BACKWARD { (new_head, new_head.wrapping_neg()) } else { (offset, new_head) };
        // Watermark: advance the stamp by one step when this writer's head is more than a
        // watermark past it. The kernel compares unsigned (`head - wakeup > watermark`); if an
        // interrupt between our reservation and this check advanced the stamp past our (older)
        // head, that difference wraps, the stamp gains a watermark on every later reservation
        // and every record wakes the reader from then on. perfring compares signed, so a stamp
        // ahead of this writer's head is left alone (a deliberate difference, found by the
        // simulator; see `watermark_stamp_never_runs_ahead_after_a_nested_crossing`). With the
        // stamp kept as `wakeup + watermark`, `head - wakeup > watermark` is `wakeup_at - head < 0`
        // (written so: the sign of one subtraction, no separate zero test).
        let at = self.wakeup_at.load(LOCAL);
        if (at.wrapping_sub(written) as isize) < 0 {
            self.wakeup_at.store(at.wrapping_add(self.watermark), LOCAL);
        }
        Ok((start, handle_wakeup))
    }

    /// `perf_output_get_handle`: enter a writer (raise `nest`); the outermost one of an
    /// overwrite ring also opens the write generation and the in-flight episode. Returns the
    /// `nest` value before entering (0: this is the outermost writer).
    #[inline(always)]
    pub(super) fn get_handle(&self) -> u32 {
        if self.overwrite {
            self.get_handle_in::<true>()
        } else {
            self.get_handle_in::<false>()
        }
    }

    /// [`Producer::get_handle`] for a mode known at compile time.
    #[inline(always)]
    pub(super) fn get_handle_in<const OVERWRITE: bool>(&self) -> u32 {
        let nest = self.nest.load(LOCAL);
        self.nest.store(if OVERWRITE && nest == 0 { OVERWRITE_OUTERMOST } else { nest + 1 }, LOCAL);
        compiler_barrier();
        if OVERWRITE && nest == 0 {
            self.write_gen_begin();
            self.episode.store(self.head.load(LOCAL), LOCAL);
        }
        nest
    }

    /// Overwrite mode: whether a reservation ending at `new` keeps everything reserved since the
    /// outermost writer opened within one ring size.
    #[inline(always)]
    pub(super) fn episode_fits<const BACKWARD: bool>(&self, new: usize) -> bool {
        let start = self.episode.load(LOCAL);
        let span = if BACKWARD { start.wrapping_sub(new) } else { new.wrapping_sub(start) };
        span <= self.size
    }

    /// `perf_output_put_handle`: leave the writer; the outermost one publishes `data_head`.
    /// Returns whether a wakeup was signalled.
    #[inline]
    pub(super) fn put_handle(&self, handle_wakeup: usize) -> bool {
        #[cfg(any(test, feature = "test-hooks"))]
        if H::LEGACY_PUT_HANDLE {
            return self.put_handle_legacy(handle_wakeup);
        }
        // P0: an inner writer never publishes and never wakes. The one test also sends the
        // outermost writer of an overwrite ring (`nest` carries [`OVERWRITE_WRITER`]) aside, so
        // the forward read-write path has no mode test here.
        let nest = self.nest.load(LOCAL);
        if nest <= 1 {
            return self.publish::<false>(handle_wakeup);
        }
        unlikely();
        if nest & !OVERWRITE_WRITER > 1 {
            self.nest.store(nest - 1, LOCAL);
            return false;
        }
        self.publish::<true>(handle_wakeup)
    }

    /// `put_handle` of the outermost writer (`nest` is 1, or [`OVERWRITE_OUTERMOST`] in
    /// overwrite mode): publish `data_head`, leave, wake if the stamp moved.
    #[inline(always)]
    pub(super) fn publish<const OVERWRITE: bool>(&self, handle_wakeup: usize) -> bool {
        loop {
            // P1: load rb->head after our nest increment (program order + barrier), so a head
            // published by an IRQ between them cannot be missed.
            compiler_barrier();
            let head = self.head.load(LOCAL);
            self.preempt(PreemptPoint::PutAfterHeadLoad);
            // P2/P3 (B): every record byte of this CPU's writers up to `head` before data_head;
            // pairs with (C).
            self.mem.position(Position::DataHead).store(head, B_HEAD_STORE);
            self.preempt(PreemptPoint::AfterHeadStore);
            // P4: publish the head *before* dropping nest, or an IRQ could publish a newer head
            // that our stale store would then hide.
            compiler_barrier();
            self.nest.store(0, LOCAL);
            self.preempt(PreemptPoint::AfterNestDecrement);
            // P5: re-check after dropping nest, to catch the last nested update.
            compiler_barrier();
            self.preempt(PreemptPoint::BeforeRecheck);
            if head == self.head.load(LOCAL) {
                break;
            }
            self.nest.store(if OVERWRITE { OVERWRITE_OUTERMOST } else { 1 }, LOCAL);
            if OVERWRITE {
                // A nested writer may have opened and closed the generation after P4: open it
                // again, or an interrupt's writer nesting in this one (which opens nothing)
                // would write while a reader's seqlock sees it even.
                compiler_barrier();
                self.write_gen_begin();
            }
        }
        if OVERWRITE {
            self.write_gen_end();
        }
        self.wake_if_moved(handle_wakeup)
    }

    /// The ordering before kernel commit 1b038c6e05ff (2019): `nest` is decremented before
    /// `data_head` is stored. An interrupt in between publishes a newer head, which this writer
    /// then overwrites with its older one: `data_head` goes backwards until the re-check
    /// repairs it.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(super) fn put_handle_legacy(&self, handle_wakeup: usize) -> bool {
        loop {
            let head = self.head.load(LOCAL);
            self.preempt(PreemptPoint::PutAfterHeadLoad);
            let nest = self.nest.load(LOCAL) - 1;
            if nest & !OVERWRITE_WRITER != 0 {
                self.nest.store(nest, LOCAL);
                return false;
            }
            self.nest.store(0, LOCAL);
            self.preempt(PreemptPoint::AfterNestDecrement);
            self.mem.position(Position::DataHead).store(head, B_HEAD_STORE);
            self.preempt(PreemptPoint::AfterHeadStore);
            self.preempt(PreemptPoint::BeforeRecheck);
            if head == self.head.load(LOCAL) {
                break;
            }
            self.nest.store(nest + 1, LOCAL);
            if self.overwrite {
                // As in `publish`: a nested writer may have closed the generation meanwhile.
                compiler_barrier();
                self.write_gen_begin();
            }
        }
        if self.overwrite {
            self.write_gen_end();
        }
        self.wake_if_moved(handle_wakeup)
    }

    /// Overwrite mode, outermost writer opening: make the write generation odd, before any data
    /// store. Readers of an overwrite ring race the producer by design; this seqlock lets them
    /// tell a stable copy from one a writer may have torn (see [`crate::backward`]). Already odd
    /// if an interrupt opened a writer between an outer writer's P4 and its generation bump.
    #[inline(always)]
    pub(super) fn write_gen_begin(&self) {
        let gen = self.mem.write_gen();
        gen.store(gen.load(LOCAL) | 1, LOCAL);
        // (S1): the odd generation before our data stores; pairs with the reader's (S4).
        fence(S1_SEQ_WRITE_BEGIN);
    }

    /// Overwrite mode, outermost writer done (data_head published): next even generation.
    #[inline(always)]
    pub(super) fn write_gen_end(&self) {
        let gen = self.mem.write_gen();
        // (S2): our data stores and data_head before the even generation; pairs with (S3).
        gen.store((gen.load(LOCAL) | 1).wrapping_add(1), S2_SEQ_WRITE_END);
    }

    /// P6: wake if the stamp moved since this writer's `get_handle`.
    #[inline(always)]
    pub(super) fn wake_if_moved(&self, handle_wakeup: usize) -> bool {
        if handle_wakeup != self.wakeup_at.load(LOCAL) {
            self.hooks.wakeup(self);
            true
        } else {
            false
        }
    }

    /// Copy `src` to data-area offset `off` (at most the data size; the end of the area when a
    /// record ended exactly there). Returns the offset after it. The common case is one compare
    /// and the copy, which compiles to moves when the length is known at the call site.
    #[inline(always)]
    pub(super) fn put(&self, off: usize, src: &[u8]) -> usize {
        let end = off + src.len();
        if end <= self.size {
            // SAFETY: off + len <= size; the range lies inside a reservation this CPU made and has
            // not published, so no other party reads or writes it (the consumer reads only below
            // data_head; the tail check (A) kept it clear of unread data).
            unsafe { self.mem.write(Area::Data, off, src) };
            end
        } else {
            self.put_wrapped(off, src)
        }
    }

    /// [`Producer::put`] for a copy that crosses the end of the data area.
    ///
    /// It cannot panic (no indexing), so the optimiser can tell a call to it does not unwind and
    /// need not keep an open `Handle` in memory around it.
    #[cold]
    #[inline(never)]
    pub(super) fn put_wrapped(&self, off: usize, src: &[u8]) -> usize {
        let Some((first, rest)) = src.split_at_checked(self.size.saturating_sub(off)) else { return off };
        if !first.is_empty() {
            // SAFETY: off + first.len() == size; inside this CPU's unpublished reservation (see
            // `put`).
            unsafe { self.mem.write(Area::Data, off, first) };
        }
        // SAFETY: the rest wraps to offset 0; src.len() <= total < size (a reservation never
        // exceeds size - 1), so the remainder fits; it is inside the same reservation.
        unsafe { self.mem.write(Area::Data, 0, rest) };
        rest.len()
    }

    /// Zero `n` bytes from `off` (see [`Producer::put`]). Out of line, taking and returning
    /// values rather than the handle, so the fast path never keeps a `Handle` in memory for it.
    #[cold]
    #[inline(never)]
    pub(super) fn put_zeros(&self, mut off: usize, mut n: usize) -> usize {
        const ZEROS: [u8; 64] = [0; 64];
        while n > 0 {
            let (chunk, _) = ZEROS.split_at(n.min(ZEROS.len()));
            off = self.put(off, chunk);
            n -= chunk.len();
        }
        off
    }
}
