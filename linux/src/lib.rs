//! # perfring-linux
//!
//! perf events on Linux, read with [`perfring`]: a typed [`EventAttr`] builder over the same
//! `Attr` that perf.data and the record decoder use, [`Event::open`] with errors that say what
//! to change (the `perf_event_paranoid` level and capability, the field the kernel rejected),
//! the ioctls, counts typed by `read_format`, the kernel's [`Ring`] in all four of its modes
//! read by perfring's consumer or backward reader, and readiness through [`AsFd`] and
//! [`wait()`] — no async runtime baked in.
//!
//! ## Guide: the samples of a command
//!
//! A [`Session`] opens the events on every online CPU for a command (held before `exec` until
//! they are open, followed into its threads and children), shares one ring per CPU among
//! them, and hands each record over attributed to its event:
//!
//! ```
//! # fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use perfring::record::{sample_type as st, EventRecord};
//! use perfring_linux::{software, EventAttr, Session};
//! let every = |n, config| EventAttr::software(config).sample_period(n).sample_type(st::IDENTIFIER | st::TID);
//! let mut session = Session::command(["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"])
//!     .event(every(100_000, software::TASK_CLOCK)) // event 0: every 100 µs of its CPU time
//!     .event(every(1, software::PAGE_FAULTS)) // event 1: every page fault
//!     .open()?; // a refusal (perf_event_paranoid, say) is a typed error saying what to change
//! let pid = session.pid().unwrap() as u32;
//! let mut samples = [0; 2]; // by event
//! let status = session.run(|record| if let (Ok(event), Ok(sample)) = (record.event(), record.sample()) {
//!     assert_eq!(sample.tid().map(|t| t.pid), Some(pid), "only the command is sampled");
//!     samples[event] += 1;
//! });
//! assert_eq!(status.unwrap(), Some(0));
//! assert!(samples[0] > 0 && samples[1] > 0, "CPU time and page faults sampled: {samples:?}");
//! # Ok(()) }
//! # // Refused here (not permitted, no such event): a visible skip, not a failure.
//! # fn main() { perfring_test_support::doc_example!(example()) }
//! ```
//!
//! Each record is read as every record of perfring is, one way per tier:
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
//! [`Session::process`] follows a running process, [`Session::all_cpus`] every CPU;
//! [`Session::wait`] and [`Session::drain`] are the steps of [`Session::run`], and the session
//! is [`AsFd`] for a reactor. Below it, each piece stands alone:
//!
//! | item | what |
//! |---|---|
//! | [`EventAttr`] | every `perf_event_attr` field and flag; [`software`], [`hardware`], raw, [`breakpoint`] and tracepoint (by name, through tracefs) events |
//! | [`Event`] | open on a thread, a process, a CPU; groups; the ioctls; [`Counts`] from `read(2)` |
//! | [`Ring`] | `1 + 2^n` pages, forward or backward, writable or overwrite ([`RingKind`]), each kind with its reader; its [`AuxArea`]; [`RingMapping`] |
//! | [`ReadOnlyMapping`] | a read-only (overwrite) ring read with loads alone |
//! | [`Session`] | events for a command, a process or all CPUs, a ring per CPU, records attributed ([`SessionRecord`]); CPU-wide events filtered by a [`Cgroup`] |
//! | [`launch`] | a command held before `exec` while its events are opened; SIGINT as "stop" |
//! | [`wait()`] | readiness: [`AsFd`] everywhere, hang-up at task exit ([`Readiness`]) |
//! | [`PerfEventArray`] | the reader of a BPF program's `bpf_perf_event_output`: a BPF_MAP_TYPE_PERF_EVENT_ARRAY of BPF_OUTPUT events, one ring per CPU, each [`RawSample`] zero-copy, wakeups by [`Wakeup`], lost counted per CPU, overwrite mode |
//! | [`RingBuffer`] | the reader of a BPF program's `bpf_ringbuf_output` and `bpf_ringbuf_reserve`/`submit`: BPF_MAP_TYPE_RINGBUF, one ring for every CPU, zero-copy `&[u8]` records, discards skipped, several rings in one epoll set, a wait policy without a wakeup per record |
//! | [`UserRingBuffer`] | the writer of a BPF_MAP_TYPE_USER_RINGBUF, which a program drains with `bpf_user_ringbuf_drain`: [`UserSample`]s reserved, written in place, submitted or discarded; waiting for room |
//! | [`LinuxError`] | every failure of the crate, saying what to change |
//! | `perf_data` | (feature `perf-data`) a [`Session`] written as perf.data, as `perf record` writes it |
//!
//! All system calls (and all `unsafe`) are in one private module, `sys`.
//!
//! [`AsFd`]: std::os::fd::AsFd

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod attr;
mod cgroup;
mod claims;
mod error;
mod event;
pub mod launch;
#[cfg(feature = "perf-data")]
pub mod perf_data;
mod perf_event_array;
mod raw_sample;
mod read_only;
mod ring;
mod ring_buffer;
mod ring_kind;
mod session;
mod session_record;
mod session_rings;
mod sys;
mod user_ring_buffer;
mod wait;

pub use attr::{breakpoint, event_type, hardware, software, EventAttr, HardwareEvent, SoftwareEvent};
pub use cgroup::Cgroup;
pub use error::LinuxError;
pub use event::{online_cpus, paranoid, Counts, Event, Target};
pub use perf_event_array::{Drained, PerfEventArray, PerfEventArrayBuilder, Wakeup};
pub use raw_sample::{BpfRecord, RawSample};
pub use read_only::ReadOnlyMapping;
pub use ring::{AuxArea, Ring};
pub use ring_buffer::RingBuffer;
pub use ring_kind::RingKind;
pub use session::{Placement, Scope, Session, SessionBuilder};
pub use session_record::SessionRecord;
pub use session_rings::{Affinity, ANY_CPU};
pub use sys::RingMapping;
pub use user_ring_buffer::{UserRingBuffer, UserSample};
pub use wait::{wait, Readiness};
