//! The record decoder on arbitrary bytes under arbitrary attr fields (issue 4).
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
//! `Attr::from_bytes`; a decoded record re-encodes (unless padding makes it outgrow
//! `header.size`'s limit), and after that one normalisation (string areas, RAW/stack/AUX and
//! TEXT_POKE padding), encoding is a fixed point: decode(encode(r)) encodes to the same bytes.
//! The fixed-point check is skipped for samples whose branch stack is empty under
//! `PERF_SAMPLE_BRANCH_HW_INDEX`, where the kernel's no-stack form makes the bytes ambiguous
//! (see `perfring::record::BranchStack`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfring::record::{branch_sample_type, decode, Attr, DecodeContext, EncodeError, Endian, Record};

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

fuzz_target!(|data: &[u8]| {
    let _ = Attr::from_bytes(data, Endian::Little);
    let _ = Attr::from_bytes(data, Endian::Big);
    let Some((head, bytes)) = data.split_first_chunk::<HEAD>() else { return };
    let ctx = context(head);
    let Ok(first) = decode(bytes, &ctx) else { return };
    let Some(b2) = encode(&first, &ctx) else { return };
    let second = decode(&b2, &ctx).unwrap_or_else(|e| panic!("re-encoded record fails to decode: {e}\n{first:?}"));
    if ambiguous(&first, &ctx) || ambiguous(&second, &ctx) {
        return;
    }
    let b3 = encode(&second, &ctx).expect("a normalised record fits");
    assert_eq!(b2, b3, "encoding is not a fixed point:\n{first:?}\n{second:?}");
    assert_eq!(decode(&b3, &ctx).as_ref(), Ok(&second));
});
