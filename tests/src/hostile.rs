//! A ring memory with a scripted hostile peer: before *every* access perfring makes (each
//! position lookup, each word of each copy), the peer may rewrite any position word or data
//! word, as a script says. The same harness drives the cargo-fuzz targets (`fuzz/`), the
//! proptests (`tests/tests/hostile_props.rs`, also run under Miri) and the named attack tests.
//!
//! It also checks perfring's side of the `RingMemory` contract: every range perfring asks for
//! must lie inside the area (a violation panics: that is a bug the fuzzer must find).

use std::cell::Cell;

use perfring::loom::{AtomicBool, AtomicU32, AtomicUsize};
use perfring::memory::{Area, Position, RingMemory};

/// Relaxed, for the harness's own bookkeeping of a single-threaded peer.
const R: std::sync::atomic::Ordering = std::sync::atomic::Ordering::Relaxed;

/// One scripted peer action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerWrite {
    /// Do nothing at this access.
    Nothing,
    /// Store `value` into a position word.
    Position(Position, usize),
    /// Store `value` into data word `index` (modulo the number of words).
    DataWord(usize, usize),
}

/// Decode a script from fuzzer bytes: 10 bytes per action.
pub fn script_from_bytes(bytes: &[u8]) -> Vec<PeerWrite> {
    bytes
        .chunks(10)
        .map(|c| {
            let mut b = [0u8; 10];
            b[..c.len()].copy_from_slice(c);
            let value = usize::from_le_bytes(b[2..2 + std::mem::size_of::<usize>()].try_into().unwrap());
            match b[0] % 8 {
                0 => PeerWrite::Position(Position::DataHead, value),
                1 => PeerWrite::Position(Position::DataTail, value),
                2 | 3 => PeerWrite::DataWord(usize::from(b[1]), value),
                _ => PeerWrite::Nothing,
            }
        })
        .collect()
}

/// Ring memory whose peer follows a script. Single-threaded: the "concurrency" is the peer
/// acting between any two accesses.
pub struct HostileRing {
    positions: [AtomicUsize; 4],
    header: [AtomicU32; 24],
    paused: AtomicBool,
    write_gen: AtomicUsize,
    data: Vec<AtomicUsize>,
    script: Vec<PeerWrite>,
    step: Cell<usize>,
    /// Accesses made (each position lookup, each copied word).
    pub accesses: Cell<usize>,
    /// Byte ranges perfring wrote with `write` (offset, len), for the producer invariant.
    pub writes: std::cell::RefCell<Vec<(usize, usize)>>,
}

// SAFETY (for the harness): `Cell`s make this !Sync, so it is only used from one thread.
const W: usize = std::mem::size_of::<usize>();

impl HostileRing {
    /// A ring of `data_size` bytes (a power of two ≥ 64), data initialised from `init`
    /// (cycled), positions given, and the peer's script.
    pub fn new(data_size: usize, init: &[u8], head: usize, tail: usize, script: Vec<PeerWrite>) -> Self {
        assert!(data_size.is_power_of_two() && data_size >= 64);
        let data: Vec<AtomicUsize> = (0..data_size / W)
            .map(|i| {
                let mut w = [0u8; W];
                for (j, b) in w.iter_mut().enumerate() {
                    *b = if init.is_empty() { 0 } else { init[(i * W + j) % init.len()] };
                }
                AtomicUsize::new(usize::from_ne_bytes(w))
            })
            .collect();
        let ring = HostileRing {
            positions: std::array::from_fn(|_| AtomicUsize::new(0)),
            header: std::array::from_fn(|_| AtomicU32::new(0)),
            paused: AtomicBool::new(false),
            write_gen: AtomicUsize::new(0),
            data,
            script,
            step: Cell::new(0),
            accesses: Cell::new(0),
            writes: Default::default(),
        };
        ring.positions[Position::DataHead.index()].store(head, R);
        ring.positions[Position::DataTail.index()].store(tail, R);
        ring
    }

