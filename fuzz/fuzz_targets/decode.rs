//! The record decoder on arbitrary bytes under arbitrary attr fields.
//!
//! Input layout (the seeds in `fuzz/seeds/decode/` follow it; `records_golden.rs` writes more
//! with `PERFRING_FUZZ_CORPUS=fuzz/corpus/decode`):
//!
//! ```text
//! [u64 sample_type][u64 read_format][u64 sample_regs_user][u64 sample_regs_intr]
//! [u64 branch_sample_type]   all little-endian
//! [u8 flags]                 bit 0: sample_id_all, bit 1: records are big-endian
//! [record bytes...]
//! ```
//!
//! Invariants: `decode` never panics (every failure is a `DecodeError`), nor does
//! `Attr::from_bytes`; the fast path agrees with it: the record's `SampleLayout`
//! views never panic, and when `decode` succeeds every field a view offers equals the decoded
//! one; an `EventSet` of two events with that layout attributes the record without panicking
//! (to one of its events, or with a typed error); `Walker` walks the record bytes (as ring and as
//! perf.data records) to an end without panicking or looping, never past the input; the
//! compile-time layouts of `EventSet::fixed` (four `sample_type`s, two events) attribute each
//! walked record as `attribute` does and read the fields the run-time view reads (and
//! `EventLayout::fixed_sample` the same), or give a typed error; `EventLayout::fixed_sample` on any record
//! never panics; a decoded record re-encodes (unless padding makes it outgrow
//! `header.size`'s limit), and after that one normalisation (string areas, RAW/stack/AUX and
//! TEXT_POKE padding), encoding is a fixed point: decode(encode(r)) encodes to the same bytes.
//! The fixed-point check is skipped for samples whose branch stack is empty under
//! `PERF_SAMPLE_BRANCH_HW_INDEX`, where the kernel's no-stack form makes the bytes ambiguous
//! (see `perfring::record::BranchStack`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfring::record::{
    attr_flags, branch_sample_type, decode, sample_type as st, Attr, DecodeContext, EncodeError, Endian, EventLayout,
    EventSet, IdEntry, Record, SampleError, SampleLayout, Walker,
};

const HEAD: usize = 41;

fn context(head: &[u8; HEAD]) -> DecodeContext {
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&head[8 * i..8 * i + 8]);
        u64::from_le_bytes(w)
    };
    DecodeContext {
        sample_type: word(0),
        read_format: word(1),
        sample_regs_user: word(2),
        sample_regs_intr: word(3),
        branch_sample_type: word(4),
        sample_id_all: head[40] & 1 != 0,
        endian: if head[40] & 2 != 0 { Endian::Big } else { Endian::Little },
    }
}

fn ambiguous(rec: &Record<'_>, ctx: &DecodeContext) -> bool {
    matches!(rec, Record::Sample(s) if s.branch_stack.is_some_and(|b| b.entries.is_empty()))
        && ctx.branch_sample_type & branch_sample_type::HW_INDEX != 0
}

fn encode(rec: &Record<'_>, ctx: &DecodeContext) -> Option<Vec<u8>> {
    match rec.encoded_size(ctx) {
        Ok(n) => {
            let mut out = vec![0u8; n];
            assert_eq!(rec.encode(ctx, &mut out), Ok(n), "{rec:?}");
            Some(out)
        }
        Err(EncodeError::TooLarge { .. }) => None,
        Err(e) => panic!("a decoded record does not re-encode: {e}\n{rec:?}"),
    }
}

/// A set of two events of `attr`, with ids 1, 2 (event 0) and 3, 4 (event 1).
fn two_events(attr: &Attr, endian: Endian) -> EventSet<[EventLayout; 2], [IdEntry; 4]> {
    let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
    for ids in [[1, 2], [3, 4]] {
        let e = set.add_event(attr, endian).unwrap();
        for id in ids {
            set.add_id(e, id).unwrap();
        }
    }
    set
}

