//! [`RingKind`]: a ring's direction and whether the kernel respects `data_tail`.

/// A ring's kind: its direction and whether the kernel respects `data_tail` (see [`Ring`](crate::Ring)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingKind {
    /// Written backward (`attr.write_backward`).
    pub backward: bool,
    /// Mapped writable: the kernel respects `data_tail` (not an overwrite ring).
    pub writable: bool,
}

impl std::fmt::Display for RingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let direction = if self.backward { "backward" } else { "forward" };
        let access = if self.writable { "writable" } else { "read-only (overwrite)" };
        write!(f, "{direction}, {access}")
    }
}
