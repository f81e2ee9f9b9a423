//! A BPF program's `bpf_ringbuf_output`, and another's `bpf_ringbuf_reserve` then
//! `bpf_ringbuf_submit` or `bpf_ringbuf_discard`, read by perfring-linux's `RingBuffer` for
//! about a second (root: BPF programs):
//!
//! ```text
//! cargo run --release --example bpf_ringbuf -p perfring-linux
//! ```
//!
//! The programs (socket filters assembled by hand, `perfring_test_support::bpf_ringbuf`) share
//! one 1 MiB ring: one outputs a counter and its CPU, 16 bytes, at every run; the other
//! reserves 24 bytes, writes its counter, its CPU and one more word in place, and submits it —
//! or discards it, one run in four. A thread pinned to each CPU runs both in `BPF_PROG_TEST_RUN`
//! loops of 10,000, and each program counts its runs, failed reservations and discards in an
//! array map. The reader (this thread) polls with the default wait policy, checks each record's
//! CPU and counter (in order per CPU and program), and at the end prints events/s, the discards
//! it skipped beside the program's count, and the failed reservations (the counters missing
//! from what was read are exactly those and the discards).
//! A tool loading its programs with aya or libbpf gives the reader their map:
//! `RingBuffer::from_map(fd, callback)`.
//!
//! Exit status 1 if the kernel refuses (the message says what), 2 if a record is out of order
//! or the counts disagree.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfring_linux::RingBuffer;
use perfring_test_support::bpf::pin_to_cpu;
use perfring_test_support::bpf_ringbuf::{Emit, RingbufProgram};

/// Per CPU and program (0 output, 1 reserve): records read, the next counter expected, the
/// counters skipped, records out of order or malformed.
type Tally = BTreeMap<(u64, usize), (u64, u64, u64, u64)>;

fn main() -> ExitCode {
    let mut tally = Tally::new();
    let on_sample = |_ring: usize, sample: &[u8]| {
        // A view into the ring: 16 bytes from the output program, 24 from the reserving one.
        let kind = usize::from(sample.len() == 24);
        let word = |i: usize| sample.get(i * 8..i * 8 + 8).and_then(|w| w.try_into().ok()).map(u64::from_ne_bytes);
        let (Some(counter), Some(cpu)) = (word(0), word(1)) else {
            tally.entry((u64::MAX, kind)).or_default().3 += 1;
            return;
        };
        let entry = tally.entry((cpu, kind)).or_default();
        entry.0 += 1;
        entry.2 += counter.saturating_sub(entry.1);
        entry.3 += u64::from(counter < entry.1 || (kind == 1 && word(2) != Some(counter + 2)));
        entry.1 = counter + 1;
    };
    let mut reader = match RingBuffer::create(256, on_sample) {
        Ok(reader) => reader,
        Err(e) => {
            eprintln!("RingBuffer: {e}");
            return ExitCode::from(1);
        }
    };
    let Some(map) = reader.map_fd(0) else { return ExitCode::from(1) };
    let programs = RingbufProgram::load(map, 16, Emit::Output, 0)
        .and_then(|o| Ok((o, RingbufProgram::load(map, 24, Emit::Reserve { discard_every: 4 }, 0)?)));
    let (output, reserve) = match programs {
        Ok(p) => p,
        Err(e) => {
            eprintln!("loading the BPF programs: {e}");
            return ExitCode::from(1);
        }
    };
    let cpus = perfring_linux::online_cpus().unwrap_or_else(|_| vec![0]);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let (mut polls, mut read) = (0u64, 0u64);
    std::thread::scope(|s| {
        for &cpu in &cpus {
            let (output, reserve, stop) = (&output, &reserve, &stop);
            s.spawn(move || {
                pin_to_cpu(cpu).expect("pinning to an online CPU");
                while !stop.load(Ordering::Relaxed) {
                    output.run(10_000).expect("BPF_PROG_TEST_RUN");
                    reserve.run(10_000).expect("BPF_PROG_TEST_RUN");
                }
            });
        }
        while start.elapsed() < Duration::from_secs(1) {
            match reader.poll(Some(Duration::from_millis(100))) {
                Ok(n) => {
                    polls += 1;
                    read += n;
                }
                Err(e) => eprintln!("reading: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    // What the last runs wrote after the last poll.
    match reader.consume() {
        Ok(n) => read += n,
        Err(e) => eprintln!("reading: {e}"),
    }
    let elapsed = start.elapsed().as_secs_f64();
    let discarded = reader.discarded();
    drop(reader);
    report(&tally, &cpus, [&output, &reserve], (read, polls, discarded, elapsed))
}

/// Print the table and the totals; exit status 2 if any count disagrees.
fn report(tally: &Tally, cpus: &[u32], programs: [&RingbufProgram; 2], run: (u64, u64, u64, f64)) -> ExitCode {
    let (read, polls, discarded, elapsed) = run;
    let mut status = 0;
    println!(
        "{:>4} {:>16} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "cpu", "program", "events", "events/s", "failed", "discarded", "skipped", "out of order"
    );
    let (mut failed_all, mut discarded_all) = (0, 0);
    for &cpu in cpus {
        for (kind, program) in programs.iter().enumerate() {
            let (events, next, skipped, disorder) = tally.get(&(u64::from(cpu), kind)).copied().unwrap_or_default();
            let (runs, failed, discards) = program.counts(cpu).unwrap_or((0, 0, 0));
            // The counters after the last one read were skipped too.
            let skipped = skipped + runs.saturating_sub(next);
            let name = ["output", "reserve/submit"][kind];
            println!(
                "{cpu:>4} {name:>16} {events:>12} {:>12.0} {failed:>10} {discards:>10} {skipped:>10} {disorder:>12}",
                events as f64 / elapsed
            );
            if skipped != failed + discards || events + failed + discards != runs || disorder != 0 {
                status = 2;
            }
            failed_all += failed;
            discarded_all += discards;
        }
    }
    let malformed: u64 = tally.iter().filter(|(k, _)| k.0 == u64::MAX).map(|(_, v)| v.3).sum();
    if discarded != discarded_all || malformed != 0 {
        status = 2;
    }
    println!(
        "{read} events in {elapsed:.2} s ({:.2} M/s) over {polls} polls; {discarded} discards skipped (the program \
         counted {discarded_all}); {failed_all} reservations failed (ring full)",
        read as f64 / elapsed / 1e6
    );
    ExitCode::from(status)
}
