//! Unit tests of the forward ring: producer and consumer together over [`ModelRing`] and
//! [`Mapping`] memory.

extern crate std;

use std::cell::{Cell, RefCell};
use std::vec::Vec;

use crate::consumer::{ReadError, Scratch};
use crate::memory::{Area, LayoutError, Mapping, ModelRing, Position, RingMemory};
use crate::producer::{EventIdentity, Hooks, OutputError, PreemptPoint, Producer, ProducerConfig};
use crate::record::{
    sample_type, types, DecodeContext, Endian, Header, Lost, PidTid, Record, SampleCpu, SampleId, LOST_BODY_SIZE,
};
use crate::test_memory::{HeadLoads, LoadHook};
use crate::{split, split_with_hooks};

/// A record of `len` bytes: header {type 9, misc 0, size len}, then bytes `tag`, `tag+1`, ...
fn record(tag: u8, len: usize) -> Vec<u8> {
    let mut r = Header { type_: types::SAMPLE, misc: 0, size: len as u16 }.to_bytes(Endian::NATIVE).to_vec();
    r.extend((0..len - 8).map(|i| tag.wrapping_add(i as u8)));
    r
}

/// Read every available record as (header, bytes).
fn drain<M: RingMemory, T: crate::consumer::Trust>(c: &mut crate::consumer::Consumer<M, T>) -> Vec<(Header, Vec<u8>)> {
    let mut scratch = Scratch::new();
    let mut out = Vec::new();
    c.for_each(&mut scratch, |r| out.push((r.header, r.bytes.to_vec()))).unwrap();
    out
}

