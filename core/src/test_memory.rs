//! A test memory: a ring whose word loads go through a hook, so a test can act in the middle of
//! a reader's copy (the peer overwriting what is being read) or make the memory fail (a probe
//! that lost the target). Every other call goes to the ring.

use crate::memory::{Area, Position, RingMemory};

/// What [`LoadHook`] calls instead of the ring's `load_words`: the ring and the load's
/// arguments in, whether it copied out.
pub(crate) type Load<'a, M> = &'a dyn Fn(&M, Area, usize, &mut [u8]) -> bool;

/// `ring`, with [`RingMemory::load_words`] replaced by `load` (which gets the ring).
pub(crate) struct LoadHook<'a, M: RingMemory> {
    pub(crate) ring: &'a M,
    pub(crate) load: Load<'a, M>,
}

// SAFETY: forwards every call to `ring`, which upholds the contract; `load` gets the ring and
// the caller's range, and the tests' hooks either forward it or copy nothing and return false
// (any write a hook makes stays inside the area it names, and runs on the test's one thread).
unsafe impl<M: RingMemory> RingMemory for LoadHook<'_, M> {
    fn size(&self, area: Area) -> usize {
        self.ring.size(area)
    }
    fn position(&self, p: Position) -> &crate::loom::AtomicUsize {
        self.ring.position(p)
    }
    fn page_word(&self, offset: usize) -> &crate::loom::AtomicU32 {
        self.ring.page_word(offset)
    }
    fn paused(&self) -> &crate::loom::AtomicBool {
        self.ring.paused()
    }
    fn write_gen(&self) -> &crate::loom::AtomicUsize {
        self.ring.write_gen()
    }
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract.
        unsafe { self.ring.write(area, offset, src) }
    }
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract.
        unsafe { self.ring.read(area, offset, dst) }
    }
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        (self.load)(self.ring, area, offset, dst)
    }
    unsafe fn view(&self, area: Area, offset: usize, len: usize) -> Option<&[u8]> {
        // SAFETY: the caller upholds `view`'s contract.
        unsafe { self.ring.view(area, offset, len) }
    }
}

/// `ring`, counting the calls of [`RingMemory::position`] for `data_head` (each is one load of
/// it by a reader) in `loads` and for `data_tail` (each is one load of it by a producer) in
/// `tail_loads`, and the calls of [`RingMemory::view`] in `views`; every call goes to the ring.
pub(crate) struct HeadLoads<'a, M: RingMemory> {
    pub(crate) ring: &'a M,
    pub(crate) loads: core::cell::Cell<usize>,
    pub(crate) tail_loads: core::cell::Cell<usize>,
    pub(crate) views: core::cell::Cell<usize>,
}

impl<'a, M: RingMemory> HeadLoads<'a, M> {
    /// `ring`, nothing counted yet.
    pub(crate) fn new(ring: &'a M) -> Self {
        let zero = core::cell::Cell::new(0);
        HeadLoads { ring, loads: zero.clone(), tail_loads: zero.clone(), views: zero }
    }
}

// SAFETY: forwards every call to `ring`, which upholds the contract.
unsafe impl<M: RingMemory> RingMemory for HeadLoads<'_, M> {
    fn size(&self, area: Area) -> usize {
        self.ring.size(area)
    }
    fn position(&self, p: Position) -> &crate::loom::AtomicUsize {
        match p {
            Position::DataHead => self.loads.set(self.loads.get() + 1),
            Position::DataTail => self.tail_loads.set(self.tail_loads.get() + 1),
            _ => {}
        }
        self.ring.position(p)
    }
    fn page_word(&self, offset: usize) -> &crate::loom::AtomicU32 {
        self.ring.page_word(offset)
    }
    fn paused(&self) -> &crate::loom::AtomicBool {
        self.ring.paused()
    }
    fn write_gen(&self) -> &crate::loom::AtomicUsize {
        self.ring.write_gen()
    }
    unsafe fn write(&self, area: Area, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract.
        unsafe { self.ring.write(area, offset, src) }
    }
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract.
        unsafe { self.ring.read(area, offset, dst) }
    }
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        self.ring.load_words(area, offset, dst)
    }
    unsafe fn view(&self, area: Area, offset: usize, len: usize) -> Option<&[u8]> {
        self.views.set(self.views.get() + 1);
        // SAFETY: the caller upholds `view`'s contract.
        unsafe { self.ring.view(area, offset, len) }
    }
}
