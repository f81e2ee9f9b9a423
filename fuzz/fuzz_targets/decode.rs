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
//! compile-time layouts of `EventRecord::fixed` (four `sample_type`s, two events) read the fields
//! the run-time view reads for each walked record (and
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
    branch_sample_type, sample_type as st, Attr, DecodeError, Encode, EncodeError, Endian, EventLayout, EventRecord,
    EventSet, Header, IdEntry, RawRecord, Record, Walker,
};
use perfring_tests::decode::{Ctx, HEAD};

/// `bytes` as one whole record in `endian` (its header read from them), if they hold a header.
fn raw(bytes: &[u8], endian: Endian) -> Option<RawRecord<'_>> {
    Some(RawRecord { header: Header::parse(bytes, endian)?, bytes, offset: 0, endian, trailing: &[] })
}

/// The complete decode of `bytes` by the one event `set` holds.
fn decode<'a, E, I>(set: &'a EventSet<E, I>, bytes: &'a [u8], endian: Endian) -> Result<Record<'a>, DecodeError>
where
    E: AsRef<[EventLayout]> + AsMut<[EventLayout]>,
    I: AsRef<[IdEntry]> + AsMut<[IdEntry]>,
{
    match raw(bytes, endian) {
        Some(r) => set.attribute(&r).decode(),
        None => Err(DecodeError::Truncated { field: "header", offset: 0, need: 8, have: bytes.len() }),
    }
}

fn ambiguous(rec: &Record<'_>, ctx: &Ctx) -> bool {
    matches!(rec, Record::Sample(s) if s.branch_stack().ok().flatten().is_some_and(|b| b.entries.is_empty()))
        && ctx.attr.branch_sample_type & branch_sample_type::HW_INDEX != 0
}

fn encode(rec: &Record<'_>, ctx: &Ctx) -> Option<Vec<u8>> {
    let layout = ctx.layout();
    match rec.encoded_size(&layout) {
        Ok(n) => {
            let mut out = vec![0u8; n];
            assert_eq!(rec.encode(&layout, &mut out), Ok(n), "{rec:?}");
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

/// The views against the complete decode (when it succeeded), and the two-event set and the
/// walkers on the same bytes.
fn fast_path<'a>(rec: &impl EventRecord<'a>, bytes: &[u8], ctx: &Ctx, full: Option<&Record<'_>>) {
    let fields = rec.view().ok().map(|v| (v.time(), v.id(), v.stream_id(), v.cpu(), v.tid()));
    let sample = rec.sample();
    if let Ok(v) = &sample {
        let _ = (v.identifier(), v.ip(), v.tid(), v.addr(), v.period(), v.read(), v.callchain(), v.raw());
        let _ = (v.branch_stack(), v.regs_user(), v.stack_user(), v.weight(), v.regs_intr(), v.aux());
    }
    if let Some(full) = full.filter(|r| !matches!(r, Record::Unknown { .. })) {
        let wide = |v: Option<u32>| v.map(u64::from);
        let fields = fields
            .map(|(t, i, s, c, p)| [t, i, s, wide(c.map(|c| c.cpu)), wide(p.map(|p| p.pid)), wide(p.map(|p| p.tid))]);
        let want = perfring_tests::decode::identifying(full);
        assert_eq!(fields, Some(want), "{full:?}");
        if let Record::Sample(d) = full {
            // The decode's view passed every check of the decode: its values decode.
            let s = d.to_sample().expect("a decoded SAMPLE's view decodes whole");
            let v = sample.expect("a decoded SAMPLE has a view");
            assert_eq!(&v, d, "the decode's view is the record's view");
            assert_eq!(
                (v.identifier(), v.ip(), v.tid(), v.time(), v.addr()),
                (s.identifier, s.ip, s.tid, s.time, s.addr)
            );
            assert_eq!(
                (v.id(), v.stream_id(), v.cpu(), v.period()),
                (s.id.or(s.identifier), s.stream_id, s.cpu, s.period)
            );
            assert_eq!(v.read(), Ok(s.read));
            assert_eq!(v.callchain(), Ok(s.callchain));
            assert_eq!(v.raw(), Ok(s.raw));
        }
    }
    let set = two_events(&ctx.attr, ctx.endian);
    for walker in [Walker::new(bytes, ctx.endian), Walker::perf_data(bytes, ctx.endian)] {
        let mut walked = 0usize;
        for r in walker {
            let Ok(r) = r else { break };
            walked += r.bytes.len() + r.trailing.len();
            assert!(walked <= bytes.len());
            if let Ok(i) = set.attribute(&r).event() {
                assert!(i < 2);
            }
        }
    }
}

/// `bytes` walked, attributed by two events of `ST` (ids 1–4) and read through
/// `EventRecord::fixed::<ST>`: a record it accepts reads the run-time view's fields, and one it
/// refuses for its id is refused by attribution.
fn fixed_path<const ST: u64>(bytes: &[u8], endian: Endian) {
    let set = two_events(&Attr { sample_type: ST, ..Attr::ZERO }, endian);
    for r in Walker::perf_data(bytes, endian) {
        let Ok(r) = r else { break };
        let rec = set.attribute(&r);
        match rec.fixed::<ST>() {
            Ok(f) => {
                let v = rec.sample().unwrap();
                assert_eq!(
                    (f.identifier(), f.ip(), f.tid(), f.time(), f.addr()),
                    (v.identifier(), v.ip(), v.tid(), v.time(), v.addr())
                );
                assert_eq!((f.id(), f.stream_id(), f.cpu(), f.period()), (v.id(), v.stream_id(), v.cpu(), v.period()));
            }
            Err(e @ (DecodeError::UnknownId { .. } | DecodeError::IdOutsideRecord { .. })) => {
                assert_eq!(rec.event(), Err(e))
            }
            Err(_) => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = Attr::from_bytes(data, Endian::Little);
    let _ = Attr::from_bytes(data, Endian::Big);
    let Some((head, bytes)) = data.split_first_chunk::<HEAD>() else { return };
    let ctx = Ctx::from_head(head);
    let set = EventSet::single(&ctx.attr, ctx.endian);
    let decoded = decode(&set, bytes, ctx.endian);
    if let Some(r) = raw(bytes, ctx.endian) {
        fast_path(&set.attribute(&r), bytes, &ctx, decoded.as_ref().ok());
    }
    const PREFIX: u64 =
        st::IDENTIFIER | st::IP | st::TID | st::TIME | st::ADDR | st::ID | st::STREAM_ID | st::CPU | st::PERIOD;
    fixed_path::<{ st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD }>(bytes, ctx.endian);
    fixed_path::<{ st::IP | st::TID | st::TIME | st::ID | st::CPU }>(bytes, ctx.endian);
    fixed_path::<{ PREFIX }>(bytes, ctx.endian);
    fixed_path::<{ st::IDENTIFIER | st::CALLCHAIN }>(bytes, ctx.endian);
    let Ok(first) = decoded else { return };
    let Some(b2) = encode(&first, &ctx) else { return };
    let second =
        decode(&set, &b2, ctx.endian).unwrap_or_else(|e| panic!("re-encoded record fails to decode: {e}\n{first:?}"));
    if ambiguous(&first, &ctx) || ambiguous(&second, &ctx) {
        return;
    }
    let b3 = encode(&second, &ctx).expect("a normalised record fits");
    assert_eq!(b2, b3, "encoding is not a fixed point:\n{first:?}\n{second:?}");
    assert_eq!(decode(&set, &b3, ctx.endian).as_ref(), Ok(&second));
});
