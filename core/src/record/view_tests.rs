//! Unit tests of the views (`view.rs`): each field against the complete decode, at the edges.

use super::*;
use crate::record::DecodeContext;

/// The view of the SAMPLE `bytes` (in the layout's byte order) through `layout`.
fn sample<'a>(layout: &'a SampleLayout, bytes: &'a [u8]) -> Result<SampleView<'a>, DecodeError> {
    match layout.ctx.endian.u32_at(bytes, 0) {
        Some(types::SAMPLE) => SampleView::of(bytes, layout, layout.ctx.endian),
        type_ => Err(DecodeError::NotASample { type_: type_.unwrap_or(0) }),
    }
}

/// Every combination of the fixed SAMPLE fields, in both byte orders, on a record of exactly
/// `fixed_size` bytes (the edge the view's unchecked loads rely on; run under Miri by
/// `make miri`): each accessor gives what the complete decode gives, absent fields `None`,
/// and a record one word shorter is refused.
#[test]
fn fixed_fields_read_what_the_decode_reads_at_the_edge() {
    const BITS: [u64; 9] =
        [st::IDENTIFIER, st::IP, st::TID, st::TIME, st::ADDR, st::ID, st::STREAM_ID, st::CPU, st::PERIOD];
    let step = if cfg!(miri) { 7 } else { 1 };
    for endian in [Endian::Little, Endian::Big] {
        for combo in (0u32..1 << BITS.len()).step_by(step) {
            let sample_type = BITS.iter().enumerate().filter(|(i, _)| combo & 1 << i != 0).fold(0, |t, (_, b)| t | b);
            let ctx = DecodeContext { sample_type, ..DecodeContext::new(endian) };
            let layout = SampleLayout::new(&ctx);
            let size = layout.fixed_end as usize;
            let mut rec = [0u8; 80];
            rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: size as u16 }.to_bytes(endian));
            for (k, word) in rec[8..size].chunks_exact_mut(8).enumerate() {
                word.copy_from_slice(&endian.put_u64(0x0102_0304_0000_0000 | (k as u64 + 1)));
            }
            let rec = &rec[..size];
            let v = sample(&layout, rec).unwrap();
            let d = v.to_sample().unwrap();
            assert_eq!(
                (v.identifier(), v.ip(), v.tid(), v.time(), v.addr(), v.id(), v.stream_id(), v.cpu(), v.period()),
                (d.identifier, d.ip, d.tid, d.time, d.addr, d.id.or(d.identifier), d.stream_id, d.cpu, d.period),
                "sample_type {sample_type:#x}, {endian:?}"
            );
            assert_eq!(v.ip().is_some(), sample_type & st::IP != 0);
            if size > Header::SIZE {
                assert!(sample(&layout, &rec[..size - 8]).is_err(), "a short record is refused");
            }
        }
    }
}
/// A record walked in one byte order is read in it: the view of a layout of the same order
/// reads the fields, and so does a layout of the other order.
#[test]
fn a_walked_record_is_read_in_the_walks_byte_order_whatever_the_layouts() {
    for (walk, other) in [(Endian::Little, Endian::Big), (Endian::Big, Endian::Little)] {
        let mut rec = [0u8; 24];
        rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: 24 }.to_bytes(walk));
        rec[8..16].copy_from_slice(&walk.put_u64(0x1234));
        rec[16..].copy_from_slice(&walk.pair_u32(7, 8));
        let r = super::super::Walker::new(&rec, walk).next().unwrap().unwrap();
        assert_eq!(r.endian, walk);
        let ctx = |endian| DecodeContext { sample_type: st::IP | st::TID, ..DecodeContext::new(endian) };
        let same = SampleLayout::new(&ctx(walk));
        let v = SampleView::of(r.bytes, &same, r.endian).unwrap();
        assert_eq!((v.ip(), v.tid()), (Some(0x1234), Some(PidTid { pid: 7, tid: 8 })));
        // A layout made for the other order reads it as well: the offsets are the same, and
        // each field is read in the record's order.
        let crossed = SampleLayout::new(&ctx(other));
        let v = SampleView::of(r.bytes, &crossed, r.endian).unwrap();
        assert_eq!((v.ip(), v.tid()), (Some(0x1234), Some(PidTid { pid: 7, tid: 8 })));
    }
}

