//! Ring memory for the benchmarks that lay rings over their own buffers (`instructions`,
//! `loops`, `rings`): 8-aligned, as both rings' layouts require.

/// `mem`'s words as bytes.
pub fn as_bytes(mem: &mut [u64]) -> &mut [u8] {
    // SAFETY: the u64 buffer viewed as bytes: same allocation, 8-aligned, length × 8; the
    // borrow of `mem` moves into the result.
    unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr().cast::<u8>(), mem.len() * 8) }
}
