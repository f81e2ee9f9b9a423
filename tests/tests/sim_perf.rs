//! The simulator's perf.data, read by the real `perf`: `perf script` must see exactly the
//! samples the simulation says its consumers read, split the same way per CPU and per thread.
#![cfg(not(loom))]

use std::collections::HashMap;
use std::process::Command;

use perfring_sim::{run, write_perf_data, Mode, SimConfig, SimRing};

fn session(cfg: &SimConfig, name: &str) {
    if !perfring_test_support::perf_available() {
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

/// `perf report -D` lists the AUX and AUXTRACE records of a simulated AUX session with the
/// sizes, offsets and flags the simulation emitted. (`--no-itrace`: perf decodes AUX data only
/// for the PMUs it knows; the records themselves are what is checked here.)
fn aux_session(cfg: &SimConfig, name: &str) {
    use perfring::record::{types, Endian, Header};
    use perfring_sim::config::AuxMode;
    use perfring_sim::Out;
    if !perfring_test_support::perf_available() {
        return;
    }
    let mut rings: Vec<SimRing> =
        cfg.mode.buffers(cfg.cpus).iter().map(|_| SimRing::with_aux(cfg.ring_size, cfg.aux_size)).collect();
    let report = run(cfg, &mut rings);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    assert_ne!(cfg.aux, AuxMode::Off);
    let path = std::env::temp_dir().join(format!("perfring-sim-{name}-{}.data", std::process::id()));
    let path_str = path.to_str().unwrap();
    write_perf_data(cfg, &report, path_str).unwrap();
    // What the simulation wrote.
    let mut want_aux = Vec::new();
    let mut want_auxtrace = Vec::new();
    for o in &report.out {
        match o {
            Out::Record(r) if Header::parse(r, Endian::NATIVE).unwrap().type_ == types::AUX => {
                let u = |o: usize| u64::from_ne_bytes(r[o..o + 8].try_into().unwrap());
                want_aux.push((u(8), u(16), u(24)));
            }
            Out::Auxtrace(a, _) => want_auxtrace.push((a.size, a.offset, a.idx, a.tid as i32, a.cpu as i32)),
            _ => {}
        }
    }
    assert!(!want_aux.is_empty() && !want_auxtrace.is_empty(), "the session traced something");
    let out = Command::new("perf").args(["report", "-D", "--no-itrace", "-i", path_str]).output().unwrap();
    assert!(out.status.success(), "perf report -D failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let field = |line: &str, key: &str| -> String {
        let at = line.find(key).unwrap() + key.len();
        line[at..].split_whitespace().next().unwrap().to_string()
    };
    let mut got_aux = Vec::new();
    let mut got_auxtrace = Vec::new();
    for line in text.lines() {
        if line.contains("PERF_RECORD_AUX offset:") {
            got_aux.push((hex(&field(line, "offset: ")), hex(&field(line, "size: ")), hex(&field(line, "flags: "))));
        } else if line.contains("PERF_RECORD_AUXTRACE size:") {
            got_auxtrace.push((
                hex(&field(line, "size: ")),
                hex(&field(line, "offset: ")),
                field(line, "idx: ").parse().unwrap(),
                field(line, "tid: ").parse().unwrap(),
                field(line, "cpu: ").parse().unwrap(),
            ));
        }
    }
    println!("{name}: perf report -D listed {} AUX and {} AUXTRACE records", got_aux.len(), got_auxtrace.len());
    want_aux.sort_unstable();
    got_aux.sort_unstable();
    want_auxtrace.sort_unstable();
    got_auxtrace.sort_unstable();
    assert_eq!(got_aux, want_aux, "PERF_RECORD_AUX offsets, sizes, flags");
    assert_eq!(got_auxtrace, want_auxtrace, "PERF_RECORD_AUXTRACE sizes, offsets, idx, tid, cpu");
    std::fs::remove_file(&path).ok();
}

#[test]
fn perf_report_lists_aux_and_auxtrace_records_of_a_system_wide_aux_session() {
    let cfg = SimConfig { steps: 3000, aux: perfring_sim::config::AuxMode::Full, ..SimConfig::default() };
    aux_session(&cfg, "aux-full");
}

#[test]
fn perf_report_lists_aux_and_auxtrace_records_of_a_per_thread_snapshot_session() {
    let cfg = SimConfig {
        steps: 6000,
        mode: Mode::PerThread { tid: 1000 },
        aux: perfring_sim::config::AuxMode::Snapshot,
        aux_size: 1024,
        snapshot_every: 1000,
        ..SimConfig::default()
    };
    aux_session(&cfg, "aux-snapshot");
}
