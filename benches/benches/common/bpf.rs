//! What `make bench-bpf`'s two benchmarks (`bpf`: the perf event array's readers; `bpf_ringbuf`:
//! the BPF ring buffer's) share — the method of the kernel's `bench_ringbufs.c`: a run
//! ([`run_once`]: parallel or back-to-back, producer and reader pinned), the tables of medians
//! ([`tables`]), the reader thread's CPU time, the first word of a payload, an epoll set for
//! the peers that have none. Each benchmark brings its readers ([`Bench`]) and its program
//! ([`Producer`]).

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfring_test_support::bpf::pin_to_cpu;

#[path = "clock.rs"]
mod clock;
pub use clock::thread_cpu;

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The first 8 bytes of a payload given as two parts.
#[inline(always)]
pub fn first_word(a: &[u8], b: &[u8]) -> u64 {
    if let Some(&[b0, b1, b2, b3, b4, b5, b6, b7]) = a.get(..8) {
        return u64::from_ne_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
    }
    first_word_split(a, b)
}

/// [`first_word`] of a payload whose first part is shorter than 8 bytes: out of line, so that
/// a reader's callback stays a leaf without spills for the common case.
#[cold]
#[inline(never)]
fn first_word_split(a: &[u8], b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = a.len().min(8);
    w[..n].copy_from_slice(&a[..n]);
    let m = (8 - n).min(b.len());
    w[n..n + m].copy_from_slice(&b[..m]);
    u64::from_ne_bytes(w)
}

/// An epoll set of `fds`, token = index.
pub fn epoll_of<'a>(fds: impl Iterator<Item = BorrowedFd<'a>>) -> OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: epoll_create1 has no memory preconditions; the fd is checked and owned below.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(ep >= 0, "epoll_create1");
    // SAFETY: a new descriptor nothing else owns.
    let ep = unsafe { OwnedFd::from_raw_fd(ep) };
    for (i, fd) in fds.enumerate() {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event.
        assert_eq!(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) }, 0);
    }
    ep
}

/// The tokens ready within `timeout_ms`.
pub fn epoll_wait(ep: &OwnedFd, timeout_ms: i32) -> Vec<usize> {
    let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 8];
    // SAFETY: `evs` has room for 8 events.
    let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), evs.as_mut_ptr(), 8, timeout_ms) };
    evs[..n.max(0) as usize].iter().map(|e| e.u64 as usize).collect()
}

/// The CPU the producer's thread is pinned to in parallel mode.
pub const PRODUCER_CPU: u32 = 0;
/// The CPU of the reader's thread (and of back-to-back's one thread).
pub const READER_CPU: u32 = 1;
/// Runs per `BPF_PROG_TEST_RUN` call of the parallel producer.
pub const REPEAT: u32 = 1000;
/// Runs per batch of back-to-back, between two reads.
pub const B2B_BATCH: u32 = 500;
/// Runs per row; a row's figures are their medians, the readers interleaved within a round.
pub const ROUNDS: usize = 3;

/// bench_ringbufs' two ways to run producer and reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The producer on `PRODUCER_CPU`, the reader beside it on `READER_CPU`.
    Parallel,
    /// One thread on `READER_CPU` runs `B2B_BATCH` outputs, then reads, in turn (`--rb-b2b`).
    BackToBack,
}

/// What a reader delivered by the end of a run.
pub struct Finished {
    /// Events handed to the reader's callback.
    pub events: u64,
    /// Lost outputs as the reader reports them (`None`: it reports none, as a BPF ring
    /// buffer's reader is told nothing of refused reservations).
    pub lost_reported: Option<u64>,
    /// The first words of the payloads, folded (kept alive so the reading is not optimized out).
    pub checksum: u64,
}

/// A reader under test, on the reader's thread: `read(timeout)` waits up to `timeout` for data
/// and reads; `finish` reads what is left and says what was delivered in all.
pub trait Bench {
    fn read(&mut self, timeout_ms: i32);
    fn finish(&mut self) -> Finished;
}

