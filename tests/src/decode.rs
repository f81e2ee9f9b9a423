//! The complete decode of a record laid out by a bare [`Ctx`] (the encoder's round trips, the
//! golden files, the fuzzer's corpus), through the one public door every reader uses:
//! [`EventRecord::decode`] of the record attributed by a set of one event, the event of the
//! attr `ctx` describes.

use std::cell::RefCell;
use std::collections::HashMap;

use perfring::record::{
    attr_flags, types, Attr, DecodeError, Encode, EncodeError, Endian, EventLayout, EventRecord, EventSet, Header,
    IdEntry, RawRecord, Record, Sample, SampleId,
};

/// What the tests vary of an event: its attr (whose `sample_type`, `read_format`,
/// `sample_id_all`, register masks and `branch_sample_type` lay out its records) and their byte
/// order (hashable and small, so that a property test can generate one and key a table by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ctx {
    /// The event's attr.
    pub attr: Attr,
    /// The records' byte order.
    pub endian: Endian,
}

impl Ctx {
    /// Every field 0: SAMPLE records are a bare header, no trailers.
    pub const fn new(endian: Endian) -> Ctx {
        Ctx { attr: Attr::ZERO, endian }
    }

    /// The attr whose fields the fuzzer's and the golden corpus's files start with: 41 bytes,
    /// `sample_type`, `read_format`, `sample_regs_user`, `sample_regs_intr` and
    /// `branch_sample_type` as little-endian u64s, then a byte whose bit 0 is `sample_id_all`
    /// and bit 1 big-endian records.
    pub fn from_head(head: &[u8; HEAD]) -> Ctx {
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&head[8 * i..8 * i + 8]);
            u64::from_le_bytes(w)
        };
        let attr = Attr {
            sample_type: word(0),
            read_format: word(1),
            sample_regs_user: word(2),
            sample_regs_intr: word(3),
            branch_sample_type: word(4),
            flags: if head[40] & 1 != 0 { attr_flags::SAMPLE_ID_ALL } else { 0 },
            ..Attr::ZERO
        };
        Ctx { attr, endian: if head[40] & 2 != 0 { Endian::Big } else { Endian::Little } }
    }

    /// `attr.sample_id_all`: whether non-SAMPLE records end with a trailer.
    pub const fn sample_id_all(&self) -> bool {
        self.attr.has(attr_flags::SAMPLE_ID_ALL)
    }

    /// The event's layout: what the encoder takes.
    pub fn layout(&self) -> EventLayout {
        EventLayout::new(&self.attr, self.endian)
    }
}

/// The length of [`Ctx::from_head`]'s head.
pub const HEAD: usize = 41;

type One = EventSet<[EventLayout; 1], [IdEntry; 0]>;

/// The set of the one event `ctx` describes. Each distinct context's set is made once per
/// thread and kept for the process (a test decodes with a few contexts, a property test with
/// at most its cases'), so that what it decodes may borrow it for as long as the record.
pub fn events_of(ctx: &Ctx) -> &'static One {
    thread_local! {
        static SETS: RefCell<HashMap<Ctx, &'static One>> = RefCell::new(HashMap::new());
    }
    SETS.with(|sets| {
        *sets.borrow_mut().entry(*ctx).or_insert_with(|| Box::leak(Box::new(EventSet::single(&ctx.attr, ctx.endian))))
    })
}

/// The record `bytes` (one whole record, header included) in `ctx`'s byte order, its header
/// read from them: `None` when they are shorter than a header.
pub fn raw<'a>(bytes: &'a [u8], ctx: &Ctx) -> Option<RawRecord<'a>> {
    let header = Header::parse(bytes, ctx.endian)?;
    Some(RawRecord { header, bytes, offset: 0, endian: ctx.endian, trailing: &[] })
}

/// The complete decode of `bytes` (one whole record) laid out for `ctx`: every field, every
/// check, as [`EventRecord::decode`] gives it.
pub fn decode<'a>(bytes: &'a [u8], ctx: &Ctx) -> Result<Record<'a>, DecodeError> {
    match raw(bytes, ctx) {
        Some(raw) => events_of(ctx).attribute(&raw).decode(),
        None => Err(DecodeError::Truncated { field: "header", offset: 0, need: Header::SIZE, have: bytes.len() }),
    }
}

/// A record as values: the complete decode with a SAMPLE's view read into its [`Sample`] (what
/// the round trips and the golden files compare, and what the encoder writes back).
// A test value, compared and re-encoded, never in a loop that its size would slow.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values<'a> {
    /// A SAMPLE's fields.
    Sample(Sample<'a>),
    /// Any other record.
    Record(Record<'a>),
}

impl<'a> Values<'a> {
    /// `record`'s values; a SAMPLE's view that does not decode is that error (never, for a
    /// view the complete decode gave).
    pub fn of(record: Record<'a>) -> Result<Values<'a>, DecodeError> {
        Ok(match record {
            Record::Sample(v) => Values::Sample(v.to_sample()?),
            other => Values::Record(other),
        })
    }
    /// `header.type`.
    pub fn type_(&self) -> u32 {
        match self {
            Values::Sample(_) => types::SAMPLE,
            Values::Record(r) => r.type_(),
        }
    }
    /// The `sample_id` trailer (`None` for a SAMPLE).
    pub fn sample_id(&self) -> Option<&SampleId> {
        match self {
            Values::Sample(_) => None,
            Values::Record(r) => r.sample_id(),
        }
    }
}

impl Encode for Values<'_> {
    fn encoded_size(&self, layout: &EventLayout) -> Result<usize, EncodeError> {
        match self {
            Values::Sample(s) => s.encoded_size(layout),
            Values::Record(r) => r.encoded_size(layout),
        }
    }
    fn encode(&self, layout: &EventLayout, out: &mut [u8]) -> Result<usize, EncodeError> {
        match self {
            Values::Sample(s) => s.encode(layout, out),
            Values::Record(r) => r.encode(layout, out),
        }
    }
}

/// [`decode`], as [`Values`].
pub fn values<'a>(bytes: &'a [u8], ctx: &Ctx) -> Result<Values<'a>, DecodeError> {
    Values::of(decode(bytes, ctx)?)
}

/// The values perf identifies a record by — time, event id (IDENTIFIER, else ID), stream id,
/// cpu, pid, tid — as the complete decode holds them: a SAMPLE's fields, another record's
/// `sample_id` trailer's. What a record's view (`EventRecord::view`) must read.
pub fn identifying(record: &Record<'_>) -> [Option<u64>; 6] {
    let wide = |v: Option<u32>| v.map(u64::from);
    match record {
        Record::Sample(s) => [
            s.time(),
            s.identifier().or(s.id()),
            s.stream_id(),
            wide(s.cpu().map(|c| c.cpu)),
            wide(s.tid().map(|t| t.pid)),
            wide(s.tid().map(|t| t.tid)),
        ],
        other => other.sample_id().map_or([None; 6], |t| {
            let (pid, tid) = (t.tid.map(|p| p.pid), t.tid.map(|p| p.tid));
            [t.time, t.event_id(), t.stream_id, wide(t.cpu.map(|c| c.cpu)), wide(pid), wide(tid)]
        }),
    }
}
