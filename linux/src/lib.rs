//! # perfring-linux
//!
//! perf events on Linux, read with [`perfring`]: a typed [`EventAttr`] builder over the same
//! `Attr` that perf.data and the record decoder use, [`Event::open`] with errors that say what
//! to change (the `perf_event_paranoid` level and capability, the field the kernel rejected),
//! the ioctls, counts typed by `read_format`, the kernel's [`Ring`] in all four of its modes
//! read by perfring's consumer or backward reader, and readiness through [`AsFd`] and
//! [`wait()`] — no async runtime baked in.
//!
//! Sampling a command — held before `exec` while its events open, started, drained, decoded:
//!
//! ```
//! use perfring::record::{sample_type as st, Endian, Event as Layout, EventSet, IdEntry};
//! use perfring_linux::{attr::software, launch::Launch, online_cpus, Event, EventAttr, Ring, Target};
//! let mut cmd = Launch::spawn(&["sh".into(), "-c".into(), "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done".into()]).unwrap();
//! let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).inherit(true)
//!     .enable_on_exec(true).sample_type(st::IDENTIFIER | st::IP | st::TID);
//! let mut rings = Vec::new();
//! let mut set = EventSet::new(vec![Layout::EMPTY; 1], Vec::new());
//! set.add_event(attr.attr(), Endian::NATIVE).unwrap();
//! for cpu in online_cpus().unwrap() { // inherit needs per-CPU events to be mapped
//!     let event = match Event::open(&attr, Target::TaskOnCpu(cmd.pid(), cpu), None) {
//!         Ok(e) => e,
//!         Err(e) => return eprintln!("skipped: {e}"), // e.g. perf_event_paranoid too high
//!     };
//!     set.storage_mut().1.push(IdEntry::EMPTY);
//!     set.add_id(0, event.id()).unwrap();
//!     rings.push((Ring::map(&event, 16, true).unwrap(), event));
//! }
//! cmd.start(); // exec: enable_on_exec starts the events
//! assert_eq!(cmd.wait().unwrap(), 0);
//! let mut samples = 0;
//! for (ring, _) in &rings {
//!     ring.consumer().unwrap().for_each(&mut vec![0u8; 1 << 16], |r| {
//!         if let (Ok(0), Ok(v)) = (set.attribute(r.bytes), set.events()[0].sample(r.bytes)) {
//!             assert_eq!(v.pid(), Some(cmd.pid() as u32));
//!             samples += 1;
//!         }
//!     }).unwrap();
//! }
//! assert!(samples > 0, "the command's CPU time was sampled");
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
