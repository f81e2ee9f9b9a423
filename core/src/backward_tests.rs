//! Unit tests of backward and overwrite rings, pause, and wakeups.

extern crate std;

use std::cell::Cell;
use std::vec::Vec;

use crate::backward::BackwardReader;
use crate::consumer::ReadError;
use crate::consumer::Scratch;
use crate::memory::{ModelRing, RingMemory};
use crate::producer::{EventIdentity, Hooks, OutputError, Producer, ProducerConfig};
use crate::record::{types, Endian, Header};
use crate::split;

const OVERWRITE_BACKWARD: ProducerConfig =
    ProducerConfig { backward: true, overwrite: true, watermark: 0, wakeup_events: 0 };

fn record(seq: u32, len: usize) -> Vec<u8> {
    let mut r = Header { type_: types::SAMPLE, misc: 0, size: len as u16 }.to_bytes(Endian::NATIVE).to_vec();
    r.extend((0..len - 8).map(|i| (seq as u8).wrapping_mul(7).wrapping_add(i as u8)));
    r
}

fn read_all<M: RingMemory>(
    r: &mut BackwardReader<M>,
) -> (Vec<Vec<u8>>, Result<crate::backward::ReadSummary, ReadError>) {
    let mut scratch = Scratch::new();
    let mut out = Vec::new();
    let res = r.read(&mut scratch, |rec| out.push(rec.bytes.to_vec()));
    (out, res)
}

/// The oracle: the newest records whose sizes add up to at most `size`, newest first.
fn newest_fitting(written: &[Vec<u8>], size: usize) -> Vec<Vec<u8>> {
    let mut total = 0;
    written
        .iter()
        .rev()
        .take_while(|r| {
            total += r.len();
            total <= size
        })
        .cloned()
        .collect()
}

