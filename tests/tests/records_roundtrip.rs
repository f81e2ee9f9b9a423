//! Round trip of the record codec: random records of every type, under random
//! `sample_type` / `read_format` / `sample_id_all` / register masks / `branch_sample_type` and
//! both byte orders, encode → decode → equal. Also: the encoded size is what `encoded_size`
//! said and what the header says, re-encoding gives the same bytes, every shorter prefix is an
//! error (never a panic), and the producer's PERF_RECORD_LOST is the general encoder's.
//!
//! Coverage counters (records per type, samples with each sample_type bit) are printed and
//! the test fails if any is zero.
#![cfg(not(loom))]

use std::cell::RefCell;
use std::ffi::CString;

use perfring::record::*;
use perfring_tests::decode::{values as decode, Ctx, Values};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Number of record kinds the generator picks from: the 22 typed ones and Unknown.
const KINDS: usize = 23;

fn kind_name(k: usize) -> &'static str {
    if k < 22 {
        type_name(k as u32 + 1)
    } else {
        "unknown"
    }
}

/// Random attr fields and byte order.
fn context() -> impl Strategy<Value = Ctx> {
    (any::<u64>(), 0u64..32, any::<bool>(), any::<u64>(), any::<u64>(), (0u64..4, any::<u32>()), any::<bool>())
        .prop_map(|(st, rf, all, ru, ri, (bst, other), big)| Ctx {
            attr: Attr {
                sample_type: st & sample_type::ALL,
                read_format: rf,
                flags: if all { attr_flags::SAMPLE_ID_ALL } else { 0 },
                // Sparse masks most of the time, full ones sometimes.
                sample_regs_user: if ru % 4 == 0 { u64::MAX } else { ru & 0x0f0f_00ff_1234_5678 },
                sample_regs_intr: if ri % 4 == 0 { u64::MAX } else { ri & 0x00ff_0000_0f0f_f0f0 },
                branch_sample_type: u64::from(other) & 0x1_ffff
                    | if bst & 1 != 0 { branch_sample_type::HW_INDEX } else { 0 }
                    | if bst & 2 != 0 { branch_sample_type::COUNTERS } else { 0 },
                ..Attr::ZERO
            },
            endian: if big { Endian::Big } else { Endian::Little },
        })
}

/// The random material a record is built from (owned; records borrow it).
#[derive(Debug, Clone)]
struct Material {
    kind: usize,
    misc: u16,
    words: Vec<u64>,
    strings: Vec<CString>,
    raw: Vec<u8>,
    stack: Vec<u8>,
    aux: Vec<u8>,
    bytes: Vec<u8>,
    counts: Vec<usize>,
    regs: Vec<u64>,
    flags: Vec<bool>,
    sid: SampleId,
}

fn cstring() -> impl Strategy<Value = CString> {
    vec(1u8..=255, 0..40).prop_map(|v| CString::new(v).unwrap())
}

fn material() -> impl Strategy<Value = Material> {
    (
        (0..KINDS, any::<u16>(), vec(any::<u64>(), 48), vec(cstring(), 2)),
        // RAW of 8k + 4 bytes, stack and AUX of 8k: the sizes the kernel writes, so the
        // decoded bytes are exactly the generated ones.
        (0usize..8).prop_flat_map(|k| vec(any::<u8>(), 8 * k + 4)),
        (0usize..6).prop_flat_map(|k| vec(any::<u8>(), 8 * k)),
        (0usize..6).prop_flat_map(|k| vec(any::<u8>(), 8 * k)),
        vec(any::<u8>(), 0..48),
        (vec(0usize..6, 6), vec(any::<u64>(), 66), vec(any::<bool>(), 8)),
        any::<[u64; 6]>(),
    )
        .prop_map(|((kind, misc, words, strings), raw, stack, aux, bytes, (counts, regs, flags), s)| Material {
            kind,
            misc,
            words,
            strings,
            raw,
            stack,
            aux,
            bytes,
            counts,
            regs,
            flags,
            sid: SampleId {
                tid: Some(PidTid { pid: s[0] as u32, tid: (s[0] >> 32) as u32 }),
                time: Some(s[1]),
                id: Some(s[2]),
                stream_id: Some(s[3]),
                cpu: Some(SampleCpu { cpu: s[4] as u32, res: (s[4] >> 32) as u32 }),
                identifier: Some(s[5]),
            },
        })
}

