//! [`Reader`]: the records of a perf.data file or stream, in file order or in time order, each
//! attributed to its event; COMPRESSED records decompressed; pipe-mode metadata taken in.

use std::collections::VecDeque;
#[cfg(feature = "mmap")]
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::ops::Range;

use perfring::record::{
    decode, types, Attr, AttributeError, DecodeContext, DecodeError, Endian, EventLayout, EventSet, FixedSample,
    Header, IdEntry, Record, RecordView, SampleError, SampleView, WalkedRecord,
};

use crate::decompress::Decompressor;
use crate::file_header::{u64_of, FileHeader, Mode};
use crate::metadata::{
    add_event, pipe_meta, read_features, read_file_meta, read_meta_before_data, FileAttr, Metadata, Prefix, Seekable,
    Tail,
};
use crate::perf_records::PerfRecord;
use crate::source::{Short, ShortOpaque, Slice, Source, Stream};
use crate::{features, Error, Warning, PIPE_HEADER_SIZE};

/// `PERF_RECORD_COMPRESSED2` (83): `{header; u64 data_size; data[]}` (newer perf).
pub const COMPRESSED2: u32 = types::COMPRESSED2;
/// `PERF_RECORD_COMPRESSED` (81): `{header; data[]}`.
pub const COMPRESSED: u32 = types::COMPRESSED;

/// One record, borrowed from the reader until the next call, with its header parsed once and
/// its event attributed. The reader's [`Metadata`] is reachable from it
/// ([`FileRecord::metadata`]): the events, ids, features and warnings can be read while the
/// record is held.
///
/// Read it through one of `perfring::record`'s three tiers, as a ring's records are
/// (`perfring-linux`'s `SessionRecord` has the same methods):
///
/// * [`sample`](FileRecord::sample): a SAMPLE's [`SampleView`] through its event's layout —
///   each field read when asked for, an absent one a bit test;
/// * [`fixed`](FileRecord::fixed): the fixed fields at the constant offsets of a `sample_type`
///   known when the tool is built ([`FixedSample`]), or [`Reader::event_set`]`.fixed::<ST>()`
///   to check every event once;
/// * [`decode`](FileRecord::decode): the complete [`Record`], every field of every type.
#[derive(Clone, Copy)]
pub struct FileRecord<'a> {
    /// Offset of the record as `perf report -D` prints it: its file offset in file mode; in
    /// pipe mode, from the end of the 16-byte pipe header (perf counts the stream's records from
    /// there). For a record that came out of a COMPRESSED record, that record's offset.
    /// ([`Error`]s give file offsets in both modes.)
    pub offset: u64,
    /// Whether the record came out of a COMPRESSED record.
    pub decompressed: bool,
    /// Its header.
    pub header: Header,
    /// The record, header included (`header.size` bytes).
    pub bytes: &'a [u8],
    /// The data that follows an AUXTRACE (71) or HEADER_TRACING_DATA (66) record, not
    /// counted in `header.size`; empty otherwise.
    pub trailing: &'a [u8],
    /// The event that wrote it (index into [`Reader::attrs`]) as perf attributes it; `None`
    /// for perf's own types (≥ 64), for files without events and for unknown ids.
    pub event: Option<usize>,
    /// The event's attr.
    pub attr: Option<&'a FileAttr>,
    /// The decoding context: the event's, or the first event's when there is none.
    pub context: DecodeContext,
    /// The event's layout (`None` with `event`).
    layout: Option<&'a EventLayout>,
    metadata: &'a Metadata,
    deliveries: &'a [ReadDelivery],
}

impl std::fmt::Debug for FileRecord<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRecord")
            .field("offset", &self.offset)
            .field("decompressed", &self.decompressed)
            .field("header", &self.header)
            .field("bytes", &self.bytes.len())
            .field("trailing", &self.trailing.len())
            .field("event", &self.event)
            .field("deliveries", &self.deliveries)
            .finish_non_exhaustive()
    }
}

/// One counter of a `PERF_SAMPLE_READ` sample, delivered as perf delivers it
/// (`session.c:deliver_sample_value`): to the event its id belongs to, with the period since
/// that id's previous value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadDelivery {
    /// The event the counter's id belongs to (index into the attrs).
    pub event: usize,
    /// The counter's id.
    pub id: u64,
    /// The counter's value in this sample.
    pub value: u64,
    /// `value` minus the value this id had in the previous sample that carried it (0 before the
    /// first): the period perf gives the sample it delivers for this counter.
    pub period: u64,
}

