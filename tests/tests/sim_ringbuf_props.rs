//! The BPF ring buffer simulator as a property test: random CPUs, workloads, ring sizes,
//! interrupts, NMIs in the lock, discards, wakeup flags and consumers, each session checked by
//! its oracle (every committed record read once, in reservation order, intact; discarded and
//! BUSY ones never; every failed reservation counted, as the producer counts; no wakeup lost).
//!
//! `RINGBUF_CASES` sets the number of cases (default 10,000). Coverage counters are printed,
//! and the test fails if any kind of case never happened.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use perfring::bpf_ringbuf::Publish;
use perfring_sim::ringbuf::{run, Config, HeapRing};
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestCaseError, TestRunner};

fn config() -> impl Strategy<Value = Config> {
    (
        (1u32..=4, 20u32..200, any::<u64>(), 5u32..=10),
        (0usize..=120, 100u32..900, 0u32..300, 0u32..200),
        (0u32..500, prop_oneof![Just(0u32), 1u32..100], 0u32..100),
        (0u32..30, 0u32..8, 0u32..20, 0u8..3, any::<bool>()),
    )
        .prop_map(
            |(
                (cpus, steps, seed, ring_log),
                (max_sample, reserve, irq, nmi),
                (discard, never, force),
                (read_every, read_budget, wake_latency, publish, untrusted),
            )| Config {
                cpus,
                steps,
                seed,
                ring_size: 1 << ring_log,
                max_sample: max_sample.min((1 << ring_log) / 2),
                reserve_permille: reserve,
                irq_permille: irq,
                nmi_in_lock_permille: nmi,
                discard_permille: discard,
                never_permille: never,
                force_permille: force,
                read_every,
                read_budget,
                wake_latency,
                publish: [Publish::PerBatch, Publish::PerRecord, Publish::HoldLast][usize::from(publish)],
                untrusted,
            },
        )
}

fn cases() -> u32 {
    std::env::var("RINGBUF_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000)
}

#[test]
fn the_ringbuf_oracle_holds_for_random_sessions() {
    static OUT_OF_ORDER: AtomicU64 = AtomicU64::new(0);
    static DISCARDS: AtomicU64 = AtomicU64::new(0);
    static FULL: AtomicU64 = AtomicU64::new(0);
    static NMI_IN_LOCK: AtomicU64 = AtomicU64::new(0);
    static WRAPS: AtomicU64 = AtomicU64::new(0);
    static NESTED: AtomicU64 = AtomicU64::new(0);
    static DEPTH4: AtomicU64 = AtomicU64::new(0);
    static WAKEUPS_CHECKED: AtomicU64 = AtomicU64::new(0);
    static SLEEPS: AtomicU64 = AtomicU64::new(0);
    static HELD: AtomicU64 = AtomicU64::new(0);
    let mut runner = TestRunner::new(PtConfig { cases: cases(), failure_persistence: None, ..PtConfig::default() });
    let result = runner.run(&config(), |cfg| {
        let mut ring = HeapRing::new(cfg.ring_size);
        let report = run(&cfg, &mut ring);
        let count = |c: &AtomicU64, yes: bool| {
            if yes {
                c.fetch_add(1, Relaxed);
            }
        };
        count(&OUT_OF_ORDER, report.total(|s| s.out_of_order) > 0);
        count(&DISCARDS, report.skipped > 0);
        count(&FULL, report.total(|s| s.failed_full) > 0);
        count(&NMI_IN_LOCK, report.total(|s| s.failed_nmi) > 0);
        count(&WRAPS, report.wrapped > 0);
        count(&NESTED, report.total(|s| s.nested) > 0);
        count(&DEPTH4, report.cpus.iter().any(|s| s.max_depth >= 4));
        count(&WAKEUPS_CHECKED, report.wakeups_checked && report.sleeps > 0 && report.read > 0);
        count(&SLEEPS, report.sleeps > 0 && cfg.read_every == 0);
        count(
            &HELD,
            cfg.publish == Publish::HoldLast && report.wakeups_checked && report.sleeps > 0 && report.read > 0,
        );
        if report.violations.is_empty() {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!("oracle: {:#?}", report.violations)))
        }
    });
    let counters = [
        ("with commits out of reservation order", OUT_OF_ORDER.load(Relaxed)),
        ("with discarded records skipped", DISCARDS.load(Relaxed)),
        ("with reservations failed on a full ring", FULL.load(Relaxed)),
        ("with an NMI's reservation failed inside the lock", NMI_IN_LOCK.load(Relaxed)),
        ("with a sample wrapping the ring's end", WRAPS.load(Relaxed)),
        ("with nested records", NESTED.load(Relaxed)),
        ("with nesting depth 4", DEPTH4.load(Relaxed)),
        ("with the lost-wakeup check after sleeps", WAKEUPS_CHECKED.load(Relaxed)),
        ("with a consumer driven by wakeups alone", SLEEPS.load(Relaxed)),
        ("with the lost-wakeup check of a consumer that holds its last record", HELD.load(Relaxed)),
    ];
    perfring_tests::report_coverage("sim_ringbuf_props", cases(), &counters, result);
}
