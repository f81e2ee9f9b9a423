//! The one way a perfring test skips; [`bpf`] and [`bpf_ringbuf`], the BPF toolkit of
//! perfring-linux's `PerfEventArray`, `RingBuffer` and `UserRingBuffer` tests, examples and
//! benchmarks; and [`cgroup`], the cgroups made for the cgroup tests.
//!
//! A test that cannot run here (no `perf`, a kernel that refuses `perf_event_open`, no tracefs)
//! calls [`skip`] and returns. A skip is never silent:
//!
//! * it prints `skipped: <reason>` (stdout and stderr, so `--nocapture` and a failing run show it);
//! * where `PERFRING_SKIP_LOG` names a file, it appends the line there: `make test` sets it, and
//!   prints how many tests skipped, and which, when the run ends;
//! * where `PERFRING_REQUIRE_PERF=1` (CI sets it), a skip is a failure: the test panics with the
//!   reason, because there the machine is set up so that every test runs.

#![deny(missing_docs)]

pub mod bpf;
pub mod bpf_ringbuf;
pub mod cgroup;

use std::fmt::Display;
use std::io::Write;

/// The environment variable that turns every skip into a failure (set by `.ci/run`).
pub const REQUIRE: &str = "PERFRING_REQUIRE_PERF";

/// The environment variable naming the file each skip line is appended to (set by `make test`).
pub const LOG: &str = "PERFRING_SKIP_LOG";

/// Whether skips are failures here (`PERFRING_REQUIRE_PERF=1`).
pub fn skips_forbidden() -> bool {
    std::env::var(REQUIRE).is_ok_and(|v| v == "1")
}

/// Skip the calling test because of `reason`: a visible, counted line, or — where
/// `PERFRING_REQUIRE_PERF=1` — a panic that fails the test.
///
/// # Panics
/// Where skips are forbidden ([`skips_forbidden`]).
#[track_caller]
pub fn skip(reason: impl Display) {
    let log = std::env::var_os(LOG).map(std::path::PathBuf::from);
    skip_with(&reason, skips_forbidden(), log.as_deref(), std::panic::Location::caller());
}

/// [`skip`], with the environment's two settings given.
fn skip_with(reason: &dyn Display, forbidden: bool, log: Option<&std::path::Path>, at: &std::panic::Location<'_>) {
    // One line per skip, whatever the reason holds (a command's stderr may span lines):
    // scripts/test-summary.py counts the log's lines.
    let reason = reason.to_string().split_whitespace().collect::<Vec<_>>().join(" ");
    let line = format!("skipped: {reason} ({}:{})", at.file(), at.line());
    if forbidden {
        panic!("{line} — and {REQUIRE}=1 forbids skips: install or enable what the test needs");
    }
    println!("{line}");
    eprintln!("{line}");
    if let Some(path) = log {
        // One write of one line in append mode: lines of parallel tests do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            eprintln!("could not log the skip to {}: {e}", path.display());
        }
    }
}

/// Whether `perf` runs here; if not, [`skip`]s the calling test ("perf not found") and returns
/// `false`.
#[track_caller]
pub fn perf_available() -> bool {
    let ok = std::process::Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        skip("perf not found (install linux-perf)");
    }
    ok
}

/// Where tracefs is mounted (`/sys/kernel/tracing` or the older `/sys/kernel/debug/tracing`), if
/// it is.
pub fn tracefs() -> Option<&'static str> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .find(|r| std::path::Path::new(r).join("events").is_dir())
}

/// Mount tracefs at `/sys/kernel/tracing` for a test that opens tracepoints, if it is not
/// mounted: the crates never mount it, a test set-up may (as root; `perf record -e sched:…`
/// does the same). Prints that it did. Returns where tracefs is, or why it cannot be mounted.
pub fn mount_tracefs() -> Result<&'static str, String> {
    if let Some(root) = tracefs() {
        return Ok(root);
    }
    let out = std::process::Command::new("mount")
        .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
        .output()
        .map_err(|e| format!("mount -t tracefs: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "mount -t tracefs nodev /sys/kernel/tracing: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    println!("test set-up: mounted tracefs at /sys/kernel/tracing");
    tracefs().ok_or_else(|| "tracefs mounted but /sys/kernel/tracing/events is missing".into())
}

/// Whether an errno from opening a perf event (or mapping its ring) means "not permitted or not
/// available here" — the machine's policy or hardware, not the request: EACCES and EPERM
/// (`perf_event_paranoid`, a missing capability, the locked-memory limit of a ring, seccomp),
/// ENOENT, ENODEV and EOPNOTSUPP (no such PMU, tracepoint or mode here), ENOSYS (no
/// `perf_event_open` at all). A test may skip on these and on nothing else: EINVAL, E2BIG and
/// the rest say the request is wrong, a bug the test must fail on.
pub fn unavailable_here(errno: i32) -> bool {
    // Linux's numbers (asm-generic/errno-base.h, errno.h); the crate is Linux-only.
    const EPERM: i32 = 1;
    const ENOENT: i32 = 2;
    const EACCES: i32 = 13;
    const ENODEV: i32 = 19;
    const ENOSYS: i32 = 38;
    const EOPNOTSUPP: i32 = 95;
    matches!(errno, EPERM | ENOENT | EACCES | ENODEV | ENOSYS | EOPNOTSUPP)
}

/// Finish a perfring-linux doc example that opens perf events: `Ok` passes; an error that says
/// this machine does not permit or provide the event ([`unavailable_here`]: a user without
/// `CAP_PERFMON` under `perf_event_paranoid` 2, the locked-memory limit of a ring, no such
/// PMU) is a [`skip`] — visible, counted, a failure in CI; any other error fails the example.
///
/// A macro, expanded in the doc test itself, because it names perfring-linux's error types
/// (this crate cannot depend on perfring-linux, which depends on it). Used from hidden lines:
///
/// ```text
/// # fn example() -> Result<(), Box<dyn std::error::Error>> {
/// ...the example, with `?`...
/// # Ok(()) }
/// # fn main() { perfring_test_support::doc_example!(example()) }
/// ```
#[macro_export]
macro_rules! doc_example {
    ($result:expr) => {{
        let result: ::std::result::Result<(), ::std::boxed::Box<dyn ::std::error::Error>> = $result;
        if let Err(e) = result {
            let errno = e.downcast_ref::<perfring_linux::LinuxError>().and_then(perfring_linux::LinuxError::errno);
            match errno {
                Some(errno) if $crate::unavailable_here(errno) => $crate::skip(format!("doc example: {e}")),
                _ => panic!("the example failed: {e} ({e:?})"),
            }
        }
    }};
}

/// The libtest name (`module::test`) of test `name` in the module whose `module_path!()` is
/// `module_path`: what `--exact` takes when a test re-runs its own binary (the crate's name,
/// the first part of a module path, is not part of a test's name).
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, module)) => format!("{module}::{name}"),
        None => name.to_string(),
    }
}

