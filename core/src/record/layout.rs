//! The layout of one event's records, computed once from its attr: [`SampleLayout`], and the
//! borrowed views that read fields through it ([`SampleView`], [`RecordView`]).
//!
//! perf precomputes, per event, where the id sits (`id_pos`, `is_pos`) and how large the fixed
//! part of a sample is (`tools/perf/util/evsel.c`). This is the same idea carried to every
//! field: a SAMPLE's fields up to the first one whose size depends on the record (a READ group,
//! CALLCHAIN, RAW, …) sit at offsets that depend only on `sample_type` and `read_format`, so
//! they are computed here once, and each access is a test of the field's `sample_type` bit and
//! one load (unchecked: the view checked once that the record holds the fixed prefix). The
//! `sample_id` trailer of other records sits at fixed distances from the record's end, computed
//! likewise.
//!
//! ```text
//! SAMPLE:  header | IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD [READ w/o GROUP] | CALLCHAIN RAW ... AUX
//!                   <------------- fixed offsets (this layout) ------------------------>   <- walked on demand ->
//! others:  header | body ... | TID TIME ID STREAM_ID CPU IDENTIFIER   (sample_id, fixed offsets from the end)
//! ```
//!
//! A view costs nothing to make beyond one length check; each accessor pays only for the field
//! it reads. The complete [`decode`](super::decode) stays the reference: `tests/tests/
//! records_view.rs` checks that both agree on every field of every record of every fixture.

use core::cell::Cell;

use super::cursor::Reader;
use super::header::{types, Header};
use super::read_format as rf;
use super::sample_type as st;
use super::{
    BranchStack, DecodeContext, DecodeError, Endian, PidTid, Regs, Sample, SampleCpu, StackUser, U64Array, Weight,
    WeightStruct,
};

/// The SAMPLE fields after RAW, in output order (`perf_output_sample`): each a bit (or, for
/// the weight, both of its bits) of `sample_type`.
const TAIL: [u64; 12] = [
    st::BRANCH_STACK,
    st::REGS_USER,
    st::STACK_USER,
    st::WEIGHT_TYPE,
    st::DATA_SRC,
    st::TRANSACTION,
    st::REGS_INTR,
    st::PHYS_ADDR,
    st::CGROUP,
    st::DATA_PAGE_SIZE,
    st::CODE_PAGE_SIZE,
    st::AUX,
];

/// Offset that no record reaches (records are at most 65535 bytes): a field that is absent.
const ABSENT: u16 = u16::MAX;

/// Where each field of one event's records sits. Build it once per event with
/// [`SampleLayout::new`] (it is `const`), then read records through [`SampleLayout::sample`]
/// and [`SampleLayout::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SampleLayout {
    ctx: DecodeContext,
    // SAMPLE: byte offsets from the start of the record (header included), ABSENT when the
    // field is not in `sample_type`.
    identifier: u16,
    ip: u16,
    tid: u16,
    time: u16,
    addr: u16,
    id: u16,
    stream_id: u16,
    cpu: u16,
    period: u16,
    /// Start of the READ block (with or without GROUP).
    read: u16,
    /// End of the fixed prefix: the first byte whose offset depends on the record's content.
    fixed_end: u16,
    /// The offsets of the u64 fields after RAW ([`TAIL`] order) that no variable field
    /// precedes (ABSENT otherwise, or when the event lacks them): one load each, like the
    /// fixed prefix.
    tail: [u16; TAIL.len()],
    /// The smallest SAMPLE this event writes: the fixed prefix and the fixed tail fields.
    min_size: u16,
    // Other records: byte distances from the end of the record back to the start of each
    // trailer field, ABSENT without `sample_id_all` or when the field is not in `sample_type`.
    t_tid: u16,
    t_time: u16,
    t_id: u16,
    t_stream_id: u16,
    t_cpu: u16,
    t_identifier: u16,
    /// Size of the trailer (0 without `sample_id_all`).
    trailer: u16,
    /// Registers in REGS_USER and REGS_INTR (the bits of `sample_regs_user`/`_intr`), counted
    /// once here rather than at every read (a popcount is a software routine on the x86-64
    /// baseline, which has no `popcnt`).
    regs_user_words: u8,
    regs_intr_words: u8,
}

const fn at(on: bool, off: usize) -> u16 {
    if on {
        off as u16
    } else {
        ABSENT
    }
}

