//! Read the kernel's own perf rings with perfring, for about a second:
//!
//! ```text
//! cargo run --example kernel_reader -p perfring-linux
//! ```
//!
//! On every CPU (system-wide: root, or `perf_event_paranoid` ≤ 0) it opens three software
//! events — cpu-clock and task-clock every 100 µs, context-switches at every switch — with
//! `sample_type` IDENTIFIER|IP|TID|TIME|CPU|PERIOD|CALLCHAIN, maps one ring per CPU and sends
//! the other two events' records into it (`SET_OUTPUT`) — one `Session::all_cpus()` — while
//! two threads make load (one spins, one sleeps and wakes). Each record is attributed to its
//! event by the session's `EventSet` and decoded; the summary lists records by event and type, samples by CPU and by
//! thread, and what was lost (PERF_RECORD_LOST against the kernel's `PERF_FORMAT_LOST`).
//!
//! Exit status 1 if the kernel refuses the events (the message says what to change), 2 if a
//! record does not decode or attribute.

use perfring::record::attr_flags;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use perfring::record::{read_format as rf, sample_type as st, EventRecord, ReadValues, Record};
use perfring_linux::software;
use perfring_linux::{EventAttr, Session, SoftwareEvent};

const EVENTS: [(&str, SoftwareEvent, u64); 3] = [
    ("cpu-clock", software::CPU_CLOCK, 100_000),
    ("context-switches", software::CONTEXT_SWITCHES, 1),
    ("task-clock", software::TASK_CLOCK, 100_000),
];

fn main() -> ExitCode {
    // Every event on every CPU, one ring per CPU shared by the three (SET_OUTPUT).
    let mut session = Session::all_cpus();
    for (_, config, period) in EVENTS {
        session = session.event(
            EventAttr::software(config)
                .sample_period(period)
                .sample_type(st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::CALLCHAIN)
                .read_format(rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING | rf::ID | rf::LOST)
                .flag(attr_flags::SAMPLE_ID_ALL, true)
                .flag(attr_flags::EXCLUDE_KERNEL, false),
        );
    }
    let mut session = match session.open() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };

    let end = Instant::now() + Duration::from_secs(1);
    let (mut records, mut samples, mut by_cpu, mut by_tid, mut lost) =
        (BTreeMap::new(), BTreeMap::new(), BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let mut errors = 0;
    let mut read_all = |session: &mut Session, errors: &mut usize| {
        let read = session.drain(|r| {
            let Ok(index) = r.event() else { return *errors += 1 };
            let name = EVENTS[index].0;
            *records.entry((name, r.raw().header.type_)).or_insert(0u64) += 1;
            match r.decode() {
                Ok(Record::Sample(s)) => {
                    *samples.entry(name).or_insert(0u64) += 1;
                    *by_cpu.entry(s.cpu().map_or(r.cpu(), |c| c.cpu)).or_insert(0u64) += 1;
                    *by_tid.entry(s.tid().map(|t| (t.pid, t.tid))).or_insert(0u64) += 1;
                }
                Ok(Record::Lost(l)) => *lost.entry(name).or_insert(0u64) += l.lost,
                Ok(_) => {}
                _ => *errors += 1,
            }
        });
        if read.is_err() {
            *errors += 1;
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut x = 1u64;
            while Instant::now() < end {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        });
        s.spawn(|| {
            while Instant::now() < end {
                std::thread::sleep(Duration::from_micros(50));
            }
        });
        session.start().expect("enable");
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
            read_all(&mut session, &mut errors);
        }
        session.stop().expect("disable");
        read_all(&mut session, &mut errors);
    });

    let total: u64 = records.values().sum();
    println!(
        "kernel_reader: {total} records from {} rings ({} CPUs × 3 events sharing one ring per CPU)",
        session.rings().len(),
        session.cpus().len()
    );
    println!("records by event and type:");
    for ((name, t), n) in &records {
        println!("  {name:<17} {:<30} {n:>8}", perfring::record::type_name(*t));
    }
    println!("samples by CPU:");
    for (cpu, n) in &by_cpu {
        println!("  cpu {cpu:<3} {n:>8}");
    }
    let mut tids: Vec<_> = by_tid.iter().collect();
    tids.sort_by(|a, b| b.1.cmp(a.1));
    println!("samples by thread (top 5 of {}):", tids.len());
    for (t, n) in tids.iter().take(5) {
        println!("  {t:?} {n:>8}");
    }
    println!("samples and lost, against the kernel's counters (read(2)):");
    let (mut all_reported, mut all_kernel) = (0, 0);
    let set = session.event_set();
    for (index, (name, _, _)) in EVENTS.iter().enumerate() {
        let (mut count, mut kernel_lost) = (0, 0);
        for e in session.events().filter(|e| set.event_of_id(e.id()) == Some(index)) {
            if let Ok(c) = e.read() {
                if let ReadValues::Single(v) = c.values() {
                    count += v.value;
                    kernel_lost += v.lost.unwrap_or(0);
                }
            }
        }
        let reported = lost.get(name).copied().unwrap_or(0);
        (all_reported, all_kernel) = (all_reported + reported, all_kernel + kernel_lost);
        println!(
            "  {name:<17} samples {:>8}, Σ PERF_RECORD_LOST {reported:>6}, kernel lost count {kernel_lost:>6}, counter {count}",
            samples.get(name).unwrap_or(&0),
        );
    }
    // In a shared ring a LOST record carries the id of the event writing when the loss is
    // reported, not of the one that lost: compare the sums (the kernel's may be ahead by the
    // losses still pending, reported only by a ring's next write).
    println!("  all events: Σ PERF_RECORD_LOST {all_reported}, kernel lost count {all_kernel}");
    println!("  by ring (CPUs {:?}): Σ PERF_RECORD_LOST {:?}", session.cpus(), session.lost());
    if errors > 0 {
        eprintln!("{errors} records did not attribute or decode");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
