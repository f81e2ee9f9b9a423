//! [`Writer`]: perf.data as `perf record` writes it, streamed: file mode to a
//! [`Write`] + [`Seek`] (perf's tools/perf/util/header.c), pipe mode to any [`Write`].
//!
//! File mode: the header goes first with `data.size = 0` and the attrs and ids after it, the
//! records as they arrive, and at [`Writer::finish`] the feature sections after the data and
//! the header again with the data size and the feature bitmap. A writer stopped before
//! `finish` leaves a file perf still reads: each FINISHED_ROUND brings the header's
//! `data.size` up to date (perf 6.1 reads nothing of a file whose `data.size` is still 0).
//!
//! Pipe mode: the 16-byte header, one HEADER_ATTR record per event, then records; a feature
//! is written as a HEADER_FEATURE record when it is set.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};

use perfring::record::{types, Attr, Encode, Endian, EventLayout, Header};

use crate::attribution::Events;
use crate::features::{self, Feature};
use crate::file_header::{u64_of, Mode};
use crate::metadata::{check_consistent, FileAttr};
use crate::{PerfDataError, HEADER_SIZE, MAGIC, PIPE_HEADER_SIZE, SECTION_SIZE};

/// Raw bytes gathered before one compressed frame is cut (perf: one ring's worth).
const COMPRESS_BATCH: usize = 256 << 10;
/// The COMPRESSED feature's `mmap_len`: room for one batch and a partial record.
const COMPRESS_MMAP_LEN: u32 = 512 << 10;
/// Largest payload of one COMPRESSED record.
#[cfg(feature = "zstd")]
const MAX_PAYLOAD: usize = u16::MAX as usize & !7;

/// `batch` (whole records, as a data section holds them) compressed with zstd at `level` into
/// one frame, as COMPRESSED (81) records of up to 64 KiB each, which perf 6.1 reads when the
/// file's COMPRESSED feature is set ([`Writer::compress`] sets it): what `perf record -z`
/// writes, and, in a perf.data directory (`--threads -z`), what each `data.N` file holds.
#[cfg(feature = "zstd")]
pub fn compressed_records(batch: &[u8], level: i32, endian: Endian) -> Result<Vec<u8>, PerfDataError> {
    let frame = zstd::bulk::compress(batch, level).map_err(io(0))?;
    let mut out = Vec::with_capacity(frame.len() + frame.len() / (MAX_PAYLOAD - 8) * 8 + 8);
    for chunk in frame.chunks(MAX_PAYLOAD - 8) {
        // (A chunk is at most MAX_PAYLOAD - 8 bytes: its size fits the u16.)
        let h = Header { type_: perfring::record::types::COMPRESSED, misc: 0, size: (8 + chunk.len()) as u16 };
        out.extend_from_slice(&h.to_bytes(endian));
        out.extend_from_slice(chunk);
    }
    Ok(out)
}

/// Writes a perf.data file or stream record by record.
///
/// Rules perf enforces that the caller keeps (perf's tools/perf/util/session.c and evlist.c): every attr has the same
/// `size` (≤ 128 for perf 6.1) and the same `sample_id_all`; with several events, each needs
/// ID or IDENTIFIER at the same position (IDENTIFIER in every `sample_type` is simplest), and
/// the ids given here must be the ids in the records.
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    endian: Endian,
    mode: Mode,
    attrs: Vec<FileAttr>,
    layouts: Vec<EventLayout>,
    data_offset: u64,
    data_size: u64,
    features: BTreeMap<u32, Vec<u8>>,
    compress: Option<i32>,
    batch: Vec<u8>,
    scratch: Vec<u8>,
    /// File mode: rewrites the header's `data.size` (at each FINISHED_ROUND).
    checkpoint: Option<Checkpoint<W>>,
}

/// Writes `data.size` (at offset 48 of the header) and returns to the end of the data.
type Checkpoint<W> = fn(&mut W, Endian, u64, u64) -> std::io::Result<()>;

fn checkpoint<W: Write + Seek>(out: &mut W, endian: Endian, data_size: u64, end: u64) -> std::io::Result<()> {
    out.seek(SeekFrom::Start(48))?;
    out.write_all(&endian.put_u64(data_size))?;
    out.seek(SeekFrom::Start(end))?;
    Ok(())
}

