//! Unit tests of the record codecs: hand-assembled byte layouts, every error path, and the
//! regressions the fuzzer found. (Round trips of random records are in
//! `tests/tests/records_roundtrip.rs`; checks against the real `perf` in `records_golden.rs`.)

use core::ffi::CStr;

use super::layout::SampleLayout;
use super::*;

extern crate std;

/// The complete decode with the layout of `ctx`, kept for the process in a static (each test
/// decodes a few records; memory a static reaches is not a leak to Miri).
fn decode<'a>(rec: &'a [u8], ctx: &DecodeContext) -> Result<Record<'a>, DecodeError> {
    static KEPT: std::sync::Mutex<std::vec::Vec<&'static SampleLayout>> = std::sync::Mutex::new(std::vec::Vec::new());
    let layout: &'static SampleLayout = std::boxed::Box::leak(std::boxed::Box::new(SampleLayout::new(ctx)));
    KEPT.lock().unwrap_or_else(|e| e.into_inner()).push(layout);
    super::decode::decode(rec, layout)
}

/// The complete decode of a SAMPLE, its fields as values (or the error).
fn sample<'a>(rec: &'a [u8], ctx: &DecodeContext) -> Result<Sample<'a>, DecodeError> {
    match decode(rec, ctx)? {
        Record::Sample(v) => Ok(v.to_sample().expect("a decoded SAMPLE's view decodes")),
        other => panic!("not a SAMPLE: {other:?}"),
    }
}

/// Little helper to assemble records by hand, field by field, in either order.
struct Bytes {
    buf: [u8; 512],
    len: usize,
    endian: Endian,
}

impl Bytes {
    fn new(endian: Endian) -> Bytes {
        Bytes { buf: [0; 512], len: 8, endian }
    }
    fn put(&mut self, b: &[u8]) -> &mut Self {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        let b = self.endian.put_u64(v);
        self.put(&b)
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        let b = self.endian.put_u32(v);
        self.put(&b)
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        let b = self.endian.put_u16(v);
        self.put(&b)
    }
    /// Set the header and return the record.
    fn finish(&mut self, type_: u32, misc: u16) -> &[u8] {
        let h = Header { type_, misc, size: self.len as u16 }.to_bytes(self.endian);
        self.buf[..8].copy_from_slice(&h);
        &self.buf[..self.len]
    }
}

fn ctx(endian: Endian, sample_type: u64) -> DecodeContext {
    DecodeContext { sample_type, ..DecodeContext::new(endian) }
}

