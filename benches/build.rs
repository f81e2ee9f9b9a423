//! `make bench-bpf` compares perfring-linux's `PerfEventArray` and `RingBuffer` with libbpf's
//! `perf_buffer` and `ring_buffer` (Debian's libbpf-dev, called by FFI): link libbpf when the peers are built (feature
//! `peers`), never otherwise (`make test` builds this crate without them).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_PEERS").is_some() {
        println!("cargo:rustc-link-lib=bpf");
    }
}
