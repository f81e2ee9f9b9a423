//! Writing a whole record in one call ([`Producer::output`]) and several under one publication
//! ([`Producer::batch`], [`BatchWriter`]).

use core::cell::Cell;

use super::{check_header, check_size, unlikely, EventIdentity, Hooks, NoHooks, OutputError, Producer};
use crate::fences::LOCAL;
use crate::memory::RingMemory;

impl<M: RingMemory, H: Hooks<M>> Producer<M, H> {
    /// Reserve, copy `record` (header included) and publish, in one call. Returns whether this
    /// write signalled a wakeup.
    ///
    /// Always inlined: called out of line, its prologue's register saves are stores that queue
    /// behind the record's in the store buffer, and a producer whose stores wait for cache lines
    /// the consumer holds is bound by that queue (`make bench`: `BENCHMARKS.md`, "Cross-core").
    #[inline(always)]
    pub fn output(&self, record: &[u8], writer: &EventIdentity) -> Result<bool, OutputError> {
        check_header(record)?;
        let mut handle = self.output_begin(record.len(), writer)?;
        handle.copy_in(record);
        Ok(handle.end())
    }

    /// [`BatchWriter::output`] when its fast path does not apply: the record as a nested writer.
    #[cold]
    #[inline(never)]
    pub(super) fn output_nested(&self, record: &[u8], writer: &EventIdentity) -> Result<(), OutputError> {
        self.output(record, writer).map(|_| ())
    }

    /// Write several records and publish `data_head` once: `f` runs inside one outer writer, and
    /// the final `put_handle` publishes everything written inside with one (B) store. Returns
    /// `f`'s result and whether a wakeup was signalled.
    ///
    /// `f` gets a [`BatchWriter`]: its [`BatchWriter::output`] reserves and copies a record
    /// without entering and leaving a writer of its own (the batch is the open writer), which
    /// makes a batched record cheaper than one written alone (`make bench-instructions`). Every
    /// other [`Producer`] method is reachable through it (it dereferences to the producer); a
    /// record written with [`Producer::output_begin`] inside the batch is a nested writer, the
    /// kernel's `nest` mechanism, and is published with the rest.
    ///
    /// Records written inside are published together, at the latest when `f` returns, and
    /// earlier where holding them back would stall the consumer: before the records the batch
    /// holds unpublished would exceed half the data area, and as soon as a record crosses the
    /// wakeup watermark (the batch then publishes and wakes, as the writer that crossed it would
    /// alone). A batch of any length therefore never holds more than half the ring from the
    /// consumer, and a consumer waiting on the watermark is woken when it would be without the
    /// batch. Each intermediate publication is the kernel's `put_handle` of the outermost writer
    /// followed by a new `get_handle` (two stores and a re-check), so it costs the same as
    /// ending the batch and opening another. Space freed by the consumer meanwhile is seen by
    /// the next reservation that needs it; still, end the batch when a write fails with
    /// [`OutputError::NoSpace`] rather than spin inside it. A panic in `f` still publishes.
    ///
    /// ```
    /// use perfring::producer::{ProducerConfig, EventIdentity};
    /// use perfring::{split, memory::Mapping};
    /// # #[repr(C, align(8))] struct Buf([u8; 4096 + 4096]);
    /// # let mut buf = Buf([0; 4096 + 4096]);
    /// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    /// let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
    /// let record = [9, 0, 0, 0, 0, 0, 8, 0]; // an empty SAMPLE
    /// let (written, _wakeup) = producer.batch(|p| {
    ///     for _ in 0..3 {
    ///         p.output(&record, &EventIdentity::ANONYMOUS).unwrap();
    ///         assert_eq!(consumer.available(), Ok(0), "nothing is published inside the batch");
    ///     }
    ///     3
    /// });
    /// // One data_head store published all three; the writer count is back to 0.
    /// assert_eq!((written, consumer.available(), producer.nest()), (3, Ok(24), 0));
    /// assert_eq!(consumer.for_each(&mut [0u8; 64], |_| {}), Ok(3));
    /// ```
    pub fn batch<R>(&self, f: impl FnOnce(&BatchWriter<'_, M, H>) -> R) -> (R, bool) {
        /// Publishes what the batch holds if `f` unwinds.
        struct Outer<'b, 'p, M: RingMemory, H: Hooks<M>>(&'b BatchWriter<'p, M, H>);
        impl<M: RingMemory, H: Hooks<M>> Drop for Outer<'_, '_, M, H> {
            fn drop(&mut self) {
                self.0.restore_enclosing();
                self.0.producer.put_handle(self.0.wakeup.get());
            }
        }
        self.get_handle();
        let batch = BatchWriter {
            producer: self,
            wakeup: Cell::new(self.wakeup_at.load(LOCAL)),
            base: Cell::new(self.head.load(LOCAL)),
            woke: Cell::new(false),
            enclosing: if self.watermark > self.size / 2 {
                Some((self.batch_limited.load(LOCAL), self.batch_end.load(LOCAL)))
            } else {
                None
            },
        };
        batch.limit_fast_path();
        let outer = Outer(&batch);
        let result = f(&batch);
        core::mem::forget(outer);
        batch.restore_enclosing();
        let woke = self.put_handle(batch.wakeup.get()) | batch.woke.get();
        (result, woke)
    }
}

/// The open writer of a [`Producer::batch`]: records written with [`BatchWriter::output`]
/// are published together when the batch ends. It dereferences to the [`Producer`], so
/// everything else (a [`Handle`](super::Handle) from [`Producer::output_begin`], [`Producer::lost_pending`],
/// ...) is at hand inside the batch.
pub struct BatchWriter<'p, M: RingMemory, H: Hooks<M> = NoHooks> {
    producer: &'p Producer<M, H>,
    /// The wakeup stamp the batch's open writer entered with (its `get_handle`), renewed at
    /// each intermediate publication.
    wakeup: Cell<usize>,
    /// `rb->head` when the batch opened or last published: what lies past it is held back.
    base: Cell<usize>,
    /// Whether an intermediate publication signalled a wakeup.
    woke: Cell<bool>,
    /// Where the batch bounds the fast path ([`BatchWriter::limit_fast_path`]): the enclosing
    /// batch's [`Producer::batch_limited`] and [`Producer::batch_end`] (a batch
    /// opened by a nested writer inside another batch), restored when this one ends.
    enclosing: Option<(u32, usize)>,
}

