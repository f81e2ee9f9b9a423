//! `PERF_RECORD_SAMPLE` (type 9): [`Sample`], in the kernel's output order
//! (`perf_output_sample`, kernel/events/core.c:perf_output_sample) — which is **not** the bit order: IDENTIFIER comes
//! first, AUX last, after CGROUP, DATA_PAGE_SIZE and CODE_PAGE_SIZE.

use super::branch_sample_type::HW_INDEX;
use super::cursor::{pad8, Reader, Writer};
use super::sample_type as st;
use super::{misc, BranchStack, DecodeContext, DecodeError, EncodeError, Endian, Entries, ReadValues, Regs};

/// SAMPLE's TID field: `{u32 pid, u32 tid}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PidTid {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
}

/// SAMPLE's CPU field: `{u32 cpu, u32 res}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleCpu {
    /// The CPU.
    pub cpu: u32,
    /// Reserved; the kernel writes 0.
    pub res: u32,
}

/// SAMPLE's WEIGHT or WEIGHT_STRUCT field (one u64 slot either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    /// `PERF_SAMPLE_WEIGHT`: the whole u64. Also used when both bits are set (the kernel
    /// refuses that attr; perf reads the full word then).
    Full(u64),
    /// `PERF_SAMPLE_WEIGHT_STRUCT`: `union perf_sample_weight`.
    Struct(WeightStruct),
}

/// `union perf_sample_weight`'s struct view. Declared `{u32 var1_dw; u16 var2_w; u16 var3_w}`
/// on little-endian machines and in reverse on big-endian ones, so that on both `var1_dw` is
/// bits 0–31 of the u64, `var2_w` bits 32–47 and `var3_w` bits 48–63.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WeightStruct {
    /// `var1_dw`: the weight (x86: latency).
    pub var1_dw: u32,
    /// `var2_w` (x86: instruction latency).
    pub var2_w: u16,
    /// `var3_w` (x86: retire latency; powerpc: pipeline stage cycles).
    pub var3_w: u16,
}

impl WeightStruct {
    /// From the u64 slot (already in native order).
    pub const fn from_u64(full: u64) -> WeightStruct {
        WeightStruct { var1_dw: full as u32, var2_w: (full >> 32) as u16, var3_w: (full >> 48) as u16 }
    }
    /// The u64 slot.
    pub const fn to_u64(self) -> u64 {
        self.var1_dw as u64 | (self.var2_w as u64) << 32 | (self.var3_w as u64) << 48
    }
}

impl Weight {
    /// The u64 slot, whichever form.
    pub const fn full(self) -> u64 {
        match self {
            Weight::Full(v) => v,
            Weight::Struct(s) => s.to_u64(),
        }
    }
}

/// SAMPLE's STACK_USER field: `u64 size`; if `size` ≠ 0, `u8 data[size]` and `u64 dyn_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StackUser<'a> {
    /// The dumped bytes (`size` of them). Bytes past `dyn_size` are stale ring content.
    pub data: &'a [u8],
    /// `dyn_size`: how much of `data` was really copied (0 and absent when `data` is empty).
    pub dyn_size: u64,
}

impl StackUser<'_> {
    /// The part of the dump that was really copied (`data[..dyn_size]`, clamped).
    pub fn valid(&self) -> &[u8] {
        let n = usize::try_from(self.dyn_size).unwrap_or(usize::MAX).min(self.data.len());
        self.data.get(..n).unwrap_or_default()
    }
}