/// The fast path against the complete decode (when it succeeded), and the event set and walker
/// on the same bytes.
fn fast_path(bytes: &[u8], ctx: &DecodeContext, full: Option<&Record<'_>>) {
    let layout = SampleLayout::new(ctx);
    let view = layout.record(bytes);
    let fields = (view.time(), view.id(), view.stream_id(), view.cpu(), view.pid(), view.tid());
    let sample = layout.sample(bytes);
    if let Ok(v) = &sample {
        let _ = (v.identifier(), v.ip(), v.pid_tid(), v.addr(), v.period(), v.read(), v.callchain(), v.raw());
        let _ = v.decode();
    }
    if let Some(rec) = full.filter(|r| !matches!(r, Record::Unknown { .. })) {
        assert_eq!(fields, (rec.time(), rec.id(), rec.stream_id(), rec.cpu(), rec.pid(), rec.tid()), "{rec:?}");
        if let Record::Sample(s) = rec {
            let v = sample.expect("a decoded SAMPLE has a view");
            assert_eq!(
                (v.identifier(), v.ip(), v.pid_tid(), v.time(), v.addr()),
                (s.identifier, s.ip, s.tid, s.time, s.addr)
            );
            assert_eq!((v.id(), v.stream_id(), v.cpu(), v.period()), (s.id.or(s.identifier), s.stream_id, s.cpu, s.period));
            assert_eq!(v.read(), Ok(s.read));
            assert_eq!(v.callchain(), Ok(s.callchain));
            assert_eq!(v.raw(), Ok(s.raw));
            assert_eq!(v.decode().as_ref(), Ok(s));
        }
    }
    let attr = Attr {
        sample_type: ctx.sample_type,
        read_format: ctx.read_format,
        flags: if ctx.sample_id_all { attr_flags::SAMPLE_ID_ALL } else { 0 },
        ..Attr::ZERO
    };
    let set = two_events(&attr, ctx.endian);
    if let Ok(i) = set.attribute(bytes) {
        assert!(i < 2);
    }
    for walker in [Walker::new(bytes, ctx.endian), Walker::perf_data(bytes, ctx.endian)] {
        let mut walked = 0usize;
        for r in walker {
            let Ok(r) = r else { break };
            walked += r.bytes.len() + r.trailing.len();
            assert!(walked <= bytes.len());
            let _ = set.attribute(&r);
        }
    }
}

/// `bytes` walked and read through `EventSet::fixed::<ST>` (two events, ids 1–4): a record it
/// accepts goes to the event `attribute` names and reads the run-time view's fields.
fn fixed_path<const ST: u64>(bytes: &[u8], endian: Endian) {
    let set = two_events(&Attr { sample_type: ST, ..Attr::ZERO }, endian);
    let fixed = set.fixed::<ST>().unwrap();
    for r in Walker::perf_data(bytes, endian) {
        let Ok(r) = r else { break };
        match fixed.sample(&r) {
            Ok((index, f)) => {
                assert_eq!(set.attribute(&r), Ok(index));
                let e = set.event(index).unwrap().fixed_sample::<ST>(r.bytes).unwrap();
                assert_eq!(
                    (e.identifier(), e.ip(), e.pid_tid(), e.time(), e.period()),
                    (f.identifier(), f.ip(), f.pid_tid(), f.time(), f.period())
                );
                let v = set.event(index).unwrap().sample(&r).unwrap();
                assert_eq!(
                    (f.identifier(), f.ip(), f.pid_tid(), f.time(), f.addr()),
                    (v.identifier(), v.ip(), v.pid_tid(), v.time(), v.addr())
                );
                assert_eq!(
                    (f.id(), f.stream_id(), f.cpu(), f.period(), f.misc()),
                    (v.id(), v.stream_id(), v.cpu(), v.period(), v.misc())
                );
            }
            Err(SampleError::Attribute(e)) => assert_eq!(set.attribute(&r), Err(e)),
            Err(SampleError::Decode(_)) => {}
            Err(e) => panic!("FixedEvents::sample: {e:?}"),
        }
        let _ = set.event(0).unwrap().fixed_sample::<ST>(r.bytes);
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = Attr::from_bytes(data, Endian::Little);
    let _ = Attr::from_bytes(data, Endian::Big);
    let Some((head, bytes)) = data.split_first_chunk::<HEAD>() else { return };
    let ctx = context(head);
    let decoded = decode(bytes, &ctx);
    fast_path(bytes, &ctx, decoded.as_ref().ok());
    const PREFIX: u64 =
        st::IDENTIFIER | st::IP | st::TID | st::TIME | st::ADDR | st::ID | st::STREAM_ID | st::CPU | st::PERIOD;
    fixed_path::<{ st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD }>(bytes, ctx.endian);
    fixed_path::<{ st::IP | st::TID | st::TIME | st::ID | st::CPU }>(bytes, ctx.endian);
    fixed_path::<{ PREFIX }>(bytes, ctx.endian);
    fixed_path::<{ st::IDENTIFIER | st::CALLCHAIN }>(bytes, ctx.endian);
    let Ok(first) = decoded else { return };
    let Some(b2) = encode(&first, &ctx) else { return };
    let second = decode(&b2, &ctx).unwrap_or_else(|e| panic!("re-encoded record fails to decode: {e}\n{first:?}"));
    if ambiguous(&first, &ctx) || ambiguous(&second, &ctx) {
        return;
    }
    let b3 = encode(&second, &ctx).expect("a normalised record fits");
    assert_eq!(b2, b3, "encoding is not a fixed point:\n{first:?}\n{second:?}");
    assert_eq!(decode(&b3, &ctx).as_ref(), Ok(&second));
});
