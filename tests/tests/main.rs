//! Every cross-crate test of perfring in one binary: each file of this folder is a module here
//! (one link instead of one per file). Under `--cfg loom` (`make loom`) only the loom models
//! (`loom_*.rs`) compile; otherwise everything else does, and the models are empty.
//!
//! A file added to this folder must be named here too: `every_test_file_is_a_module` fails
//! otherwise (Cargo.toml sets `autotests = false`, so Cargo would not build it on its own).

// Loom models: `make loom`, `make loom-mutants`.
#[cfg(loom)]
mod loom_aux;
#[cfg(loom)]
mod loom_backward;
#[cfg(loom)]
mod loom_bpf_ringbuf;
#[cfg(loom)]
mod loom_embedder;
#[cfg(loom)]
mod loom_forward;
#[cfg(loom)]
mod loom_selfmon;
#[cfg(loom)]
mod loom_sim;
#[cfg(loom)]
mod loom_sim_ringbuf;

// Real-kernel helpers of kernel_ring and selfmon_kernel.
#[cfg(not(loom))]
mod kernel;

#[cfg(not(loom))]
mod aux_props;
#[cfg(not(loom))]
mod backward_props;
#[cfg(not(loom))]
mod bpf_ringbuf_mapping;
#[cfg(not(loom))]
mod hostile_attacks;
#[cfg(not(loom))]
mod hostile_bpf_ringbuf;
#[cfg(not(loom))]
mod hostile_props;
#[cfg(not(loom))]
mod kernel_ring;
#[cfg(not(loom))]
mod perf_data_captures;
#[cfg(not(loom))]
mod perf_data_hostile;
#[cfg(not(loom))]
mod records_golden;
#[cfg(not(loom))]
mod records_roundtrip;
#[cfg(not(loom))]
mod records_view;
#[cfg(not(loom))]
mod selfmon_kernel;
#[cfg(not(loom))]
mod selfmon_props;
#[cfg(not(loom))]
mod sim_perf;
#[cfg(not(loom))]
mod sim_props;
#[cfg(not(loom))]
mod sim_ringbuf_props;

#[cfg(not(loom))]
#[test]
fn every_test_file_is_a_module() {
    perfring_test_support::every_test_file_is_a_module(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        include_str!("main.rs"),
    );
}
