//! The kernel's BPF ring buffer (`BPF_MAP_TYPE_RINGBUF`) simulated through perfring's
//! [`bpf_ringbuf`](perfring::bpf_ringbuf): several CPUs reserving at once under the ring's lock,
//! interrupts nesting records inside the ones their CPU is writing, an NMI inside the lock,
//! commits out of reservation order, discards, a full ring's failed reservations, the kernel's
//! wakeup flags, and a consumer that sleeps until woken; an [`Oracle`] checks every session:
//! every committed record read once, in reservation order, intact; discarded ones never; every
//! failure counted, as the producer counts them; no wakeup lost.
//!
//! [`run`] is the whole machine; `perfring-sim --ringbuf` prints one session ([`cli`]).

pub mod cli;
mod config;
mod engine;
mod memory;
mod oracle;

pub use config::Config;
pub use engine::{run, CpuStats, Report};
pub use memory::HeapRing;
pub use oracle::{sample, Oracle};
