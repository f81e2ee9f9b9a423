//! The simulator as a property test: random workloads, tracing modes, ring sizes, consumer
//! speeds and interrupt schedules, each run checked by the oracle (every record intact, in
//! program order per context, in the buffer its mode says; data_head never goes backwards as
//! seen at every preemption point; produced = consumed + lost per buffer).
//!
//! `SIM_CASES` sets the number of cases (default 10,000; `make soak` runs more). Coverage
//! counters are printed, and the test fails if any kind of case never happened.
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use perfring_sim::config::AuxMode;
use perfring_sim::{run, Mode, Report, SimConfig, SimRing};
use proptest::prelude::*;
use proptest::test_runner::{Config as PtConfig, TestCaseError, TestRunner};

fn mode(cpus: u32) -> impl Strategy<Value = Mode> {
    let list = prop::collection::vec(0..cpus, 1..=cpus as usize).prop_map(|mut v| {
        v.sort_unstable();
        v.dedup();
        v
    });
    prop_oneof![
        Just(Mode::SystemWide),
        (1000u32..1003).prop_map(|pid| Mode::Default { pid }),
        (1000u32..1004).prop_map(|tid| Mode::PerThread { tid }),
        list.clone().prop_map(|cpus| Mode::PerCpu { cpus }),
        ((1000u32..1004), list).prop_map(|(tid, cpus)| Mode::PerThreadCpus { tid, cpus }),
    ]
}

fn config(legacy: bool) -> impl Strategy<Value = SimConfig> {
    (1u32..=4).prop_flat_map(move |cpus| {
        (
            mode(cpus),
            (1u32..=6, 20u32..300, any::<u64>(), 6u32..=12),
            (1u32..200, 0u32..8, 0u32..100),
            (0u32..400, 0u32..100, 0u32..300, 1u64..20),
            (any::<bool>(), proptest::option::weighted(0.2, 100u64..100_000), 1u32..8, 1u32..10),
            (0u8..3, 6u32..=12, 1usize..5, 1u32..60, 1u32..200),
        )
            .prop_map(
                move |(
                    mode,
                    (threads, steps, seed, ring_log),
                    (read_every, budget, latency),
                    (irq, nmi, tp, period),
                    (backward, freq, tick, max_tick),
                    (aux, aux_log, aux_branches, stretch, snap),
                )| SimConfig {
                    mode,
                    cpus,
                    threads,
                    steps,
                    seed,
                    ring_size: 1 << ring_log,
                    read_every,
                    read_budget: budget,
                    wake_latency: latency,
                    irq_permille: irq,
                    nmi_permille: nmi,
                    tracepoint_permille: tp,
                    faults_per_step: 3,
                    sample_period: period,
                    freq,
                    tick_every: tick,
                    max_samples_per_tick: max_tick,
                    backward: backward && !legacy,
                    legacy_put_handle: legacy,
                    recursion_permille: 10,
                    aux: [AuxMode::Off, AuxMode::Full, AuxMode::Snapshot][usize::from(aux)],
                    aux_size: 1 << aux_log,
                    aux_branches_per_step: aux_branches,
                    aux_stretch: stretch,
                    snapshot_every: snap,
                },
            )
    })
}

fn simulate(cfg: &SimConfig) -> Report {
    let aux = if cfg.aux == AuxMode::Off { 0 } else { cfg.aux_size };
    let mut rings: Vec<SimRing> =
        cfg.mode.buffers(cfg.cpus).iter().map(|_| SimRing::with_aux(cfg.ring_size, aux)).collect();
    run(cfg, &mut rings)
}

fn cases() -> u32 {
    std::env::var("SIM_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000)
}

#[test]
fn oracle_holds_for_random_sessions_with_the_current_put_handle() {
    static NESTED: AtomicU64 = AtomicU64::new(0);
    static LOSS: AtomicU64 = AtomicU64::new(0);
    static WRAP: AtomicU64 = AtomicU64::new(0);
    static BACKWARD: AtomicU64 = AtomicU64::new(0);
    static DEPTH4: AtomicU64 = AtomicU64::new(0);
    static THROTTLE: AtomicU64 = AtomicU64::new(0);
    static AUX: AtomicU64 = AtomicU64::new(0);
    static SNAPSHOT_LOSS: AtomicU64 = AtomicU64::new(0);
    static BTS_DROPPED: AtomicU64 = AtomicU64::new(0);
    let mut runner = TestRunner::new(PtConfig { cases: cases(), failure_persistence: None, ..PtConfig::default() });
    let result = runner.run(&config(false), |cfg| {
        let report = simulate(&cfg);
        let count = |c: &AtomicU64, yes: bool| {
            if yes {
                c.fetch_add(1, Relaxed);
            }
        };
        count(&NESTED, report.total(|b| b.nested) > 0);
        count(&LOSS, report.total(|b| b.lost_reported + b.lost_pending) > 0);
        count(&WRAP, report.total(|b| b.wrapped) > 0);
        count(&BACKWARD, report.total(|b| b.backward_reads) > 0);
        count(&DEPTH4, report.buffers.iter().any(|b| b.max_depth >= 4));
        count(&THROTTLE, report.total(|b| b.throttles) > 0);
        count(&AUX, report.total(|b| b.aux_records) > 0);
        count(
            &SNAPSHOT_LOSS,
            cfg.aux == AuxMode::Snapshot && report.total(|b| b.aux_read) < report.total(|b| b.aux_written),
        );
        count(&BTS_DROPPED, report.total(|b| b.branches_dropped) > 0);
        if report.violations.is_empty() {
            Ok(())
        } else {
            Err(TestCaseError::fail(format!("oracle: {:#?}", report.violations)))
        }
    });
    let counters = [
        ("with nesting", NESTED.load(Relaxed)),
        ("with loss", LOSS.load(Relaxed)),
        ("with a wrapped record", WRAP.load(Relaxed)),
        ("with backward reads", BACKWARD.load(Relaxed)),
        ("with nesting depth 4", DEPTH4.load(Relaxed)),
        ("with throttling", THROTTLE.load(Relaxed)),
        ("with AUX records", AUX.load(Relaxed)),
        ("with AUX snapshots that lost data", SNAPSHOT_LOSS.load(Relaxed)),
        ("with BTS branches dropped for a full AUX area", BTS_DROPPED.load(Relaxed)),
    ];
    perfring_tests::report_coverage("sim_props", cases(), &counters, result);
}

#[test]
fn random_search_finds_the_old_put_handle_bug() {
    // Seed 002's put_handle (nest dropped before data_head is stored). The harness must find,
    // by random search alone, a schedule where data_head goes backwards, and shrink it.
    let mut runner = TestRunner::new(PtConfig { cases: cases(), failure_persistence: None, ..PtConfig::default() });
    let result = runner.run(&config(true), |cfg| {
        let report = simulate(&cfg);
        if report.violations.iter().any(|v| v.contains("data_head went backwards")) {
            Err(TestCaseError::fail(format!("{:#?}", report.violations)))
        } else {
            Ok(())
        }
    });
    match result {
        Err(proptest::test_runner::TestError::Fail(why, cfg)) => {
            println!("the old put_handle ordering fails; shrunk schedule:\n{cfg:#?}\n{why}");
        }
        other => panic!("random search did not find the old put_handle bug: {other:?}"),
    }
}
