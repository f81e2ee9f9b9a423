//! [`Scratch`]: where a consumer copies a record it cannot lend in place (one that wraps the
//! ring's end, every record of an untrusted ring).

/// Scratch space large enough for any record (65528 bytes, rounded up), 8-byte aligned.
#[repr(C, align(8))]
pub struct Scratch([u8; 65536]);

impl Scratch {
    /// A zeroed scratch buffer. 64 KiB: put it in a `static` or a `Box` on small stacks.
    pub const fn new() -> Self {
        Scratch([0; 65536])
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl core::ops::Deref for Scratch {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl core::ops::DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}
