//! The layout of one event's records, computed once from its attr: [`EventLayout`] (the attr
//! and the offsets of every field, `SampleLayout`). The views that read fields through it
//! ([`SampleView`](super::SampleView), [`RecordView`](super::RecordView)) are in `view.rs`,
//! which reads this file's offsets; this file knows nothing of the views.
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

use super::header::Header;
use super::read_format as rf;
use super::sample_type as st;
use super::{Attr, DecodeContext, DecodeError, Endian};

/// One event: its attr and the layout of its records, derived from the attr once. An
/// [`EventSet`](super::EventSet) holds one per event; a record's
/// [`attribution`](super::EventRecord::attribution) names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventLayout {
    attr: Attr,
    pub(super) layout: SampleLayout,
}

impl EventLayout {
    /// An unused slot, for filling storage arrays (`[EventLayout::EMPTY; N]`).
    pub const EMPTY: EventLayout = EventLayout::new(&Attr::ZERO, Endian::NATIVE);

    /// The event of `attr`, whose records are in `endian` order.
    pub const fn new(attr: &Attr, endian: Endian) -> EventLayout {
        EventLayout { attr: *attr, layout: SampleLayout::new(&DecodeContext::from_attr(attr, endian)) }
    }
    /// The attr.
    pub const fn attr(&self) -> &Attr {
        &self.attr
    }
    /// The decode context of its records (the attr's fields that decide their layout, and
    /// their byte order).
    pub(crate) const fn context(&self) -> &DecodeContext {
        self.layout.context()
    }
    /// perf's `id_pos`: the index, in u64 words after the header, of the event id in its
    /// SAMPLEs (IDENTIFIER, else ID), or `None` if it writes neither
    /// (`tools/perf/util/evsel.c:__perf_evsel__calc_id_pos`).
    pub const fn id_pos(&self) -> Option<usize> {
        self.layout.id_pos()
    }
    /// perf's `is_pos`: the index, counted back in u64 words from the end of its non-SAMPLE
    /// records, of the event id in their trailer (1 for IDENTIFIER), or `None` if it writes
    /// neither IDENTIFIER nor ID (`__perf_evsel__calc_is_pos`).
    pub const fn is_pos(&self) -> Option<usize> {
        self.layout.is_pos()
    }
}

impl Default for EventLayout {
    fn default() -> Self {
        EventLayout::EMPTY
    }
}

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

/// Where each field of one event's records sits, computed once per event by
/// [`SampleLayout::new`] (it is `const`); the views read records through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SampleLayout {
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
    /// `min_size` when every field the event writes has a fixed size (the record is then
    /// exactly that long), 0 otherwise.
    pub(super) exact_size: u16,
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

/// The SAMPLE fields whose size is in the record (READ is one with GROUP).
const VARIABLE_SIZE: u64 =
    st::CALLCHAIN | st::RAW | st::BRANCH_STACK | st::REGS_USER | st::STACK_USER | st::REGS_INTR | st::AUX;

/// The offsets of the fields after RAW ([`TAIL`] order) that sit at fixed offsets from the
/// record's start, `off` being where they start when nothing variable precedes them: those
/// before the first variable-size field (ABSENT for the others and for absent fields); and the
/// smallest SAMPLE the event writes (the fixed prefix and those fields).
const fn tail_offsets(ctx: &DecodeContext, mut off: usize) -> ([u16; TAIL.len()], usize) {
    let t = ctx.sample_type;
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
    (tail, off)
}

/// Each field after RAW ([`TAIL`] order) from where those fields start, up to the first
/// variable-size one (ABSENT after it and for absent fields); and whether the event writes any
/// of them.
const fn tail_relative(t: u64) -> ([u16; TAIL.len()], bool) {
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
    (tail_rel, any_tail)
}

/// The `sample_id` trailer of non-SAMPLE records, in its own order
/// (`__perf_event__output_id_sample`), measured from the record's end: its size (0 without
/// `sample_id_all`) and the distances of TID, TIME, ID, STREAM_ID, CPU and IDENTIFIER (ABSENT
/// when not written). IDENTIFIER is last, so its distance is 8 whenever it is present.
const fn trailer_offsets(ctx: &DecodeContext) -> (usize, [u16; 6]) {
    let t = ctx.sample_type;
    let trailer = if ctx.sample_id_all { super::SampleId::size(t) } else { 0 };
    let mut back = trailer;
    let bits = [st::TID, st::TIME, st::ID, st::STREAM_ID, st::CPU, st::IDENTIFIER];
    let mut out = [ABSENT; 6];
    let mut i = 0;
    while i < bits.len() {
        let present = ctx.sample_id_all && t & bits[i] != 0;
        out[i] = at(present, back);
        if present {
            back -= 8;
        }
        i += 1;
    }
    (trailer, out)
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
        let (tail, min_size) = tail_offsets(ctx, off);
        let (tail_rel, any_tail) = tail_relative(t);
        let variable_before_tail =
            t & (st::CALLCHAIN | st::RAW) != 0 || (t & st::READ != 0 && ctx.read_format & rf::GROUP != 0);
        let ambiguous_branch_stack =
            t & st::BRANCH_STACK != 0 && ctx.branch_sample_type & super::branch_sample_type::HW_INDEX != 0;
        let walk_tail = (any_tail && variable_before_tail) || ambiguous_branch_stack;
        let (trailer, [t_tid, t_time, t_id, t_stream_id, t_cpu, t_identifier]) = trailer_offsets(ctx);
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
            min_size: min_size as u16,
            exact_size: if t & VARIABLE_SIZE != 0 || (t & st::READ != 0 && ctx.read_format & rf::GROUP != 0) {
                0
            } else {
                min_size as u16
            },
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
}

#[cold]
pub(super) fn not_a_sample(type_: u32) -> DecodeError {
    DecodeError::NotASample { type_ }
}

/// The field a SAMPLE too short for its fixed fields is reported against.
const FIXED_FIELDS: &str = "sample (fixed fields)";

/// A SAMPLE of `have` bytes, fewer than the `need` of its fixed fields.
#[cold]
pub(super) fn too_short(need: usize, have: usize) -> DecodeError {
    DecodeError::Truncated { field: FIXED_FIELDS, offset: 0, need, have }
}