fn io(offset: u64) -> impl Fn(std::io::Error) -> PerfDataError {
    move |error| PerfDataError::Io { offset, error }
}

impl<W: Write + Seek> Writer<W> {
    /// Start a file-mode file at `out`'s current position 0: header (data size 0), attrs and
    /// their ids. Every attr has the same `size` (0 counts as 64, `Attr::SIZE_VER0`, and is
    /// written as 64), and no field set past it ([`PerfDataError::AttrFieldsPastSize`]). What perf
    /// refuses in a file's events is refused here, before anything is written, with the error
    /// [`crate::Reader`] gives for such a file (the offset is where the field would be):
    /// differing `sample_id_all` ([`PerfDataError::SampleIdAllMismatch`]), several events without ID or
    /// IDENTIFIER at one position ([`PerfDataError::NonMatchingSampleType`]), READ sampled without
    /// `PERF_FORMAT_ID` ([`PerfDataError::NonMatchingReadFormat`]). (Pipe mode, where perf only warns,
    /// takes them.)
    pub fn new(out: W, endian: Endian, attrs: Vec<FileAttr>) -> Result<Writer<W>, PerfDataError> {
        let attr_size = attr_size(&attrs, endian)?;
        let entry = u64::from(attr_size) + SECTION_SIZE as u64;
        // What perf (and this crate's reader) would refuse in the file, refused before writing.
        let mut events = Events::new(endian);
        for a in &attrs {
            events.add_event(&a.attr).map_err(PerfDataError::EventSet)?;
        }
        check_consistent(&events, &attrs, |event| HEADER_SIZE as u64 + event as u64 * entry)?;
        let attrs_size = attrs.len() as u64 * entry;
        let ids_off = HEADER_SIZE as u64 + attrs_size;
        let ids_total: u64 = attrs.iter().map(|a| 8 * a.ids.len() as u64).sum();
        let data_offset = ids_off + ids_total;
        let mut w = Writer::bare(out, endian, Mode::File, attrs, data_offset);
        w.checkpoint = Some(checkpoint::<W>);
        let head = w.file_header(entry, attrs_size, 0, [0; 4]);
        let mut body = Vec::with_capacity(data_offset as usize);
        body.extend_from_slice(&head);
        let mut ids_at = ids_off;
        for a in &w.attrs {
            let mut bytes = vec![0u8; attr_size as usize];
            Attr { size: attr_size, ..a.attr }.to_bytes(endian, &mut bytes)?;
            body.extend_from_slice(&bytes);
            body.extend_from_slice(&endian.put_u64(ids_at));
            body.extend_from_slice(&endian.put_u64(8 * a.ids.len() as u64));
            ids_at += 8 * a.ids.len() as u64;
        }
        for a in &w.attrs {
            a.ids.iter().for_each(|id| body.extend_from_slice(&endian.put_u64(*id)));
        }
        w.out.seek(SeekFrom::Start(0)).map_err(io(0))?;
        w.out.write_all(&body).map_err(io(0))?;
        Ok(w)
    }

