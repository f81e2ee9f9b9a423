//! `make bench-bpf`: the readers of `bpf_perf_event_output` (BPF_MAP_TYPE_PERF_EVENT_ARRAY)
//! side by side — perfring-linux's `PerfEventArray`, aya's `PerfEventArray` (0.14, the newest
//! release this toolchain builds) and libbpf's `perf_buffer` (Debian's libbpf 1.1, by FFI) — by
//! the method of the kernel's `tools/testing/selftests/bpf/benchs/bench_ringbufs.c`:
//!
//! * the producer is a BPF program (perfring-test-support's `OutputProgram`: one
//!   `bpf_perf_event_output` of an 8- or 256-byte payload per run, its failed outputs counted in
//!   an array map) run by `BPF_PROG_TEST_RUN` with a repeat count of 1,000, again and again, on
//!   a thread pinned to CPU 0;
//! * "parallel": the reader runs on CPU 1 (the kernel's "single-producer, parallel producer");
//!   "back-to-back": one thread on CPU 1 triggers 500 runs and then reads, in turn
//!   (`--rb-b2b`: no cross-CPU traffic, the bare cost of producing, waking and reading);
//! * wakeups per record (libbpf's and aya's defaults, `wakeup_events = 1`) or sampled, one per
//!   500 records (`--rb-sampled --rb-sample-rate 500`: libbpf's `perf_buffer__new_raw` with
//!   that attr, perfring's `Wakeup::Events(500)`; aya has no setting: n/a), and perfring's
//!   default (a watermark of a quarter of the ring).
//!
//! Every reader touches each payload the same way (its first 8 bytes into a checksum). Columns:
//! events/s delivered (read by the reader, over the producing time), lost as the reader reports
//! it and as the program counted it (its helper's failures), whether in every run the events
//! read plus those failures are the program's runs, the reader thread's CPU time per million
//! events (`CLOCK_THREAD_CPUTIME_ID`; back-to-back, less the time of the
//! thread's `BPF_PROG_TEST_RUN` calls and of the clock's own reads around them,
//! `common/bpf.rs`' `clock_bracket`). Each row is the median of `ROUNDS` runs, the readers
//! interleaved within a round; `BENCH_SECONDS` sets a run's length. The run and the tables are
//! `common/bpf.rs`', shared with the ring buffer's benchmark.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use perfring_linux::{PerfEventArray, RawSample, Wakeup};

#[path = "common/bpf.rs"]
mod common;
use common::{
    epoll_of, epoll_wait, first_word, run_once, seconds, tables, Bench, Finished, Producer, PRODUCER_CPU, READER_CPU,
    ROUNDS,
};
use perfring_test_support::bpf::{self, OutputProgram};

/// Data pages per CPU's ring for every reader ("matched"), but aya's default row (2).
const PAGES: usize = 64;
/// The sampled mode's wakeup rate (bench_ringbufs' default `--rb-sample-rate`).
const SAMPLE_RATE: u32 = 500;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Reader {
    Perfring(Option<Wakeup>),
    /// perfring with `wakeup_events n` and no batch interval: a wait for a wakeup after every
    /// read, libbpf's and aya's policy.
    PerfringStrict(u32),
    /// perfring's default wakeup over a ring of this many pages.
    PerfringPages(usize),
    Aya {
        pages: Option<usize>,
    },
    Libbpf {
        sample_rate: Option<u32>,
    },
}

impl Reader {
    fn name(self) -> String {
        match self {
            Reader::Perfring(None) => "perfring, default (watermark ring/4)".into(),
            Reader::Perfring(Some(Wakeup::Events(n))) => format!("perfring, wakeup_events {n}"),
            Reader::Perfring(Some(Wakeup::Watermark(b))) => format!("perfring, watermark {b}"),
            Reader::PerfringStrict(n) => format!("perfring, wakeup_events {n}, no batch interval"),
            Reader::PerfringPages(pages) => format!("perfring, default watermark, {pages} pages"),
            Reader::Aya { pages: None } => "aya, default (2 pages, wakeup_events 1)".into(),
            Reader::Aya { pages: Some(_) } => "aya, wakeup_events 1 (its only)".into(),
            Reader::Libbpf { sample_rate: None } => "libbpf perf_buffer__new (wakeup_events 1)".into(),
            Reader::Libbpf { sample_rate: Some(n) } => format!("libbpf perf_buffer__new_raw, wakeup_events {n}"),
        }
    }
}

