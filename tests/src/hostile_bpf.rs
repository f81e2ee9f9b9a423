//! A BPF ring buffer memory with a scripted hostile peer: before *every* access perfring makes
//! (each position lookup, each header word, each copied word), the peer may rewrite a position
//! or any 32-bit word of the data area, as a script says. The same harness drives the fuzz
//! target `bpf_ringbuf_consumer`, the property tests `tests/tests/hostile_bpf_ringbuf.rs` (also
//! run under Miri) and their named attacks.
//!
//! It also checks perfring's side of the [`RingbufMemory`] contract: every range perfring asks for
//! must lie inside the area (a violation panics: that is a bug the fuzzer must find).

use std::cell::{Cell, RefCell};
use std::ops::ControlFlow;

use perfring::bpf_ringbuf::{
    Config, Drain, Notify, Publish, RingbufConsumer, RingbufError, RingbufMemory, RingbufProducer, SpinLock, Wrapped,
    BUSY_BIT,
};
use perfring::loom::{AtomicU32, AtomicUsize};

/// Relaxed, for the harness's own bookkeeping of a single-threaded peer.
const R: std::sync::atomic::Ordering = std::sync::atomic::Ordering::Relaxed;

/// The page size the harness's headers count in.
pub const PAGE_SIZE: usize = 64;

/// One scripted peer action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BpfPeerWrite {
    /// Do nothing at this access.
    Nothing,
    /// Store a value into `producer_pos`.
    ProducerPos(usize),
    /// Store a value into `consumer_pos`.
    ConsumerPos(usize),
    /// Store `value` into data word `index` (modulo the number of words).
    Word(usize, u32),
}

/// Decode a script from fuzzer bytes: 10 bytes per action.
pub fn bpf_script_from_bytes(bytes: &[u8]) -> Vec<BpfPeerWrite> {
    bytes
        .chunks(10)
        .map(|c| {
            let mut b = [0u8; 10];
            b[..c.len()].copy_from_slice(c);
            let value = u64::from_le_bytes(b[2..10].try_into().unwrap()) as usize;
            match b[0] % 8 {
                0 => BpfPeerWrite::ProducerPos(value),
                1 => BpfPeerWrite::ProducerPos(value & 0xfff8),
                2 => BpfPeerWrite::ConsumerPos(value),
                3 | 4 => BpfPeerWrite::Word(usize::from(b[1]), value as u32),
                5 => BpfPeerWrite::Word(usize::from(b[1]), (value as u32 & 0xff) | (value as u32 & BUSY_BIT)),
                _ => BpfPeerWrite::Nothing,
            }
        })
        .collect()
}

/// Ring memory whose peer follows a script. Single-threaded: the "concurrency" is the peer
/// acting between any two accesses. It lends no views: every read is a copy it can count.
pub struct HostileBpfRing {
    consumer_pos: AtomicUsize,
    producer_pos: AtomicUsize,
    pending_pos: AtomicUsize,
    words: Vec<AtomicU32>,
    script: Vec<BpfPeerWrite>,
    step: Cell<usize>,
    /// Accesses made (each position lookup, each header word, each copied word).
    pub accesses: Cell<usize>,
    /// Byte ranges perfring wrote with `write` (offset, len).
    pub writes: RefCell<Vec<(usize, usize)>>,
}

impl HostileBpfRing {
    /// A ring of `size` bytes (a power of two ≥ 16), data initialised from `init` (cycled),
    /// positions given, and the peer's script.
    pub fn new(size: usize, init: &[u8], producer_pos: usize, consumer_pos: usize, script: Vec<BpfPeerWrite>) -> Self {
        assert!(size.is_power_of_two() && size >= 16);
        let words = (0..size / 4)
            .map(|i| {
                let b: [u8; 4] =
                    std::array::from_fn(|j| if init.is_empty() { 0 } else { init[(4 * i + j) % init.len()] });
                AtomicU32::new(u32::from_ne_bytes(b))
            })
            .collect();
        HostileBpfRing {
            consumer_pos: AtomicUsize::new(consumer_pos),
            producer_pos: AtomicUsize::new(producer_pos),
            pending_pos: AtomicUsize::new(0),
            words,
            script,
            step: Cell::new(0),
            accesses: Cell::new(0),
            writes: RefCell::default(),
        }
    }