    /// Flush pending compressed records, write the feature sections after the data and
    /// complete the header; returns the output. A file whose byte order is not this host's
    /// gets a HOSTNAME feature (an empty string) if it was given none: perf on a host of
    /// this order ignores the features of a file of the other order without HOSTNAME
    /// ([`crate::Warning::ForeignFeatureBitmap`]), COMPRESSED included.
    pub fn finish(mut self) -> Result<W, PerfDataError> {
        if self.mode == Mode::Pipe {
            return self.finish_pipe();
        }
        self.flush_batch()?;
        if let Some(level) = self.compress {
            let f = compressed_feature(level);
            self.features.insert(features::COMPRESSED, f.encode(self.endian)?);
        }
        if self.endian != Endian::NATIVE && !self.features.contains_key(&features::HOSTNAME) {
            // perf reading a file of the other byte order keeps its feature bitmap only if
            // HOSTNAME is set (Warning::ForeignFeatureBitmap): an empty one keeps them all.
            self.features.insert(features::HOSTNAME, features::encode_string("", self.endian));
        }
        let e = self.endian;
        let table = self.data_offset + self.data_size;
        let mut tail = Vec::new();
        let mut payload_at = table + (self.features.len() * SECTION_SIZE) as u64;
        for p in self.features.values() {
            tail.extend_from_slice(&e.put_u64(payload_at));
            tail.extend_from_slice(&e.put_u64(p.len() as u64));
            payload_at += p.len() as u64;
        }
        for p in self.features.values() {
            tail.extend_from_slice(p);
        }
        self.out.seek(SeekFrom::Start(table)).map_err(io(table))?;
        self.out.write_all(&tail).map_err(io(table))?;
        let mut bitmap = [0u64; 4];
        for &bit in self.features.keys() {
            bitmap[bit as usize / 64] |= 1 << (bit % 64);
        }
        let attr_size = attr_size(&self.attrs, self.endian)?;
        let entry = u64::from(attr_size) + SECTION_SIZE as u64;
        let head = self.file_header(entry, self.attrs.len() as u64 * entry, self.data_size, bitmap);
        self.out.seek(SeekFrom::Start(0)).map_err(io(0))?;
        self.out.write_all(&head).map_err(io(0))?;
        self.out.seek(SeekFrom::Start(payload_at)).map_err(io(payload_at))?;
        self.out.flush().map_err(io(payload_at))?;
        Ok(self.out)
    }
}

/// The one `attr.size` of a file's attrs ([`written_size`] of each, which must agree).
fn attr_size(attrs: &[FileAttr], endian: Endian) -> Result<u32, PerfDataError> {
    let mut size = None;
    for (event, a) in attrs.iter().enumerate() {
        let this = written_size(event, &a.attr, endian)?;
        if *size.get_or_insert(this) != this {
            return Err(PerfDataError::MixedAttrSizes { event });
        }
    }
    Ok(size.unwrap_or(Attr::SIZE_VER7))
}

/// The size event `event`'s attr is written with: its `size`, 0 counting as 64
/// (`PERF_ATTR_SIZE_VER0`) as [`Attr`] documents it and perf reads it. A field set past that
/// size, which the file would drop, is [`PerfDataError::AttrFieldsPastSize`].
fn written_size(event: usize, attr: &Attr, endian: Endian) -> Result<u32, PerfDataError> {
    let size = if attr.size == 0 { Attr::SIZE_VER0 } else { attr.size };
    let kept = |size: u32| {
        let a = Attr { size, ..*attr };
        let mut b = [0u8; Attr::SIZE_VER8 as usize];
        let back = a.to_bytes(endian, &mut b).ok().and_then(|n| Attr::from_bytes(&b[..n], endian).ok());
        back == Some(a)
    };
    // A size the encoder refuses is its error; one that drops a field, the smallest that keeps
    // them all.
    Attr { size, ..*attr }.to_bytes(endian, &mut [0u8; Attr::SIZE_VER8 as usize])?;
    if !kept(size) {
        if let Some(need) = (size..=Attr::SIZE_VER8).step_by(8).find(|&s| kept(s)) {
            return Err(PerfDataError::AttrFieldsPastSize { event, size: attr.size, need });
        }
    }
    Ok(size)
}

/// The header of `record` if it is one whole record and `trailing` the data it says follows it
/// ([`Writer::write_raw`]).
fn check_raw(record: &[u8], trailing: &[u8], endian: Endian) -> Result<Header, PerfDataError> {
    let bad = |type_, field, value: usize, expected: usize| PerfDataError::BadRawRecord {
        type_,
        field,
        value: value as u64,
        expected: expected as u64,
    };
    let header = Header::parse(record, endian).ok_or_else(|| bad(0, "record length", record.len(), Header::SIZE))?;
    let (type_, size) = (header.type_, usize::from(header.size));
    if size != record.len() {
        return Err(bad(type_, "header.size", size, record.len()));
    }
    if type_ < types::HEADER_ATTR && size % 8 != 0 {
        return Err(bad(type_, "header.size % 8", size % 8, 0));
    }
    // The data after the record: as many bytes as its size field says (perf reads exactly those).
    let said = match type_ {
        types::AUXTRACE | types::HEADER_TRACING_DATA if size < 16 => {
            return Err(bad(type_, "header.size", size, 16));
        }
        types::AUXTRACE => Some(("auxtrace.size", u64_of(record, 8, endian))),
        types::HEADER_TRACING_DATA => {
            Some(("tracing_data.size", u64::from(endian.u32([record[8], record[9], record[10], record[11]]))))
        }
        _ => None,
    };
    match said {
        Some((field, n)) if n != trailing.len() as u64 => {
            Err(PerfDataError::BadRawRecord { type_, field, value: n, expected: trailing.len() as u64 })
        }
        None if !trailing.is_empty() => Err(bad(type_, "trailing length", trailing.len(), 0)),
        _ => Ok(header),
    }
}

