//! `make bench-bpf`, its BPF ring buffer rows: the readers of a BPF_MAP_TYPE_RINGBUF side by
//! side — perfring-linux's `RingBuffer` (its default wait policy, and waiting for a wakeup
//! after every read as libbpf does), libbpf's `ring_buffer` (Debian's libbpf 1.1, by FFI:
//! `ring_buffer__new`, `ring_buffer__poll`) and aya 0.14's `RingBuf` (its map adopted through
//! `MapData::from_fd`, polled through epoll, drained with `next` as its docs show) — by the
//! method of the kernel's `tools/testing/selftests/bpf/benchs/bench_ringbufs.c`:
//!
//! * the producer is a BPF program (perfring-test-support's `RingbufProgram`: one
//!   `bpf_ringbuf_output` of an 8- or 256-byte payload per run, flags 0 — the kernel's
//!   adaptive wakeup —, its failed outputs counted in an array map) run by
//!   `BPF_PROG_TEST_RUN` with a repeat count of 1,000, again and again, on a thread pinned to
//!   CPU 0; the ring is bench_ringbufs' 512 KiB;
//! * "parallel": the reader runs on CPU 1 (bench_ringbufs' default, the producer beside a
//!   reader that may catch up with it); "back-to-back": one thread on CPU 1 triggers 500 runs
//!   and then reads, in turn (`--rb-b2b`: the bare cost of producing and reading).
//!
//! Every reader touches each payload the same way (its first 8 bytes into a checksum).
//! Columns: events/s delivered (read by the reader, over the producing time); lost: a ring
//! buffer's reader is told nothing of what the kernel could not reserve (the program sees the
//! failure), so the column is the program's own count, and "exact" says whether the events read
//! plus those failures are the program's runs; the reader's CPU time per million events
//! (`getrusage(RUSAGE_THREAD)`, user + system, of the reader's thread; back-to-back, less the
//! time of the thread's `BPF_PROG_TEST_RUN` calls, which is the producer's: over 90% of it). Each row is the median of `ROUNDS` runs,
//! the readers interleaved within a round; `BENCH_SECONDS` sets a run's length.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfring_linux::RingBuffer;
use perfring_test_support::bpf::pin_to_cpu;
use perfring_test_support::bpf_ringbuf::{create_ring, Emit, RingbufProgram, RINGBUF};

#[path = "common/bpf.rs"]
mod common;
use common::{epoll_of, epoll_wait, first_word, median, thread_cpu};

/// bench_ringbufs' `--rb-buf-size` default.
const RING_BYTES: u32 = 512 << 10;
/// Runs per `BPF_PROG_TEST_RUN` call of the parallel producer; per batch of back-to-back.
const REPEAT: u32 = 1000;
const B2B_BATCH: u32 = 500;
const ROUNDS: usize = 3;
const PRODUCER_CPU: u32 = 0;
const READER_CPU: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Reader {
    /// perfring's `RingBuffer::poll`, its default wait policy (a batch interval of 50 us).
    Perfring,
    /// perfring waiting for a wakeup after every read (`batch_interval(None)`).
    PerfringWakeups,
    Libbpf,
    Aya,
}