#[test]
fn sample_fields_come_in_kernel_order_not_bit_order() {
    use sample_type as st;
    for endian in [Endian::Little, Endian::Big] {
        let t = st::IDENTIFIER
            | st::IP
            | st::TID
            | st::TIME
            | st::ADDR
            | st::ID
            | st::STREAM_ID
            | st::CPU
            | st::PERIOD
            | st::CALLCHAIN
            | st::RAW
            | st::WEIGHT_STRUCT
            | st::PHYS_ADDR
            | st::AUX
            | st::CGROUP
            | st::DATA_PAGE_SIZE
            | st::CODE_PAGE_SIZE;
        let mut b = Bytes::new(endian);
        b.u64(99) // identifier first
            .u64(0x1000) // ip
            .u32(10)
            .u32(11) // pid, tid
            .u64(5000) // time
            .u64(0x2000) // addr
            .u64(7) // id
            .u64(8) // stream_id
            .u32(3)
            .u32(0) // cpu, res
            .u64(100) // period
            .u64(2)
            .u64(0xffff_ffff_ffff_fe00)
            .u64(0x1234) // callchain
            .u32(4)
            .put(&[1, 2, 3, 4]) // raw: size 4, 4 bytes (size + 4 = 8)
            .u64(0x0003_0002_0000_0001) // weight struct: var3 3, var2 2, var1 1
            .u64(0x5000) // phys_addr
            .u64(77) // cgroup
            .u64(4096) // data page size
            .u64(2 << 20) // code page size
            .u64(8)
            .put(b"auxdata!"); // aux last
        let rec = b.finish(types::SAMPLE, misc::USER | misc::EXACT_IP);
        let Ok(s) = sample(rec, &ctx(endian, t)) else { panic!("{:?}", sample(rec, &ctx(endian, t))) };
        assert_eq!(s.identifier, Some(99));
        assert_eq!(s.ip, Some(0x1000));
        assert_eq!(s.tid, Some(PidTid { pid: 10, tid: 11 }));
        assert_eq!(s.time, Some(5000));
        assert_eq!(s.addr, Some(0x2000));
        assert_eq!((s.id, s.stream_id), (Some(7), Some(8)));
        assert_eq!(s.cpu, Some(SampleCpu { cpu: 3, res: 0 }));
        assert_eq!(s.period, Some(100));
        assert_eq!(s.callchain, Some(Entries::from_slice(&[callchain::CONTEXT_USER, 0x1234])));
        assert_eq!(s.raw, Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(s.weight, Some(Weight::Struct(WeightStruct { var1_dw: 1, var2_w: 2, var3_w: 3 })));
        assert_eq!((s.phys_addr, s.cgroup), (Some(0x5000), Some(77)));
        assert_eq!((s.data_page_size, s.code_page_size), (Some(4096), Some(2 << 20)));
        assert_eq!(s.aux, Some(&b"auxdata!"[..]));
        assert!(s.exact_ip());
        assert_eq!(CpuMode::from_misc(s.misc), CpuMode::User);
        // And the encoder writes the same bytes back.
        let mut out = [0u8; 512];
        let n = s.encode_in(&ctx(endian, t), &mut out).unwrap();
        assert_eq!(&out[..n], rec);
    }
}

#[test]
fn weight_struct_is_the_same_bits_of_the_u64_in_both_orders() {
    // LE memory {u32 var1; u16 var2; u16 var3} and BE memory {u16 var3; u16 var2; u32 var1}.
    let le = [1, 0, 0, 0, 2, 0, 3, 0];
    let be = [0, 3, 0, 2, 0, 0, 0, 1];
    let w = WeightStruct { var1_dw: 1, var2_w: 2, var3_w: 3 };
    assert_eq!(WeightStruct::from_u64(Endian::Little.u64(le)), w);
    assert_eq!(WeightStruct::from_u64(Endian::Big.u64(be)), w);
}

#[test]
fn regs_have_values_only_with_an_abi_and_one_per_mask_bit() {
    let t = sample_type::REGS_USER | sample_type::REGS_INTR;
    let mut b = Bytes::new(Endian::Little);
    b.u64(REGS_ABI_NONE).u64(REGS_ABI_64).u64(0xa).u64(0xb).u64(0xc);
    let rec = b.finish(types::SAMPLE, 0);
    // The user mask has 5 bits, but abi NONE means no values; the intr mask has 3.
    let c = DecodeContext { sample_regs_user: 0x1f, sample_regs_intr: 0b1011, ..ctx(Endian::Little, t) };
    let Ok(s) = sample(rec, &c) else { panic!("{:?}", sample(rec, &c)) };
    assert_eq!(s.regs_user, Some(Regs::NONE));
    let intr = s.regs_intr.unwrap();
    assert_eq!(intr.abi, REGS_ABI_64);
    let numbered: [(u32, u64); 3] = [(0, 0xa), (1, 0xb), (3, 0xc)];
    assert!(intr.with_numbers(0b1011).eq(numbered));
    // With the user mask used for both (a bug some parsers have), it no longer adds up.
    let wrong = DecodeContext { sample_regs_intr: 0x1f, ..c };
    assert!(matches!(decode(rec, &wrong), Err(DecodeError::CountTooLarge { field: "sample.regs_intr", .. })));
}

#[test]
fn stack_user_has_dyn_size_only_when_size_is_not_zero() {
    let t = sample_type::STACK_USER | sample_type::PERIOD;
    let mut b = Bytes::new(Endian::Little);
    b.u64(55).u64(0);
    let rec = b.finish(types::SAMPLE, 0);
    let Ok(s) = sample(rec, &ctx(Endian::Little, t)) else { panic!("{:?}", sample(rec, &ctx(Endian::Little, t))) };
    assert_eq!(s.stack_user, Some(StackUser::default()));
    assert_eq!(s.period, Some(55));
    let mut b = Bytes::new(Endian::Little);
    b.u64(55).u64(16).put(&[7; 16]).u64(5);
    let rec = b.finish(types::SAMPLE, 0);
    let Ok(s) = sample(rec, &ctx(Endian::Little, t)) else { panic!("{:?}", sample(rec, &ctx(Endian::Little, t))) };
    let stack = s.stack_user.unwrap();
    assert_eq!((stack.data.len(), stack.dyn_size, stack.valid().len()), (16, 5, 5));
}

#[test]
fn read_format_single_and_group_layouts() {
    use read_format as rf;
    let t = sample_type::READ;
    // Without GROUP: value, enabled, running, id, lost.
    let mut b = Bytes::new(Endian::Big);
    b.u64(1).u64(2).u64(3).u64(4).u64(5);
    let rec = b.finish(types::SAMPLE, 0);
    let c = DecodeContext { read_format: rf::ALL & !rf::GROUP, ..ctx(Endian::Big, t) };
    let Ok(s) = sample(rec, &c) else { panic!("{:?}", sample(rec, &c)) };
    let single = ReadSingle { value: 1, time_enabled: Some(2), time_running: Some(3), id: Some(4), lost: Some(5) };
    assert_eq!(s.read, Some(ReadValues::Single(single)));
    // With GROUP: nr, enabled, running, then {value, id, lost} × nr.
    let mut b = Bytes::new(Endian::Big);
    b.u64(2).u64(20).u64(30).u64(100).u64(1).u64(0).u64(200).u64(2).u64(9);
    let rec = b.finish(types::SAMPLE, 0);
    let c = DecodeContext { read_format: rf::ALL, ..ctx(Endian::Big, t) };
    let Ok(s) = sample(rec, &c) else { panic!("{:?}", sample(rec, &c)) };
    let entries =
        [GroupEntry { value: 100, id: Some(1), lost: Some(0) }, GroupEntry { value: 200, id: Some(2), lost: Some(9) }];
    let group = ReadGroup { time_enabled: Some(20), time_running: Some(30), entries: Entries::from_slice(&entries) };
    assert_eq!(s.read, Some(ReadValues::Group(group)));
    assert_eq!(read_format::read_size(rf::ALL, 2), rec.len() - 8);
}

#[test]
fn branch_stack_hw_idx_and_the_kernels_no_stack_form() {
    use branch_sample_type as bst;
    let t = sample_type::BRANCH_STACK | sample_type::PERIOD;
    let c = DecodeContext { branch_sample_type: bst::HW_INDEX | bst::ANY, ..ctx(Endian::Little, t) };
    // The period (field 9), then a stack: nr 1, hw_idx 5, one entry.
    let mut b = Bytes::new(Endian::Little);
    b.u64(42).u64(1).u64(5).u64(0x10).u64(0x20).u64(0b11);
    let rec = b.finish(types::SAMPLE, 0);
    let Ok(s) = sample(rec, &c) else { panic!("{:?}", sample(rec, &c)) };
    let bs = s.branch_stack.unwrap();
    assert_eq!(bs.hw_idx, Some(5));
    let e = bs.entries.get(0).unwrap();
    assert_eq!(
        (e.from, e.to, e.flags.mispred(), e.flags.predicted(), e.flags.in_tx()),
        (0x10, 0x20, true, true, false)
    );
    assert_eq!(std::format!("{:?}", bs.entries), "[BranchEntry { from: 16, to: 32, flags: BranchFlags(0x3) }]");
    // nr 0 with hw_idx: read as perf reads it.
    let mut b = Bytes::new(Endian::Little);
    b.u64(42).u64(0).u64(5);
    let rec = b.finish(types::SAMPLE, 0);
    let Ok(s) = sample(rec, &c) else { panic!("{:?}", sample(rec, &c)) };
    assert_eq!(s.branch_stack.unwrap().hw_idx, Some(5));
    assert_eq!(s.period, Some(42));
    // The kernel's no-stack form: only nr = 0; the hw_idx reading runs out of bytes.
    let mut b = Bytes::new(Endian::Little);
    b.u64(42).u64(0);
    let rec = b.finish(types::SAMPLE, 0);
    let Ok(s) = sample(rec, &c) else { panic!("{:?}", sample(rec, &c)) };
    assert_eq!(s.branch_stack, Some(BranchStack::NONE));
    assert_eq!(s.period, Some(42));
    let mut out = [0u8; 64];
    let n = s.encode_in(&c, &mut out).unwrap();
    assert_eq!(&out[..n], rec);
    // A non-empty stack that does not fit is an error, not a re-read.
    let mut b = Bytes::new(Endian::Little);
    b.u64(42).u64(1).u64(5);
    let rec = b.finish(types::SAMPLE, 0);
    assert!(matches!(decode(rec, &c), Err(DecodeError::CountTooLarge { field: "sample.branch_stack.nr", .. })));
}

#[test]
fn branch_flags_are_renumbered_from_the_big_endian_bitfield() {
    let t = sample_type::BRANCH_STACK;
    // Big-endian GCC puts mispred in the top bit and cycles in bits 44..60.
    let mut b = Bytes::new(Endian::Big);
    b.u64(1).u64(0x10).u64(0x20).u64(1 << 63 | 0x1234 << 44);
    let rec = b.finish(types::SAMPLE, 0);
    let Ok(s) = sample(rec, &ctx(Endian::Big, t)) else { panic!("{:?}", sample(rec, &ctx(Endian::Big, t))) };
    let f = s.branch_stack.unwrap().entries.get(0).unwrap().flags;
    assert!(f.mispred() && !f.predicted());
    assert_eq!(f.cycles(), 0x1234);
    assert_eq!(f, BranchFlags(1 | 0x1234 << 4));
    let mut out = [0u8; 64];
    let n = s.encode_in(&ctx(Endian::Big, t), &mut out).unwrap();
    assert_eq!(&out[..n], rec);
    // Re-encoding in the other order renumbers the bitfield.
    let n = s.encode_in(&ctx(Endian::Little, t), &mut out).unwrap();
    assert_eq!(Endian::Little.u64(out[32..40].try_into().unwrap()), 1 | 0x1234 << 4);
    assert_eq!(n, rec.len());
}

#[test]
fn non_sample_records_read_the_trailer_from_the_end() {
    use sample_type as st;
    let t = st::TID | st::TIME | st::CPU | st::IDENTIFIER;
    let c = DecodeContext { sample_id_all: true, ..ctx(Endian::Little, t) };
    let mut b = Bytes::new(Endian::Little);
    b.u32(10).u32(11).put(b"bash\0\0\0\0").u32(10).u32(11).u64(777).u32(2).u32(0).u64(5);
    let rec = b.finish(types::COMM, misc::COMM_EXEC);
    let Ok(Record::Comm(comm)) = decode(rec, &c) else { panic!("{:?}", decode(rec, &c)) };
    assert_eq!(comm.comm, c"bash");
    assert!(comm.is_exec());
    let sid = comm.sample_id.unwrap();
    assert_eq!(
        (sid.tid, sid.time, sid.cpu.map(|c| c.cpu), sid.identifier),
        (Some(PidTid { pid: 10, tid: 11 }), Some(777), Some(2), Some(5))
    );
    assert_eq!(Record::Comm(comm).misc() & misc::COMM_EXEC, misc::COMM_EXEC);
    // Without sample_id_all, the trailer is part of the string area: still a string, no id.
    let c2 = DecodeContext { sample_id_all: false, ..c };
    let Ok(Record::Comm(comm)) = decode(rec, &c2) else { panic!() };
    assert_eq!((comm.comm, comm.sample_id), (c"bash", None));
}

/// NAMESPACES' links are read where they lie, in either byte order, print as a list, and
/// encode back to the same bytes (in bulk in the record's order, link by link in the other).
#[test]
fn namespace_links_read_in_either_order_and_encode_back() {
    for endian in [Endian::Little, Endian::Big] {
        let c = ctx(endian, 0);
        let mut b = Bytes::new(endian);
        b.u32(7).u32(8).u64(2).u64(0x11).u64(0x4000_0001).u64(0x22).u64(0x4000_0002);
        let rec = b.finish(types::NAMESPACES, 0);
        let Ok(Record::Namespaces(n)) = decode(rec, &c) else { panic!("a NAMESPACES record") };
        let want = [NamespaceLink { dev: 0x11, ino: 0x4000_0001 }, NamespaceLink { dev: 0x22, ino: 0x4000_0002 }];
        assert_eq!((n.pid, n.tid, n.links.len()), (7, 8, 2));
        assert_eq!(n.links.get(1), Some(want[1]));
        assert!(n.links.iter().eq(want));
        assert_eq!(n.links, Entries::from_slice(&want));
        assert_eq!(
            std::format!("{:?}", n.links),
            "[NamespaceLink { dev: 17, ino: 1073741825 }, NamespaceLink { dev: 34, ino: 1073741826 }]"
        );
        for out_endian in [Endian::Little, Endian::Big] {
            let mut out = [0u8; 64];
            let len = Record::Namespaces(n).encode_in(&ctx(out_endian, 0), &mut out).unwrap();
            let Ok(Record::Namespaces(back)) = decode(&out[..len], &ctx(out_endian, 0)) else { panic!() };
            assert_eq!(back, n, "{endian:?} record encoded in {out_endian:?} order");
            if out_endian == endian {
                assert_eq!(&out[..len], rec);
            }
        }
    }
}

/// The encoder takes an event's layout: a `Record` and a `Sample` encoded through `Encode` with
/// `EventLayout::new(&attr, endian)` are the bytes of the attr's context, in its byte order,
/// sized as written; a field the attr does not have is refused.
#[test]
fn the_encoder_writes_for_the_events_layout() {
    let attr = Attr {
        sample_type: sample_type::IP | sample_type::TID | sample_type::TIME,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::ZERO
    };
    for endian in [Endian::Little, Endian::Big] {
        let layout = EventLayout::new(&attr, endian);
        let c = DecodeContext::from_attr(&attr, endian);
        let s = Sample { ip: Some(0x1000), tid: Some(PidTid { pid: 3, tid: 4 }), time: Some(5), ..Sample::EMPTY };
        let sid = SampleId { tid: Some(PidTid { pid: 3, tid: 4 }), time: Some(6), ..SampleId::default() };
        let comm =
            Record::Comm(Comm { misc: 0, pid: 3, tid: 4, comm: c"sh", sample_id: Some(sid.masked(attr.sample_type)) });
        for (rec, want_size) in [(&s as &dyn Encode, 8 + 24), (&comm as &dyn Encode, 8 + 16 + 16)] {
            let mut out = [0u8; 64];
            assert_eq!(rec.encoded_size(&layout), Ok(want_size));
            assert_eq!(rec.encode(&layout, &mut out), Ok(want_size));
            assert_eq!(Header::parse(&out, endian).map(|h| usize::from(h.size)), Some(want_size), "{endian:?}");
            let mut short = [0u8; 8];
            assert_eq!(rec.encode(&layout, &mut short), Err(EncodeError::BufferTooSmall { need: want_size, have: 8 }));
        }
        let mut out = [0u8; 64];
        let n = s.encode(&layout, &mut out).unwrap();
        assert_eq!(sample(&out[..n], &c), Ok(s));
        let n = comm.encode(&layout, &mut out).unwrap();
        assert_eq!(decode(&out[..n], &c), Ok(comm));
        let extra = Sample { period: Some(1), ..s };
        assert_eq!(
            extra.encoded_size(&layout),
            Err(EncodeError::FieldMismatch { field: "sample.period", expected: false })
        );
    }
}

#[test]
fn mmap2_both_union_forms() {
    let c = ctx(Endian::Little, 0);
    let mut b = Bytes::new(Endian::Little);
    b.u32(1).u32(2).u64(0x1000).u64(0x2000).u64(0);
    b.put(&[3, 0, 0, 0]).put(&[0xaa, 0xbb, 0xcc]).put(&[0; 17]);
    b.u32(5).u32(2).put(b"/bin/sh\0");
    let rec = b.finish(types::MMAP2, misc::USER | misc::MMAP_BUILD_ID);
    let Ok(Record::Mmap2(m)) = decode(rec, &c) else { panic!() };
    assert_eq!(m.file, Mmap2File::BuildId(&[0xaa, 0xbb, 0xcc]));
    assert_eq!((m.prot, m.flags, m.filename), (5, 2, c"/bin/sh"));
    // Encoding the device form clears MMAP_BUILD_ID.
    let dev = Mmap2 { file: Mmap2File::Device { maj: 8, min: 1, ino: 99, ino_generation: 3 }, ..m };
    let mut out = [0u8; 128];
    let n = Record::Mmap2(dev).encode_in(&c, &mut out).unwrap();
    let Ok(Record::Mmap2(back)) = decode(&out[..n], &c) else { panic!() };
    assert_eq!(back.misc, misc::USER);
    assert_eq!(back.file, dev.file);
    // A build-id size above 20 is an error.
    let mut bad = [0u8; 128];
    bad[..rec.len()].copy_from_slice(rec);
    bad[40] = 21;
    assert!(matches!(
        decode(&bad[..rec.len()], &c),
        Err(DecodeError::InvalidValue { field: "mmap2.build_id_size", value: 21, offset: 40 })
    ));
}

#[test]
fn text_poke_padding_and_sizes() {
    let c = ctx(Endian::Little, 0);
    let rec = Record::TextPoke(TextPoke {
        misc: misc::KERNEL,
        addr: 0xffff_0000,
        old_bytes: &[1, 2, 3],
        new_bytes: &[4, 5],
        sample_id: None,
    });
    let mut out = [0u8; 64];
    let n = rec.encode_in(&c, &mut out).unwrap();
    // header 8 + addr 8 + (4 + 3 + 2 = 9, padded to 16).
    assert_eq!(n, 32);
    assert_eq!(decode(&out[..n], &c), Ok(rec));
}

#[test]
fn raw_is_padded_so_that_size_plus_4_is_a_multiple_of_8() {
    let c = ctx(Endian::Little, sample_type::RAW);
    let s = Sample { raw: Some(&[9; 5]), ..Sample::default() };
    let mut out = [0u8; 64];
    let n = s.encode_in(&c, &mut out).unwrap();
    assert_eq!(n, 8 + 4 + 12);
    assert_eq!(Endian::Little.u32(out[8..12].try_into().unwrap()), 12);
    let Ok(back) = sample(&out[..n], &c) else { panic!("{:?}", sample(&out[..n], &c)) };
    assert_eq!(back.raw, Some(&[9, 9, 9, 9, 9, 0, 0, 0, 0, 0, 0, 0][..]));
    // No raw data at all: size 4 and 4 zero bytes, as the kernel writes it.
    let s = Sample { raw: Some(&[]), ..Sample::default() };
    let n = s.encode_in(&c, &mut out).unwrap();
    assert_eq!(&out[8..n], &[4, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn every_error_is_typed_and_says_where() {
    let le = Endian::Little;
    // Header problems.
    assert_eq!(
        decode(&[1, 2, 3], &ctx(le, 0)),
        Err(DecodeError::Truncated { field: "header", offset: 0, need: 8, have: 3 })
    );
    let mut b = Bytes::new(le);
    b.u64(1);
    let rec = b.finish(types::LOST_SAMPLES, 0);
    assert_eq!(decode(&rec[..12], &ctx(le, 0)), Err(DecodeError::SizeMismatch { header_size: 16, len: 12 }));
    let mut zero = [0u8; 8];
    zero[..4].copy_from_slice(&le.put_u32(types::MMAP));
    assert_eq!(decode(&zero, &ctx(le, 0)), Err(DecodeError::SizeMismatch { header_size: 0, len: 8 }));
    // A fixed field past the end.
    let mut b = Bytes::new(le);
    b.u32(1);
    let rec = b.finish(types::LOST_SAMPLES, 0);
    assert_eq!(
        decode(rec, &ctx(le, 0)),
        Err(DecodeError::Truncated { field: "lost_samples.lost", offset: 8, need: 8, have: 4 })
    );
    // Counts that overflow or exceed the record.
    for nr in [u64::MAX, u64::MAX / 24 + 1, 1 << 61, 3] {
        let mut b = Bytes::new(le);
        b.u64(nr).u64(0);
        let rec = b.finish(types::SAMPLE, 0);
        let e = decode(rec, &ctx(le, sample_type::BRANCH_STACK));
        assert_eq!(e, Err(DecodeError::CountTooLarge { field: "sample.branch_stack.nr", count: nr, offset: 16 }));
        let e = decode(rec, &ctx(le, sample_type::CALLCHAIN));
        assert_eq!(e, Err(DecodeError::CountTooLarge { field: "sample.callchain.nr", count: nr, offset: 16 }));
        let c = DecodeContext { read_format: read_format::GROUP | read_format::ID, ..ctx(le, sample_type::READ) };
        assert!(matches!(decode(rec, &c), Err(DecodeError::CountTooLarge { field: "read.nr", .. })));
    }
    // A string without NUL.
    let mut b = Bytes::new(le);
    b.u64(1).put(b"12345678");
    let rec = b.finish(types::CGROUP, 0);
    assert_eq!(decode(rec, &ctx(le, 0)), Err(DecodeError::BadString { field: "cgroup.path", offset: 16 }));
    // Bytes the layout does not explain.
    let mut b = Bytes::new(le);
    b.u64(1).u64(2);
    let rec = b.finish(types::SAMPLE, 0);
    assert_eq!(
        decode(rec, &ctx(le, sample_type::IP)),
        Err(DecodeError::TrailingBytes { record: "PERF_RECORD_SAMPLE", offset: 16, extra: 8 })
    );
    let rec = b.finish(types::LOST_SAMPLES, 0);
    assert_eq!(
        decode(rec, &ctx(le, 0)),
        Err(DecodeError::TrailingBytes { record: "PERF_RECORD_LOST_SAMPLES", offset: 16, extra: 8 })
    );
    // A trailer larger than the body.
    let c = DecodeContext { sample_id_all: true, ..ctx(le, sample_type::SAMPLE_ID_BITS) };
    assert_eq!(decode(rec, &c), Err(DecodeError::Truncated { field: "sample_id", offset: 8, need: 48, have: 16 }));
    // A record that is exactly its body, decoded where sample_id_all asks for a trailer: its
    // writer wrote none. Named as such whether the trailer would fit in the body or not.
    let mut b = Bytes::new(le);
    b.u64(7).u64(3);
    let lost = b.finish(types::LOST, 0);
    for (sample_type, trailer) in [(sample_type::TID | sample_type::TIME, 16), (sample_type::SAMPLE_ID_BITS, 48)] {
        let c = DecodeContext { sample_id_all: true, ..ctx(le, sample_type) };
        assert_eq!(decode(lost, &c), Err(DecodeError::MissingSampleId { record: "PERF_RECORD_LOST", trailer }));
        // Too short for anything else stays a truncation of the field it cuts.
        let mut b = Bytes::new(le);
        b.u64(7);
        let short = b.finish(types::LOST, 0);
        assert!(matches!(decode(short, &c), Err(DecodeError::Truncated { .. })), "{sample_type:#x}");
    }
}

#[test]
fn errors_display_what_and_where() {
    use std::string::ToString;
    let e = DecodeError::CountTooLarge { field: "sample.callchain.nr", count: 9, offset: 16 };
    assert_eq!(e.to_string(), "sample.callchain.nr = 9 does not fit in the record (items start at offset 16)");
    let e = DecodeError::MissingSampleId { record: "PERF_RECORD_LOST", trailer: 16 };
    assert!(e.to_string().starts_with("PERF_RECORD_LOST has no room for the 16-byte sample_id trailer"), "{e}");
    let e = EncodeError::FieldMismatch { field: "sample.time", expected: true };
    assert_eq!(e.to_string(), "sample.time is required by the context but missing");
}

#[test]
fn every_prefix_of_a_full_sample_fails_cleanly() {
    use sample_type as st;
    let t = st::ALL & !st::WEIGHT;
    let c = DecodeContext {
        read_format: read_format::ALL,
        sample_regs_user: 0b101,
        sample_regs_intr: 0b11,
        branch_sample_type: branch_sample_type::HW_INDEX | branch_sample_type::COUNTERS,
        ..ctx(Endian::Little, t)
    };
    let entries = [GroupEntry { value: 1, id: Some(2), lost: Some(3) }];
    let branches = [BranchEntry { from: 1, to: 2, flags: BranchFlags(3) }];
    let s = Sample {
        identifier: Some(1),
        ip: Some(2),
        tid: Some(PidTid { pid: 3, tid: 4 }),
        time: Some(5),
        addr: Some(6),
        id: Some(7),
        stream_id: Some(8),
        cpu: Some(SampleCpu { cpu: 9, res: 0 }),
        period: Some(10),
        read: Some(ReadValues::Group(ReadGroup {
            time_enabled: Some(11),
            time_running: Some(12),
            entries: Entries::from_slice(&entries),
        })),
        callchain: Some(Entries::from_slice(&[13, 14])),
        raw: Some(&[15; 4]),
        branch_stack: Some(BranchStack {
            hw_idx: Some(16),
            entries: Entries::from_slice(&branches),
            counters: Some(Entries::from_slice(&[17])),
        }),
        regs_user: Some(Regs { abi: REGS_ABI_64, regs: Entries::from_slice(&[18, 19]) }),
        stack_user: Some(StackUser { data: &[20; 16], dyn_size: 8 }),
        weight: Some(Weight::Struct(WeightStruct { var1_dw: 21, var2_w: 22, var3_w: 23 })),
        data_src: Some(24),
        transaction: Some(25),
        regs_intr: Some(Regs { abi: REGS_ABI_32, regs: Entries::from_slice(&[26, 27]) }),
        phys_addr: Some(28),
        cgroup: Some(29),
        data_page_size: Some(30),
        code_page_size: Some(31),
        aux: Some(&[32; 8]),
        ..Sample::default()
    };
    let mut out = [0u8; 1024];
    let n = s.encode_in(&c, &mut out).unwrap();
    assert_eq!(sample(&out[..n], &c), Ok(s));
    for len in 8..n {
        let mut cut = [0u8; 1024];
        cut[..len].copy_from_slice(&out[..len]);
        cut[6..8].copy_from_slice(&Endian::Little.put_u16(len as u16));
        assert!(decode(&cut[..len], &c).is_err(), "prefix {len} decoded");
    }
}

#[test]
fn encoder_refuses_fields_that_disagree_with_the_context() {
    let c = ctx(Endian::Little, sample_type::IP | sample_type::REGS_USER);
    let mut out = [0u8; 64];
    let s = Sample { ip: Some(1), regs_user: Some(Regs::NONE), time: Some(3), ..Sample::default() };
    assert_eq!(s.encode_in(&c, &mut out), Err(EncodeError::FieldMismatch { field: "sample.time", expected: false }));
    let s = Sample { regs_user: Some(Regs::NONE), ..Sample::default() };
    assert_eq!(s.encode_in(&c, &mut out), Err(EncodeError::FieldMismatch { field: "sample.ip", expected: true }));
    let c = DecodeContext { sample_regs_user: 0b111, ..c };
    let s = Sample { ip: Some(1), regs_user: Some(Regs { abi: 2, regs: Entries::from_slice(&[1]) }), ..s };
    assert_eq!(
        s.encode_in(&c, &mut out),
        Err(EncodeError::CountMismatch { field: "sample.regs_user", expected: 3, got: 1 })
    );
    let sw = Record::Switch(Switch { misc: 0, sample_id: None });
    let with_trailer = DecodeContext { sample_id_all: true, ..c };
    assert_eq!(
        sw.encode_in(&with_trailer, &mut out),
        Err(EncodeError::FieldMismatch { field: "sample_id", expected: true })
    );
    assert_eq!(sw.encode_in(&c, &mut out[..7]), Err(EncodeError::BufferTooSmall { need: 8, have: 7 }));
    let name: &CStr = c"x";
    let big = [0u8; 70000];
    let s = Sample { ip: Some(1), regs_user: Some(Regs::NONE), raw: Some(&big), ..Sample::default() };
    let c = DecodeContext { sample_type: sample_type::IP | sample_type::REGS_USER | sample_type::RAW, ..c };
    assert!(matches!(s.encoded_size_in(&c), Err(EncodeError::TooLarge { .. })));
    let cg = Record::Cgroup(Cgroup { misc: 0, id: 1, path: name, sample_id: None });
    assert_eq!(cg.encoded_size_in(&DecodeContext::new(Endian::Big)), Ok(24));
}

#[test]
fn unknown_types_come_back_raw() {
    let c = ctx(Endian::Little, 0);
    let mut b = Bytes::new(Endian::Little);
    b.u64(0x1122).u16(5);
    let rec = b.finish(200, 0x33);
    let Ok(r @ Record::Unknown { header, body }) = decode(rec, &c) else { panic!() };
    assert_eq!((header.type_, header.misc, header.size, body.len()), (200, 0x33, 18, 10));
    assert_eq!(r.name(), "unknown");
    let mut out = [0u8; 32];
    assert_eq!(r.encode_in(&c, &mut out), Ok(18));
    assert_eq!(&out[..18], rec);
}

/// Fixed fields read as one block (`Reader::fixed`) are refused, when the record is cut inside
/// them, with the field that does not fit, its offset, and the bytes it needs and has — as
/// reading them one by one did. Every cut at 4-byte steps of MMAP, MMAP2, COMM, FORK and EXIT.
#[test]
fn a_cut_inside_fixed_fields_names_the_field() {
    let le = Endian::Little;
    let mmap = [("mmap.pid", 4), ("mmap.tid", 4), ("mmap.addr", 8), ("mmap.len", 8), ("mmap.pgoff", 8)];
    let mmap2 = [
        ("mmap2.pid", 4),
        ("mmap2.tid", 4),
        ("mmap2.addr", 8),
        ("mmap2.len", 8),
        ("mmap2.pgoff", 8),
        ("mmap2.maj", 4),
        ("mmap2.min", 4),
        ("mmap2.ino", 8),
        ("mmap2.ino_generation", 8),
        ("mmap2.prot", 4),
        ("mmap2.flags", 4),
    ];
    let comm = [("comm.pid", 4), ("comm.tid", 4)];
    let task = [("task.pid", 4), ("task.ppid", 4), ("task.tid", 4), ("task.ptid", 4), ("task.time", 8)];
    let cases: [(u32, &[(&str, usize)]); 5] = [
        (types::MMAP, &mmap),
        (types::MMAP2, &mmap2),
        (types::COMM, &comm),
        (types::FORK, &task),
        (types::EXIT, &task),
    ];
    for (type_, fields) in cases {
        let total: usize = fields.iter().map(|f| f.1).sum();
        for body in (0..total).step_by(4) {
            let mut b = Bytes::new(le);
            for _ in 0..body / 4 {
                b.u32(7);
            }
            let rec = b.finish(type_, 0);
            // The field the cut falls in, found by walking the sizes.
            let (mut at, mut want) = (0, None);
            for &(field, size) in fields {
                if at + size > body {
                    want = Some(DecodeError::Truncated { field, offset: 8 + at, need: size, have: body - at });
                    break;
                }
                at += size;
            }
            assert_eq!(decode(rec, &ctx(le, 0)).err(), want, "type {type_}, {body} body bytes");
        }
    }
}

/// A record a consumer handed out is read with the header it carries, in the native order:
/// attribution, the view and the complete decode take it as they take a walked record, and a
/// header that disagrees with the bytes (a consumer's would not) is caught by the decode's size
/// check.
#[test]
fn a_consumers_record_is_read_without_parsing_its_header_again() {
    let t = sample_type::IDENTIFIER | sample_type::IP | sample_type::TID;
    let mut set = EventSet::new([EventLayout::EMPTY; 2], [IdEntry::EMPTY; 4]);
    for id in [5, 6] {
        let e = set.add_event(&Attr { sample_type: t, ..Attr::ZERO }, Endian::NATIVE).unwrap();
        set.add_id(e, id).unwrap();
    }
    let mut b = Bytes::new(Endian::NATIVE);
    b.u64(6).u64(0x4000).u32(7).u32(8);
    let len = b.len;
    let bytes = &b.buf[..len];
    let mut rec = [0u8; 32];
    rec[..len].copy_from_slice(bytes);
    rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: len as u16 }.to_bytes(Endian::NATIVE));
    let raw = crate::consumer::ring_record(Header::parse(&rec, Endian::NATIVE).unwrap(), &rec[..len], 0);
    let attributed = set.attribute(&raw);
    let view = attributed.sample().unwrap();
    assert_eq!((attributed.event(), view.ip(), view.tid()), (Ok(1), Some(0x4000), Some(PidTid { pid: 7, tid: 8 })));
    let walked = Walker::new(&rec[..len], Endian::NATIVE).next().unwrap().unwrap();
    assert_eq!(set.attribute(&walked).event(), attributed.event());
    assert_eq!(attributed.decode(), decode(&rec[..len], set.event(1).unwrap().context()));
    let lying = set.attribute(&RawRecord { header: Header { size: 8, ..raw.header }, ..raw });
    assert!(matches!(lying.decode(), Err(DecodeError::SizeMismatch { .. })));
}

/// The decode's SAMPLE is a view, so a `Record` is as large as MMAP2's fields (a `match
/// rec.decode()` moves that much, not a SAMPLE's 25 decoded fields: BENCHMARKS.md, "the
/// decode's SAMPLE is its checked view").
#[test]
fn a_record_is_as_large_as_mmap2_not_a_samples_fields() {
    use core::mem::size_of;
    assert!(size_of::<SampleView<'_>>() <= size_of::<Mmap2<'_>>());
    assert!(size_of::<Record<'_>>() <= size_of::<Mmap2<'_>>() + 8, "MMAP2's fields and at most a tag");
    assert!(size_of::<Sample<'_>>() > 2 * size_of::<Record<'_>>(), "a SAMPLE's values are not in a Record");
}

/// The decode's check of a SAMPLE (`SampleView::check`: a length compare, or a walk over the
/// variable fields) gives exactly the complete decode's answer: each record accepted decodes to
/// the values encoded; a record 8 bytes too long, and every prefix cut at a word, fail with the
/// error `Sample`'s own decode gives.
#[test]
fn the_decodes_check_of_a_sample_answers_as_the_full_decode() {
    use read_format as rf;
    use sample_type as st;
    let ips = [0x10u64, 0x20, 0x30];
    let regs = [1u64, 2];
    let group = [GroupEntry { value: 5, id: Some(6), lost: None }, GroupEntry { value: 7, id: Some(8), lost: None }];
    let cases: [(u64, u64, Sample<'_>); 4] = [
        (
            st::IP | st::TID | st::TIME | st::PHYS_ADDR,
            0,
            Sample { ip: Some(1), tid: Some(PidTid::default()), time: Some(2), phys_addr: Some(3), ..Sample::EMPTY },
        ),
        (
            st::IP | st::CALLCHAIN,
            0,
            Sample { ip: Some(1), callchain: Some(Entries::from_slice(&ips)), ..Sample::EMPTY },
        ),
        (
            st::IP | st::CALLCHAIN | st::REGS_USER | st::STACK_USER | st::PHYS_ADDR,
            0,
            Sample {
                ip: Some(1),
                callchain: Some(Entries::from_slice(&ips)),
                regs_user: Some(Regs { abi: REGS_ABI_64, regs: Entries::from_slice(&regs) }),
                stack_user: Some(StackUser { data: &[9; 16], dyn_size: 8 }),
                phys_addr: Some(4),
                ..Sample::EMPTY
            },
        ),
        (
            st::READ | st::RAW | st::CGROUP | st::AUX,
            rf::GROUP | rf::ID,
            Sample {
                read: Some(ReadValues::Group(ReadGroup {
                    time_enabled: None,
                    time_running: None,
                    entries: Entries::from_slice(&group),
                })),
                raw: Some(&[1, 2, 3, 4]),
                cgroup: Some(5),
                aux: Some(&[6; 8]),
                ..Sample::EMPTY
            },
        ),
    ];
    for (t, read_format, s) in cases {
        for endian in [Endian::Little, Endian::Big] {
            let c = DecodeContext { read_format, sample_regs_user: 0b11, ..ctx(endian, t) };
            let mut out = [0u8; 256];
            let n = s.encode_in(&c, &mut out).unwrap();
            let full = |bytes: &[u8]| Sample::decode(bytes, 0, &c).map(|_| ());
            let checked = |bytes: &[u8]| decode(bytes, &c).map(|_| ());
            assert_eq!(sample(&out[..n], &c), Ok(s), "{t:#x}: the values encoded");
            // 8 bytes too many, then every prefix cut at a word.
            let header = |len: usize| Header { type_: types::SAMPLE, misc: 0, size: len as u16 }.to_bytes(endian);
            let mut long = out;
            long[..8].copy_from_slice(&header(n + 8));
            assert_eq!(checked(&long[..n + 8]), full(&long[..n + 8]), "{t:#x}: 8 bytes too many");
            assert!(checked(&long[..n + 8]).is_err());
            for len in (8..n).step_by(8) {
                let mut cut = out;
                cut[..8].copy_from_slice(&header(len));
                assert_eq!(checked(&cut[..len]), full(&cut[..len]), "{t:#x}: cut to {len} of {n}");
                assert!(checked(&cut[..len]).is_err(), "{t:#x}: cut to {len} of {n}");
            }
        }
    }
}
