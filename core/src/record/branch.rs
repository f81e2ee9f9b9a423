//! SAMPLE's BRANCH_STACK field: `struct perf_branch_entry` and the stack around it.
//!
//! Layout (`perf_output_sample`): `u64 nr`; `u64 hw_idx` if `branch_sample_type` has
//! `HW_INDEX`; `nr × {u64 from, u64 to, u64 flags}`; `nr × u64` counters if it has `COUNTERS`.
//! When the PMU supplied no stack at all, the kernel writes only `nr = 0`, without `hw_idx`
//! (see [`BranchStack`] for how the decoder tells the two apart).

use core::fmt;

use super::bitfield::{from_msb_first, to_msb_first};
use super::branch_sample_type::{COUNTERS, HW_INDEX};
use super::cursor::{Reader, Writer};
use super::{DecodeError, EncodeError, Endian, Entries};

/// Field widths of the flags bitfield in declaration order: mispred, predicted, in_tx, abort,
/// cycles, type, spec, new_type, priv, reserved.
const WIDTHS: [u32; 10] = [1, 1, 1, 1, 16, 4, 2, 4, 3, 31];

/// The third word of `perf_branch_entry`, a C bitfield, in uapi bit numbers (`mispred` is bit
/// 0) whatever the record's byte order: the decoder renumbers big-endian layouts, where the
/// compiler allocates the fields from the top bit down, and the encoder renumbers them back.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct BranchFlags(pub u64);

impl BranchFlags {
    fn field(self, lo: u32, width: u32) -> u64 {
        (self.0 >> lo) & ((1u64 << width) - 1)
    }
    /// `mispred`: the target was mispredicted.
    pub fn mispred(self) -> bool {
        self.field(0, 1) != 0
    }
    /// `predicted`: the target was predicted.
    pub fn predicted(self) -> bool {
        self.field(1, 1) != 0
    }
    /// `in_tx`: in a transaction.
    pub fn in_tx(self) -> bool {
        self.field(2, 1) != 0
    }
    /// `abort`: transaction abort.
    pub fn abort(self) -> bool {
        self.field(3, 1) != 0
    }
    /// `cycles`: cycles since the previous branch (16 bits).
    pub fn cycles(self) -> u16 {
        self.field(4, 16) as u16
    }
    /// `type`: `PERF_BR_*` (4 bits).
    pub fn branch_type(self) -> u8 {
        self.field(20, 4) as u8
    }
    /// `spec`: `PERF_BR_SPEC_*` (2 bits).
    pub fn spec(self) -> u8 {
        self.field(24, 2) as u8
    }
    /// `new_type`: `PERF_BR_NEW_*` (4 bits).
    pub fn new_type(self) -> u8 {
        self.field(26, 4) as u8
    }
    /// `priv`: `PERF_BR_PRIV_*` (3 bits).
    pub fn privilege(self) -> u8 {
        self.field(30, 3) as u8
    }

    fn from_wire(raw: u64, endian: Endian) -> BranchFlags {
        match endian {
            Endian::Little => BranchFlags(raw),
            Endian::Big => BranchFlags(from_msb_first(raw, &WIDTHS)),
        }
    }

    fn to_wire(self, endian: Endian) -> u64 {
        match endian {
            Endian::Little => self.0,
            Endian::Big => to_msb_first(self.0, &WIDTHS),
        }
    }
}

impl fmt::Debug for BranchFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BranchFlags({:#x})", self.0)
    }
}

/// `struct perf_branch_entry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BranchEntry {
    /// Source address.
    pub from: u64,
    /// Target address.
    pub to: u64,
    /// The flags word.
    pub flags: BranchFlags,
}

