//! # perfring-sim
//!
//! A deterministic model of the kernel's perf producer on top of the real `perfring` code:
//! CPUs with a context stack (task → softirq → hardirq → NMI), a scheduler that runs, migrates
//! and sleeps threads, event sources (a software event with a period or a frequency, a
//! tracepoint with a raw payload, timer and NMI samples, throttling), the tracing modes of
//! `perf record`, interrupts fired at the producer's preemption points, a consumer per buffer,
//! and an oracle that checks every run. [`engine::run`] is the whole machine. With AUX tracing,
//! the threads run a small program ([`program`]) whose branches a simulated Intel BTS tracer
//! records ([`bts`]), written so that perf decodes them ([`output`], [`elf`]).
//!
//! [`ringbuf`] simulates the kernel's other ring, the BPF ring buffer, the same way: CPUs and
//! nested contexts reserving through perfring's `bpf_ringbuf` producer, and an oracle.

pub mod bts;
pub mod config;
pub mod elf;
pub mod engine;
pub mod memory;
// perf.data output needs perfring-data, which a loom build (the `loom_sim` model) leaves out.
#[cfg(not(loom))]
pub mod output;
pub mod program;
pub mod records;
pub mod ringbuf;
pub mod rng;

pub use config::{Mode, SimConfig};
pub use engine::{run, run_with_progress, BufferStats, Out, Report};
pub use memory::SimRing;
#[cfg(not(loom))]
pub use output::write_perf_data;
