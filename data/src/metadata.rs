//! Reading a file-mode file's header, attrs, ids and feature sections (`header.c:
//! perf_session__read_header`, `read_attr`, `perf_header__process_sections`), with perf's
//! checks (perf's tools/perf/util/session.c and evlist.c): refusals are [`PerfDataError`]s, what perf repairs is a [`Warning`].

use std::io::{Read, Seek, SeekFrom};

use perfring::record::{Attr, Endian};

use crate::attribution::Events;
use crate::file_header::{u64_of, FileHeader, Section};
use crate::{PerfDataError, Warning, SECTION_SIZE};
use perfring::record::EventSetError;

/// One event: its `perf_event_attr` and the sample ids perf registered for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAttr {
    /// The event's `perf_event_attr`.
    pub attr: Attr,
    /// The sample ids of the event (one per CPU or thread it was opened on).
    pub ids: Vec<u64>,
}

/// What a reader knows besides the records: the header, the events and their ids, the feature
/// sections, the warnings. [`crate::Reader::metadata`] gives it, and so does every record
/// ([`crate::FileRecord::metadata`]), so that it can be read while the records are walked. In
/// pipe mode it grows as the stream's HEADER_ATTR and HEADER_FEATURE records are read.
#[derive(Debug, Clone)]
pub struct Metadata {
    pub(crate) header: FileHeader,
    pub(crate) attrs: Vec<FileAttr>,
    pub(crate) features: Vec<(u32, Vec<u8>)>,
    pub(crate) warnings: Vec<Warning>,
    pub(crate) events: Events,
    /// The data section as read: `[start, end)` (`end` is `u64::MAX` where the input's end
    /// ends it: pipe mode, and a forward-read file whose `data.size` is 0).
    pub(crate) data: (u64, u64),
    /// A file read forward ([`crate::Reader::from_read`]): its feature sections follow the data
    /// section and are read when the records are.
    pub(crate) deferred_features: bool,
}

impl Metadata {
    /// The file header (pipe mode: the 16-byte one, sections zero).
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// The events and their ids as a `perfring::record` event set: the event of an id
    /// (`event_set().event_of_id(id)`, perf's `evlist__id2sid`), an event's layout and decode
    /// context (`event_set().event(i)`), attribution of a record read some other way.
    pub fn event_set(
        &self,
    ) -> &perfring::record::EventSet<Vec<perfring::record::EventLayout>, Vec<perfring::record::IdEntry>> {
        self.events.set()
    }

    /// File or pipe mode.
    pub fn mode(&self) -> crate::Mode {
        self.header.mode
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.header.endian
    }

    /// The events, in file order (pipe mode: those whose HEADER_ATTR has been read so far).
    pub fn attrs(&self) -> &[FileAttr] {
        &self.attrs
    }

    /// The feature sections (pipe mode: the HEADER_FEATURE records read so far), by bit, as
    /// bytes; [`Feature::parse`](crate::features::Feature::parse) decodes them.
    pub fn features(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        self.features.iter().map(|(b, p)| (*b, p.as_slice()))
    }

    /// One feature section's bytes.
    pub fn feature(&self, bit: u32) -> Option<&[u8]> {
        self.features.iter().rev().find(|(b, _)| *b == bit).map(|(_, p)| p.as_slice())
    }

    /// One feature section decoded; `None` if absent.
    pub fn feature_value(&self, bit: u32) -> Option<Result<crate::features::Feature, PerfDataError>> {
        self.feature(bit).map(|p| crate::features::Feature::parse(bit, p, self.endian()))
    }

    /// What perf would have warned about so far.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The data section as read, `[start, end)` (pipe mode: `end` is `u64::MAX`).
    pub fn data_range(&self) -> (u64, u64) {
        self.data
    }
}

/// Random access to a whole file, for its metadata.
pub(crate) trait RandomAccess {
    fn len(&self) -> u64;
    /// `len` bytes at `offset`; the caller checked they are inside the file.
    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, PerfDataError>;
}

