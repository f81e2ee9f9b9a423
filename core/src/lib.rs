//! # perfring
//!
//! The Linux perf ring buffer protocol in Rust: the ABI-exact `perf_event_mmap_page`, the
//! kernel's producer (`output_begin` → write → `output_end`, with nested writers and lost
//! counting), the user-space consumer, and the `PERF_RECORD_*` records — over memory the caller
//! provides, with no allocator and no `std`.
//!
//! ```text
//!  control page (perf_event_mmap_page)          data area (2^n bytes)
//! +-----------------------------------+        +------------------------------------------+
//! | lock, index, time_* ... (producer)|        | ...consumed | records ...  | free ...    |
//! | data_head  @1024   (producer, B)  |        |             ^tail          ^head          |
//! | data_tail  @1032   (consumer, D)  |        +------------------------------------------+
//! | data_offset, data_size (producer) |         records: 8-byte header {type, misc, size},
//! | aux_head   @1056   (producer)     |         8-byte aligned, may wrap the area's end
//! | aux_tail   @1064   (consumer)     |
//! +-----------------------------------+
//! ```
//!
//! | module | what it is |
//! |---|---|
//! | [`page`] | `struct perf_event_mmap_page`, offsets checked at compile time |
//! | [`fences`] | every memory ordering, named, with its pairing: (A)–(D) public, the seqlock's and the BPF ring buffer's crate-private |
//! | [`memory`] | the seam to shared memory: [`Mapping`](memory::Mapping) (real ABI layout), [`ModelRing`](memory::ModelRing) (loom) |
//! | [`producer`] | the kernel side: reserve, write, publish; nesting; lost; wakeups |
//! | [`consumer`] | the user side: acquire head, read records (wrapping too), release tail |
//! | [`aux`] | the AUX area: driver-side begin/write/end with PERF_RECORD_AUX, reader, snapshots |
//! | [`backward`] | newest-first reading of backward rings, validated against a racing producer |
//! | [`record`] | `PERF_RECORD_*`: zero-copy decoder and encoder of every record type and sample field, both byte orders |
//! | [`selfmon`] | self-monitoring: the control page's seqlock, counter reads, time conversions |
//! | [`security`] | the threat model: what each side trusts, what is guaranteed |
//! | [`loom`] | the loom shim (`--cfg loom` selects loom's atomics and cells) |
//! | [`bpf_ringbuf`] | the BPF ring buffer (`BPF_MAP_TYPE_RINGBUF`, `USER_RINGBUF`): producer, consumer, drain |
//!
//! ## Reading a record: one way per tier
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
//! Every call but `raw()` returns a `Result` with `perfring::record::DecodeError`, which names
//! the field and its offset; the five are the methods of the trait
//! `perfring::record::EventRecord`, one signature each, whoever delivered the record.
//!
//! [`record`]'s docs show each tier with an example, from the complete decode to the fastest.
//!
//! ## Errors
//!
//! One type per question a caller asks, each `#[non_exhaustive]`, each variant naming the field
//! or value at fault and saying what to do; what a caller matches each for:
//!
//! | type | returned by | a caller matches |
//! |---|---|---|
//! | [`memory::LayoutError`] | every perf ring constructor (`Mapping`, `Producer`, `Consumer`, `BackwardReader`, AUX) | nothing, usually: fix the mapping or the sizes; `NoArea` for a mapping without an AUX area |
//! | [`consumer::ReadError`] | the forward consumer and the backward reader | `LoadFailed` (retry), `WriterActive` (a backward read: pause and read again), `Overrun` (what was read is intact); the rest is a corrupt ring: [`skip_to_head`](consumer::Consumer::skip_to_head) |
//! | [`producer::OutputError`] | the perf producer and the AUX area's driver side | `NoSpace`, `Paused`, `AuxNoSpace` (dropped, counted lost: go on); the rest is a caller bug |
//! | [`bpf_ringbuf::RingbufError`] | every BPF ring buffer call | `NoSpace`, `Contended` (reserve later), `BusyTooLong`, `LoadFailed` (wait, or skip), `DrainBusy` (drain later) |
//! | [`selfmon::SelfmonError`] | [`selfmon::read`] | `Unstable`: read again later |
//! | [`record::DecodeError`] | every read tier of a record | `NotASample` (a SAMPLE's tier asked of another record); the rest names the field and offset at fault |
//! | [`record::EncodeError`] | the record encoders | `BufferTooSmall` (pass `need` bytes), `Unreadable` (a SAMPLE view that does not decode: its `DecodeError`); the rest: the record disagrees with its context |
//! | [`record::EventSetError`] | building an [`EventSet`](record::EventSet) | `EventsFull`, `IdsFull` (capacity); the rest: which rule of perf's the events break |
//!
//! ## Loom
//!
//! `RUSTFLAGS="--cfg loom"` swaps every atomic and data cell for loom's. The cfg is public: an
//! embedder can run loom over *their* code with perfring inside, using [`ModelRing`](memory::ModelRing) as the
//! memory (a [`Mapping`](memory::Mapping) over raw bytes cannot exist under loom).
//!
//! ## 32-bit targets
//!
//! Positions are `usize`, the kernel's `unsigned long`: on a target without 64-bit atomics the
//! low 32 bits of `data_head`/`data_tail` carry the index, as on a 32-bit kernel (see
//! [`memory`]); a 64-bit host reading such a ring extends them with
//! [`memory::extend_position32`]. The producer reserves space by compare-and-swap, so the
//! target needs it on 32-bit words: thumbv7em and riscv32imac have it, thumbv6m (Cortex-M0)
//! does not, and is not supported.

#![no_std]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod aux;
pub mod backward;
pub mod bpf_ringbuf;
pub mod consumer;
pub mod fences;
pub mod loom;
pub mod memory;
#[cfg(not(loom))]
mod pad;
pub mod page;
pub mod producer;
pub mod record;
mod scratch;
pub mod security;
pub mod selfmon;
mod split;
mod stride;

#[cfg(all(test, not(loom)))]
mod ring_tests;

#[cfg(all(test, not(loom)))]
mod backward_tests;

#[cfg(all(test, not(loom)))]
mod aux_tests;

#[cfg(all(test, not(loom)))]
mod selfmon_tests;

#[cfg(all(test, not(loom)))]
mod memory_tests;

#[cfg(all(test, not(loom)))]
mod test_memory;

pub use split::{split, split_with_hooks};
