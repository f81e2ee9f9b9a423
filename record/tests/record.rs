//! `perfring-record` against `perf record`: the same workload recorded by both; perf
//! reads ours (file and pipe mode) with no warning it does not also print for its own file,
//! `perf script` of ours names the workload's own function, and the per-thread sample counts
//! agree within the tolerance stated below.
//!
//! The workload is compiled at test time with `rustc` (so it has symbols): two threads, each
//! writing one byte to every page of a fresh anonymous mapping (huge pages refused with
//! `MADV_NOHUGEPAGE`), 1,200 pages and 600, in `perfring_workload_touch`. Both recorders sample
//! `page-faults` with `-c 1`, so each thread gets one sample per page it touches plus the faults
//! of its start-up, whatever else the machine runs: a count of events, not of time (a
//! task-clock comparison failed here under load: 404 samples against perf's 601 for the same
//! 600 ms thread, the hrtimer folding the periods the busy host delayed into one sample).
//! Tolerance: 5% of perf's count plus 20 faults, for the start-up faults each recorder's
//! release of the command sees differently.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, tmp};

/// Pages the two threads touch, in the order `per_thread` sorts them (most samples first).
const PAGES: [u64; 2] = [1200, 600];

const WORKLOAD: &str = r#"
extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
}
#[inline(never)]
fn perfring_workload_touch(pages: usize) -> u64 {
    let len = pages * 4096;
    // PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS; MADV_NOHUGEPAGE: one fault per page.
    let p = unsafe { mmap(std::ptr::null_mut(), len, 3, 0x22, -1, 0) };
    assert!(p as isize != -1, "mmap");
    unsafe { madvise(p, len, 15) };
    let mut x = 0u64;
    for i in 0..pages {
        unsafe { p.add(i * 4096).write_volatile(i as u8) };
        x = x.wrapping_add(std::hint::black_box(i as u64));
    }
    x
}
fn main() {
    let h = std::thread::spawn(|| perfring_workload_touch(600));
    perfring_workload_touch(1200);
    h.join().unwrap();
}
"#;

/// The workload, built with the rustc that builds these tests.
fn workload() -> PathBuf {
    common::build("work", WORKLOAD)
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
    common::perf_warnings(&String::from_utf8_lossy(&out.stderr))
}

/// The kernel's MMAP as `perf report -D` prints it: "[START(LEN) @ PGOFF]: x [kernel.kallsyms]_text".
fn kernel_map(file: &Path) -> Option<String> {
    let out = Command::new("perf").args(["report", "-D", "-i"]).arg(file).output().unwrap();
    let dump = String::from_utf8_lossy(&out.stdout);
    let line = dump.lines().find(|l| l.contains("PERF_RECORD_MMAP") && l.ends_with("[kernel.kallsyms]_text"))?;
    Some(line[line.find('[')?..].to_string())
}

/// Most samples of `file` in the workload's own function, by name.
fn most_samples_named(file: &Path) {
    let script = Command::new("perf").args(["script", "-F", "ip,sym", "-i"]).arg(file).output().unwrap();
    let text = String::from_utf8_lossy(&script.stdout);
    let named = text.lines().filter(|l| l.contains("perfring_workload_touch")).count();
    assert!(
        named * 2 > text.lines().count(),
        "most samples in perfring_workload_touch: {named} of {}",
        text.lines().count()
    );
}

#[test]
fn perf_reads_our_recording_of_a_workload_as_it_reads_its_own() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let work = workload();
    let (ours, theirs, piped) = (tmp("ours.data"), tmp("theirs.data"), tmp("piped.data"));
    let rec = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .env("HOME", tmp("home"))
        .args(["-q", "-e", "page-faults", "-c", "1", "-o"])
        .arg(&ours)
        .arg("--")
        .arg(&work)
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&rec.stderr);
    if !rec.status.success() && summary.contains("perf_event_paranoid") {
        return perfring_test_support::skip(summary);
    }
    assert!(rec.status.success(), "{summary}");
    println!("{summary}");
    let perf = Command::new("perf")
        .args(["record", "-q", "-e", "page-faults", "-c", "1", "-o"])
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

    // The kernel's map as perf synthesizes it: `_text` to `_etext` (ours ran to the last text
    // symbol, init text included, before).
    let (k_ours, k_theirs) = (kernel_map(&ours), kernel_map(&theirs));
    assert_eq!(k_ours, k_theirs, "the [kernel.kallsyms]_text MMAP, ours and perf's");

    most_samples_named(&ours);

    // Per-thread counts, ours against perf's.
    let (a, b) = (per_thread(&ours), per_thread(&theirs));
    println!("samples per thread: perfring-record {a:?}, perf record {b:?}");
    assert!(a.len() >= 2 && b.len() >= 2, "two threads sampled: {a:?} {b:?}");
    for ((x, y), pages) in a.iter().zip(&b).zip(PAGES) {
        let tol = 0.05 * (*y as f64) + 20.0;
        assert!((*x as f64 - *y as f64).abs() <= tol, "{x} vs {y} (tolerance {tol:.0}): {a:?} vs {b:?}");
        assert!(*x >= pages, "a sample for each of the {pages} pages touched: {a:?}");
    }

    check_pipe_mode(&work, &piped);
    for f in [&ours, &theirs, &piped, &work] {
        std::fs::remove_file(f).ok();
    }
}

/// Pipe mode: the same recording to stdout, read back by perf.
fn check_pipe_mode(work: &Path, piped: &Path) {
    let piped_out = std::fs::File::create(piped).unwrap();
    let rec = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .env("HOME", tmp("home"))
        .args(["-q", "-e", "page-faults", "-c", "1", "-o", "-", "--"])
        .arg(work)
        .stdout(piped_out)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{}", String::from_utf8_lossy(&rec.stderr));
    let c = per_thread(piped);
    assert!(c.len() >= 2 && c[0] >= PAGES[0] && c[1] >= PAGES[1], "pipe-mode recording read by perf: {c:?}");
}
