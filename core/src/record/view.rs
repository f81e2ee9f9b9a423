//! The views that read a record through its event's layout (`SampleLayout`, computed once per
//! event): [`SampleView`] (every field of a SAMPLE, each read when asked for) and [`RecordView`]
//! (the fields perf orders and attributes any record by). A record's
//! [`sample`](super::EventRecord::sample) and [`view`](super::EventRecord::view) make them.
//!
//! A view costs one length check to make (and, for an event whose fields after RAW follow a
//! READ group, CALLCHAIN or RAW, one walk past those); each accessor pays only for the field it
//! reads. An accessor of a field the event lacks is a test of its `sample_type` bit, in line:
//! nothing of the view goes to an out-of-line function (the rare paths take a copy), so a byte
//! order that is a constant where the view is made stays one for every field read. The
//! complete [`decode`](super::EventRecord::decode) stays the reference: `tests/tests/records_view.rs` checks
//! that both agree on every field of every record of every fixture.

use super::cursor::Reader;
use super::header::{types, Header};
use super::layout::{too_short, SampleLayout, ABSENT, TAIL};
use super::read_format as rf;
use super::sample::aux_data;
use super::sample_type as st;
use super::{
    BranchStack, DecodeError, Endian, Entries, PidTid, ReadValues, Regs, Sample, SampleCpu, StackUser, Weight,
    WeightStruct,
};

/// The index of the field `bit` in [`TAIL`] (`TAIL.len()`, which no table has, for another bit).
const fn tail_index(bit: u64) -> usize {
    let mut i = 0;
    while i < TAIL.len() {
        if TAIL[i] == bit {
            return i;
        }
        i += 1;
    }
    TAIL.len()
}

#[inline(always)]
fn u64_at(bytes: &[u8], off: u16, endian: Endian) -> Option<u64> {
    endian.u64_at(bytes, off as usize)
}

#[inline(always)]
fn pair_at(bytes: &[u8], off: u16, endian: Endian) -> Option<(u32, u32)> {
    endian.u32_pair_at(bytes, off as usize)
}

/// The offset after a READ group (its length is in the record). Out of line, and by value: the
/// callers' readers and views stay in registers.
#[inline(never)]
fn read_group_end(bytes: &[u8], layout: &SampleLayout, endian: Endian) -> Result<usize, DecodeError> {
    let mut r = Reader::new(bytes, layout.read as usize, bytes.len(), endian);
    ReadValues::decode(&mut r, layout.ctx.read_format)?;
    Ok(r.offset())
}

/// Where the fields after RAW start in `bytes`: past a READ group, CALLCHAIN and RAW (those the
/// event writes), with the bounds checks of the complete decode; 0 when one of them runs past
/// the record, or for an ambiguous BRANCH_STACK (the accessors of the fields after RAW then take
/// their slow paths: the error, or the complete decode).
#[inline]
fn tail_start(bytes: &[u8], layout: &SampleLayout, endian: Endian) -> usize {
    let ctx = &layout.ctx;
    let t = ctx.sample_type;
    if layout.ambiguous_branch_stack {
        return 0;
    }
    let mut at = if t & st::READ != 0 && ctx.read_format & rf::GROUP != 0 {
        match read_group_end(bytes, layout, endian) {
            Ok(end) => end,
            Err(_) => return 0,
        }
    } else {
        layout.fixed_end as usize
    };
    if t & st::CALLCHAIN != 0 {
        // `nr`, then `nr` u64s: what `Reader::entries` accepts.
        let Some(nr) = endian.u64_at(bytes, at) else { return 0 };
        let room = (bytes.len() - at - 8) / 8;
        if nr > room as u64 {
            return 0;
        }
        at += 8 + 8 * nr as usize;
    }
    if t & st::RAW != 0 {
        let Some(size) = endian.u32_at(bytes, at) else { return 0 };
        if size as usize > bytes.len() - at - 4 {
            return 0;
        }
        at += 4 + size as usize;
    }
    at
}