impl super::entries::sealed::Sealed for BranchEntry {
    type Layout = Endian;
    #[inline(always)]
    fn stride(_: Endian) -> usize {
        24
    }
    #[inline]
    fn read(bytes: &[u8], endian: Endian) -> BranchEntry {
        let word = |at| endian.u64_at(bytes, at).unwrap_or(0);
        BranchEntry { from: word(0), to: word(8), flags: BranchFlags::from_wire(word(16), endian) }
    }
    fn endian(endian: Endian) -> Endian {
        endian
    }
    fn fmt_entry(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl super::Entry for BranchEntry {}

/// SAMPLE's BRANCH_STACK field.
///
/// **`hw_idx`.** With `HW_INDEX` in `branch_sample_type`, the kernel writes `hw_idx` after `nr`
/// when the PMU supplied a stack, but only `nr = 0` (no `hw_idx`, no counters) when it supplied
/// none; the bytes do not say which. perf's parser (`evsel__parse_sample`) always reads
/// `hw_idx` when the flag is set. This decoder does the same first and, **only if `nr` is 0 and
/// that reading of the rest of the sample fails**, decodes the no-stack form: `hw_idx: None`,
/// no entries, `counters: None`. The encoder writes the no-stack form for exactly that value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchStack<'a> {
    /// `hw_idx`: `Some` when `HW_INDEX` is set (except in the no-stack form).
    pub hw_idx: Option<u64>,
    /// The `nr` entries, most recent branch first.
    pub entries: Entries<'a, BranchEntry>,
    /// One counter word per entry: `Some` when `COUNTERS` is set (except in the no-stack form).
    pub counters: Option<Entries<'a, u64>>,
}

impl<'a> BranchStack<'a> {
    /// The no-stack form: what the kernel writes when the PMU supplied no branch stack.
    pub const NONE: BranchStack<'static> = BranchStack { hw_idx: None, entries: Entries::EMPTY, counters: None };

    /// Decode; `no_stack_form` selects the kernel's `nr = 0`-only form (see the type docs).
    pub(crate) fn decode(
        r: &mut Reader<'a>,
        branch_sample_type: u64,
        no_stack_form: bool,
    ) -> Result<BranchStack<'a>, DecodeError> {
        let offset = r.offset();
        let nr = r.u64("sample.branch_stack.nr")?;
        if no_stack_form {
            if nr != 0 {
                return Err(DecodeError::InvalidValue { field: "sample.branch_stack.nr", value: nr, offset });
            }
            return Ok(BranchStack::NONE);
        }
        let hw_idx = if branch_sample_type & HW_INDEX != 0 { Some(r.u64("sample.branch_stack.hw_idx")?) } else { None };
        let entries = r.entries(nr, r.endian, "sample.branch_stack.nr")?;
        let counters = if branch_sample_type & COUNTERS != 0 {
            Some(r.entries(nr, r.endian, "sample.branch_stack.counters")?)
        } else {
            None
        };
        Ok(BranchStack { hw_idx, entries, counters })
    }

    /// Encoded size for `branch_sample_type`, after checking the fields against it.
    pub(crate) fn size(&self, branch_sample_type: u64) -> Result<usize, EncodeError> {
        let want_idx = branch_sample_type & HW_INDEX != 0;
        let want_counters = branch_sample_type & COUNTERS != 0;
        if want_idx && self.hw_idx.is_none() {
            // Only the no-stack form may omit hw_idx.
            if !self.entries.is_empty() {
                return Err(EncodeError::FieldMismatch { field: "sample.branch_stack.hw_idx", expected: true });
            }
            if self.counters.is_some() {
                return Err(EncodeError::FieldMismatch { field: "sample.branch_stack.counters", expected: false });
            }
            return Ok(8);
        }
        if !want_idx && self.hw_idx.is_some() {
            return Err(EncodeError::FieldMismatch { field: "sample.branch_stack.hw_idx", expected: false });
        }
        let nr = self.entries.len();
        match (want_counters, self.counters) {
            (true, Some(c)) if c.len() != nr => {
                return Err(EncodeError::CountMismatch {
                    field: "sample.branch_stack.counters",
                    expected: nr,
                    got: c.len(),
                })
            }
            (true, None) | (false, Some(_)) => {
                return Err(EncodeError::FieldMismatch {
                    field: "sample.branch_stack.counters",
                    expected: want_counters,
                })
            }
            _ => {}
        }
        let per = if want_counters { 32 } else { 24 };
        nr.checked_mul(per)
            .and_then(|n| n.checked_add(8 + if want_idx { 8 } else { 0 }))
            .ok_or(EncodeError::TooLarge { size: usize::MAX })
    }

    /// Write (fields already checked by [`BranchStack::size`]).
    pub(crate) fn encode(&self, w: &mut Writer<'_>) {
        w.u64(self.entries.len() as u64);
        if let Some(i) = self.hw_idx {
            w.u64(i);
        }
        w.entries(&self.entries, |w, e| {
            w.u64(e.from);
            w.u64(e.to);
            w.u64(e.flags.to_wire(w.endian));
        });
        if let Some(c) = &self.counters {
            w.u64s(c);
        }
    }
}