impl<'a> FileRecord<'a> {
    /// The record as a [`Walker`](perfring::record::Walker) hands one out — its header parsed
    /// (in the file's byte order), its bytes and the data that follows it — for the readers of
    /// `perfring::record` that take one ([`RecordRef`](perfring::record::RecordRef)), which
    /// then do not parse the header again. `offset` is the record's file offset.
    pub fn walked(&self) -> WalkedRecord<'a> {
        WalkedRecord {
            header: self.header,
            bytes: self.bytes,
            offset: usize::try_from(self.offset).unwrap_or(usize::MAX),
            endian: self.context.endian,
            trailing: self.trailing,
        }
    }

    /// A SAMPLE's fields through its event's layout ([`SampleView`]): each read when asked for,
    /// `None` exactly when the event does not write it. `None` for another record, for a record
    /// of no known event, and for a SAMPLE too short for its event's fixed fields
    /// ([`decode`](Self::decode) says why).
    #[inline]
    pub fn sample(&self) -> Option<SampleView<'a>> {
        let layout = self.layout?;
        if self.header.type_ != types::SAMPLE {
            return None;
        }
        layout.sample(&self.walked()).ok()
    }

    /// A SAMPLE's fixed fields (IDENTIFIER through PERIOD) at the constant offsets of
    /// `SAMPLE_TYPE`, the `sample_type` its event was recorded with
    /// ([`EventLayout::fixed_sample`]): each field one load. A typed error if this is not a
    /// SAMPLE of a known event with that `sample_type`.
    #[inline]
    pub fn fixed<const SAMPLE_TYPE: u64>(&self) -> Result<FixedSample<'a, SAMPLE_TYPE>, SampleError> {
        match self.layout {
            Some(layout) => layout.fixed_sample(&self.walked()),
            None => Err(SampleError::Attribute(self.unattributed())),
        }
    }

    /// Why the record has no event: perf's attribution, again, for its error.
    #[cold]
    fn unattributed(&self) -> AttributeError {
        if self.header.type_ == 0 || self.header.type_ >= types::HEADER_ATTR {
            return AttributeError::NotAnEventRecord { type_: self.header.type_ };
        }
        match self.metadata.events.set().attribute(&self.walked()) {
            Err(e) => e,
            // (Attributed now: the file has no events, or this is another record's copy.)
            Ok(_) => AttributeError::NoEvents,
        }
    }

    /// The values perf orders and attributes any record by — time, id, stream id, cpu,
    /// pid/tid — from a SAMPLE's fields or another record's `sample_id` trailer
    /// ([`RecordView`]); `None` for a record of no known event.
    pub fn view(&self) -> Option<RecordView<'a>> {
        self.layout.map(|layout| layout.record(self.bytes))
    }

    /// The complete decode (kernel types; perf's own types are [`Record::Unknown`]), by the
    /// record's event's context (the first event's for a record of none), its header not
    /// parsed again.
    #[inline]
    pub fn decode(&self) -> Result<Record<'a>, DecodeError> {
        decode(&self.walked(), &self.context)
    }

    /// Decode a perf-only record (ID_INDEX, THREAD_MAP, …) into a typed value; `Ok(None)`
    /// for kernel types.
    pub fn perf_record(&self) -> Result<Option<PerfRecord<'a>>, Error> {
        PerfRecord::parse(self.bytes, self.trailing, self.context.endian, self.offset)
    }

    /// What the reader knows so far: the events and their ids, the features, the warnings.
    pub fn metadata(&self) -> &'a Metadata {
        self.metadata
    }

    /// For a SAMPLE whose event samples `PERF_SAMPLE_READ`: its counters as perf delivers
    /// them, one per counter whose id an event lists and whose period is not 0, in the
    /// record's order (a group: the leader first). perf's report and script take these, not the
    /// SAMPLE itself: each is a sample of its own event, with its own period. Empty for every
    /// other record. (Kept per id across the file, as perf 6.1 keeps `sid->period`.)
    pub fn read_deliveries(&self) -> &'a [ReadDelivery] {
        self.deliveries
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Buf {
    Src,
    Decomp,
    Store,
}

#[derive(Debug, Clone)]
struct Loc {
    buf: Buf,
    rec: Range<usize>,
    trailing: Range<usize>,
    offset: u64,
    header: Header,
    event: Option<usize>,
}

/// The round buffer of time order. A record waiting for its turn is copied into `store` behind
/// a [`Stub`] (what its `Loc` needs besides the bytes); the queue and the pending list hold
/// store positions, so sorting moves 16 bytes per record and the round's memory is its bytes
/// and 16 + 24 bytes a record.
#[derive(Debug)]
struct Order {
    /// Each queued or pending record: its stub, its bytes, the data that follows it.
    store: Vec<u8>,
    /// Timed kernel records not yet delivered: (time, store position). Positions grow with
    /// arrival (compaction keeps their order), so sorting by the pair is perf's stable sort.
    queue: Vec<(u64, usize)>,
    /// Store positions of the records to deliver, in order.
    pending: VecDeque<usize>,
    /// perf's `next_flush`: a round's end delivers the queued records up to this time.
    next_flush: u64,
    /// perf's `max_timestamp`: the largest time queued so far.
    max_time: u64,
    /// Bytes of the queued records, stubs included (kept as they come and go).
    live: usize,
    /// The file's byte order (the stored records' headers are read in it).
    endian: Endian,
}