impl<M: RingMemory, H: Hooks<M>> core::ops::Deref for BatchWriter<'_, M, H> {
    type Target = Producer<M, H>;
    fn deref(&self) -> &Producer<M, H> {
        self.producer
    }
}

impl<M: RingMemory, H: Hooks<M>> BatchWriter<'_, M, H> {
    /// Reserve and copy `record` (header included), to be published when the batch ends:
    /// [`Producer::output`] without a writer of its own.
    ///
    /// The batch already holds `nest` raised, so the record needs no `get_handle`/`put_handle`
    /// pair: on the fast path (forward, not paused, fits by the cached tail, crosses no
    /// watermark, nothing lost to report) it is one reservation by compare-exchange and the
    /// copy. An interrupt's writer may still nest anywhere in it: it reserves past this
    /// record (or, before the compare-exchange, makes it fail), and the batch publishes both.
    /// Everything else — a full ring, a pause, a LOST record to write first, another mode —
    /// writes the record as a nested writer, with [`Producer::output`]'s errors. Nothing is
    /// visible to the consumer before the batch ends, whatever this returns.
    #[inline(always)]
    pub fn output(&self, record: &[u8], writer: &EventIdentity) -> Result<(), OutputError> {
        let p = self.producer;
        let size = record.len();
        check_size(size)?;
        check_header(record)?;
        let head = p.head.load(LOCAL);
        if !p.fast_path_takes(head, size) {
            unlikely();
            return self.output_general(record, writer);
        }
        if !p.reserve_fast(head, size) {
            // An interrupt's writer reserved first.
            unlikely();
            return self.output_general(record, writer);
        }
        p.put(head & p.mask, record);
        Ok(())
    }

    /// [`BatchWriter::output`] off its fast path: publish first if the record would take what
    /// the batch holds past half the ring, write the record as a nested writer, then publish if
    /// it crossed the wakeup watermark (it moved the stamp), so the consumer is woken now.
    #[cold]
    #[inline(never)]
    pub(super) fn output_general(&self, record: &[u8], writer: &EventIdentity) -> Result<(), OutputError> {
        let p = self.producer;
        let head = p.head.load(LOCAL);
        let held = if p.backward {
            self.base.get().wrapping_sub(head.wrapping_sub(record.len()))
        } else {
            head.wrapping_add(record.len()).wrapping_sub(self.base.get())
        };
        if held > p.size / 2 {
            self.publish();
        }
        let written = p.output_nested(record, writer);
        if p.wakeup_at.load(LOCAL) != self.wakeup.get() {
            self.publish();
        }
        written
    }

    /// Publish everything written so far and go on as a new batch: the outermost writer's
    /// `put_handle` (which wakes the consumer if the stamp moved since the batch's writer
    /// entered), then a new `get_handle`. Inside another writer (a batch opened by a nested
    /// writer) nothing is published, as in the kernel: the outer writer publishes.
    #[cold]
    #[inline(never)]
    pub(super) fn publish(&self) {
        let p = self.producer;
        if p.put_handle(self.wakeup.get()) {
            self.woke.set(true);
        }
        p.get_handle();
        self.wakeup.set(p.wakeup_at.load(LOCAL));
        self.base.set(p.head.load(LOCAL));
        self.limit_fast_path();
    }

    /// With a watermark above half the data area, the wakeup stamp does not stop the fast path
    /// before the batch holds half the ring: bound [`Producer::fast_end`] by the batch's
    /// publication point too (the fast path then needs no test of its own). Below it, nothing
    /// to do: the stamp is at most a watermark past where the consumer was last woken, which
    /// is not past where this batch opened.
    #[inline(always)]
    pub(super) fn limit_fast_path(&self) {
        if self.enclosing.is_some() {
            self.limit_fast_path_to_publish_at();
        }
    }

    /// [`BatchWriter::limit_fast_path`]'s work: set [`Producer::batch_end`], then lower
    /// [`Producer::fast_end`] to it (never raise it: a closed or nearer limit stands; the next
    /// refresh takes the batch's end into account).
    #[cold]
    #[inline(never)]
    pub(super) fn limit_fast_path_to_publish_at(&self) {
        let p = self.producer;
        let base = self.base.get();
        let end = if p.backward { base.wrapping_sub(p.size / 2) } else { base.wrapping_add(p.size / 2) };
        p.batch_end.store(end, LOCAL);
        p.batch_limited.store(1, LOCAL);
        p.lower_fast_end(end);
    }

    /// Give the enclosing batch (if any) its [`Producer::batch_end`] back, or lift the limit
    /// (the fast path's limit may then stay lower than it could be until the next refresh).
    #[inline(always)]
    pub(super) fn restore_enclosing(&self) {
        let p = self.producer;
        let Some((limited, end)) = self.enclosing else { return };
        p.batch_end.store(end, LOCAL);
        p.batch_limited.store(limited, LOCAL);
        if limited != 0 {
            p.lower_fast_end(end);
        }
    }
}