impl Producer for OutputProgram {
    fn run(&self, repeat: u32) {
        OutputProgram::run(self, repeat).expect("BPF_PROG_TEST_RUN");
    }
    fn runs_and_failed(&self) -> (u64, u64) {
        [PRODUCER_CPU, READER_CPU]
            .iter()
            .map(|&c| self.counts(c).unwrap_or_default())
            .fold((0, 0), |a, c| (a.0 + c.0, a.1 + c.1))
    }
}

fn open(reader: Reader, map: OwnedFd) -> Box<dyn Bench> {
    match reader {
        Reader::Perfring(wakeup) => perfring_bench(map, wakeup, PAGES, true),
        Reader::PerfringStrict(n) => perfring_bench(map, Some(Wakeup::Events(n)), PAGES, false),
        Reader::PerfringPages(pages) => perfring_bench(map, None, pages, true),
        Reader::Aya { pages } => Box::new(aya_bench::AyaBench::new(map, pages)),
        Reader::Libbpf { sample_rate } => Box::new(libbpf_bench::LibbpfBench::new(map, sample_rate)),
    }
}

/// perfring-linux's `PerfEventArray` over the bench's map, read as its docs show: `build` takes
/// the program's closure, whose type is the reader's parameter `F` (not boxed: the compiler sees
/// the callback, as in a user's program; the run picks its reader through `Box<dyn Bench>`).
struct PerfringBench<F: FnMut(&RawSample<'_>)> {
    reader: PerfEventArray<F>,
    counts: std::rc::Rc<std::cell::Cell<(u64, u64)>>,
}

fn perfring_bench(map: OwnedFd, wakeup: Option<Wakeup>, pages: usize, default_policy: bool) -> Box<dyn Bench> {
    let counts = std::rc::Rc::new(std::cell::Cell::new((0u64, 0u64)));
    let c = counts.clone();
    let on_sample = move |s: &RawSample<'_>| {
        let (a, b) = s.parts();
        let (n, sum) = c.get();
        c.set((n + 1, sum ^ first_word(a, b)));
    };
    let mut builder = PerfEventArray::builder().map(map).data_pages(pages);
    if let Some(w) = wakeup {
        builder = builder.wakeup(w);
    }
    let mut reader = builder.build(on_sample).expect("PerfEventArray");
    if !default_policy {
        reader.batch_interval(None);
    }
    Box::new(PerfringBench { reader, counts })
}

impl<F: FnMut(&RawSample<'_>)> Bench for PerfringBench<F> {
    fn read(&mut self, timeout_ms: i32) {
        self.reader.poll(Some(Duration::from_millis(timeout_ms as u64))).expect("poll");
    }
    fn finish(&mut self) -> Finished {
        self.reader.flush().expect("flush");
        let (events, checksum) = self.counts.get();
        Finished { events, lost_reported: Some(self.reader.lost_total()), checksum }
    }
}

/// aya 0.14's `PerfEventArray`, adopting the bench's map (`MapData::from_fd`), one
/// `PerfEventArrayBuffer` per CPU polled through epoll and drained with `for_each`, as its docs
/// show.
mod aya_bench {
    use super::*;
    use aya::maps::perf::{PerfEvent, PerfEventArrayBuffer};
    use aya::maps::{Map, MapData, PerfEventArray as AyaArray};

    pub struct AyaBench {
        buffers: Vec<PerfEventArrayBuffer<MapData>>,
        epoll: OwnedFd,
        events: u64,
        lost: u64,
        checksum: u64,
    }

    impl AyaBench {
        pub fn new(map: OwnedFd, pages: Option<usize>) -> Self {
            let data = MapData::from_fd(map).expect("aya MapData::from_fd");
            let mut array: AyaArray<MapData> =
                AyaArray::try_from(Map::from_map_data(data).expect("aya Map")).expect("aya PerfEventArray");
            let buffers: Vec<_> = [PRODUCER_CPU, READER_CPU]
                .iter()
                .map(|&cpu| array.open(cpu, pages).expect("aya PerfEventArray::open"))
                .collect();
            let epoll = epoll_of(buffers.iter().map(|b| b.as_fd()));
            AyaBench { buffers, epoll, events: 0, lost: 0, checksum: 0 }
        }