/// What a stored record's `Loc` needs besides its bytes, in native order before them: its
/// offset (tagged) and its event. Its header is read from its bytes again (in the file's
/// order). Only kernel records with a time and FINISHED_ROUND are stored, and neither carries
/// data after it (only AUXTRACE and HEADER_TRACING_DATA do, which have no time and go out
/// uncopied), so a stored record is its header's size.
struct Stub;

impl Stub {
    const SIZE: usize = 16;

    /// The stub of `loc` (offset tagged).
    fn write(store: &mut Vec<u8>, loc: &Loc, offset: u64) {
        let mut b = [0u8; Self::SIZE];
        b[..8].copy_from_slice(&offset.to_ne_bytes());
        // (Events are counted by the file's attrs: far fewer than u32::MAX.)
        let event = loc.event.and_then(|e| u32::try_from(e).ok()).unwrap_or(u32::MAX);
        b[8..12].copy_from_slice(&event.to_ne_bytes());
        store.extend_from_slice(&b);
    }

    /// The `Loc` of the record stored at `at` (in `endian`), and the end of its bytes.
    fn read(store: &[u8], at: usize, endian: Endian) -> (Loc, usize) {
        let b = store.get(at..at + Self::SIZE).unwrap_or_default();
        let offset = u64::from_ne_bytes(b.get(..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]));
        let event = u32::from_ne_bytes(b.get(8..12).and_then(|b| b.try_into().ok()).unwrap_or([0xff; 4]));
        let start = at + Self::SIZE;
        let header = Header::parse(store.get(start..).unwrap_or_default(), endian).unwrap_or(Header {
            type_: 0,
            misc: 0,
            size: 0,
        });
        let rec = start..start + header.size as usize;
        let event = (event != u32::MAX).then_some(event as usize);
        let end = rec.end;
        (Loc { buf: Buf::Store, trailing: end..end, rec, offset, header, event }, end)
    }
}

impl Order {
    fn new(endian: Endian) -> Order {
        Order {
            store: Vec::new(),
            queue: Vec::new(),
            pending: VecDeque::new(),
            next_flush: 0,
            max_time: 0,
            live: 0,
            endian,
        }
    }

    /// Deliver the queued records with a time up to `limit`, in time order (stable).
    fn flush(&mut self, limit: u64) {
        self.queue.sort(); // (the keys are unique; the stable sort finds the per-CPU runs a round is made of)
        let n = self.queue.partition_point(|&(t, _)| t <= limit);
        for (_, at) in self.queue.drain(..n) {
            let (_, end) = Stub::read(&self.store, at, self.endian);
            self.live -= end - at;
            self.pending.push_back(at);
        }
    }

    /// With nothing pending, move the queued records' bytes to the front of the store, in
    /// place, once the delivered records' bytes are at least half the queued ones' (and 64 KiB):
    /// each compaction moves no more than twice what was delivered since the last, and the
    /// store stays within ~1.5 times the queued bytes (the queue carries over from round to
    /// round).
    fn compact(&mut self) {
        let dead = self.store.len() - self.live;
        if dead < (1 << 16) || dead < self.live / 2 {
            return;
        }
        // Moved in the queue's order, positions stay consistent with arrival among equal
        // times (the queue is time-sorted records, then later arrivals; or arrival order).
        // That is safe when every queued record lies past where the queued bytes will end
        // (the usual case: the records carried over are the last round's); otherwise they are
        // moved in store order, which positions only ever move down in.
        let first = self.queue.iter().map(|&(_, at)| at).min().unwrap_or(0);
        if first < self.live {
            self.queue.sort_unstable_by_key(|&(_, at)| at);
        }
        let mut to = 0;
        for (_, at) in &mut self.queue {
            let (_, end) = Stub::read(&self.store, *at, self.endian);
            self.store.copy_within(*at..end, to);
            (*at, to) = (to, to + (end - *at));
        }
        self.store.truncate(to);
    }
}

/// The last `PERF_SAMPLE_READ` value of each registered id (perf's `sid->period`), kept by
/// the id's slot in the event set's id table ([`EventSet::id_slot`]): one load and one store
/// per counter, no map. Each slot holds `(id, value)`, so that when the id table moves into
/// larger storage (pipe mode: ids registered as attrs arrive) the values follow their ids to
/// their new slots ([`follow`](Self::follow)); the table only ever grows, so a capacity of its
/// own different from the id table's says that it moved.
#[derive(Debug, Default)]
struct ReadValueTable {
    /// By slot: the id whose value it holds (0: none yet) and that value.
    slots: Vec<(u64, u64)>,
}

impl ReadValueTable {
    /// Lay the values out for `events`' id table as it is now (a no-op unless it moved).
    #[inline(always)]
    fn follow(&mut self, events: &crate::attribution::Events) {
        let capacity = events.set().id_capacity();
        if self.slots.len() == capacity {
            return;
        }
        let old = core::mem::replace(&mut self.slots, vec![(0, 0); capacity]);
        for (id, value) in old.into_iter().filter(|&(id, _)| id != 0) {
            if let Some((slot, _)) = events.id_slot(id) {
                if let Some(s) = self.slots.get_mut(slot) {
                    *s = (id, value);
                }
            }
        }
    }

