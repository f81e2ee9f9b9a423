//! [`FileRecord`]: one record of a perf.data file or stream, as a [`Reader`](crate::Reader)
//! delivers it, read through `perfring::record`'s [`EventRecord`] like every record.

use perfring::record::{types, DecodeError, EventLayout, EventRecord, RawRecord};

use crate::metadata::Metadata;
use crate::perf_records::PerfRecord;
use crate::read_deliveries::ReadDelivery;
use crate::PerfDataError;

/// One record, borrowed from the reader until the next call, with its header parsed once and
/// its event attributed as perf attributes it. The reader's [`Metadata`] is reachable from it
/// ([`FileRecord::metadata`]): the events, ids, features and warnings can be read while the
/// record is held.
///
/// Read it through [`EventRecord`] (`use perfring::record::EventRecord`), as a ring's records
/// and `perfring-linux`'s `SessionRecord` are read, with the same calls:
///
/// | to read | call |
/// |---|---|
/// | its bytes, header, byte order; its offset as `perf report -D` prints it | [`raw`](EventRecord::raw) ([`RawRecord`]; `raw().offset`) |
/// | the event that wrote it (an index into [`Metadata::attrs`]) | [`event`](EventRecord::event) |
/// | a SAMPLE's fields, each when asked for | [`sample`](EventRecord::sample) |
/// | time, id, cpu, pid/tid of any record | [`view`](EventRecord::view) |
/// | a SAMPLE of a `sample_type` known when the tool is built | [`fixed::<ST>`](EventRecord::fixed) |
/// | every field of the record | [`decode`](EventRecord::decode) |
///
/// perf's own record types (≥ 64: FINISHED_ROUND, ID_INDEX, …) have no event; their typed
/// form is [`perf_record`](FileRecord::perf_record).
///
/// `raw().offset` is the record's offset as `perf report -D` prints it: its file offset in
/// file mode; in pipe mode, from the end of the 16-byte pipe header (perf counts the stream's
/// records from there); for a record that came out of a COMPRESSED record, that record's
/// offset ([`PerfDataError`]s give file offsets in both modes). `raw().trailing` is the data
/// that follows an AUXTRACE (71) or HEADER_TRACING_DATA (66) record, not counted in
/// `header.size`.
#[derive(Clone, Copy)]
pub struct FileRecord<'a> {
    pub(crate) raw: RawRecord<'a>,
    /// Whether the record came out of a COMPRESSED record.
    pub(crate) decompressed: bool,
    /// The event that wrote it and its layout, as attributed when it was read; `None` when it
    /// has none (the reason is found again on demand: [`FileRecord::unattributed`]).
    pub(crate) event: Option<(usize, &'a EventLayout)>,
    pub(crate) metadata: &'a Metadata,
    pub(crate) deliveries: &'a [ReadDelivery],
}

impl std::fmt::Debug for FileRecord<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileRecord")
            .field("offset", &self.raw.offset)
            .field("decompressed", &self.decompressed)
            .field("header", &self.raw.header)
            .field("bytes", &self.raw.bytes.len())
            .field("trailing", &self.raw.trailing.len())
            .field("event", &self.event.map(|(i, _)| i))
            .field("deliveries", &self.deliveries)
            .finish_non_exhaustive()
    }
}

impl<'a> EventRecord<'a> for FileRecord<'a> {
    #[inline(always)]
    fn raw(&self) -> &RawRecord<'a> {
        &self.raw
    }

    #[inline(always)]
    fn attribution(&self) -> Result<(usize, &'a EventLayout), DecodeError> {
        match self.event {
            Some(event) => Ok(event),
            None => Err(self.unattributed()),
        }
    }
}

impl<'a> FileRecord<'a> {
    /// Why the record has no event: perf's attribution, again, for its error (a record perf
    /// cannot attribute was counted in a [`Warning::Unattributed`](crate::Warning::Unattributed)
    /// when it was read).
    #[cold]
    fn unattributed(&self) -> DecodeError {
        let type_ = self.raw.header.type_;
        if type_ == 0 || type_ >= types::HEADER_ATTR {
            return DecodeError::NotAnEventRecord { type_ };
        }
        match self.metadata.event_set().attribute(&self.raw).event() {
            Err(e) => e,
            // (Attributed now: a record that was read before its event's attr, in pipe mode.)
            Ok(_) => DecodeError::NoEvents,
        }
    }

    /// Whether the record came out of a COMPRESSED record (`raw().offset` is then that
    /// record's).
    pub fn decompressed(&self) -> bool {
        self.decompressed
    }

    /// Decode a perf-only record (ID_INDEX, THREAD_MAP, …) into a typed value; `Ok(None)`
    /// for kernel types.
    pub fn perf_record(&self) -> Result<Option<PerfRecord<'a>>, PerfDataError> {
        let raw = &self.raw;
        PerfRecord::parse(raw.bytes, raw.trailing, raw.endian, raw.offset)
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