    /// The peer acts (one script step), and the access is counted.
    fn peer(&self) {
        self.accesses.set(self.accesses.get() + 1);
        let i = self.step.get();
        self.step.set(i + 1);
        match self.script.get(i).copied().unwrap_or(BpfPeerWrite::Nothing) {
            BpfPeerWrite::Nothing => {}
            BpfPeerWrite::ProducerPos(v) => self.producer_pos.store(v, R),
            BpfPeerWrite::ConsumerPos(v) => self.consumer_pos.store(v, R),
            BpfPeerWrite::Word(i, v) => self.words[i % self.words.len()].store(v, R),
        }
    }

    /// A copy of the data area, for before/after comparisons.
    pub fn snapshot(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.load(R).to_ne_bytes()).collect()
    }

    /// Set a header by hand (the harness, not the script).
    pub fn set_header(&self, offset: usize, len: u32, pg_off: u32) {
        self.words[offset / 4].store(len, R);
        self.words[offset / 4 + 1].store(pg_off, R);
    }

    fn check_range(&self, offset: usize, len: usize) {
        let size = self.words.len() * 4;
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= size),
            "perfring asked for [{offset}, +{len}) of a {size}-byte area: out of bounds"
        );
    }

    fn header_word(&self, offset: usize, at: usize) -> &AtomicU32 {
        self.peer();
        assert!(offset % 8 == 0 && offset < self.words.len() * 4, "perfring asked for a header at {offset:#x}");
        &self.words[(offset + at) / 4]
    }
}

// SAFETY: the size is fixed; every range is checked (a bad one panics instead of touching
// memory); the atomics are fields of `self`.
unsafe impl RingbufMemory for HostileBpfRing {
    fn size(&self) -> usize {
        self.words.len() * 4
    }
    fn page_size(&self) -> usize {
        PAGE_SIZE
    }
    fn double_mapped(&self) -> bool {
        false
    }
    fn consumer_pos(&self) -> &AtomicUsize {
        self.peer();
        &self.consumer_pos
    }
    fn producer_pos(&self) -> &AtomicUsize {
        self.peer();
        &self.producer_pos
    }
    fn pending_pos(&self) -> &AtomicUsize {
        &self.pending_pos
    }
    fn len_word(&self, offset: usize) -> &AtomicU32 {
        self.header_word(offset, 0)
    }
    fn pg_off_word(&self, offset: usize) -> &AtomicU32 {
        self.header_word(offset, 4)
    }
    unsafe fn write(&self, offset: usize, src: &[u8]) {
        self.check_range(offset, src.len());
        self.writes.borrow_mut().push((offset, src.len()));
        for (k, b) in src.iter().enumerate() {
            let word = &self.words[(offset + k) / 4];
            let mut bytes = word.load(R).to_ne_bytes();
            bytes[(offset + k) % 4] = *b;
            word.store(u32::from_ne_bytes(bytes), R);
        }
    }
    unsafe fn read(&self, offset: usize, dst: &mut [u8]) {
        self.check_range(offset, dst.len());
        for (k, b) in dst.iter_mut().enumerate() {
            self.peer();
            *b = self.words[(offset + k) / 4].load(R).to_ne_bytes()[(offset + k) % 4];
        }
    }
    fn load_words(&self, offset: usize, dst: &mut [u8]) -> bool {
        if offset % 4 != 0 || dst.len() % 4 != 0 {
            return false;
        }
        self.check_range(offset, dst.len());
        for (k, chunk) in dst.chunks_exact_mut(4).enumerate() {
            self.peer();
            chunk.copy_from_slice(&self.words[offset / 4 + k].load(R).to_ne_bytes());
        }
        true
    }
}

