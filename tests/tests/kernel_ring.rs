//! perfring's consumers over the real kernel's perf rings.
//!
//! Each test opens software events on this thread through perfring-linux (`Event::open`), maps
//! `1 + 2^n` pages (`Ring::map`), and reads the kernel's own control page and data pages with
//! perfring's consumer and backward reader over that mapping (`perfring::memory::Mapping::attach`
//! underneath) — no copy of the control page, the path an embedder uses. Every record is
//! decoded by this crate's own small decoder ([`kernel::decode`]: the fields must end exactly at
//! `header.size`), an oracle independent of `perfring::record`, and the counts are checked
//! against the kernel's counter from `read(2)`.
//!
//! * forward rings, PROT_READ|PROT_WRITE: nothing is dropped unless LOST says so;
//! * a slow reader of a 1-page ring: LOST records account for every drop;
//! * backward rings, PROT_READ, paused around each read: the same samples as a forward twin;
//! * PAUSE_OUTPUT on a forward ring: its drops come back as one LOST record before the next
//!   sample;
//! * `perf record` + our perf.data decoding = `perf script`.
//!
//! Where the kernel refuses perf events (not root, `perf_event_paranoid`), each test skips
//! (`perfring_test_support::skip`: counted by `make test`, a failure in CI);
//! `refused_open_is_a_visible_skip` shows that path by running every test body in a thread
//! without capabilities.
#![cfg(not(loom))]

use crate::kernel;
use perfring::record::attr_flags;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use kernel::*;
use perfring::consumer::Scratch;

/// Sample period of the clock events, in ns. Not the kernel's minimum (10 µs for hrtimer
/// events): at 10 µs one thread produces 100,000 samples/s, the default
/// `perf_event_max_sample_rate`, and the kernel throttles the event (THROTTLE records, and
/// periods that are neither sampled nor counted as lost). 100 µs stays well below it.
const CLOCK_PERIOD: u64 = 100_000;

/// Context switches are counted one by one: every switch is a sample.
const SWITCH_PERIOD: u64 = 1;

/// Callchain context markers of the uapi (`PERF_CONTEXT_KERNEL`, `PERF_CONTEXT_USER`).
const CONTEXT_KERNEL: u64 = -128i64 as u64;
const CONTEXT_USER: u64 = -512i64 as u64;

/// Check the fields of one sample of an event opened on this thread with `attr`, written
/// between `t0` and `t1` (CLOCK_MONOTONIC ns).
fn check_sample(s: &Sample, attr: &Attr, (t0, t1): (u64, u64)) {
    assert_eq!(s.pid, std::process::id(), "pid of {s:x?}");
    assert_eq!(s.tid, gettid(), "tid of {s:x?}");
    assert!(t0 <= s.time && s.time <= t1, "time of {s:x?} outside [{t0}, {t1}]");
    assert!(s.cpu < cpus(), "cpu of {s:x?}");
    assert_eq!(s.period, attr.sample_period, "period of {s:x?}");
    // The callchain starts with the context of the sampled IP, then the IP itself
    // (perf_callchain_kernel / perf_callchain_user store regs->ip first); the header's cpumode
    // says the same context. This ties IP, CALLCHAIN and misc together: a field-order bug in the
    // decoder would break it.
    assert!(s.callchain.len() >= 2, "callchain of {s:x?}");
    assert_eq!(s.callchain[1], s.ip, "callchain[1] is the IP in {s:x?}");
    match s.misc & 7 {
        1 => assert_eq!(s.callchain[0], CONTEXT_KERNEL, "kernel sample {s:x?}"),
        2 => assert_eq!(s.callchain[0], CONTEXT_USER, "user sample {s:x?}"),
        m => panic!("cpumode {m} in {s:x?}"),
    }
    assert!(s.callchain.iter().filter(|&&ip| is_context_marker(ip)).all(|&m| m == CONTEXT_KERNEL || m == CONTEXT_USER));
}

/// Times never go back within one forward ring of one thread's event (CLOCK_MONOTONIC).
fn check_time_order(samples: &[Sample]) {
    for w in samples.windows(2) {
        assert!(w[0].time <= w[1].time, "time went back: {:x?} then {:x?}", w[0], w[1]);
    }
}