impl SampleLayout {
    /// The layout of records written for `ctx` (`sample_type`, `read_format`,
    /// `sample_id_all`, byte order).
    pub const fn new(ctx: &DecodeContext) -> SampleLayout {
        let t = ctx.sample_type;
        // SAMPLE, in output order (`perf_output_sample`).
        let mut off = Header::SIZE;
        macro_rules! field {
            ($bit:expr) => {{
                let on = t & $bit != 0;
                let here = at(on, off);
                if on {
                    off += 8;
                }
                here
            }};
        }
        let identifier = field!(st::IDENTIFIER);
        let ip = field!(st::IP);
        let tid = field!(st::TID);
        let time = field!(st::TIME);
        let addr = field!(st::ADDR);
        let id = field!(st::ID);
        let stream_id = field!(st::STREAM_ID);
        let cpu = field!(st::CPU);
        let period = field!(st::PERIOD);
        let read = at(t & st::READ != 0, off);
        if t & st::READ != 0 && ctx.read_format & rf::GROUP == 0 {
            off += rf::read_size(ctx.read_format, 1);
        }
        let fixed_end = off as u16;
        // The tail fields at fixed offsets: those before the first variable-size field.
        let mut tail = [ABSENT; TAIL.len()];
        let mut fixed = t & (st::CALLCHAIN | st::RAW) == 0 && !(t & st::READ != 0 && ctx.read_format & rf::GROUP != 0);
        let mut i = 0;
        while i < TAIL.len() {
            let field = TAIL[i];
            if t & field != 0 {
                let word = matches!(
                    field,
                    st::WEIGHT_TYPE
                        | st::DATA_SRC
                        | st::TRANSACTION
                        | st::PHYS_ADDR
                        | st::CGROUP
                        | st::DATA_PAGE_SIZE
                        | st::CODE_PAGE_SIZE
                );
                if fixed && word {
                    tail[i] = off as u16;
                    off += 8;
                } else {
                    fixed = false;
                }
            }
            i += 1;
        }
        let min_size = off as u16;
        // The trailer, in its own order (`__perf_event__output_id_sample`), measured from the
        // end: IDENTIFIER is last, so its distance is 8 whenever it is present.
        let trailer = if ctx.sample_id_all { super::SampleId::size(t) } else { 0 };
        let mut back = trailer;
        macro_rules! tfield {
            ($bit:expr) => {{
                let present = ctx.sample_id_all && t & $bit != 0;
                let here = at(present, back);
                if present {
                    back -= 8;
                }
                here
            }};
        }
        let t_tid = tfield!(st::TID);
        let t_time = tfield!(st::TIME);
        let t_id = tfield!(st::ID);
        let t_stream_id = tfield!(st::STREAM_ID);
        let t_cpu = tfield!(st::CPU);
        // IDENTIFIER is last: 8 bytes from the end whenever present.
        let t_identifier = at(ctx.sample_id_all && t & st::IDENTIFIER != 0, back);
        SampleLayout {
            ctx: *ctx,
            identifier,
            ip,
            tid,
            time,
            addr,
            id,
            stream_id,
            cpu,
            period,
            read,
            fixed_end,
            tail,
            min_size,
            t_tid,
            t_time,
            t_id,
            t_stream_id,
            t_cpu,
            t_identifier,
            trailer: trailer as u16,
            regs_user_words: ctx.sample_regs_user.count_ones() as u8,
            regs_intr_words: ctx.sample_regs_intr.count_ones() as u8,
        }
    }

    /// The decode context this layout was computed from.
    pub const fn context(&self) -> &DecodeContext {
        &self.ctx
    }

    /// Bytes of a SAMPLE, header included, up to the first field whose offset depends on the
    /// record's content: the smallest SAMPLE this event can write.
    pub const fn fixed_size(&self) -> usize {
        self.min_size as usize
    }

    /// The offset (header included) of the fixed SAMPLE field `bit`, one of IDENTIFIER, IP,
    /// TID, TIME, ADDR, ID, STREAM_ID, CPU and PERIOD; `None` when the event lacks it (or `bit`
    /// is another field).
    pub(super) const fn fixed_offset(&self, bit: u64) -> Option<usize> {
        let off = match bit {
            st::IDENTIFIER => self.identifier,
            st::IP => self.ip,
            st::TID => self.tid,
            st::TIME => self.time,
            st::ADDR => self.addr,
            st::ID => self.id,
            st::STREAM_ID => self.stream_id,
            st::CPU => self.cpu,
            st::PERIOD => self.period,
            _ => ABSENT,
        };
        if off == ABSENT {
            None
        } else {
            Some(off as usize)
        }
    }

    /// Size of the `sample_id` trailer of non-SAMPLE records (0 without `sample_id_all`).
    pub const fn trailer_size(&self) -> usize {
        self.trailer as usize
    }

    /// perf's `id_pos`: the index, in u64 words after the header, of the event id in a SAMPLE
    /// (IDENTIFIER, else ID), or `None` if the event writes neither
    /// (`tools/perf/util/evsel.c:__perf_evsel__calc_id_pos`).
    pub const fn id_pos(&self) -> Option<usize> {
        let t = self.ctx.sample_type;
        if t & st::IDENTIFIER != 0 {
            return Some(0);
        }
        if t & st::ID == 0 {
            return None;
        }
        Some(
            ((t & st::IP != 0) as usize)
                + ((t & st::TID != 0) as usize)
                + ((t & st::TIME != 0) as usize)
                + ((t & st::ADDR != 0) as usize),
        )
    }