impl Reader {
    fn name(self) -> String {
        match self {
            Reader::Perfring => "perfring RingBuffer, default (batch 50 us)".into(),
            Reader::PerfringWakeups => "perfring RingBuffer, a wakeup per read".into(),
            Reader::Libbpf => "libbpf ring_buffer__poll".into(),
            Reader::Aya => "aya RingBuf (epoll, next)".into(),
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
    runs: u64,
    failed: u64,
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
    /// Every run's output read, or counted failed by the program.
    fn exact(&self) -> bool {
        self.events + self.failed == self.runs
    }
}

/// A reader under test, on the reader's thread: `read(timeout)` waits up to `timeout` for data
/// and reads; `finish` reads what is left; both add to (events, checksum).
trait Bench {
    fn read(&mut self, timeout_ms: i32);
    fn finish(&mut self) -> (u64, u64);
}

fn run_once(reader: Reader, mode: Mode, payload: usize, seconds: f64) -> Run {
    let map = create_ring(RINGBUF, RING_BYTES).expect("BPF_MAP_CREATE (root?)");
    let prog = RingbufProgram::load(map.as_fd(), payload, Emit::Output, 0).expect("BPF_PROG_LOAD");
    let stop = AtomicBool::new(false);
    let run = std::thread::scope(|s| {
        let reader_thread = s.spawn(|| {
            pin_to_cpu(READER_CPU).expect("pin the reader");
            let mut bench = open(reader, map.try_clone().expect("dup of the map"));
            let (t0, c0) = (Instant::now(), thread_cpu());
            let mut produced_for = None;
            // Back-to-back: the CPU time of the thread's BPF_PROG_TEST_RUN calls, not the reader's.
            let mut producing = 0.0;
            loop {
                match mode {
                    Mode::Parallel => bench.read(10),
                    Mode::BackToBack => {
                        let c = thread_cpu();
                        prog.run(B2B_BATCH).expect("BPF_PROG_TEST_RUN");
                        producing += thread_cpu() - c;
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
            let (events, checksum) = bench.finish();
            let cpu_s = thread_cpu() - c0 - producing;
            drop(bench);
            Run { events, cpu_s, secs: produced_for.unwrap_or(seconds), checksum, ..Run::default() }
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
    let (runs, failed, _) = prog.total().expect("the program's counts");
    Run { runs, failed, ..run }
}

fn open(reader: Reader, map: OwnedFd) -> Box<dyn Bench> {
    match reader {
        Reader::Perfring => Box::new(PerfringBench::new(map, Some(DEFAULT))),
        Reader::PerfringWakeups => Box::new(PerfringBench::new(map, None)),
        Reader::Libbpf => Box::new(libbpf_bench::LibbpfBench::new(map)),
        Reader::Aya => Box::new(aya_bench::AyaBench::new(map)),
    }
}

/// `RingBuffer`'s documented default batch interval.
const DEFAULT: Duration = Duration::from_micros(50);

/// The callback of the perfring rows (boxed: the readers of a run are picked at run time).
type OnSample = Box<dyn FnMut(usize, &[u8])>;

/// perfring-linux's `RingBuffer` over the bench's map, read as its docs show.
struct PerfringBench {
    reader: RingBuffer<OnSample>,
    counts: std::rc::Rc<std::cell::Cell<(u64, u64)>>,
}

impl PerfringBench {
    fn new(map: OwnedFd, interval: Option<Duration>) -> Self {
        let counts = std::rc::Rc::new(std::cell::Cell::new((0u64, 0u64)));
        let c = counts.clone();
        let on_sample: OnSample = Box::new(move |_ring, sample: &[u8]| {
            let (n, sum) = c.get();
            c.set((n + 1, sum ^ first_word(sample, &[])));
        });
        let mut reader = RingBuffer::from_map(map, on_sample).expect("RingBuffer");
        reader.batch_interval(interval);
        PerfringBench { reader, counts }
    }
}

impl Bench for PerfringBench {
    fn read(&mut self, timeout_ms: i32) {
        self.reader.poll(Some(Duration::from_millis(timeout_ms as u64))).expect("poll");
    }
    fn finish(&mut self) -> (u64, u64) {
        self.reader.consume().expect("consume");
        self.counts.get()
    }
}

/// aya 0.14's `RingBuf`, adopting the bench's map (`MapData::from_fd`), its descriptor in an
/// epoll set, drained with `next` (each item's drop publishes the consumer position).
mod aya_bench {
    use super::*;
    use aya::maps::{Map, MapData, RingBuf};

    pub struct AyaBench {
        ring: RingBuf<MapData>,
        epoll: OwnedFd,
        events: u64,
        checksum: u64,
    }

    impl AyaBench {
        pub fn new(map: OwnedFd) -> Self {
            let data = MapData::from_fd(map).expect("aya MapData::from_fd");
            let ring: RingBuf<MapData> =
                RingBuf::try_from(Map::from_map_data(data).expect("aya Map")).expect("aya RingBuf");
            let epoll = epoll_of(std::iter::once(ring.as_fd()));
            AyaBench { ring, epoll, events: 0, checksum: 0 }
        }

        fn drain(&mut self) {
            while let Some(item) = self.ring.next() {
                self.events += 1;
                self.checksum ^= first_word(&item, &[]);
            }
        }
    }

    impl Bench for AyaBench {
        fn read(&mut self, timeout_ms: i32) {
            if !epoll_wait(&self.epoll, timeout_ms).is_empty() {
                self.drain();
            }
        }
        fn finish(&mut self) -> (u64, u64) {
            self.drain();
            (self.events, self.checksum)
        }
    }
}

/// libbpf 1.1's `ring_buffer` (Debian's libbpf-dev), by FFI: `ring_buffer__new` (no options),
/// read by `ring_buffer__poll` and, at the end, `ring_buffer__consume`.
mod libbpf_bench {
    use super::*;
    use std::ffi::{c_int, c_void};

    #[repr(C)]
    struct RingBufferC {
        _private: [u8; 0],
    }
    type SampleFn = extern "C" fn(*mut c_void, *mut c_void, usize) -> c_int;

    extern "C" {
        fn ring_buffer__new(
            map_fd: c_int,
            sample_cb: SampleFn,
            ctx: *mut c_void,
            opts: *const c_void,
        ) -> *mut RingBufferC;
        fn ring_buffer__poll(rb: *mut RingBufferC, timeout_ms: c_int) -> c_int;
        fn ring_buffer__consume(rb: *mut RingBufferC) -> c_int;
        fn ring_buffer__free(rb: *mut RingBufferC);
    }

    #[derive(Default)]
    struct Counts {
        events: u64,
        checksum: u64,
    }

    extern "C" fn on_sample(ctx: *mut c_void, data: *mut c_void, size: usize) -> c_int {
        // SAFETY: `ctx` is the boxed Counts this bench passed, alive while the ring buffer is;
        // `data` holds `size` bytes (libbpf's contract).
        let (c, bytes) = unsafe { (&mut *ctx.cast::<Counts>(), std::slice::from_raw_parts(data.cast::<u8>(), size)) };
        c.events += 1;
        c.checksum ^= first_word(bytes, &[]);
        0
    }

    pub struct LibbpfBench {
        rb: *mut RingBufferC,
        counts: Box<Counts>,
        _map: OwnedFd,
    }

    impl LibbpfBench {
        pub fn new(map: OwnedFd) -> Self {
            let mut counts = Box::<Counts>::default();
            let ctx = (&mut *counts as *mut Counts).cast::<c_void>();
            // SAFETY: a valid map fd, a callback of the C signature, `ctx` alive as long as the
            // ring buffer (both in `Self`, freed together), NULL opts.
            let rb = unsafe { ring_buffer__new(map.as_raw_fd(), on_sample, ctx, std::ptr::null()) };
            assert!(!rb.is_null(), "ring_buffer__new: {}", std::io::Error::last_os_error());
            LibbpfBench { rb, counts, _map: map }
        }
    }

    impl Bench for LibbpfBench {
        fn read(&mut self, timeout_ms: i32) {
            // SAFETY: a live ring buffer.
            unsafe { ring_buffer__poll(self.rb, timeout_ms) };
        }
        fn finish(&mut self) -> (u64, u64) {
            // SAFETY: a live ring buffer.
            unsafe { ring_buffer__consume(self.rb) };
            (self.counts.events, self.counts.checksum)
        }
    }

    impl Drop for LibbpfBench {
        fn drop(&mut self) {
            // SAFETY: freed once; `counts` outlives the call (dropped after this).
            unsafe { ring_buffer__free(self.rb) };
        }
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return; // cargo's harness probes
    }
    let seconds: f64 = std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    if create_ring(RINGBUF, RING_BYTES).is_err() {
        eprintln!("bench-bpf: BPF_MAP_CREATE of a ring buffer refused: run as root (Linux 5.8+)");
        std::process::exit(1);
    }
    let readers = [Reader::Aya, Reader::Libbpf, Reader::PerfringWakeups, Reader::Perfring];
    // BENCH_ONLY=substring: the readers whose names contain it; BENCH_MODE=Parallel or
    // BackToBack: that mode alone (for a profile).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let readers: Vec<Reader> = readers.into_iter().filter(|r| r.name().contains(&only)).collect();
    let mode_only = std::env::var("BENCH_MODE").unwrap_or_default();
    let modes: Vec<Mode> = [Mode::Parallel, Mode::BackToBack]
        .into_iter()
        .filter(|m| mode_only.is_empty() || format!("{m:?}") == mode_only)
        .collect();
    println!(
        "\nbench-bpf, BPF ring buffer: one {} KiB ring, bpf_ringbuf_output (flags 0) on CPU {PRODUCER_CPU}, reader on \
         CPU {READER_CPU}; median of {ROUNDS} runs of {seconds} s",
        RING_BYTES >> 10
    );
    for &mode in &modes {
        for payload in [8usize, 256] {
            let mut runs: Vec<Vec<Run>> = vec![Vec::new(); readers.len()];
            for _ in 0..ROUNDS {
                for (i, &r) in readers.iter().enumerate() {
                    runs[i].push(run_once(r, mode, payload, seconds));
                }
            }
            println!("\nringbuf {mode:?}, {payload}-byte payload");
            println!(
                "{:<46} {:>10} {:>12} {:>7} {:>14}",
                "reader", "M events/s", "lost (prog)", "exact", "CPU s / M ev"
            );
            for (i, r) in readers.iter().enumerate() {
                let rs = &runs[i];
                let rate = median(rs.iter().map(Run::rate).collect());
                let cpu = median(rs.iter().map(Run::cpu_per_m).collect());
                // The lost count of the median-rate run; exact if every run's counts add up.
                let m = rs
                    .iter()
                    .min_by(|a, b| (a.rate() - rate).abs().total_cmp(&(b.rate() - rate).abs()))
                    .copied()
                    .unwrap_or_default();
                std::hint::black_box(m.checksum);
                let exact = if rs.iter().all(Run::exact) { "yes" } else { "NO" };
                println!("{:<46} {:>10.2} {:>12} {:>7} {:>14.3}", r.name(), rate / 1e6, m.failed, exact, cpu);
            }
        }
    }
}