    /// The peer acts (one script step), and the access is counted.
    fn peer(&self) {
        self.accesses.set(self.accesses.get() + 1);
        let i = self.step.get();
        self.step.set(i + 1);
        match self.script.get(i).copied().unwrap_or(PeerWrite::Nothing) {
            PeerWrite::Nothing => {}
            PeerWrite::Position(p, v) => self.positions[p.index()].store(v, R),
            PeerWrite::DataWord(i, v) => {
                let n = self.data.len();
                self.data[i % n].store(v, R)
            }
        }
    }

    /// A copy of the data area, for before/after comparisons.
    pub fn snapshot(&self) -> Vec<u8> {
        self.data.iter().flat_map(|w| w.load(R).to_ne_bytes()).collect()
    }

    /// Set a position word directly (the harness, not the script).
    pub fn set(&self, p: Position, v: usize) {
        self.positions[p.index()].store(v, R);
    }

    fn check_range(&self, area: Area, offset: usize, len: usize) {
        let size = self.size(area);
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= size),
            "perfring asked for [{offset}, +{len}) of a {size}-byte area: out of bounds"
        );
    }
}

// SAFETY: sizes are fixed; every range is checked (and a bad one panics instead of touching
// memory); the atomics are fields of `self`.
unsafe impl RingMemory for HostileRing {
    fn size(&self, area: Area) -> usize {
        match area {
            Area::Data => self.data.len() * W,
            Area::Aux => 0,
        }
    }
    fn position(&self, p: Position) -> &AtomicUsize {
        self.peer();
        &self.positions[p.index()]
    }
    fn page_word(&self, offset: usize) -> &AtomicU32 {
        self.peer();
        &self.header[(offset / 4) % 24]
    }
    fn paused(&self) -> &AtomicBool {
        &self.paused
    }
    fn write_gen(&self) -> &AtomicUsize {
        &self.write_gen
    }
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        self.check_range(area, offset, src.len());
        self.writes.borrow_mut().push((offset, src.len()));
        for (k, b) in src.iter().enumerate() {
            let pos = offset + k;
            let word = &self.data[pos / W];
            let mut bytes = word.load(R).to_ne_bytes();
            bytes[pos % W] = *b;
            word.store(usize::from_ne_bytes(bytes), R);
        }
    }
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        self.check_range(area, offset, dst.len());
        for (k, b) in dst.iter_mut().enumerate() {
            self.peer();
            let pos = offset + k;
            *b = self.data[pos / W].load(R).to_ne_bytes()[pos % W];
        }
    }
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        if offset % 8 != 0 || dst.len() % 8 != 0 {
            return false;
        }
        self.check_range(area, offset, dst.len());
        for (k, chunk) in dst.chunks_exact_mut(W).enumerate() {
            self.peer();
            chunk.copy_from_slice(&self.data[offset / W + k].load(R).to_ne_bytes());
        }
        true
    }
    unsafe fn view(&self, area: Area, offset: usize, len: usize) -> Option<&[u8]> {
        self.check_range(area, offset, len);
        None
    }
}

/// Input of the consumer scenario.
#[derive(Debug, Clone)]
pub struct ConsumerCase {
    /// log2 of the data size (clamped to 6..=12).
    pub size_log: u8,
    /// Initial data bytes (cycled).
    pub init: Vec<u8>,
    /// Initial head and tail.
    pub head: usize,
    /// Initial tail.
    pub tail: usize,
    /// The peer's script.
    pub script: Vec<PeerWrite>,
}