/// Bounds for a clock event (cpu-clock, task-clock) with period `p` whose counter read `value`
/// ns, given `attempted` = samples read + samples the kernel counted as lost.
///
/// * Upper: the event's hrtimer expires on a grid of `p` ns of the time the event runs (on
///   schedule-out `perf_swevent_cancel_hrtimer` keeps the remaining part of the period and
///   restarts with it), and the counter adds up the same running time; so at most
///   `value / p` expiries, plus one for the rounding at the ends, plus 0.1% for the two clocks
///   (the counter reads `local_clock()`, the timer runs on CLOCK_MONOTONIC).
/// * Lower: an expiry that comes late by more than a period is forwarded on its grid
///   (`hrtimer_forward_now`) and writes one sample for the periods it skipped — those are
///   neither written nor counted as lost. On this VM the shortfall measured 1–5% at 100 µs
///   (14–21% at 50 µs, 27% at 20 µs, with the kernel throttling at 10 µs), and it grows with
///   timer latency (a vCPU the host does not run for a while: other jobs share the 2 cores).
///   Half is a bound that does not flake on that, and still catches a reader that skips
///   records wholesale (a batch dropped, a wrap mishandled). The exact form of "nothing is
///   dropped silently" is the context-switch event's check: every switch is counted and
///   sampled, so there samples + lost = counter with no tolerance.
fn check_clock_accounting(name: &str, attempted: u64, p: u64, value: u64) {
    let ratio = (attempted * p) as f64 / value as f64;
    println!("  {name}: (samples + lost) × period / counter = {ratio:.4}");
    assert!(attempted * p <= value + p + value / 1000, "{name}: {attempted} × {p} > counter {value} + one period");
    assert!(attempted * p * 2 >= value, "{name}: {attempted} × {p} is below half the counter {value}");
}

/// One event with its writable ring, read with perfring's forward consumer.
struct Forward {
    name: &'static str,
    event: Event,
    ring: Ring,
}

fn forward_body() -> Result<(), Skip> {
    let specs = [
        ("cpu-clock", SW_CPU_CLOCK, CLOCK_PERIOD),
        ("task-clock", SW_TASK_CLOCK, CLOCK_PERIOD),
        ("context-switches", SW_CONTEXT_SWITCHES, SWITCH_PERIOD),
    ];
    let mut events = Vec::new();
    for (name, config, period) in specs {
        let event = open(&software(config, period))?;
        let ring = event.map(16, true);
        events.push(Forward { name, event, ring });
    }
    let mut consumers: Vec<_> =
        events.iter().map(|e| e.ring.consumer().expect("consumer over the kernel's mapping")).collect();
    let mut tallies = vec![Tally::default(); events.len()];
    let mut scratch = Box::new(Scratch::new());
    let drain_all = |consumers: &mut Vec<_>, tallies: &mut Vec<Tally>, scratch: &mut Scratch| {
        for ((c, t), e) in consumers.iter_mut().zip(tallies.iter_mut()).zip(&events) {
            drain(c, &e.event.attr.layout(), scratch, t);
        }
    };

    let t0 = monotonic_ns();
    events.iter().for_each(|e| e.event.enable());
    for _ in 0..80 {
        spin(Duration::from_millis(4));
        switch_out(8);
        drain_all(&mut consumers, &mut tallies, &mut scratch);
    }
    events.iter().for_each(|e| e.event.disable());
    let t1 = monotonic_ns();
    drain_all(&mut consumers, &mut tallies, &mut scratch);

    println!("forward rings (PROT_READ|PROT_WRITE, 16 data pages), this thread:");
    let mut total = 0;
    for (e, t) in events.iter().zip(&tallies) {
        let counts = e.event.counts();
        let attr = &e.event.attr;
        println!(
            "  {}: {} records {:?}, counter {}, Σ LOST {} in {} records, kernel lost {}",
            e.name, t.records, t.by_type, counts.value, t.lost_sum, t.lost_records, counts.lost
        );
        t.samples.iter().for_each(|s| check_sample(s, attr, (t0, t1)));
        check_time_order(&t.samples);
        assert!(t.lost_ids.iter().all(|&id| id == e.event.id), "LOST records carry the writer's id");
        // LOST reports drops after the fact: what it reported is at most what the event counted.
        assert!(t.lost_sum <= counts.lost, "{}: Σ LOST {} > kernel lost {}", e.name, t.lost_sum, counts.lost);
        assert_eq!(t.records, t.samples.len() as u64 + t.lost_records, "{}: only SAMPLE and LOST", e.name);
        let attempted = t.samples.len() as u64 + counts.lost;
        if attr.config == SW_CONTEXT_SWITCHES.config() {
            // Every switch adds 1 to the count and tries to write one sample (period 1): each
            // was either read or counted lost. Exact.
            assert_eq!(attempted, counts.value, "context-switches: samples + lost = counter");
        } else {
            check_clock_accounting(e.name, attempted, attr.sample_period, counts.value);
        }
        assert!(t.samples.len() >= 100, "{}: only {} samples", e.name, t.samples.len());
        total += t.records;
    }
    println!("  {total} kernel records read and decoded");
    assert!(total >= 1000, "only {total} records");
    Ok(())
}

