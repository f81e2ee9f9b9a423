//! The layout of one event's records, computed once from its attr: [`SampleLayout`]. The views
//! that read fields through it ([`SampleView`], [`RecordView`]) are in `view.rs`.
//!
//! perf precomputes, per event, where the id sits (`id_pos`, `is_pos`) and how large the fixed
//! part of a sample is (`tools/perf/util/evsel.c`). This is the same idea carried to every
//! field: a SAMPLE's fields up to the first one whose size depends on the record (a READ group,
//! CALLCHAIN, RAW, …) sit at offsets that depend only on `sample_type` and `read_format`, so
//! they are computed here once, and each access is a test of the field's `sample_type` bit and
//! one load (unchecked: the view checked once that the record holds the fixed prefix). The
//! fields after RAW sit at fixed distances from where they start, up to the first one whose size
//! depends on the record, computed likewise. The `sample_id` trailer of other records sits at
//! fixed distances from the record's end.
//!
//! ```text
//! SAMPLE:  header | IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD [READ w/o GROUP] | CALLCHAIN RAW | BRANCH_STACK ... AUX
//!                   <------------- fixed offsets (this layout) ------------------------>   <- walked ->   <- from the tail's start ->
//! others:  header | body ... | TID TIME ID STREAM_ID CPU IDENTIFIER   (sample_id, fixed offsets from the end)
//! ```

use super::header::{types, Header};
use super::read_format as rf;
use super::sample_type as st;
use super::view::{Kind, RecordView, SampleView};
use super::{DecodeContext, DecodeError, Endian, ReadCounters};

/// The SAMPLE fields after RAW, in output order (`perf_output_sample`): each a bit (or, for
/// the weight, both of its bits) of `sample_type`.
pub(super) const TAIL: [u64; 12] = [
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
pub(super) const ABSENT: u16 = u16::MAX;

/// Where each field of one event's records sits. Build it once per event with
/// [`SampleLayout::new`] (it is `const`), then read records through [`SampleLayout::sample`]
/// and [`SampleLayout::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SampleLayout {
    pub(super) ctx: DecodeContext,
    // SAMPLE: byte offsets from the start of the record (header included), ABSENT when the
    // field is not in `sample_type`.
    pub(super) identifier: u16,
    pub(super) ip: u16,
    pub(super) tid: u16,
    pub(super) time: u16,
    pub(super) addr: u16,
    pub(super) id: u16,
    pub(super) stream_id: u16,
    pub(super) cpu: u16,
    pub(super) period: u16,
    /// Start of the READ block (with or without GROUP).
    pub(super) read: u16,
    /// End of the fixed prefix: the first byte whose offset depends on the record's content.
    pub(super) fixed_end: u16,
    /// The offsets of the u64 fields after RAW ([`TAIL`] order) that no variable field
    /// precedes (ABSENT otherwise, or when the event lacks them): one load each, like the
    /// fixed prefix.
    pub(super) tail: [u16; TAIL.len()],
    /// The smallest SAMPLE this event writes: the fixed prefix and the fixed tail fields.
    /// The offsets of the fields after RAW ([`TAIL`] order) from where those fields start,
    /// for each that no variable-size field after RAW precedes (ABSENT otherwise, or when the
    /// event lacks it): the view reads them at its `tail` plus this, one checked load.
    pub(super) tail_rel: [u16; TAIL.len()],
    /// Whether a view finds where the fields after RAW start by walking the record (a READ
    /// group, CALLCHAIN or RAW precedes them and the event writes one of them), once when it is
    /// made; else they start at `fixed_end`. Also set for an ambiguous BRANCH_STACK (its view's
    /// tail fields come from the complete decode).
    pub(super) walk_tail: bool,
    /// A BRANCH_STACK with `HW_INDEX`, whose two forms (with `hw_idx`, or the kernel's `nr = 0`
    /// alone when the PMU supplied no stack) only the whole record tells apart.
    pub(super) ambiguous_branch_stack: bool,
    pub(super) min_size: u16,
    // Other records: byte distances from the end of the record back to the start of each
    // trailer field, ABSENT without `sample_id_all` or when the field is not in `sample_type`.
    pub(super) t_tid: u16,
    pub(super) t_time: u16,
    pub(super) t_id: u16,
    pub(super) t_stream_id: u16,
    pub(super) t_cpu: u16,
    pub(super) t_identifier: u16,
    /// Size of the trailer (0 without `sample_id_all`).
    pub(super) trailer: u16,
    /// Registers in REGS_USER and REGS_INTR (the bits of `sample_regs_user`/`_intr`), counted
    /// once here rather than at every read (a popcount is a software routine on the x86-64
    /// baseline, which has no `popcnt`).
    pub(super) regs_user_words: u8,
    pub(super) regs_intr_words: u8,
}

