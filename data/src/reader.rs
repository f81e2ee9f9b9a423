//! [`PerfData`]: parse a perf.data file and walk its records.

use std::ops::Range;

use perfring::record::{decode, sample_type as st, types, Attr, DecodeContext, DecodeError, Endian, Header, Record};

use crate::{features, PerfDataError, HEADER_SIZE, LEGACY_HEADER_SIZE, MAGIC, SECTION_SIZE};

/// One entry of the attrs section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAttr {
    /// The event's `perf_event_attr`.
    pub attr: Attr,
    /// The sample ids perf registered for the event (one per CPU or thread it was opened on).
    pub ids: Vec<u64>,
}

/// One record of the data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRecord<'a> {
    /// File offset of the record (what `perf report -D` prints).
    pub offset: usize,
    /// Its header.
    pub header: Header,
    /// The record, header included (`header.size` bytes).
    pub bytes: &'a [u8],
    /// For AUXTRACE (type 71), the AUX bytes that follow the record (not counted in
    /// `header.size`); empty otherwise.
    pub aux_data: &'a [u8],
}

/// A parsed perf.data file (owns its bytes).
#[derive(Debug, Clone)]
pub struct PerfData {
    bytes: Vec<u8>,
    /// Byte order of the file (from the magic).
    pub endian: Endian,
    /// `perf_file_header.size` (104, or 72 for the legacy layout).
    pub header_size: u64,
    /// `attr_size`: bytes per attrs entry.
    pub attr_size: u64,
    /// The events.
    pub attrs: Vec<FileAttr>,
    /// The data section.
    pub data: Range<usize>,
    /// Feature bit → payload range, ascending.
    pub features: Vec<(u32, Range<usize>)>,
}

fn section(bytes: &[u8], at: usize, endian: Endian, what: &'static str) -> Result<Range<usize>, PerfDataError> {
    let offset = u64_at(bytes, at, endian, what)?;
    let size = u64_at(bytes, at + 8, endian, what)?;
    let oob = || PerfDataError::OutOfBounds { what, offset, size };
    let start = usize::try_from(offset).map_err(|_| oob())?;
    let len = usize::try_from(size).map_err(|_| oob())?;
    let end = start.checked_add(len).filter(|&e| e <= bytes.len()).ok_or_else(oob)?;
    Ok(start..end)
}

/// A u64 from 8 bytes (the caller sliced exactly 8).
fn u64_of(b: &[u8], endian: Endian) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    endian.u64(a)
}

fn u64_at(bytes: &[u8], at: usize, endian: Endian, what: &'static str) -> Result<u64, PerfDataError> {
    let b = bytes.get(at..at + 8).ok_or(PerfDataError::OutOfBounds { what, offset: at as u64, size: 8 })?;
    Ok(u64_of(b, endian))
}

/// perf's `id_pos` for a `sample_type`: the u64 index (after the header) of the id in a SAMPLE,
/// or `None` without ID and IDENTIFIER (`__perf_evsel__calc_id_pos`).
pub fn id_pos(sample_type: u64) -> Option<usize> {
    if sample_type & st::IDENTIFIER != 0 {
        return Some(0);
    }
    if sample_type & st::ID == 0 {
        return None;
    }
    Some([st::IP, st::TID, st::TIME, st::ADDR].iter().filter(|&&b| sample_type & b != 0).count())
}

/// perf's `is_pos`: the u64 index, counted back from the end of a non-SAMPLE record (1 = last),
/// of the id in the `sample_id` trailer, or `None` without ID and IDENTIFIER
/// (`__perf_evsel__calc_is_pos`).
pub fn is_pos(sample_type: u64) -> Option<usize> {
    if sample_type & st::IDENTIFIER != 0 {
        return Some(1);
    }
    if sample_type & st::ID == 0 {
        return None;
    }
    Some(1 + [st::CPU, st::STREAM_ID].iter().filter(|&&b| sample_type & b != 0).count())
}

impl PerfData {
    /// Read and parse a file.
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<PerfData, PerfDataError> {
        PerfData::parse(std::fs::read(path)?)
    }

    /// Parse a file's bytes.
    pub fn parse(bytes: Vec<u8>) -> Result<PerfData, PerfDataError> {
        let magic: [u8; 8] = bytes.get(..8).and_then(|m| m.try_into().ok()).ok_or(PerfDataError::OutOfBounds {
            what: "perf_file_header",
            offset: 0,
            size: 8,
        })?;
        let endian = if u64::from_le_bytes(magic) == MAGIC {
            Endian::Little
        } else if u64::from_be_bytes(magic) == MAGIC {
            Endian::Big
        } else {
            return Err(PerfDataError::BadMagic(magic));
        };
        let header_size = u64_at(&bytes, 8, endian, "perf_file_header.size")?;
        if header_size != HEADER_SIZE as u64 && header_size != LEGACY_HEADER_SIZE as u64 {
            return Err(PerfDataError::BadHeaderSize(header_size));
        }
        if bytes.len() < header_size as usize {
            return Err(PerfDataError::OutOfBounds { what: "perf_file_header", offset: 0, size: header_size });
        }
        let attr_size = u64_at(&bytes, 16, endian, "perf_file_header.attr_size")?;
        let attrs_range = section(&bytes, 24, endian, "attrs section")?;
        let data = section(&bytes, 40, endian, "data section")?;
        // Attrs: attr.size bytes of perf_event_attr, then the ids section.
        let entry = usize::try_from(attr_size).map_err(|_| PerfDataError::BadAttrSize(attr_size))?;
        if entry < 64 + SECTION_SIZE || attrs_range.len() % entry != 0 {
            return Err(PerfDataError::BadAttrSize(attr_size));
        }
        let mut attrs = Vec::new();
        for (index, at) in attrs_range.clone().step_by(entry).enumerate() {
            let attr_bytes = &bytes[at..at + entry - SECTION_SIZE];
            let attr = Attr::from_bytes(attr_bytes, endian).map_err(|error| PerfDataError::BadAttr { index, error })?;
            let ids_range = section(&bytes, at + entry - SECTION_SIZE, endian, "ids section")?;
            let ids = bytes[ids_range].chunks_exact(8).map(|c| u64_of(c, endian)).collect();
            attrs.push(FileAttr { attr, ids });
        }
        // Features: one section per set bit, after the data section.
        let mut features = Vec::new();
        if header_size == HEADER_SIZE as u64 {
            let mut at = data.end;
            for bit in 0..features::BITS {
                let word = u64_at(&bytes, 72 + 8 * (bit as usize / 64), endian, "feature bitmap")?;
                if word & (1u64 << (bit % 64)) != 0 {
                    features.push((bit, section(&bytes, at, endian, "feature section")?));
                    at += SECTION_SIZE;
                }
            }
        }
        Ok(PerfData { bytes, endian, header_size, attr_size, attrs, data, features })
    }