/// A producer: a BPF program run by `BPF_PROG_TEST_RUN` on the calling thread, and its own
/// count of runs and failed outputs (read after the run).
pub trait Producer: Sync {
    fn run(&self, repeat: u32);
    fn runs_and_failed(&self) -> (u64, u64);
}

/// One run's figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Run {
    pub events: u64,
    pub lost_reported: Option<u64>,
    /// The program's runs, and those whose output failed.
    pub runs: u64,
    pub failed: u64,
    /// The reader thread's CPU time (back-to-back: less that of its `BPF_PROG_TEST_RUN` calls).
    pub cpu_s: f64,
    /// The producing time.
    pub secs: f64,
    pub checksum: u64,
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

/// One run of `mode` for `seconds`: `open` makes the reader on the reader's thread (pinned to
/// `READER_CPU`), `producer` outputs as the mode says.
pub fn run_once(
    mode: Mode,
    seconds: f64,
    open: impl FnOnce() -> Box<dyn Bench> + Send,
    producer: &impl Producer,
) -> Run {
    let stop = AtomicBool::new(false);
    let run = std::thread::scope(|s| {
        let reader_thread = s.spawn(|| {
            pin_to_cpu(READER_CPU).expect("pin the reader");
            let mut bench = open();
            let bracket = if mode == Mode::BackToBack { clock_bracket() } else { 0.0 };
            let (t0, c0) = (Instant::now(), thread_cpu());
            // Back-to-back: the CPU time of the thread's BPF_PROG_TEST_RUN calls, not the reader's.
            let (mut producing, mut batches) = (0.0, 0u32);
            let produced_for = loop {
                match mode {
                    Mode::Parallel => bench.read(10),
                    Mode::BackToBack => {
                        let c = thread_cpu();
                        producer.run(B2B_BATCH);
                        producing += thread_cpu() - c;
                        batches += 1;
                        bench.read(0);
                    }
                }
                let stopping = match mode {
                    Mode::Parallel => stop.load(Ordering::Acquire),
                    Mode::BackToBack => t0.elapsed().as_secs_f64() >= seconds,
                };
                if stopping {
                    break t0.elapsed().as_secs_f64();
                }
            };
            let Finished { events, lost_reported, checksum } = bench.finish();
            // Each batch's two clock reads cost the thread one read's time outside the bracket
            // (the first one's end, the second one's start): the bench's, not the reader's.
            let cpu_s = thread_cpu() - c0 - producing - f64::from(batches) * bracket;
            drop(bench);
            Run { events, lost_reported, cpu_s, secs: produced_for, checksum, ..Run::default() }
        });
        if mode == Mode::Parallel {
            pin_to_cpu(PRODUCER_CPU).expect("pin the producer");
            std::thread::sleep(Duration::from_millis(20)); // the reader is set up
            let t0 = Instant::now();
            while t0.elapsed().as_secs_f64() < seconds {
                producer.run(REPEAT);
            }
            stop.store(true, Ordering::Release);
        }
        reader_thread.join().expect("the reader thread")
    });
    let (runs, failed) = producer.runs_and_failed();
    Run { runs, failed, ..run }
}

/// What the thread's CPU clock reads across an empty bracket (two reads in a row, the median
/// of 201): the end of one `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (a system call, ~0.5 µs
/// here) and the start of the next. Around a back-to-back batch, the bracket's remainder —
/// one read's time — falls outside it, in the reader's share, for every reader alike (about
/// 1 ns a record at 500 a batch); `run_once` takes it out.
fn clock_bracket() -> f64 {
    let bracket = || {
        let start = thread_cpu();
        thread_cpu() - start
    };
    median((0..201).map(|_| bracket()).collect())
}