#[test]
fn fullest_state_is_data_size_minus_8_and_one_more_record_is_lost() {
    // The kernel's CIRC_SPACE keeps one byte free: with 8-byte records, at most size-8 unread
    // bytes. "Exactly full" (size bytes unread) is not a state the kernel allows.
    let mut ring = ModelRing::<16>::new().unwrap(); // 128 bytes
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    for i in 0..15 {
        p.output(&record(i, 8), &EventIdentity::ANONYMOUS).unwrap();
    }
    assert_eq!(c.available().unwrap(), 120);
    assert_eq!(p.output(&record(99, 8), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    assert_eq!(p.lost_pending(), 1);
    let got = drain(&mut c);
    assert_eq!(got.len(), 15);
    for (i, (_, bytes)) in got.iter().enumerate() {
        assert_eq!(bytes, &record(i as u8, 8));
    }
}

#[test]
fn record_ending_exactly_at_the_ring_end_is_zero_copy() {
    let mut buf = Aligned([0u8; 4096 + 64]);
    let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    let (p, mut c) = split(&mut map, ProducerConfig::default()).unwrap();
    p.output(&record(1, 32), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(drain(&mut c).len(), 1);
    p.output(&record(2, 32), &EventIdentity::ANONYMOUS).unwrap(); // occupies [32, 64)
    let mut scratch = [0xAAu8; 64];
    // SAFETY: a 1-byte view at offset 0 of the data area, only used for its address.
    let ring_ptr = unsafe { c.memory().view(Area::Data, 0, 1).unwrap().as_ptr() };
    let mut batch = c.batch().unwrap();
    let r = batch.next(&mut scratch).unwrap().unwrap();
    assert_eq!(r.offset, 32);
    assert_eq!(r.bytes, &record(2, 32)[..]);
    assert_eq!(r.bytes.as_ptr(), ring_ptr.wrapping_add(32), "contiguous record is a view into the ring");
    drop(batch);
    assert_eq!(c.tail(), 64);
    assert_eq!(scratch, [0xAA; 64], "scratch untouched");
}

#[test]
fn record_wrapping_the_end_is_reassembled_in_scratch() {
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.output(&record(1, 40), &EventIdentity::ANONYMOUS).unwrap();
    drain(&mut c);
    p.output(&record(7, 48), &EventIdentity::ANONYMOUS).unwrap(); // [40, 88): wraps at 64
    let got = drain(&mut c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, record(7, 48));
    assert_eq!(c.memory().position(Position::DataTail).load(crate::fences::LOCAL), 88);
}

#[test]
fn one_batch_across_the_wrap_views_every_contiguous_record_and_copies_only_the_straddling_one() {
    // Four laps of a 1 KiB data area, each read in one batch that crosses the end of the area:
    // the zero-copy fast path must stop at the end (the record across it is reassembled in
    // scratch) and resume after it, also when a record ends exactly at the end.
    let mut buf = Aligned([0u8; 4096 + 1024]);
    let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    let (p, mut c) = split(&mut map, ProducerConfig::default()).unwrap();
    c.configure(crate::consumer::ConsumerConfig::EVERY_BATCH);
    // SAFETY: a 1-byte view at offset 0 of the data area, only used for its address.
    let ring = unsafe { c.memory().view(Area::Data, 0, 1).unwrap().as_ptr() } as usize;
    let mut scratch = Scratch::new();
    let scratch_at = scratch.as_ptr() as usize;
    let mut tag = 0u8;
    let (mut copied, mut ended_at_the_end) = (0, 0);
    // Record sizes (8-byte steps) cycled until each batch reaches the end of the area: one that
    // ends exactly there (the first lap), then ones straddling it by various amounts.
    for (lap, sizes) in
        [[200usize, 216, 96, 40], [248, 256, 64, 24], [120, 136, 56, 72], [64, 64, 64, 88]].iter().enumerate()
    {
        // Start each lap in the area's second half, so that reaching its end fits the ring.
        if c.tail() % 1024 < 512 {
            p.output(&record(0, 512 - c.tail() % 1024), &EventIdentity::ANONYMOUS).unwrap();
            drain(&mut c);
        }
        let start = c.tail();
        let area_end = (start / 1024 + 1) * 1024;
        let mut want: Vec<Vec<u8>> = Vec::new();
        let mut end = start;
        while end < area_end {
            let r = record(tag, sizes[want.len() % 4]);
            tag = tag.wrapping_add(1);
            p.output(&r, &EventIdentity::ANONYMOUS).unwrap();
            end += r.len();
            want.push(r);
        }
        // Two more after the end, so the fast path has to resume.
        for _ in 0..2 {
            let r = record(tag, 16);
            tag = tag.wrapping_add(1);
            p.output(&r, &EventIdentity::ANONYMOUS).unwrap();
            want.push(r);
        }
        let mut batch = c.batch().unwrap();
        for (i, w) in want.iter().enumerate() {
            let r = batch.next(&mut scratch).unwrap().unwrap();
            assert_eq!(r.bytes, &w[..], "lap {lap}, record {i}");
            let (first, last) = (r.offset as usize % 1024, (r.offset as usize + w.len() - 1) % 1024);
            let at = r.bytes.as_ptr() as usize;
            if first <= last {
                assert_eq!(at, ring + first, "lap {lap}, record {i} at {first}: a view into the ring");
                ended_at_the_end += usize::from(last == 1023);
            } else {
                assert_eq!(at, scratch_at, "lap {lap}, record {i} across the end: copied");
                copied += 1;
            }
        }
        assert!(batch.next(&mut scratch).is_none());
        drop(batch);
        assert_eq!(c.tail() - start, want.iter().map(Vec::len).sum::<usize>());
    }
    // Every lap reaches the end of the area: by a record that ends there or one across it.
    assert_eq!((copied, ended_at_the_end), (3, 1), "three records straddled the end, one ended there");
}

#[test]
fn next_split_views_a_wrapped_record_as_two_slices_of_the_ring_and_copies_nothing() {
    // A 1 KiB data area: records of 200 bytes walk across its end at every fifth or sixth
    // record; each comes back as views into the ring (two when it wraps), never via scratch.
    let mut buf = Aligned([0u8; 4096 + 1024]);
    let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    let (p, mut c) = split(&mut map, ProducerConfig::default()).unwrap();
    c.configure(crate::consumer::ConsumerConfig::EVERY_BATCH);
    // SAFETY: a 1-byte view at offset 0 of the data area, only used for its address.
    let ring = unsafe { c.memory().view(Area::Data, 0, 1).unwrap().as_ptr() } as usize;
    let mut scratch = [0u8; 8]; // too small for any record: nothing may be copied
    let (mut wrapped, mut whole) = (0, 0);
    for tag in 0..40u8 {
        let want = record(tag, 200);
        p.output(&want, &EventIdentity::ANONYMOUS).unwrap();
        let mut batch = c.batch().unwrap();
        let r = batch.next_split(&mut scratch).unwrap().unwrap();
        assert_eq!([r.first, r.second].concat(), want, "record {tag}");
        assert_eq!(r.header.size, 200);
        let off = r.offset as usize % 1024;
        assert_eq!(r.first.as_ptr() as usize, ring + off, "record {tag}: a view where it starts");
        assert_eq!(r.first.len(), 200.min(1024 - off));
        if r.second.is_empty() {
            whole += 1;
        } else {
            assert_eq!(r.second.as_ptr() as usize, ring, "record {tag}: its rest viewed at the area's start");
            wrapped += 1;
        }
        assert!(batch.next_split(&mut scratch).is_none());
    }
    assert!(wrapped >= 7 && whole >= 30, "{wrapped} wrapped, {whole} whole");
}

#[test]
fn next_split_reads_batches_of_many_records_across_the_end_as_written() {
    // Records of 8 to 200 bytes, several batches of up to 900 bytes each lap of a 1 KiB area:
    // the contiguous fast path and the wrapping path alternate inside one batch, and every
    // record comes back whole, in order, each batch ending at the head.
    let mut buf = Aligned([0u8; 4096 + 1024]);
    let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    let (p, mut c) = split(&mut map, ProducerConfig::default()).unwrap();
    c.configure(crate::consumer::ConsumerConfig::EVERY_BATCH);
    let mut scratch = [0u8; 8];
    let (mut size, mut tag, mut wrapped) = (8usize, 0u8, 0);
    for _ in 0..60 {
        let mut want = std::vec::Vec::new();
        while want.iter().map(std::vec::Vec::len).sum::<usize>() + size <= 900 {
            let r = record(tag, size);
            p.output(&r, &EventIdentity::ANONYMOUS).unwrap();
            want.push(r);
            (tag, size) = (tag.wrapping_add(1), if size >= 200 { 8 } else { size + 24 });
        }
        let mut batch = c.batch().unwrap();
        for (i, w) in want.iter().enumerate() {
            let r = batch.next_split(&mut scratch).unwrap().unwrap();
            wrapped += usize::from(!r.second.is_empty());
            assert_eq!([r.first, r.second].concat(), *w, "record {i} of the batch");
        }
        assert!(batch.next_split(&mut scratch).is_none());
    }
    assert!(wrapped >= 20, "{wrapped} records wrapped the end");
}

#[test]
fn next_split_views_a_record_that_does_not_wrap_once() {
    // The fast path: one view per record that ends before the ring's end; the general path
    // (taken for a record that wraps) views the two parts, so a record that does not wrap costs
    // one call of `view`, never two.
    let ring = ModelRing::<128>::new().unwrap();
    let counted = HeadLoads::new(&ring);
    // SAFETY: the only producer of this ring, and its only consumer (one thread).
    let p = unsafe { Producer::new(&counted, ProducerConfig::default()) }.unwrap();
    // SAFETY: as above.
    let mut c = unsafe { crate::consumer::Consumer::trusted(&counted) }.unwrap();
    for tag in 0..10 {
        p.output(&record(tag, 48), &EventIdentity::ANONYMOUS).unwrap();
    }
    let mut scratch = Scratch::new();
    let mut batch = c.batch().unwrap();
    counted.views.set(0);
    let mut read = 0;
    while let Some(r) = batch.next_split(&mut scratch) {
        assert!(r.unwrap().second.is_empty());
        read += 1;
    }
    assert_eq!((read, counted.views.get()), (10, 10), "one view a record");
}

#[test]
fn next_split_makes_every_check_of_next() {
    // A header of size 0, two not a multiple of 8 (one shorter than a header) and one past the
    // head: the same typed errors as `next`, repeated on a second call (the batch stays at the
    // faulty record).
    for (size, expect) in [
        (0u16, ReadError::ZeroSize { position: 0 }),
        (4, ReadError::MisalignedSize { position: 0, size: 4 }),
        (12, ReadError::MisalignedSize { position: 0, size: 12 }),
        (64, ReadError::SizeBeyondHead { position: 0, size: 64, available: 16 }),
    ] {
        let ring = ModelRing::<16>::new().unwrap();
        let mut bytes = Header { type_: types::SAMPLE, misc: 0, size }.to_bytes(Endian::NATIVE).to_vec();
        bytes.extend([0u8; 8]);
        // SAFETY: the ring has no producer; the 16 bytes are inside its data area.
        unsafe { ring.write(Area::Data, 0, &bytes) };
        ring.position(Position::DataHead).store(16, crate::fences::LOCAL);
        // SAFETY: nothing writes the ring while it is read.
        let mut c = unsafe { crate::consumer::Consumer::trusted(&ring) }.unwrap();
        let mut batch = c.batch().unwrap();
        let mut scratch = Scratch::new();
        assert_eq!(batch.next_split(&mut scratch).unwrap().unwrap_err(), expect);
        assert_eq!(batch.next_split(&mut scratch).unwrap().unwrap_err(), expect);
    }
}

#[test]
fn scratch_too_small_for_a_wrapping_record_is_an_error_not_a_panic() {
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.output(&record(1, 40), &EventIdentity::ANONYMOUS).unwrap();
    drain(&mut c);
    p.output(&record(7, 48), &EventIdentity::ANONYMOUS).unwrap();
    let mut small = [0u8; 16];
    let mut batch = c.batch().unwrap();
    assert_eq!(batch.next(&mut small).unwrap().unwrap_err(), ReadError::ScratchTooSmall { size: 48, scratch: 16 });
}

#[test]
fn lost_is_counted_then_emitted_once_and_reset() {
    let mut ring = ModelRing::<16>::new().unwrap(); // 128
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let w = EventIdentity { id: 77, sample_id: None };
    p.output(&record(0, 64), &w).unwrap();
    p.output(&record(1, 56), &w).unwrap(); // 120 used
    for _ in 0..5 {
        assert_eq!(p.output(&record(2, 8), &w), Err(OutputError::NoSpace));
    }
    assert_eq!(p.lost_pending(), 5);
    assert_eq!(drain(&mut c).len(), 2);
    p.output(&record(3, 16), &w).unwrap();
    assert_eq!(p.lost_pending(), 0);
    let got = drain(&mut c);
    assert_eq!(got.len(), 2, "LOST, then the record");
    let (h, bytes) = &got[0];
    assert_eq!((h.type_, h.misc, h.size), (types::LOST, 0, 24));
    assert_eq!(u64::from_ne_bytes(bytes[8..16].try_into().unwrap()), 77, "id of the writer now");
    assert_eq!(u64::from_ne_bytes(bytes[16..24].try_into().unwrap()), 5);
    assert_eq!(got[1].1, record(3, 16));
    // Reset: the next write carries no LOST.
    p.output(&record(4, 8), &w).unwrap();
    assert_eq!(drain(&mut c).len(), 1);
}

#[test]
fn lost_record_carries_the_current_writers_sample_id_trailer() {
    let mut ring = ModelRing::<32>::new().unwrap(); // 256
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let st = sample_type::TID | sample_type::TIME | sample_type::CPU | sample_type::IDENTIFIER;
    let sid = SampleId {
        tid: Some(PidTid { pid: 10, tid: 11 }),
        time: Some(12345),
        cpu: Some(SampleCpu { cpu: 3, res: 0 }),
        identifier: Some(42),
        ..SampleId::default()
    };
    let w = EventIdentity { id: 42, sample_id: Some((st, sid)) };
    p.output(&record(0, 248), &w).unwrap();
    assert_eq!(p.output(&record(1, 8), &w), Err(OutputError::NoSpace));
    drain(&mut c);
    p.output(&record(2, 8), &w).unwrap();
    let got = drain(&mut c);
    let (h, bytes) = &got[0];
    assert_eq!(usize::from(h.size), LOST_BODY_SIZE + SampleId::size(st));
    assert_eq!(h.size, 24 + 32);
    let mut expect = [0u8; 56];
    let ctx = DecodeContext { sample_type: st, sample_id_all: true, ..DecodeContext::new(Endian::NATIVE) };
    Record::Lost(Lost { misc: 0, id: 42, lost: 1, sample_id: Some(sid) }).encode_in(&ctx, &mut expect).unwrap();
    assert_eq!(&bytes[..], &expect[..]);
    // Trailer layout: {pid, tid}, time, {cpu, res}, identifier.
    assert_eq!(&bytes[24..28], &10u32.to_ne_bytes());
    assert_eq!(&bytes[28..32], &11u32.to_ne_bytes());
    assert_eq!(&bytes[32..40], &12345u64.to_ne_bytes());
    assert_eq!(&bytes[40..44], &3u32.to_ne_bytes());
    assert_eq!(&bytes[48..56], &42u64.to_ne_bytes());
}

#[test]
fn lost_and_record_must_fit_together_or_both_are_dropped() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64: max 56 unread
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.output(&record(0, 56), &EventIdentity::ANONYMOUS).unwrap();
    assert!(p.output(&record(1, 8), &EventIdentity::ANONYMOUS).is_err());
    drain(&mut c);
    // LOST (24) + 40 = 64 > 56: dropped too, counter grows.
    assert_eq!(p.output(&record(2, 40), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    assert_eq!(p.lost_pending(), 2);
    p.output(&record(3, 32), &EventIdentity::ANONYMOUS).unwrap(); // 24 + 32 = 56 fits
    let got = drain(&mut c);
    assert_eq!(u64::from_ne_bytes(got[0].1[16..24].try_into().unwrap()), 2);
}

#[test]
fn bad_sizes_are_typed_errors_and_not_counted_as_lost() {
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, _c) = split(&mut ring, ProducerConfig::default()).unwrap();
    assert_eq!(p.output_begin(0, &EventIdentity::ANONYMOUS).err(), Some(OutputError::BadSize { size: 0 }));
    assert_eq!(p.output_begin(12, &EventIdentity::ANONYMOUS).err(), Some(OutputError::BadSize { size: 12 }));
    assert_eq!(p.output_begin(65536, &EventIdentity::ANONYMOUS).err(), Some(OutputError::TooLarge { size: 65536 }));
    assert_eq!(p.lost_pending(), 0);
    // A valid size that can never fit this ring is a drop, counted like a full ring.
    assert_eq!(p.output_begin(64, &EventIdentity::ANONYMOUS).err(), Some(OutputError::NoSpace));
    assert_eq!(p.lost_pending(), 1);
    assert_eq!(p.nest(), 0);
}

#[test]
fn a_handle_dropped_early_publishes_zero_filled_bytes_and_leaves_nest_at_zero() {
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let mut h = p.output_begin(24, &EventIdentity::ANONYMOUS).unwrap();
    h.write(&record(5, 24)[..12]).unwrap();
    assert_eq!(h.write(&[0; 13]).unwrap_err(), OutputError::PastReservation { requested: 13, remaining: 12 });
    drop(h);
    assert_eq!(p.nest(), 0);
    let got = drain(&mut c);
    assert_eq!(&got[0].1[..12], &record(5, 24)[..12]);
    assert_eq!(&got[0].1[12..], &[0u8; 12]);
}

/// Hooks that run one nested writer (and optionally deeper ones) at a chosen point, and record
/// every value of `data_head` seen at every point.
struct Inject {
    at: PreemptPoint,
    depth: u32,
    fired: Cell<u32>,
    heads: RefCell<Vec<usize>>,
}

impl Inject {
    fn new(at: PreemptPoint, depth: u32) -> Self {
        Inject { at, depth, fired: Cell::new(0), heads: RefCell::new(Vec::new()) }
    }
    fn observe<M: RingMemory>(&self, mem: &M) {
        self.heads.borrow_mut().push(mem.position(Position::DataHead).load(crate::fences::LOCAL));
    }
    fn run<M: RingMemory, H: Hooks<M>>(&self, at: PreemptPoint, p: &Producer<M, H>) {
        self.observe(p.memory());
        if at == self.at && self.fired.get() < self.depth {
            let level = self.fired.get() + 1;
            self.fired.set(level);
            // Nested writer `level`: tag 100 + level.
            let rec = record(100 + level as u8, 16);
            let mut h = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
            h.write(&rec[..8]).unwrap();
            h.write(&rec[8..]).unwrap();
            h.end();
        }
    }
}

impl<M: RingMemory> Hooks<M> for &Inject {
    fn preempt(&self, at: PreemptPoint, p: &Producer<M, Self>) {
        self.run(at, p)
    }
}

struct LegacyInject(Inject);
impl<M: RingMemory> Hooks<M> for &LegacyInject {
    const LEGACY_PUT_HANDLE: bool = true;
    fn preempt(&self, at: PreemptPoint, p: &Producer<M, Self>) {
        self.0.run(at, p)
    }
}

/// The records in ring order after `Inject` ran `levels` nested writers at `at` inside the
/// writer of `outer`. Nested writers that ran before the outer reservation come first: level 1
/// interrupts the outer, level 2 interrupts level 1 at the same point, ..., so the deepest
/// reserves first. After it, the outer record comes first, then each level, shallow first.
fn injected_order(at: PreemptPoint, outer: &[u8], levels: u32) -> Vec<Vec<u8>> {
    let nested = (1..=levels).map(|l| record(100 + l as u8, 16));
    if matches!(at, PreemptPoint::AfterNestIncrement | PreemptPoint::AfterHeadLoad) {
        nested.rev().chain([outer.to_vec()]).collect()
    } else {
        [outer.to_vec()].into_iter().chain(nested).collect()
    }
}

/// For the fast path and the general path (a watermark of 8 bytes: every record crosses it,
/// and the fast path's limit is refreshed after each reservation), every preemption point and
/// nesting depths 1–3: `write` the 32-byte record `outer` while `Inject` runs its nested
/// writers at the point. The point is passed, and the nested levels run, where
/// `passes(at, general)`. Checks that every record is published in the order
/// [`injected_order`] gives and that `data_head` never goes backwards.
fn with_a_nested_writer_at_every_point(
    passes: impl Fn(PreemptPoint, bool) -> bool,
    write: impl Fn(&Producer<&ModelRing<64>, &Inject>, &[u8], bool),
) {
    for (config, general) in
        [(ProducerConfig::default(), false), (ProducerConfig { watermark: 8, ..ProducerConfig::default() }, true)]
    {
        for at in PreemptPoint::ALL {
            for depth in 1..=3 {
                let mut ring = ModelRing::<64>::new().unwrap();
                let inject = Inject::new(at, depth);
                let (p, mut c) = split_with_hooks(&mut ring, config, &inject).unwrap();
                let outer = record(1, 32);
                write(&p, &outer, general);
                let fired = if passes(at, general) { depth } else { 0 };
                assert_eq!(inject.fired.get(), fired, "{at:?} depth {depth} general {general}: every nested level ran");
                assert_eq!(p.nest(), 0);
                let got: Vec<Vec<u8>> = drain(&mut c).into_iter().map(|(_, b)| b).collect();
                assert_eq!(got.len(), 1 + fired as usize, "{at:?} depth {depth}: all records published");
                assert_eq!(got, injected_order(at, &outer, fired), "{at:?} depth {depth} general {general}");
                let heads = inject.heads.borrow();
                assert!(heads.windows(2).all(|w| w[0] <= w[1]), "{at:?}: data_head went backwards: {heads:?}");
            }
        }
    }
}

#[test]
fn nested_writer_at_every_preemption_point_keeps_order_and_data_head_monotonic() {
    // Only the general path refreshes the fast path's limit.
    with_a_nested_writer_at_every_point(
        |at, general| general || at != PreemptPoint::FastPathRefresh,
        |p, outer, _| {
            let mut h = p.output_begin(32, &EventIdentity::ANONYMOUS).unwrap();
            h.write(&outer[..8]).unwrap();
            h.write(&outer[8..]).unwrap();
            h.end();
        },
    );
}

#[test]
fn batch_output_with_a_nested_writer_at_every_preemption_point_keeps_order_and_publishes_all() {
    // `BatchWriter::output` reserves without a writer of its own (the batch holds `nest`): an
    // interrupt's writer at any point of it, or of the batch's closing publish, must be neither
    // lost nor published early nor reordered. On the general path it falls back to a nested
    // writer. A whole record is copied without a `Handle` (no `InPayload`), and the fast path
    // enters no writer and refreshes no limit.
    with_a_nested_writer_at_every_point(
        |at, general| {
            at != PreemptPoint::InPayload
                && (general || !matches!(at, PreemptPoint::AfterNestIncrement | PreemptPoint::FastPathRefresh))
        },
        |p, outer, general| {
            let ((), _) = p.batch(|b| {
                b.output(outer, &EventIdentity::ANONYMOUS).unwrap();
                let head = b.memory().position(Position::DataHead).load(crate::fences::LOCAL);
                // Under the default watermark (256 bytes) nothing is published inside the batch;
                // the record crosses the 8-byte one and is published at once, with every nested
                // writer's record before it (the batch's intermediate publication).
                assert_eq!(head, if general { b.head() } else { 0 }, "general {general}");
            });
        },
    );
}

#[test]
fn batch_output_refusals_are_counted_and_reported_after_the_batch() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64-byte data area
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let ((), _) = p.batch(|b| {
        assert_eq!(b.output(&record(1, 12), &EventIdentity::ANONYMOUS), Err(OutputError::BadSize { size: 12 }));
        assert_eq!(b.lost_pending(), 0, "a caller bug is not a loss");
        b.output(&record(1, 40), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(b.output(&record(2, 40), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
        b.pause_output(true);
        assert_eq!(b.output(&record(3, 8), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
        b.pause_output(false);
        assert_eq!(b.lost_pending(), 2);
    });
    assert_eq!(drain(&mut c), [(got_header(40), record(1, 40))]);
    // The losses close the fast path: the next batched record reports them first.
    let ((), _) = p.batch(|b| b.output(&record(4, 16), &EventIdentity::ANONYMOUS).unwrap());
    let got = drain(&mut c);
    assert_eq!(got.iter().map(|(h, _)| h.type_).collect::<Vec<_>>(), [types::LOST, types::SAMPLE]);
    let mut expect = [0u8; 24];
    Record::Lost(Lost { misc: 0, id: 0, lost: 2, sample_id: None })
        .encode_in(&DecodeContext::new(Endian::NATIVE), &mut expect)
        .unwrap();
    assert_eq!(got[0].1, expect, "one LOST record counting both refusals");
    assert_eq!(got[1].1, record(4, 16));
    assert_eq!(p.lost_pending(), 0);
}

/// At `FastPathRefresh`, once: a nested writer whose record (of the given size) cannot fit
/// (counted as lost).
struct LoseOnRefresh(Cell<bool>, usize);
impl<M: RingMemory> Hooks<M> for &LoseOnRefresh {
    fn preempt(&self, at: PreemptPoint, p: &Producer<M, Self>) {
        if at == PreemptPoint::FastPathRefresh && self.0.replace(false) {
            assert_eq!(p.output(&record(9, self.1), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
        }
    }
}

#[test]
fn a_loss_counted_while_the_fast_path_reopens_is_reported_by_the_next_record() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64-byte data area
    let hook = LoseOnRefresh(Cell::new(false), 48);
    let (p, mut c) = split_with_hooks(&mut ring, ProducerConfig::default(), &hook).unwrap();
    // A loss closes the fast path: the next record takes the general path with its LOST.
    p.output(&record(1, 40), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(p.output(&record(2, 40), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    drain(&mut c);
    // This record reopens the fast path after its reservation; a nested writer drops one there.
    hook.0.set(true);
    p.output(&record(3, 16), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(p.lost_pending(), 1);
    let got = drain(&mut c);
    assert_eq!(got.iter().map(|(h, _)| h.type_).collect::<Vec<_>>(), [types::LOST, types::SAMPLE]);
    // The nested loss kept the fast path closed: the next record reports it first.
    p.output(&record(4, 16), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(p.lost_pending(), 0);
    let got = drain(&mut c);
    assert_eq!(got.iter().map(|(h, _)| h.type_).collect::<Vec<_>>(), [types::LOST, types::SAMPLE]);
    assert_eq!(got[1].1, record(4, 16));
}

#[test]
fn legacy_put_handle_exposes_a_decreasing_data_head() {
    // Seed 002's ordering: nest dropped to 0 before data_head is stored. An interrupt in that
    // window publishes its larger head; the interrupted writer then stores its older one.
    let mut ring = ModelRing::<64>::new().unwrap();
    let inject = LegacyInject(Inject::new(PreemptPoint::AfterNestDecrement, 1));
    let (p, _c) = split_with_hooks(&mut ring, ProducerConfig::default(), &inject).unwrap();
    p.output(&record(1, 32), &EventIdentity::ANONYMOUS).unwrap();
    let heads = inject.0.heads.borrow();
    assert!(heads.windows(2).any(|w| w[0] > w[1]), "legacy ordering must show a decrease: {heads:?}");
    // ... and the re-check repairs it.
    assert_eq!(p.memory().position(Position::DataHead).load(crate::fences::LOCAL), 48);
}

/// Legacy ordering (`LEGACY_PUT_HANDLE`), once: a nested writer in the outer writer's payload,
/// checking right after it that it left publishing to the outer writer.
struct LegacyNestedInPayload(Cell<bool>);
impl<M: RingMemory> Hooks<M> for &LegacyNestedInPayload {
    const LEGACY_PUT_HANDLE: bool = true;
    fn preempt(&self, at: PreemptPoint, p: &Producer<M, Self>) {
        if at == PreemptPoint::InPayload && self.0.replace(false) {
            p.output(&record(2, 16), &EventIdentity::ANONYMOUS).unwrap();
            let head = p.memory().position(Position::DataHead).load(crate::fences::LOCAL);
            assert_eq!((head, p.nest()), (0, 1), "an inner writer publishes nothing; the outer is still open");
        }
    }
}

#[test]
fn legacy_put_handle_still_publishes_only_from_the_outermost_writer() {
    // The legacy ordering differs from today's in when `nest` drops, not in who publishes: an
    // inner writer's `put_handle` only leaves; publishing its head would expose the outer
    // writer's record before its payload is written.
    let mut ring = ModelRing::<64>::new().unwrap();
    let hooks = LegacyNestedInPayload(Cell::new(true));
    let (p, mut c) = split_with_hooks(&mut ring, ProducerConfig::default(), &hooks).unwrap();
    let mut h = p.output_begin(32, &EventIdentity::ANONYMOUS).unwrap();
    let outer = record(1, 32);
    h.write(&outer[..8]).unwrap();
    h.write(&outer[8..]).unwrap();
    h.end();
    assert!(!hooks.0.get(), "the nested writer ran");
    assert_eq!(drain(&mut c).into_iter().map(|(_, b)| b).collect::<Vec<_>>(), [outer, record(2, 16)]);
}

#[test]
fn consumer_errors_name_a_head_behind_too_far_ahead_or_not_8_aligned() {
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.output(&record(1, 16), &EventIdentity::ANONYMOUS).unwrap();
    drain(&mut c);
    let head = p.memory().position(Position::DataHead);
    // `batch` and `available` name the same fault.
    head.store(8, crate::fences::LOCAL);
    assert_eq!(c.batch().err(), Some(ReadError::HeadBehindTail { head: 8, tail: 16 }));
    assert_eq!(c.available(), Err(ReadError::HeadBehindTail { head: 8, tail: 16 }));
    head.store(16 + 72, crate::fences::LOCAL);
    assert_eq!(c.batch().err(), Some(ReadError::HeadTooFarAhead { head: 88, tail: 16, data_size: 64 }));
    head.store(usize::MAX / 2, crate::fences::LOCAL);
    assert!(matches!(c.batch().err(), Some(ReadError::HeadTooFarAhead { .. })));
    head.store(16 + 13, crate::fences::LOCAL);
    assert_eq!(c.batch().err(), Some(ReadError::MisalignedHead { head: 29 }));
    assert_eq!(c.available(), Err(ReadError::MisalignedHead { head: 29 }));
    // Giving up keeps the tail 8-aligned.
    assert_eq!(c.skip_to_head(), 8);
    assert_eq!(c.tail(), 24);
    assert_eq!(c.memory().position(Position::DataTail).load(crate::fences::LOCAL), 24);
}

/// Write raw header bytes at ring offset `off` and publish `head`.
fn forge<M: RingMemory>(mem: &M, off: usize, header: Header, head: usize) {
    // SAFETY: test-only: no producer is writing; the range is inside the 64-byte area.
    unsafe { mem.write(Area::Data, off, &header.to_bytes(Endian::NATIVE)) };
    mem.position(Position::DataHead).store(head, crate::fences::LOCAL);
}

#[test]
fn consumer_errors_bad_record_sizes_stop_the_batch_without_consuming() {
    let h = |size| Header { type_: 9, misc: 0, size };
    for (size, head, expect) in [
        (0u16, 16usize, ReadError::ZeroSize { position: 0 }),
        (12, 16, ReadError::MisalignedSize { position: 0, size: 12 }),
        // Under 8 as well: a trusted ring's fast path must not take a 1-7-byte record (its
        // `len % 8 == 0` test; `len / 8 == 0` would let one through).
        (4, 16, ReadError::MisalignedSize { position: 0, size: 4 }),
        (24, 16, ReadError::SizeBeyondHead { position: 0, size: 24, available: 16 }),
        (65528, 56, ReadError::SizeBeyondHead { position: 0, size: 65528, available: 56 }),
    ] {
        let mut ring = ModelRing::<8>::new().unwrap();
        let (_p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
        forge(c.memory(), 0, h(size), head);
        let mut scratch = Scratch::new();
        {
            let mut batch = c.batch().unwrap();
            assert_eq!(batch.next(&mut scratch).unwrap().unwrap_err(), expect);
            // The same error again: the batch does not move past a fault, and does not loop.
            assert_eq!(batch.next(&mut scratch).unwrap().unwrap_err(), expect);
        }
        assert_eq!(c.tail(), 0, "nothing consumed past the fault");
        assert_eq!(c.skip_to_head(), head);
    }
}

/// Runs of records of one size, broken by others, across the end of the area: `next` and
/// `next_split` of a trusted consumer (which predict the next position over a run:
/// `stride.rs`) deliver every record as written, in order, and agree with an untrusted
/// consumer (which never predicts); the prediction is taken over the runs.
#[test]
fn predicted_positions_over_runs_of_one_size_are_the_records_positions() {
    let mut buf = Aligned([0u8; 4096 + 2048]);
    let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    let (p, mut c) = split(&mut map, ProducerConfig::default()).unwrap();
    c.configure(crate::consumer::ConsumerConfig::EVERY_BATCH);
    let mut u = crate::consumer::Consumer::untrusted(p.memory()).unwrap();
    let (mut seed, mut size, mut tag, mut predicted) = (0x9e37_79b9_u32, 8usize, 0u8, 0);
    let mut scratch = [0u8; 256];
    for round in 0..200 {
        let mut want = Vec::new();
        while want.iter().map(Vec::len).sum::<usize>() + size <= 1800 {
            let r = record(tag, size);
            p.output(&r, &EventIdentity::ANONYMOUS).unwrap();
            want.push(r);
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            tag = tag.wrapping_add(1);
            if (seed >> 16) % 16 == 0 {
                size = 8 + 8 * ((seed >> 8) as usize % 24);
            }
        }
        let mut got = Vec::new();
        let mut batch = c.batch().unwrap();
        if round % 2 == 0 {
            while let Some(r) = batch.next_split(&mut scratch) {
                let r = r.unwrap();
                got.push([r.first, r.second].concat());
            }
        } else {
            while let Some(r) = batch.next(&mut scratch) {
                got.push(r.unwrap().bytes.to_vec());
            }
        }
        predicted += batch.stride_predicted();
        drop(batch);
        assert_eq!(got, want, "round {round}");
        assert_eq!(drain(&mut u).into_iter().map(|(_, b)| b).collect::<Vec<_>>(), want, "round {round}");
    }
    assert!(predicted > 200, "{predicted} positions predicted in 200 batches");
}

#[test]
fn untrusted_consumer_copies_every_record_and_agrees_with_trusted() {
    let mut buf = Aligned([0; 4096 + 256]);
    let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
    let (p, _) = split(&mut map, ProducerConfig::default()).unwrap();
    let mut sent = Vec::new();
    let mut got = Vec::new();
    let mut c = crate::consumer::Consumer::untrusted(p.memory()).unwrap();
    for round in 0..40u8 {
        let len = 8 + 8 * usize::from(round % 7);
        let r = record(round, len);
        if p.output(&r, &EventIdentity::ANONYMOUS).is_ok() {
            sent.push(r);
        }
        if round % 3 == 0 {
            let mut scratch = Scratch::new();
            let scratch_ptr = scratch.as_ptr();
            c.for_each(&mut scratch, |r| {
                assert_eq!(r.bytes.as_ptr(), scratch_ptr, "untrusted reads always copy");
                got.push(r.bytes.to_vec());
            })
            .unwrap();
        }
    }
    drain(&mut c).into_iter().for_each(|(_, b)| got.push(b));
    assert_eq!(got, sent);
    assert_eq!(p.lost_pending(), 0);
}

#[repr(C, align(8))]
struct Aligned<const N: usize>([u8; N]);

#[test]
fn mapping_new_validates_layout_with_typed_errors() {
    let mut buf = Aligned([0u8; 4096 + 4096]);
    assert!(Mapping::new(&mut buf.0, 4096).is_ok());
    assert_eq!(Mapping::new(&mut buf.0[..4096 + 100], 4096).err(), Some(LayoutError::NotPowerOfTwo { size: 100 }));
    assert_eq!(Mapping::new(&mut buf.0[..4096 + 32], 4096).err(), Some(LayoutError::TooSmall { size: 32, min: 64 }));
    assert_eq!(Mapping::new(&mut buf.0[..2048], 1000).err(), Some(LayoutError::BadPageSize { page_size: 1000 }));
    let addr = buf.0[1..].as_ptr() as usize;
    assert_eq!(Mapping::new(&mut buf.0[1..4096 + 65], 4096).err(), Some(LayoutError::Misaligned { addr }));
    assert_eq!(ModelRing::<12>::new().err(), Some(LayoutError::NotPowerOfTwo { size: 96 }));
    assert_eq!(ModelRing::<4>::new().err(), Some(LayoutError::TooSmall { size: 32, min: 64 }));
}

#[test]
fn mapping_attach_reads_and_validates_data_offset_and_size() {
    let mut buf = Aligned([0u8; 4096 + 4096]);
    {
        let map = Mapping::new(&mut buf.0, 4096).unwrap();
        assert_eq!(map.data_offset(), 4096);
    }
    let ptr = buf.0.as_mut_ptr();
    // SAFETY: buf is live, aligned, 8192 bytes, and not otherwise accessed meanwhile.
    let map = unsafe { Mapping::attach(ptr, 8192) }.unwrap();
    assert_eq!(map.size(Area::Data), 4096);
    // A hostile data_size: past the mapping.
    buf.0[crate::page::offsets::DATA_SIZE..][..8].copy_from_slice(&8192u64.to_ne_bytes());
    // SAFETY: as above.
    let err = unsafe { Mapping::attach(buf.0.as_mut_ptr(), 8192) }.err();
    assert!(matches!(err, Some(LayoutError::OutOfMapping { .. })), "{err:?}");
    buf.0[crate::page::offsets::DATA_SIZE..][..8].copy_from_slice(&u64::MAX.to_ne_bytes());
    // SAFETY: as above.
    let err = unsafe { Mapping::attach(buf.0.as_mut_ptr(), 8192) }.err();
    assert!(err.is_some(), "{err:?}");
    // data_offset inside the control page.
    buf.0[crate::page::offsets::DATA_SIZE..][..8].copy_from_slice(&64u64.to_ne_bytes());
    buf.0[crate::page::offsets::DATA_OFFSET..][..8].copy_from_slice(&8u64.to_ne_bytes());
    // SAFETY: as above.
    let err = unsafe { Mapping::attach(buf.0.as_mut_ptr(), 8192) }.err();
    assert!(matches!(err, Some(LayoutError::OutOfMapping { .. })), "{err:?}");
}

#[test]
fn paused_ring_drops_and_counts_then_reports_lost_after_resume() {
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.pause_output(true);
    assert_eq!(p.output(&record(1, 8), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
    assert_eq!(p.output(&record(1, 8), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
    assert_eq!(p.nest(), 0);
    p.pause_output(false);
    p.output(&record(2, 8), &EventIdentity::ANONYMOUS).unwrap();
    let got = drain(&mut c);
    assert_eq!(got[0].0.type_, types::LOST);
    assert_eq!(u64::from_ne_bytes(got[0].1[16..24].try_into().unwrap()), 2);
    assert_eq!(got[1].1, record(2, 8));
}

#[test]
fn hostile_tail_never_lets_the_producer_overwrite_unread_data() {
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.output(&record(1, 64), &EventIdentity::ANONYMOUS).unwrap();
    p.output(&record(3, 56), &EventIdentity::ANONYMOUS).unwrap(); // 120 of 128: the cached tail says full
    let tail = p.memory().position(Position::DataTail);
    // Tail beyond head, tail far behind, tail wrapped: every one is "no space".
    for bad in [200usize, 120 + 8, usize::MAX / 2, 120usize.wrapping_sub(1000)] {
        tail.store(bad, crate::fences::LOCAL);
        assert_eq!(p.output(&record(2, 8), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace), "tail {bad}");
    }
    tail.store(0, crate::fences::LOCAL);
    let got = drain(&mut c);
    assert_eq!(got[0].1, record(1, 64), "unread records intact");
    assert_eq!(got[1].1, record(3, 56));
}

#[test]
fn a_batch_publishes_data_head_once_for_all_its_records() {
    let mut ring = ModelRing::<64>::new().unwrap();
    let inject = Inject::new(PreemptPoint::AfterNestIncrement, 0); // observes data_head only
    let (p, mut c) = split_with_hooks(&mut ring, ProducerConfig::default(), &inject).unwrap();
    let ((), _) = p.batch(|p| {
        for i in 0..5 {
            p.output(&record(i, 16), &EventIdentity::ANONYMOUS).unwrap();
        }
        assert_eq!(p.memory().position(Position::DataHead).load(crate::fences::LOCAL), 0, "nothing published yet");
    });
    assert_eq!(p.nest(), 0);
    assert_eq!(p.memory().position(Position::DataHead).load(crate::fences::LOCAL), 80);
    let got: Vec<Vec<u8>> = drain(&mut c).into_iter().map(|(_, b)| b).collect();
    assert_eq!(got, (0..5).map(|i| record(i, 16)).collect::<Vec<_>>());
}

#[test]
fn a_panic_inside_a_batch_still_publishes_its_records_and_leaves_nest_at_zero() {
    // The batch's closing publish runs from a drop guard: a writer that panics mid-batch must
    // not leave `nest` raised (which would stop all publication) or its records unpublished.
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let nest_inside = Cell::new(0);
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        p.batch(|p| {
            for i in 0..3 {
                p.output(&record(i, 16), &EventIdentity::ANONYMOUS).unwrap();
            }
            nest_inside.set(p.nest());
            panic!("the batch's writer bails out (expected by this test)");
        })
    }));
    assert!(unwound.is_err());
    assert_eq!(nest_inside.get(), 1, "the batch is one open writer");
    assert_eq!(p.nest(), 0);
    assert_eq!(p.memory().position(Position::DataHead).load(crate::fences::LOCAL), 48);
    let got: Vec<Vec<u8>> = drain(&mut c).into_iter().map(|(_, b)| b).collect();
    assert_eq!(got, (0..3).map(|i| record(i, 16)).collect::<Vec<_>>());
    // The producer still publishes afterwards.
    p.output(&record(9, 8), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(drain(&mut c), [(got_header(8), record(9, 8))]);
}

/// The header `record(_, len)` carries.
fn got_header(len: usize) -> Header {
    Header { type_: types::SAMPLE, misc: 0, size: len as u16 }
}

/// A 512-byte ring with the producer at position 800 (offset 288), nothing unread, and every
/// byte of the data area stale (0xA5, as if old records lay there).
fn ring_full_of_stale_bytes(ring: &mut ModelRing<64>) -> crate::split::Ends<'_, ModelRing<64>> {
    let (p, mut c) = split(ring, ProducerConfig::default()).unwrap();
    for i in 0..10 {
        p.output(&record(i, 80), &EventIdentity::ANONYMOUS).unwrap();
        drain(&mut c);
    }
    assert_eq!((p.head(), p.data_size()), (800, 512));
    // SAFETY: everything published is consumed and no writer is open: no one reads or writes
    // the data area now.
    unsafe { p.memory().write(Area::Data, 0, &[0xA5; 512]) };
    (p, c)
}

#[test]
fn bytes_a_writer_leaves_unwritten_read_as_zero_not_as_the_old_records_under_them() {
    // The README's promise: a short write never exposes stale ring contents. 248 bytes left
    // unwritten: several 64-byte zero chunks, across the end of the ring (offset 288 + 256).
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = ring_full_of_stale_bytes(&mut ring);
    let mut h = p.output_begin(256, &EventIdentity::ANONYMOUS).unwrap();
    h.write(&got_header(256).to_bytes(Endian::NATIVE)).unwrap();
    assert_eq!(h.remaining(), 248);
    drop(h);
    assert_eq!(p.nest(), 0);
    let got = drain(&mut c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, got_header(256));
    assert_eq!(&got[0].1[8..], &[0u8; 248][..]);
    // `end` zero-fills as drop does; the next record lands right after the first.
    let mut h = p.output_begin(24, &EventIdentity::ANONYMOUS).unwrap();
    h.write(&record(3, 24)[..16]).unwrap();
    h.end();
    let got = drain(&mut c);
    assert_eq!(got[0].1[..16], record(3, 24)[..16]);
    assert_eq!(got[0].1[16..], [0u8; 8]);
    assert_eq!(c.tail(), 800 + 256 + 24);
}

#[test]
fn skipped_bytes_read_as_zero_and_the_write_after_a_skip_lands_after_them() {
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = ring_full_of_stale_bytes(&mut ring);
    let mut h = p.output_begin(256, &EventIdentity::ANONYMOUS).unwrap();
    h.write(&got_header(256).to_bytes(Endian::NATIVE)).unwrap();
    assert_eq!(
        h.skip(249).unwrap_err(),
        crate::producer::OutputError::PastReservation { requested: 249, remaining: 248 }
    );
    h.skip(232).unwrap(); // offsets 296..528: across the end of the ring
    assert_eq!(h.remaining(), 16);
    h.write(&[7u8; 8]).unwrap();
    h.skip(8).unwrap(); // exactly what is left
    assert_eq!(h.remaining(), 0);
    h.end();
    let got = drain(&mut c);
    assert_eq!(got[0].0, got_header(256));
    assert_eq!(&got[0].1[8..240], &[0u8; 232][..]);
    assert_eq!(&got[0].1[240..248], &[7u8; 8]);
    assert_eq!(&got[0].1[248..], &[0u8; 8]);
}

#[test]
fn consumer_reads_a_ring_holding_exactly_data_size_unread_bytes_and_refuses_one_record_more() {
    // Head exactly one data size ahead of the tail is a full ring (the fullest a writer can
    // leave an overwrite ring); 8 bytes further, the oldest record was overwritten.
    let mut ring = ModelRing::<8>::new().unwrap(); // 64 bytes
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let h8 = Header { type_: 9, misc: 0, size: 8 };
    for off in (0..64).step_by(8) {
        forge(c.memory(), off, h8, 64);
    }
    assert_eq!(c.available(), Ok(64));
    let mut scratch = Scratch::new();
    {
        let mut batch = c.batch().unwrap();
        assert_eq!((batch.head(), batch.remaining()), (64, 64));
        batch.next(&mut scratch).unwrap().unwrap();
        assert_eq!((batch.head(), batch.remaining()), (64, 56));
    }
    assert_eq!(c.for_each(&mut scratch, |r| assert_eq!(r.header, h8)), Ok(7), "the other seven");
    assert_eq!(c.tail(), 64);
    let head = p.memory().position(Position::DataHead);
    head.store(64 + 72, crate::fences::LOCAL);
    let too_far = ReadError::HeadTooFarAhead { head: 136, tail: 64, data_size: 64 };
    assert_eq!(c.available(), Err(too_far));
    assert_eq!(c.batch().err(), Some(too_far));
    head.store(64 + 64, crate::fences::LOCAL);
    assert_eq!(c.available(), Ok(64));
    assert_eq!(c.batch().map(|b| b.remaining()).ok(), Some(64));
}

#[test]
fn consumer_tells_a_head_one_data_size_behind_from_one_further_behind() {
    let mut ring = ModelRing::<8>::new().unwrap();
    ring.position(Position::DataHead).store(128, crate::fences::LOCAL);
    ring.position(Position::DataTail).store(128, crate::fences::LOCAL);
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    assert_eq!(c.tail(), 128, "a consumer resumes at the stored tail");
    let head = p.memory().position(Position::DataHead);
    head.store(64, crate::fences::LOCAL);
    assert_eq!(c.batch().err(), Some(ReadError::HeadBehindTail { head: 64, tail: 128 }));
    head.store(56, crate::fences::LOCAL);
    assert_eq!(c.batch().err(), Some(ReadError::HeadTooFarAhead { head: 56, tail: 128, data_size: 64 }));
}

#[test]
fn consumer_refuses_a_stored_tail_that_is_not_a_multiple_of_8() {
    let ring = ModelRing::<8>::new().unwrap();
    ring.position(Position::DataTail).store(12, crate::fences::LOCAL);
    assert_eq!(
        crate::consumer::Consumer::untrusted(&ring).err(),
        Some(LayoutError::MisalignedPosition { position: 12 })
    );
    ring.position(Position::DataTail).store(24, crate::fences::LOCAL);
    assert_eq!(crate::consumer::Consumer::untrusted(&ring).map(|c| c.tail()).ok(), Some(24));
}

#[test]
fn for_each_returns_the_number_of_records_it_read() {
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    for i in 0..3 {
        p.output(&record(i, 16), &EventIdentity::ANONYMOUS).unwrap();
    }
    let mut scratch = Scratch::new();
    let mut bodies = Vec::new();
    assert_eq!(c.for_each(&mut scratch, |r| bodies.push(r.body().to_vec())), Ok(3));
    assert_eq!(bodies, (0..3).map(|i| record(i, 16)[8..].to_vec()).collect::<Vec<_>>());
    assert_eq!(c.for_each(&mut scratch, |_| ()), Ok(0));
}

#[test]
fn read_errors_print_what_went_wrong_with_the_values() {
    use std::string::ToString;
    let cases = [
        (ReadError::HeadBehindTail { head: 8, tail: 16 }, "data_head 0x8 is behind data_tail 0x10"),
        (
            ReadError::HeadTooFarAhead { head: 0x88, tail: 0x10, data_size: 0x40 },
            "data_head 0x88 is more than 0x40 bytes ahead of data_tail 0x10",
        ),
        (ReadError::ZeroSize { position: 0x20 }, "record at 0x20 has size 0"),
        (ReadError::MisalignedSize { position: 0x20, size: 12 }, "record at 0x20 has size 12, not a multiple of 8"),
        (
            ReadError::SizeBeyondHead { position: 0, size: 24, available: 16 },
            "record at 0x0 of size 24 extends past data_head (16 bytes published)",
        ),
        (
            ReadError::ScratchTooSmall { size: 48, scratch: 16 },
            "record of 48 bytes needs copying but scratch holds 16: pass a larger scratch (perfring::consumer::Scratch \
             holds any record)",
        ),
        (ReadError::MisalignedHead { head: 0xd }, "data_head 0xd is not a multiple of 8 (records are 8-byte aligned)"),
        (
            ReadError::LoadFailed { position: 0x20, len: 8 },
            "the ring's memory could not load 8 bytes of the record at 0x20: retry, or skip_to_head",
        ),
    ];
    for (err, text) in cases {
        assert_eq!(err.to_string(), text);
    }
}

#[test]
fn reserve_errors_print_what_went_wrong_with_the_values() {
    use std::string::ToString;
    assert_eq!(OutputError::BadSize { size: 12 }.to_string(), "record size 12 is not a positive multiple of 8");
    assert_eq!(OutputError::TooLarge { size: 65536 }.to_string(), "record size 65536 exceeds 65528");
    assert_eq!(OutputError::NoSpace.to_string(), "no space in the ring: record dropped and counted as lost");
    assert_eq!(OutputError::Paused.to_string(), "ring paused: record dropped and counted as lost");
    // (Kills `WriteError`'s Display replaced by nothing: the single run over all seven modules
    // found it missed, tests/MUTANTS-SCORE.md.)
    let write = crate::producer::OutputError::PastReservation { requested: 16, remaining: 8 };
    assert_eq!(write.to_string(), "write of 16 bytes does not fit: 8 left in the reservation");
}

#[test]
fn a_producer_resumed_over_a_full_ring_drops_rather_than_overwrite_unread_records() {
    // The space end cached at construction comes from the tail found then: a producer that
    // continues a ring holding 120 unread bytes of 128 has room for nothing.
    let mut ring = ModelRing::<16>::new().unwrap();
    ring.position(Position::DataHead).store(1000 + 120, crate::fences::LOCAL);
    ring.position(Position::DataTail).store(1000, crate::fences::LOCAL);
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    assert_eq!(p.head(), 1120);
    assert_eq!(p.output(&record(1, 8), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    assert_eq!((p.head(), p.lost_pending()), (1120, 1));
    assert_eq!(c.skip_to_head(), 120);
    p.output(&record(2, 8), &EventIdentity::ANONYMOUS).unwrap();
    let got = drain(&mut c);
    assert_eq!(got[0].0.type_, types::LOST);
    assert_eq!(got[1].1, record(2, 8));
}

/// The tail policy: by default the tail store waits until 4 KiB (at most a quarter of the data
/// area) is read and unreleased, and is made at once when a batch finds the ring empty and when
/// the consumer is dropped; `EVERY_BATCH` stores it after every batch (the behaviour before the policy,
/// and perf's). Nothing read is ever re-read, and nothing is lost, either way.
#[test]
fn the_tail_is_released_by_policy_when_caught_up_and_on_drop() {
    use crate::consumer::{ConsumerConfig, TailPolicy};
    let mut buf = std::vec![0u64; (4096 + 4096) / 8];
    // SAFETY: the u64 buffer viewed as bytes: same allocation, 8-aligned, length × 8.
    let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), buf.len() * 8) };
    let mut map = Mapping::new(bytes, 4096).unwrap();
    {
        let (p, mut c) = split(&mut map, ProducerConfig::default()).unwrap();
        assert_eq!(c.config().tail, TailPolicy::Deferred { bytes: 1024 }, "at most a quarter of 4 KiB");
        let stored = |c: &crate::consumer::Consumer<&Mapping<'_>>| {
            c.memory().position(Position::DataTail).load(crate::fences::LOCAL)
        };
        for i in 0..10 {
            p.output(&record(i, 64), &EventIdentity::ANONYMOUS).unwrap();
        }
        assert_eq!(drain(&mut c).len(), 10);
        assert_eq!((c.tail(), stored(&c)), (640, 0), "640 bytes read, under the deferral: not released");
        assert_eq!(drain(&mut c).len(), 0, "caught up");
        assert_eq!(stored(&c), 640, "an empty batch releases before the consumer waits");
        for i in 0..20 {
            p.output(&record(i, 64), &EventIdentity::ANONYMOUS).unwrap();
        }
        assert_eq!(drain(&mut c).len(), 20);
        assert_eq!(stored(&c), 640 + 1280, "1280 bytes read: a quarter passed, released");
        p.output(&record(1, 64), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(drain(&mut c).len(), 1);
        assert_eq!(stored(&c), 1920);
        assert!(c.release() && !c.release(), "an explicit release stores once");
        assert_eq!(stored(&c), 1984);
        c.configure(ConsumerConfig::EVERY_BATCH);
        p.output(&record(2, 64), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(drain(&mut c).len(), 1);
        assert_eq!(stored(&c), 2048, "every batch");
        c.configure(ConsumerConfig::default());
        p.output(&record(3, 64), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(drain(&mut c).len(), 1);
        assert_eq!(stored(&c), 2048);
    }
    // The consumer was dropped with 64 bytes unreleased: the drop stored them.
    assert_eq!(map.position(Position::DataTail).load(crate::fences::LOCAL), 2112);
    // A 64 KiB data area: the default's 4 KiB, not a quarter.
    let mut big = ModelRing::<8192>::new().unwrap();
    let (_, c) = split(&mut big, ProducerConfig::default()).unwrap();
    assert_eq!(c.config().tail, TailPolicy::Deferred { bytes: ConsumerConfig::DEFAULT_DEFERRAL });
    assert_eq!(ConsumerConfig::DEFAULT_DEFERRAL, 4096);
}

#[test]
fn a_failed_load_is_a_typed_error_never_a_stale_copy() {
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, _c) = split(&mut ring, ProducerConfig::default()).unwrap();
    p.output(&record(0xaa, 24), &EventIdentity::ANONYMOUS).unwrap();
    p.output(&record(0xbb, 24), &EventIdentity::ANONYMOUS).unwrap();
    let ring = p.memory();
    // A memory whose word loads fail from the `fail_from`-th call on (a debug probe losing the
    // target, a guest page the hypervisor refuses).
    let (loads, fail_from) = (Cell::new(0), Cell::new(0));
    let failing = |ring: &ModelRing<16>, area, offset, dst: &mut [u8]| {
        let n = loads.replace(loads.get() + 1);
        n < fail_from.get() && ring.load_words(area, offset, dst)
    };
    let mem = LoadHook { ring: *ring, load: &failing };
    // Loads: the first record's header, then its body in two parts (up to the area's end and
    // after it: 3 in all), then the second's header (fails).
    fail_from.set(3);
    let mut c = crate::consumer::Consumer::untrusted(&mem).unwrap();
    let mut scratch = Scratch::new();
    let mut got = Vec::new();
    let res = c.for_each(&mut scratch, |r| got.push(r.bytes.to_vec()));
    assert_eq!(res, Err(ReadError::LoadFailed { position: 24, len: 8 }));
    assert_eq!(got, [record(0xaa, 24)], "the record before the failure, intact");
    // The body's load fails (the header loaded): the scratch still holds the first record's
    // bytes, and they must not come back as the second record.
    // A second consumer from the same tail (the first has not stored its deferred tail).
    loads.set(0);
    fail_from.set(1);
    let mut c = crate::consumer::Consumer::untrusted(&mem).unwrap();
    let res = c.for_each(&mut scratch, |_| panic!("no record from a failed load"));
    assert_eq!(res, Err(ReadError::LoadFailed { position: 0, len: 24 }));
    assert_eq!(c.tail(), 0, "nothing consumed");
}

/// A writer that gives up before writing its header: the reservation is taken back when it is
/// the newest (nothing published, nothing counted), and otherwise becomes a LOST_SAMPLES record
/// of the reserved size (`lost` = 1) that the consumer steps over. Never a size-0 header that
/// stops the reader.
#[test]
fn a_reservation_given_up_before_its_header_never_stops_the_reader() {
    let mut ring = ModelRing::<64>::new().unwrap(); // 512 bytes
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let w = EventIdentity::ANONYMOUS;
    // Given up outright, and after half a header: taken back.
    drop(p.output_begin(24, &w).unwrap());
    let mut h = p.output_begin(32, &w).unwrap();
    h.write(&[9, 0, 0, 0]).unwrap();
    assert!(!h.end());
    assert_eq!((p.head(), c.available(), p.lost_pending()), (0, Ok(0), 0), "nothing reserved, published or lost");
    p.output(&record(1, 16), &w).unwrap();
    let got = drain(&mut c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, record(1, 16));

    // Given up with an interrupt's record reserved behind it: a LOST_SAMPLES in its place.
    let h = p.output_begin(32, &w).unwrap();
    p.output(&record(2, 24), &w).unwrap(); // the interrupt's writer, nested
    drop(h);
    let got = drain(&mut c);
    assert_eq!(got.len(), 2, "both records, then the reader goes on");
    assert_eq!(got[0].0, Header { type_: types::LOST_SAMPLES, misc: 0, size: 32 });
    assert_eq!(&got[0].1[8..], &[&1u64.to_ne_bytes()[..], &[0; 16]].concat()[..]);
    assert_eq!(got[1].1, record(2, 24));

    // A header written, the body not: zero-filled as before (the header says the size).
    let mut h = p.output_begin(24, &w).unwrap();
    h.write(&record(3, 24)[..8]).unwrap();
    drop(h);
    let got = drain(&mut c);
    assert_eq!((got.len(), &got[0].1[8..]), (1, &[0u8; 16][..]));
    p.output(&record(4, 8), &w).unwrap();
    assert_eq!(drain(&mut c).len(), 1);
}

/// The same for a backward (overwrite) ring, which never takes a reservation back: the reader
/// meets a LOST_SAMPLES record, not a size-0 header.
#[test]
fn a_backward_reservation_given_up_becomes_a_lost_samples_record() {
    use crate::backward::BackwardReader;
    let cfg = ProducerConfig { backward: true, overwrite: true, ..ProducerConfig::default() };
    let ring = ModelRing::<64>::new().unwrap();
    // SAFETY: the only producer of this ring.
    let p = unsafe { Producer::new(&ring, cfg) }.unwrap();
    let w = EventIdentity::ANONYMOUS;
    p.output(&record(1, 16), &w).unwrap();
    drop(p.output_begin(24, &w).unwrap());
    p.output(&record(2, 16), &w).unwrap();
    let mut reader = BackwardReader::new(&ring, false).unwrap();
    let mut got = Vec::new();
    reader.read(&mut Scratch::new(), |r| got.push((r.header, r.bytes.to_vec()))).unwrap();
    let types_sizes: Vec<_> = got.iter().map(|(h, _)| (h.type_, h.size)).collect();
    assert_eq!(types_sizes, [(types::SAMPLE, 16), (types::LOST_SAMPLES, 24), (types::SAMPLE, 16)]);
    assert_eq!(&got[1].1[8..16], &1u64.to_ne_bytes());
}

/// A forward overwrite ring does not take a reservation back either (the bytes it reserved may
/// already have overwritten the oldest record and hold part of a header): LOST_SAMPLES.
#[test]
fn a_forward_overwrite_reservation_given_up_becomes_a_lost_samples_record() {
    let ring = ModelRing::<64>::new().unwrap();
    // SAFETY: the only producer of this ring.
    let p = unsafe { Producer::new(&ring, ProducerConfig { overwrite: true, ..ProducerConfig::default() }) }.unwrap();
    let w = EventIdentity::ANONYMOUS;
    p.output(&record(1, 16), &w).unwrap();
    let mut h = p.output_begin(24, &w).unwrap();
    h.write(&[9, 0, 0, 0]).unwrap(); // half a header
    assert!(!h.end());
    assert_eq!(p.head(), 40, "the reservation stays");
    p.output(&record(2, 16), &w).unwrap();
    let mut c = crate::consumer::Consumer::untrusted(&ring).unwrap();
    let got = drain(&mut c);
    let types_sizes: Vec<_> = got.iter().map(|(h, _)| (h.type_, h.size)).collect();
    assert_eq!(types_sizes, [(types::SAMPLE, 16), (types::LOST_SAMPLES, 24), (types::SAMPLE, 16)]);
    assert_eq!(&got[1].1[8..], &[&1u64.to_ne_bytes()[..], &[0; 8]].concat()[..]);
}

/// `output` takes one whole record: a header whose size is not the record's length is refused,
/// with nothing written or counted (written, the consumer would read the bytes after it as the
/// next record, or stop at a size of 0).
#[test]
fn output_refuses_a_record_whose_header_size_is_not_its_length() {
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let w = EventIdentity::ANONYMOUS;
    let mut long = record(1, 8);
    long[6..8].copy_from_slice(&16u16.to_ne_bytes());
    let mut zero = record(1, 16);
    zero[6..8].copy_from_slice(&0u16.to_ne_bytes());
    assert_eq!(p.output(&long, &w), Err(OutputError::HeaderSize { header: 16, len: 8 }));
    assert_eq!(p.output(&zero, &w), Err(OutputError::HeaderSize { header: 0, len: 16 }));
    let (r, _) = p.batch(|b| b.output(&zero, &w));
    assert_eq!(r, Err(OutputError::HeaderSize { header: 0, len: 16 }));
    assert_eq!((p.head(), p.lost_pending(), c.available()), (0, 0, Ok(0)), "nothing written or counted");
    assert_eq!(
        std::string::ToString::to_string(&OutputError::HeaderSize { header: 0, len: 16 }),
        "the record's header says 0 bytes but the record has 16: set header.size to its length"
    );
    p.output(&record(2, 16), &w).unwrap();
    assert_eq!(drain(&mut c).len(), 1);
}

#[test]
fn the_producer_loads_data_tail_again_only_when_the_space_it_cached_runs_short() {
    // A reservation is checked against the space end computed from the last `data_tail` loaded
    // (`fits`); the consumer's word (a cache line the consumer's core writes) is loaded again
    // only when that check fails (`reload_space`), and the new space end is cached in turn.
    let ring = ModelRing::<64>::new().unwrap(); // 512 bytes: 511 of space
    let counted = HeadLoads::new(&ring);
    // SAFETY: the only producer of this ring.
    let p = unsafe { Producer::new(&counted, ProducerConfig::default()) }.unwrap();
    let w = EventIdentity::ANONYMOUS;
    assert_eq!(counted.tail_loads.get(), 1, "the constructor's");
    // 31 records, 496 bytes: the fast path to the watermark (256), the general path across it
    // (record 16), the fast path again. All fit by the first tail.
    for n in 0..31 {
        p.output(&record(n, 16), &w).unwrap();
    }
    assert_eq!(counted.tail_loads.get(), 1, "496 of 511 bytes, all by the space cached first");
    // 15 bytes left by the cache: loaded again, still full.
    assert_eq!(p.output(&record(31, 16), &w), Err(OutputError::NoSpace));
    assert_eq!(counted.tail_loads.get(), 2);
    // The consumer frees 256 bytes: the next reservation finds the cache short, loads the tail
    // once, and the records after it fit by the new space end (255 + 16 bytes left).
    ring.position(Position::DataTail).store(256, crate::fences::LOCAL);
    p.output(&record(32, 16), &w).unwrap(); // LOST (24 bytes) + 16
    assert_eq!(counted.tail_loads.get(), 3);
    for n in 33..40 {
        p.output(&record(n, 16), &w).unwrap();
    }
    assert_eq!((counted.tail_loads.get(), p.head()), (3, 648));
}

#[test]
fn a_nearly_empty_ring_gets_a_second_head_load_and_a_fuller_one_only_one() {
    // Pace: with fewer than `min_bytes` unread, `batch` spins and loads `data_head` once more
    // (the producer may have published meanwhile); with `min_bytes` or more, it loads it once.
    let pace = crate::consumer::Pace { min_bytes: 32, spins: 0 };
    for (unread, loads) in [(0usize, 2usize), (16, 2), (24, 2), (32, 1), (40, 1), (56, 1)] {
        let ring = ModelRing::<8>::new().unwrap();
        let counted = HeadLoads::new(&ring);
        let mut c = crate::consumer::Consumer::untrusted(&counted).unwrap();
        c.configure(crate::consumer::ConsumerConfig { tail: crate::consumer::TailPolicy::EveryBatch, pace });
        ring.position(Position::DataHead).store(unread, crate::fences::LOCAL);
        let before = counted.loads.get();
        let batch = c.batch().unwrap();
        assert_eq!(counted.loads.get() - before, loads, "{unread} bytes unread, min_bytes 32");
        drop(batch);
    }
}

/// What a batch holds back from the consumer: the bytes reserved and not yet published.
fn held<M: RingMemory, H: Hooks<M>>(p: &Producer<M, H>) -> usize {
    p.head() - p.memory().position(Position::DataHead).load(crate::fences::LOCAL)
}

#[test]
fn a_batch_never_holds_back_more_than_half_the_ring() {
    // A watermark of the whole ring: no stamp crossing forces a publication, only the half-ring
    // rule. 512-byte ring, 48-byte records: a batch of 40 writes far more than the ring holds
    // while the consumer keeps up.
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig { watermark: 512, ..ProducerConfig::default() }).unwrap();
    let mut read = 0;
    let (max_held, woke) = p.batch(|b| {
        let mut max_held = 0;
        for i in 0..40u8 {
            b.output(&record(i, 48), &EventIdentity::ANONYMOUS).unwrap();
            max_held = max_held.max(held(b));
            read += drain(&mut c).len();
        }
        max_held
    });
    assert!(max_held <= 256, "held back {max_held} bytes of a 512-byte ring");
    assert!(max_held > 200, "published too eagerly: at most {max_held} bytes held");
    assert!(woke, "1,920 bytes cross the 512-byte watermark");
    read += drain(&mut c).len();
    assert_eq!(read, 40, "every record read, in the batch or after it");
}

#[test]
fn a_batch_publishes_and_wakes_when_a_record_crosses_the_watermark() {
    // Watermark 64 on a 512-byte ring: the fifth 16-byte record ends past 64 bytes and moves the
    // stamp; the batch publishes and wakes then, not at its end.
    let hooks = crate::backward_tests::CountWakeups::default();
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, _c) =
        split_with_hooks(&mut ring, ProducerConfig { watermark: 64, ..ProducerConfig::default() }, &hooks).unwrap();
    let ((), woke) = p.batch(|b| {
        for i in 0..4u8 {
            b.output(&record(i, 16), &EventIdentity::ANONYMOUS).unwrap();
            assert_eq!((held(b), hooks.0.get()), (16 * (usize::from(i) + 1), 0), "record {i}: held, no wakeup");
        }
        b.output(&record(4, 16), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!((held(b), hooks.0.get()), (0, 1), "the record past 64 bytes is published and wakes");
        b.output(&record(5, 16), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!((held(b), hooks.0.get()), (16, 1));
    });
    assert!(woke, "the batch reports the wakeup it signalled");
    assert_eq!((held(&p), hooks.0.get()), (0, 1), "the end publishes the rest; no second wakeup");
}

#[test]
fn a_batch_inside_a_writer_publishes_nothing_until_the_writer_ends() {
    // A batch opened while another writer is open (a nested writer's batch): its
    // intermediate publications only leave and re-enter; the outer writer publishes all.
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig { watermark: 16, ..ProducerConfig::default() }).unwrap();
    let mut h = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
    h.write(&record(0, 16)).unwrap();
    let _ = p.batch(|b| {
        for i in 1..20u8 {
            b.output(&record(i, 16), &EventIdentity::ANONYMOUS).unwrap();
            assert_eq!(held(b), 16 * (usize::from(i) + 1), "nothing published under an open writer");
        }
    });
    assert_eq!(p.nest(), 1);
    h.end();
    assert_eq!(drain(&mut c).len(), 20);
}

#[test]
fn space_and_has_space_answer_without_counting_a_loss() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64-byte data area
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    assert_eq!(p.space(), 63, "CIRC_SPACE keeps one byte free");
    assert!(p.has_space(56, &EventIdentity::ANONYMOUS));
    assert!(!p.has_space(64, &EventIdentity::ANONYMOUS), "the kept byte");
    for bad in [0, 12, 65536 + 8] {
        assert!(!p.has_space(bad, &EventIdentity::ANONYMOUS), "{bad}: a size output refuses");
    }
    p.output(&record(1, 40), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(p.space(), 23);
    assert!(p.has_space(16, &EventIdentity::ANONYMOUS) && !p.has_space(24, &EventIdentity::ANONYMOUS));
    assert_eq!(p.lost_pending(), 0, "asking is not dropping");
    // A drop: the next reservation writes a LOST record (8 + 16 bytes without a trailer) first.
    assert_eq!(p.output(&record(2, 40), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    drain(&mut c);
    assert_eq!(p.space(), 63);
    assert!(p.has_space(32, &EventIdentity::ANONYMOUS) && !p.has_space(40, &EventIdentity::ANONYMOUS));
    let trailer = EventIdentity { id: 1, sample_id: Some((sample_type::ID | sample_type::TIME, SampleId::default())) };
    assert!(p.has_space(16, &trailer) && !p.has_space(32, &trailer), "the LOST record carries the trailer");
    p.pause_output(true);
    assert!(!p.has_space(8, &EventIdentity::ANONYMOUS), "paused: output would drop");
    p.pause_output(false);
    assert_eq!(p.lost_pending(), 1);
    p.output(&record(3, 32), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(p.space(), 63 - 56);
}

#[test]
fn space_of_an_overwrite_ring_is_the_whole_ring() {
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, _c) = split(&mut ring, ProducerConfig { overwrite: true, ..ProducerConfig::default() }).unwrap();
    for i in 0..10 {
        p.output(&record(i, 40), &EventIdentity::ANONYMOUS).unwrap();
    }
    assert_eq!(p.space(), 64);
    assert!(p.has_space(56, &EventIdentity::ANONYMOUS) && !p.has_space(64, &EventIdentity::ANONYMOUS));
}

#[test]
fn a_batch_inside_a_batch_keeps_the_outer_batchs_limit() {
    // Watermark of the whole ring, so only the batch limit bounds the fast path. A batch opened
    // inside another (by a nested writer) publishes nothing itself; when it ends, the outer
    // batch's limit applies again.
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, mut c) = split(&mut ring, ProducerConfig { watermark: 512, ..ProducerConfig::default() }).unwrap();
    let mut read = 0;
    let (max_held, _) = p.batch(|outer| {
        let mut max_held = 0;
        for i in 0..12u8 {
            outer.output(&record(i, 48), &EventIdentity::ANONYMOUS).unwrap();
            if i == 2 {
                // Three records from 144: the third passes the outer batch's limit (256) and
                // takes the general path, whose refresh sets the fast path's end by the inner
                // batch's own limit (400); the outer batch must get its limit back.
                let _ = p.batch(|inner| {
                    for _ in 0..3 {
                        inner.output(&record(100, 48), &EventIdentity::ANONYMOUS).unwrap();
                    }
                });
            } else {
                max_held = max_held.max(held(outer));
            }
            read += drain(&mut c).len();
        }
        max_held
    });
    assert!(max_held <= 256, "held back {max_held} bytes of a 512-byte ring");
    read += drain(&mut c).len();
    assert_eq!(read, 15);
}

#[test]
fn a_loss_inside_a_batch_keeps_the_fast_path_closed() {
    // The batch limit lowers the fast path's end; a loss counted meanwhile (here: a refused
    // record of a full ring) must still send the next record down the general path, which
    // writes the LOST record first.
    let mut ring = ModelRing::<8>::new().unwrap(); // 64-byte data area
    let (p, mut c) = split(&mut ring, ProducerConfig { watermark: 64, ..ProducerConfig::default() }).unwrap();
    let ((), _) = p.batch(|b| {
        b.output(&record(1, 24), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(b.output(&record(2, 48), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    });
    drain(&mut c);
    let ((), _) = p.batch(|b| b.output(&record(3, 16), &EventIdentity::ANONYMOUS).unwrap());
    let types_read: Vec<u32> = drain(&mut c).iter().map(|(h, _)| h.type_).collect();
    assert_eq!(types_read, [types::LOST, types::SAMPLE]);
}

#[test]
fn a_loss_while_a_batch_lowers_the_fast_paths_end_keeps_it_closed() {
    // Watermark 64 on a 64-byte ring (above half of it): opening the batch lowers the fast
    // path's end to 32; a nested writer drops a record just before that store.
    let mut ring = ModelRing::<8>::new().unwrap();
    let hook = LoseOnRefresh(Cell::new(true), 64);
    let (p, mut c) =
        split_with_hooks(&mut ring, ProducerConfig { watermark: 64, ..ProducerConfig::default() }, &hook).unwrap();
    let ((), _) = p.batch(|b| b.output(&record(1, 16), &EventIdentity::ANONYMOUS).unwrap());
    assert!(!hook.0.get(), "the nested writer ran");
    let got: Vec<u32> = drain(&mut c).iter().map(|(h, _)| h.type_).collect();
    assert_eq!(got, [types::LOST, types::SAMPLE], "the loss is reported before the batch's record");
}

#[test]
fn a_backward_batch_holds_back_exactly_up_to_half_the_ring() {
    // A backward ring has no fast path: every batched record takes the general path, which
    // publishes before the batch would hold more than half the data area, and not before.
    let mut ring = ModelRing::<64>::new().unwrap(); // 512 bytes
    let config = ProducerConfig { backward: true, watermark: 512, ..ProducerConfig::default() };
    let (p, _c) = split(&mut ring, config).unwrap();
    let held_back = |b: &Producer<&ModelRing<64>>| {
        b.memory().position(Position::DataHead).load(crate::fences::LOCAL).wrapping_sub(b.head())
    };
    let (max_held, _) = p.batch(|b| {
        let mut max_held = 0;
        for i in 0..6u8 {
            b.output(&record(i, 64), &EventIdentity::ANONYMOUS).unwrap();
            max_held = max_held.max(held_back(b));
        }
        max_held
    });
    assert_eq!(max_held, 256, "four 64-byte records held, the fifth published first");
}

#[test]
fn a_batch_reports_a_wakeup_signalled_inside_it_and_one_at_its_end() {
    // One wakeup at a crossing record (published at once), a second at the end: a nested
    // writer (not the batch's own output) crossed the stamp again, so the batch's closing
    // publication wakes too. The batch reports that it woke either way.
    let hooks = crate::backward_tests::CountWakeups::default();
    let mut ring = ModelRing::<64>::new().unwrap();
    let (p, _c) =
        split_with_hooks(&mut ring, ProducerConfig { watermark: 64, ..ProducerConfig::default() }, &hooks).unwrap();
    let ((), woke) = p.batch(|b| {
        for i in 0..5u8 {
            b.output(&record(i, 16), &EventIdentity::ANONYMOUS).unwrap();
        }
        assert_eq!(hooks.0.get(), 1, "the fifth record crossed 64 bytes");
        Producer::output(b, &record(9, 64), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(hooks.0.get(), 1, "a nested writer inside the batch does not wake");
    });
    assert_eq!(hooks.0.get(), 2, "the batch's end woke for the nested writer's crossing");
    assert!(woke);
}
