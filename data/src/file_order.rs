//! Reading the data section in file order: each record's header and bytes taken from the
//! source, COMPRESSED records decompressed and their records read after them, AUXTRACE and
//! tracing data taken with their records, pipe-mode attrs and features taken in, and each
//! kernel record attributed (a record perf cannot attribute counted in a warning).

use std::ops::Range;

use perfring::record::{types, Attr, DecodeError, Header};

use crate::file_header::{u64_of, Mode};
use crate::loc::{Buf, Loc};
use crate::metadata::{add_event, read_features, FileAttr, Tail};
use crate::source::{Short, ShortOpaque, Source};
use crate::{features, PerfDataError, Reader, Warning};

impl<S: Source> Reader<S> {
    fn short(&self, what: &'static str, offset: u64, need: u64, s: Short) -> PerfDataError {
        if s.at_limit {
            PerfDataError::OutsideDataSection { what, offset, size: need, data_end: self.meta.data.1 }
        } else {
            PerfDataError::Truncated { what, offset, need, have: s.have }
        }
    }

    fn take(&mut self, what: &'static str, offset: u64, n: u64) -> Result<Range<usize>, PerfDataError> {
        match self.src.take(n)? {
            Ok(r) => Ok(r),
            Err(ShortOpaque(s)) => Err(self.short(what, offset, n, s)),
        }
    }

    /// The next record in file order (decompressed records after their COMPRESSED record).
    pub(crate) fn next_raw(&mut self) -> Result<Option<Loc>, PerfDataError> {
        if self.done {
            return Ok(None);
        }
        if let Some(loc) = self.next_decompressed()? {
            return Ok(Some(loc));
        }
        let endian = self.meta.endian();
        self.src.begin();
        let offset = self.src.position();
        let hr = match self.src.take(Header::SIZE as u64)? {
            Ok(r) => r,
            Err(ShortOpaque(s)) if s.have == 0 => return self.input_ended(),
            Err(ShortOpaque(s)) => return Err(self.short("record header", offset, 8, s)),
        };
        let mut h8 = [0u8; 8];
        h8.copy_from_slice(&self.src.bytes()[hr.clone()]);
        let header = Header::from_bytes(h8, endian);
        if usize::from(header.size) < Header::SIZE {
            return Err(PerfDataError::BadRecordSize { offset, size: header.size });
        }
        let body = self.take("record", offset, u64::from(header.size) - 8)?;
        let rec = hr.start..body.end;
        let trailing = self.take_in(header, rec.clone(), offset)?;
        let event = if header.type_ < types::HEADER_ATTR {
            let found = self.meta.events.attribute(header, &self.src.bytes()[rec.clone()]);
            self.note(found, offset)
        } else {
            None
        };
        Ok(Some(Loc { buf: Buf::Src, rec, trailing, offset, header, event }))
    }

    /// The next record of the COMPRESSED record read last, if it holds a whole one.
    fn next_decompressed(&mut self) -> Result<Option<Loc>, PerfDataError> {
        let pending = self.decomp.pending();
        let Some(header) = Header::parse(pending, self.meta.endian()) else { return Ok(None) };
        let size = usize::from(header.size);
        if size < Header::SIZE {
            return Err(PerfDataError::BadRecordSize { offset: self.decomp_offset, size: header.size });
        }
        if size > pending.len() {
            return Ok(None);
        }
        let start = self.decomp.pos;
        self.decomp.pos += size;
        let rec = start..start + size;
        let found = self.meta.events.attribute(header, &self.decomp.buf[rec.clone()]);
        let event = self.note(found, self.decomp_offset);
        let trailing = start + size..start + size;
        Ok(Some(Loc { buf: Buf::Decomp, rec, trailing, offset: self.decomp_offset, header, event }))
    }

    /// The input ended between records: the end, unless a COMPRESSED record's last record was
    /// cut.
    fn input_ended(&mut self) -> Result<Option<Loc>, PerfDataError> {
        let pending = self.decomp.pending();
        if !pending.is_empty() {
            // The record's own size once its header is whole; the header's 8 before.
            let need = Header::parse(pending, self.meta.endian()).map_or(Header::SIZE as u64, |h| u64::from(h.size));
            return Err(PerfDataError::Truncated {
                what: "decompressed record",
                offset: self.decomp_offset,
                need,
                have: pending.len() as u64,
            });
        }
        self.done = true;
        self.at_end()?;
        Ok(None)
    }