impl RandomAccess for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, PerfDataError> {
        let have = <[u8]>::len(self) as u64;
        let short =
            || PerfDataError::Truncated { what: "section", offset, need: len, have: have.saturating_sub(offset) };
        let start = usize::try_from(offset).map_err(|_| short())?;
        let end = offset.checked_add(len).and_then(|e| usize::try_from(e).ok()).ok_or_else(short)?;
        self.get(start..end).map(<[u8]>::to_vec).ok_or_else(short)
    }
}

/// A seekable reader and its length, read through a window: a read outside the window reads
/// the window there (16 KiB, or the read's length if larger; never past the file's end), so
/// the attrs and ids, and the feature table with the features after it, each cost one read
/// rather than a seek and a read per field.
pub(crate) struct Seekable<'r, R> {
    pub(crate) inner: &'r mut R,
    pub(crate) len: u64,
    /// The window's bytes, and the offset of its first.
    pub(crate) window: Vec<u8>,
    pub(crate) window_at: u64,
}

impl<'r, R> Seekable<'r, R> {
    /// `inner`, `len` bytes long.
    pub(crate) fn new(inner: &'r mut R, len: u64) -> Self {
        Seekable { inner, len, window: Vec::new(), window_at: 0 }
    }
}

/// The window's size (a read larger than it is read whole).
const WINDOW: u64 = 1 << 14;

impl<R: Read + Seek> RandomAccess for Seekable<'_, R> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, PerfDataError> {
        let end = offset.saturating_add(len);
        let in_window = |s: &Self| offset >= s.window_at && end <= s.window_at + s.window.len() as u64;
        if !in_window(self) {
            // The caller checked the bytes are inside the file: the window is bounded by it.
            let size = len.max(WINDOW).min(self.len.saturating_sub(offset)).max(len);
            let size = usize::try_from(size).map_err(|_| PerfDataError::Truncated {
                what: "section",
                offset,
                need: len,
                have: 0,
            })?;
            self.inner.seek(SeekFrom::Start(offset)).map_err(|error| PerfDataError::Io { offset, error })?;
            self.window.clear();
            self.window.resize(size, 0);
            let mut got = 0;
            while got < size {
                match self.inner.read(&mut self.window[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(error) => return Err(PerfDataError::Io { offset: offset + got as u64, error }),
                }
            }
            self.window.truncate(got);
            self.window_at = offset;
            if (got as u64) < len {
                return Err(PerfDataError::Truncated { what: "section", offset, need: len, have: got as u64 });
            }
        }
        let from = (offset - self.window_at) as usize;
        Ok(self.window[from..from + len as usize].to_vec())
    }
}

fn check_section(s: Section, at: u64, what: &'static str, file_size: u64) -> Result<(), PerfDataError> {
    match s.end() {
        Some(end) if end <= file_size => Ok(()),
        _ => Err(PerfDataError::SectionOutsideFile { what, at, offset: s.offset, size: s.size, file_size }),
    }
}

/// Largest `attr_size` accepted: a `perf_event_attr` of 4 KiB (the kernel's own bound is a
/// page) and its ids section.
const MAX_ATTR_SIZE: u64 = 4096 + SECTION_SIZE as u64;

/// The file-mode metadata of `file` (`header` already parsed).
pub(crate) fn read_file_meta(file: &mut impl RandomAccess, header: FileHeader) -> Result<Metadata, PerfDataError> {
    let mut meta = read_meta_before_data(file, header, false)?;
    read_features(file, &mut meta)?;
    Ok(meta)
}

/// The data section `[start, end)` as perf reads it: a `data.size` of 0 with no features
/// runs to the input's end (forward: the reader fills the size in there), with a warning.
fn data_section(
    header: &FileHeader,
    file_size: u64,
    forward: bool,
    warnings: &mut Vec<Warning>,
) -> Result<(u64, u64), PerfDataError> {
    check_section(header.data, 40, "data section", file_size)?;
    let data_start = header.data.offset;
    let mut data_end = data_start + header.data.size;
    if header.data.size == 0 {
        if file_size > data_start && header.feature_bits().next().is_none() {
            // Forward: the records run to the input's end, whose size the reader fills in there.
            warnings.push(Warning::DataSizeZero { assumed_size: if forward { 0 } else { file_size - data_start } });
            data_end = file_size;
        } else {
            warnings.push(Warning::EmptyDataSection);
        }
    }
    Ok((data_start, data_end))
}