    /// perf's `is_pos`: the index, counted back in u64 words from the end of a non-SAMPLE record,
    /// of the event id in its trailer (1 for IDENTIFIER), or `None` if the event writes neither
    /// IDENTIFIER nor ID (`__perf_evsel__calc_is_pos`).
    pub const fn is_pos(&self) -> Option<usize> {
        let t = self.ctx.sample_type;
        if t & st::IDENTIFIER != 0 {
            return Some(1);
        }
        if t & st::ID == 0 {
            return None;
        }
        Some(1 + ((t & st::CPU != 0) as usize) + ((t & st::STREAM_ID != 0) as usize))
    }

    /// A view of a SAMPLE record — its bytes (header included, `header.size` bytes) or a
    /// record a [`Walker`](super::Walker) handed out ([`RecordRef`](super::RecordRef)): checks
    /// the type, the byte order (a walked record read in the other order than this layout's
    /// is [`DecodeError::ByteOrderMismatch`]), that the fixed fields fit and that the record is
    /// no longer than a record can be, once; the accessors then read single fields. A walk in
    /// a constant byte order (a ring's records are native) makes every field read one load.
    #[inline]
    pub fn sample<'a, R: super::RecordRef<'a>>(&'a self, record: R) -> Result<SampleView<'a>, DecodeError> {
        let bytes = record.record_bytes();
        let endian = match record.parsed() {
            Some((header, endian)) => {
                // A walked record is `header.size` bytes, so it is no longer than a u16 allows.
                if header.type_ != types::SAMPLE {
                    return Err(not_a_sample(header.type_));
                }
                if endian != self.ctx.endian {
                    return Err(DecodeError::ByteOrderMismatch { layout: self.ctx.endian, record: endian });
                }
                endian
            }
            None => {
                check_sample(bytes, self.ctx.endian)?;
                if bytes.len() > u16::MAX as usize {
                    return Err(DecodeError::SizeMismatch { header_size: u16::MAX as usize, len: bytes.len() });
                }
                self.ctx.endian
            }
        };
        if bytes.len() < self.min_size as usize {
            return Err(self.too_short(bytes.len()));
        }
        Ok(SampleView { bytes, layout: self, endian, tail_start: Cell::new(0) })
    }

    /// [`sample`](Self::sample) for a record whose type is known to be SAMPLE and that is no
    /// longer than a record can be: the byte order and the fixed fields' length checked.
    #[inline(always)]
    pub(super) fn sample_typed<'a>(&'a self, bytes: &'a [u8], endian: Endian) -> Result<SampleView<'a>, DecodeError> {
        if endian != self.ctx.endian {
            return Err(DecodeError::ByteOrderMismatch { layout: self.ctx.endian, record: endian });
        }
        if bytes.len() < self.min_size as usize {
            return Err(self.too_short(bytes.len()));
        }
        Ok(SampleView { bytes, layout: self, endian, tail_start: Cell::new(0) })
    }

    // (Its own body rather than a call of the free `too_short`: as a one-call wrapper the
    // compiler treated it otherwise, and every capture of the decode bench took more
    // instructions per record.)
    #[cold]
    fn too_short(&self, len: usize) -> DecodeError {
        DecodeError::Truncated { field: FIXED_FIELDS, offset: 0, need: self.min_size as usize, have: len }
    }

    /// A view of any record of this event (`bytes` = the whole record): the event-identifying
    /// values of a SAMPLE or of a trailer through one set of accessors.
    #[inline]
    pub fn record<'a>(&'a self, bytes: &'a [u8]) -> RecordView<'a> {
        let type_ = self.ctx.endian.u32_at(bytes, 0).unwrap_or(0);
        let kind = if bytes.len() > u16::MAX as usize {
            Kind::None
        } else if type_ == types::SAMPLE && bytes.len() >= self.min_size as usize {
            Kind::Sample
        } else if (1..types::HEADER_ATTR).contains(&type_)
            && type_ != types::SAMPLE
            && bytes.len() >= Header::SIZE + self.trailer as usize
        {
            Kind::Trailer
        } else {
            Kind::None
        };
        RecordView { bytes, layout: self, kind }
    }
}

#[cold]
pub(super) fn not_a_sample(type_: u32) -> DecodeError {
    DecodeError::InvalidValue { field: "header.type (not a SAMPLE)", value: type_ as u64, offset: 0 }
}

/// The field a SAMPLE too short for its fixed fields is reported against.
const FIXED_FIELDS: &str = "sample (fixed fields)";

/// A SAMPLE of `have` bytes, fewer than the `need` of its fixed fields.
#[cold]
pub(super) fn too_short(need: usize, have: usize) -> DecodeError {
    DecodeError::Truncated { field: FIXED_FIELDS, offset: 0, need, have }
}

/// That the record `bytes` (in `endian` order) is a SAMPLE: its type read and tested.
#[inline(always)]
pub(super) fn check_sample(bytes: &[u8], endian: Endian) -> Result<(), DecodeError> {
    match endian.u32_at(bytes, 0) {
        Some(types::SAMPLE) => Ok(()),
        Some(type_) => Err(not_a_sample(type_)),
        None => Err(DecodeError::Truncated { field: "header", offset: 0, need: 8, have: bytes.len() }),
    }
}

/// That a record is a SAMPLE, read in `endian` (the byte order of the layout that reads it;
/// a walked record's own order must be it): the byte order to read its fields in.
#[inline(always)]
pub(super) fn check_sample_ref<'a>(record: impl super::RecordRef<'a>, endian: Endian) -> Result<Endian, DecodeError> {
    match record.parsed() {
        Some((header, walked)) => {
            if header.type_ != types::SAMPLE {
                return Err(not_a_sample(header.type_));
            }
            if walked != endian {
                return Err(DecodeError::ByteOrderMismatch { layout: endian, record: walked });
            }
            Ok(walked)
        }
        None => check_sample(record.record_bytes(), endian).map(|()| endian),
    }
}

