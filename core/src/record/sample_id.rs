//! `struct sample_id`: the trailer of non-sample records when `attr.sample_id_all` is set.

use super::{sample_type, Endian, PidTid, SampleCpu};

/// The values of a `sample_id` trailer: each `Some` exactly when the event's `sample_type` puts
/// it in the trailer (as a [`Sample`](super::Sample)'s fields are), which decoding sets. The
/// encoder writes the fields `sample_type` asks for (a `None` one as 0) and no other (see
/// [`SampleId::masked`] for what a value decodes to after it is encoded).
///
/// Order on the wire (`__perf_event__output_id_sample`): `{pid, tid}` (TID), `time` (TIME),
/// `id` (ID), `stream_id` (STREAM_ID), `{cpu, res}` (CPU), `identifier` (IDENTIFIER, always
/// last, so it sits at a fixed distance from the end of the record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleId {
    /// TID: process and thread id.
    pub tid: Option<PidTid>,
    /// TIME: the timestamp.
    pub time: Option<u64>,
    /// ID: the event id.
    pub id: Option<u64>,
    /// STREAM_ID.
    pub stream_id: Option<u64>,
    /// CPU: the CPU and the reserved word after it (the kernel writes 0).
    pub cpu: Option<SampleCpu>,
    /// IDENTIFIER: the event id again, at the end.
    pub identifier: Option<u64>,
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
        let tid = self.tid.unwrap_or_default();
        let cpu = self.cpu.unwrap_or_default();
        if sample_type & sample_type::TID != 0 {
            put(endian.pair_u32(tid.pid, tid.tid));
        }
        if sample_type & sample_type::TIME != 0 {
            put(endian.put_u64(self.time.unwrap_or(0)));
        }
        if sample_type & sample_type::ID != 0 {
            put(endian.put_u64(self.id.unwrap_or(0)));
        }
        if sample_type & sample_type::STREAM_ID != 0 {
            put(endian.put_u64(self.stream_id.unwrap_or(0)));
        }
        if sample_type & sample_type::CPU != 0 {
            put(endian.pair_u32(cpu.cpu, cpu.res));
        }
        if sample_type & sample_type::IDENTIFIER != 0 {
            put(endian.put_u64(self.identifier.unwrap_or(0)));
        }
        Some(n)
    }

    /// What this value decodes to after it is encoded for `sample_type`: the fields
    /// `sample_type` puts in a trailer `Some` (0 for a `None` one), the others `None`.
    pub fn masked(self, sample_type: u64) -> SampleId {
        fn on<T: Default>(sample_type: u64, bit: u64, v: Option<T>) -> Option<T> {
            (sample_type & bit != 0).then(|| v.unwrap_or_default())
        }
        SampleId {
            tid: on(sample_type, sample_type::TID, self.tid),
            time: on(sample_type, sample_type::TIME, self.time),
            id: on(sample_type, sample_type::ID, self.id),
            stream_id: on(sample_type, sample_type::STREAM_ID, self.stream_id),
            cpu: on(sample_type, sample_type::CPU, self.cpu),
            identifier: on(sample_type, sample_type::IDENTIFIER, self.identifier),
        }
    }

    /// The event id: `identifier` if the trailer holds IDENTIFIER, else `id`.
    pub fn event_id(&self) -> Option<u64> {
        self.identifier.or(self.id)
    }

    /// The trailer in `bytes`, which holds exactly [`SampleId::size`]`(sample_type)` bytes
    /// (checked by the caller; a shorter slice leaves the missing fields 0).
    #[inline]
    pub(crate) fn from_trailer(bytes: &[u8], sample_type: u64, e: Endian) -> SampleId {
        let mut s = SampleId::default();
        // The fields in wire order, each the next 8 bytes (0 past a short slice's end).
        let mut words = bytes.chunks_exact(8).map(|w| <[u8; 8]>::try_from(w).unwrap_or_default());
        let mut next = |bit: u64| (sample_type & bit != 0).then(|| words.next().unwrap_or_default());
        s.tid = next(sample_type::TID).map(|w| {
            let (pid, tid) = e.u32_pair_at(&w, 0).unwrap_or_default();
            PidTid { pid, tid }
        });
        s.time = next(sample_type::TIME).map(|w| e.u64(w));
        s.id = next(sample_type::ID).map(|w| e.u64(w));
        s.stream_id = next(sample_type::STREAM_ID).map(|w| e.u64(w));
        s.cpu = next(sample_type::CPU).map(|w| {
            let (cpu, res) = e.u32_pair_at(&w, 0).unwrap_or_default();
            SampleCpu { cpu, res }
        });
        s.identifier = next(sample_type::IDENTIFIER).map(|w| e.u64(w));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder writes exactly the fields `sample_type` asks for, in wire order, a `None`
    /// one as 0; decoding gives `masked`'s value back.
    #[test]
    fn the_trailer_holds_the_fields_of_sample_type_and_no_other() {
        let full = SampleId {
            tid: Some(PidTid { pid: 1, tid: 2 }),
            time: Some(3),
            id: Some(4),
            stream_id: Some(5),
            cpu: Some(SampleCpu { cpu: 6, res: 0 }),
            identifier: None,
        };
        for st in [
            sample_type::TID,
            sample_type::TIME,
            sample_type::ID | sample_type::CPU,
            sample_type::STREAM_ID | sample_type::IDENTIFIER,
            sample_type::SAMPLE_ID_BITS,
        ] {
            let mut out = [0xffu8; 64];
            let n = full.encode(st, Endian::Little, &mut out).unwrap();
            assert_eq!(n, SampleId::size(st));
            let back = SampleId::from_trailer(&out[..n], st, Endian::Little);
            assert_eq!(back, full.masked(st), "sample_type {st:#x}");
        }
        let mut out = [0u8; 8];
        assert_eq!(full.encode(sample_type::TIME, Endian::Big, &mut out), Some(8));
        assert_eq!(out, 3u64.to_be_bytes(), "TIME alone: no TID before it");
        assert_eq!(full.encode(sample_type::TID | sample_type::TIME, Endian::Big, &mut out), None, "too short");
    }

    /// The event id is IDENTIFIER's, else ID's.
    #[test]
    fn the_event_id_is_identifiers_else_ids() {
        let both = SampleId { id: Some(4), identifier: Some(7), ..SampleId::default() };
        assert_eq!(both.event_id(), Some(7));
        assert_eq!(SampleId { identifier: None, ..both }.event_id(), Some(4));
        assert_eq!(SampleId::default().event_id(), None);
    }
}
