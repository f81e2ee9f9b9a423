//! [`RawSample`] and [`BpfRecord`]: what a BPF program's `bpf_perf_event_output` leaves in a
//! perf-event-array ring, read in place from a [`SplitRecord`].

use perfring::consumer::SplitRecord;
use perfring::record::types;

use crate::error::LinuxError;

/// The payload a BPF program gave `bpf_perf_event_output` (the RAW field of a
/// `PERF_RECORD_SAMPLE`), borrowed from the ring: one slice, or two where it wraps the ring's
/// end. Valid for the callback it is handed to; nothing is copied unless the caller asks
/// ([`RawSample::contiguous`]).
///
/// Its length is the RAW size the kernel wrote: the program's size rounded up so that the
/// 4-byte size field and the payload end on 8 bytes (`bpf_perf_event_output(ctx, map, flags,
/// data, 8)` arrives as 12 bytes, 4 of them padding whose bytes are whatever the ring held),
/// as libbpf's and aya's readers hand it on too.
#[derive(Debug, Clone, Copy)]
pub struct RawSample<'a> {
    cpu: u32,
    first: &'a [u8],
    second: &'a [u8],
}

impl<'a> RawSample<'a> {
    /// A payload in one part.
    #[inline(always)]
    pub(crate) fn whole(cpu: u32, payload: &'a [u8]) -> Self {
        RawSample { cpu, first: payload, second: &[] }
    }

    /// The CPU whose ring held it: the CPU the program ran on (its `BPF_F_CURRENT_CPU` index).
    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    /// Bytes of the payload (both parts).
    pub fn len(&self) -> usize {
        self.first.len() + self.second.len()
    }

    /// Whether the payload is empty (a RAW size of 0: never the kernel's, which pads to 4).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The payload as two views into the ring: up to the ring's end, then from its start (the
    /// second empty unless the payload wraps). Zero-copy.
    pub fn parts(&self) -> (&'a [u8], &'a [u8]) {
        (self.first, self.second)
    }

    /// The payload as one slice: the view into the ring where it does not wrap, else copied
    /// into `buf` (the caller's; 65,520 bytes hold any RAW payload). A `buf` too short for a
    /// wrapped payload is [`LinuxError::BufferTooSmall`].
    pub fn contiguous<'b>(&self, buf: &'b mut [u8]) -> Result<&'b [u8], LinuxError>
    where
        'a: 'b,
    {
        if self.second.is_empty() {
            return Ok(self.first);
        }
        let (len, have) = (self.len(), buf.len());
        let dst = buf.get_mut(..len).ok_or(LinuxError::BufferTooSmall { needed: len, len: have })?;
        dst[..self.first.len()].copy_from_slice(self.first);
        dst[self.first.len()..].copy_from_slice(self.second);
        Ok(dst)
    }
}

/// A record of a perf-event-array ring, parsed from a [`SplitRecord`] of a BPF_OUTPUT event's
/// ring (`sample_type` RAW alone, no `sample_id_all`: the layout
/// [`PerfEventArray`](crate::PerfEventArray) opens its events with). What the reader does for
/// every record; public so that a ring read elsewhere (a fuzz target, another memory) is parsed
/// by the same code.
#[derive(Debug, Clone, Copy)]
pub enum BpfRecord<'a> {
    /// A `PERF_RECORD_SAMPLE`: the program's payload.
    Sample(RawSample<'a>),
    /// A `PERF_RECORD_LOST`: this many outputs the kernel dropped (the ring was full, or
    /// paused) before this record's successor.
    Lost(u64),
    /// Any other record type (none is written into these rings): passed over.
    Other {
        /// `header.type`.
        record_type: u32,
    },
}