#[test]
fn forward_rings_read_real_kernel_records_that_add_up_to_the_counters() {
    run_or_skip(forward_body);
}

fn slow_reader_body() -> Result<(), Skip> {
    // Two events, each on a 1-page ring (4088 bytes usable): a context-switch sample with its
    // kernel callchain is ~150 bytes, a task-clock sample ~70, so each ring holds a few dozen.
    let switches = open(&software(SW_CONTEXT_SWITCHES, SWITCH_PERIOD))?;
    // 50 µs: fills the ring between reads; shorter periods lose a large share of the timer's
    // expiries to its latency in this VM (27% at 20 µs), which only loosens the clock check.
    let clock = open(&software(SW_TASK_CLOCK, 50_000))?;
    let events = [("context-switches", &switches), ("task-clock", &clock)];
    let rings: Vec<_> = events.iter().map(|(_, e)| e.map(1, true)).collect();
    let mut consumers: Vec<_> = rings.iter().map(|r| r.consumer().unwrap()).collect();
    let mut tallies = vec![Tally::default(); 2];
    let mut scratch = Box::new(Scratch::new());
    let mut drain_all = |tallies: &mut Vec<Tally>| {
        for ((c, t), (_, e)) in consumers.iter_mut().zip(tallies.iter_mut()).zip(&events) {
            drain(c, &e.attr.layout(), &mut scratch, t);
        }
    };

    let t0 = monotonic_ns();
    events.iter().for_each(|(_, e)| e.enable());
    // The slow reader: ~40 switches and 4 ms of spinning (~80 clock samples) between reads,
    // more than either ring holds, so the kernel drops and counts.
    for _ in 0..50 {
        switch_out(40);
        spin(Duration::from_millis(4));
        drain_all(&mut tallies);
    }
    // Flush the pending counts: the kernel reports drops only with its next successful write
    // (kernel/events/ring_buffer.c). With the rings just drained, one switch (a 1 ms sleep, which certainly
    // switches out) and 0.5 ms of spinning (~10 clock samples) fit, and each first write after
    // the losses prepends the LOST record.
    drain_all(&mut tallies);
    std::thread::sleep(Duration::from_millis(1));
    spin(Duration::from_micros(500));
    events.iter().for_each(|(_, e)| e.disable());
    let t1 = monotonic_ns();
    drain_all(&mut tallies);

    println!("slow reader, 1-page rings (PROT_READ|PROT_WRITE):");
    let mut total = 0;
    for ((name, e), t) in events.iter().zip(&tallies) {
        let counts = e.counts();
        let samples = t.samples.len() as u64;
        println!(
            "  {name}: {} records {:?} ({samples} samples, {} LOST), Σ LOST {}, kernel lost {}, counter {}",
            t.records, t.by_type, t.lost_records, t.lost_sum, counts.lost, counts.value
        );
        t.samples.iter().for_each(|s| check_sample(s, &e.attr, (t0, t1)));
        check_time_order(&t.samples);
        assert!(t.lost_records > 0 && counts.lost > 0, "{name}: the slow reader lost nothing");
        assert!(t.lost_ids.iter().all(|&id| id == e.id), "LOST records carry the writer's id");
        // With the pending count flushed, the LOST records say exactly what the event counted.
        assert_eq!(t.lost_sum, counts.lost, "{name}: Σ LOST = the event's lost count (PERF_FORMAT_LOST)");
        assert_eq!(t.records, samples + t.lost_records, "{name}: only SAMPLE and LOST");
        if e.attr.config == SW_CONTEXT_SWITCHES.config() {
            assert_eq!(samples + t.lost_sum, counts.value, "{name}: samples read + Σ LOST = counter");
        } else {
            check_clock_accounting(name, samples + t.lost_sum, e.attr.sample_period, counts.value);
        }
        total += t.records;
    }
    println!("  {total} kernel records read and decoded");
    assert!(total >= 1000, "only {total} records");
    Ok(())
}