/// Arrays shaped for the context (entries with exactly the optional fields it asks for).
struct Shaped {
    group: Vec<GroupEntry>,
    branches: Vec<BranchEntry>,
    links: Vec<NamespaceLink>,
}

fn shape(m: &Material, ctx: &Ctx) -> Shaped {
    let w = &m.words;
    let has = |bit: u64| ctx.attr.read_format & bit != 0;
    Shaped {
        group: (0..m.counts[0])
            .map(|i| GroupEntry {
                value: w[i],
                id: has(read_format::ID).then_some(w[i + 8]),
                lost: has(read_format::LOST).then_some(w[i + 16]),
            })
            .collect(),
        branches: (0..m.counts[1])
            .map(|i| BranchEntry { from: w[i], to: w[i + 10], flags: BranchFlags(w[i + 20]) })
            .collect(),
        links: (0..m.counts[2] + 2).map(|i| NamespaceLink { dev: w[i], ino: w[i + 30] }).collect(),
    }
}

/// Build a record of `m.kind`, valid for `ctx`, borrowing from `m` and `s`.
fn build<'a>(m: &'a Material, s: &'a Shaped, ctx: &Ctx) -> Values<'a> {
    let w = &m.words;
    let sid = ctx.sample_id_all().then(|| m.sid.masked(ctx.attr.sample_type));
    let misc = m.misc;
    let read = |base: usize| {
        let opt = |bit: u64, v: u64| (ctx.attr.read_format & bit != 0).then_some(v);
        if ctx.attr.read_format & read_format::GROUP != 0 {
            ReadValues::Group(ReadGroup {
                time_enabled: opt(read_format::TOTAL_TIME_ENABLED, w[base]),
                time_running: opt(read_format::TOTAL_TIME_RUNNING, w[base + 1]),
                entries: Entries::from_slice(&s.group),
            })
        } else {
            ReadValues::Single(ReadSingle {
                value: w[base + 2],
                time_enabled: opt(read_format::TOTAL_TIME_ENABLED, w[base]),
                time_running: opt(read_format::TOTAL_TIME_RUNNING, w[base + 1]),
                id: opt(read_format::ID, w[base + 3]),
                lost: opt(read_format::LOST, w[base + 4]),
            })
        }
    };
    let str0 = m.strings[0].as_c_str();
    Values::Record(match m.kind {
        0 => Record::Mmap(Mmap {
            misc,
            pid: w[0] as u32,
            tid: w[1] as u32,
            addr: w[2],
            len: w[3],
            pgoff: w[4],
            filename: str0,
            sample_id: sid,
        }),
        1 => Record::Lost(Lost { misc, id: w[0], lost: w[1], sample_id: sid }),
        2 => Record::Comm(Comm { misc, pid: w[0] as u32, tid: w[1] as u32, comm: str0, sample_id: sid }),
        3 | 6 => {
            let t = Task {
                misc,
                pid: w[0] as u32,
                ppid: w[1] as u32,
                tid: w[2] as u32,
                ptid: w[3] as u32,
                time: w[4],
                sample_id: sid,
            };
            if m.kind == 3 {
                Record::Exit(t)
            } else {
                Record::Fork(t)
            }
        }
        4 | 5 => {
            let t = Throttle { misc, time: w[0], id: w[1], stream_id: w[2], sample_id: sid };
            if m.kind == 4 {
                Record::Throttle(t)
            } else {
                Record::Unthrottle(t)
            }
        }
        7 => Record::Read(ReadRecord { misc, pid: w[0] as u32, tid: w[1] as u32, values: read(5), sample_id: sid }),
        8 => return Values::Sample(sample(m, s, ctx, read(5))),
        9 => {
            let build_id = m.flags[0];
            let file = if build_id {
                Mmap2File::BuildId(&m.bytes[..m.bytes.len().min(BUILD_ID_MAX)])
            } else {
                Mmap2File::Device { maj: w[5] as u32, min: w[6] as u32, ino: w[7], ino_generation: w[8] }
            };
            // The encoder keeps MMAP_BUILD_ID in step with the union's form.
            let misc = if build_id { misc | misc::MMAP_BUILD_ID } else { misc & !misc::MMAP_BUILD_ID };
            Record::Mmap2(Mmap2 {
                misc,
                pid: w[0] as u32,
                tid: w[1] as u32,
                addr: w[2],
                len: w[3],
                pgoff: w[4],
                file,
                prot: w[9] as u32,
                flags: w[10] as u32,
                filename: str0,
                sample_id: sid,
            })
        }
        10 => Record::Aux(Aux { misc, aux_offset: w[0], aux_size: w[1], flags: w[2], sample_id: sid }),
        11 => Record::ItraceStart(ItraceStart { misc, pid: w[0] as u32, tid: w[1] as u32, sample_id: sid }),
        12 => Record::LostSamples(LostSamples { misc, lost: w[0], sample_id: sid }),
        13 => Record::Switch(Switch { misc, sample_id: sid }),
        14 => Record::SwitchCpuWide(SwitchCpuWide {
            misc,
            next_prev_pid: w[0] as u32,
            next_prev_tid: w[1] as u32,
            sample_id: sid,
        }),
        15 => Record::Namespaces(Namespaces {
            misc,
            pid: w[0] as u32,
            tid: w[1] as u32,
            links: Entries::from_slice(&s.links),
            sample_id: sid,
        }),
        16 => Record::Ksymbol(Ksymbol {
            misc,
            addr: w[0],
            len: w[1] as u32,
            ksym_type: w[2] as u16,
            flags: w[3] as u16,
            name: m.strings[1].as_c_str(),
            sample_id: sid,
        }),
        17 => Record::BpfEvent(BpfEvent {
            misc,
            event_type: w[0] as u16,
            flags: w[1] as u16,
            id: w[2] as u32,
            tag: w[3].to_le_bytes(),
            sample_id: sid,
        }),
        18 => Record::Cgroup(Cgroup { misc, id: w[0], path: str0, sample_id: sid }),
        19 => {
            let split = m.counts[3].min(m.bytes.len());
            Record::TextPoke(TextPoke {
                misc,
                addr: w[0],
                old_bytes: &m.bytes[..split],
                new_bytes: &m.bytes[split..],
                sample_id: sid,
            })
        }
        20 => Record::AuxOutputHwId(AuxOutputHwId { misc, hw_id: w[0], sample_id: sid }),
        21 => Record::CallchainDeferred(CallchainDeferred {
            misc,
            cookie: w[0],
            ips: Entries::from_slice(&w[1..1 + m.counts[4] * 3]),
            sample_id: sid,
        }),
        _ => {
            // Any type the decoder does not know: 23..64 and perf's, 64 and up.
            let type_ = 23 + (w[0] % 100) as u32;
            let size = (8 + m.bytes.len()) as u16;
            Record::Unknown { header: Header { type_, misc, size }, body: &m.bytes }
        }
    })
}

