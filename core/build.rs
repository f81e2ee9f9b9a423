//! Fence mutants without rebuilding the world: `PERFRING_WEAKEN=B cargo test ...` builds this
//! crate with `--cfg perfring_weaken="B"` (the same switch as passing that cfg in RUSTFLAGS), so
//! only perfring and its dependents recompile. Used by `make loom-mutants`.
fn main() {
    println!("cargo:rerun-if-env-changed=PERFRING_WEAKEN");
    if let Ok(fence) = std::env::var("PERFRING_WEAKEN") {
        if !fence.is_empty() {
            println!("cargo:rustc-cfg=perfring_weaken=\"{fence}\"");
        }
    }
}