#[test]
fn a_slow_reader_of_a_small_ring_gets_lost_records_that_match_the_kernels_count() {
    run_or_skip(slow_reader_body);
}

/// Check that backward sample `s` is the forward twin's switch number `at` (twins are matched
/// by their place in the sequence of switches, never by a time window, which steal time on a
/// busy VM breaks); returns whether its time differs.
///
/// A switch reaches every twin with one shared `perf_sample_data`, so normally the time is
/// identical. But when some ring of the group prepends a PERF_RECORD_LOST in that overflow, the
/// kernel fills the LOST record's `sample_id` with `perf_event_header__init_id(.., data, ..)` on
/// that shared data: it re-stamps `data->time`, and the sample behind the LOST and those the
/// later twins write carry the new time (seen here: ~15 µs later), while twins written earlier
/// keep the old one. Every other field is the same.
fn twin(forward: &[Sample], at: usize, s: &Sample, ring: &str) -> bool {
    let f = forward
        .get(at)
        .unwrap_or_else(|| panic!("{ring}: {s:x?} is switch {at}, the forward ring has {}", forward.len()));
    assert_eq!(Sample { time: s.time, ..f.clone() }, *s, "{ring}: switch {at} differs from its forward twin");
    f.time != s.time
}

/// One backward ring, read newest-first between PAUSE_OUTPUT(1) and PAUSE_OUTPUT(0).
struct Backward {
    name: &'static str,
    pages: usize,
    event: Event,
    ring: Ring,
}