/// A SAMPLE with exactly the fields of `ctx.attr.sample_type`.
fn sample<'a>(m: &'a Material, s: &'a Shaped, ctx: &Ctx, read: ReadValues<'a>) -> Sample<'a> {
    use sample_type as st;
    let t = ctx.attr.sample_type;
    let w = &m.words;
    let on = |bit: u64| t & bit != 0;
    let v = |bit: u64, i: usize| on(bit).then_some(w[i]);
    let regs = |mask: u64, abi: u64, from: usize| {
        let n = mask.count_ones() as usize;
        if abi == REGS_ABI_NONE {
            Regs::NONE
        } else {
            Regs { abi, regs: Entries::from_slice(&m.regs[from..from + n]) }
        }
    };
    let abi = |i: usize| [REGS_ABI_NONE, REGS_ABI_32, REGS_ABI_64, w[i] | 3][m.counts[i % 6] % 4];
    let hw_idx_flag = ctx.attr.branch_sample_type & branch_sample_type::HW_INDEX != 0;
    let counters_flag = ctx.attr.branch_sample_type & branch_sample_type::COUNTERS != 0;
    let branch = if hw_idx_flag && m.flags[1] {
        // The kernel's "no stack from the PMU" form.
        BranchStack::NONE
    } else {
        BranchStack {
            hw_idx: hw_idx_flag.then_some(w[40]),
            entries: Entries::from_slice(&s.branches),
            counters: counters_flag.then(|| Entries::from_slice(&w[..s.branches.len()])),
        }
    };
    Sample {
        misc: m.misc,
        identifier: v(st::IDENTIFIER, 0),
        ip: v(st::IP, 1),
        tid: on(st::TID).then_some(PidTid { pid: w[2] as u32, tid: (w[2] >> 32) as u32 }),
        time: v(st::TIME, 3),
        addr: v(st::ADDR, 4),
        id: v(st::ID, 5),
        stream_id: v(st::STREAM_ID, 6),
        cpu: on(st::CPU).then_some(SampleCpu { cpu: w[7] as u32, res: (w[7] >> 32) as u32 }),
        period: v(st::PERIOD, 8),
        read: on(st::READ).then_some(read),
        callchain: on(st::CALLCHAIN).then(|| Entries::from_slice(&w[10..10 + m.counts[5] * 4])),
        raw: on(st::RAW).then_some(&m.raw[..]),
        branch_stack: on(st::BRANCH_STACK).then_some(branch),
        regs_user: on(st::REGS_USER).then(|| regs(ctx.attr.sample_regs_user, abi(2), 0)),
        stack_user: on(st::STACK_USER).then(|| {
            if m.stack.is_empty() {
                StackUser::default()
            } else {
                StackUser { data: &m.stack, dyn_size: w[11] % (m.stack.len() as u64 + 1) }
            }
        }),
        weight: on(st::WEIGHT_TYPE).then(|| {
            if on(st::WEIGHT) {
                Weight::Full(w[12])
            } else {
                Weight::Struct(WeightStruct::from_u64(w[12]))
            }
        }),
        data_src: v(st::DATA_SRC, 13),
        transaction: v(st::TRANSACTION, 14),
        regs_intr: on(st::REGS_INTR).then(|| regs(ctx.attr.sample_regs_intr, abi(3), 1)),
        phys_addr: v(st::PHYS_ADDR, 15),
        cgroup: v(st::CGROUP, 16),
        data_page_size: v(st::DATA_PAGE_SIZE, 17),
        code_page_size: v(st::CODE_PAGE_SIZE, 18),
        aux: on(st::AUX).then_some(&m.aux[..]),
    }
}

