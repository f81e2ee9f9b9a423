//! What the recorder's test files share: scratch paths and workloads built at test time.

use std::path::PathBuf;
use std::process::Command;

/// `name` under the temp directory, unique to this test process and to the test file that asks
/// (the files are modules of one binary, whose tests run in one process at once: two files'
/// `home` or `ours.data` must not be one path).
#[track_caller]
pub fn tmp(name: &str) -> PathBuf {
    let file = std::panic::Location::caller().file();
    let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("test");
    std::env::temp_dir().join(format!("perfring-record-{}-{stem}-{name}", std::process::id()))
}

/// Whether `done` came true within `limit`, asked every 10 ms: the tests wait for a process
/// to reach a state (a file made, a command started, CPU time spent) instead of for the clock,
/// which says little on a loaded machine.
pub fn wait_until(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while !done() {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    true
}

/// `perf record` (`tool` "perf") or our recorder (any other), ready for its arguments: the
/// two tools run alike in the tests that compare them.
pub fn record_with(tool: &str) -> Command {
    if tool == "perf" {
        let mut c = Command::new("perf");
        c.arg("record");
        // perf with the test runner's LD_LIBRARY_PATH (cargo adds its build folders) crashes far
        // more often (heap corruption, `--affinity NODE`); the system's libraries, as a user runs it.
        c.env_remove("LD_LIBRARY_PATH");
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_perfring-record"))
    }
}

/// `source`, a Rust program, built into `tmp(name)` (of the calling file) by the rustc that
/// builds these tests (`-O -g`: its own symbols, and the build id the system linker writes).
#[track_caller]
pub fn build(name: &str, source: &str) -> PathBuf {
    let src = tmp(&format!("{name}.rs"));
    let bin = tmp(name);
    std::fs::write(&src, source).unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc).args(["-O", "-g", "-o"]).arg(&bin).arg(&src).output().unwrap();
    assert!(out.status.success(), "{rustc} could not build {name}: {}", String::from_utf8_lossy(&out.stderr));
    bin
}

/// perf's stderr lines other than lost-event ones (and blank lines). perf's lost-event warning
/// is a block (`Warning:`, `Processed N events and lost M chunks!`, `Check IO/CPU overload!`):
/// its header line alone and its advice line are part of it; any other warning keeps its
/// message line, so it is still reported.
pub fn perf_warnings(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.to_lowercase().contains("lost") && *l != "Warning:" && *l != "Check IO/CPU overload!"
        })
        .map(String::from)
        .collect()
}
