//! `enum perf_event_sample_format`: the bits of `perf_event_attr.sample_type`.
//!
//! The bit order is **not** the order of the fields in a `PERF_RECORD_SAMPLE`; see the record
//! table in the crate docs (`IDENTIFIER` comes first, `AUX` last).

/// `PERF_SAMPLE_IP`
pub const IP: u64 = 1 << 0;
/// `PERF_SAMPLE_TID`
pub const TID: u64 = 1 << 1;
/// `PERF_SAMPLE_TIME`
pub const TIME: u64 = 1 << 2;
/// `PERF_SAMPLE_ADDR`
pub const ADDR: u64 = 1 << 3;
/// `PERF_SAMPLE_READ`
pub const READ: u64 = 1 << 4;
/// `PERF_SAMPLE_CALLCHAIN`
pub const CALLCHAIN: u64 = 1 << 5;
/// `PERF_SAMPLE_ID`
pub const ID: u64 = 1 << 6;
/// `PERF_SAMPLE_CPU`
pub const CPU: u64 = 1 << 7;
/// `PERF_SAMPLE_PERIOD`
pub const PERIOD: u64 = 1 << 8;
/// `PERF_SAMPLE_STREAM_ID`
pub const STREAM_ID: u64 = 1 << 9;
/// `PERF_SAMPLE_RAW`
pub const RAW: u64 = 1 << 10;
/// `PERF_SAMPLE_BRANCH_STACK`
pub const BRANCH_STACK: u64 = 1 << 11;
/// `PERF_SAMPLE_REGS_USER`
pub const REGS_USER: u64 = 1 << 12;
/// `PERF_SAMPLE_STACK_USER`
pub const STACK_USER: u64 = 1 << 13;
/// `PERF_SAMPLE_WEIGHT`
pub const WEIGHT: u64 = 1 << 14;
/// `PERF_SAMPLE_DATA_SRC`
pub const DATA_SRC: u64 = 1 << 15;
/// `PERF_SAMPLE_IDENTIFIER`
pub const IDENTIFIER: u64 = 1 << 16;
/// `PERF_SAMPLE_TRANSACTION`
pub const TRANSACTION: u64 = 1 << 17;
/// `PERF_SAMPLE_REGS_INTR`
pub const REGS_INTR: u64 = 1 << 18;
/// `PERF_SAMPLE_PHYS_ADDR`
pub const PHYS_ADDR: u64 = 1 << 19;
/// `PERF_SAMPLE_AUX`
pub const AUX: u64 = 1 << 20;
/// `PERF_SAMPLE_CGROUP`
pub const CGROUP: u64 = 1 << 21;
/// `PERF_SAMPLE_DATA_PAGE_SIZE`
pub const DATA_PAGE_SIZE: u64 = 1 << 22;
/// `PERF_SAMPLE_CODE_PAGE_SIZE`
pub const CODE_PAGE_SIZE: u64 = 1 << 23;
/// `PERF_SAMPLE_WEIGHT_STRUCT`
pub const WEIGHT_STRUCT: u64 = 1 << 24;
/// `PERF_SAMPLE_WEIGHT_TYPE`: either weight form (they share one u64 slot).
pub const WEIGHT_TYPE: u64 = WEIGHT | WEIGHT_STRUCT;
/// Every bit this crate knows (`PERF_SAMPLE_MAX - 1`).
pub const ALL: u64 = (1 << 25) - 1;
/// The bits that make up the `sample_id` trailer of non-sample records.
pub const SAMPLE_ID_BITS: u64 = TID | TIME | ID | STREAM_ID | CPU | IDENTIFIER;