/// The header, attrs and ids of a file-mode file; its features are left to [`read_features`].
/// `forward`: `file` holds the bytes before the data section only (a stream read forward), so
/// its length says nothing of the data section's.
pub(crate) fn read_meta_before_data(
    file: &mut impl RandomAccess,
    header: FileHeader,
    forward: bool,
) -> Result<Metadata, PerfDataError> {
    let endian = header.endian;
    let file_size = if forward { u64::MAX } else { file.len() };
    let mut warnings = Vec::new();
    let header = feature_bitmap_as_perf_reads_it(header, &mut warnings);
    check_section(header.attrs, 24, "attrs section", file_size)?;
    let (data_start, data_end) = data_section(&header, file_size, forward, &mut warnings)?;
    // Attrs (`header.c:perf_session__read_header`, `read_attr`): perf counts them with the
    // header's attr_size (attrs.size / attr_size) but reads them one after another, each by its
    // own `attr.size` (0 meaning 64) and then its 16-byte ids section. A file whose attr_size
    // disagrees with the attrs' sizes is read as perf reads it, with a warning.
    let attr_size = header.attr_size;
    if header.attrs.size > 0 && !(64 + SECTION_SIZE as u64..=MAX_ATTR_SIZE).contains(&attr_size) {
        return Err(PerfDataError::BadAttrSize { attr_size, section_size: header.attrs.size });
    }
    let n = if header.attrs.size == 0 { 0 } else { header.attrs.size / attr_size };
    let mut attrs: Vec<FileAttr> = Vec::new();
    let mut attr_offsets = Vec::new();
    let mut events = Events::new(endian);
    let mut at = header.attrs.offset;
    let mut id_sections = IdSections::new(file.len().max(header.data.end().unwrap_or(0)));
    for event in 0..n as usize {
        let first = file.read_at(at, 8)?;
        let raw_size = endian.u32([first[4], first[5], first[6], first[7]]);
        let size = if raw_size == 0 { 64 } else { raw_size };
        if !(64..=Attr::SIZE_VER8).contains(&size) {
            return Err(PerfDataError::UnsupportedAttrSize { event, offset: at + 4, attr_size: size });
        }
        let entry = u64::from(size) + SECTION_SIZE as u64;
        if entry != attr_size && !warnings.iter().any(|w| matches!(w, Warning::AttrSizeDiffers { .. })) {
            warnings.push(Warning::AttrSizeDiffers { event, attr_size, entry_size: entry, events: n });
        }
        let bytes = file.read_at(at, entry)?;
        let split = size as usize;
        let attr = Attr::from_bytes(&bytes[..split], endian).map_err(|error| PerfDataError::BadAttr {
            event,
            offset: at,
            error,
        })?;
        let ids_section = Section::parse(&bytes[split..], endian);
        check_section(ids_section, at + split as u64, "ids section", file_size)?;
        if ids_section.size % 8 != 0 {
            warnings.push(Warning::IdsNotMultipleOf8 { event, offset: ids_section.offset, size: ids_section.size });
        }
        let ids = id_sections.read(file, event, at + split as u64, ids_section, &attrs, endian)?;
        attrs.push(FileAttr { attr, ids });
        attr_offsets.push(at);
        at += entry;
    }
    if attrs.is_empty() {
        warnings.push(Warning::NoEvents);
    }
    register(&mut events, &attrs, &mut warnings)?;
    check_consistent(&events, &attrs, |event| attr_offsets.get(event).copied().unwrap_or(0))?;
    Ok(Metadata {
        header,
        attrs,
        features: Vec::new(),
        warnings,
        events,
        data: (data_start, data_end),
        deferred_features: forward && header.feature_bits().next().is_some(),
    })
}

/// The ids sections of a file's attrs. Sections may overlap (events sharing one array): each
/// is read once, and all of them together may list at most as many ids as the file has bytes,
/// so that a small file cannot make the reader hold and register a product of its sizes.
struct IdSections {
    /// The most ids the file may list: its size in bytes.
    budget: u64,
    /// Ids listed so far, each section counted as often as it is listed.
    listed: u64,
    /// `(offset, size)` of each section read, and the event whose attr listed it first.
    read: std::collections::HashMap<(u64, u64), usize>,
}

