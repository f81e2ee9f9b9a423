//! The perf.data fixtures and the `perf` oracle, shared by the golden, view and perf.data tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `*.data` files of `tests/fixtures/<sub>` for each of `subs` (`""`: the folder itself,
/// recorded by `tests/fixtures/make-fixtures.sh`), sorted.
pub fn fixtures_in(subs: &[&str]) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut v: Vec<PathBuf> = subs
        .iter()
        .flat_map(|s| std::fs::read_dir(dir.join(s)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    v.sort();
    v
}

/// Whether `perf` runs here; if not, prints the visible skip line ("skipped: perf not found").
pub fn perf_available() -> bool {
    let ok = Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        println!("skipped: perf not found (install linux-perf)");
    }
    ok
}
