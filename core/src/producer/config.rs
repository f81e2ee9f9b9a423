//! How a producer writes ([`ProducerConfig`]) and who is writing now ([`EventIdentity`]).

use crate::record::SampleId;

/// How a producer writes: direction and overwrite are two independent settings, as in the kernel
/// (`attr.write_backward`, and whether the mapping is writable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProducerConfig {
    /// Write records at decreasing addresses (`attr.write_backward`): each reservation is
    /// `head - size`, and `data_head` publishes the decreasing counter.
    pub backward: bool,
    /// Never read `data_tail`; overwrite the oldest data (a read-only mapping,
    /// `rb->overwrite`). Otherwise the producer respects the consumer and drops (counts) records
    /// that do not fit.
    pub overwrite: bool,
    /// Byte watermark for wakeups (`attr.wakeup_watermark` with `attr.watermark`); 0 means the
    /// kernel's default of half the data area. Values above the data size are clamped to it.
    pub watermark: usize,
    /// Wake every this many samples (`attr.wakeup_events` without `attr.watermark`), counted by
    /// [`Handle::count_sample`](super::Handle::count_sample); 0 turns event-count wakeups off.
    pub wakeup_events: u32,
}

/// Who is writing now: the event's `id` and its `sample_id` trailer, used for the
/// `PERF_RECORD_LOST` a reservation may have to prepend (the kernel uses the *current* event's
/// id and context, not the one whose records were lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventIdentity {
    /// `event->id` of the writing event.
    pub id: u64,
    /// `Some((sample_type, values))` when the event has `attr.sample_id_all`: the trailer's
    /// layout and values (pid/tid, time *now*, ids, cpu).
    pub sample_id: Option<(u64, SampleId)>,
}

impl EventIdentity {
    /// A writer with id 0 and no `sample_id` trailer.
    pub const ANONYMOUS: EventIdentity = EventIdentity { id: 0, sample_id: None };
}
