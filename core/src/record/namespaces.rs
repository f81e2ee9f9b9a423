//! `PERF_RECORD_NAMESPACES` (16): the namespaces of a task (`perf_event_namespaces_output`).

use core::fmt;

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId, U64Array};

/// Index of each namespace in [`Namespaces::links`] (uapi `NET_NS_INDEX` …).
pub mod ns_index {
    /// `NET_NS_INDEX`
    pub const NET: usize = 0;
    /// `UTS_NS_INDEX`
    pub const UTS: usize = 1;
    /// `IPC_NS_INDEX`
    pub const IPC: usize = 2;
    /// `PID_NS_INDEX`
    pub const PID: usize = 3;
    /// `USER_NS_INDEX`
    pub const USER: usize = 4;
    /// `MNT_NS_INDEX`
    pub const MNT: usize = 5;
    /// `CGROUP_NS_INDEX`
    pub const CGROUP: usize = 6;
    /// `NR_NAMESPACES`: how many the kernel writes.
    pub const COUNT: usize = 7;
}

/// `struct perf_ns_link_info`: `{u64 dev, u64 ino}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NamespaceLink {
    /// Device of the nsfs inode.
    pub dev: u64,
    /// The namespace inode.
    pub ino: u64,
}

/// The `nr_namespaces` links: borrowed record words, or a native slice for encoding.
#[derive(Clone, Copy)]
pub struct NamespaceLinks<'a> {
    repr: Repr<'a>,
}

#[derive(Clone, Copy)]
enum Repr<'a> {
    Words(U64Array<'a>),
    Slice(&'a [NamespaceLink]),
}

impl<'a> NamespaceLinks<'a> {
    /// Wrap native links (for building records to encode).
    pub const fn from_slice(links: &'a [NamespaceLink]) -> NamespaceLinks<'a> {
        NamespaceLinks { repr: Repr::Slice(links) }
    }
    /// Number of links (`nr_namespaces`).
    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Words(w) => w.len() / 2,
            Repr::Slice(s) => s.len(),
        }
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The link at `index` ([`ns_index`]).
    pub fn get(&self, index: usize) -> Option<NamespaceLink> {
        match self.repr {
            Repr::Words(w) => {
                if index >= self.len() {
                    return None;
                }
                let base = index.checked_mul(2)?;
                Some(NamespaceLink { dev: w.get(base)?, ino: w.get(base + 1)? })
            }
            Repr::Slice(s) => s.get(index).copied(),
        }
    }
    /// The links in index order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = NamespaceLink> + 'a {
        let this = *self;
        (0..this.len()).map(move |i| this.get(i).unwrap_or_default())
    }
}

impl PartialEq for NamespaceLinks<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for NamespaceLinks<'_> {}

impl fmt::Debug for NamespaceLinks<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// `PERF_RECORD_NAMESPACES`: `{u32 pid, tid; u64 nr_namespaces; {u64 dev, ino}[nr]}` +
/// `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Namespaces<'a> {
    /// `header.misc`.
    pub misc: u16,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// One link per namespace, in [`ns_index`] order (the kernel writes 7).
    pub links: NamespaceLinks<'a>,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Namespaces<'a> {
    const NAME: &'static str = "PERF_RECORD_NAMESPACES";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let pid = r.u32("namespaces.pid")?;
        let tid = r.u32("namespaces.tid")?;
        let nr = r.u64("namespaces.nr_namespaces")?;
        let words = r.u64s(nr, 2, "namespaces.nr_namespaces")?;
        Ok(Namespaces { misc, pid, tid, links: NamespaceLinks { repr: Repr::Words(words) }, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        self.links
            .len()
            .checked_mul(16)
            .and_then(|n| n.checked_add(16))
            .ok_or(EncodeError::TooLarge { size: usize::MAX })
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.tid);
        w.u64(self.links.len() as u64);
        match self.links.repr {
            Repr::Words(words) => w.u64s(&words),
            Repr::Slice(s) => {
                for l in s {
                    w.u64(l.dev);
                    w.u64(l.ino);
                }
            }
        }
    }
    common_fields!();
}
