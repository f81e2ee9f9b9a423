//! The id table of an [`EventSet`](super::EventSet): which event an id belongs to, found by a
//! hash probe over the caller's storage, as perf keeps its ids (`evlist->heads`).

/// One id → event entry of an [`EventSet`](super::EventSet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IdEntry {
    pub(super) id: u64,
    pub(super) event: u32,
}

impl IdEntry {
    /// An unused slot, for filling storage arrays (`[IdEntry::EMPTY; N]`).
    pub const EMPTY: IdEntry = IdEntry { id: 0, event: 0 };
    /// The sample id.
    pub const fn id(&self) -> u64 {
        self.id
    }
    /// The index of its event.
    pub const fn event(&self) -> usize {
        self.event as usize
    }
}

/// The slots of an id table that are used: all of them up to 2^32 (the range `home` maps onto).
#[inline(always)]
pub(super) fn table_len(table: &[IdEntry]) -> usize {
    table.len().min(u32::MAX as usize)
}

/// The first slot to look at for `id` in a table of `len` ≤ 2^32 slots: the id mixed by a
/// multiplicative hash (kernel ids count up, so neighbours must land apart), its high 32 bits
/// scaled onto `0..len` by a multiply and a shift (no division).
#[inline(always)]
pub(super) fn home(id: u64, len: usize) -> usize {
    let mixed = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    ((mixed * len as u64) >> 32) as usize
}

/// [`lookup`] past a first slot `at` that held another id: the slots after it, in
/// turn (wrapping), until `id` (its event), an empty slot (`None`, or event 0 for id 0) or
/// every slot looked at (`None`, or event 0 for id 0: a full table has no empty slot).
///
/// ([`insert`] walks the same slots with its own loop. One probe serving both — "the slot of
/// `id` or the first empty one" — ran the same instructions but slower in `make bench-decode`;
/// BENCHMARKS.md, "Decoding", has the figures.)
#[inline(always)]
fn probe(table: &[IdEntry], id: u64, at: usize) -> Option<usize> {
    match probe_slot(table, id, at) {
        Some(slot) => table.get(slot).map(IdEntry::event),
        // (For id 0 the first empty slot matched above: this is a full table.)
        None => (id == 0).then_some(0),
    }
}

/// The slot of `id` past a first slot `at` that held another id: the slots after it, in turn
/// (wrapping), until `id`'s (its index) or an empty one, or every slot looked at (`None`).
/// [`probe`] and [`EventSet::id_slot`] walk with it.
#[inline(always)]
pub(super) fn probe_slot(table: &[IdEntry], id: u64, mut at: usize) -> Option<usize> {
    let len = table_len(table);
    for _ in 1..len {
        at += 1;
        if at == len {
            at = 0;
        }
        let e = table.get(at)?;
        if e.id == id {
            return Some(at);
        }
        if e.id == 0 {
            return None;
        }
    }
    None
}

/// `EventSet::lookup` over `table`: the event of `id`, and the first event for id 0.
#[inline(always)]
pub(super) fn lookup(table: &[IdEntry], id: u64) -> Option<usize> {
    let len = table_len(table);
    // No slot at all (empty storage): id 0 still goes to the first event.
    if len == 0 {
        return (id == 0).then_some(0);
    }
    let at = home(id, len);
    debug_assert!(at < table.len());
    // SAFETY: `home` gives `(mixed * len) >> 32` with `mixed < 2^32`, so `at < len`, and `len`
    // (`table_len`) is at most `table.len()`, not 0 here: `at` is a slot of `table`.
    let e = unsafe { table.get_unchecked(at) };
    if e.id == id {
        return Some(e.event());
    }
    if e.id == 0 {
        return None;
    }
    probe(table, id, at)
}

/// Put `entry` in `table`: at the slot of its id if it is there (its previous event
/// returned), else at the first empty slot from its home; `None` when there is none (full).
pub(super) fn insert(table: &mut [IdEntry], entry: IdEntry) -> Option<Option<usize>> {
    let len = table_len(table);
    let mut at = home(entry.id, len);
    for _ in 0..len {
        let Some(slot) = table.get_mut(at) else { break };
        if slot.id == entry.id {
            return Some(Some(core::mem::replace(&mut slot.event, entry.event) as usize));
        }
        if slot.id == 0 {
            *slot = entry;
            return Some(None);
        }
        at += 1;
        if at == len {
            at = 0;
        }
    }
    None
}
