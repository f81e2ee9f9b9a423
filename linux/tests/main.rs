//! perfring-linux against the real kernel, in one binary: each file of this folder is a module
//! here (one link instead of one per file). A file added to the folder must be named here too:
//! `every_test_file_is_a_module` fails otherwise (Cargo.toml sets `autotests = false`).

mod common;

mod aux;
mod bpf;
mod cgroup;
mod kernel;
mod misuse;
mod readiness;
mod ring_claims;
mod ringbuf;
mod session;

#[test]
fn every_test_file_is_a_module() {
    perfring_test_support::every_test_file_is_a_module(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        include_str!("main.rs"),
    );
}
