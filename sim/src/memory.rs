//! [`SimRing`]: heap memory for simulated rings, of any power-of-two size chosen at run time.

use perfring::loom::{AtomicBool, AtomicU32, AtomicUsize};
use perfring::memory::{Area, ExclusiveMemory, Position, RingMemory};

const W: usize = std::mem::size_of::<usize>();
const R: std::sync::atomic::Ordering = std::sync::atomic::Ordering::Relaxed;

/// A ring's memory on the heap. Every byte is held in atomic words, so readers that race the
/// producer by design (backward rings) are defined behaviour; the protocol's fences still order
/// everything the consumer relies on.
pub struct SimRing {
    positions: [AtomicUsize; 4],
    header: [AtomicU32; 24],
    paused: AtomicBool,
    write_gen: AtomicUsize,
    data: Vec<AtomicUsize>,
    aux: Vec<AtomicUsize>,
}

impl SimRing {
    /// A zeroed ring of `data_size` bytes (a power of two ≥ 64; checked by the producer and
    /// consumer constructors, which return typed errors).
    pub fn new(data_size: usize) -> Self {
        Self::with_aux(data_size, 0)
    }

    /// A zeroed ring with an AUX area of `aux_size` bytes (0 for none).
    pub fn with_aux(data_size: usize, aux_size: usize) -> Self {
        SimRing {
            positions: std::array::from_fn(|_| AtomicUsize::new(0)),
            header: std::array::from_fn(|_| AtomicU32::new(0)),
            paused: AtomicBool::new(false),
            write_gen: AtomicUsize::new(0),
            data: (0..data_size / W).map(|_| AtomicUsize::new(0)).collect(),
            aux: (0..aux_size / W).map(|_| AtomicUsize::new(0)).collect(),
        }
    }
}

impl SimRing {
    fn words(&self, area: Area) -> &[AtomicUsize] {
        match area {
            Area::Data => &self.data,
            Area::Aux => &self.aux,
        }
    }
}

// SAFETY: every byte of the ring is owned by the value (its vectors of atomics; not Clone), so an
// exclusive borrow of it reaches the ring alone.
unsafe impl ExclusiveMemory for SimRing {}

// SAFETY: the size is fixed at construction (a multiple of the word size); ranges inside it map to
// words of `data`; callers uphold the range contracts (checked again by slice indexing, which
// would panic rather than touch memory outside).
unsafe impl RingMemory for SimRing {
    fn size(&self, area: Area) -> usize {
        match area {
            Area::Data => self.data.len() * W,
            Area::Aux => self.aux.len() * W,
        }
    }
    fn position(&self, p: Position) -> &AtomicUsize {
        &self.positions[p.index()]
    }
    fn page_word(&self, offset: usize) -> &AtomicU32 {
        &self.header[(offset / 4) % 24]
    }
    fn paused(&self) -> &AtomicBool {
        &self.paused
    }
    fn write_gen(&self) -> &AtomicUsize {
        &self.write_gen
    }
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        let words = self.words(area);
        let mut pos = offset;
        let mut rest = src;
        while !rest.is_empty() {
            let word = &words[pos / W];
            let in_word = pos % W;
            let n = (W - in_word).min(rest.len());
            let mut bytes = word.load(R).to_ne_bytes();
            bytes[in_word..in_word + n].copy_from_slice(&rest[..n]);
            word.store(usize::from_ne_bytes(bytes), R);
            pos += n;
            rest = &rest[n..];
        }
    }
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        let words = self.words(area);
        for (k, b) in dst.iter_mut().enumerate() {
            let pos = offset + k;
            *b = words[pos / W].load(R).to_ne_bytes()[pos % W];
        }
    }
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        if offset % 8 != 0 || dst.len() % 8 != 0 || offset + dst.len() > self.size(area) {
            return false;
        }
        for (k, chunk) in dst.chunks_exact_mut(W).enumerate() {
            chunk.copy_from_slice(&self.words(area)[offset / W + k].load(R).to_ne_bytes());
        }
        true
    }
    unsafe fn view(&self, _area: Area, _offset: usize, _len: usize) -> Option<&[u8]> {
        None
    }
}