#[inline(always)]
fn u64_at(bytes: &[u8], off: u16, endian: Endian) -> Option<u64> {
    endian.u64_at(bytes, off as usize)
}

#[inline(always)]
fn pair_at(bytes: &[u8], off: u16, endian: Endian) -> Option<(u32, u32)> {
    endian.u32_pair_at(bytes, off as usize)
}

impl SampleView<'_> {
    /// The 8 bytes of the fixed field `bit` at `off` (the layout's offset for it), or `None`
    /// when the event's `sample_type` lacks it: a bit test for an absent field, one load for a
    /// present one (measured: `BENCHMARKS.md`, "Decoding").
    #[inline(always)]
    fn fixed(&self, bit: u64, off: u16) -> Option<[u8; 8]> {
        if self.layout.ctx.sample_type & bit == 0 {
            return None;
        }
        let at = off as usize;
        debug_assert!(at + 8 <= self.layout.fixed_end as usize && self.layout.min_size as usize <= self.bytes.len());
        // SAFETY: `bit` is in the `sample_type` that `SampleLayout::new` computed this layout
        // from (the layout's fields are private and only `new` sets them), so `off` is that
        // field's offset and `off + 8 <= fixed_end <= min_size`; a `SampleView` is only made for
        // `bytes` of at least `min_size` bytes (`SampleLayout::sample`, `sample`,
        // `RecordView::as_sample`). So the 8 bytes are inside `bytes`; `read_unaligned` needs
        // no alignment.
        Some(unsafe { core::ptr::read_unaligned(self.bytes.as_ptr().add(at).cast::<[u8; 8]>()) })
    }
    #[inline(always)]
    fn u64(&self, bit: u64, off: u16) -> Option<u64> {
        self.fixed(bit, off).map(|b| self.endian.u64(b))
    }
    #[inline(always)]
    fn pair(&self, bit: u64, off: u16) -> Option<(u32, u32)> {
        self.fixed(bit, off).and_then(|b| self.endian.u32_pair_at(&b, 0))
    }
}

/// A SAMPLE record read through its event's [`SampleLayout`]. Fields of the fixed prefix are
/// one load each; [`callchain`](SampleView::callchain) and [`raw`](SampleView::raw) walk only
/// the fields before them; [`decode`](SampleView::decode) gives the complete [`Sample`].
/// Each accessor is `None` exactly when the event's `sample_type` lacks the field.
#[derive(Debug, Clone)]
pub struct SampleView<'a> {
    bytes: &'a [u8],
    layout: &'a SampleLayout,
    /// The layout's byte order, held by value: when it is a constant where the view is made
    /// (a walk in `Endian::NATIVE`), the compiler drops the select from every field read.
    endian: Endian,
    /// Where the fields after RAW start, once a tail accessor has walked READ, CALLCHAIN and
    /// RAW to find it (0: not walked yet; the fixed fields end after the 8-byte header): a
    /// second tail field read starts there instead of walking the variable fields again.
    tail_start: Cell<usize>,
}

impl<'a> SampleView<'a> {
    /// The record bytes, header included.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// `header.misc`.
    #[inline]
    pub fn misc(&self) -> u16 {
        self.endian.u16([self.bytes[4], self.bytes[5]])
    }
    /// IDENTIFIER.
    #[inline]
    pub fn identifier(&self) -> Option<u64> {
        self.u64(st::IDENTIFIER, self.layout.identifier)
    }
    /// IP.
    #[inline]
    pub fn ip(&self) -> Option<u64> {
        self.u64(st::IP, self.layout.ip)
    }
    /// TID: `{pid, tid}`.
    #[inline]
    pub fn pid_tid(&self) -> Option<PidTid> {
        self.pair(st::TID, self.layout.tid).map(|(pid, tid)| PidTid { pid, tid })
    }
    /// TID's pid.
    #[inline]
    pub fn pid(&self) -> Option<u32> {
        self.pid_tid().map(|p| p.pid)
    }
    /// TID's tid.
    #[inline]
    pub fn tid(&self) -> Option<u32> {
        self.pid_tid().map(|p| p.tid)
    }
    /// TIME.
    #[inline]
    pub fn time(&self) -> Option<u64> {
        self.u64(st::TIME, self.layout.time)
    }
    /// ADDR.
    #[inline]
    pub fn addr(&self) -> Option<u64> {
        self.u64(st::ADDR, self.layout.addr)
    }
    /// The event id, as perf's `sample->id`: the ID field, or IDENTIFIER when the event writes
    /// only that (the two hold the same value when it writes both).
    #[inline]
    pub fn id(&self) -> Option<u64> {
        self.u64(st::ID, self.layout.id).or_else(|| self.identifier())
    }
    /// STREAM_ID.
    #[inline]
    pub fn stream_id(&self) -> Option<u64> {
        self.u64(st::STREAM_ID, self.layout.stream_id)
    }
    /// CPU: `{cpu, res}`.
    #[inline]
    pub fn cpu(&self) -> Option<SampleCpu> {
        self.pair(st::CPU, self.layout.cpu).map(|(cpu, res)| SampleCpu { cpu, res })
    }
    /// PERIOD.
    #[inline]
    pub fn period(&self) -> Option<u64> {
        self.u64(st::PERIOD, self.layout.period)
    }