    /// Store `value` as `id`'s last (at `slot`, its slot) and return the period since the
    /// previous one (from 0 for the first, as perf's `sid->period` starts).
    #[inline]
    fn replace(&mut self, slot: usize, id: u64, value: u64) -> u64 {
        let Some(s) = self.slots.get_mut(slot) else { return value };
        let previous = if s.0 == id { s.1 } else { 0 };
        *s = (id, value);
        value.wrapping_sub(previous)
    }
}

/// Reads records from a [`Source`]: [`Stream`] (a file or pipe through bounded reads) or
/// [`Slice`] (bytes in memory or a mapped file, zero-copy).
///
/// Records come in file order from [`Reader::next_record`]; after
/// [`Reader::time_ordered`], in perf's delivery order (`ordered_events.c`): records with a
/// time are queued; at each FINISHED_ROUND those up to the largest time seen before the
/// previous FINISHED_ROUND are delivered, stably sorted by time (file order among equal
/// times), and the rest at the end; perf's own records and records without a time are
/// delivered as they come.
#[derive(Debug)]
pub struct Reader<S> {
    src: S,
    meta: Metadata,
    decomp: Decompressor,
    decomp_offset: u64,
    order: Option<Order>,
    done: bool,
    unknown_ids: Option<usize>,
    warned_inconsistent: bool,
    /// Per id, the value of its last `PERF_SAMPLE_READ` counter (perf's `sid->period`).
    read_values: ReadValueTable,
    /// The deliveries of the record last returned.
    deliveries: Vec<ReadDelivery>,
}

/// A memory-mapped perf.data file; [`MappedFile::reader`] reads it without copying (feature
/// `mmap`, on by default).
#[cfg(feature = "mmap")]
#[derive(Debug)]
pub struct MappedFile {
    map: memmap2::Mmap,
}

#[cfg(feature = "mmap")]
impl MappedFile {
    /// Map `file`.
    ///
    /// # Safety
    ///
    /// As for [`memmap2::Mmap::map`]: the file must not be modified or truncated while the
    /// mapping lives (by this or another process). A file rewritten under the mapping is
    /// undefined behaviour; one truncated under it kills the process with SIGBUS when a
    /// record past the new end is read.
    pub unsafe fn map(file: &File) -> Result<MappedFile, Error> {
        // SAFETY: the caller promises the file is neither modified nor truncated while mapped.
        let map = unsafe { crate::mmap::map(file) }.map_err(|error| Error::Io { offset: 0, error })?;
        Ok(MappedFile { map })
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// A reader over the mapping (either mode).
    pub fn reader(&self) -> Result<Reader<Slice<'_>>, Error> {
        Reader::from_bytes(&self.map)
    }
}

impl<R: Read + Seek> Reader<Stream<BufReader<R>>> {
    /// Read a file (either mode, detected from the header) through bounded buffered reads:
    /// the metadata by seeking, then the data section read ahead in chunks (a record is
    /// handed out where it lies in the read-ahead buffer).
    pub fn new(mut inner: R) -> Result<Self, Error> {
        let start = inner.stream_position().map_err(|error| Error::Io { offset: 0, error })?;
        let len = inner.seek(SeekFrom::End(0)).map_err(|error| Error::Io { offset: 0, error })?.saturating_sub(start);
        inner.seek(SeekFrom::Start(start)).map_err(|error| Error::Io { offset: 0, error })?;
        let mut prefix = [0u8; 16];
        read_prefix(&mut inner, &mut prefix)?;
        let (endian, size) = FileHeader::prefix(&prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Ok(Reader::with_meta(Stream::new(BufReader::new(inner), 16, None), pipe_meta(endian)));
        }
        let mut head = vec![0u8; size as usize];
        head[..16].copy_from_slice(&prefix);
        let have = 16 + read_up_to(&mut inner, &mut head[16..])?;
        let header = FileHeader::parse(&head[..have])?;
        let meta = read_file_meta(&mut Seekable::new(&mut OffsetBy(&mut inner, start), len), header)?;
        let (data_start, data_end) = meta.data;
        inner.seek(SeekFrom::Start(start + data_start)).map_err(|error| Error::Io { offset: data_start, error })?;
        let stream = Stream::file(inner, data_start, data_end);
        Ok(Reader::with_meta(stream, meta))
    }
}

impl<R: Read> Reader<Stream<BufReader<R>>> {
    /// Read a pipe-mode stream (`perf record -o -`) from any [`Read`] (buffered here): attrs
    /// and features arrive as records and are taken in as they come. A file-mode header is
    /// [`Error::BadHeaderSize`]; [`Reader::from_read`] takes either mode.
    pub fn from_pipe(inner: R) -> Result<Self, Error> {
        let mut inner = BufReader::with_capacity(1 << 16, inner);
        let mut prefix = [0u8; 16];
        read_prefix(&mut inner, &mut prefix)?;
        let (endian, size) = FileHeader::prefix(&prefix)?;
        if size != PIPE_HEADER_SIZE as u64 {
            return Err(Error::BadHeaderSize(size));
        }
        Ok(Reader::with_meta(Stream::new(inner, 16, None), pipe_meta(endian)))
    }