/// `BENCH_SECONDS` (default 1): a run's length.
pub fn seconds() -> f64 {
    std::env::var("BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0)
}

/// How late a thread sleeping 100 µs on the reader's CPU wakes, over `seconds`: the number of
/// wakeups more than 1 ms and more than 5 ms late, and the latest. A reader sleeping in
/// `epoll_wait` pays the same delay, and an unthrottled producer fills its ring meanwhile: a
/// host whose idle vCPU is run late loses records for every reader, whatever its policy. Printed
/// before the tables, so that each run says what its host was.
fn wake_latency(seconds: f64) -> (u32, u32, Duration) {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_to_cpu(READER_CPU).expect("pin the probe");
            let (t0, nap) = (Instant::now(), Duration::from_micros(100));
            let (mut over_1ms, mut over_5ms, mut worst) = (0, 0, Duration::ZERO);
            while t0.elapsed().as_secs_f64() < seconds {
                let t = Instant::now();
                std::thread::sleep(nap);
                let late = t.elapsed().saturating_sub(nap);
                over_1ms += u32::from(late > Duration::from_millis(1));
                over_5ms += u32::from(late > Duration::from_millis(5));
                worst = worst.max(late);
            }
            (over_1ms, over_5ms, worst)
        })
        .join()
        .expect("the probe thread")
    })
}

/// The tables of a benchmark: for each mode (`BENCH_MODE=Parallel` or `BackToBack`: that one
/// alone) and payload (8 and 256 bytes), `ROUNDS` rounds of every reader whose name contains
/// `BENCH_ONLY`, then a row per reader: the medians of events/s and CPU per million events,
/// the lost counts of its median-rate run, and whether every run's counts add up.
pub fn tables<R: Copy>(
    title: &str,
    readers: &[R],
    name: impl Fn(R) -> String,
    mut run: impl FnMut(R, Mode, usize) -> Run,
) {
    const PROBE_SECONDS: f64 = 3.0;
    let (over_1ms, over_5ms, worst) = wake_latency(PROBE_SECONDS);
    println!(
        "host: a thread sleeping 100 us on CPU {READER_CPU} for {PROBE_SECONDS} s woke > 1 ms late {over_1ms} times, > 5 ms late {over_5ms} times, at worst {:.2} ms late",
        worst.as_secs_f64() * 1e3
    );
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let readers: Vec<R> = readers.iter().copied().filter(|&r| name(r).contains(&only)).collect();
    let mode_only = std::env::var("BENCH_MODE").unwrap_or_default();
    let modes = [Mode::Parallel, Mode::BackToBack]
        .into_iter()
        .filter(|m| mode_only.is_empty() || format!("{m:?}") == mode_only);
    for mode in modes {
        for payload in [8usize, 256] {
            let mut runs: Vec<Vec<Run>> = vec![Vec::new(); readers.len()];
            for _ in 0..ROUNDS {
                for (i, &r) in readers.iter().enumerate() {
                    runs[i].push(run(r, mode, payload));
                }
            }
            println!("\n{title} {mode:?}, {payload}-byte payload");
            println!(
                "{:<50} {:>10} {:>12} {:>12} {:>6} {:>14}",
                "reader", "M events/s", "lost (says)", "lost (prog)", "exact", "CPU s / M ev"
            );
            for (r, rs) in readers.iter().zip(&runs) {
                let rate = median(rs.iter().map(Run::rate).collect());
                let cpu = median(rs.iter().map(Run::cpu_per_m).collect());
                let m = rs
                    .iter()
                    .min_by(|a, b| (a.rate() - rate).abs().total_cmp(&(b.rate() - rate).abs()))
                    .copied()
                    .unwrap_or_default();
                std::hint::black_box(m.checksum);
                let says = m.lost_reported.map_or("-".to_string(), |n| n.to_string());
                let exact = if rs.iter().all(Run::exact) { "yes" } else { "NO" };
                println!(
                    "{:<50} {:>10.2} {:>12} {:>12} {:>6} {:>14.4}",
                    name(*r),
                    rate / 1e6,
                    says,
                    m.failed,
                    exact,
                    cpu
                );
            }
        }
    }
}