/// Encode, decode, compare; re-encode and compare bytes; cut short and expect errors.
fn round_trip(rec: &Values<'_>, ctx: &Ctx) -> Result<usize, TestCaseError> {
    let layout = ctx.layout();
    let size = rec.encoded_size(&layout).map_err(|e| TestCaseError::fail(format!("{e}: {rec:?}")))?;
    let mut buf = vec![0xa5u8; size + 8];
    let n = rec.encode(&layout, &mut buf).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    prop_assert_eq!(n, size);
    prop_assert!(buf[n..].iter().all(|&b| b == 0xa5), "wrote past the record");
    let bytes = &buf[..n];
    let header = Header::parse(bytes, ctx.endian).unwrap();
    prop_assert_eq!(usize::from(header.size), n);
    prop_assert_eq!(header.type_, rec.type_());
    if !matches!(rec, Values::Record(Record::Unknown { .. })) {
        prop_assert_eq!(n % 8, 0, "typed records are 8-byte aligned");
    }
    let back = decode(bytes, ctx).map_err(|e| TestCaseError::fail(format!("{e}\n{rec:#?}")))?;
    prop_assert_eq!(&back, rec);
    if let Values::Sample(s) = &back {
        // The view reads every field as the complete decode does, the tail after RAW included.
        let raw = perfring_tests::decode::raw(bytes, ctx).unwrap();
        let attributed = perfring_tests::decode::events_of(ctx).attribute(&raw);
        let v = attributed.sample().map_err(|e| TestCaseError::fail(format!("view: {e}")))?;
        prop_assert_eq!(v.read(), Ok(s.read));
        // The READ counters, as the complete decode has them.
        let counters: Vec<GroupEntry> = v.read().unwrap().map(|r| r.counters().collect()).unwrap_or_default();
        prop_assert_eq!(counters, counters_of(s.read));
        prop_assert_eq!(v.callchain(), Ok(s.callchain));
        prop_assert_eq!(v.raw(), Ok(s.raw));
        prop_assert_eq!(v.branch_stack(), Ok(s.branch_stack));
        prop_assert_eq!(v.regs_user(), Ok(s.regs_user));
        prop_assert_eq!(v.stack_user(), Ok(s.stack_user));
        prop_assert_eq!(v.weight(), Ok(s.weight));
        prop_assert_eq!(v.data_src(), Ok(s.data_src));
        prop_assert_eq!(v.transaction(), Ok(s.transaction));
        prop_assert_eq!(v.regs_intr(), Ok(s.regs_intr));
        prop_assert_eq!(v.phys_addr(), Ok(s.phys_addr));
        prop_assert_eq!(v.cgroup(), Ok(s.cgroup));
        prop_assert_eq!(v.data_page_size(), Ok(s.data_page_size));
        prop_assert_eq!(v.code_page_size(), Ok(s.code_page_size));
        prop_assert_eq!(v.aux(), Ok(s.aux));
    }
    // Decoded values borrow the buffer; encoding them again gives the same bytes.
    let mut again = vec![0u8; n];
    prop_assert_eq!(back.encode(&layout, &mut again), Ok(n));
    prop_assert_eq!(&again[..], bytes);
    // Too small a buffer is an error, and nothing is written.
    let mut small = vec![0u8; n - 1];
    prop_assert_eq!(rec.encode(&layout, &mut small), Err(EncodeError::BufferTooSmall { need: n, have: n - 1 }));
    prop_assert!(small.iter().all(|&b| b == 0));
    // Every shorter record (header.size adjusted) fails to decode, without panicking.
    for len in (8..n).step_by(if n > 256 { 7 } else { 1 }) {
        let mut cut = bytes[..len].to_vec();
        cut[6..8].copy_from_slice(&ctx.endian.put_u16(len as u16));
        let r = decode(&cut, ctx);
        if let Values::Sample(s) = rec {
            // The READ counters of a prefix: an error, or (READ wholly inside the prefix) the
            // same counters; never a read past it.
            let raw = perfring_tests::decode::raw(&cut, ctx).unwrap();
            let attributed = perfring_tests::decode::events_of(ctx).attribute(&raw);
            if let Ok(Some(c)) = attributed.sample().and_then(|v| v.read()) {
                prop_assert_eq!(c.counters().collect::<Vec<_>>(), counters_of(s.read), "prefix {} of {}", len, n);
            }
        }
        if !matches!(rec, Values::Record(Record::Unknown { .. })) {
            // A shorter string area or an unknown type can still be a valid record.
            let string_kind = matches!(
                rec,
                Values::Record(
                    Record::Mmap(_) | Record::Mmap2(_) | Record::Comm(_) | Record::Cgroup(_) | Record::Ksymbol(_)
                )
            );
            // A SAMPLE with HW_INDEX and nr = 0 may also read as the kernel's no-stack form
            // (see `BranchStack`): a prefix 8 bytes short can then be a valid sample.
            let ambiguous = matches!(rec, Values::Sample(s) if s.branch_stack.is_some_and(|b| b.entries.is_empty()))
                && ctx.attr.branch_sample_type & branch_sample_type::HW_INDEX != 0;
            prop_assert!(r.is_err() || string_kind || ambiguous, "prefix {len} of {n} decoded: {r:?}");
        }
    }
    Ok(n)
}

