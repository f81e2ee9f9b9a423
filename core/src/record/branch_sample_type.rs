//! `enum perf_branch_sample_type`: the bits of `perf_event_attr.branch_sample_type`.
//!
//! Two of them change the SAMPLE layout (see [`BranchStack`](super::BranchStack)): `HW_INDEX`
//! adds `hw_idx` after `nr`, `COUNTERS` adds `nr` counter words after the entries.

/// `PERF_SAMPLE_BRANCH_USER`
pub const USER: u64 = 1 << 0;
/// `PERF_SAMPLE_BRANCH_KERNEL`
pub const KERNEL: u64 = 1 << 1;
/// `PERF_SAMPLE_BRANCH_HV`
pub const HV: u64 = 1 << 2;
/// `PERF_SAMPLE_BRANCH_ANY`
pub const ANY: u64 = 1 << 3;
/// `PERF_SAMPLE_BRANCH_ANY_CALL`
pub const ANY_CALL: u64 = 1 << 4;
/// `PERF_SAMPLE_BRANCH_ANY_RETURN`
pub const ANY_RETURN: u64 = 1 << 5;
/// `PERF_SAMPLE_BRANCH_IND_CALL`
pub const IND_CALL: u64 = 1 << 6;
/// `PERF_SAMPLE_BRANCH_ABORT_TX`
pub const ABORT_TX: u64 = 1 << 7;
/// `PERF_SAMPLE_BRANCH_IN_TX`
pub const IN_TX: u64 = 1 << 8;
/// `PERF_SAMPLE_BRANCH_NO_TX`
pub const NO_TX: u64 = 1 << 9;
/// `PERF_SAMPLE_BRANCH_COND`
pub const COND: u64 = 1 << 10;
/// `PERF_SAMPLE_BRANCH_CALL_STACK`
pub const CALL_STACK: u64 = 1 << 11;
/// `PERF_SAMPLE_BRANCH_IND_JUMP`
pub const IND_JUMP: u64 = 1 << 12;
/// `PERF_SAMPLE_BRANCH_CALL`
pub const CALL: u64 = 1 << 13;
/// `PERF_SAMPLE_BRANCH_NO_FLAGS`
pub const NO_FLAGS: u64 = 1 << 14;
/// `PERF_SAMPLE_BRANCH_NO_CYCLES`
pub const NO_CYCLES: u64 = 1 << 15;
/// `PERF_SAMPLE_BRANCH_TYPE_SAVE`
pub const TYPE_SAVE: u64 = 1 << 16;
/// `PERF_SAMPLE_BRANCH_HW_INDEX`: BRANCH_STACK carries `u64 hw_idx` after `nr`.
pub const HW_INDEX: u64 = 1 << 17;
/// `PERF_SAMPLE_BRANCH_PRIV_SAVE`
pub const PRIV_SAVE: u64 = 1 << 18;
/// `PERF_SAMPLE_BRANCH_COUNTERS` (Linux 6.8): BRANCH_STACK carries `nr` counter words after the
/// entries.
pub const COUNTERS: u64 = 1 << 19;