#[test]
fn backward_ring_wrapped_more_than_three_times_returns_exactly_the_newest_complete_records_newest_first() {
    let mut ring = ModelRing::<32>::new().unwrap(); // 256 bytes
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    let mut written = Vec::new();
    for seq in 0..60u32 {
        let r = record(seq, 8 + 8 * (seq as usize % 5)); // 8..40 bytes, ~1440 bytes = 5.6 wraps
        p.output(&r, &EventIdentity::ANONYMOUS).unwrap();
        written.push(r);
    }
    assert!(written.iter().map(Vec::len).sum::<usize>() > 3 * 256);
    assert_eq!(p.lost_pending(), 0, "overwrite mode never drops");
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let (got, res) = read_all(&mut reader);
    let summary = res.unwrap();
    assert!(summary.wrapped);
    assert_eq!(got, newest_fitting(&written, 256));
    // Nothing new since: an empty read.
    let (again, res) = read_all(&mut reader);
    assert!(again.is_empty() && res.unwrap().records == 0);
    // Two more: exactly those two, newest first.
    let (a, b) = (record(100, 16), record(101, 24));
    p.output(&a, &EventIdentity::ANONYMOUS).unwrap();
    p.output(&b, &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(read_all(&mut reader).0, [b, a]);
}

#[test]
fn a_resumed_reader_delivers_only_what_was_written_since_the_earlier_ones_read() {
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    let (a, b, c) = (record(1, 16), record(2, 24), record(3, 8));
    p.output(&a, &EventIdentity::ANONYMOUS).unwrap();
    let mut first = BackwardReader::new(p.memory(), false).unwrap();
    assert_eq!(read_all(&mut first).0, [a]);
    let prev = first.prev();
    assert_ne!(prev, 0, "the head moved");
    p.output(&b, &EventIdentity::ANONYMOUS).unwrap();
    p.output(&c, &EventIdentity::ANONYMOUS).unwrap();
    let mut resumed = BackwardReader::resume(p.memory(), false, prev).unwrap();
    assert_eq!(resumed.prev(), prev);
    assert_eq!(read_all(&mut resumed).0, [c.clone(), b.clone()], "b and c only, newest first");
    // A new reader (prev 0) reads everything still there.
    assert_eq!(read_all(&mut BackwardReader::new(p.memory(), false).unwrap()).0.len(), 3);
}

#[test]
fn backward_ring_not_yet_wrapped_stops_at_the_zeroed_area() {
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    let mut written = Vec::new();
    for seq in 0..5 {
        written.push(record(seq, 24));
        p.output(written.last().unwrap(), &EventIdentity::ANONYMOUS).unwrap();
    }
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let (got, res) = read_all(&mut reader);
    assert!(!res.unwrap().wrapped);
    written.reverse();
    assert_eq!(got, written);
}

#[test]
fn pause_drops_and_counts_in_backward_mode_and_lost_is_met_just_before_the_next_record() {
    // kernel/events/ring_buffer.c: a paused ring counts drops in both directions; the first write after
    // resume prepends PERF_RECORD_LOST at the lower address of its reservation, so reading
    // newest-first meets LOST first, then that record.
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    p.output(&record(1, 16), &EventIdentity::ANONYMOUS).unwrap();
    p.pause_output(true);
    for _ in 0..3 {
        assert_eq!(p.output(&record(2, 16), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
    }
    assert_eq!(p.lost_pending(), 3);
    p.pause_output(false);
    p.output(&record(3, 16), &EventIdentity::ANONYMOUS).unwrap();
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let (got, res) = read_all(&mut reader);
    res.unwrap();
    assert_eq!(got.len(), 3);
    let lost = Header::parse(&got[0], Endian::NATIVE).unwrap();
    assert_eq!(lost.type_, types::LOST);
    assert_eq!(u64::from_ne_bytes(got[0][16..24].try_into().unwrap()), 3);
    assert_eq!(got[1], record(3, 16));
    assert_eq!(got[2], record(1, 16));
}

#[test]
fn a_writer_open_during_the_read_is_refused_not_returned_torn() {
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    p.output(&record(1, 16), &EventIdentity::ANONYMOUS).unwrap();
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let handle = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(read_all(&mut reader).1, Err(ReadError::WriterActive));
    drop(handle);
}

#[test]
fn without_pause_a_record_overwritten_during_the_read_is_reported_as_overrun() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64 bytes
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    for seq in 0..4 {
        p.output(&record(seq, 16), &EventIdentity::ANONYMOUS).unwrap(); // ring full: 4 × 16
    }
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let mut scratch = Scratch::new();
    let mut got = Vec::new();
    // While the reader walks (newest first), the producer writes over the oldest records.
    let res = reader.read(&mut scratch, |r| {
        got.push(r.bytes.to_vec());
        if got.len() == 1 {
            p.output(&record(9, 32), &EventIdentity::ANONYMOUS).unwrap();
        }
    });
    assert_eq!(got, [record(3, 16), record(2, 16)], "records still intact are returned");
    assert!(matches!(res, Err(ReadError::Overrun { .. })), "{res:?}");
}

#[test]
fn backward_ring_over_a_writable_mapping_respects_the_tail_and_reports_lost() {
    // Direction and overwrite are independent: backward + non-overwrite checks
    // CIRC_SPACE(tail, head) and drops (counts) when full.
    let cfg = ProducerConfig { backward: true, overwrite: false, ..ProducerConfig::default() };
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, _c) = split(&mut ring, cfg).unwrap();
    for seq in 0..3 {
        p.output(&record(seq, 16), &EventIdentity::ANONYMOUS).unwrap();
    }
    assert_eq!(p.output(&record(3, 16), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    let mut reader = BackwardReader::new(p.memory(), true).unwrap();
    assert_eq!(read_all(&mut reader).0, [record(2, 16), record(1, 16), record(0, 16)]);
    p.output(&record(4, 16), &EventIdentity::ANONYMOUS).unwrap();
    let (got, _) = read_all(&mut reader);
    assert_eq!(Header::parse(&got[0], Endian::NATIVE).unwrap().type_, types::LOST);
    assert_eq!(got[1], record(4, 16));
}

#[derive(Default)]
pub(crate) struct CountWakeups(pub(crate) Cell<u32>);
impl<M: RingMemory> Hooks<M> for &CountWakeups {
    fn wakeup(&self, _: &Producer<M, Self>) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn wakeup_when_bytes_since_the_stamp_exceed_the_watermark_strictly() {
    // rb->watermark = 64: `head - wakeup > watermark` → wakeup += watermark, delivered at P6.
    let hooks = CountWakeups::default();
    let mut ring = ModelRing::<32>::new().unwrap();
    let cfg = ProducerConfig { watermark: 64, ..ProducerConfig::default() };
    let (p, mut c) = crate::split_with_hooks(&mut ring, cfg, &hooks).unwrap();
    let mut woke = Vec::new();
    for _ in 0..12 {
        woke.push(p.output(&record(0, 16), &EventIdentity::ANONYMOUS).unwrap());
        c.skip_to_head();
    }
    // Heads 16, 32, 48, 64 (= watermark, not >), 80 (> 64: wake, stamp 64), ..., 144 (> 128).
    let expect: Vec<bool> = (1..=12).map(|i| i == 5 || i == 9).collect();
    assert_eq!(woke, expect);
    assert_eq!(hooks.0.get(), 2);
}

#[test]
fn watermark_stamp_advances_by_one_watermark_per_reservation_and_catches_up_later() {
    // A record larger than the watermark moves the stamp by one watermark only.
    let mut ring = ModelRing::<64>::new().unwrap(); // 512
    let cfg = ProducerConfig { watermark: 32, ..ProducerConfig::default() };
    let (p, mut c) = split(&mut ring, cfg).unwrap();
    assert!(p.output(&record(0, 200), &EventIdentity::ANONYMOUS).unwrap(), "200 > 32: wake, stamp 32");
    c.skip_to_head();
    assert!(p.output(&record(0, 8), &EventIdentity::ANONYMOUS).unwrap(), "208 - 32 > 32: wake again, stamp 64");
    assert!(p.output(&record(0, 8), &EventIdentity::ANONYMOUS).unwrap(), "216 - 64 > 32: stamp 96");
}

#[test]
fn default_watermark_is_half_the_data_area() {
    let mut ring = ModelRing::<16>::new().unwrap(); // 128: watermark 64
    let (p, mut c) = split(&mut ring, ProducerConfig::default()).unwrap();
    let woke: Vec<bool> = (0..5)
        .map(|_| {
            let w = p.output(&record(0, 16), &EventIdentity::ANONYMOUS).unwrap();
            c.skip_to_head();
            w
        })
        .collect();
    assert_eq!(woke, [false, false, false, false, true]);
}

#[test]
fn wakeup_events_wakes_on_every_nth_sample_and_side_band_records_do_not_count() {
    let mut ring = ModelRing::<512>::new().unwrap(); // 4096: watermark 2048, out of reach
    let cfg = ProducerConfig { wakeup_events: 3, ..ProducerConfig::default() };
    let (p, mut c) = split(&mut ring, cfg).unwrap();
    let mut woke = Vec::new();
    for i in 0..9 {
        let mut h = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
        h.write(&record(i, 16)).unwrap();
        if i % 3 != 2 {
            h.count_sample(); // samples: i = 0, 1, 3, 4, 6, 7
        }
        woke.push(h.end());
        c.skip_to_head();
    }
    // Third sample is i = 3, sixth is i = 7.
    assert_eq!(woke, [false, false, false, true, false, false, false, true, false]);
}

#[test]
fn only_the_outermost_writer_wakes() {
    let mut ring = ModelRing::<32>::new().unwrap();
    let cfg = ProducerConfig { wakeup_events: 1, ..ProducerConfig::default() };
    let (p, _c) = split(&mut ring, cfg).unwrap();
    let mut outer = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
    outer.write(&record(1, 16)).unwrap();
    let mut inner = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
    inner.write(&record(2, 16)).unwrap();
    inner.count_sample();
    assert!(!inner.end(), "a nested writer never wakes");
    outer.count_sample();
    assert!(outer.end(), "the outermost writer delivers the wakeup");
}

/// Hooks that run one nested 16-byte writer right after the outer writer's reservation.
struct NestAfterReserve(Cell<bool>, Cell<u32>);
impl<M: RingMemory> Hooks<M> for &NestAfterReserve {
    fn preempt(&self, at: crate::producer::PreemptPoint, p: &Producer<M, Self>) {
        if at == crate::producer::PreemptPoint::AfterReserve && self.0.get() {
            self.0.set(false);
            p.output(&record(9, 16), &EventIdentity::ANONYMOUS).unwrap();
        }
    }
    fn wakeup(&self, _: &Producer<M, Self>) {
        self.1.set(self.1.get() + 1);
    }
}

#[test]
fn watermark_stamp_never_runs_ahead_after_a_nested_crossing() {
    // Watermark 64. The outer writer reserves [48, 56); before its watermark check an interrupt
    // writes [56, 72), crossing 64: stamp 64 > the outer's head 56. The kernel's unsigned
    // comparison would now advance the stamp on every reservation (a wakeup per record).
    let hooks = NestAfterReserve(Cell::new(false), Cell::new(0));
    let mut ring = ModelRing::<64>::new().unwrap(); // 512
    let cfg = ProducerConfig { watermark: 64, ..ProducerConfig::default() };
    let (p, mut c) = crate::split_with_hooks(&mut ring, cfg, &hooks).unwrap();
    for _ in 0..6 {
        p.output(&record(0, 8), &EventIdentity::ANONYMOUS).unwrap(); // head 48
    }
    hooks.0.set(true);
    p.output(&record(1, 8), &EventIdentity::ANONYMOUS).unwrap(); // outer [48,56), inner [56,72)
    assert_eq!(hooks.1.get(), 1, "one crossing, one wakeup");
    c.skip_to_head();
    // 72 .. 128: no crossing of 128 yet, so no wakeup for these 7 records.
    for _ in 0..7 {
        p.output(&record(2, 8), &EventIdentity::ANONYMOUS).unwrap();
    }
    assert_eq!(hooks.1.get(), 1, "no wakeup storm after the nested crossing");
    p.output(&record(3, 8), &EventIdentity::ANONYMOUS).unwrap(); // head 136 > 64 + 64
    assert_eq!(hooks.1.get(), 2);
}

/// Hooks that write `n` nested 48-byte records at the outer writer's first payload write.
struct Burst(Cell<u32>);
impl<M: RingMemory> Hooks<M> for &Burst {
    fn preempt(&self, at: crate::producer::PreemptPoint, p: &Producer<M, Self>) {
        if at == crate::producer::PreemptPoint::InPayload && self.0.get() > 0 {
            let n = self.0.replace(0);
            for i in 0..n {
                let _ = p.output(&record(50 + i, 48), &EventIdentity::ANONYMOUS);
            }
        }
    }
}

#[test]
fn overwrite_ring_refuses_nested_records_that_the_open_writer_would_overwrite() {
    // 128-byte overwrite ring. The outer 40-byte writer is interrupted by a burst of three 48-byte
    // records: 40 + 48 = 88 bytes in flight fit, 40 + 48 + 48 = 136 > 128 do not: the second and
    // third nested records would alias
    // bytes the outer writer has yet to write. It is dropped and counted, and every record the
    // reader returns is intact.
    let burst = Burst(Cell::new(3));
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, _c) = crate::split_with_hooks(&mut ring, OVERWRITE_BACKWARD, &burst).unwrap();
    let mut h = p.output_begin(40, &EventIdentity::ANONYMOUS).unwrap();
    let outer = record(1, 40);
    h.write(&outer[..8]).unwrap();
    h.write(&outer[8..]).unwrap();
    drop(h);
    assert_eq!(p.lost_pending(), 2, "the nested records beyond one ring of in-flight data");
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let (got, res) = read_all(&mut reader);
    res.unwrap();
    assert_eq!(got, [record(50, 48), outer], "newest first, both intact");
}

/// Hooks that note the write generation at every payload write and, when armed, run one nested
/// writer in the window after the outer writer's `put_handle` dropped `nest` to 0 (P4) and
/// before it ends the generation.
struct GenProbe {
    nest_after_p4: Cell<bool>,
    seen: std::cell::RefCell<Vec<usize>>,
}
impl<M: RingMemory> Hooks<M> for &GenProbe {
    fn preempt(&self, at: crate::producer::PreemptPoint, p: &Producer<M, Self>) {
        use crate::producer::PreemptPoint;
        if at == PreemptPoint::InPayload {
            self.seen.borrow_mut().push(p.memory().write_gen().load(crate::fences::LOCAL));
        }
        if at == PreemptPoint::AfterNestDecrement && self.nest_after_p4.replace(false) {
            let mut h = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
            h.write(&record(9, 16)).unwrap();
            h.end();
        }
    }
}

#[test]
fn write_generation_is_odd_during_each_write_and_advances_by_two_per_outermost_writer() {
    let probe = GenProbe { nest_after_p4: Cell::new(false), seen: Default::default() };
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = crate::split_with_hooks(&mut ring, OVERWRITE_BACKWARD, &probe).unwrap();
    let gen = || p.memory().write_gen().load(crate::fences::LOCAL);
    assert_eq!(gen(), 0);
    for n in 1..=3 {
        let mut h = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
        h.write(&record(n, 16)).unwrap();
        h.end();
        // A reader that saw generation g before and after its copy knows no writer ran: every
        // outermost writer must leave a new even value.
        assert_eq!(gen(), 2 * n as usize);
    }
    assert_eq!(*probe.seen.borrow(), [1, 3, 5], "odd while the payload is written");
}

#[test]
fn a_writer_nested_after_the_outer_writer_drops_nest_still_writes_under_an_odd_generation() {
    // The outer writer's P4 sets nest to 0 before it ends the generation (still odd): a nested
    // writer opening there finds the generation odd and must keep it odd, not flip it even
    // while it writes.
    let probe = GenProbe { nest_after_p4: Cell::new(true), seen: Default::default() };
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = crate::split_with_hooks(&mut ring, OVERWRITE_BACKWARD, &probe).unwrap();
    let mut h = p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap();
    h.write(&record(1, 16)).unwrap();
    h.end();
    assert!(!probe.nest_after_p4.get(), "the nested writer ran");
    assert_eq!(*probe.seen.borrow(), [1, 1], "outer, then nested: both odd");
    assert_eq!(p.memory().write_gen().load(crate::fences::LOCAL), 4);
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    assert_eq!(read_all(&mut reader).0, [record(9, 16), record(1, 16)]);
}

#[test]
fn after_writing_its_lost_record_a_backward_producer_keeps_writing_backward() {
    // Reporting the losses resets the lost count but must keep the mode bit that sends every
    // write of a backward or overwrite producer past the forward read-write fast path.
    for cfg in [OVERWRITE_BACKWARD, ProducerConfig { backward: true, ..ProducerConfig::default() }] {
        let mut ring = ModelRing::<32>::new().unwrap();
        let (p, _c) = split(&mut ring, cfg).unwrap();
        p.pause_output(true);
        assert_eq!(p.output(&record(1, 16), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
        p.pause_output(false);
        p.output(&record(2, 16), &EventIdentity::ANONYMOUS).unwrap(); // LOST (24 bytes) + 16
        assert_eq!(p.head(), 0usize.wrapping_sub(40), "{cfg:?}");
        p.output(&record(3, 16), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(p.head(), 0usize.wrapping_sub(56), "{cfg:?}");
        let mut reader = BackwardReader::new(p.memory(), !cfg.overwrite).unwrap();
        let (got, res) = read_all(&mut reader);
        res.unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], record(3, 16));
        assert_eq!(Header::parse(&got[1], Endian::NATIVE).unwrap().type_, types::LOST);
        assert_eq!(got[2], record(2, 16));
    }
}

#[test]
fn overwrite_ring_drops_and_counts_a_record_as_large_as_the_ring() {
    // A reservation of the whole ring would wrap onto itself; the largest that fits is
    // size - 8 (here 96 + the 24-byte LOST record = 120 of 128).
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    assert_eq!(p.output(&record(1, 128), &EventIdentity::ANONYMOUS), Err(OutputError::NoSpace));
    assert_eq!((p.lost_pending(), p.head(), p.nest()), (1, 0, 0));
    p.output(&record(2, 96), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!((p.lost_pending(), p.head()), (0, 0usize.wrapping_sub(120)));
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let (got, res) = read_all(&mut reader);
    res.unwrap();
    assert_eq!(Header::parse(&got[0], Endian::NATIVE).unwrap().type_, types::LOST);
    assert_eq!(got[1], record(2, 96));
}

#[test]
fn backward_errors_print_what_went_wrong_with_the_values() {
    use std::string::ToString;
    let cases = [
        (ReadError::WriterActive, "a writer was active during the read; pause and retry"),
        (ReadError::Overrun { position: 0x40 }, "record at 0x40 was overwritten while read"),
        (ReadError::MisalignedSize { position: 0x40, size: 12 }, "record at 0x40 has size 12, not a multiple of 8"),
        (ReadError::CrossesPrevious { position: 0x40 }, "record at 0x40 crosses the previous read position"),
        (
            ReadError::ScratchTooSmall { size: 48, scratch: 40 },
            "record of 48 bytes needs copying but scratch holds 40: pass a larger scratch \
             (perfring::consumer::Scratch holds any record)",
        ),
        (
            ReadError::LoadFailed { position: 0x40, len: 48 },
            "the ring's memory could not load 48 bytes of the record at 0x40: retry, or skip_to_head",
        ),
    ];
    for (err, text) in cases {
        assert_eq!(err.to_string(), text);
    }
}

#[test]
fn backward_read_reassembles_a_record_across_the_end_and_counts_what_it_delivered() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64 bytes
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    p.output(&record(1, 24), &EventIdentity::ANONYMOUS).unwrap(); // offsets 40..64
    p.output(&record(2, 32), &EventIdentity::ANONYMOUS).unwrap(); // offsets 8..40
    p.output(&record(3, 16), &EventIdentity::ANONYMOUS).unwrap(); // offsets 56..64 and 0..8
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    assert_eq!(reader.prev(), 0);
    let (got, res) = read_all(&mut reader);
    // The oldest (24 bytes) no longer fits beside the 48 newer bytes: the walk stops there.
    assert_eq!(got, [record(3, 16), record(2, 32)]);
    assert_eq!(res, Ok(crate::backward::ReadSummary { records: 2, bytes: 48, wrapped: true }));
    assert_eq!(reader.prev(), 0usize.wrapping_sub(72), "the next read starts at this head");
    p.output(&record(4, 8), &EventIdentity::ANONYMOUS).unwrap();
    let (got, res) = read_all(&mut reader);
    assert_eq!(got, [record(4, 8)]);
    assert_eq!(res, Ok(crate::backward::ReadSummary { records: 1, bytes: 8, wrapped: false }));
}

#[test]
fn a_pause_set_through_the_shared_memory_value_drops_the_producers_records_until_resume() {
    // The reader's side of an in-process ring pauses through the memory value it shares with
    // the producer (what Producer::pause_output sets): the flag the producer reads.
    let mut ring = ModelRing::<8>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    let reader = BackwardReader::new(p.memory(), false).unwrap();
    reader.memory().paused().store(true, crate::fences::LOCAL);
    assert_eq!(p.output(&record(1, 8), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
    reader.memory().paused().store(false, crate::fences::LOCAL);
    assert_eq!(p.output(&record(2, 8), &EventIdentity::ANONYMOUS), Ok(false));
    assert_eq!(p.lost_pending(), 0, "the LOST record went out with it");
}

#[test]
fn a_writer_opening_between_two_records_of_a_read_stops_it_before_the_next_record() {
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    for seq in 0..3 {
        p.output(&record(seq, 16), &EventIdentity::ANONYMOUS).unwrap(); // write generation 6
    }
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let mut scratch = Scratch::new();
    let mut got = Vec::new();
    let mut open = None;
    let res = reader.read(&mut scratch, |r| {
        got.push(r.bytes.to_vec());
        if open.is_none() {
            // Reserved and not yet written: invisible to the head re-read, odd generation.
            open = Some(p.output_begin(16, &EventIdentity::ANONYMOUS).unwrap());
        }
    });
    assert_eq!(res, Err(ReadError::WriterActive));
    assert_eq!(got, [record(2, 16)]);
    drop(open);
}

#[test]
fn a_read_overrun_by_more_than_a_ring_of_new_data_is_an_overrun_not_a_panic() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64 bytes
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    for seq in 0..4 {
        p.output(&record(seq, 16), &EventIdentity::ANONYMOUS).unwrap();
    }
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    let mut scratch = Scratch::new();
    let mut got = Vec::new();
    let res = reader.read(&mut scratch, |r| {
        got.push(r.bytes.to_vec());
        for seq in 10..15 {
            p.output(&record(seq, 16), &EventIdentity::ANONYMOUS).unwrap(); // 80 bytes > 64
        }
    });
    assert_eq!(got, [record(3, 16)]);
    assert!(matches!(res, Err(ReadError::Overrun { .. })), "{res:?}");
}

/// Forge a header of `size` at backward position `pos` (no producer writing).
fn forge_header<M: RingMemory>(mem: &M, pos: usize, size: u16) {
    let off = pos & (mem.size(crate::memory::Area::Data) - 1);
    let h = Header { type_: types::SAMPLE, misc: 0, size }.to_bytes(Endian::NATIVE);
    // SAFETY: test-only: no writer is open; 8 bytes at an 8-aligned offset inside the area.
    unsafe { mem.write(crate::memory::Area::Data, off, &h) };
}

#[test]
fn a_bad_header_newest_or_further_down_is_bad_size_and_one_crossing_the_previous_head_is_refused() {
    let mut ring = ModelRing::<8>::new().unwrap(); // 64 bytes
    let (p, _c) = split(&mut ring, OVERWRITE_BACKWARD).unwrap();
    for seq in 0..3 {
        p.output(&record(seq, 16), &EventIdentity::ANONYMOUS).unwrap(); // head -48
    }
    let head = 0usize.wrapping_sub(48);
    for (at, size, expect) in [
        // The newest header (0 bytes into the walk), then the third (32 bytes in).
        (0, 12, ReadError::MisalignedSize { position: head, size: 12 }),
        (32, 20, ReadError::MisalignedSize { position: head.wrapping_add(32), size: 20 }),
        // A size reaching past the previous read's head (0): the ring is corrupt.
        (0, 56, ReadError::CrossesPrevious { position: head }),
        (32, 24, ReadError::CrossesPrevious { position: head.wrapping_add(32) }),
    ] {
        forge_header(p.memory(), head.wrapping_add(at), size);
        let mut reader = BackwardReader::new(p.memory(), false).unwrap();
        assert_eq!(read_all(&mut reader).1, Err(expect), "header of size {size} at {at}");
        forge_header(p.memory(), head.wrapping_add(at), 16);
    }
}

#[test]
fn after_writing_its_lost_record_a_forward_overwrite_producer_still_opens_the_write_generation() {
    // The mode bit the `lost` word keeps after the LOST record (`other_mode`) is set for an
    // overwrite producer writing forward too: its records never take the forward read-write
    // fast path, which opens no write generation, so a reader of the ring could not tell a
    // record torn by the writer from a stable one.
    let mut ring = ModelRing::<32>::new().unwrap(); // 256 bytes
    let (p, _c) = split(&mut ring, ProducerConfig { overwrite: true, ..ProducerConfig::default() }).unwrap();
    let gen = || p.memory().write_gen().load(crate::fences::LOCAL);
    p.pause_output(true);
    assert_eq!(p.output(&record(1, 16), &EventIdentity::ANONYMOUS), Err(OutputError::Paused));
    p.pause_output(false);
    p.output(&record(2, 16), &EventIdentity::ANONYMOUS).unwrap(); // LOST (24 bytes) + 16
    assert_eq!((p.lost_pending(), p.head(), gen()), (0, 40, 2));
    for n in 3..=5 {
        p.output(&record(n, 16), &EventIdentity::ANONYMOUS).unwrap();
        assert_eq!(gen(), 2 * (n as usize - 1), "record {n}: one generation per outermost writer");
    }
}

#[test]
fn a_writer_nested_in_a_backward_reservation_writes_backward_below_it() {
    // The fast path is closed for a backward producer by `fast_end` set far behind `rb->head`
    // (`FAST_PATH_CLOSED`): far enough that the bytes reserved backward before the next close
    // (here the outer writer's 32, before its general path closes the path again) cannot bring
    // it within reach. A nested writer there takes the general path and reserves below the
    // outer record; had it taken the forward fast path, it would have written over it.
    let hooks = NestAfterReserve(Cell::new(true), Cell::new(0));
    for cfg in [OVERWRITE_BACKWARD, ProducerConfig { backward: true, ..ProducerConfig::default() }] {
        hooks.0.set(true);
        let mut ring = ModelRing::<32>::new().unwrap();
        let (p, _c) = crate::split_with_hooks(&mut ring, cfg, &hooks).unwrap();
        p.output(&record(1, 32), &EventIdentity::ANONYMOUS).unwrap(); // outer [-32, 0), nested [-48, -32)
        assert!(!hooks.0.get(), "the nested writer ran");
        assert_eq!((p.head(), p.nest(), p.lost_pending()), (0usize.wrapping_sub(48), 0, 0), "{cfg:?}");
        let mut reader = BackwardReader::new(p.memory(), !cfg.overwrite).unwrap();
        let (got, res) = read_all(&mut reader);
        res.unwrap();
        assert_eq!(got, [record(9, 16), record(1, 32)], "{cfg:?}: newest first, both intact");
    }
}

/// Hooks that run one nested writer of `len` bytes when the outer writer has entered (raised
/// `nest`) and not yet loaded `rb->head` to reserve.
struct NestAfterEntering(Cell<bool>, usize);
impl<M: RingMemory> Hooks<M> for &NestAfterEntering {
    fn preempt(&self, at: crate::producer::PreemptPoint, p: &Producer<M, Self>) {
        if at == crate::producer::PreemptPoint::AfterNestIncrement && self.0.replace(false) {
            p.output(&record(9, self.1), &EventIdentity::ANONYMOUS).unwrap();
        }
    }
}

#[test]
fn overwrite_ring_lets_an_outermost_writer_reserve_past_a_record_nested_before_its_reservation() {
    // 128-byte overwrite ring. The outer 64-byte writer enters, and before it reserves an
    // interrupt writes 96 bytes: then the outer reserves below those, 160 bytes from where its
    // episode began. Only a *nested* reservation is bounded by the episode (it must not reach
    // bytes an open writer has yet to write); the outermost writer has reserved nothing yet,
    // so its record is taken (overwriting the older nested one, as an overwrite ring does).
    let hooks = NestAfterEntering(Cell::new(true), 96);
    let mut ring = ModelRing::<16>::new().unwrap();
    let (p, _c) = crate::split_with_hooks(&mut ring, OVERWRITE_BACKWARD, &hooks).unwrap();
    let outer = record(1, 64);
    assert_eq!(p.output(&outer, &EventIdentity::ANONYMOUS), Ok(true), "taken (160 bytes cross the watermark)");
    assert!(!hooks.0.get(), "the nested writer ran");
    assert_eq!((p.head(), p.lost_pending()), (0usize.wrapping_sub(160), 0));
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    assert_eq!(read_all(&mut reader).0.first(), Some(&outer), "the newest record, intact");
}

/// Hooks of an overwrite ring that make the outermost writer publish three times: a nested
/// writer after its P4 (nest 0: itself an outermost writer) makes its re-check fail; a second
/// one right after the outer writer's next `rb->head` load (nest raised again: a nested writer)
/// makes the next fail. Notes `data_head` at every point.
struct RepublishTwice {
    nested: Cell<u32>,
    in_nested: Cell<bool>,
    heads: std::cell::RefCell<Vec<usize>>,
}
impl<M: RingMemory> Hooks<M> for &RepublishTwice {
    fn preempt(&self, at: crate::producer::PreemptPoint, p: &Producer<M, Self>) {
        use crate::memory::Position;
        use crate::producer::PreemptPoint;
        self.heads.borrow_mut().push(p.memory().position(Position::DataHead).load(crate::fences::LOCAL));
        let n = self.nested.get();
        // (The first nested writer's own `put_handle` passes PutAfterHeadLoad too: not there.)
        let fire = match at {
            PreemptPoint::AfterNestDecrement => n == 0,
            PreemptPoint::PutAfterHeadLoad => n == 1 && !self.in_nested.get(),
            _ => false,
        };
        if fire {
            self.nested.set(n + 1);
            self.in_nested.set(true);
            p.output(&record(10 + n, 16), &EventIdentity::ANONYMOUS).unwrap();
            self.in_nested.set(false);
        }
    }
}

#[test]
fn an_overwrite_writer_publishing_again_after_a_failed_recheck_is_still_the_open_writer() {
    // After a failed re-check the outermost writer raises `nest` again (with the overwrite
    // flag) before it re-publishes: a writer nesting there is an inner one, which neither
    // publishes (its newer head would be hidden by the outer's older store: data_head going
    // back) nor ends the write generation under the open writer.
    let hooks = RepublishTwice { nested: Cell::new(0), in_nested: Cell::new(false), heads: Default::default() };
    let mut ring = ModelRing::<32>::new().unwrap();
    let (p, _c) = crate::split_with_hooks(&mut ring, OVERWRITE_BACKWARD, &hooks).unwrap();
    p.output(&record(1, 16), &EventIdentity::ANONYMOUS).unwrap();
    assert_eq!(hooks.nested.get(), 2, "both nested writers ran");
    let heads = hooks.heads.borrow();
    assert!(heads.windows(2).all(|w| w[0].wrapping_neg() <= w[1].wrapping_neg()), "data_head went back: {heads:?}");
    assert_eq!(
        p.memory().position(crate::memory::Position::DataHead).load(crate::fences::LOCAL),
        0usize.wrapping_sub(48)
    );
    // Two outermost writers (the outer, and the first nested one after its P4): 2 x 2.
    assert_eq!(p.memory().write_gen().load(crate::fences::LOCAL), 4);
    let mut reader = BackwardReader::new(p.memory(), false).unwrap();
    assert_eq!(read_all(&mut reader).0, [record(11, 16), record(10, 16), record(1, 16)]);
}

/// At every preemption point of an overwrite ring's writers: a writer open (`nest` above 0)
/// with the write generation even is a violation (a reader's seqlock would accept a copy that
/// writer may tear). Once, at `AfterNestDecrement` of the outermost writer, a nested writer
/// writes a record, so the outer writer's re-check fails and it publishes again.
struct GenWatch {
    nested: Cell<bool>,
    violations: Cell<u32>,
}
impl<M: RingMemory> Hooks<M> for &GenWatch {
    fn preempt(&self, at: crate::producer::PreemptPoint, p: &Producer<M, Self>) {
        if p.nest() != 0 && p.memory().write_gen().load(crate::fences::LOCAL) & 1 == 0 {
            self.violations.set(self.violations.get() + 1);
        }
        if at == crate::producer::PreemptPoint::AfterNestDecrement && self.nested.replace(false) {
            p.output(&record(9, 16), &EventIdentity::ANONYMOUS).unwrap();
        }
    }
}

#[test]
fn an_overwrite_writer_publishing_again_keeps_the_write_generation_odd() {
    // The outer writer drops `nest` (P4); a nested writer opens, writes, publishes and closes the
    // generation (even); the outer writer's re-check sees the newer head and raises `nest` again
    // to publish it. While it is raised, an interrupt's writer would write as a nested one,
    // without opening the generation: it must already be odd.
    for config in [OVERWRITE_BACKWARD, ProducerConfig { overwrite: true, ..ProducerConfig::default() }] {
        let hooks = GenWatch { nested: Cell::new(true), violations: Cell::new(0) };
        let mut ring = ModelRing::<64>::new().unwrap();
        let (p, _c) = crate::split_with_hooks(&mut ring, config, &hooks).unwrap();
        p.output(&record(1, 32), &EventIdentity::ANONYMOUS).unwrap();
        assert!(!hooks.nested.get(), "the nested writer ran");
        assert_eq!(hooks.violations.get(), 0, "a writer open with the generation even ({config:?})");
        assert_eq!(p.memory().write_gen().load(crate::fences::LOCAL) & 1, 0, "closed at the end");
    }
}
