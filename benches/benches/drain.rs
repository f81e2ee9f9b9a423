//! The reader's CPU time per record drained and decoded from a real kernel ring: perfring-linux
//! (`Ring::consumer` + perfring's `SampleView`) beside perf-event2 (`Sampler::next_record` +
//! `Record::parse_record`), on the same event in the same run.
//!
//! The kernel sets the record rate (a task-clock sample every `PERIOD_NS` of a spinning worker
//! thread's CPU time), so the wall time says nothing about the reader: what is timed is the
//! consumer thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`) across each drain, divided by the
//! records drained. The consumer sleeps `BATCH` between drains (sleep is not CPU time, and the
//! clock reads around each drain are the same for both readers). Rounds alternate the readers;
//! the medians are printed. `make bench-linux` runs it.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use perfring::record::{
    read_format as rf, sample_type as st, Endian, EventLayout as Layout, EventRecord, EventSet, IdEntry,
};
use perfring_linux::software;
use perfring_linux::{Event, EventAttr, Ring, Target};

/// A sample every 20 µs of the worker's CPU time (task-clock).
const PERIOD_NS: u64 = 20_000;
/// Data pages of both rings (256 KiB with 4 KiB pages).
const DATA_PAGES: usize = 64;
/// How long each measured run lasts (wall).
const RUN: Duration = Duration::from_millis(1000);
/// The consumer's sleep between drains (~250 records at the rate above).
const BATCH: Duration = Duration::from_millis(5);
const ROUNDS: usize = 5;

#[path = "common/clock.rs"]
mod clock;
use clock::thread_cpu;

#[derive(Default, Clone, Copy)]
struct Run {
    records: u64,
    samples: u64,
    cpu_s: f64,
    checksum: u64,
    /// PERF_RECORD_LOST records seen (the ring overflowed).
    lost_records: u64,
}

impl Run {
    /// The same fold of a SAMPLE's fields for both libraries.
    fn sample(&mut self, ip: Option<u64>, tid: Option<u32>, time: Option<u64>, period: Option<u64>) {
        self.samples += 1;
        self.checksum ^= ip.unwrap_or(0) ^ u64::from(tid.unwrap_or(0)) ^ time.unwrap_or(0) ^ period.unwrap_or(0);
    }
    fn ns_per_record(&self) -> f64 {
        self.cpu_s * 1e9 / self.records.max(1) as f64
    }
}

/// Drain every `BATCH` for `RUN`, timing the drains with this thread's CPU clock.
fn measure(mut drain: impl FnMut(&mut Run)) -> Run {
    let mut run = Run::default();
    let start = Instant::now();
    while start.elapsed() < RUN {
        std::thread::sleep(BATCH);
        let t0 = thread_cpu();
        drain(&mut run);
        run.cpu_s += thread_cpu() - t0;
    }
    run
}

fn perfring_run(tid: i32, decode: bool) -> Run {
    let attr = EventAttr::software(software::TASK_CLOCK)
        .sample_period(PERIOD_NS)
        .sample_type(st::IP | st::TID | st::TIME | st::PERIOD)
        .read_format(rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING);
    let event = Event::open(&attr, Target::Task(tid), None).expect("perf_event_open (perfring-linux)");
    let ring = Ring::map(&event, DATA_PAGES, true).expect("ring");
    let mut set = EventSet::new([Layout::EMPTY; 1], [IdEntry::EMPTY; 1]);
    set.add_event(event.attr(), Endian::NATIVE).expect("event set");
    let mut consumer = ring.consumer().expect("consumer");
    let mut scratch = vec![0u8; 1 << 16];
    event.enable().expect("enable");
    let run = measure(|run| {
        consumer
            .for_each(&mut scratch, |r| {
                run.records += 1;
                run.lost_records += u64::from(r.header.type_ == 2);
                if decode {
                    if let Ok(s) = set.attribute(r).sample() {
                        run.sample(s.ip(), s.tid().map(|t| t.tid), s.time(), s.period());
                    }
                } else {
                    run.checksum ^= r.bytes.len() as u64;
                }
            })
            .expect("kernel ring read");
    });
    event.disable().expect("disable");
    run
}