/// A SAMPLE whose CALLCHAIN claims more ips than the record holds: the view is made (its
/// fixed fields read), and every field after RAW that the event writes reports the error
/// of the complete decode — the walk to where those fields start failed when the view was
/// made, and each accessor's slow path walks again for the error; an absent field is `None`.
#[test]
fn fields_after_a_callchain_cut_short_report_the_decode_error() {
    use crate::record::decode::decode;
    use crate::record::Record;
    let t = st::IP | st::CALLCHAIN | st::REGS_USER | st::STACK_USER | st::PHYS_ADDR;
    let ctx = DecodeContext { sample_type: t, sample_regs_user: 0b1, ..DecodeContext::new(Endian::Little) };
    let layout = SampleLayout::new(&ctx);
    let mut rec = [0u8; 64];
    rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: 64 }.to_bytes(Endian::Little));
    for (k, w) in [0x4000u64, 100, 1, 2, 3, 4, 5].iter().enumerate() {
        rec[8 + 8 * k..16 + 8 * k].copy_from_slice(&w.to_le_bytes());
    }
    let Err(want) = decode(&rec[..], &layout).map(|r| matches!(r, Record::Sample(_))) else {
        panic!("a callchain of 100 ips in 64 bytes decodes")
    };
    let v = sample(&layout, &rec[..]).unwrap();
    assert_eq!(v.ip(), Some(0x4000));
    assert_eq!(v.callchain(), Err(want));
    assert_eq!(v.regs_user().map(|_| ()), Err(want));
    assert_eq!(v.stack_user().map(|_| ()), Err(want));
    assert_eq!(v.phys_addr(), Err(want));
    assert_eq!(v.data_page_size(), Ok(None));
    assert_eq!(v.aux(), Ok(None));
    // A view the decode would refuse does not encode: the decode's error, not a guess.
    use crate::record::EncodeError;
    assert_eq!(Record::Sample(v).encoded_size_in(&ctx), Err(EncodeError::Unreadable(want)));
    assert_eq!(Record::Sample(v).encode_in(&ctx, &mut [0; 128]), Err(EncodeError::Unreadable(want)));
}

/// The fields after RAW read from where they start, found when the view is made past
/// CALLCHAIN and RAW, in any order, equal the complete decode's; a record cut inside them
/// gives each field's own error, as the decode gives its first.
#[test]
fn fields_after_callchain_and_raw_read_in_any_order() {
    use crate::record::decode::decode;
    use crate::record::Record;
    let t = st::IP | st::CALLCHAIN | st::RAW | st::REGS_USER | st::STACK_USER | st::PHYS_ADDR | st::CODE_PAGE_SIZE;
    let ctx = DecodeContext { sample_type: t, sample_regs_user: 0b11, ..DecodeContext::new(Endian::Big) };
    let layout = SampleLayout::new(&ctx);
    extern crate std;
    let e = Endian::Big;
    let mut body = std::vec::Vec::new();
    for w in [0x4000u64, 2, 0xa, 0xb] {
        body.extend_from_slice(&e.put_u64(w));
    }
    body.extend_from_slice(&e.put_u32(4)); // RAW: 4 bytes, then the 4 of data
    body.extend_from_slice(&[1, 2, 3, 4]);
    for w in [2u64, 0x11, 0x22, 16, 0xaa, 0xbb, 16, 0x9000, 4096] {
        body.extend_from_slice(&e.put_u64(w));
    }
    let size = 8 + body.len();
    let mut rec = Header { type_: types::SAMPLE, misc: 0, size: size as u16 }.to_bytes(e).to_vec();
    rec.extend_from_slice(&body);
    let Ok(Record::Sample(s)) = decode(&rec[..], &layout) else { panic!("decodes") };
    let s = s.to_sample().unwrap();
    let v = sample(&layout, &rec[..]).unwrap();
    assert_eq!(v.code_page_size(), Ok(s.code_page_size));
    assert_eq!(v.phys_addr(), Ok(s.phys_addr));
    assert_eq!(v.stack_user(), Ok(s.stack_user));
    assert_eq!(v.regs_user(), Ok(s.regs_user));
    assert_eq!((v.raw(), v.callchain()), (Ok(s.raw), Ok(s.callchain)));
    assert_eq!((s.phys_addr, s.code_page_size), (Some(0x9000), Some(4096)));
    // Cut before CODE_PAGE_SIZE: the decode's error, on that field alone.
    let mut cut = rec[..size - 8].to_vec();
    cut[6..8].copy_from_slice(&e.put_u16((size - 8) as u16));
    let want = decode(&cut[..], &layout).unwrap_err();
    let v = sample(&layout, &cut[..]).unwrap();
    assert_eq!(v.code_page_size(), Err(want));
    assert_eq!(v.phys_addr(), Ok(Some(0x9000)));
    assert_eq!(v.stack_user().map(|s| s.map(|s| s.dyn_size)), Ok(Some(16)));
}
