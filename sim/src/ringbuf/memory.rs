//! [`HeapRing`]: heap memory for a simulated BPF ring buffer of any size chosen at run time.

use perfring::bpf_ringbuf::{ExclusiveRingbuf, RingbufMemory};
use perfring::loom::{AtomicU32, AtomicUsize};

/// Relaxed, for the copies of sample bytes (the protocol's orderings come from perfring).
const R: std::sync::atomic::Ordering = std::sync::atomic::Ordering::Relaxed;

/// The page size the ring's headers count in (`pg_off`): the kernel's on x86_64.
const PAGE_SIZE: usize = 4096;

/// A BPF ring buffer's memory on the heap, every byte in 32-bit atomic words (so a reader that
/// races a writer is defined behaviour; the protocol's orderings still order what the consumer
/// relies on). Singly mapped: a record that wraps is read in two pieces.
pub struct HeapRing {
    consumer_pos: AtomicUsize,
    producer_pos: AtomicUsize,
    pending_pos: AtomicUsize,
    words: Vec<AtomicU32>,
}

impl HeapRing {
    /// A zeroed ring of `size` bytes (a power of two of at least 16: the producer and consumer
    /// constructors check, and return typed errors).
    pub fn new(size: usize) -> Self {
        HeapRing {
            consumer_pos: AtomicUsize::new(0),
            producer_pos: AtomicUsize::new(0),
            pending_pos: AtomicUsize::new(0),
            words: (0..size.div_ceil(4)).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    fn word(&self, offset: usize) -> &AtomicU32 {
        &self.words[(offset / 4) % self.words.len()]
    }

    /// Apply `f` to each byte of `len` at `offset`, with the word holding it.
    fn bytes(&self, offset: usize, len: usize, mut f: impl FnMut(usize, &AtomicU32, usize)) {
        for i in 0..len {
            let at = offset + i;
            f(i, &self.words[at / 4], at % 4);
        }
    }
}

// SAFETY: every byte of the ring is owned by the value (its atomics; not Clone), so an exclusive
// borrow of it reaches the ring alone.
unsafe impl ExclusiveRingbuf for HeapRing {}

// SAFETY: the size is fixed at construction; ranges inside it map to words of `words`, and
// indexing would panic rather than touch memory outside; the positions are fields.
unsafe impl RingbufMemory for HeapRing {
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
        &self.consumer_pos
    }
    fn producer_pos(&self) -> &AtomicUsize {
        &self.producer_pos
    }
    fn pending_pos(&self) -> &AtomicUsize {
        &self.pending_pos
    }
    fn len_word(&self, offset: usize) -> &AtomicU32 {
        self.word(offset & !7)
    }
    fn pg_off_word(&self, offset: usize) -> &AtomicU32 {
        self.word((offset & !7) + 4)
    }
    unsafe fn write(&self, offset: usize, src: &[u8]) {
        self.bytes(offset, src.len(), |i, word, at| {
            let mut b = word.load(R).to_ne_bytes();
            b[at] = src[i];
            word.store(u32::from_ne_bytes(b), R);
        });
    }
    unsafe fn read(&self, offset: usize, dst: &mut [u8]) {
        self.bytes(offset, dst.len(), |i, word, at| dst[i] = word.load(R).to_ne_bytes()[at]);
    }
    fn load_words(&self, offset: usize, dst: &mut [u8]) -> bool {
        let fits =
            offset % 4 == 0 && dst.len() % 4 == 0 && offset.checked_add(dst.len()).is_some_and(|e| e <= self.size());
        if fits {
            for (i, chunk) in dst.chunks_exact_mut(4).enumerate() {
                chunk.copy_from_slice(&self.words[offset / 4 + i].load(R).to_ne_bytes());
            }
        }
        fits
    }
}