    /// A reader at the first variable field after READ (past a READ group, whose length is in
    /// the record).
    fn after_read(&self) -> Result<Reader<'a>, DecodeError> {
        let ctx = &self.layout.ctx;
        let start = if ctx.sample_type & st::READ != 0 && ctx.read_format & rf::GROUP != 0 {
            self.read_group_end()?
        } else {
            self.layout.fixed_end as usize
        };
        Ok(Reader::new(self.bytes, start, self.bytes.len(), ctx.endian))
    }

    /// The offset after a READ group (its length is in the record): out of line, so the
    /// reader of the callers stays in registers.
    #[inline(never)]
    fn read_group_end(&self) -> Result<usize, DecodeError> {
        let ctx = &self.layout.ctx;
        let mut r = Reader::new(self.bytes, self.layout.read as usize, self.bytes.len(), ctx.endian);
        super::ReadValues::decode(&mut r, ctx.read_format)?;
        Ok(r.offset())
    }

    /// READ, by `read_format` (with GROUP, the entries borrow the record).
    pub fn read(&self) -> Result<Option<super::ReadValues<'a>>, DecodeError> {
        let ctx = &self.layout.ctx;
        if ctx.sample_type & st::READ == 0 {
            return Ok(None);
        }
        let mut r = Reader::new(self.bytes, self.layout.read as usize, self.bytes.len(), ctx.endian);
        super::ReadValues::decode(&mut r, ctx.read_format).map(Some)
    }

    /// CALLCHAIN: `nr` ips with context markers; walks a READ group before it, if any.
    #[inline]
    pub fn callchain(&self) -> Result<Option<U64Array<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::CALLCHAIN == 0 {
            return Ok(None);
        }
        self.callchain_walk().map(Some)
    }

    // (The test and the walk stay two functions: merged, with the walk shared with `raw`, the
    // compiler stopped inlining them into the caller's loop, and a callchain capture's
    // instructions per record grew fourfold.)
    #[inline]
    fn callchain_walk(&self) -> Result<U64Array<'a>, DecodeError> {
        let mut r = self.after_read()?;
        let nr = r.u64("sample.callchain.nr")?;
        r.u64s(nr, 1, "sample.callchain.nr")
    }

    /// RAW: the `size` bytes (padding included); walks READ and CALLCHAIN before it.
    #[inline]
    pub fn raw(&self) -> Result<Option<&'a [u8]>, DecodeError> {
        if self.layout.ctx.sample_type & st::RAW == 0 {
            return Ok(None);
        }
        self.raw_walk().map(Some)
    }

    #[inline]
    fn raw_walk(&self) -> Result<&'a [u8], DecodeError> {
        let t = self.layout.ctx.sample_type;
        let mut r = self.after_read()?;
        if t & st::CALLCHAIN != 0 {
            let nr = r.u64("sample.callchain.nr")?;
            r.u64s(nr, 1, "sample.callchain.nr")?;
        }
        let size = r.u32("sample.raw.size")?;
        r.take_counted(u64::from(size), "sample.raw.size")
    }

    /// A reader at the start of the field `bit` of [`TAIL`] (the fields after RAW), past the
    /// variable fields before it; `None` when the event lacks the field. Each field before it
    /// is skipped with the checks of the complete decode.
    #[inline(always)]
    fn at_tail(&self, bit: u64) -> Result<Option<Reader<'a>>, DecodeError> {
        let ctx = &self.layout.ctx;
        let t = ctx.sample_type;
        if t & bit == 0 {
            return Ok(None);
        }
        let mut r = match self.tail_start.get() {
            0 => {
                let mut r = self.after_read()?;
                if t & st::CALLCHAIN != 0 {
                    let nr = r.u64("sample.callchain.nr")?;
                    r.u64s(nr, 1, "sample.callchain.nr")?;
                }
                if t & st::RAW != 0 {
                    let size = r.u32("sample.raw.size")?;
                    r.take_counted(u64::from(size), "sample.raw.size")?;
                }
                self.tail_start.set(r.offset());
                r
            }
            start => Reader::new(self.bytes, start, self.bytes.len(), self.endian),
        };
        // Straight-line, in output order: inlined into an accessor (`bit` a constant), only the
        // skips before its field remain.
        macro_rules! upto {
            ($field:expr, $skip:expr) => {
                if $field & bit != 0 {
                    return Ok(Some(r));
                }
                if t & $field != 0 {
                    $skip;
                }
            };
        }
        upto!(st::BRANCH_STACK, {
            let _ = BranchStack::decode(&mut r, ctx.branch_sample_type, false)?;
        });
        upto!(st::REGS_USER, {
            let _ = Regs::decode(&mut r, self.layout.regs_user_words.into(), "sample.regs_user")?;
        });
        upto!(st::STACK_USER, {
            let size = r.u64("sample.stack_user.size")?;
            if size != 0 {
                r.take_counted(size, "sample.stack_user.size")?;
                r.u64("sample.stack_user.dyn_size")?;
            }
        });
        upto!(st::WEIGHT_TYPE, r.u64("sample.weight")?);
        upto!(st::DATA_SRC, r.u64("sample.data_src")?);
        upto!(st::TRANSACTION, r.u64("sample.transaction")?);
        upto!(st::REGS_INTR, {
            let _ = Regs::decode(&mut r, self.layout.regs_intr_words.into(), "sample.regs_intr")?;
        });
        upto!(st::PHYS_ADDR, r.u64("sample.phys_addr")?);
        upto!(st::CGROUP, r.u64("sample.cgroup")?);
        upto!(st::DATA_PAGE_SIZE, r.u64("sample.data_page_size")?);
        upto!(st::CODE_PAGE_SIZE, r.u64("sample.code_page_size")?);
        if st::AUX & bit != 0 {
            return Ok(Some(r));
        }
        Ok(None)
    }

    /// Whether the tail must come from the complete decode: a BRANCH_STACK with `HW_INDEX`,
    /// whose two forms (with `hw_idx`, or the kernel's `nr = 0` alone when the PMU supplied no
    /// stack) only the whole record tells apart.
    fn ambiguous_branch_stack(&self) -> bool {
        let ctx = &self.layout.ctx;
        ctx.sample_type & st::BRANCH_STACK != 0 && ctx.branch_sample_type & super::branch_sample_type::HW_INDEX != 0
    }

    /// A u64 field of the tail: absent, one bit test; at a fixed offset, one load.
    #[inline(always)]
    fn tail_u64(
        &self,
        bit: u64,
        field: &'static str,
        of: fn(&Sample<'a>) -> Option<u64>,
    ) -> Result<Option<u64>, DecodeError> {
        if self.layout.ctx.sample_type & bit == 0 {
            return Ok(None);
        }
        // At a fixed offset: one load (inside `min_size`, which the view checked).
        if let Some(i) = TAIL.iter().position(|&f| f == bit) {
            let off = self.layout.tail[i];
            if off != ABSENT {
                return Ok(u64_at(self.bytes, off, self.endian));
            }
        }
        self.tail_u64_walk(bit, field, of)
    }

    /// A u64 field of the tail that a variable field precedes: the walk, out of line (the
    /// fixed-offset path above stays small enough to inline).
    #[inline(never)]
    fn tail_u64_walk(
        &self,
        bit: u64,
        field: &'static str,
        of: fn(&Sample<'a>) -> Option<u64>,
    ) -> Result<Option<u64>, DecodeError> {
        if self.ambiguous_branch_stack() {
            return Ok(of(&self.decode()?));
        }
        match self.at_tail(bit)? {
            Some(mut r) => r.u64(field).map(Some),
            None => Ok(None),
        }
    }

    /// BRANCH_STACK: the branch entries (and `hw_idx`, counters by `branch_sample_type`);
    /// walks the fields before it.
    #[inline(always)]
    pub fn branch_stack(&self) -> Result<Option<BranchStack<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::BRANCH_STACK == 0 {
            return Ok(None);
        }
        if self.ambiguous_branch_stack() {
            return Ok(self.decode()?.branch_stack);
        }
        match self.at_tail(st::BRANCH_STACK)? {
            Some(mut r) => BranchStack::decode(&mut r, self.layout.ctx.branch_sample_type, false).map(Some),
            None => Ok(None),
        }
    }

    /// REGS_USER: the ABI and the registers of `sample_regs_user`.
    #[inline]
    pub fn regs_user(&self) -> Result<Option<Regs<'a>>, DecodeError> {
        self.regs(st::REGS_USER, self.layout.regs_user_words, "sample.regs_user", |s| s.regs_user)
    }

    /// REGS_INTR: the ABI and the registers of `sample_regs_intr`.
    #[inline(always)]
    pub fn regs_intr(&self) -> Result<Option<Regs<'a>>, DecodeError> {
        self.regs(st::REGS_INTR, self.layout.regs_intr_words, "sample.regs_intr", |s| s.regs_intr)
    }

    #[inline]
    fn regs(
        &self,
        bit: u64,
        words: u8,
        field: &'static str,
        of: fn(&Sample<'a>) -> Option<Regs<'a>>,
    ) -> Result<Option<Regs<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & bit == 0 {
            return Ok(None);
        }
        if self.ambiguous_branch_stack() {
            return Ok(of(&self.decode()?));
        }
        match self.at_tail(bit)? {
            Some(mut r) => Regs::decode(&mut r, words.into(), field).map(Some),
            None => Ok(None),
        }
    }

    /// STACK_USER: the dumped bytes and `dyn_size`.
    #[inline]
    pub fn stack_user(&self) -> Result<Option<StackUser<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::STACK_USER == 0 {
            return Ok(None);
        }
        if self.ambiguous_branch_stack() {
            return Ok(self.decode()?.stack_user);
        }
        let Some(mut r) = self.at_tail(st::STACK_USER)? else { return Ok(None) };
        let size = r.u64("sample.stack_user.size")?;
        Ok(Some(if size == 0 {
            StackUser { data: r.take(0, "sample.stack_user.data")?, dyn_size: 0 }
        } else {
            let data = r.take_counted(size, "sample.stack_user.size")?;
            StackUser { data, dyn_size: r.u64("sample.stack_user.dyn_size")? }
        }))
    }

    /// WEIGHT or WEIGHT_STRUCT.
    #[inline(always)]
    pub fn weight(&self) -> Result<Option<Weight>, DecodeError> {
        let t = self.layout.ctx.sample_type;
        let full = self.tail_u64(st::WEIGHT_TYPE, "sample.weight", |s| s.weight.map(Weight::full))?;
        Ok(full.map(|w| if t & st::WEIGHT != 0 { Weight::Full(w) } else { Weight::Struct(WeightStruct::from_u64(w)) }))
    }

    /// DATA_SRC: `union perf_mem_data_src` as the u64.
    #[inline(always)]
    pub fn data_src(&self) -> Result<Option<u64>, DecodeError> {
        self.tail_u64(st::DATA_SRC, "sample.data_src", |s| s.data_src)
    }

    /// TRANSACTION.
    #[inline(always)]
    pub fn transaction(&self) -> Result<Option<u64>, DecodeError> {
        self.tail_u64(st::TRANSACTION, "sample.transaction", |s| s.transaction)
    }

    /// PHYS_ADDR.
    #[inline(always)]
    pub fn phys_addr(&self) -> Result<Option<u64>, DecodeError> {
        self.tail_u64(st::PHYS_ADDR, "sample.phys_addr", |s| s.phys_addr)
    }

    /// CGROUP: the cgroup id.
    #[inline(always)]
    pub fn cgroup(&self) -> Result<Option<u64>, DecodeError> {
        self.tail_u64(st::CGROUP, "sample.cgroup", |s| s.cgroup)
    }

    /// DATA_PAGE_SIZE.
    #[inline(always)]
    pub fn data_page_size(&self) -> Result<Option<u64>, DecodeError> {
        self.tail_u64(st::DATA_PAGE_SIZE, "sample.data_page_size", |s| s.data_page_size)
    }

    /// CODE_PAGE_SIZE.
    #[inline(always)]
    pub fn code_page_size(&self) -> Result<Option<u64>, DecodeError> {
        self.tail_u64(st::CODE_PAGE_SIZE, "sample.code_page_size", |s| s.code_page_size)
    }

    /// AUX: the `size` bytes of AUX data (padding included).
    #[inline(always)]
    pub fn aux(&self) -> Result<Option<&'a [u8]>, DecodeError> {
        if self.layout.ctx.sample_type & st::AUX == 0 {
            return Ok(None);
        }
        if self.ambiguous_branch_stack() {
            return Ok(self.decode()?.aux);
        }
        let Some(mut r) = self.at_tail(st::AUX)? else { return Ok(None) };
        let size = r.u64("sample.aux.size")?;
        r.take_counted(size, "sample.aux.size").map(Some)
    }

    /// The complete [`Sample`]: every field, with every check of [`decode`](super::decode).
    pub fn decode(&self) -> Result<Sample<'a>, DecodeError> {
        Sample::decode(self.bytes, self.misc(), &self.layout.ctx)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sample,
    Trailer,
    None,
}

