//! [`Reader`]: the records of a perf.data file or stream, in file order or in time order, each
//! attributed to its event. Opening one is `open.rs`; reading the data section in file order
//! (COMPRESSED records decompressed, pipe-mode metadata taken in) is `file_order.rs`; perf's
//! time order is `time_order.rs`.

use perfring::record::{sample_type, types, RawRecord};

use crate::decompress::Decompressor;
use crate::file_header::Mode;
use crate::file_record::FileRecord;
use crate::loc::{Buf, Loc};
use crate::metadata::Metadata;
use crate::read_deliveries::{deliver, ReadDelivery, ReadValueTable};
use crate::source::Source;
use crate::time_order::{Order, Stub};
use crate::{PerfDataError, PIPE_HEADER_SIZE};

/// Reads records from a [`Source`]: [`Stream`](crate::Stream) (a file or pipe through bounded reads) or
/// [`Slice`](crate::Slice) (bytes in memory or a mapped file, zero-copy).
///
/// Records come in file order from [`Reader::next_record`]; after
/// [`Reader::time_ordered`], in perf's delivery order (`ordered_events.c`): records with a
/// time are queued; at each FINISHED_ROUND those up to the largest time seen before the
/// previous FINISHED_ROUND are delivered, stably sorted by time (file order among equal
/// times), and the rest at the end; perf's own records and records without a time are
/// delivered as they come.
#[derive(Debug)]
pub struct Reader<S> {
    pub(crate) src: S,
    pub(crate) meta: Metadata,
    pub(crate) decomp: Decompressor,
    pub(crate) decomp_offset: u64,
    pub(crate) order: Option<Order>,
    pub(crate) done: bool,
    pub(crate) unknown_ids: Option<usize>,
    pub(crate) warned_inconsistent: bool,
    /// Per id, the value of its last `PERF_SAMPLE_READ` counter (perf's `sid->period`).
    pub(crate) read_values: ReadValueTable,
    /// The deliveries of the record last returned.
    pub(crate) deliveries: Vec<ReadDelivery>,
}

impl<S: Source> Reader<S> {
    pub(crate) fn with_meta(src: S, meta: Metadata) -> Reader<S> {
        Reader {
            src,
            meta,
            decomp: Decompressor::default(),
            decomp_offset: 0,
            order: None,
            done: false,
            unknown_ids: None,
            warned_inconsistent: false,
            read_values: ReadValueTable::default(),
            deliveries: Vec::new(),
        }
    }

    /// Deliver records in perf's time order (see [`Reader`]) rather than file order. Memory:
    /// the records of two rounds, as perf.
    pub fn time_ordered(mut self) -> Self {
        self.order = Some(Order::new(self.meta.endian()));
        self
    }

    /// What the reader knows so far: header, events and ids, features, warnings (each record
    /// gives it too, [`FileRecord::metadata`]).
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The next record, or `None` at the end. After an error, `None`.
    // In line (the walk, `next_loc`, stays out of line): returned through memory, the
    // `FileRecord` was stored in pieces by this function and loaded back in 16-byte moves by the
    // caller's loop, each load waiting on a failed store-to-load forwarding (read::main's two
    // hottest instructions, 40 % of it; `make bench-data`'s file order 3.0x -> 4.3x).
    #[inline(always)]
    pub fn next_record(&mut self) -> Result<Option<FileRecord<'_>>, PerfDataError> {
        let loc = match self.next_loc() {
            Ok(Some(l)) => l,
            Ok(None) => return Ok(None),
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        // Only a SAMPLE of an event that samples READ delivers counters (one test for the rest).
        let reads = loc.header.type_ == types::SAMPLE
            && loc
                .event
                .and_then(|e| self.meta.events.layout(e))
                .is_some_and(|layout| layout.attr().sample_type & sample_type::READ != 0);
        if reads {
            let (mut deliveries, mut table) =
                (std::mem::take(&mut self.deliveries), std::mem::take(&mut self.read_values));
            deliver(&self.file_record(&loc, &[]), &self.meta.events, &mut table, &mut deliveries);
            (self.deliveries, self.read_values) = (deliveries, table);
        } else {
            self.deliveries.clear();
        }
        Ok(Some(self.file_record(&loc, &self.deliveries)))
    }

