//! A BPF program's `bpf_perf_event_output`, read by perfring-linux's `PerfEventArray`, for
//! about a second (root: BPF programs and CPU-wide events):
//!
//! ```text
//! cargo run --release --example bpf_events -p perfring-linux
//! ```
//!
//! The program (a socket filter assembled by hand, `perfring_test_support::bpf`) emits a
//! counter and its CPU, 16 bytes, at every run; a thread pinned to each CPU runs it in
//! `BPF_PROG_TEST_RUN` loops of 10,000, and the program counts its runs and failed outputs in
//! an array map. The reader (this thread) waits for wakeups (the default watermark, a quarter
//! of a 256 KiB ring), drains every CPU's ring and checks each record's CPU and counter; at the
//! end it prints events/s, what it counted lost, what the program saw fail and the counters
//! missing from what was read (the three agree).
//! A tool loading its program with aya or libbpf gives the reader that map:
//! `PerfEventArray::builder().map(fd)`.
//!
//! Exit status 1 if the kernel refuses (the message says what), 2 if a record is out of order
//! or the counts disagree.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfring_linux::{PerfEventArray, RawSample};
use perfring_test_support::bpf::{pin_to_cpu, OutputProgram};

fn main() -> ExitCode {
    // Per CPU: (events read, the next counter expected, counters skipped, records out of
    // order). A counter skipped is an output that failed (the ring was full): the two agree.
    let mut per_cpu: BTreeMap<u32, (u64, u64, u64, u64)> = BTreeMap::new();
    let on_sample = |sample: &RawSample<'_>| {
        // 16 bytes and 4 of padding (the RAW size the kernel writes): a view into the ring, or
        // copied into `buf` where the ring's end cuts them (`sample.parts()`: the two views).
        let mut buf = [0u8; 24];
        let bytes = sample.contiguous(&mut buf).unwrap_or_default();
        let word =
            |i: usize| bytes.get(i * 8..i * 8 + 8).and_then(|w| w.try_into().ok()).map_or(u64::MAX, u64::from_ne_bytes);
        let (counter, cpu) = (word(0), word(1));
        let entry = per_cpu.entry(sample.cpu()).or_default();
        entry.0 += 1;
        entry.2 += counter.saturating_sub(entry.1);
        entry.3 += u64::from(counter < entry.1 || cpu != u64::from(sample.cpu()));
        entry.1 = counter + 1;
    };
    let mut reader = match PerfEventArray::builder().build(on_sample) {
        Ok(reader) => reader,
        Err(e) => {
            eprintln!("PerfEventArray: {e}");
            return ExitCode::from(1);
        }
    };
    let program = match OutputProgram::load(reader.map_fd(), 16) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("loading the BPF program: {e}");
            return ExitCode::from(1);
        }
    };
    let cpus = reader.cpus().to_vec();
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let mut wakeups = 0;
    std::thread::scope(|s| {
        for &cpu in &cpus {
            let (program, stop) = (&program, &stop);
            s.spawn(move || {
                pin_to_cpu(cpu).expect("pinning to an online CPU");
                while !stop.load(Ordering::Relaxed) {
                    program.run(10_000).expect("BPF_PROG_TEST_RUN");
                }
            });
        }
        while start.elapsed() < Duration::from_secs(1) {
            match reader.poll(Some(Duration::from_millis(100))) {
                Ok(d) if d.samples > 0 => wakeups += 1,
                Ok(_) => {}
                Err(e) => eprintln!("reading: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    // What came after the last wakeup (below the watermark) and the kernel's pending drops.
    if let Err(e) = reader.flush() {
        eprintln!("flush: {e}");
    }
    let elapsed = start.elapsed().as_secs_f64();
    let lost = reader.lost().to_vec();
    let cpus_read = reader.cpus().to_vec();
    drop(reader);
    let mut status = 0;
    println!(
        "{:>4} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "cpu", "events", "events/s", "lost", "failed", "skipped", "out of order"
    );
    for (i, cpu) in cpus_read.iter().enumerate() {
        let (events, next, skipped, disorder) = per_cpu.get(cpu).copied().unwrap_or_default();
        let (runs, failed) = program.counts(*cpu).unwrap_or((0, 0));
        // The counters after the last one read were skipped too.
        let skipped = skipped + runs.saturating_sub(next);
        println!(
            "{cpu:>4} {events:>12} {:>12.0} {:>10} {failed:>10} {skipped:>10} {disorder:>12}",
            events as f64 / elapsed,
            lost[i]
        );
        if lost[i] != failed || skipped != failed || events + failed != runs || disorder != 0 {
            status = 2;
        }
    }
    let total: u64 = per_cpu.values().map(|v| v.0).sum();
    println!(
        "{total} events in {elapsed:.2} s ({:.2} M/s) over {wakeups} wakeups; lost {} (the program counted {})",
        total as f64 / elapsed / 1e6,
        lost.iter().sum::<u64>(),
        cpus_read.iter().map(|&c| program.counts(c).map_or(0, |c| c.1)).sum::<u64>()
    );
    ExitCode::from(status)
}