    /// The whole file.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A feature's payload.
    pub fn feature(&self, bit: u32) -> Option<&[u8]> {
        self.features.iter().find(|(b, _)| *b == bit).map(|(_, r)| &self.bytes[r.clone()])
    }

    /// A string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID).
    pub fn string_feature(&self, bit: u32) -> Option<String> {
        features::decode_string(self.feature(bit)?, self.endian)
    }

    /// The records of the data section, in file order.
    pub fn records(&self) -> Records<'_> {
        Records { file: self, pos: self.data.start }
    }

    /// The decoding context of event `index`.
    pub fn context(&self, index: usize) -> Option<DecodeContext> {
        Some(DecodeContext::from_attr(&self.attrs.get(index)?.attr, self.endian))
    }

    /// The event that wrote `record` (an index into [`PerfData::attrs`]), as perf decides it
    /// (`evlist__event2evsel`); `None` for perf's own types (≥ 64) and for ids no event has.
    pub fn attr_index(&self, record: &[u8]) -> Option<usize> {
        let header = Header::parse(record, self.endian)?;
        if header.type_ >= types::HEADER_ATTR {
            return None;
        }
        if self.attrs.len() <= 1 {
            return if self.attrs.is_empty() { None } else { Some(0) };
        }
        let first = &self.attrs[0].attr;
        let id_at = if header.type_ == types::SAMPLE {
            8 + 8 * id_pos(first.sample_type)?
        } else {
            if !first.has(perfring::record::attr_flags::SAMPLE_ID_ALL) {
                return Some(0);
            }
            record.len().checked_sub(8 * is_pos(first.sample_type)?)?
        };
        let id = self.endian.u64(record.get(id_at..id_at + 8)?.try_into().ok()?);
        if id == 0 {
            return Some(0);
        }
        self.attrs.iter().position(|a| a.ids.contains(&id))
    }

    /// Decode a record with the context of the event that wrote it (the first event's context
    /// for perf's own types, which decode to [`Record::Unknown`]). Returns the event index too.
    pub fn decode<'a>(&self, record: &FileRecord<'a>) -> Result<(Option<usize>, Record<'a>), DecodeError> {
        let index = self.attr_index(record.bytes);
        let ctx = index
            .or(if self.attrs.is_empty() { None } else { Some(0) })
            .and_then(|i| self.context(i))
            .unwrap_or(DecodeContext::new(self.endian));
        Ok((index, decode(record.bytes, &ctx)?))
    }
}

/// Iterator over the records of a [`PerfData`]; stops after the first error.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    file: &'a PerfData,
    pos: usize,
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<FileRecord<'a>, PerfDataError>;

    fn next(&mut self) -> Option<Self::Item> {
        let end = self.file.data.end;
        if self.pos >= end {
            return None;
        }
        let bytes = &self.file.bytes[..end];
        let offset = self.pos;
        let Some(header) = Header::parse(&bytes[offset..], self.file.endian) else {
            self.pos = end;
            return Some(Err(PerfDataError::OutOfBounds { what: "record header", offset: offset as u64, size: 8 }));
        };
        let size = usize::from(header.size);
        if size < Header::SIZE {
            self.pos = end;
            return Some(Err(PerfDataError::BadRecordSize { offset: offset as u64, size: header.size }));
        }
        let Some(record) = bytes.get(offset..offset + size) else {
            self.pos = end;
            return Some(Err(PerfDataError::OutOfBounds { what: "record", offset: offset as u64, size: size as u64 }));
        };
        let mut next = offset + size;
        let mut aux_data: &[u8] = &[];
        if header.type_ == types::AUXTRACE && size >= 16 {
            let aux_size = u64_of(&record[8..16], self.file.endian);
            match usize::try_from(aux_size).ok().and_then(|n| bytes.get(next..next.checked_add(n)?)) {
                Some(d) => {
                    aux_data = d;
                    next += d.len();
                }
                None => {
                    self.pos = end;
                    return Some(Err(PerfDataError::OutOfBounds {
                        what: "AUXTRACE data",
                        offset: next as u64,
                        size: aux_size,
                    }));
                }
            }
        }
        self.pos = next;
        Some(Ok(FileRecord { offset, header, bytes: record, aux_data }))
    }
}