impl IdSections {
    fn new(budget: u64) -> IdSections {
        IdSections { budget, listed: 0, read: std::collections::HashMap::new() }
    }

    /// The ids of `event`'s `section` (its descriptor at `at`), read or copied from the
    /// event that listed the same section before.
    fn read(
        &mut self,
        file: &mut impl RandomAccess,
        event: usize,
        at: u64,
        section: Section,
        attrs: &[FileAttr],
        endian: Endian,
    ) -> Result<Vec<u64>, PerfDataError> {
        self.listed = self.listed.saturating_add(section.size / 8);
        if self.listed > self.budget {
            return Err(PerfDataError::TooManyIds { event, offset: at, ids: self.listed, file_size: self.budget });
        }
        let key = (section.offset, section.size / 8 * 8);
        if let Some(earlier) = self.read.get(&key).and_then(|&e| attrs.get(e)) {
            return Ok(earlier.ids.clone());
        }
        self.read.insert(key, event);
        let raw = file.read_at(key.0, key.1)?;
        Ok(raw.chunks_exact(8).map(|c| u64_of(c, 0, endian)).collect())
    }
}

/// What perf refuses in a file-mode file's events (`evlist__valid_sample_type`,
/// `evlist__valid_sample_id_all`, `evlist__valid_read_format`), as errors giving the file offset
/// of the field (`attr_at`: where event `i`'s attr starts). The reader checks a file with it,
/// the writer its attrs before writing them.
pub(crate) fn check_consistent(
    events: &Events,
    attrs: &[FileAttr],
    attr_at: impl Fn(usize) -> u64,
) -> Result<(), PerfDataError> {
    match events.consistency() {
        Some(EventSetError::SampleIdAllDiffers { event }) => {
            return Err(PerfDataError::SampleIdAllMismatch { event, offset: attr_at(event) + 40 })
        }
        Some(EventSetError::NoId { event } | EventSetError::IdPositionDiffers { event, .. }) => {
            let sample_type = attrs.get(event).map_or(0, |a| a.attr.sample_type);
            return Err(PerfDataError::NonMatchingSampleType { event, offset: attr_at(event) + 24, sample_type });
        }
        Some(_) | None => {}
    }
    // `evlist__valid_read_format`: PERF_SAMPLE_READ needs PERF_FORMAT_ID (the first event's).
    if let Some(first) = attrs.first() {
        let a = first.attr;
        if a.sample_type & perfring::record::sample_type::READ != 0
            && a.read_format & perfring::record::read_format::ID == 0
        {
            return Err(PerfDataError::NonMatchingReadFormat { offset: attr_at(0) + 32, read_format: a.read_format });
        }
    }
    Ok(())
}

/// `header` with its feature bitmap as perf reads it (`header.c:perf_file_header__read`): in a
/// file whose byte order is not this host's, a bitmap without HOSTNAME is taken for a 32-bit
/// host's (each u64's halves exchanged) if that one has HOSTNAME, and otherwise replaced by
/// BUILD_ID alone, with [`Warning::ForeignFeatureBitmap`]. (perf does the same to an empty
/// bitmap, then finds no BUILD_ID section where none was written; it is left empty here.)
fn feature_bitmap_as_perf_reads_it(mut header: FileHeader, warnings: &mut Vec<Warning>) -> FileHeader {
    let file = header.features;
    let has_hostname = |b: &[u64; 4]| b[0] & (1 << crate::features::HOSTNAME) != 0;
    if header.endian == Endian::NATIVE || file == [0; 4] || has_hostname(&file) {
        return header;
    }
    let mut as_32_bit = file.map(|w| w.rotate_left(32));
    as_32_bit[0] &= !1; // bit 0 is reserved
    let used = if has_hostname(&as_32_bit) { as_32_bit } else { [1 << crate::features::BUILD_ID, 0, 0, 0] };
    header.features = used;
    warnings.push(Warning::ForeignFeatureBitmap { file, used });
    header
}