/// Input of the consumer scenario.
#[derive(Debug, Clone)]
pub struct BpfConsumerCase {
    /// log2 of the data size (clamped to 4..=10).
    pub size_log: u8,
    /// Initial data bytes (cycled).
    pub init: Vec<u8>,
    /// Initial `producer_pos`.
    pub producer_pos: usize,
    /// Initial `consumer_pos`.
    pub consumer_pos: usize,
    /// RingbufConsumer settings: bit 0 trusted, bit 1 publish per record (else bit 6: hold the
    /// last record), bit 2 split wrapped samples, bit 3 no `pg_off` check, bit 4 a BUSY limit
    /// of 2, bit 5 the user ringbuf's drain instead.
    pub mode: u8,
    /// The peer's script.
    pub script: Vec<BpfPeerWrite>,
}

/// Run a consumer (or the user ringbuf's drain) over a hostile ring. Panics only on a perfring
/// bug: an out-of-bounds request, a record larger than the ring, a position that moves by
/// other than whole records within what it validated, or more work per call than the bound.
pub fn run_bpf_consumer(case: &BpfConsumerCase) {
    let size = 1usize << case.size_log.clamp(4, 10);
    let ring = HostileBpfRing::new(size, &case.init, case.producer_pos, case.consumer_pos, case.script.clone());
    let mut scratch = vec![0u8; size + 8];
    // Bounded work per call: a batch takes at most size / 8 records, each its two header words
    // and a `consumer_pos` store (publishing per record), and their samples' bytes (the harness
    // counts a trusted consumer's plain copy byte by byte, an untrusted one's word by word; all
    // within the size validated), plus the positions of the batch, the check before sleeping
    // and the rest.
    let bound = 3 * (size / 8) + size + 16;
    if case.mode & 32 != 0 {
        let drain = Drain::new(&ring, SpinLock::new()).unwrap();
        for _call in 0..4 {
            ring.accesses.set(0);
            let mut n = 0;
            let _ = drain.drain(&mut scratch, Notify::Adaptive, |s| {
                n += 1;
                assert!(s.len() + 8 <= size, "a sample larger than the ring: {}", s.len());
                ControlFlow::Continue(())
            });
            // Each drained or skipped record costs its header, its words and the positions. A
            // peer that refills the ring between accesses can keep a drain going (up to the
            // kernel's MAX_DRAIN_SAMPLES), but only while its script lasts: then at most the
            // ring's size / 8 records remain.
            let records = case.script.len() + size / 8 + 4;
            assert!(n <= records, "{n} samples from a {size}-byte ring and {} peer writes", case.script.len());
            assert!(ring.accesses.get() <= records * (size / 4 + 8), "unbounded drain: {}", ring.accesses.get());
        }
        return;
    }
    let consumer = if case.mode & 1 != 0 {
        // SAFETY: the harness's memory is atomic words and lends no views, so even a trusted
        // consumer over a hostile peer is defined behaviour here (its "plain" reads are atomic
        // loads); the property under test is that it stays in bounds and bounded.
        unsafe { RingbufConsumer::trusted(&ring) }
    } else {
        RingbufConsumer::untrusted(&ring)
    };
    let Ok(mut consumer) = consumer else { return };
    consumer.configure(Config {
        publish: match (case.mode & 2 != 0, case.mode & 64 != 0) {
            (true, _) => Publish::PerRecord,
            (false, true) => Publish::HoldLast,
            (false, false) => Publish::PerBatch,
        },
        wrapped: if case.mode & 4 != 0 { Wrapped::Split } else { Wrapped::Copy },
        check_pg_off: case.mode & 8 == 0,
        busy_limit: if case.mode & 16 != 0 { Some(2) } else { None },
    });
    for call in 0..6 {
        ring.accesses.set(0);
        let start = consumer.position();
        let mut records = 0;
        if let Ok(mut batch) = consumer.batch() {
            while let Some(r) = batch.next(&mut scratch) {
                let Ok(r) = r else { break };
                records += 1;
                assert!(r.payload.len() + 8 <= size, "a sample larger than the ring: {}", r.payload.len());
                let ahead = r.position.wrapping_sub(start);
                assert!(ahead < size && ahead % 8 == 0, "a record at {:#x} outside the batch", r.position);
                assert!(records <= size / 8, "a batch cannot yield more than size / 8 records");
            }
        }
        let moved = consumer.position().wrapping_sub(start);
        assert!(moved <= size && moved % 8 == 0, "the position moved by {moved:#x}");
        let _ = consumer.prepare_to_sleep();
        let _ = consumer.available();
        assert!(ring.accesses.get() <= bound, "unbounded work: {} accesses (bound {bound})", ring.accesses.get());
        if call == 3 {
            consumer.skip_to_producer();
        }
    }
}