fn compressed_feature(level: i32) -> Feature {
    Feature::Compressed { version: 1, type_: 1, level: level as u32, ratio: 1, mmap_len: COMPRESS_MMAP_LEN }
}

impl<W: Write> Writer<W> {
    fn bare(out: W, endian: Endian, mode: Mode, attrs: Vec<FileAttr>, data_offset: u64) -> Writer<W> {
        let layouts = attrs.iter().map(|a| EventLayout::new(&a.attr, endian)).collect();
        Writer {
            out,
            endian,
            mode,
            attrs,
            layouts,
            data_offset,
            data_size: 0,
            features: BTreeMap::new(),
            compress: None,
            batch: Vec::new(),
            scratch: Vec::new(),
            checkpoint: None,
        }
    }

    fn file_header(&self, entry: u64, attrs_size: u64, data_size: u64, bitmap: [u64; 4]) -> Vec<u8> {
        let e = self.endian;
        let mut f = Vec::with_capacity(HEADER_SIZE);
        for v in [MAGIC, HEADER_SIZE as u64, entry, HEADER_SIZE as u64, attrs_size, self.data_offset, data_size, 0, 0] {
            f.extend_from_slice(&e.put_u64(v));
        }
        bitmap.iter().for_each(|w| f.extend_from_slice(&e.put_u64(*w)));
        f
    }

    /// Start a pipe-mode stream (`perf record -o -`): the 16-byte header and one HEADER_ATTR
    /// record per event. An attr's `size` of 0 counts as 64; no field may be set past its size
    /// ([`PerfDataError::AttrFieldsPastSize`]). An attr smaller than 128 bytes (`Attr::SIZE_VER7`) is
    /// written as 128, as `perf record` writes it: perf 6.1 takes a HEADER_ATTR's ids to start
    /// 128 bytes into it, whatever its `attr.size` (a 64-byte attr's ids were read as its
    /// `config2`).
    pub fn pipe(out: W, endian: Endian, attrs: Vec<FileAttr>) -> Result<Writer<W>, PerfDataError> {
        let mut w = Writer::bare(out, endian, Mode::Pipe, attrs, PIPE_HEADER_SIZE as u64);
        let mut head = endian.put_u64(MAGIC).to_vec();
        head.extend_from_slice(&endian.put_u64(PIPE_HEADER_SIZE as u64));
        w.out.write_all(&head).map_err(io(0))?;
        for i in 0..w.attrs.len() {
            let a = &w.attrs[i];
            // perf (6.1) reads a HEADER_ATTR's ids after its own `sizeof(perf_event_attr)`, 128
            // bytes, whatever attr.size says (`perf_event__process_attr`), and writes its attrs
            // that size: a smaller attr is written as 128 bytes, the fields past it zero.
            let size = written_size(i, &a.attr, endian)?.max(Attr::SIZE_VER7);
            let mut body = vec![0u8; size as usize];
            Attr { size, ..a.attr }.to_bytes(endian, &mut body)?;
            a.ids.iter().for_each(|id| body.extend_from_slice(&endian.put_u64(*id)));
            w.emit(types::HEADER_ATTR, &body)?;
        }
        Ok(w)
    }

    /// Compress the records written from now on into COMPRESSED (81) records with zstd at
    /// `level` (perf 6.1 reads type 81; it cannot read 83). Pipe mode: writes the COMPRESSED
    /// feature at once, as perf needs it before the first compressed record. Records are
    /// gathered up to 256 KiB per zstd frame and written at the next FINISHED_ROUND, `finish`,
    /// full batch or AUXTRACE/HEADER_TRACING_DATA record (written uncompressed, see
    /// [`Writer::write_raw`]): a writer dropped before either loses the records of its last
    /// batch.
    #[cfg(feature = "zstd")]
    pub fn compress(&mut self, level: i32) -> Result<(), PerfDataError> {
        self.compress = Some(level);
        if self.mode == Mode::Pipe {
            self.set_feature(features::COMPRESSED, &compressed_feature(level))?;
        }
        Ok(())
    }