/// Check that every test file of `dir` (each `*.rs` but `main.rs`, and each folder with a
/// `mod.rs`) is declared `mod NAME;` in `main_rs` (the source of the binary's `main.rs`). A
/// crate that builds all its tests as one binary (`autotests = false`, one `[[test]]`) calls
/// this from a test, so a file added to the folder and forgotten there fails the run instead of
/// never being built.
///
/// # Panics
/// Naming the files that are not modules of the binary.
pub fn every_test_file_is_a_module(dir: impl AsRef<std::path::Path>, main_rs: &str) {
    let dir = dir.as_ref();
    let declared: Vec<&str> =
        main_rs.lines().filter_map(|l| l.trim().strip_prefix("mod ").and_then(|m| m.strip_suffix(';'))).collect();
    let mut missing = Vec::new();
    let mut found = 0;
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        let name = if path.is_dir() && path.join("mod.rs").is_file() {
            path.file_name().and_then(|n| n.to_str()).map(str::to_string)
        } else if path.extension().is_some_and(|e| e == "rs") {
            path.file_stem().and_then(|n| n.to_str()).map(str::to_string)
        } else {
            None
        };
        let Some(name) = name.filter(|n| n != "main") else { continue };
        found += 1;
        if !declared.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(found > 0, "no test file in {}", dir.display());
    assert!(
        missing.is_empty(),
        "test files of {} that are not modules of its main.rs, so never built: {missing:?} (add `mod NAME;` there)",
        dir.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_is_logged_where_allowed_and_a_failure_where_forbidden() {
        let log = std::env::temp_dir().join(format!("perfring-skip-log-{}", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let here = std::panic::Location::caller();
        skip_with(&"no perf here", false, Some(&log), here);
        skip_with(&"no tracefs", false, Some(&log), here);
        skip_with(&"mount: must be superuser.\n       dmesg(1) may have more.\n", false, Some(&log), here);
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "one line per skip: {text}");
        assert!(lines[2].starts_with("skipped: mount: must be superuser. dmesg(1) may have more. ("), "{text}");
        assert!(lines[0].starts_with("skipped: no perf here (") && lines[0].contains("lib.rs:"), "{text}");
        assert!(lines[1].starts_with("skipped: no tracefs ("), "{text}");
        std::fs::remove_file(&log).unwrap();

        let failed = std::panic::catch_unwind(|| skip_with(&"no perf here", true, Some(&log), here)).unwrap_err();
        let message = failed.downcast_ref::<String>().unwrap();
        assert!(
            message.contains("no perf here") && message.contains("PERFRING_REQUIRE_PERF=1 forbids skips"),
            "{message}"
        );
        assert!(!log.exists(), "a forbidden skip is a failure, not a logged skip");
    }

    #[test]
    fn only_not_permitted_or_not_available_errnos_are_skips() {
        for errno in [1, 2, 13, 19, 38, 95] {
            assert!(unavailable_here(errno), "errno {errno}");
        }
        // EINVAL, E2BIG, EBADF, EBUSY, EMFILE, ESRCH, EFAULT: the request or the test is wrong.
        for errno in [22, 7, 9, 16, 24, 3, 14, 0] {
            assert!(!unavailable_here(errno), "errno {errno}");
        }
    }

    #[test]
    fn a_test_name_drops_the_crate_of_the_module_path() {
        assert_eq!(test_name("linux::misuse", "t"), "misuse::t");
        assert_eq!(test_name("integration::a::b", "t"), "a::b::t");
        assert_eq!(test_name("kernel", "t"), "t");
    }

    #[test]
    fn a_test_file_missing_from_main_rs_is_named() {
        let dir = std::env::temp_dir().join(format!("perfring-test-files-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("common")).unwrap();
        for f in ["main.rs", "a.rs", "b.rs", "common/mod.rs", "notes.txt"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        every_test_file_is_a_module(&dir, "mod a;\nmod b;\n#[cfg(x)]\nmod common;\n");
        let missing =
            std::panic::catch_unwind(|| every_test_file_is_a_module(&dir, "mod a;\nmod common;\n")).unwrap_err();
        let message = missing.downcast_ref::<String>().unwrap();
        assert!(message.contains("[\"b\"]"), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