/// The counters perf delivers from a READ block, as `ReadValues::counters` yields them.
fn counters_of(read: Option<ReadValues<'_>>) -> Vec<GroupEntry> {
    match read {
        None => Vec::new(),
        Some(ReadValues::Single(s)) => vec![GroupEntry { value: s.value, id: s.id, lost: s.lost }],
        Some(ReadValues::Group(g)) => {
            g.entries.iter().map(|e| GroupEntry { value: e.value, id: e.id, lost: e.lost }).collect()
        }
    }
}

#[derive(Default)]
struct Coverage {
    kinds: [usize; KINDS],
    sample_bits: [usize; 25],
    big: usize,
    group_reads: usize,
    no_stack_form: usize,
    with_trailer: usize,
    bytes: usize,
}

#[test]
fn random_records_of_every_type_round_trip() {
    let cases = 3000;
    let mut runner = TestRunner::new(Config { cases, source_file: Some(file!()), ..Config::default() });
    let cov = RefCell::new(Coverage::default());
    let start = std::time::Instant::now();
    runner
        .run(&(context(), material()), |(ctx, m)| {
            let shaped = shape(&m, &ctx);
            let rec = build(&m, &shaped, &ctx);
            let n = round_trip(&rec, &ctx)?;
            let mut c = cov.borrow_mut();
            c.kinds[m.kind] += 1;
            c.bytes += n;
            c.big += usize::from(ctx.endian == Endian::Big);
            c.with_trailer += usize::from(rec.sample_id().is_some());
            if let Values::Sample(s) = &rec {
                for (bit, count) in c.sample_bits.iter_mut().enumerate() {
                    *count += usize::from(ctx.attr.sample_type & (1 << bit) != 0);
                }
                c.group_reads += usize::from(matches!(s.read, Some(ReadValues::Group(_))));
                c.no_stack_form += usize::from(s.branch_stack == Some(BranchStack::NONE));
            }
            Ok(())
        })
        .unwrap();
    let c = cov.into_inner();
    println!("{cases} cases in {:?}, {} bytes encoded and decoded", start.elapsed(), c.bytes);
    for (k, n) in c.kinds.iter().enumerate() {
        println!("  {:32} {n}", kind_name(k));
    }
    println!(
        "  big-endian {}, with sample_id trailer {}, samples with group reads {}, no-stack branch form {}",
        c.big, c.with_trailer, c.group_reads, c.no_stack_form
    );
    println!("  samples per sample_type bit: {:?}", c.sample_bits);
    assert!(c.kinds.iter().all(|&n| n > 0), "a record type was never generated");
    assert!(c.sample_bits.iter().all(|&n| n > 0), "a sample_type bit was never set");
    assert!(c.big > 0 && c.with_trailer > 0 && c.group_reads > 0 && c.no_stack_form > 0);
}

