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
//! it and as the program counted it (its helper's failures), the reader thread's CPU time per
//! million events (`getrusage(RUSAGE_THREAD)`, user + system). Each row is the median of
//! `ROUNDS` runs, the readers interleaved within a round; `BENCH_SECONDS` sets a run's length.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfring_linux::{PerfEventArray, RawSample, Wakeup};

#[path = "common/bpf.rs"]
mod common;
use common::{epoll_of, epoll_wait, first_word, median, thread_cpu};
use perfring_test_support::bpf::{self, pin_to_cpu, OutputProgram};

/// Data pages per CPU's ring for every reader ("matched"), but aya's default row (2).
const PAGES: usize = 64;
/// The sampled mode's wakeup rate (bench_ringbufs' default `--rb-sample-rate`).
const SAMPLE_RATE: u32 = 500;
/// Runs per `BPF_PROG_TEST_RUN` call of the parallel producer; per batch of back-to-back.
const REPEAT: u32 = 1000;
const B2B_BATCH: u32 = 500;
const ROUNDS: usize = 3;
const PRODUCER_CPU: u32 = 0;
const READER_CPU: u32 = 1;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Parallel,
    BackToBack,
}

#[derive(Clone, Copy, Debug, Default)]
struct Run {
    events: u64,
    lost_reported: u64,
    lost_counted: u64,
    cpu_s: f64,
    secs: f64,
    checksum: u64,
}

impl Run {
    fn rate(&self) -> f64 {
        self.events as f64 / self.secs
    }
    fn cpu_per_m(&self) -> f64 {
        self.cpu_s / (self.events.max(1) as f64 / 1e6)
    }
}

/// A reader under test, on the reader's thread: `read(timeout)` waits up to `timeout` for a
/// wakeup and reads; `finish` reads what is left. Both add to the run's events and checksum.
trait Bench {
    fn read(&mut self, timeout_ms: i32);
    fn finish(&mut self) -> (u64, u64, u64);
}

fn run_once(reader: Reader, mode: Mode, payload: usize, seconds: f64) -> Run {
    let map = bpf::create_map(4, 4, 4, 2).expect("BPF_MAP_CREATE (root?)");
    let prog = OutputProgram::load(map.as_fd(), payload).expect("BPF_PROG_LOAD");
    let stop = AtomicBool::new(false);
    let run = std::thread::scope(|s| {
        let reader_thread = s.spawn(|| {
            pin_to_cpu(READER_CPU).expect("pin the reader");
            let mut bench = open(reader, map.try_clone().expect("dup of the map"));
            let (t0, c0) = (Instant::now(), thread_cpu());
            let mut produced_for = None;
            loop {
                match mode {
                    Mode::Parallel => bench.read(10),
                    Mode::BackToBack => {
                        prog.run(B2B_BATCH).expect("BPF_PROG_TEST_RUN");
                        bench.read(0);
                    }
                }
                let stopping = match mode {
                    Mode::Parallel => stop.load(Ordering::Acquire),
                    Mode::BackToBack => t0.elapsed().as_secs_f64() >= seconds,
                };
                if stopping {
                    produced_for = produced_for.or(Some(t0.elapsed().as_secs_f64()));
                    break;
                }
            }
            let (events, lost, checksum) = bench.finish();
            let cpu_s = thread_cpu() - c0;
            drop(bench);
            Run { events, lost_reported: lost, cpu_s, secs: produced_for.unwrap_or(seconds), checksum, lost_counted: 0 }
        });
        if mode == Mode::Parallel {
            pin_to_cpu(PRODUCER_CPU).expect("pin the producer");
            std::thread::sleep(Duration::from_millis(20)); // the reader is set up
            let t0 = Instant::now();
            while t0.elapsed().as_secs_f64() < seconds {
                prog.run(REPEAT).expect("BPF_PROG_TEST_RUN");
            }
            stop.store(true, Ordering::Release);
        }
        reader_thread.join().expect("the reader thread")
    });
    let cpus = [PRODUCER_CPU, READER_CPU];
    Run { lost_counted: cpus.iter().map(|&c| prog.counts(c).map_or(0, |c| c.1)).sum(), ..run }
}

fn open(reader: Reader, map: OwnedFd) -> Box<dyn Bench> {
    match reader {
        Reader::Perfring(wakeup) => Box::new(PerfringBench::new(map, wakeup, PAGES, true)),
        Reader::PerfringStrict(n) => Box::new(PerfringBench::new(map, Some(Wakeup::Events(n)), PAGES, false)),
        Reader::PerfringPages(pages) => Box::new(PerfringBench::new(map, None, pages, true)),
        Reader::Aya { pages } => Box::new(aya_bench::AyaBench::new(map, pages)),
        Reader::Libbpf { sample_rate } => Box::new(libbpf_bench::LibbpfBench::new(map, sample_rate)),
    }
}