/// Input of the producer scenario.
#[derive(Debug, Clone)]
pub struct BpfProducerCase {
    /// log2 of the data size (clamped to 4..=10).
    pub size_log: u8,
    /// Per operation: a sample size to reserve, or `u16::MAX` to commit the oldest open
    /// reservation and `u16::MAX - 1` the newest (discarded if the operation's `consumer_pos`
    /// has its low bit set); and the `consumer_pos` the peer sets before it.
    pub ops: Vec<(u16, usize)>,
}

/// Run the kernel's producer against a hostile `consumer_pos`. Panics only on a perfring bug:
/// a write outside the writing reservation's sample, or two open reservations sharing bytes
/// (the kernel's `pending_pos` rule: no reservation laps a record still being written).
pub fn run_bpf_producer(case: &BpfProducerCase) {
    let size = 1usize << case.size_log.clamp(4, 10);
    let ring = HostileBpfRing::new(size, &[], 0, 0, Vec::new());
    // SAFETY: the only producer of this ring; the peer is the harness.
    let producer = unsafe { RingbufProducer::new(&ring, SpinLock::new()) }.unwrap();
    let mut open = std::collections::VecDeque::new();
    let mut failed = 0;
    for &(op, cons) in &case.ops {
        ring.consumer_pos.store(cons, R);
        if op >= u16::MAX - 1 {
            let r = if op == u16::MAX { open.pop_front() } else { open.pop_back() };
            if let Some(r) = r {
                let r: perfring::bpf_ringbuf::Reservation<'_, &HostileBpfRing> = r;
                if cons & 1 != 0 {
                    r.discard(Notify::Adaptive);
                } else {
                    r.submit(Notify::Adaptive);
                }
            }
            continue;
        }
        match producer.reserve(usize::from(op) % size) {
            Ok(mut r) => {
                ring.writes.borrow_mut().clear();
                let len = r.len();
                r.write(0, &vec![0x5A; len]).unwrap();
                // Every byte written is inside this record's sample.
                let start = (r.position() + 8) & (size - 1);
                for &(off, n) in ring.writes.borrow().iter() {
                    for b in off..off + n {
                        assert!((b.wrapping_sub(start) & (size - 1)) < len, "byte {b} written outside the sample");
                    }
                }
                // No open reservation shares a byte with this one: the span from the oldest open
                // record to this one's end fits the ring (the kernel's `pending_pos` rule).
                let end = r.position() + perfring::bpf_ringbuf::record_len(len).unwrap();
                for other in &open {
                    let other: &perfring::bpf_ringbuf::Reservation<'_, &HostileBpfRing> = other;
                    let other_end = other.position() + perfring::bpf_ringbuf::record_len(other.len()).unwrap();
                    assert!(r.position() >= other_end, "open reservations overlap");
                    assert!(end - other.position() <= size, "a reservation laps the open one at {}", other.position());
                }
                open.push_back(r);
            }
            Err(
                RingbufError::NoSpace { .. }
                | RingbufError::SampleTooLarge { .. }
                | RingbufError::ConsumerPosInvalid { .. },
            ) => failed += 1,
            Err(e) => panic!("unexpected reservation failure {e}"),
        }
    }
    assert_eq!(producer.failed_reservations(), failed, "every failure counted");
}