fn backward_body() -> Result<(), Skip> {
    // Three twins of one context-switch event on this thread. Every switch makes the kernel call
    // the overflow handler of each with one shared perf_sample_data, so all three get the same
    // sample: same ip, pid/tid, time, cpu, callchain (the time can differ after a LOST record:
    // see `find_twin`). One group, started and stopped at one instant (`start_group`,
    // `stop_group`): separate ioctls can be preempted between them, and that switch would
    // reach only some. For the same reason the backward rings are paused and resumed while the
    // group is stopped, so both stop and restart at the same switch.
    let attr = software(SW_CONTEXT_SWITCHES, SWITCH_PERIOD);
    let forward = open(&attr)?;
    let mut backs = Vec::new();
    // 32 pages hold ~850 samples: never wraps between reads (80 sleeps each, ~80-300 switches
    // with the preemptions of a busy machine). 1 page holds ~27: wraps at every read; the
    // reader gets the newest records that survived.
    for (name, pages) in [("backward, 32 pages", 32), ("backward, 1 page", 1)] {
        let event = open_in(&attr.flag(attr_flags::WRITE_BACKWARD, true), Some(&forward))?;
        let ring = event.map(pages, false);
        backs.push(Backward { name, pages, event, ring });
    }
    let fring = forward.map(128, true);
    let mut fconsumer = fring.consumer().unwrap();
    // Read-only mappings: their readers load and never store (Ring::overwrite_reader).
    let mut readers: Vec<_> = backs.iter().map(|b| b.ring.overwrite_reader().unwrap()).collect();
    let mut scratch = Box::new(Scratch::new());
    let mut ftally = Tally::default();
    // Per backward ring: each read's records in the order walked (newest first), and whether
    // the walk stopped at overwritten records.
    let mut reads: Vec<Vec<(Vec<Record>, bool)>> = vec![Vec::new(); backs.len()];
    let mut btallies = vec![Tally::default(); backs.len()];

    // 20 rounds of 80 sleeps: about 1,600 switches, all of them read back from the 32-page
    // ring; a last round of one sleep, then a read of what came after the previous read. Every
    // 4th round also sleeps 1 ms while the backward rings are paused: that switch is dropped
    // there (and counted), kept by the forward twin, and reported by a LOST record after resume.
    // Any round's read can also be preempted while the rings are paused (a switch dropped
    // there): the last round's sleep is the switch after the last resume that writes its LOST
    // record (without it, a drop in round 19's read was never reported, and Σ LOST fell short
    // of the kernel's lost count).
    const ROUNDS: usize = 20;
    // Round 19 drops too: the last drop has only the last round's switch to report it.
    let drop_round = |round: usize| round % 4 == 1 || round == ROUNDS - 1;
    let t0 = monotonic_ns();
    let members: Vec<&Event> = backs.iter().map(|b| &b.event).collect();
    // Stop the group, then pause (or resume) every backward ring. A switch between two of these
    // ioctls (provoked: 1 ms always switches out) must reach none of the rings, or the backward
    // rings would stop or restart at different switches. The caller restarts the group.
    let stop_and_set_paused = |paused: bool| {
        forward.stop_group();
        for m in &members {
            m.pause_output(paused);
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    forward.start_group(&members);
    for round in 0..=ROUNDS {
        switch_out(if round < ROUNDS { 80 } else { 1 });
        stop_and_set_paused(true);
        if round < ROUNDS {
            forward.restart_group();
        }
        if drop_round(round) {
            std::thread::sleep(Duration::from_millis(1));
        }
        for (i, (b, r)) in backs.iter().zip(readers.iter_mut()).enumerate() {
            let mut walked = Vec::new();
            let layout = b.event.attr.layout();
            let summary = r
                .read(&mut scratch, |rec| {
                    btallies[i].add(rec.bytes, &layout);
                    walked.push(decode(rec.bytes, &layout).unwrap());
                })
                .unwrap_or_else(|e| panic!("{}: backward read failed: {e}", b.name));
            reads[i].push((walked, summary.wrapped));
        }
        if round < ROUNDS {
            stop_and_set_paused(false);
            forward.restart_group();
        }
        drain(&mut fconsumer, &forward.attr.layout(), &mut scratch, &mut ftally);
    }
    let t1 = monotonic_ns();

    let fcounts = forward.counts();
    println!("backward rings (PROT_READ, PAUSE_OUTPUT around reads) and their forward twin, this thread:");
    println!(
        "  forward, 128 pages: {} samples, counter {}, kernel lost {}",
        ftally.samples.len(),
        fcounts.value,
        fcounts.lost
    );
    assert_eq!(fcounts.lost, 0, "the forward twin's ring is large enough");
    assert_eq!(ftally.samples.len() as u64, fcounts.value, "the forward twin has every switch");
    check_time_order(&ftally.samples);
    // Samples are unique by time: the forward ring's index of each.
    let index: BTreeMap<u64, usize> = ftally.samples.iter().enumerate().map(|(i, s)| (s.time, i)).collect();
    assert_eq!(index.len(), ftally.samples.len(), "one switch per timestamp");

    let mut total = 0;
    let mut restamped = 0;
    let mut backward_lost = 0;
    // Per read of the 32-page ring: the forward index of its newest sample.
    let mut newest: Vec<Option<usize>> = Vec::new();
    for (i, b) in backs.iter().enumerate() {
        let t = &btallies[i];
        let counts = b.event.counts();
        backward_lost += counts.lost;
        let wrapped = reads[i].iter().filter(|r| r.1).count();
        println!(
            "  {}: {} records in {} reads ({} samples, {} LOST, Σ {}), {wrapped} reads wrapped, counter {}, \
             kernel lost {}",
            b.name,
            t.records,
            reads[i].len(),
            t.samples.len(),
            t.lost_records,
            t.lost_sum,
            counts.value,
            counts.lost
        );
        assert_eq!(counts.value, fcounts.value, "{}: the twins counted the same switches", b.name);
        assert!(t.lost_sum <= counts.lost, "{}: Σ LOST ≤ the event's lost count", b.name);
        assert_eq!(t.records, t.samples.len() as u64 + t.lost_records, "{}: only SAMPLE and LOST", b.name);
        // The 32-page ring never wraps, so it holds every switch or a LOST record counting it:
        // its n-th switch (samples and Σ LOST so far) is the forward ring's n-th. The 1-page
        // ring wraps: a read holds the newest switches that survived, consecutive, ending at
        // the 32-page ring's newest of the same round.
        let mut next = 0usize;
        for (round, (walked, _)) in reads[i].iter().enumerate() {
            let samples: Vec<&Sample> = walked
                .iter()
                .filter_map(|r| match r {
                    Record::Sample(s) => Some(s),
                    _ => None,
                })
                .collect();
            // Newest first within a read.
            for w in samples.windows(2) {
                assert!(w[0].time > w[1].time, "{}: not newest-first: {:x?} then {:x?}", b.name, w[0], w[1]);
            }
            if b.pages != 32 {
                next = match newest[round] {
                    Some(n) => (n + 1).checked_sub(samples.len()).expect("more samples than switches"),
                    None => {
                        assert!(
                            samples.is_empty(),
                            "{}: round {round}: samples where the 32-page ring has none",
                            b.name
                        );
                        continue;
                    }
                };
            }
            // Oldest to newest. In a backward ring a LOST record sits below the record it was
            // prepended to, so the newest-first walk meets it just before that sample.
            for (k, record) in walked.iter().enumerate().rev() {
                match record {
                    Record::Sample(s) => {
                        if let (Some(Record::Lost { lost, .. }), 32) = (k.checked_sub(1).map(|j| &walked[j]), b.pages) {
                            // Never wrapped: the LOST record counts the switches missed before it.
                            next += *lost as usize;
                        }
                        check_sample(s, &b.event.attr, (t0, t1));
                        restamped += u32::from(twin(&ftally.samples, next, s, b.name));
                        next += 1;
                    }
                    Record::Lost { .. } => {
                        // A read-only ring drops only while paused, between reads: the LOST record
                        // goes with the read's oldest sample.
                        assert!(
                            k + 2 == walked.len() && matches!(walked[k + 1], Record::Sample(_)),
                            "{}: a LOST record not written with the read's oldest sample",
                            b.name
                        );
                    }
                    other => panic!("{}: unexpected record {other:?}", b.name),
                }
            }
            if b.pages == 32 {
                newest.push(next.checked_sub(1).filter(|_| !samples.is_empty()));
            }
        }
        if b.pages == 32 {
            // Every switch is in the ring or in a LOST record: the drops of the last drop round
            // were flushed by the switches of the rounds after it, and those of the last read by
            // the last round's switch.
            assert_eq!(wrapped, 0, "{}: wrapped", b.name);
            assert!(t.lost_records as usize >= (0..ROUNDS).filter(|&r| drop_round(r)).count(), "{}: LOST", b.name);
            assert_eq!(t.lost_sum, counts.lost, "{}: Σ LOST = the event's lost count", b.name);
            assert_eq!(t.samples.len() as u64 + t.lost_sum, counts.value, "{}: samples + Σ LOST = counter", b.name);
            assert_eq!(next as u64, fcounts.value, "{}: the sequence ends at the forward ring's last switch", b.name);
        } else {
            assert!(wrapped >= 10, "{}: the 1-page ring should wrap at (almost) every read", b.name);
            for (walked, wrapped) in &reads[i] {
                // A wrapped read gets what fits: a page of records, never a torn one.
                assert!(!wrapped || walked.len() >= 10, "{}: a read of a full ring got {}", b.name, walked.len());
            }
        }
        total += t.records;
    }
    // A re-stamped match needs a LOST record in that overflow, i.e. an earlier drop in one of the
    // (paused) backward rings; each LOST can shift the sample of each of the three rings.
    println!("  {restamped} samples matched their twin with a re-stamped time (after a LOST record)");
    assert!(u64::from(restamped) <= 3 * backward_lost, "re-stamped times without drops to explain them");
    println!("  {total} records read backward and decoded");
    assert!(total >= 1000, "only {total} records read backward");
    Ok(())
}

#[test]
fn backward_rings_read_newest_first_match_their_forward_twin() {
    run_or_skip(backward_body);
}

fn paused_body() -> Result<(), Skip> {
    // Twin context-switch events in one group, each with a writable forward ring. In turn, one
    // ring is paused over a 1 ms sleep (a switch it drops and counts), resumed, and the thread
    // sleeps again: the next write to that ring is a LOST record followed by the sample. The
    // group is stopped while both rings are drained, so a switch between the two drains cannot
    // land in one drain and not the other.
    let attr = software(SW_CONTEXT_SWITCHES, SWITCH_PERIOD);
    let a = open(&attr)?;
    let b = open_in(&attr, Some(&a))?;
    let events = [&a, &b];
    let rings = events.map(|e| e.map(8, true));
    let mut consumers = rings.each_ref().map(|r| r.consumer().unwrap());
    let mut scratch = Box::new(Scratch::new());
    let mut restamped = 0;
    a.start_group(&[&b]);
    for phase in 0..6 {
        let x = phase % 2;
        let lost_before = events[x].counts().lost;
        events[x].pause_output(true);
        std::thread::sleep(Duration::from_millis(1));
        events[x].pause_output(false);
        std::thread::sleep(Duration::from_millis(1));
        a.stop_group();
        let records: Vec<Vec<Record>> = (0..2)
            .map(|i| {
                let records = drain_records(&mut consumers[i], &events[i].attr.layout(), &mut scratch);
                // A switch between the drains (provoked: 1 ms always switches out) must reach
                // neither ring, or it would be in one drain and not the other.
                std::thread::sleep(Duration::from_millis(1));
                records
            })
            .collect();
        a.restart_group();
        let samples = |i: usize| -> Vec<&Sample> {
            records[i]
                .iter()
                .filter_map(|r| match r {
                    Record::Sample(s) => Some(s),
                    _ => None,
                })
                .collect()
        };
        let (paused, other) = (samples(x), samples(1 - x));
        let dropped = events[x].counts().lost - lost_before;
        // Exactly one LOST, reporting every drop of the pause, right before a sample.
        let lost_at: Vec<usize> =
            (0..records[x].len()).filter(|&k| matches!(records[x][k], Record::Lost { .. })).collect();
        assert_eq!(lost_at.len(), 1, "phase {phase}: one LOST record in {:x?}", records[x]);
        let k = lost_at[0];
        let Record::Lost { id, lost, sample_id } = &records[x][k] else { unreachable!() };
        let Some(Record::Sample(after)) = records[x].get(k + 1) else {
            panic!("phase {phase}: the LOST record is not followed by a sample: {:x?}", records[x])
        };
        assert!(dropped >= 1 && *lost == dropped, "phase {phase}: LOST says {lost}, the event lost {dropped}");
        assert_eq!(*id, events[x].id, "phase {phase}: the LOST record carries the writer's id");
        assert_eq!(
            sample_id.tid,
            Some(perfring::record::PidTid { pid: std::process::id(), tid: gettid() }),
            "phase {phase}: LOST trailer"
        );
        // The LOST's trailer and the sample behind it were stamped together.
        assert_eq!(sample_id.time, Some(after.time), "phase {phase}: LOST time and its sample's time");
        // The twin kept what the paused ring dropped: the same samples before and after, and
        // `dropped` more where the LOST record stands.
        assert_eq!(other.len() as u64, paused.len() as u64 + dropped, "phase {phase}: twin samples");
        let p = paused.iter().position(|s| *s == after).unwrap();
        let d = dropped as usize;
        assert_eq!(paused[..p], other[..p], "phase {phase}: samples before the pause");
        assert_eq!(paused[p + 1..], other[p + d + 1..], "phase {phase}: samples after the LOST");
        // The twin's copy of `after`: the same switch, stamped at or before it (see find_twin).
        let twin = other[p + d];
        assert_eq!(Sample { time: after.time, ..twin.clone() }, *after, "phase {phase}: twin differs beyond time");
        assert!(twin.time <= after.time, "phase {phase}: twin stamped later");
        restamped += u32::from(twin.time != after.time);
    }
    a.stop_group();
    println!(
        "PAUSE_OUTPUT on forward rings: 6 pauses, each reported by one LOST record before the next sample; \
         {restamped} of them re-stamped that sample later than its twin's copy"
    );
    Ok(())
}

#[test]
fn a_paused_forward_ring_reports_its_drops_with_a_lost_record_before_the_next_sample() {
    run_or_skip(paused_body);
}

/// `perf script -F ip,pid,tid,time --ns` lines: "  1063/1063  3909.064405871:  ffffffff81b0c1fa".
fn parse_perf_script(out: &str) -> Vec<(u64, u32, u32, u64)> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 3, "unexpected perf script line {line:?}");
            let (pid, tid) = f[0].split_once('/').expect("pid/tid");
            let (secs, nanos) = f[1].trim_end_matches(':').split_once('.').expect("secs.nanos");
            assert_eq!(nanos.len(), 9, "--ns prints 9 decimals: {line:?}");
            let time = secs.parse::<u64>().unwrap() * 1_000_000_000 + nanos.parse::<u64>().unwrap();
            let ip = u64::from_str_radix(f[2], 16).unwrap();
            (ip, pid.parse().unwrap(), tid.parse().unwrap(), time)
        })
        .collect()
}

