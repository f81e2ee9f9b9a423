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
//! (`CLOCK_THREAD_CPUTIME_ID` of the reader's thread; back-to-back, less the
//! time of the thread's `BPF_PROG_TEST_RUN` calls, which is the producer's: over 90% of it,
//! and less the clock's own reads around them, `common/bpf.rs`' `clock_bracket`). Each row is the median of `ROUNDS` runs,
//! the readers interleaved within a round; `BENCH_SECONDS` sets a run's length.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use perfring_linux::RingBuffer;
use perfring_test_support::bpf_ringbuf::{create_ring, Emit, RingbufProgram, RINGBUF};

#[path = "common/bpf.rs"]
mod common;
use common::{
    epoll_of, epoll_wait, first_word, run_once, seconds, tables, Bench, Finished, Producer, PRODUCER_CPU, READER_CPU,
    ROUNDS,
};

/// bench_ringbufs' `--rb-buf-size` default.
const RING_BYTES: u32 = 512 << 10;

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

impl Producer for RingbufProgram {
    fn run(&self, repeat: u32) {
        RingbufProgram::run(self, repeat).expect("BPF_PROG_TEST_RUN");
    }
    fn runs_and_failed(&self) -> (u64, u64) {
        let (runs, failed, _) = self.total().expect("the program's counts");
        (runs, failed)
    }
}

fn open(reader: Reader, map: OwnedFd) -> Box<dyn Bench> {
    match reader {
        Reader::Perfring => perfring_bench(map, Some(DEFAULT)),
        Reader::PerfringWakeups => perfring_bench(map, None),
        Reader::Libbpf => Box::new(libbpf_bench::LibbpfBench::new(map)),
        Reader::Aya => Box::new(aya_bench::AyaBench::new(map)),
    }
}

/// `RingBuffer`'s documented default batch interval.
const DEFAULT: Duration = Duration::from_micros(50);

/// perfring-linux's `RingBuffer` over the bench's map, read as its docs show: `from_map` takes
/// the program's closure, whose type is the reader's parameter `F` (not boxed: the compiler sees
/// the callback, as in a user's program; the run picks its reader through `Box<dyn Bench>`).
struct PerfringBench<F: FnMut(usize, &[u8])> {
    reader: RingBuffer<F>,
    counts: std::rc::Rc<std::cell::Cell<(u64, u64)>>,
}

fn perfring_bench(map: OwnedFd, interval: Option<Duration>) -> Box<dyn Bench> {
    let counts = std::rc::Rc::new(std::cell::Cell::new((0u64, 0u64)));
    let c = counts.clone();
    let on_sample = move |_ring: usize, sample: &[u8]| {
        let (n, sum) = c.get();
        c.set((n + 1, sum ^ first_word(sample, &[])));
    };
    let mut reader = RingBuffer::from_map(map, on_sample).expect("RingBuffer");
    reader.batch_interval(interval);
    Box::new(PerfringBench { reader, counts })
}

impl<F: FnMut(usize, &[u8])> Bench for PerfringBench<F> {
    fn read(&mut self, timeout_ms: i32) {
        self.reader.poll(Some(Duration::from_millis(timeout_ms as u64))).expect("poll");
    }
    fn finish(&mut self) -> Finished {
        self.reader.consume().expect("consume");
        let (events, checksum) = self.counts.get();
        Finished { events, lost_reported: None, checksum }
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
        fn finish(&mut self) -> Finished {
            self.drain();
            Finished { events: self.events, lost_reported: None, checksum: self.checksum }
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
        fn finish(&mut self) -> Finished {
            // SAFETY: a live ring buffer.
            unsafe { ring_buffer__consume(self.rb) };
            Finished { events: self.counts.events, lost_reported: None, checksum: self.counts.checksum }
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
    if create_ring(RINGBUF, RING_BYTES).is_err() {
        eprintln!("bench-bpf: BPF_MAP_CREATE of a ring buffer refused: run as root (Linux 5.8+)");
        std::process::exit(1);
    }
    let readers = [Reader::Aya, Reader::Libbpf, Reader::PerfringWakeups, Reader::Perfring];
    let seconds = seconds();
    println!(
        "\nbench-bpf, BPF ring buffer: one {} KiB ring, bpf_ringbuf_output (flags 0) on CPU {PRODUCER_CPU}, reader on \
         CPU {READER_CPU}; median of {ROUNDS} runs of {seconds} s",
        RING_BYTES >> 10
    );
    tables("ringbuf", &readers, Reader::name, |reader, mode, payload| {
        let map = create_ring(RINGBUF, RING_BYTES).expect("BPF_MAP_CREATE (root?)");
        let prog = RingbufProgram::load(map.as_fd(), payload, Emit::Output, 0).expect("BPF_PROG_LOAD");
        run_once(mode, seconds, || open(reader, map.try_clone().expect("dup of the map")), &prog)
    });
}
