//! The perf.data fixtures shared by the golden, view and perf.data tests.

use std::path::{Path, PathBuf};

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