/// The feature sections of a file-mode file: a table of sections at the end of the data
/// section, one per set bit (`perf_header__process_sections`).
pub(crate) fn read_features(file: &mut impl RandomAccess, meta: &mut Metadata) -> Result<(), PerfDataError> {
    let (header, warnings, features) = (&meta.header, &mut meta.warnings, &mut meta.features);
    let (endian, file_size) = (header.endian, file.len());
    let mut table = header.data.offset + header.data.size;
    for bit in header.feature_bits() {
        let entry = table.checked_add(SECTION_SIZE as u64).filter(|&e| e <= file_size);
        let Some(next) = entry else {
            warnings.push(Warning::FeatureOutsideFile { feature: bit, offset: table, size: SECTION_SIZE as u64 });
            break;
        };
        let s = Section::parse(&file.read_at(table, SECTION_SIZE as u64)?, endian);
        table = next;
        if !s.end().is_some_and(|e| e <= file_size) {
            warnings.push(Warning::FeatureOutsideFile { feature: bit, offset: s.offset, size: s.size });
            continue;
        }
        features.push((bit, file.read_at(s.offset, s.size)?));
    }
    Ok(())
}

/// The bytes of a file from `base` on (what follows the data section of a file read forward),
/// for its feature sections. A section before `base` cannot be read any more:
/// [`PerfDataError::NeedsSeekableInput`].
pub(crate) struct Tail {
    pub(crate) base: u64,
    pub(crate) bytes: Vec<u8>,
}

impl RandomAccess for Tail {
    fn len(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, PerfDataError> {
        let at = offset
            .checked_sub(self.base)
            .ok_or(PerfDataError::NeedsSeekableInput { what: "a feature section", offset })?;
        (&self.bytes[..]).read_at(at, len).map_err(|e| match e {
            PerfDataError::Truncated { what, need, have, .. } => PerfDataError::Truncated { what, offset, need, have },
            e => e,
        })
    }
}

/// The bytes of a file before its data section, read forward ([`crate::Reader::from_read`]):
/// a section that lies past them (perf writes none there) cannot be read from a stream.
pub(crate) struct Prefix {
    pub(crate) bytes: Vec<u8>,
}

impl RandomAccess for Prefix {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, PerfDataError> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len());
        match end {
            Some(_) => (&self.bytes[..]).read_at(offset, len),
            None => {
                Err(PerfDataError::NeedsSeekableInput { what: "an attr or ids section after the data section", offset })
            }
        }
    }
}

/// Register every event and id (later events win a duplicated id, with a warning).
pub(crate) fn register(
    events: &mut Events,
    attrs: &[FileAttr],
    warnings: &mut Vec<Warning>,
) -> Result<(), PerfDataError> {
    attrs.iter().try_for_each(|a| add_event(events, a, warnings))
}

/// Register one event and its ids. Ids listed again under another event are counted in one
/// [`Warning::DuplicateId`] for the whole file.
pub(crate) fn add_event(events: &mut Events, a: &FileAttr, warnings: &mut Vec<Warning>) -> Result<(), PerfDataError> {
    let event = events.add_event(&a.attr).map_err(PerfDataError::EventSet)?;
    let (mut count, mut first) = (0u64, None);
    for &id in &a.ids {
        if let Some(previous) = events.add_id(event, id).map_err(PerfDataError::EventSet)? {
            if previous != event {
                count += 1;
                first.get_or_insert((id, previous));
            }
        }
    }
    let Some((id, previous)) = first else { return Ok(()) };
    match events.duplicate_warning.and_then(|i| warnings.get_mut(i)) {
        Some(Warning::DuplicateId { count: total, .. }) => *total += count,
        _ => {
            events.duplicate_warning = Some(warnings.len());
            warnings.push(Warning::DuplicateId { count, id, previous, event });
        }
    }
    Ok(())
}

/// The metadata of a pipe-mode stream before its first record.
pub(crate) fn pipe_meta(endian: Endian) -> Metadata {
    Metadata {
        header: FileHeader::pipe(endian),
        attrs: Vec::new(),
        features: Vec::new(),
        warnings: Vec::new(),
        events: Events::new(endian),
        data: (crate::PIPE_HEADER_SIZE as u64, u64::MAX),
        deferred_features: false,
    }
}