#[test]
fn every_sample_bit_at_once_round_trips_in_both_orders() {
    let mut runner = TestRunner::new(Config { cases: 300, source_file: Some(file!()), ..Config::default() });
    runner
        .run(&(context(), material()), |(ctx, m)| {
            let ctx = Ctx { attr: Attr { sample_type: sample_type::ALL & !sample_type::WEIGHT, ..ctx.attr }, ..ctx };
            let shaped = shape(&m, &ctx);
            let as_read = Material { kind: 7, ..m.clone() };
            let read = build(&as_read, &shaped, &ctx);
            let Values::Record(Record::Read(r)) = read else { unreachable!() };
            let rec = Values::Sample(sample(&m, &shaped, &ctx, r.values));
            round_trip(&rec, &ctx)?;
            Ok(())
        })
        .unwrap();
}

/// The PERF_RECORD_LOST a producer writes before the first record after drops is the
/// general encoder's, for any writer id, count and trailer, and decodes back.
#[test]
fn the_producers_lost_record_is_the_general_encoders() {
    use perfring::memory::Mapping;
    use perfring::producer::{EventIdentity, OutputError, ProducerConfig};
    let mut runner = TestRunner::new(Config { cases: 256, source_file: Some(file!()), ..Config::default() });
    runner
        .run(&(context(), any::<(u64, u8, bool)>(), material()), |(ctx, (id, drops, trailer), m)| {
            let flags = if trailer { attr_flags::SAMPLE_ID_ALL } else { 0 };
            let ctx = Ctx { attr: Attr { flags, ..ctx.attr }, endian: Endian::NATIVE };
            let sample_id = trailer.then(|| m.sid.masked(ctx.attr.sample_type));
            let writer = EventIdentity { id, sample_id: sample_id.map(|sid| (ctx.attr.sample_type, sid)) };
            #[repr(C, align(8))]
            struct Buf([u8; 4096 + 4096]);
            let mut buf = Box::new(Buf([0; 4096 + 4096]));
            let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
            let (producer, mut consumer) = perfring::split(&mut map, ProducerConfig::default()).unwrap();
            let record = |size: u16| Header { type_: types::SAMPLE, misc: 0, size }.to_bytes(Endian::NATIVE);
            producer.pause_output(true);
            for _ in 0..=drops {
                prop_assert_eq!(producer.output(&record(8), &writer), Err(OutputError::Paused));
            }
            producer.pause_output(false);
            producer.output(&record(8), &writer).unwrap();
            let lost_rec = Record::Lost(Lost { misc: 0, id, lost: u64::from(drops) + 1, sample_id });
            let mut want = [0u8; 80];
            let n = lost_rec.encode(&ctx.layout(), &mut want).unwrap();
            let mut got = Vec::new();
            consumer.for_each(&mut [0u8; 256], |r| got.push(r.bytes.to_vec())).unwrap();
            prop_assert_eq!(got.len(), 2, "the LOST record, then the record");
            prop_assert_eq!(&got[0][..], &want[..n]);
            prop_assert_eq!(decode(&got[0], &ctx), Ok(Values::Record(lost_rec)));
            Ok(())
        })
        .unwrap();
}
