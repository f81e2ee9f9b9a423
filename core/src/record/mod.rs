//! `PERF_RECORD_*`: headers, layouts, decoding and encoding.
//!
//! Records are what travels through the ring: an 8-byte [`Header`] and a body whose layout is
//! decided by the header's type and by the `perf_event_attr` of the event that wrote it
//! (its [`EventLayout`]: `sample_type`, `read_format`, `sample_id_all`, the register masks,
//! `branch_sample_type`, and the byte order).
//!
//! Every record reads the same way, whoever delivered it: an [`EventRecord`] (the record and
//! the event that wrote it, found by perf's rules) gives each of three tiers in one call. The
//! complete decode never panics and never reads out of bounds; every failure of any tier is a
//! [`DecodeError`] naming the field and its offset. [`Encode::encode`] is the inverse, into a
//! `&mut [u8]`, with `header.size`, string and data padding set as the kernel sets them. Unknown
//! types (perf.data's ≥ 64 included) decode to [`Record::Unknown`], raw.
//!
//! # What you have → what to call
//!
//! | what you have → what to call | ring record: `set.attribute(&raw)` | perf.data: `FileRecord` | Linux session: `SessionRecord` |
//! |---|---|---|---|
//! | the event that wrote it (perf's rules) | `.event()` → `usize` | `.event()` → `usize` | `.event()` → `usize` |
//! | a SAMPLE's fields, each read when asked | `.sample()` → `SampleView` | `.sample()` → `SampleView` | `.sample()` → `SampleView` |
//! | time, id, cpu, pid, tid of any record | `.view()` → `RecordView` | `.view()` → `RecordView` | `.view()` → `RecordView` |
//! | a `sample_type` fixed when the tool is built | `.fixed::<ST>()` → `FixedSample` | `.fixed::<ST>()` → `FixedSample` | `.fixed::<ST>()` → `FixedSample` |
//! | every field of any record type | `.decode()` → `Record` | `.decode()` → `Record` | `.decode()` → `Record` |
//! | the header, bytes and byte order | `.raw()` → `RawRecord` | `.raw()` → `RawRecord` | `.raw()` → `RawRecord` |
//!
//! A ring record's `raw` comes from a [`Consumer`](crate::consumer::Consumer) or a [`Walker`]
//! over a buffer of records, and `set` is your [`EventSet`]. The five methods are
//! [`EventRecord`]'s, with one signature each: `event()` →
//! `Result<usize, DecodeError>`, `sample()` → [`SampleView`], `view()` → [`RecordView`],
//! `fixed::<ST>()` → [`FixedSample`], `decode()` → [`Record`], each in a `Result` with
//! [`DecodeError`]. The record's bytes, header and byte order are `rec.raw()` ([`RawRecord`]).
//!
//! From the most general to the fastest (their instructions per SAMPLE, walk and event lookup
//! included, are `make bench-instructions`' decoder rows; figures in BENCHMARKS.md,
//! "Decoding"):
//!
//! **The complete decode** — [`decode`](EventRecord::decode) gives a [`Record`] with every
//! field of every type, every check made. A SAMPLE is its [`SampleView`] (below), checked
//! whole, so that each of its fields reads; [`SampleView::to_sample`] copies them into a
//! [`Sample`], the values the encoder writes and the reference the views are tested against.
//!
//! ```
//! use perfring::record::{sample_type as st, Attr, Endian, EventRecord, EventSet, PidTid, Record, Walker};
//! let set = EventSet::single(&Attr { sample_type: st::IP | st::TID, ..Attr::default() }, Endian::NATIVE);
//! let mut ring = vec![9, 0, 0, 0, 0, 0, 24, 0]; // SAMPLE, 24 bytes
//! ring.extend_from_slice(&0x4000u64.to_ne_bytes());
//! ring.extend_from_slice(&((8u64 << 32) | 7).to_ne_bytes()); // pid 7, tid 8
//! for raw in Walker::new(&ring, Endian::NATIVE) {
//!     match set.attribute(&raw.unwrap()).decode() {
//!         Ok(Record::Sample(s)) => assert_eq!((s.ip(), s.tid()), (Some(0x4000), Some(PidTid { pid: 7, tid: 8 }))),
//!         other => panic!("a SAMPLE: {other:?}"),
//!     }
//! }
//! ```
//!
//! **The view** — [`sample`](EventRecord::sample) gives a [`SampleView`] through the event's
//! run-time layout: every SAMPLE field, read lazily (the fixed prefix one load each; the fields
//! after it walk only what precedes them); [`view`](EventRecord::view) gives the identifying
//! fields of any record ([`RecordView`]).
//!
//! ```
//! use perfring::record::{sample_type as st, Attr, Endian, EventLayout, EventRecord, EventSet, IdEntry, Walker};
//! let attr = Attr { sample_type: st::IDENTIFIER | st::IP | st::PHYS_ADDR, ..Attr::default() };
//! let mut set = EventSet::new([EventLayout::EMPTY; 1], [IdEntry::EMPTY; 2]);
//! let event = set.add_event(&attr, Endian::NATIVE).unwrap();
//! set.add_id(event, 42).unwrap();
//! let mut ring = vec![9, 0, 0, 0, 0, 0, 32, 0]; // SAMPLE, 32 bytes: IDENTIFIER, IP, PHYS_ADDR
//! for word in [42u64, 0x4000, 0x9000] {
//!     ring.extend_from_slice(&word.to_ne_bytes());
//! }
//! for raw in Walker::new(&ring, Endian::NATIVE) {
//!     let rec = set.attribute(&raw.unwrap());
//!     let view = rec.sample().unwrap();
//!     assert_eq!((rec.event(), view.ip(), view.phys_addr()), (Ok(event), Some(0x4000), Ok(Some(0x9000))));
//! }
//! ```
//!
//! **The compile-time layout** — [`fixed::<ST>`](EventRecord::fixed) checks that the event's
//! `sample_type` is the one named as a const parameter (one compare) and gives a
//! [`FixedSample`] whose fields sit at constant offsets.
//!
//! ```
//! use perfring::record::{sample_type as st, Attr, Endian, EventRecord, EventSet, Walker};
//! const ST: u64 = st::IDENTIFIER | st::IP | st::TIME;
//! let set = EventSet::single(&Attr { sample_type: ST, ..Attr::default() }, Endian::NATIVE);
//! let mut ring = vec![9, 0, 0, 0, 0, 0, 32, 0]; // SAMPLE, 32 bytes: IDENTIFIER, IP, TIME
//! for word in [42u64, 0x4000, 1_000] {
//!     ring.extend_from_slice(&word.to_ne_bytes());
//! }
//! for raw in Walker::new(&ring, Endian::NATIVE) {
//!     let sample = set.attribute(&raw.unwrap()).fixed::<ST>().unwrap();
//!     assert_eq!((sample.ip(), sample.time()), (Some(0x4000), Some(1_000)));
//! }
//! ```
//!
//! Sources: kernel/events/core.c and include/uapi/linux/perf_event.h (`core.c:perf_output_sample`, the uapi comments, each emitter),
//! checked against `perf report -D` by `tests/tests/records_golden.rs`.
//!
//! # Record types
//!
//! | type | uapi name | [`Record`] variant | body (then `sample_id` with `sample_id_all`) |
//! |---:|---|---|---|
//! | 1 | `PERF_RECORD_MMAP` | [`Record::Mmap`] | pid, tid, addr, len, pgoff, filename |
//! | 2 | `PERF_RECORD_LOST` | [`Record::Lost`] | id, lost |
//! | 3 | `PERF_RECORD_COMM` | [`Record::Comm`] | pid, tid, comm |
//! | 4 | `PERF_RECORD_EXIT` | [`Record::Exit`] | pid, ppid, tid, ptid, time |
//! | 5 | `PERF_RECORD_THROTTLE` | [`Record::Throttle`] | time, id, stream_id |
//! | 6 | `PERF_RECORD_UNTHROTTLE` | [`Record::Unthrottle`] | time, id, stream_id |
//! | 7 | `PERF_RECORD_FORK` | [`Record::Fork`] | pid, ppid, tid, ptid, time |
//! | 8 | `PERF_RECORD_READ` | [`Record::Read`] | pid, tid, read_format block |
//! | 9 | `PERF_RECORD_SAMPLE` | [`Record::Sample`] | the sample fields below; **no trailer** |
//! | 10 | `PERF_RECORD_MMAP2` | [`Record::Mmap2`] | MMAP's fields, {maj, min, ino, ino_generation} or {build_id_size, build_id\[20\]} (`misc` `MMAP_BUILD_ID`), prot, flags, filename |
//! | 11 | `PERF_RECORD_AUX` | [`Record::Aux`] | aux_offset, aux_size, flags |
//! | 12 | `PERF_RECORD_ITRACE_START` | [`Record::ItraceStart`] | pid, tid |
//! | 13 | `PERF_RECORD_LOST_SAMPLES` | [`Record::LostSamples`] | lost |
//! | 14 | `PERF_RECORD_SWITCH` | [`Record::Switch`] | (none; `misc` `SWITCH_OUT`, `SWITCH_OUT_PREEMPT`) |
//! | 15 | `PERF_RECORD_SWITCH_CPU_WIDE` | [`Record::SwitchCpuWide`] | next_prev_pid, next_prev_tid |
//! | 16 | `PERF_RECORD_NAMESPACES` | [`Record::Namespaces`] | pid, tid, nr_namespaces, {dev, ino}\[nr\] |
//! | 17 | `PERF_RECORD_KSYMBOL` | [`Record::Ksymbol`] | addr, len, ksym_type, flags, name |
//! | 18 | `PERF_RECORD_BPF_EVENT` | [`Record::BpfEvent`] | type, flags, id, tag\[8\] |
//! | 19 | `PERF_RECORD_CGROUP` | [`Record::Cgroup`] | id, path |
//! | 20 | `PERF_RECORD_TEXT_POKE` | [`Record::TextPoke`] | addr, old_len, new_len, bytes, padding |
//! | 21 | `PERF_RECORD_AUX_OUTPUT_HW_ID` | [`Record::AuxOutputHwId`] | hw_id |
//! | 22 | `PERF_RECORD_CALLCHAIN_DEFERRED` | [`Record::CallchainDeferred`] | cookie, nr, ips\[nr\] (newest mainline; decoded, not raw) |
//! | other | — | [`Record::Unknown`] | raw bytes |
//!
//! # SAMPLE fields, in output order
//!
//! The order is `perf_output_sample`'s, **not** the bit order (the 6.1 uapi header's comment is
//! out of date: AUX comes last).
//!
//! | # | uapi `sample_type` bit | [`Sample`] field | content |
//! |---:|---|---|---|
//! | 1 | `PERF_SAMPLE_IDENTIFIER` (16) | `identifier` | u64 |
//! | 2 | `PERF_SAMPLE_IP` (0) | `ip` | u64 |
//! | 3 | `PERF_SAMPLE_TID` (1) | `tid` | u32 pid, u32 tid ([`PidTid`]) |
//! | 4 | `PERF_SAMPLE_TIME` (2) | `time` | u64 |
//! | 5 | `PERF_SAMPLE_ADDR` (3) | `addr` | u64 |
//! | 6 | `PERF_SAMPLE_ID` (6) | `id` | u64 |
//! | 7 | `PERF_SAMPLE_STREAM_ID` (9) | `stream_id` | u64 |
//! | 8 | `PERF_SAMPLE_CPU` (7) | `cpu` | u32 cpu, u32 res ([`SampleCpu`]) |
//! | 9 | `PERF_SAMPLE_PERIOD` (8) | `period` | u64 |
//! | 10 | `PERF_SAMPLE_READ` (4) | `read` | [`ReadValues`] by `read_format` (`PERF_FORMAT_TOTAL_TIME_ENABLED`, `_RUNNING`, `_ID`, `_GROUP`, `_LOST`) |
//! | 11 | `PERF_SAMPLE_CALLCHAIN` (5) | `callchain` | u64 nr, u64 ips\[nr\] ([`callchain`] markers) |
//! | 12 | `PERF_SAMPLE_RAW` (10) | `raw` | u32 size, bytes\[size\] (`size + 4` a multiple of 8) |
//! | 13 | `PERF_SAMPLE_BRANCH_STACK` (11) | `branch_stack` | u64 nr, \[u64 hw_idx\] (`PERF_SAMPLE_BRANCH_HW_INDEX`), {from, to, flags}\[nr\], \[u64 counters\[nr\]\] (`PERF_SAMPLE_BRANCH_COUNTERS`) ([`BranchStack`]) |
//! | 14 | `PERF_SAMPLE_REGS_USER` (12) | `regs_user` | u64 abi, u64 regs\[popcount(`sample_regs_user`)\] if abi ≠ 0 ([`Regs`]) |
//! | 15 | `PERF_SAMPLE_STACK_USER` (13) | `stack_user` | u64 size, bytes\[size\], u64 dyn_size if size ≠ 0 ([`StackUser`]) |
//! | 16 | `PERF_SAMPLE_WEIGHT` (14) / `PERF_SAMPLE_WEIGHT_STRUCT` (24) | `weight` | u64 / `union perf_sample_weight` ([`Weight`]) |
//! | 17 | `PERF_SAMPLE_DATA_SRC` (15) | `data_src` | u64 (`union perf_mem_data_src`) |
//! | 18 | `PERF_SAMPLE_TRANSACTION` (17) | `transaction` | u64 |
//! | 19 | `PERF_SAMPLE_REGS_INTR` (18) | `regs_intr` | u64 abi, u64 regs\[popcount(`sample_regs_intr`)\] if abi ≠ 0 |
//! | 20 | `PERF_SAMPLE_PHYS_ADDR` (19) | `phys_addr` | u64 |
//! | 21 | `PERF_SAMPLE_CGROUP` (21) | `cgroup` | u64 |
//! | 22 | `PERF_SAMPLE_DATA_PAGE_SIZE` (22) | `data_page_size` | u64 |
//! | 23 | `PERF_SAMPLE_CODE_PAGE_SIZE` (23) | `code_page_size` | u64 |
//! | 24 | `PERF_SAMPLE_AUX` (20) | `aux` | u64 size, bytes\[size\] |
//!
//! The `sample_id` trailer ([`SampleId`]) holds, in this order, the fields of TID, TIME, ID,
//! STREAM_ID, CPU and IDENTIFIER that `sample_type` selects: IDENTIFIER is last there and first
//! in SAMPLE, at a fixed distance from the end or the start of every record.
//!
//! # `header.misc` (`PERF_RECORD_MISC_*`)
//!
//! [`misc`] has the constants (test them on [`Record::misc`]; [`Comm::is_exec`],
//! [`Switch::is_out`] and [`SampleView::exact_ip`] read the type-specific ones): `CPUMODE_MASK` (bits 0–2,
//! [`CpuMode`]), `PROC_MAP_PARSE_TIMEOUT` (12), `MMAP_DATA` / `COMM_EXEC` / `FORK_EXEC` /
//! `SWITCH_OUT` (13), `EXACT_IP` / `SWITCH_OUT_PREEMPT` / `MMAP_BUILD_ID` (14), `EXT_RESERVED`
//! (15).
//!
//! # Byte order
//!
//! The byte order an [`EventLayout`] is made with ([`EventLayout::new`]) selects it. Fields are converted one by one; strings, RAW, stack
//! and AUX bytes are copied as they are. The two C bitfields are renumbered so that callers see
//! uapi bit numbers: [`BranchFlags`] and [`Attr::flags`] (GCC allocates bitfields from the top
//! bit on big-endian machines). WEIGHT_STRUCT's union needs nothing: its declaration is
//! reversed on big-endian machines, so the fields are the same bits of the u64 on both.