/// A SAMPLE record read through its event's layout. Fields of the fixed prefix are
/// one load each; [`callchain`](SampleView::callchain) and [`raw`](SampleView::raw) walk only
/// the fields before them; the fields after RAW are read from where they start (found when
/// the view is made), one load each up to the first whose size depends on the record. Each
/// accessor is `None` exactly when the event's `sample_type` lacks the field, at the cost of a
/// bit test; the fields can be read in any order at the same cost. The record's
/// [`decode`](super::EventRecord::decode) gives this view with every check of the complete
/// decode made ([`Record::Sample`](super::Record::Sample)); [`to_sample`](Self::to_sample) copies
/// every field into a [`Sample`]. Two views are equal when they read the same bytes the same
/// way (the bytes, their byte order, the event's layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleView<'a> {
    bytes: &'a [u8],
    layout: &'a SampleLayout,
    /// The layout's byte order, held by value: when it is a constant where the view is made
    /// (a walk in `Endian::NATIVE`), the compiler drops the select from every field read.
    endian: Endian,
    /// Where the fields after RAW start: the layout's `fixed_end`, or found by walking a READ
    /// group, CALLCHAIN and RAW when the view was made (`SampleLayout::walk_tail`); 0 when that
    /// walk failed or the BRANCH_STACK is ambiguous (the accessors' slow paths then report the
    /// error or ask the complete decode). A plain value: reading a field changes nothing in the
    /// view.
    tail: usize,
}