    /// Read either mode from any [`Read`], seekable or not (stdin, a socket, a decompressor),
    /// the mode detected from the header. Pipe mode as [`Reader::from_pipe`]. File mode is read
    /// forward, as perf writes it: the header, the attrs and ids before the data section (held
    /// in memory), the records one at a time, and, once [`Reader::next_record`] has returned
    /// `None`, the feature sections after the data section ([`Reader::features`] is empty
    /// until then). A file with a section where a stream cannot go back to is
    /// [`Error::NeedsSeekableInput`].
    pub fn from_read(inner: R) -> Result<Self, Error> {
        let mut inner = BufReader::with_capacity(1 << 16, inner);
        let mut prefix = [0u8; 16];
        read_prefix(&mut inner, &mut prefix)?;
        let (endian, size) = FileHeader::prefix(&prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Ok(Reader::with_meta(Stream::new(inner, 16, None), pipe_meta(endian)));
        }
        let mut head = prefix.to_vec();
        let want = size.saturating_sub(16).min(crate::HEADER_SIZE as u64);
        (&mut inner).take(want).read_to_end(&mut head).map_err(|error| Error::Io { offset: 16, error })?;
        let header = FileHeader::parse(&head)?;
        // The bytes before the data section (attrs and ids): memory follows what arrives.
        let data_start = header.data.offset;
        if data_start < head.len() as u64 {
            return Err(Error::NeedsSeekableInput { what: "a data section inside the header", offset: data_start });
        }
        let before = data_start - head.len() as u64;
        let at = head.len() as u64;
        (&mut inner).take(before).read_to_end(&mut head).map_err(|error| Error::Io { offset: at, error })?;
        if (head.len() as u64) < data_start {
            let have = head.len() as u64;
            return Err(Error::Truncated {
                what: "the bytes before the data section",
                offset: 0,
                need: data_start,
                have,
            });
        }
        let meta = read_meta_before_data(&mut Prefix { bytes: head }, header, true)?;
        let end = meta.data.1;
        let stream = Stream::new(inner, data_start, (end != u64::MAX).then_some(end));
        Ok(Reader::with_meta(stream, meta))
    }
}

impl<'a> Reader<Slice<'a>> {
    /// Read a whole file held in memory (either mode), zero-copy.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        let prefix: &[u8; 16] = bytes.get(..16).and_then(|p| p.try_into().ok()).ok_or(Error::Truncated {
            what: "perf_file_header",
            offset: 0,
            need: 16,
            have: bytes.len() as u64,
        })?;
        let (endian, size) = FileHeader::prefix(prefix)?;
        if size == PIPE_HEADER_SIZE as u64 {
            return Ok(Reader::with_meta(Slice::new(bytes, 16, bytes.len(), false), pipe_meta(endian)));
        }
        let header = FileHeader::parse(bytes)?;
        let meta = read_file_meta(&mut &bytes[..], header)?;
        let (start, end) = meta.data;
        Ok(Reader::with_meta(Slice::new(bytes, start as usize, end as usize, true), meta))
    }
}

pub(crate) fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, Error> {
    let mut have = 0;
    while have < buf.len() {
        match r.read(&mut buf[have..]) {
            Ok(0) => break,
            Ok(n) => have += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(Error::Io { offset: have as u64, error }),
        }
    }
    Ok(have)
}

pub(crate) fn read_prefix(r: &mut impl Read, prefix: &mut [u8; 16]) -> Result<(), Error> {
    let have = read_up_to(r, prefix)?;
    if have < 16 {
        return Err(Error::Truncated { what: "perf_file_header", offset: 0, need: 16, have: have as u64 });
    }
    Ok(())
}

/// A seekable reader whose file starts at `.1`.
struct OffsetBy<'r, R>(&'r mut R, u64);