    /// What the perf-only record of `header` at `rec` (file offset `offset`) brings in: the
    /// data that follows it (AUXTRACE, tracing data; returned as a range of the source's
    /// buffer), a COMPRESSED payload fed to the decompressor, pipe-mode attrs and features.
    fn take_in(&mut self, header: Header, rec: Range<usize>, offset: u64) -> Result<Range<usize>, PerfDataError> {
        let endian = self.meta.endian();
        let mut trailing = rec.end..rec.end;
        let bad = |field| PerfDataError::BadPerfRecord { type_: header.type_, offset, field };
        match header.type_ {
            types::AUXTRACE => {
                if header.size < 16 {
                    return Err(bad("auxtrace.size"));
                }
                let n = u64_of(self.src.bytes(), rec.start + 8, endian);
                trailing = self.take("AUXTRACE data", offset + u64::from(header.size), n)?;
            }
            types::HEADER_TRACING_DATA => {
                if header.size < 12 {
                    return Err(bad("tracing_data.size"));
                }
                let b = &self.src.bytes()[rec.start + 8..rec.start + 12];
                let n = u64::from(endian.u32([b[0], b[1], b[2], b[3]]));
                trailing = self.take("tracing data", offset + u64::from(header.size), n)?;
                if self.meta.header.mode == Mode::Pipe {
                    // Pipe mode's form of the TRACING_DATA feature.
                    let data = self.src.bytes()[trailing.clone()].to_vec();
                    self.meta.features.push((features::TRACING_DATA, data));
                }
            }
            types::COMPRESSED | types::COMPRESSED2 => {
                let payload = if header.type_ == types::COMPRESSED {
                    rec.start + 8..rec.end
                } else {
                    if header.size < 16 {
                        return Err(bad("compressed2.data_size"));
                    }
                    let n = u64_of(self.src.bytes(), rec.start + 8, endian);
                    let len =
                        usize::try_from(n).ok().filter(|&n| n <= rec.len() - 16).ok_or_else(|| bad("data_size"))?;
                    rec.start + 16..rec.start + 16 + len
                };
                self.decomp.feed(&self.src.bytes()[payload], offset)?;
                self.decomp_offset = offset;
            }
            types::HEADER_ATTR if self.meta.header.mode == Mode::Pipe => {
                let bytes = self.src.bytes()[rec.clone()].to_vec();
                self.pipe_attr(&bytes, offset)?;
            }
            types::HEADER_FEATURE if self.meta.header.mode == Mode::Pipe => {
                if header.size < 16 {
                    return Err(bad("feature.feat_id"));
                }
                let bytes = &self.src.bytes()[rec.clone()];
                let bit = u64_of(bytes, 8, endian);
                let payload = bytes[16..].to_vec();
                if let Ok(bit) = u32::try_from(bit) {
                    self.meta.features.push((bit, payload));
                }
            }
            _ => {}
        }
        Ok(trailing)
    }

    /// The input's records are all read: what only the end tells.
    fn at_end(&mut self) -> Result<(), PerfDataError> {
        if self.meta.header.mode == Mode::Pipe && self.meta.attrs.is_empty() {
            // No HEADER_ATTR in the whole stream (file mode warns when the header is read).
            self.meta.warnings.push(Warning::NoEvents);
        }
        let read = self.src.position().saturating_sub(self.meta.data.0);
        for w in &mut self.meta.warnings {
            if let Warning::DataSizeZero { assumed_size: size @ 0 } = w {
                // A forward-read file whose data.size is 0: its records ran to the input's end.
                *size = read;
            }
        }
        if std::mem::take(&mut self.meta.deferred_features) {
            let base = self.src.position();
            let bytes = self.src.rest()?;
            read_features(&mut Tail { base, bytes }, &mut self.meta)?;
        }
        Ok(())
    }

    /// The attributed event; a record perf cannot attribute is counted in a warning.
    fn note(&mut self, found: Result<Option<usize>, DecodeError>, offset: u64) -> Option<usize> {
        match found {
            Ok(e) => e,
            Err(error) => {
                match self.unknown_ids {
                    Some(i) => {
                        if let Some(Warning::Unattributed { count, .. }) = self.meta.warnings.get_mut(i) {
                            *count += 1;
                        }
                    }
                    None => {
                        self.unknown_ids = Some(self.meta.warnings.len());
                        let first_offset = self.perf_offset(offset);
                        self.meta.warnings.push(Warning::Unattributed { count: 1, first: error, first_offset });
                    }
                }
                None
            }
        }
    }

    /// HEADER_ATTR (pipe mode): `{header; perf_event_attr (attr.size bytes); u64 ids[]}`
    /// (`perf_event__process_attr`).
    fn pipe_attr(&mut self, bytes: &[u8], offset: u64) -> Result<(), PerfDataError> {
        let endian = self.meta.endian();
        let event = self.meta.attrs.len();
        let body = &bytes[8..];
        let attr = Attr::from_bytes(body, endian).map_err(|error| PerfDataError::BadAttr {
            event,
            offset: offset + 8,
            error,
        })?;
        let size = if attr.size == 0 { 64 } else { attr.size as usize };
        let ids_bytes = body.get(size..).ok_or(PerfDataError::BadPerfRecord {
            type_: types::HEADER_ATTR,
            offset,
            field: "attr.size",
        })?;
        let ids = ids_bytes.chunks_exact(8).map(|c| u64_of(c, 0, endian)).collect();
        let fa = FileAttr { attr, ids };
        add_event(&mut self.meta.events, &fa, &mut self.meta.warnings)?;
        self.meta.attrs.push(fa);
        if !self.warned_inconsistent {
            if let Some(i) = self.meta.events.consistency() {
                self.warned_inconsistent = true;
                self.meta.warnings.push(Warning::Inconsistent(i));
            }
        }
        Ok(())
    }
}