impl<'a> SampleView<'a> {
    /// Every field as values ([`Sample`], what the encoder writes), with every check of the
    /// complete decode: the view's fields copied out, e.g. to keep or to encode them again (and
    /// the accessors' slow paths).
    pub fn to_sample(&self) -> Result<Sample<'a>, DecodeError> {
        // In the record's byte order: the layout's offsets do not depend on it.
        Sample::decode(self.bytes, self.misc(), &super::DecodeContext { endian: self.endian, ..self.layout.ctx })
    }

    /// Every check of the complete decode ([`Sample`]'s), none of its copies: what makes the
    /// [`Record::Sample`](super::Record::Sample) of [`decode`](super::EventRecord::decode) a
    /// view whose every field reads. An event of fixed-size fields only: one compare of the
    /// length; else a walk over the variable fields from where the view found the fields
    /// after RAW start (the complete decode itself for an ambiguous BRANCH_STACK, and for the
    /// error of a record that fails).
    #[inline(always)]
    pub(super) fn check(&self) -> Result<(), DecodeError> {
        if self.bytes.len() == self.layout.exact_size as usize {
            return Ok(());
        }
        Self::check_walk(self.bytes, self.layout, self.endian, self.tail)
    }

    #[inline(never)]
    fn check_walk(bytes: &'a [u8], layout: &'a SampleLayout, endian: Endian, tail: usize) -> Result<(), DecodeError> {
        // Where the fields after RAW start: found when the view was made if the event writes
        // any of them (0 when that walk failed); else past READ, CALLCHAIN and RAW now.
        let start = if layout.walk_tail { tail } else { tail_start(bytes, layout, endian) };
        let v = SampleView { bytes, layout, endian, tail: start };
        if layout.exact_size == 0 && !layout.ambiguous_branch_stack && start != 0 {
            if let Ok(Some(mut r)) = v.walk_to(st::AUX) {
                let aux_read = layout.ctx.sample_type & st::AUX == 0 || aux_data(&mut r).is_ok();
                if aux_read && r.remaining() == 0 {
                    return Ok(());
                }
            }
        }
        // The kernel's no-stack form of an ambiguous BRANCH_STACK, or the error.
        v.to_sample().map(|_| ())
    }

    /// The view of a SAMPLE's `bytes` (its type checked by the caller) in `endian`, read in
    /// that order whatever the layout's (its offsets do not depend on it): refused unless the
    /// fixed fields fit.
    #[inline(always)]
    pub(super) fn of(bytes: &'a [u8], layout: &'a SampleLayout, endian: Endian) -> Result<SampleView<'a>, DecodeError> {
        if bytes.len() < layout.min_size as usize {
            return Err(too_short(layout.min_size as usize, bytes.len()));
        }
        Ok(SampleView::new(bytes, layout, endian))
    }

    /// A view of `bytes`, a SAMPLE of at least `layout.min_size` bytes, whose fields are in
    /// `endian`, the layout's order.
    #[inline(always)]
    fn new(bytes: &'a [u8], layout: &'a SampleLayout, endian: Endian) -> SampleView<'a> {
        let tail = if layout.walk_tail { tail_start(bytes, layout, endian) } else { layout.fixed_end as usize };
        SampleView { bytes, layout, endian, tail }
    }

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
        // from (the layout's fields are visible to the record module only, and only `new` sets
        // them), so `off` is that field's offset and `off + 8 <= fixed_end <= min_size`; a
        // `SampleView` is only made for `bytes` of at least `min_size` bytes (`SampleView::of`,
        // its one caller outside tests). So the 8 bytes
        // are inside `bytes`; `read_unaligned` needs no alignment.
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

    /// `header.misc` (for users: `rec.raw().header.misc`, or the decoded `Record::misc`).
    #[inline(always)]
    pub(crate) fn misc(&self) -> u16 {
        self.endian.u16([self.bytes[4], self.bytes[5]])
    }
    /// `PERF_RECORD_MISC_EXACT_IP`: the IP is exactly the one of the sampled instruction.
    #[inline(always)]
    pub fn exact_ip(&self) -> bool {
        self.misc() & super::misc::EXACT_IP != 0
    }
    /// IDENTIFIER.
    #[inline(always)]
    pub fn identifier(&self) -> Option<u64> {
        self.u64(st::IDENTIFIER, self.layout.identifier)
    }
    /// IP.
    #[inline(always)]
    pub fn ip(&self) -> Option<u64> {
        self.u64(st::IP, self.layout.ip)
    }
    /// TID: `{pid, tid}` (as [`Sample::tid`](super::Sample::tid)).
    #[inline(always)]
    pub fn tid(&self) -> Option<PidTid> {
        self.pair(st::TID, self.layout.tid).map(|(pid, tid)| PidTid { pid, tid })
    }
    /// TIME.
    #[inline(always)]
    pub fn time(&self) -> Option<u64> {
        self.u64(st::TIME, self.layout.time)
    }
    /// ADDR.
    #[inline(always)]
    pub fn addr(&self) -> Option<u64> {
        self.u64(st::ADDR, self.layout.addr)
    }
    /// The event id, as perf's `sample->id`: the ID field, or IDENTIFIER when the event writes
    /// only that (the two hold the same value when it writes both).
    #[inline(always)]
    pub fn id(&self) -> Option<u64> {
        self.u64(st::ID, self.layout.id).or_else(|| self.identifier())
    }
    /// STREAM_ID.
    #[inline(always)]
    pub fn stream_id(&self) -> Option<u64> {
        self.u64(st::STREAM_ID, self.layout.stream_id)
    }
    /// CPU: `{cpu, res}`.
    #[inline(always)]
    pub fn cpu(&self) -> Option<SampleCpu> {
        self.pair(st::CPU, self.layout.cpu).map(|(cpu, res)| SampleCpu { cpu, res })
    }
    /// PERIOD.
    #[inline(always)]
    pub fn period(&self) -> Option<u64> {
        self.u64(st::PERIOD, self.layout.period)
    }

    /// A reader at the first variable field after READ (past a READ group, whose length is in
    /// the record).
    #[inline(always)]
    fn after_read(&self) -> Result<Reader<'a>, DecodeError> {
        let ctx = &self.layout.ctx;
        let start = if ctx.sample_type & st::READ != 0 && ctx.read_format & rf::GROUP != 0 {
            read_group_end(self.bytes, self.layout, self.endian)?
        } else {
            self.layout.fixed_end as usize
        };
        Ok(Reader::new(self.bytes, start, self.bytes.len(), self.endian))
    }

    /// READ, by `read_format` (with GROUP, the entries borrow the record); its counters as perf
    /// delivers them, one at a time: [`ReadValues::counters`].
    #[inline]
    pub fn read(&self) -> Result<Option<ReadValues<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::READ == 0 {
            return Ok(None);
        }
        Self::read_slow(self.bytes, self.layout, self.endian, self.tail).map(Some)
    }

    #[inline(never)]
    fn read_slow(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
    ) -> Result<ReadValues<'a>, DecodeError> {
        let _ = tail;
        let mut r = Reader::new(bytes, layout.read as usize, bytes.len(), endian);
        ReadValues::decode(&mut r, layout.ctx.read_format)
    }

    /// CALLCHAIN: `nr` ips with context markers; walks a READ group before it, if any.
    #[inline(always)]
    pub fn callchain(&self) -> Result<Option<Entries<'a, u64>>, DecodeError> {
        if self.layout.ctx.sample_type & st::CALLCHAIN == 0 {
            return Ok(None);
        }
        let mut r = self.after_read()?;
        let nr = r.u64("sample.callchain.nr")?;
        r.entries(nr, r.endian, "sample.callchain.nr").map(Some)
    }

    /// RAW: the `size` bytes (padding included); walks READ and CALLCHAIN before it.
    #[inline(always)]
    pub fn raw(&self) -> Result<Option<&'a [u8]>, DecodeError> {
        let t = self.layout.ctx.sample_type;
        if t & st::RAW == 0 {
            return Ok(None);
        }
        let mut r = self.after_read()?;
        if t & st::CALLCHAIN != 0 {
            let nr = r.u64("sample.callchain.nr")?;
            r.entries::<u64>(nr, r.endian, "sample.callchain.nr")?;
        }
        let size = r.u32("sample.raw.size")?;
        r.take_counted(u64::from(size), "sample.raw.size").map(Some)
    }

    /// A reader at the field `bit` after RAW, which the event writes, when no variable-size
    /// field after RAW precedes it and the view knows where those fields start: one add. `None`
    /// otherwise (the caller's slow path walks).
    #[inline(always)]
    fn tail_reader(&self, bit: u64) -> Option<Reader<'a>> {
        let rel = self.layout.tail_rel.get(tail_index(bit)).copied().unwrap_or(ABSENT);
        if self.tail == 0 || rel == ABSENT {
            return None;
        }
        Some(Reader::new(self.bytes, self.tail + rel as usize, self.bytes.len(), self.endian))
    }

    /// The slow path to the field `bit` after RAW (which the event writes), in the out-of-line
    /// paths (which take the view's parts as values, never the view: a view passed by value
    /// goes through a copy in memory, which the compiler makes where the view is made): a reader at it, past every field before it, each skipped with the
    /// checks of the complete decode; `Ok(None)` for an ambiguous BRANCH_STACK, whose fields
    /// only the complete decode reads.
    #[inline(never)]
    fn walk_to(self, bit: u64) -> Result<Option<Reader<'a>>, DecodeError> {
        let ctx = &self.layout.ctx;
        let t = ctx.sample_type;
        if self.layout.ambiguous_branch_stack {
            return Ok(None);
        }
        let mut r = if self.tail != 0 {
            Reader::new(self.bytes, self.tail, self.bytes.len(), self.endian)
        } else {
            // The walk of `tail_start` failed: again, for its error.
            let mut r = self.after_read()?;
            if t & st::CALLCHAIN != 0 {
                let nr = r.u64("sample.callchain.nr")?;
                r.entries::<u64>(nr, r.endian, "sample.callchain.nr")?;
            }
            if t & st::RAW != 0 {
                let size = r.u32("sample.raw.size")?;
                r.take_counted(u64::from(size), "sample.raw.size")?;
            }
            r
        };
        // In output order, up to the field asked for.
        macro_rules! upto {
            ($field:expr, $skip:expr) => {
                if $field == bit {
                    return Ok(Some(r));
                }
                if t & $field != 0 {
                    $skip;
                }
            };
        }
        upto!(st::BRANCH_STACK, {
            BranchStack::decode(&mut r, ctx.branch_sample_type, false)?;
        });
        upto!(st::REGS_USER, {
            Regs::decode(&mut r, self.layout.regs_user_words.into(), "sample.regs_user")?;
        });
        upto!(st::STACK_USER, skip_stack_user(&mut r)?);
        upto!(st::WEIGHT_TYPE, r.u64("sample.weight")?);
        upto!(st::DATA_SRC, r.u64("sample.data_src")?);
        upto!(st::TRANSACTION, r.u64("sample.transaction")?);
        upto!(st::REGS_INTR, {
            Regs::decode(&mut r, self.layout.regs_intr_words.into(), "sample.regs_intr")?;
        });
        upto!(st::PHYS_ADDR, r.u64("sample.phys_addr")?);
        upto!(st::CGROUP, r.u64("sample.cgroup")?);
        upto!(st::DATA_PAGE_SIZE, r.u64("sample.data_page_size")?);
        upto!(st::CODE_PAGE_SIZE, r.u64("sample.code_page_size")?);
        Ok(Some(r))
    }

    /// A u64 field after RAW: absent, one bit test; at a fixed offset, one load; from where the
    /// fields after RAW start, one checked load; else the slow path.
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
        let off = self.layout.tail.get(tail_index(bit)).copied().unwrap_or(ABSENT);
        if off != ABSENT {
            return Ok(u64_at(self.bytes, off, self.endian));
        }
        let value = match self.tail_reader(bit) {
            Some(r) => r.rest.first_chunk::<8>().map(|b| self.endian.u64(*b)),
            None => Self::tail_u64_slow(self.bytes, self.layout, self.endian, self.tail, bit, of),
        };
        // (The slow path's answer is a register pair, its error rebuilt out of line: a
        // `Result` with the error inside comes back through memory, and the absent field's
        // early `Ok(None)` above would then be merged with it there.)
        match value {
            Some(v) => Ok(Some(v)),
            None => Err(Self::tail_u64_error(self.bytes, self.layout, self.endian, self.tail, bit, field, of)),
        }
    }

    /// The slow path of [`tail_u64`](Self::tail_u64) for a field the event writes: its value,
    /// or `None` for an error (which `tail_u64_error` then gives).
    #[inline(never)]
    fn tail_u64_slow(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
        bit: u64,
        of: fn(&Sample<'a>) -> Option<u64>,
    ) -> Option<u64> {
        let v = SampleView { bytes, layout, endian, tail };
        match v.walk_to(bit) {
            Ok(Some(mut r)) => r.u64("").ok(),
            Ok(None) => v.to_sample().ok().as_ref().and_then(of),
            Err(_) => None,
        }
    }

    /// The error of a u64 field after RAW that the event writes but that could not be read.
    #[cold]
    #[inline(never)]
    fn tail_u64_error(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
        bit: u64,
        field: &'static str,
        of: fn(&Sample<'a>) -> Option<u64>,
    ) -> DecodeError {
        let v = SampleView { bytes, layout, endian, tail };
        let read = match v.walk_to(bit) {
            Ok(Some(mut r)) => r.u64(field).map(Some),
            Ok(None) => v.to_sample().map(|s| of(&s)),
            Err(e) => Err(e),
        };
        match read {
            Err(e) => e,
            // (Not reached: the slow path found no value where this finds one.)
            Ok(_) => DecodeError::Truncated { field, offset: tail, need: 8, have: 0 },
        }
    }

    /// BRANCH_STACK: the branch entries (and `hw_idx`, counters by `branch_sample_type`).
    #[inline]
    pub fn branch_stack(&self) -> Result<Option<BranchStack<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::BRANCH_STACK == 0 {
            return Ok(None);
        }
        Self::branch_stack_slow(self.bytes, self.layout, self.endian, self.tail)
    }

    #[inline(never)]
    fn branch_stack_slow(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
    ) -> Result<Option<BranchStack<'a>>, DecodeError> {
        let v = SampleView { bytes, layout, endian, tail };
        match v.walk_to(st::BRANCH_STACK)? {
            Some(mut r) => BranchStack::decode(&mut r, layout.ctx.branch_sample_type, false).map(Some),
            None => Ok(v.to_sample()?.branch_stack),
        }
    }

    /// REGS_USER: the ABI and the registers of `sample_regs_user`.
    #[inline(always)]
    pub fn regs_user(&self) -> Result<Option<Regs<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::REGS_USER == 0 {
            return Ok(None);
        }
        match self.tail_reader(st::REGS_USER) {
            Some(mut r) => Regs::decode(&mut r, self.layout.regs_user_words.into(), "sample.regs_user").map(Some),
            None => Self::regs_slow(
                self.bytes,
                self.layout,
                self.endian,
                self.tail,
                st::REGS_USER,
                self.layout.regs_user_words,
                "sample.regs_user",
                |s| s.regs_user,
            ),
        }
    }

    /// REGS_INTR: the ABI and the registers of `sample_regs_intr`.
    #[inline(always)]
    pub fn regs_intr(&self) -> Result<Option<Regs<'a>>, DecodeError> {
        if self.layout.ctx.sample_type & st::REGS_INTR == 0 {
            return Ok(None);
        }
        match self.tail_reader(st::REGS_INTR) {
            Some(mut r) => Regs::decode(&mut r, self.layout.regs_intr_words.into(), "sample.regs_intr").map(Some),
            None => Self::regs_slow(
                self.bytes,
                self.layout,
                self.endian,
                self.tail,
                st::REGS_INTR,
                self.layout.regs_intr_words,
                "sample.regs_intr",
                |s| s.regs_intr,
            ),
        }
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn regs_slow(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
        bit: u64,
        words: u8,
        field: &'static str,
        of: fn(&Sample<'a>) -> Option<Regs<'a>>,
    ) -> Result<Option<Regs<'a>>, DecodeError> {
        let v = SampleView { bytes, layout, endian, tail };
        match v.walk_to(bit)? {
            Some(mut r) => Regs::decode(&mut r, words.into(), field).map(Some),
            None => Ok(of(&v.to_sample()?)),
        }
    }

    /// STACK_USER: the dumped bytes and `dyn_size`.
    #[inline(always)]
    pub fn stack_user(&self) -> Result<Option<StackUser<'a>>, DecodeError> {
        let t = self.layout.ctx.sample_type;
        if t & st::STACK_USER == 0 {
            return Ok(None);
        }
        // REGS_USER before it (a `--call-graph dwarf` event writes both) is skipped in line.
        let r = if t & st::REGS_USER != 0 {
            self.tail_reader(st::REGS_USER).map(|mut r| {
                skip_regs(&mut r, self.layout.regs_user_words, "sample.regs_user")?;
                Ok(r)
            })
        } else {
            self.tail_reader(st::STACK_USER).map(Ok)
        };
        match r {
            Some(r) => stack_user(&mut r?).map(Some),
            None => Self::stack_user_slow(self.bytes, self.layout, self.endian, self.tail),
        }
    }

    #[inline(never)]
    fn stack_user_slow(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
    ) -> Result<Option<StackUser<'a>>, DecodeError> {
        let v = SampleView { bytes, layout, endian, tail };
        match v.walk_to(st::STACK_USER)? {
            Some(mut r) => stack_user(&mut r).map(Some),
            None => Ok(v.to_sample()?.stack_user),
        }
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
    #[inline]
    pub fn aux(&self) -> Result<Option<&'a [u8]>, DecodeError> {
        if self.layout.ctx.sample_type & st::AUX == 0 {
            return Ok(None);
        }
        Self::aux_slow(self.bytes, self.layout, self.endian, self.tail)
    }

    #[inline(never)]
    fn aux_slow(
        bytes: &'a [u8],
        layout: &'a SampleLayout,
        endian: Endian,
        tail: usize,
    ) -> Result<Option<&'a [u8]>, DecodeError> {
        let v = SampleView { bytes, layout, endian, tail };
        let r = match v.tail_reader(st::AUX) {
            Some(r) => Some(r),
            None => v.walk_to(st::AUX)?,
        };
        match r {
            Some(mut r) => aux_data(&mut r).map(Some),
            None => Ok(v.to_sample()?.aux),
        }
    }
}