/// Whether the field `bit` of [`TAIL`] is one u64 (its size does not depend on the record).
const fn is_word(bit: u64) -> bool {
    matches!(
        bit,
        st::WEIGHT_TYPE
            | st::DATA_SRC
            | st::TRANSACTION
            | st::PHYS_ADDR
            | st::CGROUP
            | st::DATA_PAGE_SIZE
            | st::CODE_PAGE_SIZE
    )
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
                if fixed && is_word(field) {
                    tail[i] = off as u16;
                    off += 8;
                } else {
                    fixed = false;
                }
            }
            i += 1;
        }
        let min_size = off as u16;
        // Each field after RAW from where they start, up to the first variable-size one.
        let mut tail_rel = [ABSENT; TAIL.len()];
        let (mut rel, mut i, mut any_tail) = (0usize, 0, false);
        while i < TAIL.len() {
            let field = TAIL[i];
            if t & field != 0 {
                any_tail = true;
                if rel != usize::MAX {
                    tail_rel[i] = rel as u16;
                }
                rel = if rel != usize::MAX && is_word(field) { rel + 8 } else { usize::MAX };
            }
            i += 1;
        }
        let variable_before_tail =
            t & (st::CALLCHAIN | st::RAW) != 0 || (t & st::READ != 0 && ctx.read_format & rf::GROUP != 0);
        let ambiguous_branch_stack =
            t & st::BRANCH_STACK != 0 && ctx.branch_sample_type & super::branch_sample_type::HW_INDEX != 0;
        let walk_tail = (any_tail && variable_before_tail) || ambiguous_branch_stack;
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
            tail_rel,
            walk_tail,
            ambiguous_branch_stack,
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
        let (bytes, endian) = self.sample_record(record)?;
        self.view(bytes, endian)
    }

    /// A SAMPLE record's bytes and byte order, as [`sample`](Self::sample) and
    /// [`read_counters`](Self::read_counters) take them: its type checked (read again from raw
    /// bytes, not from a walked record), its byte order this layout's, and no longer than a
    /// record can be. (The fixed fields' length is the caller's.)
    #[inline(always)]
    fn sample_record<'a, R: super::RecordRef<'a>>(&self, record: R) -> Result<(&'a [u8], Endian), DecodeError> {
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
        Ok((bytes, endian))
    }

    /// A SAMPLE's `PERF_SAMPLE_READ` counters, each its value, id and lost count
    /// ([`ReadCounters`]) — what perf delivers from such a sample, one counter at a time
    /// (`deliver_sample_value`) — read at the READ field's offset: the record checked as
    /// [`sample`](Self::sample) checks it, the fields after READ not walked (a view finds
    /// where its tail fields start when it is made; this does not). Empty for an event
    /// without READ. A READ block that runs past the record is [`DecodeError::CountTooLarge`]
    /// (GROUP's `nr`) or [`DecodeError::Truncated`].
    ///
    /// ```
    /// use perfring::record::{read_format as rf, sample_type as st, Attr, Endian, EventLayout};
    /// let attr = Attr { sample_type: st::READ, read_format: rf::GROUP | rf::ID, ..Attr::default() };
    /// let layout = EventLayout::new(&attr, Endian::Little);
    /// // A SAMPLE: header, then READ: nr = 2, {value, id} twice.
    /// let mut rec = vec![9u8, 0, 0, 0, 0, 0, 48, 0];
    /// for w in [2u64, 1000, 7, 250, 8] {
    ///     rec.extend_from_slice(&w.to_le_bytes());
    /// }
    /// let counters: Vec<_> = layout.read_counters(&rec[..]).unwrap().map(|c| (c.id, c.value)).collect();
    /// assert_eq!(counters, [(Some(7), 1000), (Some(8), 250)]);
    /// // An `nr` the record does not hold is an error, not a read past its end.
    /// rec[8] = 3;
    /// assert!(layout.read_counters(&rec[..]).is_err());
    /// ```
    #[inline]
    pub fn read_counters<'a, R: super::RecordRef<'a>>(&self, record: R) -> Result<ReadCounters<'a>, DecodeError> {
        let (bytes, endian) = self.sample_record(record)?;
        if bytes.len() < self.min_size as usize {
            return Err(self.too_short(bytes.len()));
        }
        if self.ctx.sample_type & st::READ == 0 {
            return Ok(ReadCounters::EMPTY);
        }
        ReadCounters::new(bytes, self.read as usize, self.ctx.read_format, endian)
    }

    /// The view of a SAMPLE `bytes` (in `endian`, this layout's order, no longer than a record
    /// can be): its length checked against the fixed fields.
    #[inline(always)]
    fn view<'a>(&'a self, bytes: &'a [u8], endian: Endian) -> Result<SampleView<'a>, DecodeError> {
        if bytes.len() < self.min_size as usize {
            return Err(self.too_short(bytes.len()));
        }
        Ok(SampleView::new(bytes, self, endian))
    }

    /// [`sample`](Self::sample) for a record whose type is known to be SAMPLE and that is no
    /// longer than a record can be: the byte order and the fixed fields' length checked.
    #[inline(always)]
    pub(super) fn sample_typed<'a>(&'a self, bytes: &'a [u8], endian: Endian) -> Result<SampleView<'a>, DecodeError> {
        if endian != self.ctx.endian {
            return Err(DecodeError::ByteOrderMismatch { layout: self.ctx.endian, record: endian });
        }
        self.view(bytes, endian)
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