    /// Flush the output (what a buffered output holds reaches the file): an output that
    /// cannot be written (`/dev/full`, a full disk) fails here rather than later.
    pub fn flush(&mut self) -> Result<(), PerfDataError> {
        let at = self.data_offset + self.data_size;
        self.out.flush().map_err(io(at))
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// The events.
    pub fn attrs(&self) -> &[FileAttr] {
        &self.attrs
    }

    /// File offset of the data section.
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Bytes written to the data section so far (compressed records: as compressed).
    pub fn data_size(&self) -> u64 {
        self.data_size
    }

    /// Set a feature (file mode: written at [`Writer::finish`]; pipe mode: written now as a
    /// HEADER_FEATURE record). `value` must be the variant [`Feature::parse`] gives for `bit`
    /// (a [`Feature::String`] for HOSTNAME, [`Feature::NrCpus`] for NRCPUS, …;
    /// [`Feature::Bytes`] for a bit this crate does not type), or it is
    /// [`PerfDataError::FeatureMismatch`]: its bytes would be read as the bit's layout (perf printed a
    /// string under NRCPUS as "nrcpus online : 1920298854"). [`Writer::set_feature_bytes`]
    /// takes encoded bytes for any bit.
    pub fn set_feature(&mut self, bit: u32, value: &Feature) -> Result<(), PerfDataError> {
        let expected = features::variant_of_bit(bit);
        if value.variant() != expected {
            return Err(PerfDataError::FeatureMismatch {
                feature: bit,
                name: features::name(bit).unwrap_or("unnamed"),
                expected,
                given: value.variant(),
            });
        }
        let payload = value.encode(self.endian)?;
        self.set_feature_bytes(bit, payload)
    }

    /// Set a feature from its encoded payload (for features this crate does not type).
    pub fn set_feature_bytes(&mut self, bit: u32, payload: Vec<u8>) -> Result<(), PerfDataError> {
        if !(1..features::BITS).contains(&bit) {
            return Err(PerfDataError::BadFeature { feature: bit, offset: 0, field: "feature bit" });
        }
        if self.mode == Mode::Pipe && bit == features::TRACING_DATA {
            // perf takes tracing data in pipe mode only as a HEADER_TRACING_DATA record:
            // `{header; u32 size; u32 pad}` and `size` bytes (padded to 8) after it.
            let padded = payload.len().next_multiple_of(8);
            let size = u32::try_from(padded).map_err(|_| PerfDataError::BadFeature {
                feature: bit,
                offset: 0,
                field: "size",
            })?;
            let mut body = self.endian.put_u32(size).to_vec();
            body.extend_from_slice(&[0; 4]);
            self.emit(types::HEADER_TRACING_DATA, &body)?;
            let mut data = payload;
            data.resize(padded, 0);
            return self.put(&data);
        }
        if self.mode == Mode::Pipe {
            let mut body = self.endian.put_u64(u64::from(bit)).to_vec();
            body.extend_from_slice(&payload);
            return self.emit(types::HEADER_FEATURE, &body);
        }
        self.features.insert(bit, payload);
        Ok(())
    }

    /// Encode `record` (a [`Record`](perfring::record::Record), or a `Sample` built from values) with event `event`'s
    /// layout and write it.
    pub fn write_record<R: Encode + ?Sized>(&mut self, record: &R, event: usize) -> Result<(), PerfDataError> {
        let layout = self.layouts.get(event).ok_or(PerfDataError::NoSuchEvent(event))?;
        let size = record.encoded_size(layout)?;
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        scratch.resize(size, 0);
        let r = record
            .encode(layout, &mut scratch)
            .map_err(PerfDataError::from)
            .and_then(|_| self.write_raw(&scratch, &[]));
        self.scratch = scratch;
        r
    }

    /// Write an already encoded record (as a [`crate::Reader`] yields it) and the data that
    /// follows it (AUXTRACE, TRACING_DATA; empty otherwise).
    ///
    /// `record` must be one whole record, as perf reads them: at least its 8-byte header,
    /// `header.size` equal to its length, and, for a kernel record (type below 64), a multiple
    /// of 8 as the ring's records are; `trailing` must be empty, or be the data an AUXTRACE
    /// (`auxtrace.size`) or HEADER_TRACING_DATA (`size`) record says follows it. Anything else
    /// is [`PerfDataError::BadRawRecord`], and nothing is written.
    ///
    /// A compressing writer ([`Writer::compress`]) writes an AUXTRACE or HEADER_TRACING_DATA
    /// record and its data uncompressed, after the records gathered before it (flushed first),
    /// as `perf record -z` does: perf reads their data from the file, never from a COMPRESSED
    /// record.
    pub fn write_raw(&mut self, record: &[u8], trailing: &[u8]) -> Result<(), PerfDataError> {
        let header = check_raw(record, trailing, self.endian)?;
        if matches!(header.type_, types::AUXTRACE | types::HEADER_TRACING_DATA) {
            self.flush_batch()?;
        } else if self.compress.is_some() {
            if self.batch.len() + record.len() + trailing.len() > COMPRESS_BATCH {
                self.flush_batch()?;
            }
            self.batch.extend_from_slice(record);
            self.batch.extend_from_slice(trailing);
            return Ok(());
        }
        self.put(record)?;
        self.put(trailing)
    }

    /// Write a FINISHED_ROUND (68): perf may sort and deliver everything before it. Pending
    /// compressed records are flushed first (perf writes the round marker uncompressed). The
    /// header's `data.size` is not rewritten here: [`Writer::checkpoint`] does that (a seek,
    /// which empties a buffered output), so a writer that rounds on every read of its rings
    /// checkpoints as often as it wants a file stopped before [`Writer::finish`] to be read up
    /// to there (perf 6.1 reads nothing of a file whose `data.size` is 0).
    pub fn finished_round(&mut self) -> Result<(), PerfDataError> {
        self.flush_batch()?;
        self.emit(types::FINISHED_ROUND, &[])
    }

    /// File mode: write the header's `data.size` as it is now (what a writer stopped before
    /// [`Writer::finish`] leaves perf to read: the records up to here); pipe mode: nothing.
    /// Pending compressed records are not included until a round or `finish` writes them.
    pub fn checkpoint(&mut self) -> Result<(), PerfDataError> {
        if let Some(update) = self.checkpoint {
            let end = self.data_offset + self.data_size;
            update(&mut self.out, self.endian, self.data_size, end).map_err(io(48))?;
        }
        Ok(())
    }

    /// Finish a pipe-mode stream (flush pending compressed records); returns the output.
    pub fn finish_pipe(mut self) -> Result<W, PerfDataError> {
        self.flush_batch()?;
        self.out.flush().map_err(io(self.data_offset + self.data_size))?;
        Ok(self.out)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), PerfDataError> {
        let at = self.data_offset + self.data_size;
        self.out.write_all(bytes).map_err(io(at))?;
        self.data_size += bytes.len() as u64;
        Ok(())
    }

    /// A perf-only record: the header from the record encoder's [`Header`], then `body`.
    fn emit(&mut self, type_: u32, body: &[u8]) -> Result<(), PerfDataError> {
        let size = u16::try_from(8 + body.len()).map_err(|_| {
            PerfDataError::Encode(perfring::record::EncodeError::InvalidValue {
                field: "header.size",
                value: 8 + body.len() as u64,
            })
        })?;
        let h = Header { type_, misc: 0, size };
        self.put(&h.to_bytes(self.endian))?;
        self.put(body)
    }

    #[cfg(feature = "zstd")]
    fn flush_batch(&mut self) -> Result<(), PerfDataError> {
        let Some(level) = self.compress else { return Ok(()) };
        if self.batch.is_empty() {
            return Ok(());
        }
        let at = self.data_offset + self.data_size;
        let records = compressed_records(&self.batch, level, self.endian).map_err(|e| match e {
            PerfDataError::Io { error, .. } => io(at)(error),
            other => other,
        })?;
        self.batch.clear();
        self.put(&records)
    }

    #[cfg(not(feature = "zstd"))]
    fn flush_batch(&mut self) -> Result<(), PerfDataError> {
        Ok(())
    }
}