mod attr;
mod aux_records;
mod bitfield;
mod body;
mod bpf;
mod branch;
pub mod branch_sample_type;
mod cgroup;
mod chain;
mod context;
mod cursor;
mod decode;
mod encode;
mod endian;
mod entries;
mod error;
mod event_record;
mod event_set;
mod fixed;
mod header;
mod id_table;
mod layout;
mod lost;
mod mmap;
mod namespaces;
mod raw;
mod read;
mod read_values;
mod regs;
mod sample;
mod sample_id;
pub mod sample_type;
mod switch;
mod task;
mod text_poke;
mod throttle;
mod view;
mod walk;

#[cfg(test)]
mod tests;

pub use attr::{flags as attr_flags, Attr};
pub use aux_records::{aux_flags, Aux, AuxOutputHwId, ItraceStart};
pub use bpf::{
    BpfEvent, Ksymbol, BPF_EVENT_PROG_LOAD, BPF_EVENT_PROG_UNLOAD, BPF_TAG_SIZE, KSYMBOL_FLAGS_UNREGISTER,
    KSYMBOL_TYPE_BPF, KSYMBOL_TYPE_OOL,
};
pub use branch::{BranchEntry, BranchFlags, BranchStack};
pub use cgroup::Cgroup;
pub use chain::{callchain, CallchainDeferred};
pub(crate) use context::DecodeContext;
pub use decode::Record;
pub(crate) use encode::encode_body;
pub use encode::Encode;
pub use endian::Endian;
pub use entries::{Entries, EntriesIter, Entry};
pub use error::{DecodeError, EncodeError};
pub use event_record::{Attributed, EventRecord};
pub use event_set::{EventSet, EventSetError};
pub use fixed::FixedSample;
pub use header::{misc, type_name, types, CpuMode, Header};
pub use id_table::IdEntry;
pub use layout::EventLayout;
pub use lost::{Lost, LostSamples, LOST_BODY_SIZE};
pub use mmap::{Mmap, Mmap2, Mmap2File, BUILD_ID_MAX};
pub use namespaces::{ns_index, NamespaceLink, Namespaces};
pub use raw::RawRecord;
pub(crate) use raw::RecordRef;
pub use read::ReadRecord;
pub use read_values::{read_format, GroupEntry, ReadGroup, ReadSingle, ReadValues};
pub use regs::{Regs, ABI_32 as REGS_ABI_32, ABI_64 as REGS_ABI_64, ABI_NONE as REGS_ABI_NONE};
pub use sample::{PidTid, Sample, SampleCpu, StackUser, Weight, WeightStruct};
pub use sample_id::SampleId;
pub use switch::{Switch, SwitchCpuWide};
pub use task::{Comm, Task};
pub use text_poke::TextPoke;
pub use throttle::Throttle;
pub use view::{RecordView, SampleView};
pub use walk::Walker;

/// Largest record size: `header.size` is a u16 and every record is a multiple of 8 bytes.
pub const MAX_RECORD_SIZE: usize = 65528;
