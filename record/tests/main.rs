//! perfring-record against perf record, in one binary: each file of this folder is a module here
//! (one link instead of one per file). A file added to the folder must be named here too:
//! `every_test_file_is_a_module` fails otherwise (Cargo.toml sets `autotests = false`).

// Scratch paths (one set per file) and workloads built at test time.
mod common;

mod behaviour;
mod losses_and_build_ids;
mod perf_forms;
mod perf_options;
mod record;

#[test]
fn every_test_file_is_a_module() {
    perfring_test_support::every_test_file_is_a_module(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        include_str!("main.rs"),
    );
}