/// Run an untrusted forward consumer and a backward reader over a hostile ring. Panics only on a
/// perfring bug: an out-of-bounds request, a record whose bytes disagree with its validated
/// header, or more work per call than the bound.
pub fn run_consumer(case: &ConsumerCase) {
    let size = 1usize << case.size_log.clamp(6, 12);
    let ring = HostileRing::new(size, &case.init, case.head, case.tail, case.script.clone());
    let mut scratch = vec![0u8; 65536];
    if let Ok(mut consumer) = perfring::consumer::Consumer::untrusted(&ring) {
        for _call in 0..4 {
            ring.accesses.set(0);
            let Ok(mut batch) = consumer.batch() else { continue };
            let mut records = 0;
            while let Some(r) = batch.next(&mut scratch) {
                let Ok(r) = r else { break };
                records += 1;
                // The record handed out is self-consistent whatever the peer did.
                assert_eq!(usize::from(r.header.size), r.bytes.len());
                assert!(r.bytes.len() >= 8 && r.bytes.len() % 8 == 0);
                let again = perfring::record::Header::parse(r.bytes, perfring::record::Endian::NATIVE).unwrap();
                assert_eq!(again, r.header, "copy-then-validate: the header in the copy is the one checked");
                assert!(records <= size / 8, "a batch cannot yield more than data_size / 8 records");
            }
            drop(batch);
            // Bounded work: each record costs at most its words + a header; plus the head load.
            assert!(ring.accesses.get() <= 2 * (size / W) + 8, "unbounded work: {} accesses", ring.accesses.get());
        }
    }
    let mut reader = perfring::backward::BackwardReader::new(&ring, false).unwrap();
    for _call in 0..3 {
        ring.accesses.set(0);
        let mut n = 0;
        let _ = reader.read(&mut scratch, |r| {
            n += 1;
            assert_eq!(usize::from(r.header.size), r.bytes.len());
        });
        assert!(n <= size / 8);
        assert!(ring.accesses.get() <= 4 * (size / W) + 16, "unbounded work: {} accesses", ring.accesses.get());
    }
}

/// Input of the producer scenario.
#[derive(Debug, Clone)]
pub struct ProducerCase {
    /// log2 of the data size (clamped to 6..=12).
    pub size_log: u8,
    /// Producer settings: bit 0 backward, bit 1 overwrite.
    pub mode: u8,
    /// Per operation: (record size in 8-byte units, tail value the peer sets before it).
    pub ops: Vec<(u16, usize)>,
}

/// Run a producer against a hostile `data_tail`. Panics only on a perfring bug: a write outside
/// the reservation, a reservation overwriting data an honest consumer had not consumed, or a
/// nest count left raised.
pub fn run_producer(case: &ProducerCase) {
    use perfring::producer::{EventIdentity, Producer, ProducerConfig};
    let size = 1usize << case.size_log.clamp(6, 12);
    let config =
        ProducerConfig { backward: case.mode & 1 != 0, overwrite: case.mode & 2 != 0, ..ProducerConfig::default() };
    let ring = HostileRing::new(size, &[], 0, 0, Vec::new());
    // SAFETY: the only producer of this ring.
    let producer = unsafe { Producer::new(&ring, config) }.unwrap();
    let mut tails = vec![0usize];
    for &(units, tail) in &case.ops {
        ring.set(Position::DataTail, tail);
        let before = ring.snapshot();
        let head_before = producer.head();
        ring.writes.borrow_mut().clear();
        let len = 8 * usize::from(units.max(1));
        let result = producer.output(&vec![0xA5; len], &EventIdentity::ANONYMOUS);
        let head_after = producer.head();
        assert_eq!(producer.nest(), 0);
        let after = ring.snapshot();
        // The reservation: [old, new) forward, [new, old) backward.
        let (start, reserved) = if config.backward {
            (head_after, head_before.wrapping_sub(head_after))
        } else {
            (head_before, head_after.wrapping_sub(head_before))
        };
        if result.is_err() {
            assert_eq!(reserved, 0, "a refused record reserves nothing");
        }
        assert!(reserved < size, "a reservation is smaller than the ring");
        for i in 0..size {
            let rel = i.wrapping_sub(start & (size - 1)) & (size - 1);
            if rel >= reserved {
                assert_eq!(before[i], after[i], "byte {i} outside the reservation changed");
            }
        }
        // Honest-peer invariant: the reservation never covers bytes that are unread according
        // to every tail the peer has published (the producer may use any earlier tail it
        // loaded; an honest tail only moves forward, so an earlier one is conservative). A
        // producer that ignored the tail would fail this.
        tails.push(tail);
        if !config.overwrite && reserved > 0 {
            let unread =
                |t: usize| if config.backward { t.wrapping_sub(head_before) } else { head_before.wrapping_sub(t) };
            let least = tails.iter().map(|&t| unread(t)).filter(|&u| u <= size).min();
            let least = least.expect("some tail justified the reservation");
            assert!(least + reserved < size, "reserved {reserved} over {least} unread bytes of {size}");
        }
    }
}