    /// The record at `loc`, with `deliveries`.
    #[inline(always)]
    fn file_record<'a>(&'a self, loc: &Loc, deliveries: &'a [ReadDelivery]) -> FileRecord<'a> {
        let buf = match loc.buf {
            Buf::Src => self.src.bytes(),
            Buf::Decomp => &self.decomp.buf,
            Buf::Store => self.order.as_ref().map_or(&[][..], |o| &o.store),
        };
        let tagged = loc.offset & (1 << 63) != 0;
        let offset = self.perf_offset(loc.offset & !(1 << 63));
        let raw = RawRecord {
            header: loc.header,
            bytes: &buf[loc.rec.clone()],
            offset,
            endian: self.meta.endian(),
            trailing: &buf[loc.trailing.clone()],
        };
        let event = loc.event.and_then(|e| self.meta.events.layout(e).map(|layout| (e, layout)));
        FileRecord { raw, decompressed: loc.buf == Buf::Decomp || tagged, event, metadata: &self.meta, deliveries }
    }

    /// A file offset as perf prints it: in pipe mode, counted from the end of the pipe header.
    pub(crate) fn perf_offset(&self, file_offset: u64) -> u64 {
        match self.meta.header.mode {
            Mode::Pipe => file_offset.saturating_sub(PIPE_HEADER_SIZE as u64),
            Mode::File => file_offset,
        }
    }

    fn next_loc(&mut self) -> Result<Option<Loc>, PerfDataError> {
        if self.order.is_none() {
            return self.next_raw();
        }
        // Each pass yields, or reads one record from the input, or ends: bounded by the input.
        loop {
            let order = self.order.as_mut().expect("checked above");
            if let Some(at) = order.pending.pop_front() {
                return Ok(Some(Stub::read(&order.store, at, order.endian).0));
            }
            if order.queue.is_empty() {
                order.store.clear();
            } else {
                order.compact();
            }
            if self.done {
                return Ok(None);
            }
            let next = self.next_raw()?;
            let Some(loc) = next else {
                self.done = true;
                if let Some(order) = self.order.as_mut() {
                    order.flush(u64::MAX);
                }
                continue;
            };
            let bytes = match loc.buf {
                Buf::Src => &self.src.bytes()[loc.rec.start..loc.trailing.end],
                Buf::Decomp => &self.decomp.buf[loc.rec.clone()],
                Buf::Store => &[][..],
            };
            let record = bytes.get(..loc.rec.len()).unwrap_or_default();
            let time = loc
                .event
                .and_then(|e| self.meta.events.time(loc.header, record, e))
                .filter(|&t| t != 0 && t != u64::MAX);
            let order = self.order.as_mut().expect("checked above");
            let round_end = loc.header.type_ == types::FINISHED_ROUND;
            if time.is_none() {
                if round_end {
                    order.flush(order.next_flush);
                    order.next_flush = order.max_time;
                }
                // Nothing is pending (the loop delivers that first): a record without a time
                // goes out now, from where it was read, uncopied.
                if order.pending.is_empty() {
                    return Ok(Some(loc));
                }
            }
            let at = order.store.len();
            let tagged = if loc.buf == Buf::Decomp { loc.offset | (1 << 63) } else { loc.offset };
            debug_assert_eq!(bytes.len(), loc.rec.len(), "a stored record carries no data after it");
            Stub::write(&mut order.store, &loc, tagged);
            order.store.extend_from_slice(&bytes[..loc.rec.len().min(bytes.len())]);
            match time {
                Some(t) => {
                    order.max_time = order.max_time.max(t);
                    order.live += Stub::SIZE + loc.rec.len();
                    order.queue.push((t, at));
                }
                None => order.pending.push_back(at),
            }
        }
    }
}
