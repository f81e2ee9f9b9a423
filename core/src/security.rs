//! # Threat model: the ring across a trust boundary
//!
//! perfring is embedded where the other side of the ring may be malicious: a hypervisor
//! exporting a ring to a guest, firmware sharing one with a host, a process reading the kernel's
//! ring. This module states what each side trusts and what the crate guarantees.
//!
//! ## What each side may write
//!
//! | word / area | written by | trusted by the other side? |
//! |---|---|---|
//! | `data_head`, `aux_head`, record bytes, self-monitoring fields | producer | no, by an [`Untrusted`](crate::consumer::Untrusted) consumer |
//! | `data_tail`, `aux_tail` | consumer | never by the producer |
//! | `data_offset`, `data_size` | producer (at setup) | validated once by [`Mapping::attach`](crate::memory::Mapping) |
//!
//! ## Guarantees to either side, whatever the peer writes and whenever it writes it
//!
//! * **No panic, no out-of-bounds access, no undefined behaviour.** Every offset is masked by
//!   the (validated, power-of-two) area size; every record size is checked (≥ 8, multiple of 8,
//!   within what the head published) on a local copy of the header before use. Peer-writable
//!   bytes are read by an untrusted consumer only with atomic word loads
//!   ([`RingMemory::load_words`](crate::memory::RingMemory::load_words)), so a concurrent peer write is
//!   not a data race; the copy is validated after it is taken (*copy-then-validate*: no header or
//!   size is fetched twice).
//! * **Bounded work per call.** A batch reads `data_head` once; each record advances the
//!   position by at least 8 bytes and never past that head, so a batch does at most
//!   `data_size / 8` steps. No loop waits for the peer.
//! * **Typed errors.** A bad head, a zero or misaligned size, a record crossing the head are
//!   [`ReadError`](crate::consumer::ReadError)s; the consumer stops before the fault and consumes nothing
//!   past it.
//!
//! ## Guarantees to an honest peer
//!
//! * **Nothing lost silently.** Every record the producer could not write is counted and
//!   reported by a `PERF_RECORD_LOST` (or is still in [`lost_pending`](crate::producer::Producer::lost_pending)).
//! * **The producer never overwrites unread data**, whatever `data_tail` says: a tail ahead of
//!   the head, or more than `data_size` behind it, is treated as "no space" (drops, counted).
//!   The kernel computes the space modulo the ring size and would overwrite in that case; this is
//!   a deliberate, stricter difference.
//!
//! ## What cannot be guaranteed
//!
//! * A hostile consumer can make the producer drop every record (by never advancing, or by
//!   writing a bad tail). The drops are counted.
//! * A hostile producer can feed a consumer well-formed garbage. Validation guarantees memory
//!   safety and bounded work, not truth.
//! * Over a [`Mapping`](crate::memory::Mapping), the producer writes record bytes with plain copies into
//!   memory it reserved. If the peer can also *write* the data area (the kernel maps it read-only
//!   to user space; a hypervisor should too), those writes race with ours: map it read-only.
