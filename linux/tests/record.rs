//! `perfring-record` against `perf record` (issue 20): the same workload recorded by both; perf
//! reads ours (file and pipe mode) with no warning it does not also print for its own file,
//! `perf script` of ours names the workload's own function, and the per-thread sample counts
//! agree within the tolerance stated below.
//!
//! The workload is compiled at test time with `rustc` (so it has symbols): two threads burning
//! 600 ms and 300 ms of their own CPU time (thread CPU clock, not wall time, so a shared machine
//! changes nothing) in `perfring_workload_spin`. Both recorders sample task-clock every 1 ms of
//! task time (`-c 1000000`), so each thread should get about one sample per ms of its CPU time.
//! Tolerance: 10% of the count plus 3σ of a Poisson count (3√n) — the sampling is periodic, not
//! random, so this is generous; it absorbs the ms of start-up each recorder sees differently.

use std::path::{Path, PathBuf};
use std::process::Command;

const WORKLOAD: &str = r#"
extern "C" { fn clock_gettime(clk: i32, ts: *mut [i64; 2]) -> i32; }
fn thread_cpu_ms() -> i64 {
    let mut ts = [0i64; 2];
    unsafe { clock_gettime(3, &mut ts) }; // CLOCK_THREAD_CPUTIME_ID
    ts[0] * 1000 + ts[1] / 1_000_000
}
#[inline(never)]
fn perfring_workload_spin(ms: i64) -> u64 {
    let start = thread_cpu_ms();
    let mut x = 1u64;
    while thread_cpu_ms() - start < ms {
        for _ in 0..1000 { x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1)); }
    }
    x
}
fn main() {
    let h = std::thread::spawn(|| perfring_workload_spin(300));
    perfring_workload_spin(600);
    h.join().unwrap();
}
"#;

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("perfring-record-{}-{name}", std::process::id()))
}

fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd).arg(arg).output().is_ok_and(|o| o.status.success())
}

fn workload() -> Option<PathBuf> {
    let src = tmp("work.rs");
    let bin = tmp("work");
    std::fs::write(&src, WORKLOAD).unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).args(["-O", "-g", "-o"]).arg(&bin).arg(&src).output().ok()?;
    out.status.success().then_some(bin)
}

/// `perf script` samples per thread (tid → count), sorted by count, descending.
fn per_thread(file: &Path) -> Vec<u64> {
    let out = Command::new("perf").args(["script", "-F", "tid", "-i"]).arg(file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        *counts.entry(l.trim().to_string()).or_default() += 1;
    }
    let mut v: Vec<u64> = counts.into_values().collect();
    v.sort_by(|a, b| b.cmp(a));
    v
}

/// perf's warnings when reporting `file` (stderr lines, lost-event ones left out).
fn report_warnings(file: &Path) -> Vec<String> {
    let out = Command::new("perf").args(["report", "--stdio", "-i"]).arg(file).output().unwrap();
    assert!(out.status.success(), "perf report failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.to_lowercase().contains("lost"))
        .map(String::from)
        .collect()
}

#[test]
fn perf_reads_our_recording_of_a_workload_as_it_reads_its_own() {
    if !have("perf", "--version") {
        println!("skipped: perf not found (install linux-perf)");
        return;
    }
    let Some(work) = workload() else {
        println!("skipped: rustc could not build the workload");
        return;
    };
    let (ours, theirs, piped) = (tmp("ours.data"), tmp("theirs.data"), tmp("piped.data"));
    let rec = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .args(["-q", "-e", "task-clock", "-c", "1000000", "-o"])
        .arg(&ours)
        .arg("--")
        .arg(&work)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&rec.stderr);
    if !rec.status.success() && summary.contains("perf_event_paranoid") {
        println!("skipped: {summary}");
        return;
    }
    assert!(rec.status.success(), "{summary}");
    println!("{summary}");
    let perf = Command::new("perf")
        .args(["record", "-q", "-e", "task-clock", "-c", "1000000", "-o"])
        .arg(&theirs)
        .arg("--")
        .arg(&work)
        .output()
        .unwrap();
    assert!(perf.status.success(), "{}", String::from_utf8_lossy(&perf.stderr));

    // perf reads ours with no warning it does not print for its own recording.
    let (w_ours, w_theirs) = (report_warnings(&ours), report_warnings(&theirs));
    let extra: Vec<_> = w_ours.iter().filter(|w| !w_theirs.contains(w)).collect();
    assert!(extra.is_empty(), "perf report warns about our file only: {extra:?}");

    // The workload's own function, by name.
    let script = Command::new("perf").args(["script", "-F", "ip,sym", "-i"]).arg(&ours).output().unwrap();
    let text = String::from_utf8_lossy(&script.stdout);
    let named = text.lines().filter(|l| l.contains("perfring_workload_spin")).count();
    assert!(
        named * 2 > text.lines().count(),
        "most samples in perfring_workload_spin: {named} of {}",
        text.lines().count()
    );

    // Per-thread counts, ours against perf's.
    let (a, b) = (per_thread(&ours), per_thread(&theirs));
    println!("samples per thread: perfring-record {a:?}, perf record {b:?}");
    assert!(a.len() >= 2 && b.len() >= 2, "two threads sampled: {a:?} {b:?}");
    for (x, y) in a.iter().zip(&b).take(2) {
        let tol = 0.1 * (*y as f64) + 3.0 * (*y as f64).sqrt();
        assert!((*x as f64 - *y as f64).abs() <= tol, "{x} vs {y} (tolerance {tol:.0}): {a:?} vs {b:?}");
    }
    assert!(a[0] >= 500 && a[1] >= 250, "about one sample per ms of CPU: {a:?}");

    // Pipe mode: the same recording to stdout, read back by perf.
    let piped_out = std::fs::File::create(&piped).unwrap();
    let rec = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .args(["-q", "-e", "task-clock", "-c", "1000000", "-o", "-", "--"])
        .arg(&work)
        .stdout(piped_out)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", String::from_utf8_lossy(&rec.stderr));
    let c = per_thread(&piped);
    assert!(c.len() >= 2 && c[0] >= 500, "pipe-mode recording read by perf: {c:?}");
    for f in [&ours, &theirs, &piped, &work] {
        std::fs::remove_file(f).ok();
    }
}
