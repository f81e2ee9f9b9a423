//! The simulator's perf.data, read by the real `perf`: `perf script` must see exactly the
//! samples the simulation says its consumers read, split the same way per CPU and per thread.
#![cfg(not(loom))]

use std::collections::HashMap;
use std::process::Command;

use perfring_sim::{run, write_perf_data, Mode, SimConfig, SimRing};

fn perf_available() -> bool {
    Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn session(cfg: &SimConfig, name: &str) {
    if !perf_available() {
        println!("skipped: perf not found (install linux-perf)");
        return;
    }
    let mut rings: Vec<SimRing> = cfg.mode.buffers(cfg.cpus).iter().map(|_| SimRing::new(cfg.ring_size)).collect();
    let report = run(cfg, &mut rings);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    let path = std::env::temp_dir().join(format!("perfring-sim-{name}-{}.data", std::process::id()));
    let path_str = path.to_str().unwrap();
    write_perf_data(cfg, &report, path_str).unwrap();
    let out = Command::new("perf").args(["script", "-F", "cpu,tid", "-i", path_str]).output().unwrap();
    assert!(out.status.success(), "perf script failed: {}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut by_cpu_tid: HashMap<(u32, u32), u64> = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // " 1000 [003] "
        let mut it = line.split_whitespace();
        let tid: u32 = it.next().unwrap().parse().unwrap();
        let cpu: u32 = it.next().unwrap().trim_matches(|c| c == '[' || c == ']').parse().unwrap();
        *by_cpu_tid.entry((cpu, tid)).or_default() += 1;
    }
    let total: u64 = by_cpu_tid.values().sum();
    let expect_total: u64 = report.samples_by_cpu_tid.values().sum();
    println!(
        "{name}: perf script saw {total} samples, the simulation read {expect_total}; perf said: {}",
        stderr.trim()
    );
    assert_eq!(total, expect_total, "sample count");
    assert_eq!(by_cpu_tid, report.samples_by_cpu_tid, "per-CPU / per-thread split");
    // The only warning perf may print is the loss the simulation itself reports.
    let lost = report.total(|b| b.lost_reported);
    if lost == 0 {
        assert!(!stderr.contains("Warning"), "unexpected perf warning: {stderr}");
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn perf_script_reads_a_system_wide_session_with_the_same_samples() {
    let cfg = SimConfig { steps: 3000, ..SimConfig::default() };
    session(&cfg, "system-wide");
}

#[test]
fn perf_script_reads_a_per_thread_session_with_the_same_samples() {
    let cfg = SimConfig { steps: 3000, mode: Mode::PerThread { tid: 1001 }, ..SimConfig::default() };
    session(&cfg, "per-thread");
}

#[test]
fn perf_script_reads_a_lossy_per_cpu_session_with_the_same_samples() {
    let cfg = SimConfig {
        steps: 3000,
        mode: Mode::PerCpu { cpus: vec![1, 3] },
        ring_size: 1024,
        wake_latency: 400,
        ..SimConfig::default()
    };
    session(&cfg, "per-cpu");
}