/// `PERF_RECORD_SAMPLE`. Each `Option` field is `Some` exactly when its `sample_type` bit is
/// set in the context; fields are listed in output order.
///
/// The encoder zero-pads RAW, STACK_USER and AUX data to the kernel's alignment (RAW: `size + 4`
/// a multiple of 8; the others a multiple of 8) and writes the padded length; the decoder
/// returns the padded bytes, since padding cannot be told from data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample<'a> {
    /// `header.misc`: the CPU mode and `EXACT_IP`.
    pub misc: u16,
    /// Field 1: IDENTIFIER (bit 16): the event id, always first.
    pub identifier: Option<u64>,
    /// Field 2: IP (bit 0).
    pub ip: Option<u64>,
    /// Field 3: TID (bit 1).
    pub tid: Option<PidTid>,
    /// Field 4: TIME (bit 2).
    pub time: Option<u64>,
    /// Field 5: ADDR (bit 3).
    pub addr: Option<u64>,
    /// Field 6: ID (bit 6).
    pub id: Option<u64>,
    /// Field 7: STREAM_ID (bit 9).
    pub stream_id: Option<u64>,
    /// Field 8: CPU (bit 7).
    pub cpu: Option<SampleCpu>,
    /// Field 9: PERIOD (bit 8).
    pub period: Option<u64>,
    /// Field 10: READ (bit 4), laid out by `read_format`.
    pub read: Option<ReadValues<'a>>,
    /// Field 11: CALLCHAIN (bit 5): `nr` then the ips, with context markers
    /// ([`callchain`](super::callchain)).
    pub callchain: Option<Entries<'a, u64>>,
    /// Field 12: RAW (bit 10): the `size` bytes, padding included (opaque, "phase of the moon").
    pub raw: Option<&'a [u8]>,
    /// Field 13: BRANCH_STACK (bit 11).
    pub branch_stack: Option<BranchStack<'a>>,
    /// Field 14: REGS_USER (bit 12), counted by `sample_regs_user`.
    pub regs_user: Option<Regs<'a>>,
    /// Field 15: STACK_USER (bit 13).
    pub stack_user: Option<StackUser<'a>>,
    /// Field 16: WEIGHT (bit 14) or WEIGHT_STRUCT (bit 24).
    pub weight: Option<Weight>,
    /// Field 17: DATA_SRC (bit 15): `union perf_mem_data_src`, as the u64 read (its bitfield layout is
    /// the writer's; the uapi declares a reversed one for big-endian machines).
    pub data_src: Option<u64>,
    /// Field 18: TRANSACTION (bit 17).
    pub transaction: Option<u64>,
    /// Field 19: REGS_INTR (bit 18), counted by `sample_regs_intr`.
    pub regs_intr: Option<Regs<'a>>,
    /// Field 20: PHYS_ADDR (bit 19).
    pub phys_addr: Option<u64>,
    /// Field 21: CGROUP (bit 21): the cgroup id.
    pub cgroup: Option<u64>,
    /// Field 22: DATA_PAGE_SIZE (bit 22).
    pub data_page_size: Option<u64>,
    /// Field 23: CODE_PAGE_SIZE (bit 23).
    pub code_page_size: Option<u64>,
    /// Field 24: AUX (bit 20): a snapshot of the AUX area (padded to 8).
    pub aux: Option<&'a [u8]>,
}

/// The fields up to PERIOD: IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD.
const FIXED_FIELDS: u64 =
    st::IDENTIFIER | st::IP | st::TID | st::TIME | st::ADDR | st::ID | st::STREAM_ID | st::CPU | st::PERIOD;

/// The fields after RAW (in output order: BRANCH_STACK … AUX).
const TAIL_FIELDS: u64 = st::BRANCH_STACK
    | st::REGS_USER
    | st::STACK_USER
    | st::WEIGHT_TYPE
    | st::DATA_SRC
    | st::TRANSACTION
    | st::REGS_INTR
    | st::PHYS_ADDR
    | st::CGROUP
    | st::DATA_PAGE_SIZE
    | st::CODE_PAGE_SIZE
    | st::AUX;

/// `decode` on a copy of `r`, then `r` moved past what it read: a reader that an out-of-line
/// decoder takes by reference lives in memory, and the inlined reads around it then store
/// their position at every field.
#[inline(always)]
fn out_of_line<'a, T>(
    r: &mut Reader<'a>,
    decode: impl FnOnce(&mut Reader<'a>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let mut copy = *r;
    let value = decode(&mut copy)?;
    *r = copy;
    Ok(value)
}

/// The error of a SAMPLE longer than its fields.
#[inline(always)]
fn trailing_bytes(r: &Reader<'_>) -> DecodeError {
    trailing(r.offset(), r.remaining())
}

/// The end of a SAMPLE's fields: every byte of the record read, or [`trailing_bytes`].
#[inline(always)]
fn all_read(r: &Reader<'_>) -> Result<(), DecodeError> {
    if r.remaining() != 0 {
        return Err(trailing_bytes(r));
    }
    Ok(())
}

/// AUX at `r`: `size`, then that many bytes (padding included); the view reads it the same way.
#[inline(always)]
pub(super) fn aux_data<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], DecodeError> {
    let size = r.u64("sample.aux.size")?;
    r.take_counted(size, "sample.aux.size")
}

#[cold]
fn trailing(offset: usize, extra: usize) -> DecodeError {
    DecodeError::TrailingBytes { record: "PERF_RECORD_SAMPLE", offset, extra }
}