        fn drain(&mut self, index: usize) {
            let (events, lost, checksum) = (&mut self.events, &mut self.lost, &mut self.checksum);
            self.buffers[index].for_each(|event| match event {
                PerfEvent::Sample { head, tail } => {
                    *events += 1;
                    // The payload after its 4-byte RAW size (aya hands the RAW bytes on).
                    *checksum ^= first_word(head, tail);
                }
                PerfEvent::Lost { count } => *lost += count,
            });
        }
    }

    impl Bench for AyaBench {
        fn read(&mut self, timeout_ms: i32) {
            for index in epoll_wait(&self.epoll, timeout_ms) {
                self.drain(index);
            }
        }
        fn finish(&mut self) -> Finished {
            for index in 0..self.buffers.len() {
                self.drain(index);
            }
            Finished { events: self.events, lost_reported: Some(self.lost), checksum: self.checksum }
        }
    }
}

/// libbpf 1.1's `perf_buffer` (Debian's libbpf-dev), by FFI: `perf_buffer__new` (its default,
/// wakeup per record) or `perf_buffer__new_raw` with a sampled `wakeup_events`, read by
/// `perf_buffer__poll` and, at the end, `perf_buffer__consume`.
mod libbpf_bench {
    use super::*;
    use perfring::record::{sample_type as st, types, Attr, Endian};
    use perfring_linux::{software, EventAttr};
    use std::ffi::{c_int, c_void};

    #[repr(C)]
    struct PerfBuffer {
        _private: [u8; 0],
    }
    #[repr(C)]
    struct PerfBufferOpts {
        sz: usize,
    }
    type SampleFn = extern "C" fn(*mut c_void, c_int, *mut c_void, u32);
    type LostFn = extern "C" fn(*mut c_void, c_int, u64);
    /// `enum bpf_perf_event_ret (*)(void *ctx, int cpu, struct perf_event_header *event)`.
    type EventFn = extern "C" fn(*mut c_void, c_int, *const u8) -> c_int;
    const LIBBPF_PERF_EVENT_CONT: c_int = -2;

    extern "C" {
        fn perf_buffer__new(
            map_fd: c_int,
            page_cnt: usize,
            sample_cb: SampleFn,
            lost_cb: LostFn,
            ctx: *mut c_void,
            opts: *const PerfBufferOpts,
        ) -> *mut PerfBuffer;
        fn perf_buffer__new_raw(
            map_fd: c_int,
            page_cnt: usize,
            attr: *mut u8,
            event_cb: EventFn,
            ctx: *mut c_void,
            opts: *const c_void,
        ) -> *mut PerfBuffer;
        fn perf_buffer__poll(pb: *mut PerfBuffer, timeout_ms: c_int) -> c_int;
        fn perf_buffer__consume(pb: *mut PerfBuffer) -> c_int;
        fn perf_buffer__free(pb: *mut PerfBuffer);
    }

    #[derive(Default)]
    struct Counts {
        events: u64,
        lost: u64,
        checksum: u64,
    }

    extern "C" fn on_sample(ctx: *mut c_void, _cpu: c_int, data: *mut c_void, size: u32) {
        // SAFETY: `ctx` is the boxed Counts this bench passed, alive while the buffer is;
        // `data` holds `size` bytes (libbpf's contract).
        let (c, bytes) =
            unsafe { (&mut *ctx.cast::<Counts>(), std::slice::from_raw_parts(data.cast::<u8>(), size as usize)) };
        c.events += 1;
        c.checksum ^= first_word(bytes, &[]);
    }

    extern "C" fn on_lost(ctx: *mut c_void, _cpu: c_int, cnt: u64) {
        // SAFETY: as in `on_sample`.
        unsafe { (*ctx.cast::<Counts>()).lost += cnt };
    }

    extern "C" fn on_event(ctx: *mut c_void, _cpu: c_int, event: *const u8) -> c_int {
        // SAFETY: `ctx` as above; `event` is a whole record (libbpf copies a wrapped one), its
        // size in its header.
        unsafe {
            let c = &mut *ctx.cast::<Counts>();
            let size = u16::from_ne_bytes([*event.add(6), *event.add(7)]) as usize;
            let rec = std::slice::from_raw_parts(event, size);
            match u32::from_ne_bytes([rec[0], rec[1], rec[2], rec[3]]) {
                types::SAMPLE => {
                    c.events += 1;
                    c.checksum ^= first_word(&rec[12..], &[]);
                }
                types::LOST => c.lost += u64::from_ne_bytes(rec[16..24].try_into().unwrap_or_default()),
                _ => {}
            }
        }
        LIBBPF_PERF_EVENT_CONT
    }