/// Past a REGS block of `words` registers (none when its ABI is NONE).
#[inline(always)]
fn skip_regs(r: &mut Reader<'_>, words: u8, field: &'static str) -> Result<(), DecodeError> {
    let abi = r.u64(field)?;
    if abi != super::REGS_ABI_NONE {
        r.entries::<u64>(u64::from(words), r.endian, field)?;
    }
    Ok(())
}

/// STACK_USER at `r`: `size`, and if it is not 0, the bytes and `dyn_size`.
#[inline(always)]
fn stack_user<'a>(r: &mut Reader<'a>) -> Result<StackUser<'a>, DecodeError> {
    let size = r.u64("sample.stack_user.size")?;
    Ok(if size == 0 {
        // An empty slice at the field's place (callers can tell where it was).
        StackUser { data: r.take(0, "sample.stack_user.data")?, dyn_size: 0 }
    } else {
        let data = r.take_counted(size, "sample.stack_user.size")?;
        StackUser { data, dyn_size: r.u64("sample.stack_user.dyn_size")? }
    })
}

/// Past STACK_USER at `r`.
#[inline(always)]
fn skip_stack_user(r: &mut Reader<'_>) -> Result<(), DecodeError> {
    stack_user(r).map(|_| ())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sample,
    Trailer,
    None,
}

