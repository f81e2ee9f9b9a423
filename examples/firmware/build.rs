//! The target image links with memory.x (mps2-an386's memory map, the ring at a fixed place);
//! host builds link as usual.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv") {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rustc-link-arg=-T{dir}/memory.x");
    }
    println!("cargo:rerun-if-changed=memory.x");
}