fn perf_event2_run(tid: i32, decode: bool) -> Run {
    use perf_event::{data::Record, events::Software, Builder, SampleFlag};
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let mut sampler = Builder::new(Software::TASK_CLOCK)
        .observe_pid(tid)
        .sample_period(PERIOD_NS)
        .sample(SampleFlag::IP | SampleFlag::TID | SampleFlag::TIME | SampleFlag::PERIOD)
        .build()
        .expect("perf_event_open (perf-event2)")
        .sampled(DATA_PAGES * page)
        .expect("sampled");
    sampler.enable().expect("enable");
    let run = measure(|run| {
        while let Some(rec) = sampler.next_record() {
            run.records += 1;
            run.lost_records += u64::from(rec.ty() == 2);
            if decode {
                if let Ok(Record::Sample(s)) = rec.parse_record() {
                    run.sample(s.ip(), s.tid(), s.time(), s.period());
                }
            } else {
                run.checksum ^= rec.len() as u64;
            }
        }
    });
    sampler.disable().expect("disable");
    run
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    // A worker spinning on its own thread: the sampled task.
    let (stop, tid) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicI32::new(0)));
    let worker = {
        let (stop, tid) = (stop.clone(), tid.clone());
        std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            tid.store(unsafe { libc::gettid() }, Ordering::SeqCst);
            let t = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                std::hint::black_box(t.elapsed());
            }
        })
    };
    while tid.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    let tid = tid.load(Ordering::SeqCst);
    // Fail early (and readably) if perf events are not available.
    let probe = EventAttr::software(software::TASK_CLOCK).sample_period(PERIOD_NS);
    if let Err(e) = Event::open(&probe, Target::Task(tid), None) {
        println!("skipped: {e}");
        stop.store(true, Ordering::Relaxed);
        worker.join().unwrap();
        return;
    }

    type Reader = (&'static str, fn(i32, bool) -> Run, bool);
    let readers: [Reader; 4] = [
        ("perfring-linux: Ring::consumer + SampleView (ip, tid, time, period)", perfring_run, true),
        ("perf-event2:    Sampler::next_record + parse_record (ip, tid, time, period)", perf_event2_run, true),
        ("perfring-linux: Ring::consumer, drain only (no decode)", perfring_run, false),
        ("perf-event2:    Sampler::next_record, drain only (no decode)", perf_event2_run, false),
    ];
    let mut results: Vec<Vec<Run>> = vec![Vec::new(); readers.len()];
    for round in 0..ROUNDS {
        // Alternate the order each round.
        let order: Vec<usize> =
            if round % 2 == 0 { (0..readers.len()).collect() } else { (0..readers.len()).rev().collect() };
        for i in order {
            let (_, f, decode) = readers[i];
            let run = f(tid, decode);
            std::hint::black_box(run.checksum);
            if decode {
                assert!(run.samples * 10 >= run.records * 9, "{}: few records decoded as samples", readers[i].0);
            }
            results[i].push(run);
        }
    }
    stop.store(true, Ordering::Relaxed);
    worker.join().unwrap();

    println!(
        "reader CPU time per record (task-clock every {} µs of a spinning thread, IP|TID|TIME|PERIOD, {} data pages, \
         drains every {} ms; medians of {ROUNDS} rounds of {} ms each, interleaved):",
        PERIOD_NS / 1000,
        DATA_PAGES,
        BATCH.as_millis(),
        RUN.as_millis()
    );
    for (i, (name, _, _)) in readers.iter().enumerate() {
        let ns = median(results[i].iter().map(Run::ns_per_record).collect());
        let recs = median(results[i].iter().map(|r| r.records as f64).collect());
        let lost: u64 = results[i].iter().map(|r| r.lost_records).sum();
        println!("  {name:<80} {ns:>7.1} ns/record   (median {recs:.0} records/round; {lost} LOST records)");
    }
}