impl<R: Read> Read for OffsetBy<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Seek> Seek for OffsetBy<'_, R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        match pos {
            SeekFrom::Start(o) => Ok(self.0.seek(SeekFrom::Start(o.saturating_add(self.1)))? - self.1),
            other => Ok(self.0.seek(other)?.saturating_sub(self.1)),
        }
    }
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
        self.order = Some(Order::new(self.endian()));
        self
    }

    /// What the reader knows so far: header, events and ids, features, warnings (each record
    /// gives it too, [`FileRecord::metadata`]).
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The file header (pipe mode: the 16-byte one, sections zero).
    pub fn header(&self) -> &FileHeader {
        self.meta.header()
    }

    /// File or pipe mode.
    pub fn mode(&self) -> Mode {
        self.meta.mode()
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.meta.endian()
    }

    /// The events and their ids as a `perfring::record` event set (pipe mode: those read so
    /// far): for [`EventSet::fixed`] (every event checked once against a compile-time
    /// `sample_type`) and the other readers that attribute a record themselves.
    pub fn event_set(&self) -> &EventSet<Vec<EventLayout>, Vec<IdEntry>> {
        self.meta.events.set()
    }

    /// The events (pipe mode: those whose HEADER_ATTR has been read so far).
    pub fn attrs(&self) -> &[FileAttr] {
        self.meta.attrs()
    }

    /// The feature sections (pipe mode: the HEADER_FEATURE records read so far; a file read
    /// forward by [`Reader::from_read`]: once the records are), by bit, as bytes;
    /// [`crate::Feature::parse`] decodes them.
    pub fn features(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        self.meta.features()
    }

    /// One feature section's bytes.
    pub fn feature(&self, bit: u32) -> Option<&[u8]> {
        self.meta.feature(bit)
    }

    /// One feature section decoded; `None` if absent.
    pub fn feature_value(&self, bit: u32) -> Option<Result<features::Feature, Error>> {
        self.meta.feature_value(bit)
    }

    /// What perf would have warned about so far.
    pub fn warnings(&self) -> &[Warning] {
        self.meta.warnings()
    }

    /// The data section as read, `[start, end)` (pipe mode: `end` is `u64::MAX`).
    pub fn data_range(&self) -> (u64, u64) {
        self.meta.data_range()
    }

    /// The decoding context of event `event`.
    pub fn context(&self, event: usize) -> Option<DecodeContext> {
        self.meta.context(event)
    }

    /// The next record, or `None` at the end. After an error, `None`.
    pub fn next_record(&mut self) -> Result<Option<FileRecord<'_>>, Error> {
        let loc = match self.next_loc() {
            Ok(Some(l)) => l,
            Ok(None) => return Ok(None),
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        self.deliver_read_values(&loc);
        Ok(Some(self.view(loc)))
    }

    /// perf's delivery of a `PERF_SAMPLE_READ` sample's counters (`deliver_sample_value`): per
    /// counter whose id an event lists, the period since that id's previous value; none with a
    /// period of 0.
    fn deliver_read_values(&mut self, loc: &Loc) {
        self.deliveries.clear();
        if loc.header.type_ != types::SAMPLE {
            return;
        }
        let Some(layout) = loc.event.and_then(|event| self.meta.events.layout(event)) else { return };
        if layout.context().sample_type & perfring::record::sample_type::READ == 0 {
            return;
        }
        let bytes = match loc.buf {
            Buf::Src => &self.src.bytes()[loc.rec.clone()],
            Buf::Decomp => &self.decomp.buf[loc.rec.clone()],
            Buf::Store => self.order.as_ref().map_or(&[][..], |o| &o.store[loc.rec.clone()]),
        };
        // The READ counters where they lie (the header, parsed once, not read again; the fields
        // after READ not walked). A SAMPLE whose block does not fit delivers nothing, as one
        // perf cannot parse.
        let Ok(counters) = layout.read_counters(&self.meta.events.walked(loc.header, bytes)) else { return };
        let events = &self.meta.events;
        let table = &mut self.read_values;
        table.follow(events);
        for counter in counters {
            let Some(id) = counter.id else { continue };
            let Some((slot, event)) = events.id_slot(id) else { continue };
            let period = table.replace(slot, id, counter.value);
            if period != 0 {
                self.deliveries.push(ReadDelivery { event, id, value: counter.value, period });
            }
        }
    }

    fn view(&self, loc: Loc) -> FileRecord<'_> {
        let buf = match loc.buf {
            Buf::Src => self.src.bytes(),
            Buf::Decomp => &self.decomp.buf,
            Buf::Store => self.order.as_ref().map_or(&[][..], |o| &o.store),
        };
        let ctx_event = loc.event.or(if self.meta.attrs.is_empty() { None } else { Some(0) });
        let context =
            ctx_event.and_then(|e| self.meta.events.context(e)).copied().unwrap_or(DecodeContext::new(self.endian()));
        let mut record = FileRecord {
            offset: loc.offset,
            decompressed: loc.buf == Buf::Decomp || (loc.buf == Buf::Store && loc.offset & (1 << 63) != 0),
            header: loc.header,
            bytes: &buf[loc.rec],
            trailing: &buf[loc.trailing],
            event: loc.event,
            attr: loc.event.and_then(|e| self.meta.attrs.get(e)),
            context,
            layout: loc.event.and_then(|e| self.meta.events.layout(e)),
            metadata: &self.meta,
            deliveries: &self.deliveries,
        }
        .fix_offset();
        record.offset = self.perf_offset(record.offset);
        record
    }

    /// A file offset as perf prints it: in pipe mode, counted from the end of the pipe header.
    fn perf_offset(&self, file_offset: u64) -> u64 {
        match self.meta.header.mode {
            Mode::Pipe => file_offset.saturating_sub(PIPE_HEADER_SIZE as u64),
            Mode::File => file_offset,
        }
    }

    fn next_loc(&mut self) -> Result<Option<Loc>, Error> {
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

    fn short(&self, what: &'static str, offset: u64, need: u64, s: Short) -> Error {
        if s.at_limit {
            Error::OutsideDataSection { what, offset, size: need, data_end: self.meta.data.1 }
        } else {
            Error::Truncated { what, offset, need, have: s.have }
        }
    }

    fn take(&mut self, what: &'static str, offset: u64, n: u64) -> Result<Range<usize>, Error> {
        match self.src.take(n)? {
            Ok(r) => Ok(r),
            Err(ShortOpaque(s)) => Err(self.short(what, offset, n, s)),
        }
    }

    /// The next record in file order (decompressed records after their COMPRESSED record).
    fn next_raw(&mut self) -> Result<Option<Loc>, Error> {
        let endian = self.endian();
        if self.done {
            return Ok(None);
        }
        let pending = self.decomp.pending();
        if let Some(header) = Header::parse(pending, endian) {
            let size = usize::from(header.size);
            if size < Header::SIZE {
                return Err(Error::BadRecordSize { offset: self.decomp_offset, size: header.size });
            }
            if size <= pending.len() {
                let start = self.decomp.pos;
                self.decomp.pos += size;
                let rec = start..start + size;
                let found = self.meta.events.attribute(header, &self.decomp.buf[rec.clone()]);
                let event = self.note(found, self.decomp_offset);
                return Ok(Some(Loc {
                    buf: Buf::Decomp,
                    rec,
                    trailing: start + size..start + size,
                    offset: self.decomp_offset,
                    header,
                    event,
                }));
            }
        }
        self.src.begin();
        let offset = self.src.position();
        let hr = match self.src.take(Header::SIZE as u64)? {
            Ok(r) => r,
            Err(ShortOpaque(s)) if s.have == 0 => {
                let pending = self.decomp.pending();
                if !pending.is_empty() {
                    // The record's own size once its header is whole; the header's 8 before.
                    let need = Header::parse(pending, endian).map_or(Header::SIZE as u64, |h| u64::from(h.size));
                    return Err(Error::Truncated {
                        what: "decompressed record",
                        offset: self.decomp_offset,
                        need,
                        have: pending.len() as u64,
                    });
                }
                self.done = true;
                self.at_end()?;
                return Ok(None);
            }
            Err(ShortOpaque(s)) => return Err(self.short("record header", offset, 8, s)),
        };
        let mut h8 = [0u8; 8];
        h8.copy_from_slice(&self.src.bytes()[hr.clone()]);
        let header = Header::from_bytes(h8, endian);
        if usize::from(header.size) < Header::SIZE {
            return Err(Error::BadRecordSize { offset, size: header.size });
        }
        let body = self.take("record", offset, u64::from(header.size) - 8)?;
        let rec = hr.start..body.end;
        let mut trailing = body.end..body.end;
        let bad = |field| Error::BadPerfRecord { type_: header.type_, offset, field };
        match header.type_ {
            types::AUXTRACE => {
                if header.size < 16 {
                    return Err(bad("auxtrace.size"));
                }
                let n = u64_of(self.src.bytes(), rec.start + 8, endian);
                trailing = self.take("AUXTRACE data", offset + u64::from(header.size), n)?;
            }
            types::HEADER_TRACING_DATA => {
                if header.size < 12 {
                    return Err(bad("tracing_data.size"));
                }
                let b = &self.src.bytes()[rec.start + 8..rec.start + 12];
                let n = u64::from(endian.u32([b[0], b[1], b[2], b[3]]));
                trailing = self.take("tracing data", offset + u64::from(header.size), n)?;
                if self.meta.header.mode == Mode::Pipe {
                    // Pipe mode's form of the TRACING_DATA feature.
                    let data = self.src.bytes()[trailing.clone()].to_vec();
                    self.meta.features.push((features::TRACING_DATA, data));
                }
            }
            COMPRESSED | COMPRESSED2 => {
                let payload = if header.type_ == COMPRESSED {
                    rec.start + 8..rec.end
                } else {
                    if header.size < 16 {
                        return Err(bad("compressed2.data_size"));
                    }
                    let n = u64_of(self.src.bytes(), rec.start + 8, endian);
                    let len =
                        usize::try_from(n).ok().filter(|&n| n <= rec.len() - 16).ok_or_else(|| bad("data_size"))?;
                    rec.start + 16..rec.start + 16 + len
                };
                self.decomp.feed(&self.src.bytes()[payload], offset)?;
                self.decomp_offset = offset;
            }
            types::HEADER_ATTR if self.meta.header.mode == Mode::Pipe => {
                let bytes = self.src.bytes()[rec.clone()].to_vec();
                self.pipe_attr(&bytes, offset)?;
            }
            types::HEADER_FEATURE if self.meta.header.mode == Mode::Pipe => {
                if header.size < 16 {
                    return Err(bad("feature.feat_id"));
                }
                let bytes = &self.src.bytes()[rec.clone()];
                let bit = u64_of(bytes, 8, endian);
                let payload = bytes[16..].to_vec();
                if let Ok(bit) = u32::try_from(bit) {
                    self.meta.features.push((bit, payload));
                }
            }
            _ => {}
        }
        let event = if header.type_ < types::HEADER_ATTR {
            let found = self.meta.events.attribute(header, &self.src.bytes()[rec.clone()]);
            self.note(found, offset)
        } else {
            None
        };
        Ok(Some(Loc { buf: Buf::Src, rec, trailing, offset, header, event }))
    }

    /// The input's records are all read: what only the end tells.
    fn at_end(&mut self) -> Result<(), Error> {
        if self.meta.header.mode == Mode::Pipe && self.meta.attrs.is_empty() {
            // No HEADER_ATTR in the whole stream (file mode warns when the header is read).
            self.meta.warnings.push(Warning::NoEvents);
        }
        let read = self.src.position().saturating_sub(self.meta.data.0);
        for w in &mut self.meta.warnings {
            if let Warning::DataSizeZero { assumed_size: size @ 0 } = w {
                // A forward-read file whose data.size is 0: its records ran to the input's end.
                *size = read;
            }
        }
        if std::mem::take(&mut self.meta.deferred_features) {
            let base = self.src.position();
            let bytes = self.src.rest()?;
            read_features(&mut Tail { base, bytes }, &mut self.meta)?;
        }
        Ok(())
    }

    /// The attributed event; a record perf cannot attribute is counted in a warning.
    fn note(&mut self, found: Result<Option<usize>, AttributeError>, offset: u64) -> Option<usize> {
        match found {
            Ok(e) => e,
            Err(error) => {
                match self.unknown_ids {
                    Some(i) => {
                        if let Some(Warning::Unattributed { count, .. }) = self.meta.warnings.get_mut(i) {
                            *count += 1;
                        }
                    }
                    None => {
                        self.unknown_ids = Some(self.meta.warnings.len());
                        let first_offset = self.perf_offset(offset);
                        self.meta.warnings.push(Warning::Unattributed { count: 1, first: error, first_offset });
                    }
                }
                None
            }
        }
    }

    /// HEADER_ATTR (pipe mode): `{header; perf_event_attr (attr.size bytes); u64 ids[]}`
    /// (`perf_event__process_attr`).
    fn pipe_attr(&mut self, bytes: &[u8], offset: u64) -> Result<(), Error> {
        let endian = self.endian();
        let event = self.meta.attrs.len();
        let body = &bytes[8..];
        let attr =
            Attr::from_bytes(body, endian).map_err(|error| Error::BadAttr { event, offset: offset + 8, error })?;
        let size = if attr.size == 0 { 64 } else { attr.size as usize };
        let ids_bytes =
            body.get(size..).ok_or(Error::BadPerfRecord { type_: types::HEADER_ATTR, offset, field: "attr.size" })?;
        let ids = ids_bytes.chunks_exact(8).map(|c| u64_of(c, 0, endian)).collect();
        let fa = FileAttr { attr, ids };
        add_event(&mut self.meta.events, &fa, &mut self.meta.warnings)?;
        self.meta.attrs.push(fa);
        if !self.warned_inconsistent {
            if let Some(i) = self.meta.events.consistency() {
                self.warned_inconsistent = true;
                self.meta.warnings.push(Warning::Inconsistent(i));
            }
        }
        Ok(())
    }
}

