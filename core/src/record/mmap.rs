//! `PERF_RECORD_MMAP` (1) and `PERF_RECORD_MMAP2` (10): a mapping appeared
//! (`perf_event_mmap_output`).

use core::ffi::CStr;

use super::body::{common_fields, Body};
use super::cursor::{cstr_size, Reader, Writer};
use super::{misc, DecodeContext, DecodeError, EncodeError, SampleId};

/// `PERF_RECORD_MMAP`: `{u32 pid, tid; u64 addr, len, pgoff; char filename[]}` + `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mmap<'a> {
    /// `header.misc`: CPU mode, `MMAP_DATA` for a non-executable mapping.
    pub misc: u16,
    /// Process id (`u32::MAX` for the kernel map perf synthesizes).
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Start address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// File offset in bytes.
    pub pgoff: u64,
    /// The file (NUL-terminated and zero-padded to 8 on the wire).
    pub filename: &'a CStr,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for Mmap<'a> {
    const NAME: &'static str = "PERF_RECORD_MMAP";
    #[inline]
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let f = r.fixed::<32>(&MMAP_FIELDS)?;
        Ok(Mmap {
            misc,
            pid: f.u32(0),
            tid: f.u32(4),
            addr: f.u64(8),
            len: f.u64(16),
            pgoff: f.u64(24),
            filename: r.cstr_rest("mmap.filename")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        Ok(32 + cstr_size(self.filename))
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.tid);
        w.u64(self.addr);
        w.u64(self.len);
        w.u64(self.pgoff);
        w.cstr(self.filename);
    }
    common_fields!();
}

// The fixed fields in wire order with their sizes, for `Reader::fixed`'s errors.
const MMAP_FIELDS: [(&str, usize); 5] =
    [("mmap.pid", 4), ("mmap.tid", 4), ("mmap.addr", 8), ("mmap.len", 8), ("mmap.pgoff", 8)];
const MMAP2_FIELDS: [(&str, usize); 5] =
    [("mmap2.pid", 4), ("mmap2.tid", 4), ("mmap2.addr", 8), ("mmap2.len", 8), ("mmap2.pgoff", 8)];
const MMAP2_DEVICE_FIELDS: [(&str, usize); 4] =
    [("mmap2.maj", 4), ("mmap2.min", 4), ("mmap2.ino", 8), ("mmap2.ino_generation", 8)];
const MMAP2_PROT_FIELDS: [(&str, usize); 2] = [("mmap2.prot", 4), ("mmap2.flags", 4)];

/// The 24-byte union of MMAP2, chosen by `misc & PERF_RECORD_MISC_MMAP_BUILD_ID`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mmap2File<'a> {
    /// `{u32 maj, min; u64 ino, ino_generation}`.
    Device {
        /// Device major number.
        maj: u32,
        /// Device minor number.
        min: u32,
        /// Inode number.
        ino: u64,
        /// Inode generation.
        ino_generation: u64,
    },
    /// `{u8 build_id_size; u8 __reserved_1; u16 __reserved_2; u8 build_id[20]}`: the first
    /// `build_id_size` (≤ 20) bytes. The reserved and unused bytes are written as zeros and not
    /// checked when decoding.
    BuildId(&'a [u8]),
}

/// `PERF_RECORD_MMAP2`: MMAP's fields, the [`Mmap2File`] union, `u32 prot, flags`, filename,
/// `sample_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mmap2<'a> {
    /// `header.misc`: CPU mode, `MMAP_DATA`, and `MMAP_BUILD_ID` — the encoder sets or clears
    /// `MMAP_BUILD_ID` to match [`Mmap2::file`].
    pub misc: u16,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Start address.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// File offset in bytes.
    pub pgoff: u64,
    /// Device and inode, or build id.
    pub file: Mmap2File<'a>,
    /// `PROT_*` bits.
    pub prot: u32,
    /// `MAP_*` bits.
    pub flags: u32,
    /// The file.
    pub filename: &'a CStr,
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

/// Size of the build-id array in MMAP2 (`BUILD_ID_SIZE_MAX`).
pub const BUILD_ID_MAX: usize = 20;

impl<'a> Body<'a> for Mmap2<'a> {
    const NAME: &'static str = "PERF_RECORD_MMAP2";
    #[inline]
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let f = r.fixed::<32>(&MMAP2_FIELDS)?;
        let (pid, tid, addr, len, pgoff) = (f.u32(0), f.u32(4), f.u64(8), f.u64(16), f.u64(24));
        let file = if misc & misc::MMAP_BUILD_ID != 0 {
            let offset = r.offset();
            let size = r.u8("mmap2.build_id_size")?;
            r.take(3, "mmap2.__reserved")?;
            let id = r.take(BUILD_ID_MAX, "mmap2.build_id")?;
            let id = id.get(..usize::from(size)).ok_or(DecodeError::InvalidValue {
                field: "mmap2.build_id_size",
                value: u64::from(size),
                offset,
            })?;
            Mmap2File::BuildId(id)
        } else {
            let f = r.fixed::<24>(&MMAP2_DEVICE_FIELDS)?;
            Mmap2File::Device { maj: f.u32(0), min: f.u32(4), ino: f.u64(8), ino_generation: f.u64(16) }
        };
        let f = r.fixed::<8>(&MMAP2_PROT_FIELDS)?;
        Ok(Mmap2 {
            misc,
            pid,
            tid,
            addr,
            len,
            pgoff,
            file,
            prot: f.u32(0),
            flags: f.u32(4),
            filename: r.cstr_rest("mmap2.filename")?,
            sample_id,
        })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        if let Mmap2File::BuildId(id) = self.file {
            if id.len() > BUILD_ID_MAX {
                return Err(EncodeError::InvalidValue { field: "mmap2.build_id", value: id.len() as u64 });
            }
        }
        Ok(32 + 24 + 8 + cstr_size(self.filename))
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u32(self.pid);
        w.u32(self.tid);
        w.u64(self.addr);
        w.u64(self.len);
        w.u64(self.pgoff);
        match self.file {
            Mmap2File::Device { maj, min, ino, ino_generation } => {
                w.u32(maj);
                w.u32(min);
                w.u64(ino);
                w.u64(ino_generation);
            }
            Mmap2File::BuildId(id) => {
                w.u8(id.len() as u8);
                w.zeros(3);
                w.put(id);
                w.zeros(BUILD_ID_MAX.saturating_sub(id.len()));
            }
        }
        w.u32(self.prot);
        w.u32(self.flags);
        w.cstr(self.filename);
    }
    fn misc(&self) -> u16 {
        match self.file {
            Mmap2File::Device { .. } => self.misc & !misc::MMAP_BUILD_ID,
            Mmap2File::BuildId(_) => self.misc | misc::MMAP_BUILD_ID,
        }
    }
    fn sample_id(&self) -> Option<&SampleId> {
        self.sample_id.as_ref()
    }
}
