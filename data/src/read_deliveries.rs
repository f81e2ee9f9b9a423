//! perf's delivery of a `PERF_SAMPLE_READ` sample's counters (`session.c:deliver_sample_value`):
//! each counter to the event its id belongs to, with the period since that id's previous value
//! ([`ReadDelivery`]).

use perfring::record::{sample_type as st, EventRecord};

use crate::attribution::Events;

/// One counter of a `PERF_SAMPLE_READ` sample, delivered as perf delivers it
/// (`session.c:deliver_sample_value`): to the event its id belongs to, with the period since
/// that id's previous value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadDelivery {
    /// The event the counter's id belongs to (index into the attrs).
    pub event: usize,
    /// The counter's id.
    pub id: u64,
    /// The counter's value in this sample.
    pub value: u64,
    /// `value` minus the value this id had in the previous sample that carried it (0 before the
    /// first): the period perf gives the sample it delivers for this counter.
    pub period: u64,
}

/// The last `PERF_SAMPLE_READ` value of each registered id (perf's `sid->period`), kept by
/// the id's slot in the event set's id table ([`EventSet::id_slot`]): one load and one store
/// per counter, no map. Each slot holds `(id, value)`, so that when the id table moves into
/// larger storage (pipe mode: ids registered as attrs arrive) the values follow their ids to
/// their new slots ([`follow`](Self::follow)); the table only ever grows, so a capacity of its
/// own different from the id table's says that it moved.
#[derive(Debug, Default)]
pub(crate) struct ReadValueTable {
    /// By slot: the id whose value it holds (0: none yet) and that value.
    slots: Vec<(u64, u64)>,
}

impl ReadValueTable {
    /// Lay the values out for `events`' id table as it is now (a no-op unless it moved).
    #[inline(always)]
    pub(crate) fn follow(&mut self, events: &Events) {
        let capacity = events.set().id_capacity();
        if self.slots.len() == capacity {
            return;
        }
        let old = core::mem::replace(&mut self.slots, vec![(0, 0); capacity]);
        for (id, value) in old.into_iter().filter(|&(id, _)| id != 0) {
            if let Some((slot, _)) = events.id_slot(id) {
                if let Some(s) = self.slots.get_mut(slot) {
                    *s = (id, value);
                }
            }
        }
    }

    /// Store `value` as `id`'s last (at `slot`, its slot) and return the period since the
    /// previous one (from 0 for the first, as perf's `sid->period` starts).
    #[inline]
    pub(crate) fn replace(&mut self, slot: usize, id: u64, value: u64) -> u64 {
        let Some(s) = self.slots.get_mut(slot) else { return value };
        let previous = if s.0 == id { s.1 } else { 0 };
        *s = (id, value);
        value.wrapping_sub(previous)
    }
}

/// The deliveries of `record` into `out` (cleared first): for a SAMPLE whose event samples
/// `PERF_SAMPLE_READ`, per counter whose id an event lists, the period since that id's
/// previous value (kept in `table`); none with a period of 0. A SAMPLE whose READ block does not
/// fit delivers nothing, as one perf cannot parse.
pub(crate) fn deliver<'a>(
    record: &impl EventRecord<'a>,
    events: &Events,
    table: &mut ReadValueTable,
    out: &mut Vec<ReadDelivery>,
) {
    out.clear();
    let Ok((_, layout)) = record.attribution() else { return };
    if layout.attr().sample_type & st::READ == 0 {
        return;
    }
    let Ok(Some(values)) = record.sample().and_then(|v| v.read()) else { return };
    table.follow(events);
    for counter in values.counters() {
        let Some(id) = counter.id else { continue };
        let Some((slot, event)) = events.id_slot(id) else { continue };
        let period = table.replace(slot, id, counter.value);
        if period != 0 {
            out.push(ReadDelivery { event, id, value: counter.value, period });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfring::record::Endian;

    /// A counter's period is from its id's previous value, and the values follow their ids
    /// when the id table moves into larger storage (pipe mode registers ids as attrs arrive).
    #[test]
    fn read_values_follow_their_ids_when_the_id_table_grows() {
        let attr = perfring::record::Attr {
            sample_type: perfring::record::sample_type::IDENTIFIER | perfring::record::sample_type::READ,
            ..Default::default()
        };
        let mut events = Events::new(Endian::NATIVE);
        let event = events.add_event(&attr).unwrap();
        for id in 1..=3 {
            events.add_id(event, id).unwrap();
        }
        let mut table = ReadValueTable::default();
        let period = |table: &mut ReadValueTable, events: &Events, id: u64, value: u64| {
            table.follow(events);
            let (slot, e) = events.id_slot(id).expect("a registered id");
            assert_eq!(e, event);
            table.replace(slot, id, value)
        };
        assert_eq!(period(&mut table, &events, 1, 100), 100, "the first value counts from 0, as perf's");
        assert_eq!(period(&mut table, &events, 2, 40), 40);
        assert_eq!(period(&mut table, &events, 1, 130), 30);
        let capacity = events.set().id_capacity();
        for id in 4..200 {
            events.add_id(event, id).unwrap();
        }
        assert!(events.set().id_capacity() > capacity, "the table grew");
        assert_eq!(period(&mut table, &events, 1, 150), 20, "id 1's value moved with it");
        assert_eq!(period(&mut table, &events, 2, 40), 0);
        assert_eq!(period(&mut table, &events, 3, 7), 7);
        assert_eq!(period(&mut table, &events, 199, 9), 9);
        // A counter that went backwards (a reset) wraps as perf's u64 subtraction does.
        assert_eq!(period(&mut table, &events, 1, 149), u64::MAX);
    }
}