    pub struct LibbpfBench {
        pb: *mut PerfBuffer,
        counts: Box<Counts>,
        _map: OwnedFd,
    }

    impl LibbpfBench {
        pub fn new(map: OwnedFd, sample_rate: Option<u32>) -> Self {
            let mut counts = Box::<Counts>::default();
            let ctx = (&mut *counts as *mut Counts).cast::<c_void>();
            let pb = match sample_rate {
                None => {
                    let opts = PerfBufferOpts { sz: std::mem::size_of::<PerfBufferOpts>() };
                    // SAFETY: a valid map fd, callbacks of the C signatures, `ctx` alive as long
                    // as the buffer (both in `Self`, freed together), `opts` read during the call.
                    unsafe { perf_buffer__new(map.as_raw_fd(), PAGES, on_sample, on_lost, ctx, &opts) }
                }
                Some(n) => {
                    let attr = EventAttr::software(software::BPF_OUTPUT)
                        .sample_period(1)
                        .sample_type(st::RAW)
                        .wakeup_events(n);
                    let mut bytes = [0u8; Attr::SIZE_VER8 as usize];
                    attr.attr().to_bytes(Endian::NATIVE, &mut bytes).expect("attr bytes");
                    // SAFETY: as above; `bytes` is a perf_event_attr of its own `size`, read
                    // during the call; NULL opts: every CPU of the map.
                    unsafe {
                        perf_buffer__new_raw(
                            map.as_raw_fd(),
                            PAGES,
                            bytes.as_mut_ptr(),
                            on_event,
                            ctx,
                            std::ptr::null(),
                        )
                    }
                }
            };
            assert!(!pb.is_null(), "perf_buffer__new: {}", std::io::Error::last_os_error());
            LibbpfBench { pb, counts, _map: map }
        }
    }

    impl Bench for LibbpfBench {
        fn read(&mut self, timeout_ms: i32) {
            // SAFETY: a live perf buffer.
            unsafe { perf_buffer__poll(self.pb, timeout_ms) };
        }
        fn finish(&mut self) -> Finished {
            // SAFETY: a live perf buffer.
            unsafe { perf_buffer__consume(self.pb) };
            let c = &self.counts;
            Finished { events: c.events, lost_reported: Some(c.lost), checksum: c.checksum }
        }
    }

    impl Drop for LibbpfBench {
        fn drop(&mut self) {
            // SAFETY: freed once; `counts` outlives the call (dropped after this).
            unsafe { perf_buffer__free(self.pb) };
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return; // cargo's harness probes
    }
    if bpf::create_map(4, 4, 4, 2).is_err() {
        eprintln!("bench-bpf: BPF_MAP_CREATE refused: run as root");
        std::process::exit(1);
    }
    let readers = [
        Reader::Aya { pages: None },
        Reader::Aya { pages: Some(PAGES) },
        Reader::Libbpf { sample_rate: None },
        Reader::PerfringStrict(1),
        Reader::Perfring(Some(Wakeup::Events(1))),
        Reader::Libbpf { sample_rate: Some(SAMPLE_RATE) },
        Reader::PerfringStrict(SAMPLE_RATE),
        Reader::Perfring(Some(Wakeup::Events(SAMPLE_RATE))),
        Reader::Perfring(None),
        // What closes the loss of an unthrottled producer: a ring that outlasts the reader's
        // scheduling delays.
        Reader::PerfringPages(512),
    ];
    let seconds = seconds();
    println!("bench-bpf: {PAGES} data pages per CPU (aya's default row: 2; the last row: 512), producer on CPU {PRODUCER_CPU}, reader on CPU {READER_CPU}; median of {ROUNDS} runs of {seconds} s");
    tables("perf event array", &readers, Reader::name, |reader, mode, payload| {
        let map = bpf::create_map(4, 4, 4, 2).expect("BPF_MAP_CREATE (root?)");
        let prog = OutputProgram::load(map.as_fd(), payload).expect("BPF_PROG_LOAD");
        run_once(mode, seconds, || open(reader, map.try_clone().expect("dup of the map")), &prog)
    });
}
