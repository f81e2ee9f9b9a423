//! What the recorder's test binaries share: per-process scratch paths and workloads built at
//! test time.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// `name` under the temp directory, unique to this test process.
pub fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("perfring-record-{}-{name}", std::process::id()))
}

/// `source`, a Rust program, built into `tmp(name)` by the rustc that builds these tests
/// (`-O -g`: its own symbols, and the build id the system linker writes).
pub fn build(name: &str, source: &str) -> PathBuf {
    let src = tmp(&format!("{name}.rs"));
    let bin = tmp(name);
    std::fs::write(&src, source).unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc).args(["-O", "-g", "-o"]).arg(&bin).arg(&src).output().unwrap();
    assert!(out.status.success(), "{rustc} could not build {name}: {}", String::from_utf8_lossy(&out.stderr));
    bin
}
