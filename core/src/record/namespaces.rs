//! `PERF_RECORD_NAMESPACES` (16): the namespaces of a task (`perf_event_namespaces_output`).

use core::fmt;

use super::body::{common_fields, Body};
use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, Endian, Entries, SampleId};

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

impl super::entries::sealed::Sealed for NamespaceLink {
    type Layout = Endian;
    #[inline(always)]
    fn stride(_: Endian) -> usize {
        16
    }
    fn read(bytes: &[u8], endian: Endian) -> NamespaceLink {
        NamespaceLink { dev: endian.u64_at(bytes, 0).unwrap_or(0), ino: endian.u64_at(bytes, 8).unwrap_or(0) }
    }
    fn endian(endian: Endian) -> Endian {
        endian
    }
    fn fmt_entry(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl super::Entry for NamespaceLink {}

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
    pub links: Entries<'a, NamespaceLink>,
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
        let links = r.entries(nr, r.endian, "namespaces.nr_namespaces")?;
        Ok(Namespaces { misc, pid, tid, links, sample_id })
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
        w.entries(&self.links, |w, l| {
            w.u64(l.dev);
            w.u64(l.ino);
        });
    }
    common_fields!();
}