/// Any record of an event, read through its [`SampleLayout`]: the values perf uses to order
/// and attribute records — time, id, stream id, cpu, pid/tid — from a SAMPLE's fields or from
/// another record's `sample_id` trailer, with one set of accessors. Each is `None` when the
/// event does not write it into this kind of record (no `sample_id_all`, the bit not in
/// `sample_type`, a perf-only record type ≥ 64, or a record too short to hold it).
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    bytes: &'a [u8],
    layout: &'a SampleLayout,
    kind: Kind,
}

impl<'a> RecordView<'a> {
    #[inline(always)]
    fn u64(&self, sample: u16, trailer: u16) -> Option<u64> {
        let e = self.layout.ctx.endian;
        match self.kind {
            Kind::Sample => u64_at(self.bytes, sample, e),
            Kind::Trailer if trailer != ABSENT => u64_at(self.bytes, (self.bytes.len() - trailer as usize) as u16, e),
            _ => None,
        }
    }
    #[inline(always)]
    fn pair(&self, sample: u16, trailer: u16) -> Option<(u32, u32)> {
        let e = self.layout.ctx.endian;
        match self.kind {
            Kind::Sample => pair_at(self.bytes, sample, e),
            Kind::Trailer if trailer != ABSENT => pair_at(self.bytes, (self.bytes.len() - trailer as usize) as u16, e),
            _ => None,
        }
    }
    /// The SAMPLE view, if this is a SAMPLE whose fixed fields fit.
    pub fn as_sample(&self) -> Option<SampleView<'a>> {
        (self.kind == Kind::Sample).then_some(SampleView {
            bytes: self.bytes,
            layout: self.layout,
            endian: self.layout.ctx.endian,
            tail_start: Cell::new(0),
        })
    }
    /// TIME.
    pub fn time(&self) -> Option<u64> {
        self.u64(self.layout.time, self.layout.t_time)
    }
    /// The event id: IDENTIFIER if the event writes it, else ID.
    pub fn id(&self) -> Option<u64> {
        self.u64(self.layout.identifier, self.layout.t_identifier)
            .or_else(|| self.u64(self.layout.id, self.layout.t_id))
    }
    /// STREAM_ID.
    pub fn stream_id(&self) -> Option<u64> {
        self.u64(self.layout.stream_id, self.layout.t_stream_id)
    }
    /// CPU.
    pub fn cpu(&self) -> Option<u32> {
        self.pair(self.layout.cpu, self.layout.t_cpu).map(|(c, _)| c)
    }
    /// TID's pid.
    pub fn pid(&self) -> Option<u32> {
        self.pair(self.layout.tid, self.layout.t_tid).map(|(p, _)| p)
    }
    /// TID's tid.
    pub fn tid(&self) -> Option<u32> {
        self.pair(self.layout.tid, self.layout.t_tid).map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of the fixed SAMPLE fields, in both byte orders, on a record of exactly
    /// `fixed_size` bytes (the edge the view's unchecked loads rely on; run under Miri by
    /// `make miri`): each accessor gives what the complete decode gives, absent fields `None`,
    /// and a record one word shorter is refused.
    #[test]
    fn fixed_fields_read_what_the_decode_reads_at_the_edge() {
        const BITS: [u64; 9] =
            [st::IDENTIFIER, st::IP, st::TID, st::TIME, st::ADDR, st::ID, st::STREAM_ID, st::CPU, st::PERIOD];
        let step = if cfg!(miri) { 7 } else { 1 };
        for endian in [Endian::Little, Endian::Big] {
            for combo in (0u32..1 << BITS.len()).step_by(step) {
                let sample_type =
                    BITS.iter().enumerate().filter(|(i, _)| combo & 1 << i != 0).fold(0, |t, (_, b)| t | b);
                let ctx = DecodeContext { sample_type, ..DecodeContext::new(endian) };
                let layout = SampleLayout::new(&ctx);
                let size = layout.fixed_size();
                let mut rec = [0u8; 80];
                rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: size as u16 }.to_bytes(endian));
                for (k, word) in rec[8..size].chunks_exact_mut(8).enumerate() {
                    word.copy_from_slice(&endian.put_u64(0x0102_0304_0000_0000 | (k as u64 + 1)));
                }
                let rec = &rec[..size];
                let v = layout.sample(rec).unwrap();
                let d = v.decode().unwrap();
                assert_eq!(
                    (
                        v.identifier(),
                        v.ip(),
                        v.pid_tid(),
                        v.time(),
                        v.addr(),
                        v.id(),
                        v.stream_id(),
                        v.cpu(),
                        v.period()
                    ),
                    (d.identifier, d.ip, d.tid, d.time, d.addr, d.id.or(d.identifier), d.stream_id, d.cpu, d.period),
                    "sample_type {sample_type:#x}, {endian:?}"
                );
                assert_eq!(v.ip().is_some(), sample_type & st::IP != 0);
                if size > Header::SIZE {
                    assert!(layout.sample(&rec[..size - 8]).is_err(), "a short record is refused");
                }
            }
        }
    }
    /// A record walked in one byte order is read in it: the view of a layout of the same order
    /// reads the fields, a layout of the other order refuses it with both orders named.
    #[test]
    fn a_walked_record_is_read_in_the_walks_byte_order_or_refused() {
        for (walk, other) in [(Endian::Little, Endian::Big), (Endian::Big, Endian::Little)] {
            let mut rec = [0u8; 24];
            rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: 24 }.to_bytes(walk));
            rec[8..16].copy_from_slice(&walk.put_u64(0x1234));
            rec[16..].copy_from_slice(&walk.pair_u32(7, 8));
            let r = super::super::Walker::new(&rec, walk).next().unwrap().unwrap();
            assert_eq!(r.endian, walk);
            let ctx = |endian| DecodeContext { sample_type: st::IP | st::TID, ..DecodeContext::new(endian) };
            let same = SampleLayout::new(&ctx(walk));
            let v = same.sample(&r).unwrap();
            assert_eq!((v.ip(), v.pid(), v.tid()), (Some(0x1234), Some(7), Some(8)));
            let crossed = SampleLayout::new(&ctx(other));
            let e = crossed.sample(&r).unwrap_err();
            assert_eq!(e, DecodeError::ByteOrderMismatch { layout: other, record: walk });
            extern crate std;
            use std::string::ToString;
            assert!(e.to_string().contains("walk with the byte order"), "{e}");
        }
    }
}