fn perf_record_body() -> Result<(), Skip> {
    if !perfring_test_support::perf_available() {
        return Ok(());
    }
    // perf needs the same permission our own opens need: the same visible skip if refused.
    drop(open(&software(SW_CPU_CLOCK, CLOCK_PERIOD))?);
    let dir = std::env::temp_dir().join(format!("perfring-kernel-ring-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("perf.data");
    let file_str = file.to_str().unwrap();
    let workload = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done";
    let rec = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-c", "100000", "-o", file_str, "--", "sh", "-c", workload])
        .output()
        .unwrap();
    assert!(rec.status.success(), "perf record failed: {}", String::from_utf8_lossy(&rec.stderr));
    let script =
        Command::new("perf").args(["script", "-F", "ip,pid,tid,time", "--ns", "-i", file_str]).output().unwrap();
    assert!(script.status.success(), "perf script failed: {}", String::from_utf8_lossy(&script.stderr));
    let mut theirs = parse_perf_script(&String::from_utf8_lossy(&script.stdout));

    let contents = perf_data::read(&std::fs::read(&file).unwrap()).unwrap_or_else(|e| panic!("perf.data: {e}"));
    let mut ours: Vec<_> = contents.samples.iter().map(|s| (s.ip, s.pid, s.tid, s.time)).collect();
    println!(
        "perf record -e cpu-clock -c 100000: our decoder read {} samples ({} other kernel records, {} perf records), \
         perf script printed {}",
        ours.len(),
        contents.other_kernel_records,
        contents.perf_records,
        theirs.len()
    );
    // perf script prints in time order; the data section is in the order perf read its rings.
    ours.sort_unstable_by_key(|&(ip, pid, tid, time)| (time, pid, tid, ip));
    theirs.sort_unstable_by_key(|&(ip, pid, tid, time)| (time, pid, tid, ip));
    assert!(ours.len() >= 100, "too few samples: {}", ours.len());
    assert_eq!(ours.len(), theirs.len(), "sample count");
    for (a, b) in ours.iter().zip(&theirs) {
        assert_eq!(a, b, "(ip, pid, tid, time) differ");
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

#[test]
fn perf_record_data_decodes_to_the_samples_perf_script_prints() {
    run_or_skip(perf_record_body);
}

/// The skip path, shown for real: each test body runs in a thread whose effective capabilities
/// are cleared, so the kernel treats it like a non-root user and `perf_event_paranoid` ≥ 2
/// refuses the kernel-side sampling these events ask for (EACCES). Each must come back as a
/// skip (and print its one line), never as a pass or a failure.
#[test]
fn refused_open_is_a_visible_skip() {
    let level = paranoid();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !matches!(level, Some(l) if l >= 2) {
        return perfring_test_support::skip(format!(
            "the skip path needs root to drop from and perf_event_paranoid ≥ 2 ({level:?})"
        ));
    }
    type Body = fn() -> Result<(), Skip>;
    let bodies: [(&str, Body); 5] = [
        ("forward", forward_body),
        ("slow reader", slow_reader_body),
        ("backward", backward_body),
        ("paused", paused_body),
        ("perf record", perf_record_body),
    ];
    for (name, body) in bodies {
        let outcome = std::thread::spawn(move || {
            drop_effective_capabilities().expect("capset");
            body()
        })
        .join()
        .unwrap();
        assert_eq!(outcome, Err(Skip(libc::EACCES)), "{name}: expected a refusal");
        // What run_or_skip makes of it: a skip with this reason (not called here, where it
        // would count as this test's skip, and fail it where skips are forbidden).
        println!("{name} without capabilities: would skip: {}", skip_reason(libc::EACCES));
    }
}