impl<'a> Sample<'a> {
    /// A SAMPLE of no field (`misc` 0, every field `None`): what a record of `sample_type` 0 decodes to.
    pub const EMPTY: Sample<'static> = Sample {
        misc: 0,
        identifier: None,
        ip: None,
        tid: None,
        time: None,
        addr: None,
        id: None,
        stream_id: None,
        cpu: None,
        period: None,
        read: None,
        callchain: None,
        raw: None,
        branch_stack: None,
        regs_user: None,
        stack_user: None,
        weight: None,
        data_src: None,
        transaction: None,
        regs_intr: None,
        phys_addr: None,
        cgroup: None,
        data_page_size: None,
        code_page_size: None,
        aux: None,
    };

    /// `PERF_RECORD_MISC_EXACT_IP`: the IP is exactly the one of the sampled instruction.
    pub fn exact_ip(&self) -> bool {
        self.misc & misc::EXACT_IP != 0
    }

    /// Decode a whole SAMPLE record (`bytes` includes the 8-byte header): every field, every
    /// check ([`SampleView::to_sample`](super::SampleView::to_sample) and the view's slow paths).
    #[inline]
    pub(crate) fn decode(bytes: &'a [u8], misc: u16, ctx: &DecodeContext) -> Result<Sample<'a>, DecodeError> {
        let mut s = Sample { misc, ..Sample::EMPTY };
        match s.decode_form(bytes, ctx, ctx.endian, false) {
            Ok(()) => Ok(s),
            Err(e) => Self::decode_again(bytes, misc, ctx, ctx.endian, e),
        }
    }

    /// After `error`: a BRANCH_STACK with `HW_INDEX` may be the kernel's no-stack form
    /// (`nr = 0` without `hw_idx`), tried now; else `error`.
    #[cold]
    #[inline(never)]
    fn decode_again(
        bytes: &'a [u8],
        misc: u16,
        ctx: &DecodeContext,
        endian: Endian,
        error: DecodeError,
    ) -> Result<Sample<'a>, DecodeError> {
        let may_lack_idx = ctx.sample_type & st::BRANCH_STACK != 0 && ctx.branch_sample_type & HW_INDEX != 0;
        if !may_lack_idx {
            return Err(error);
        }
        let mut s = Sample { misc, ..Sample::EMPTY };
        match s.decode_form(bytes, ctx, endian, true) {
            Ok(()) => Ok(s),
            Err(_) => Err(error),
        }
    }

    /// The fields of one form of the record (`no_stack_form`: a BRANCH_STACK with `HW_INDEX`
    /// read as the kernel's `nr = 0` without `hw_idx`), into `self` (which has no field yet):
    /// only the fields the event writes are stored. Each group of fields is skipped by one
    /// test when the event writes none of it; the parts are in line, one function once compiled.
    #[inline(always)]
    fn decode_form(
        &mut self,
        bytes: &'a [u8],
        ctx: &DecodeContext,
        endian: Endian,
        no_stack_form: bool,
    ) -> Result<(), DecodeError> {
        let t = ctx.sample_type;
        let r = &mut Reader::new(bytes, 8, bytes.len(), endian);
        self.decode_prefix(r, t)?;
        // The fields after PERIOD: one test skips them all (most events write none of them).
        if t & !FIXED_FIELDS == 0 {
            return all_read(r);
        }
        self.decode_variable(r, ctx)?;
        // The fields after RAW: one test skips them all.
        if t & TAIL_FIELDS != 0 {
            self.decode_tail_front(r, ctx, no_stack_form)?;
            self.decode_tail_back(r, ctx)?;
        }
        all_read(r)
    }

    /// IDENTIFIER through PERIOD, the fixed prefix.
    #[inline(always)]
    fn decode_prefix(&mut self, r: &mut Reader<'a>, t: u64) -> Result<(), DecodeError> {
        let s = self;
        if t & st::IDENTIFIER != 0 {
            s.identifier = Some(r.u64("sample.identifier")?);
        }
        if t & st::IP != 0 {
            s.ip = Some(r.u64("sample.ip")?);
        }
        if t & st::TID != 0 {
            s.tid = Some(PidTid { pid: r.u32("sample.pid")?, tid: r.u32("sample.tid")? });
        }
        if t & st::TIME != 0 {
            s.time = Some(r.u64("sample.time")?);
        }
        // ADDR … PERIOD: one test skips them all (`perf record`'s default events write none).
        if t & (st::ADDR | st::ID | st::STREAM_ID | st::CPU | st::PERIOD) != 0 {
            if t & st::ADDR != 0 {
                s.addr = Some(r.u64("sample.addr")?);
            }
            if t & st::ID != 0 {
                s.id = Some(r.u64("sample.id")?);
            }
            if t & st::STREAM_ID != 0 {
                s.stream_id = Some(r.u64("sample.stream_id")?);
            }
            if t & st::CPU != 0 {
                s.cpu = Some(SampleCpu { cpu: r.u32("sample.cpu")?, res: r.u32("sample.cpu_res")? });
            }
            if t & st::PERIOD != 0 {
                s.period = Some(r.u64("sample.period")?);
            }
        }
        Ok(())
    }

    /// READ, CALLCHAIN and RAW: the fields whose sizes are in the record.
    #[inline(always)]
    fn decode_variable(&mut self, r: &mut Reader<'a>, ctx: &DecodeContext) -> Result<(), DecodeError> {
        let (s, t) = (self, ctx.sample_type);
        if t & st::READ != 0 {
            s.read = Some(out_of_line(r, |r| ReadValues::decode(r, ctx.read_format))?);
        }
        if t & st::CALLCHAIN != 0 {
            let nr = r.u64("sample.callchain.nr")?;
            s.callchain = Some(r.entries(nr, r.endian, "sample.callchain.nr")?);
        }
        if t & st::RAW != 0 {
            let size = r.u32("sample.raw.size")?;
            s.raw = Some(r.take_counted(u64::from(size), "sample.raw.size")?);
        }
        Ok(())
    }

    /// BRANCH_STACK, REGS_USER and STACK_USER.
    #[inline(always)]
    fn decode_tail_front(
        &mut self,
        r: &mut Reader<'a>,
        ctx: &DecodeContext,
        no_stack_form: bool,
    ) -> Result<(), DecodeError> {
        let (s, t) = (self, ctx.sample_type);
        if t & (st::BRANCH_STACK | st::REGS_USER | st::STACK_USER) == 0 {
            return Ok(());
        }
        if t & st::BRANCH_STACK != 0 {
            s.branch_stack = Some(out_of_line(r, |r| BranchStack::decode(r, ctx.branch_sample_type, no_stack_form))?);
        }
        if t & st::REGS_USER != 0 {
            s.regs_user = Some(Regs::decode(r, ctx.sample_regs_user.count_ones(), "sample.regs_user")?);
        }
        if t & st::STACK_USER != 0 {
            let size = r.u64("sample.stack_user.size")?;
            s.stack_user = Some(if size == 0 {
                // An empty slice at the field's place (callers can tell where it was).
                StackUser { data: r.take(0, "sample.stack_user.data")?, dyn_size: 0 }
            } else {
                let data = r.take_counted(size, "sample.stack_user.size")?;
                StackUser { data, dyn_size: r.u64("sample.stack_user.dyn_size")? }
            });
        }
        Ok(())
    }

    /// WEIGHT through AUX, each group skipped by one test when the event writes none of it.
    #[inline(always)]
    fn decode_tail_back(&mut self, r: &mut Reader<'a>, ctx: &DecodeContext) -> Result<(), DecodeError> {
        let (s, t) = (self, ctx.sample_type);
        const AFTER_WEIGHT: u64 =
            st::REGS_INTR | st::PHYS_ADDR | st::CGROUP | st::DATA_PAGE_SIZE | st::CODE_PAGE_SIZE | st::AUX;
        if t & (st::WEIGHT_TYPE | st::DATA_SRC | st::TRANSACTION | AFTER_WEIGHT) == 0 {
            return Ok(());
        }
        if t & (st::WEIGHT_TYPE | st::DATA_SRC | st::TRANSACTION) != 0 {
            if t & st::WEIGHT_TYPE != 0 {
                let full = r.u64("sample.weight")?;
                s.weight = Some(if t & st::WEIGHT != 0 {
                    Weight::Full(full)
                } else {
                    Weight::Struct(WeightStruct::from_u64(full))
                });
            }
            if t & st::DATA_SRC != 0 {
                s.data_src = Some(r.u64("sample.data_src")?);
            }
            if t & st::TRANSACTION != 0 {
                s.transaction = Some(r.u64("sample.transaction")?);
            }
        }
        if t & AFTER_WEIGHT == 0 {
            return Ok(());
        }
        if t & st::REGS_INTR != 0 {
            s.regs_intr = Some(Regs::decode(r, ctx.sample_regs_intr.count_ones(), "sample.regs_intr")?);
        }
        if t & (st::PHYS_ADDR | st::CGROUP | st::DATA_PAGE_SIZE | st::CODE_PAGE_SIZE | st::AUX) == 0 {
            return Ok(());
        }
        if t & (st::PHYS_ADDR | st::CGROUP | st::DATA_PAGE_SIZE | st::CODE_PAGE_SIZE) != 0 {
            if t & st::PHYS_ADDR != 0 {
                s.phys_addr = Some(r.u64("sample.phys_addr")?);
            }
            if t & st::CGROUP != 0 {
                s.cgroup = Some(r.u64("sample.cgroup")?);
            }
            if t & st::DATA_PAGE_SIZE != 0 {
                s.data_page_size = Some(r.u64("sample.data_page_size")?);
            }
            if t & st::CODE_PAGE_SIZE != 0 {
                s.code_page_size = Some(r.u64("sample.code_page_size")?);
            }
        }
        if t & st::AUX != 0 {
            s.aux = Some(aux_data(r)?);
        }
        Ok(())
    }

    /// Body size (header excluded) for the context, after checking every field against it.
    pub(crate) fn body_size(&self, ctx: &DecodeContext) -> Result<usize, EncodeError> {
        let t = ctx.sample_type;
        let check = |present: bool, bit: u64, field: &'static str| -> Result<bool, EncodeError> {
            let expected = t & bit != 0;
            if present != expected {
                return Err(EncodeError::FieldMismatch { field, expected });
            }
            Ok(expected)
        };
        let fixed = |v: Option<u64>, bit: u64, field: &'static str| -> Result<usize, EncodeError> {
            Ok(if check(v.is_some(), bit, field)? { 8 } else { 0 })
        };
        let mut n = 0usize;
        n += fixed(self.identifier, st::IDENTIFIER, "sample.identifier")?;
        n += fixed(self.ip, st::IP, "sample.ip")?;
        n += fixed(self.tid.map(|_| 0), st::TID, "sample.tid")?;
        n += fixed(self.time, st::TIME, "sample.time")?;
        n += fixed(self.addr, st::ADDR, "sample.addr")?;
        n += fixed(self.id, st::ID, "sample.id")?;
        n += fixed(self.stream_id, st::STREAM_ID, "sample.stream_id")?;
        n += fixed(self.cpu.map(|_| 0), st::CPU, "sample.cpu")?;
        n += fixed(self.period, st::PERIOD, "sample.period")?;
        let (tail_fixed, var) = self.size_after_period(ctx, &check, &fixed)?;
        n.checked_add(tail_fixed).and_then(|n| n.checked_add(var)).ok_or(EncodeError::TooLarge { size: usize::MAX })
    }

    /// [`body_size`](Self::body_size)'s fields after PERIOD: the bytes of those of fixed size,
    /// and of the variable ones, each checked against the context with `check` and `fixed`.
    fn size_after_period(
        &self,
        ctx: &DecodeContext,
        check: &impl Fn(bool, u64, &'static str) -> Result<bool, EncodeError>,
        fixed: &impl Fn(Option<u64>, u64, &'static str) -> Result<usize, EncodeError>,
    ) -> Result<(usize, usize), EncodeError> {
        let t = ctx.sample_type;
        let mut n = 0usize;
        // The variable parts are bounded by the u16 record size long before these sums could
        // overflow, but the arithmetic is checked anyway: the inputs are caller data.
        let mut var = 0usize;
        let add = |acc: usize, x: usize| acc.checked_add(x).ok_or(EncodeError::TooLarge { size: usize::MAX });
        if check(self.read.is_some(), st::READ, "sample.read")? {
            var = add(var, self.read.as_ref().map_or(Ok(0), |r| r.size(ctx.read_format))?)?;
        }
        if let (true, Some(c)) = (check(self.callchain.is_some(), st::CALLCHAIN, "sample.callchain")?, self.callchain) {
            var = add(var, 8)?;
            var = add(var, c.len().checked_mul(8).ok_or(EncodeError::TooLarge { size: usize::MAX })?)?;
        }
        if let (true, Some(raw)) = (check(self.raw.is_some(), st::RAW, "sample.raw")?, self.raw) {
            if u32::try_from(raw.len()).is_err() {
                return Err(EncodeError::TooLarge { size: raw.len() });
            }
            var = add(var, 4 + raw.len() + pad8(4 + raw.len()))?;
        }
        if let (true, Some(b)) =
            (check(self.branch_stack.is_some(), st::BRANCH_STACK, "sample.branch_stack")?, self.branch_stack)
        {
            var = add(var, b.size(ctx.branch_sample_type)?)?;
        }
        if let (true, Some(regs)) =
            (check(self.regs_user.is_some(), st::REGS_USER, "sample.regs_user")?, self.regs_user)
        {
            var = add(var, regs.size(ctx.sample_regs_user, "sample.regs_user")?)?;
        }
        if let (true, Some(s)) =
            (check(self.stack_user.is_some(), st::STACK_USER, "sample.stack_user")?, self.stack_user)
        {
            if s.data.is_empty() {
                if s.dyn_size != 0 {
                    return Err(EncodeError::InvalidValue { field: "sample.stack_user.dyn_size", value: s.dyn_size });
                }
                var = add(var, 8)?;
            } else {
                var = add(var, 16 + s.data.len() + pad8(s.data.len()))?;
            }
        }
        if let (true, Some(w)) = (check(self.weight.is_some(), st::WEIGHT_TYPE, "sample.weight")?, self.weight) {
            let full_wanted = t & st::WEIGHT != 0;
            if matches!(w, Weight::Full(_)) != full_wanted {
                return Err(EncodeError::FieldMismatch { field: "sample.weight (full form)", expected: full_wanted });
            }
            n += 8;
        }
        n += fixed(self.data_src, st::DATA_SRC, "sample.data_src")?;
        n += fixed(self.transaction, st::TRANSACTION, "sample.transaction")?;
        if let (true, Some(regs)) =
            (check(self.regs_intr.is_some(), st::REGS_INTR, "sample.regs_intr")?, self.regs_intr)
        {
            var = add(var, regs.size(ctx.sample_regs_intr, "sample.regs_intr")?)?;
        }
        n += fixed(self.phys_addr, st::PHYS_ADDR, "sample.phys_addr")?;
        n += fixed(self.cgroup, st::CGROUP, "sample.cgroup")?;
        n += fixed(self.data_page_size, st::DATA_PAGE_SIZE, "sample.data_page_size")?;
        n += fixed(self.code_page_size, st::CODE_PAGE_SIZE, "sample.code_page_size")?;
        if let (true, Some(aux)) = (check(self.aux.is_some(), st::AUX, "sample.aux")?, self.aux) {
            var = add(var, 8 + aux.len() + pad8(aux.len()))?;
        }
        Ok((n, var))
    }

    /// Write the body (fields already checked by [`Sample::body_size`]).
    pub(crate) fn encode_body(&self, w: &mut Writer<'_>) {
        let put = |w: &mut Writer<'_>, v: Option<u64>| {
            if let Some(v) = v {
                w.u64(v);
            }
        };
        put(w, self.identifier);
        put(w, self.ip);
        if let Some(t) = self.tid {
            w.u32(t.pid);
            w.u32(t.tid);
        }
        put(w, self.time);
        put(w, self.addr);
        put(w, self.id);
        put(w, self.stream_id);
        if let Some(c) = self.cpu {
            w.u32(c.cpu);
            w.u32(c.res);
        }
        put(w, self.period);
        if let Some(r) = &self.read {
            r.encode(w);
        }
        if let Some(c) = &self.callchain {
            w.u64(c.len() as u64);
            w.u64s(c);
        }
        if let Some(raw) = self.raw {
            let size = raw.len() + pad8(4 + raw.len());
            w.u32(size as u32);
            w.padded(raw, 4);
        }
        if let Some(b) = &self.branch_stack {
            b.encode(w);
        }
        if let Some(r) = &self.regs_user {
            r.encode(w);
        }
        if let Some(s) = &self.stack_user {
            if s.data.is_empty() {
                w.u64(0);
            } else {
                w.u64((s.data.len() + pad8(s.data.len())) as u64);
                w.padded(s.data, 0);
                w.u64(s.dyn_size);
            }
        }
        put(w, self.weight.map(Weight::full));
        put(w, self.data_src);
        put(w, self.transaction);
        if let Some(r) = &self.regs_intr {
            r.encode(w);
        }
        put(w, self.phys_addr);
        put(w, self.cgroup);
        put(w, self.data_page_size);
        put(w, self.code_page_size);
        if let Some(aux) = self.aux {
            w.u64((aux.len() + pad8(aux.len())) as u64);
            w.padded(aux, 0);
        }
    }
}