impl<'a> BpfRecord<'a> {
    /// Parse `record` (read from the ring of `cpu`): a SAMPLE's 4-byte RAW size and payload must
    /// lie inside the record, a LOST record must hold its count; otherwise
    /// [`LinuxError::BadBpfRecord`] (with `skipped` 0: the caller decides what to skip).
    pub fn parse(record: &SplitRecord<'a>, cpu: u32) -> Result<BpfRecord<'a>, LinuxError> {
        Self::parse_in(record, cpu).map_err(|needs| LinuxError::BadBpfRecord {
            cpu,
            record_type: record.header.type_,
            needs,
            size: record.header.size,
            skipped: 0,
        })
    }

    /// [`parse`](BpfRecord::parse) with the bytes a bad record needs as its error (`parse`
    /// names the record around it).
    #[inline]
    fn parse_in(record: &SplitRecord<'a>, cpu: u32) -> Result<BpfRecord<'a>, u64> {
        match Self::whole_payload(record) {
            Some(payload) => Ok(BpfRecord::Sample(RawSample::whole(cpu, payload))),
            None => Self::parse_split(record, cpu),
        }
    }

    /// The common case: a SAMPLE whose RAW size and payload lie before the ring's end, its
    /// payload (two words, in registers: the reader's loop builds the [`RawSample`] where the
    /// callback's reference points, without moving an enum through memory).
    #[inline(always)]
    pub(crate) fn whole_payload(record: &SplitRecord<'a>) -> Option<&'a [u8]> {
        if record.header.type_ != types::SAMPLE {
            return None;
        }
        let &[a, b, c, d] = record.first.get(8..12)? else { return None };
        let end = 12 + u32::from_ne_bytes([a, b, c, d]) as usize;
        if end > usize::from(record.header.size) {
            return None;
        }
        record.first.get(12..end)
    }

    /// [`parse_in`](BpfRecord::parse_in) of every other record: LOST, other types, a payload the
    /// ring's end cuts, and every record too short for its fields (`Err`: the bytes it needs).
    #[cold]
    #[inline(never)]
    fn parse_split(record: &SplitRecord<'a>, cpu: u32) -> Result<BpfRecord<'a>, u64> {
        match record.header.type_ {
            types::SAMPLE => {
                let raw = u32::from_ne_bytes(word(record, 8).ok_or(12u64)?);
                let (first, second) = part(record, 12, raw as usize).ok_or(12 + u64::from(raw))?;
                Ok(BpfRecord::Sample(RawSample { cpu, first, second }))
            }
            // `{header, u64 id, u64 lost}`.
            types::LOST => Ok(BpfRecord::Lost(u64::from_ne_bytes(word(record, 16).ok_or(24u64)?))),
            record_type => Ok(BpfRecord::Other { record_type }),
        }
    }
}

/// Bytes `[at, at + len)` of the record as (up to) two slices, or `None` past its end. A range
/// inside `first` or inside `second` is one slice (the 8-aligned words of the header and the
/// RAW size never straddle the two: `first` ends on 8 bytes).
fn part<'a>(record: &SplitRecord<'a>, at: usize, len: usize) -> Option<(&'a [u8], &'a [u8])> {
    let (first, second) = (record.first, record.second);
    let end = at.checked_add(len)?;
    if end > usize::from(record.header.size) || end > first.len() + second.len() {
        return None;
    }
    if end <= first.len() {
        Some((first.get(at..end)?, &[]))
    } else if at >= first.len() {
        Some((second.get(at - first.len()..end - first.len())?, &[]))
    } else {
        Some((first.get(at..)?, second.get(..end - first.len())?))
    }
}

/// The `N` bytes at `at` of the record, copied (from either part, or both), or `None` past its end.
fn word<const N: usize>(record: &SplitRecord<'_>, at: usize) -> Option<[u8; N]> {
    let (a, b) = part(record, at, N)?;
    let mut out = [0u8; N];
    // `part` returns N bytes in all: `a` then `b`.
    out.get_mut(..a.len())?.copy_from_slice(a);
    out.get_mut(a.len()..)?.copy_from_slice(b);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfring::record::{Endian, Header};

    /// A record of `type_` and `size` whose bytes after the header are `body`, split after
    /// `first` bytes (as a ring's end would split it).
    fn split<'a>(bytes: &'a [u8], first: usize) -> SplitRecord<'a> {
        let header = Header::from_bytes(bytes[..8].try_into().unwrap(), Endian::NATIVE);
        SplitRecord { header, first: &bytes[..first], second: &bytes[first..], offset: 0 }
    }

    fn bytes(type_: u32, size: u16, body: &[u8]) -> Vec<u8> {
        let mut b = Header { type_, misc: 0, size }.to_bytes(Endian::NATIVE).to_vec();
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn a_sample_is_its_raw_payload_in_one_or_two_parts() {
        let mut body = 12u32.to_ne_bytes().to_vec();
        body.extend(1..=12u8);
        let rec = bytes(types::SAMPLE, 24, &body);
        for first in [24, 16, 8] {
            let BpfRecord::Sample(s) = BpfRecord::parse(&split(&rec, first), 3).unwrap() else { panic!() };
            assert_eq!((s.cpu(), s.len()), (3, 12));
            let (a, b) = s.parts();
            assert_eq!([a, b].concat(), (1..=12).collect::<Vec<u8>>(), "split after {first}");
            assert_eq!(b.is_empty(), first != 16, "two parts only where the ring's end cuts the payload");
            assert_eq!(s.contiguous(&mut [0u8; 12]).unwrap(), &(1..=12).collect::<Vec<u8>>()[..]);
            if first == 16 {
                assert!(matches!(
                    s.contiguous(&mut [0u8; 11]),
                    Err(LinuxError::BufferTooSmall { needed: 12, len: 11 })
                ));
            }
        }
    }

    #[test]
    fn a_raw_size_or_a_lost_count_past_the_record_is_a_typed_error() {
        // RAW size 13: 12 + 13 > 24.
        let mut body = 13u32.to_ne_bytes().to_vec();
        body.extend([0u8; 12]);
        let rec = bytes(types::SAMPLE, 24, &body);
        for first in [24, 16, 8] {
            let e = BpfRecord::parse(&split(&rec, first), 1).unwrap_err();
            assert!(
                matches!(e, LinuxError::BadBpfRecord { cpu: 1, record_type: 9, needs: 25, size: 24, skipped: 0 }),
                "{e:?}"
            );
        }
        // The largest RAW size, and a SAMPLE too short for its size field.
        let rec = bytes(types::SAMPLE, 16, &[0xff; 8]);
        assert!(
            matches!(BpfRecord::parse(&split(&rec, 16), 0), Err(LinuxError::BadBpfRecord { needs, .. }) if needs == 12 + u64::from(u32::MAX))
        );
        let rec = bytes(types::SAMPLE, 8, &[]);
        assert!(matches!(BpfRecord::parse(&split(&rec, 8), 0), Err(LinuxError::BadBpfRecord { needs: 12, .. })));
        // A LOST record without its count; one with it.
        let rec = bytes(types::LOST, 16, &[0; 8]);
        assert!(matches!(BpfRecord::parse(&split(&rec, 16), 0), Err(LinuxError::BadBpfRecord { needs: 24, .. })));
        let mut body = 7u64.to_ne_bytes().to_vec();
        body.extend(41u64.to_ne_bytes());
        assert!(matches!(BpfRecord::parse(&split(&bytes(types::LOST, 24, &body), 16), 0), Ok(BpfRecord::Lost(41))));
        // Parts that disagree with the header (a caller's SplitRecord): bounded by both.
        let rec = bytes(types::SAMPLE, 64, &12u32.to_ne_bytes());
        assert!(BpfRecord::parse(&split(&rec, 12), 0).is_err());
        assert!(matches!(BpfRecord::parse(&split(&bytes(77, 8, &[]), 8), 0), Ok(BpfRecord::Other { record_type: 77 })));
    }
}