impl FileRecord<'_> {
    fn fix_offset(mut self) -> Self {
        if self.offset & (1 << 63) != 0 {
            self.offset &= !(1 << 63);
            self.decompressed = true;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::Events;

    /// A counter's period is from its id's previous value, and the values follow their ids
    /// when the id table moves into larger storage (pipe mode registers ids as attrs arrive).
    #[test]
    fn read_values_follow_their_ids_when_the_id_table_grows() {
        let attr = perfring::record::Attr {
            sample_type: perfring::record::sample_type::IDENTIFIER | perfring::record::sample_type::READ,
            ..Default::default()
        };
        let mut events = Events::new(Endian::NATIVE);
        let event = events.add_event(&attr).unwrap();
        for id in 1..=3 {
            events.add_id(event, id).unwrap();
        }
        let mut table = ReadValueTable::default();
        let period = |table: &mut ReadValueTable, events: &Events, id: u64, value: u64| {
            table.follow(events);
            let (slot, e) = events.id_slot(id).expect("a registered id");
            assert_eq!(e, event);
            table.replace(slot, id, value)
        };
        assert_eq!(period(&mut table, &events, 1, 100), 100, "the first value counts from 0, as perf's");
        assert_eq!(period(&mut table, &events, 2, 40), 40);
        assert_eq!(period(&mut table, &events, 1, 130), 30);
        let capacity = events.set().id_capacity();
        for id in 4..200 {
            events.add_id(event, id).unwrap();
        }
        assert!(events.set().id_capacity() > capacity, "the table grew");
        assert_eq!(period(&mut table, &events, 1, 150), 20, "id 1's value moved with it");
        assert_eq!(period(&mut table, &events, 2, 40), 0);
        assert_eq!(period(&mut table, &events, 3, 7), 7);
        assert_eq!(period(&mut table, &events, 199, 9), 9);
        // A counter that went backwards (a reset) wraps as perf's u64 subtraction does.
        assert_eq!(period(&mut table, &events, 1, 149), u64::MAX);
    }
}
