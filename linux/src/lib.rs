//! # perfring-linux
//!
//! perf events on Linux, read with [`perfring`]: a typed [`EventAttr`] builder over the same
//! `Attr` that perf.data and the record decoder use, [`Event::open`] with errors that say what
//! to change (the `perf_event_paranoid` level and capability, the field the kernel rejected),
//! the ioctls, counts typed by `read_format`, the kernel's [`Ring`] in all four of its modes
//! read by perfring's consumer or backward reader, and readiness through [`AsFd`] and
//! [`wait()`] — no async runtime baked in.
//!
//! Reading samples of a busy loop on this thread:
//!
//! ```
//! use perfring::record::{sample_type as st, Event as EventLayout, EventSet, IdEntry, Walker};
//! use perfring_linux::{attr::software, Event, EventAttr, Ring, Target};
//! let attr = EventAttr::software(software::TASK_CLOCK)
//!     .sample_period(200_000) // a sample every 0.2 ms of CPU time
//!     .sample_type(st::IDENTIFIER | st::IP | st::TID | st::TIME);
//! let event = match Event::open(&attr, Target::ThisThread, None) {
//!     Ok(e) => e,
//!     Err(e) => return eprintln!("skipped: {e}"), // e.g. perf_event_paranoid too high
//! };
//! let ring = Ring::map(&event, 8, true).unwrap();
//! event.enable().unwrap();
//! let t = std::time::Instant::now();
//! while t.elapsed().as_millis() < 20 {
//!     std::hint::black_box(t.elapsed());
//! }
//! event.disable().unwrap();
//! let mut set = EventSet::new([EventLayout::EMPTY; 1], [IdEntry::EMPTY; 1]);
//! set.add_event(event.attr(), perfring::record::Endian::NATIVE).unwrap();
//! let (mut consumer, mut scratch) = (ring.consumer().unwrap(), vec![0u8; 65536]);
//! let mut samples = 0;
//! consumer.for_each(&mut scratch, |r| {
//!     if let Ok(v) = set.events()[0].sample(r.bytes) {
//!         // SAFETY: gettid has no preconditions.
//!         assert_eq!(v.tid(), Some(unsafe { libc::gettid() } as u32));
//!         samples += 1;
//!     }
//! }).unwrap();
//! assert!(samples > 10, "{samples} samples in 20 ms of CPU");
//! ```
//!
//! | module | what |
//! |---|---|
//! | [`attr`] | [`EventAttr`]: every `perf_event_attr` field and flag; software, hardware, raw, breakpoint and tracepoint (by name, through tracefs) events |
//! | [`event`] | [`Event`]: open on a thread, a process, a CPU; groups; the ioctls; [`Counts`] from `read(2)` |
//! | [`ring`] | [`Ring`]: `1 + 2^n` pages, forward or backward, writable or overwrite; its [`AuxArea`] |
//! | [`launch`] | a command held before `exec` while its events are opened; SIGINT as "stop" |
//! | [`mod@wait`] | readiness: [`AsFd`] everywhere, [`wait`](wait::wait) over many, hang-up at task exit |
//! | [`error`] | [`OpenError`], [`Error`] |
//!
//! All system calls (and all `unsafe`) are in one private module, `sys`.
//!
//! [`AsFd`]: std::os::fd::AsFd

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod attr;
pub mod error;
pub mod event;
pub mod launch;
pub mod ring;
mod sys;
pub mod wait;

pub use attr::EventAttr;
pub use error::{Error, OpenError};
pub use event::{online_cpus, paranoid, Counts, Event, Target};
pub use ring::{AuxArea, Ring};
pub use wait::{wait, wait_all, Readiness};
