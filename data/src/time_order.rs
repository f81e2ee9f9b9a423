//! perf's delivery order (`ordered_events.c`): records with a time queued by round, delivered
//! stably sorted by time at each FINISHED_ROUND; the round's records held in one store.

use std::collections::VecDeque;

use perfring::record::{Endian, Header};

use crate::loc::{Buf, Loc};

/// The round buffer of time order. A record waiting for its turn is copied into `store` behind
/// a [`Stub`] (what its `Loc` needs besides the bytes); the queue and the pending list hold
/// store positions, so sorting moves 16 bytes per record and the round's memory is its bytes
/// and 16 + 24 bytes a record.
#[derive(Debug)]
pub(crate) struct Order {
    /// Each queued or pending record: its stub, its bytes, the data that follows it.
    pub(crate) store: Vec<u8>,
    /// Timed kernel records not yet delivered: (time, store position). Positions grow with
    /// arrival (compaction keeps their order), so sorting by the pair is perf's stable sort.
    pub(crate) queue: Vec<(u64, usize)>,
    /// Store positions of the records to deliver, in order.
    pub(crate) pending: VecDeque<usize>,
    /// perf's `next_flush`: a round's end delivers the queued records up to this time.
    pub(crate) next_flush: u64,
    /// perf's `max_timestamp`: the largest time queued so far.
    pub(crate) max_time: u64,
    /// Bytes of the queued records, stubs included (kept as they come and go).
    pub(crate) live: usize,
    /// The file's byte order (the stored records' headers are read in it).
    pub(crate) endian: Endian,
}

/// What a stored record's `Loc` needs besides its bytes, in native order before them: its
/// offset (tagged) and its event. Its header is read from its bytes again (in the file's
/// order). Only kernel records with a time and FINISHED_ROUND are stored, and neither carries
/// data after it (only AUXTRACE and HEADER_TRACING_DATA do, which have no time and go out
/// uncopied), so a stored record is its header's size.
pub(crate) struct Stub;

impl Stub {
    pub(crate) const SIZE: usize = 16;

    /// The stub of `loc` (offset tagged).
    pub(crate) fn write(store: &mut Vec<u8>, loc: &Loc, offset: u64) {
        let mut b = [0u8; Self::SIZE];
        b[..8].copy_from_slice(&offset.to_ne_bytes());
        // (Events are counted by the file's attrs: far fewer than u32::MAX.)
        let event = loc.event.and_then(|e| u32::try_from(e).ok()).unwrap_or(u32::MAX);
        b[8..12].copy_from_slice(&event.to_ne_bytes());
        store.extend_from_slice(&b);
    }

    /// The `Loc` of the record stored at `at` (in `endian`), and the end of its bytes.
    pub(crate) fn read(store: &[u8], at: usize, endian: Endian) -> (Loc, usize) {
        let b = store.get(at..at + Self::SIZE).unwrap_or_default();
        let offset = u64::from_ne_bytes(b.get(..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]));
        let event = u32::from_ne_bytes(b.get(8..12).and_then(|b| b.try_into().ok()).unwrap_or([0xff; 4]));
        let start = at + Self::SIZE;
        let header = Header::parse(store.get(start..).unwrap_or_default(), endian).unwrap_or(Header {
            type_: 0,
            misc: 0,
            size: 0,
        });
        let rec = start..start + header.size as usize;
        let event = (event != u32::MAX).then_some(event as usize);
        let end = rec.end;
        (Loc { buf: Buf::Store, trailing: end..end, rec, offset, header, event }, end)
    }
}

impl Order {
    pub(crate) fn new(endian: Endian) -> Order {
        Order {
            store: Vec::new(),
            queue: Vec::new(),
            pending: VecDeque::new(),
            next_flush: 0,
            max_time: 0,
            live: 0,
            endian,
        }
    }

    /// Deliver the queued records with a time up to `limit`, in time order (stable).
    pub(crate) fn flush(&mut self, limit: u64) {
        self.queue.sort(); // (the keys are unique; the stable sort finds the per-CPU runs a round is made of)
        let n = self.queue.partition_point(|&(t, _)| t <= limit);
        for (_, at) in self.queue.drain(..n) {
            let (_, end) = Stub::read(&self.store, at, self.endian);
            self.live -= end - at;
            self.pending.push_back(at);
        }
    }

    /// With nothing pending, move the queued records' bytes to the front of the store, in
    /// place, once the delivered records' bytes are at least half the queued ones' (and 64 KiB):
    /// each compaction moves no more than twice what was delivered since the last, and the
    /// store stays within ~1.5 times the queued bytes (the queue carries over from round to
    /// round).
    pub(crate) fn compact(&mut self) {
        let dead = self.store.len() - self.live;
        if dead < (1 << 16) || dead < self.live / 2 {
            return;
        }
        // Moved in the queue's order, positions stay consistent with arrival among equal
        // times (the queue is time-sorted records, then later arrivals; or arrival order).
        // That is safe when every queued record lies past where the queued bytes will end
        // (the usual case: the records carried over are the last round's); otherwise they are
        // moved in store order, which positions only ever move down in.
        let first = self.queue.iter().map(|&(_, at)| at).min().unwrap_or(0);
        if first < self.live {
            self.queue.sort_unstable_by_key(|&(_, at)| at);
        }
        let mut to = 0;
        for (_, at) in &mut self.queue {
            let (_, end) = Stub::read(&self.store, *at, self.endian);
            self.store.copy_within(*at..end, to);
            (*at, to) = (to, to + (end - *at));
        }
        self.store.truncate(to);
    }
}
