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
    let log = std::env::var_os(LOG).map(std::path::PathBuf::from);
    skip_with(&reason, skips_forbidden(), log.as_deref(), std::panic::Location::caller());
}

/// [`skip`], with the environment's two settings given.
fn skip_with(reason: &dyn Display, forbidden: bool, log: Option<&std::path::Path>, at: &std::panic::Location<'_>) {
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
        let text = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
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
}
