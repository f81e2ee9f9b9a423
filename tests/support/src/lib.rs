//! The one way a perfring test skips.
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
    let at = std::panic::Location::caller();
    let line = format!("skipped: {reason} ({}:{})", at.file(), at.line());
    if skips_forbidden() {
        panic!("{line} — and {REQUIRE}=1 forbids skips: install or enable what the test needs");
    }
    println!("{line}");
    eprintln!("{line}");
    if let Some(path) = std::env::var_os(LOG) {
        // One write of one line in append mode: lines of parallel tests do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
        if let Err(e) = written {
            eprintln!("could not log the skip to {}: {e}", path.to_string_lossy());
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