/// The callback of the perfring rows (boxed: the readers of a run are picked at run time).
type OnSample = Box<dyn FnMut(&RawSample<'_>)>;

/// perfring-linux's `PerfEventArray` over the bench's map, read as its docs show.
struct PerfringBench {
    reader: PerfEventArray<OnSample>,
    counts: std::rc::Rc<std::cell::Cell<(u64, u64)>>,
}

impl PerfringBench {
    fn new(map: OwnedFd, wakeup: Option<Wakeup>, pages: usize, default_policy: bool) -> Self {
        let counts = std::rc::Rc::new(std::cell::Cell::new((0u64, 0u64)));
        let c = counts.clone();
        let on_sample: OnSample = Box::new(move |s: &RawSample<'_>| {
            let (a, b) = s.parts();
            let (n, sum) = c.get();
            c.set((n + 1, sum ^ first_word(a, b)));
        });
        let mut builder = PerfEventArray::builder().map(map).data_pages(pages);
        if let Some(w) = wakeup {
            builder = builder.wakeup(w);
        }
        let mut reader = builder.build(on_sample).expect("PerfEventArray");
        if !default_policy {
            reader.batch_interval(None);
        }
        PerfringBench { reader, counts }
    }
}

impl Bench for PerfringBench {
    fn read(&mut self, timeout_ms: i32) {
        self.reader.poll(Some(Duration::from_millis(timeout_ms as u64))).expect("poll");
    }
    fn finish(&mut self) -> (u64, u64, u64) {
        self.reader.flush().expect("flush");
        let (n, sum) = self.counts.get();
        (n, self.reader.lost_total(), sum)
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
        fn finish(&mut self) -> (u64, u64, u64) {
            for index in 0..self.buffers.len() {
                self.drain(index);
            }
            (self.events, self.lost, self.checksum)
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
        fn finish(&mut self) -> (u64, u64, u64) {
            // SAFETY: a live perf buffer.
            unsafe { perf_buffer__consume(self.pb) };
            (self.counts.events, self.counts.lost, self.counts.checksum)
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
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
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
    // BENCH_ONLY=substring: the readers whose names contain it; BENCH_MODE=Parallel or
    // BackToBack: that mode alone (for a profile).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let readers: Vec<Reader> = readers.into_iter().filter(|r| r.name().contains(&only)).collect();
    let mode_only = std::env::var("BENCH_MODE").unwrap_or_default();
    let modes: Vec<Mode> = [Mode::Parallel, Mode::BackToBack]
        .into_iter()
        .filter(|m| mode_only.is_empty() || format!("{m:?}") == mode_only)
        .collect();
    println!("bench-bpf: {PAGES} data pages per CPU (aya's default row: 2; the last row: 512), producer on CPU {PRODUCER_CPU}, reader on CPU {READER_CPU}; median of {ROUNDS} runs of {seconds} s");
    for &mode in &modes {
        for payload in [8usize, 256] {
            let mut runs: Vec<Vec<Run>> = vec![Vec::new(); readers.len()];
            for _ in 0..ROUNDS {
                for (i, &r) in readers.iter().enumerate() {
                    runs[i].push(run_once(r, mode, payload, seconds));
                }
            }
            println!("\n{mode:?}, {payload}-byte payload");
            println!(
                "{:<46} {:>10} {:>12} {:>12} {:>14}",
                "reader", "M events/s", "lost (says)", "lost (prog)", "CPU s / M ev"
            );
            for (i, r) in readers.iter().enumerate() {
                let rs = &runs[i];
                let rate = median(rs.iter().map(Run::rate).collect());
                let cpu = median(rs.iter().map(Run::cpu_per_m).collect());
                // The lost counts of the median-rate run.
                let m = rs
                    .iter()
                    .min_by(|a, b| (a.rate() - rate).abs().total_cmp(&(b.rate() - rate).abs()))
                    .copied()
                    .unwrap_or_default();
                std::hint::black_box(m.checksum);
                println!(
                    "{:<46} {:>10.2} {:>12} {:>12} {:>14.3}",
                    r.name(),
                    rate / 1e6,
                    m.lost_reported,
                    m.lost_counted,
                    cpu
                );
            }
        }
    }
}
