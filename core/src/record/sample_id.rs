//! `struct sample_id`: the trailer of non-sample records when `attr.sample_id_all` is set.

use super::{sample_type, Endian};

/// The values of a `sample_id` trailer. Which of them are present in a record is decided by the
/// event's `sample_type` (see [`SampleId::size`]); absent fields are ignored when encoding and 0
/// when decoding. The accessors ([`SampleId::time`], …) are `None` for an absent field, by
/// [`SampleId::fields`], which decoding sets.
///
/// Order on the wire (`__perf_event__output_id_sample`): `{pid, tid}` (TID), `time` (TIME),
/// `id` (ID), `stream_id` (STREAM_ID), `{cpu, res}` (CPU), `identifier` (IDENTIFIER, always
/// last, so it sits at a fixed distance from the end of the record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleId {
    /// Process id (TID).
    pub pid: u32,
    /// Thread id (TID).
    pub tid: u32,
    /// Timestamp (TIME).
    pub time: u64,
    /// Event id (ID).
    pub id: u64,
    /// Stream id (STREAM_ID).
    pub stream_id: u64,
    /// CPU (CPU).
    pub cpu: u32,
    /// Reserved word after `cpu` (CPU); the kernel writes 0.
    pub res: u32,
    /// Event id again (IDENTIFIER).
    pub identifier: u64,
    /// Which fields the trailer held: the `sample_type` bits of [`SAMPLE_ID_BITS`]
    /// (`sample_type::SAMPLE_ID_BITS`) it was decoded with (or [`SampleId::masked`] with). The
    /// encoder ignores it (the context decides); a value built by hand leaves it 0, and then
    /// the accessors say every field is absent.
    ///
    /// [`SAMPLE_ID_BITS`]: sample_type::SAMPLE_ID_BITS
    pub fields: u64,
}

impl SampleId {
    /// Size in bytes of the trailer for `sample_type` (the kernel's `id_header_size`).
    pub const fn size(sample_type: u64) -> usize {
        // One u64 per field of the trailer.
        (sample_type & sample_type::SAMPLE_ID_BITS).count_ones() as usize * 8
    }

    /// Write the trailer for `sample_type` into `out`; returns the bytes written, or `None` if
    /// `out` is shorter than [`SampleId::size`] (nothing is written then).
    pub fn encode(&self, sample_type: u64, endian: Endian, out: &mut [u8]) -> Option<usize> {
        let n = Self::size(sample_type);
        let out = out.get_mut(..n)?;
        let mut at = 0;
        let mut put = |bytes: [u8; 8]| {
            out[at..at + 8].copy_from_slice(&bytes);
            at += 8;
        };
        if sample_type & sample_type::TID != 0 {
            put(endian.pair_u32(self.pid, self.tid));
        }
        if sample_type & sample_type::TIME != 0 {
            put(endian.put_u64(self.time));
        }
        if sample_type & sample_type::ID != 0 {
            put(endian.put_u64(self.id));
        }
        if sample_type & sample_type::STREAM_ID != 0 {
            put(endian.put_u64(self.stream_id));
        }
        if sample_type & sample_type::CPU != 0 {
            put(endian.pair_u32(self.cpu, self.res));
        }
        if sample_type & sample_type::IDENTIFIER != 0 {
            put(endian.put_u64(self.identifier));
        }
        Some(n)
    }

    /// Keep only the fields `sample_type` puts in a trailer, the others set to 0: what a trailer
    /// decodes to after this one is encoded.
    pub fn masked(self, sample_type: u64) -> SampleId {
        let on = |bit: u64| sample_type & bit != 0;
        SampleId {
            pid: if on(sample_type::TID) { self.pid } else { 0 },
            tid: if on(sample_type::TID) { self.tid } else { 0 },
            time: if on(sample_type::TIME) { self.time } else { 0 },
            id: if on(sample_type::ID) { self.id } else { 0 },
            stream_id: if on(sample_type::STREAM_ID) { self.stream_id } else { 0 },
            cpu: if on(sample_type::CPU) { self.cpu } else { 0 },
            res: if on(sample_type::CPU) { self.res } else { 0 },
            identifier: if on(sample_type::IDENTIFIER) { self.identifier } else { 0 },
            fields: sample_type & sample_type::SAMPLE_ID_BITS,
        }
    }

    fn has(&self, bit: u64) -> bool {
        self.fields & bit != 0
    }
    /// `pid`, if the trailer holds TID.
    pub fn pid(&self) -> Option<u32> {
        self.has(sample_type::TID).then_some(self.pid)
    }
    /// `tid`, if the trailer holds TID.
    pub fn tid(&self) -> Option<u32> {
        self.has(sample_type::TID).then_some(self.tid)
    }
    /// `time`, if the trailer holds TIME.
    pub fn time(&self) -> Option<u64> {
        self.has(sample_type::TIME).then_some(self.time)
    }
    /// The event id: `identifier` if the trailer holds IDENTIFIER, else `id` if it holds ID.
    pub fn event_id(&self) -> Option<u64> {
        if self.has(sample_type::IDENTIFIER) {
            Some(self.identifier)
        } else {
            self.has(sample_type::ID).then_some(self.id)
        }
    }
    /// `stream_id`, if the trailer holds STREAM_ID.
    pub fn stream_id(&self) -> Option<u64> {
        self.has(sample_type::STREAM_ID).then_some(self.stream_id)
    }
    /// `cpu`, if the trailer holds CPU.
    pub fn cpu(&self) -> Option<u32> {
        self.has(sample_type::CPU).then_some(self.cpu)
    }

    /// The trailer in `bytes`, which holds exactly [`SampleId::size`]`(sample_type)` bytes
    /// (checked by the caller; a shorter slice leaves the missing fields 0).
    #[inline]
    pub(crate) fn from_trailer(bytes: &[u8], sample_type: u64, e: Endian) -> SampleId {
        let mut s = SampleId { fields: sample_type & sample_type::SAMPLE_ID_BITS, ..SampleId::default() };
        // The fields in wire order, each the next 8 bytes.
        let mut words = bytes.chunks_exact(8).map(|w| <[u8; 8]>::try_from(w).unwrap_or_default());
        let mut next = |bit: u64| if sample_type & bit != 0 { words.next() } else { None };
        if let Some(w) = next(sample_type::TID) {
            (s.pid, s.tid) = e.u32_pair_at(&w, 0).unwrap_or_default();
        }
        if let Some(w) = next(sample_type::TIME) {
            s.time = e.u64(w);
        }
        if let Some(w) = next(sample_type::ID) {
            s.id = e.u64(w);
        }
        if let Some(w) = next(sample_type::STREAM_ID) {
            s.stream_id = e.u64(w);
        }
        if let Some(w) = next(sample_type::CPU) {
            (s.cpu, s.res) = e.u32_pair_at(&w, 0).unwrap_or_default();
        }
        if let Some(w) = next(sample_type::IDENTIFIER) {
            s.identifier = e.u64(w);
        }
        s
    }
}
