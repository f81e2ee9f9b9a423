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
/// sizes, offsets and flags the simulation emitted. (`--no-itrace`: the records themselves are
/// what is checked here; [`bts_session`] checks perf's decoding of their data. In a per-CPU
/// mode the file is still read record for record, though perf cannot decode BTS per CPU.)
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

/// What perf printed on stderr, checked: every line is blank, "Warning:", or a warning about
/// something the simulation itself says it lost. Returns the number in "N instruction trace
/// errors" (0 if absent).
fn only_lost_warnings(stderr: &str, lost_records: u64, dropped_branches: u64, command: &str) -> u64 {
    let mut trace_errors = 0;
    let mut lines = stderr.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "Warning:");
    while let Some(line) = lines.next() {
        let number = |s: &str| s.split_whitespace().find_map(|w| w.parse::<u64>().ok()).unwrap_or(0);
        if line.starts_with("Processed ") && line.contains(" events and lost ") && lost_records > 0 {
            // "Processed N events and lost M chunks!" then "Check IO/CPU overload!"
            assert_eq!(lines.next(), Some("Check IO/CPU overload!"), "{command}: {stderr}");
        } else if line.starts_with("AUX data lost ") && dropped_branches > 0 {
        } else if line.ends_with(" instruction trace errors") && dropped_branches > 0 {
            trace_errors = number(line);
        } else {
            panic!("{command}: perf warned of something the simulation did not lose: {line:?}\n{stderr}");
        }
    }
    trace_errors
}

/// `perfring-sim --aux` (or `--aux --snapshot`) read by perf: `perf script` and `perf report`
/// warn only of losses the simulation reports; `perf script --itrace=b` prints exactly the
/// branches the simulation says are in the file; `perf report` attributes them to the
/// simulated program's functions, each with the simulation's count.
fn bts_session(cfg: &SimConfig, name: &str) {
    use perfring_sim::config::AuxMode;
    if !perfring_test_support::perf_available() {
        return;
    }
    assert_ne!(cfg.aux, AuxMode::Off);
    let mut rings: Vec<SimRing> =
        cfg.mode.buffers(cfg.cpus).iter().map(|_| SimRing::with_aux(cfg.ring_size, cfg.aux_size)).collect();
    let report = run(cfg, &mut rings);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    // A directory of its own: the session writes the program's ELF beside the file.
    let dir = std::env::temp_dir().join(format!("perfring-sim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bts.data");
    let path_str = path.to_str().unwrap();
    write_perf_data(cfg, &report, path_str).unwrap();
    let branches = report.total(|b| b.branches_read);
    let lost = report.total(|b| b.lost_reported);
    let dropped = report.total(|b| b.branches_dropped);
    assert!(branches > 1000, "{name}: the session traced too little to test: {branches} branches");
    let perf = |args: &[&str]| {
        let out = Command::new("perf").args(args).arg("-i").arg(path_str).output().unwrap();
        let command = format!("perf {}", args.join(" "));
        assert!(out.status.success(), "{command} failed: {}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), command)
    };

    // perf script, default options (they include 'e': decode errors are printed).
    let (stdout, stderr, command) = perf(&["script"]);
    let errors: Vec<&str> = stdout.lines().filter(|l| l.contains("instruction trace error")).collect();
    assert!(errors.iter().all(|l| l.ends_with("Lost trace data")), "{command}: {errors:#?}");
    assert_eq!(only_lost_warnings(&stderr, lost, dropped, &command), errors.len() as u64, "{command}: {stderr}");
    assert!(stdout.contains("branches:u:"), "{command} printed no branches");

    // perf script --itrace=b: every branch, once.
    let (stdout, stderr, command) = perf(&["script", "--itrace=b"]);
    only_lost_warnings(&stderr, lost, dropped, &command);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains(" branches:u: ")).collect();
    println!(
        "{name}: perf script --itrace=b printed {} branches; the simulation put {branches} in the file",
        lines.len()
    );
    assert_eq!(lines.len() as u64, branches, "{command}: branch count");
    assert!(lines.iter().all(|l| l.contains("perfring-sim-app) =>")), "{command}: a branch outside the program");

    // perf report: the branches histogram, by function.
    let (stdout, stderr, command) = perf(&["report", "--stdio", "-n", "--sort", "sym"]);
    only_lost_warnings(&stderr, lost, dropped, &command);
    let section =
        stdout.split("# Samples: ").find(|s| s.contains("of event 'branches:u'")).expect("a branches section");
    let mut by_function = std::collections::BTreeMap::new();
    for line in section.lines().filter(|l| l.contains("[.] ")) {
        // "    31.47%    31.47%         39802  [.] escape_html"
        let samples: u64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        let function = line.split("[.] ").nth(1).unwrap().trim();
        by_function.insert(function.to_string(), samples);
    }
    let want: std::collections::BTreeMap<String, u64> =
        report.branches_by_function.iter().map(|(f, n)| (f.to_string(), *n)).collect();
    println!("{name}: perf report's branches by function: {by_function:?}");
    assert_eq!(by_function, want, "{command}: branches by function");
    let top = section.lines().find(|l| l.contains("[.] ")).unwrap();
    assert!(top.ends_with("escape_html"), "{command}: the busiest function is {top:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn perf_decodes_the_simulated_bts_trace_of_a_full_aux_session() {
    let cfg = SimConfig {
        steps: 20_000,
        mode: Mode::PerThread { tid: 1000 },
        aux: perfring_sim::config::AuxMode::Full,
        ..SimConfig::default()
    };
    bts_session(&cfg, "bts-full");
}

#[test]
fn perf_decodes_the_simulated_bts_trace_of_a_snapshot_session() {
    let cfg = SimConfig {
        steps: 20_000,
        mode: Mode::PerThread { tid: 1000 },
        aux: perfring_sim::config::AuxMode::Snapshot,
        snapshot_every: 2000,
        ..SimConfig::default()
    };
    bts_session(&cfg, "bts-snapshot");
}