/// Any record of an event, read through its layout: the values perf uses to order
/// and attribute records — time, id, stream id, cpu, pid/tid — from a SAMPLE's fields or from
/// another record's `sample_id` trailer, with one set of accessors. Each is `None` when the
/// event does not write it into this kind of record (no `sample_id_all`, the bit not in
/// `sample_type`, a perf-only record type ≥ 64, or a record too short to hold it).
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    bytes: &'a [u8],
    layout: &'a SampleLayout,
    kind: Kind,
    endian: Endian,
}

impl<'a> RecordView<'a> {
    /// A view of any record of the event of `layout` (`bytes` = the whole record): the
    /// event-identifying values of a SAMPLE or of a trailer through one set of accessors.
    #[inline]
    pub(super) fn of(bytes: &'a [u8], layout: &'a SampleLayout, endian: Endian) -> RecordView<'a> {
        let type_ = endian.u32_at(bytes, 0).unwrap_or(0);
        let kind = if bytes.len() > u16::MAX as usize {
            Kind::None
        } else if type_ == types::SAMPLE && bytes.len() >= layout.min_size as usize {
            Kind::Sample
        } else if (1..types::HEADER_ATTR).contains(&type_)
            && type_ != types::SAMPLE
            && bytes.len() >= Header::SIZE + layout.trailer as usize
        {
            Kind::Trailer
        } else {
            Kind::None
        };
        RecordView { bytes, layout, kind, endian }
    }

    #[inline(always)]
    fn u64(&self, sample: u16, trailer: u16) -> Option<u64> {
        let e = self.endian;
        match self.kind {
            Kind::Sample => u64_at(self.bytes, sample, e),
            Kind::Trailer if trailer != ABSENT => u64_at(self.bytes, (self.bytes.len() - trailer as usize) as u16, e),
            _ => None,
        }
    }
    #[inline(always)]
    fn pair(&self, sample: u16, trailer: u16) -> Option<(u32, u32)> {
        let e = self.endian;
        match self.kind {
            Kind::Sample => pair_at(self.bytes, sample, e),
            Kind::Trailer if trailer != ABSENT => pair_at(self.bytes, (self.bytes.len() - trailer as usize) as u16, e),
            _ => None,
        }
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
    /// CPU: `{cpu, res}` (as [`SampleId::cpu`](super::SampleId::cpu)).
    pub fn cpu(&self) -> Option<SampleCpu> {
        self.pair(self.layout.cpu, self.layout.t_cpu).map(|(cpu, res)| SampleCpu { cpu, res })
    }
    /// TID: `{pid, tid}` (as [`SampleId::tid`](super::SampleId::tid)).
    pub fn tid(&self) -> Option<PidTid> {
        self.pair(self.layout.tid, self.layout.t_tid).map(|(pid, tid)| PidTid { pid, tid })
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
