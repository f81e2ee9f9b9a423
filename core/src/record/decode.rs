//! [`Record`], every field of one record, and the complete decode that gives it
//! ([`EventRecord::decode`](super::EventRecord::decode) calls it with the record's event's
//! context).

use super::body::{self, Body};
use super::header::{type_name, types, Header};
use super::layout::SampleLayout;
use super::{
    Aux, AuxOutputHwId, BpfEvent, CallchainDeferred, Cgroup, Comm, DecodeContext, DecodeError, Endian, ItraceStart,
    Ksymbol, Lost, LostSamples, Mmap, Mmap2, Namespaces, ReadRecord, RecordRef, SampleId, SampleView, Switch,
    SwitchCpuWide, Task, TextPoke, Throttle,
};

/// One record, borrowing strings, arrays and raw data from the bytes it was decoded from. One
/// variant per record type of the uapi (and CALLCHAIN_DEFERRED); any other type (perf.data's
/// types ≥ 64 included) is [`Record::Unknown`], raw. A SAMPLE is its [`SampleView`], every
/// field checked to read (its values as a struct: [`SampleView::to_sample`]); the other types'
/// fields are values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Record<'a> {
    /// `PERF_RECORD_MMAP` (1).
    Mmap(Mmap<'a>),
    /// `PERF_RECORD_LOST` (2).
    Lost(Lost),
    /// `PERF_RECORD_COMM` (3).
    Comm(Comm<'a>),
    /// `PERF_RECORD_EXIT` (4).
    Exit(Task),
    /// `PERF_RECORD_THROTTLE` (5).
    Throttle(Throttle),
    /// `PERF_RECORD_UNTHROTTLE` (6).
    Unthrottle(Throttle),
    /// `PERF_RECORD_FORK` (7).
    Fork(Task),
    /// `PERF_RECORD_READ` (8).
    Read(ReadRecord<'a>),
    /// `PERF_RECORD_SAMPLE` (9): the view of its fields, every check of [`Sample`](super::Sample)'s decode
    /// made, so that each field reads (a field after RAW is still a `Result`, always `Ok`).
    Sample(SampleView<'a>),
    /// `PERF_RECORD_MMAP2` (10), either form of its union.
    Mmap2(Mmap2<'a>),
    /// `PERF_RECORD_AUX` (11).
    Aux(Aux),
    /// `PERF_RECORD_ITRACE_START` (12).
    ItraceStart(ItraceStart),
    /// `PERF_RECORD_LOST_SAMPLES` (13).
    LostSamples(LostSamples),
    /// `PERF_RECORD_SWITCH` (14).
    Switch(Switch),
    /// `PERF_RECORD_SWITCH_CPU_WIDE` (15).
    SwitchCpuWide(SwitchCpuWide),
    /// `PERF_RECORD_NAMESPACES` (16).
    Namespaces(Namespaces<'a>),
    /// `PERF_RECORD_KSYMBOL` (17).
    Ksymbol(Ksymbol<'a>),
    /// `PERF_RECORD_BPF_EVENT` (18).
    BpfEvent(BpfEvent),
    /// `PERF_RECORD_CGROUP` (19).
    Cgroup(Cgroup<'a>),
    /// `PERF_RECORD_TEXT_POKE` (20).
    TextPoke(TextPoke<'a>),
    /// `PERF_RECORD_AUX_OUTPUT_HW_ID` (21).
    AuxOutputHwId(AuxOutputHwId),
    /// `PERF_RECORD_CALLCHAIN_DEFERRED` (22, newest mainline).
    CallchainDeferred(CallchainDeferred<'a>),
    /// Any other type: the header as read and the bytes after it. The encoder writes them back
    /// as they are (with `header.size` recomputed).
    Unknown {
        /// The header.
        header: Header,
        /// Everything after the header.
        body: &'a [u8],
    },
}

/// Decode one record of the event of `layout`: its bytes, exactly the record with its header
/// (`header.size` must be their length), or a [`RawRecord`](super::RawRecord), whose header is
/// not parsed again. Never panics and never reads outside the record. A SAMPLE is its checked
/// view (a few words, not its fields copied: a `Record` is as large as MMAP2's fields); the
/// other types are decoded out of line.
#[inline(always)]
pub(crate) fn decode<'a, R: RecordRef<'a>>(record: R, layout: &'a SampleLayout) -> Result<Record<'a>, DecodeError> {
    let ctx = layout.context();
    let (header, bytes, endian) = header_of(record, ctx)?;
    if header.type_ == types::SAMPLE {
        let view = match SampleView::of(bytes, layout, endian) {
            Ok(view) => view,
            Err(e) => return Err(short_sample(bytes, header.misc, layout, endian, e)),
        };
        view.check()?;
        return Ok(Record::Sample(view));
    }
    decode_other(header, bytes, ctx, endian).map(Record::from)
}

/// The error of a SAMPLE shorter than its event's fixed fields, as the complete decode of its
/// values names it (the first field cut, at its offset), not the view's length check (`short`).
#[cold]
#[inline(never)]
fn short_sample(bytes: &[u8], misc: u16, layout: &SampleLayout, endian: Endian, short: DecodeError) -> DecodeError {
    let ctx = DecodeContext { endian, ..*layout.context() };
    // (`short` is not reached: a record shorter than the fixed fields has a field cut.)
    super::Sample::decode(bytes, misc, &ctx).err().unwrap_or(short)
}

/// [`decode`] of a record that is not a SAMPLE.
#[inline(always)]
fn decode_other<'a>(
    header: Header,
    bytes: &'a [u8],
    ctx: &DecodeContext,
    endian: Endian,
) -> Result<Other<'a>, DecodeError> {
    let m = header.misc;
    Ok(by_type!(Other, header, bytes, m, ctx, endian, |r| r))
}

/// The record's header (parsed now in `ctx.endian`, or as its reader parsed it), its bytes,
/// checked to be `header.size` long, and the byte order to read its fields in: the record's
/// own (an event's layout does not depend on it), `ctx`'s for bytes alone.
#[inline(always)]
fn header_of<'a, R: RecordRef<'a>>(record: R, ctx: &DecodeContext) -> Result<(Header, &'a [u8], Endian), DecodeError> {
    let bytes = record.record_bytes();
    let (header, endian) = match record.parsed() {
        Some(parsed) => parsed,
        None => (
            Header::parse(bytes, ctx.endian).ok_or(DecodeError::Truncated {
                field: "header",
                offset: 0,
                need: Header::SIZE,
                have: bytes.len(),
            })?,
            ctx.endian,
        ),
    };
    check_size(header, bytes)?;
    Ok((header, bytes, endian))
}

#[inline(always)]
fn check_size(header: Header, bytes: &[u8]) -> Result<(), DecodeError> {
    let size = usize::from(header.size);
    if size != bytes.len() || size < Header::SIZE {
        return Err(size_mismatch(size, bytes.len()));
    }
    Ok(())
}

#[cold]
fn size_mismatch(header_size: usize, len: usize) -> DecodeError {
    DecodeError::SizeMismatch { header_size, len }
}

/// The one table from record type to decoder of the types other than SAMPLE: `$k` receives
/// the decoded value, a `$E` (`Record`, or `Other`, its variants but SAMPLE).
macro_rules! by_type {
    ($E:ident, $header:expr, $bytes:expr, $m:expr, $ctx:expr, $endian:expr, |$r:ident| $k:expr) => {{
        let (bytes, m, ctx, endian) = ($bytes, $m, $ctx, $endian);
        match $header.type_ {
            types::MMAP => {
                let $r = $E::Mmap(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::LOST => {
                let $r = $E::Lost(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::COMM => {
                let $r = $E::Comm(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::EXIT => {
                let $r = $E::Exit(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::THROTTLE => {
                let $r = $E::Throttle(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::UNTHROTTLE => {
                let $r = $E::Unthrottle(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::FORK => {
                let $r = $E::Fork(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::READ => {
                let $r = $E::Read(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::MMAP2 => {
                let $r = $E::Mmap2(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::AUX => {
                let $r = $E::Aux(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::ITRACE_START => {
                let $r = $E::ItraceStart(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::LOST_SAMPLES => {
                let $r = $E::LostSamples(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::SWITCH => {
                let $r = $E::Switch(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::SWITCH_CPU_WIDE => {
                let $r = $E::SwitchCpuWide(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::NAMESPACES => {
                let $r = $E::Namespaces(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::KSYMBOL => {
                let $r = $E::Ksymbol(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::BPF_EVENT => {
                let $r = $E::BpfEvent(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::CGROUP => {
                let $r = $E::Cgroup(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::TEXT_POKE => {
                let $r = $E::TextPoke(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::AUX_OUTPUT_HW_ID => {
                let $r = $E::AuxOutputHwId(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            types::CALLCHAIN_DEFERRED => {
                let $r = $E::CallchainDeferred(body::decode(bytes, m, ctx, endian)?);
                $k
            }
            _ => {
                let $r = $E::Unknown { header: $header, body: bytes.get(Header::SIZE..).unwrap_or_default() };
                $k
            }
        }
    }};
}
use by_type;

/// Calls `$f` on the body struct of every typed non-SAMPLE variant; `$sample` for SAMPLE and
/// `$unknown` for Unknown.
macro_rules! dispatch {
    ($rec:expr, $b:ident => $f:expr, $s:ident => $sample:expr, $h:ident, $body:ident => $unknown:expr) => {
        match $rec {
            Record::Mmap($b) => $f,
            Record::Lost($b) => $f,
            Record::Comm($b) => $f,
            Record::Exit($b) | Record::Fork($b) => $f,
            Record::Throttle($b) | Record::Unthrottle($b) => $f,
            Record::Read($b) => $f,
            Record::Mmap2($b) => $f,
            Record::Aux($b) => $f,
            Record::ItraceStart($b) => $f,
            Record::LostSamples($b) => $f,
            Record::Switch($b) => $f,
            Record::SwitchCpuWide($b) => $f,
            Record::Namespaces($b) => $f,
            Record::Ksymbol($b) => $f,
            Record::BpfEvent($b) => $f,
            Record::Cgroup($b) => $f,
            Record::TextPoke($b) => $f,
            Record::AuxOutputHwId($b) => $f,
            Record::CallchainDeferred($b) => $f,
            Record::Sample($s) => $sample,
            Record::Unknown { header: $h, body: $body } => $unknown,
        }
    };
}
pub(crate) use dispatch;

/// [`Record`]'s variants but SAMPLE: what [`decode`] decodes out of line. Its size is the
/// largest of those (MMAP2's, a third of a SAMPLE's), so the value it returns and moves into
/// the caller's `Record` is that much smaller than a whole `Record` would be.
enum Other<'a> {
    Mmap(Mmap<'a>),
    Lost(Lost),
    Comm(Comm<'a>),
    Exit(Task),
    Throttle(Throttle),
    Unthrottle(Throttle),
    Fork(Task),
    Read(ReadRecord<'a>),
    Mmap2(Mmap2<'a>),
    Aux(Aux),
    ItraceStart(ItraceStart),
    LostSamples(LostSamples),
    Switch(Switch),
    SwitchCpuWide(SwitchCpuWide),
    Namespaces(Namespaces<'a>),
    Ksymbol(Ksymbol<'a>),
    BpfEvent(BpfEvent),
    Cgroup(Cgroup<'a>),
    TextPoke(TextPoke<'a>),
    AuxOutputHwId(AuxOutputHwId),
    CallchainDeferred(CallchainDeferred<'a>),
    Unknown { header: Header, body: &'a [u8] },
}

impl<'a> From<Other<'a>> for Record<'a> {
    #[inline(always)]
    fn from(other: Other<'a>) -> Record<'a> {
        match other {
            Other::Mmap(b) => Record::Mmap(b),
            Other::Lost(b) => Record::Lost(b),
            Other::Comm(b) => Record::Comm(b),
            Other::Exit(b) => Record::Exit(b),
            Other::Throttle(b) => Record::Throttle(b),
            Other::Unthrottle(b) => Record::Unthrottle(b),
            Other::Fork(b) => Record::Fork(b),
            Other::Read(b) => Record::Read(b),
            Other::Mmap2(b) => Record::Mmap2(b),
            Other::Aux(b) => Record::Aux(b),
            Other::ItraceStart(b) => Record::ItraceStart(b),
            Other::LostSamples(b) => Record::LostSamples(b),
            Other::Switch(b) => Record::Switch(b),
            Other::SwitchCpuWide(b) => Record::SwitchCpuWide(b),
            Other::Namespaces(b) => Record::Namespaces(b),
            Other::Ksymbol(b) => Record::Ksymbol(b),
            Other::BpfEvent(b) => Record::BpfEvent(b),
            Other::Cgroup(b) => Record::Cgroup(b),
            Other::TextPoke(b) => Record::TextPoke(b),
            Other::AuxOutputHwId(b) => Record::AuxOutputHwId(b),
            Other::CallchainDeferred(b) => Record::CallchainDeferred(b),
            Other::Unknown { header, body } => Record::Unknown { header, body },
        }
    }
}

impl<'a> Record<'a> {
    /// `header.type`.
    pub fn type_(&self) -> u32 {
        match self {
            Record::Mmap(_) => types::MMAP,
            Record::Lost(_) => types::LOST,
            Record::Comm(_) => types::COMM,
            Record::Exit(_) => types::EXIT,
            Record::Throttle(_) => types::THROTTLE,
            Record::Unthrottle(_) => types::UNTHROTTLE,
            Record::Fork(_) => types::FORK,
            Record::Read(_) => types::READ,
            Record::Sample(_) => types::SAMPLE,
            Record::Mmap2(_) => types::MMAP2,
            Record::Aux(_) => types::AUX,
            Record::ItraceStart(_) => types::ITRACE_START,
            Record::LostSamples(_) => types::LOST_SAMPLES,
            Record::Switch(_) => types::SWITCH,
            Record::SwitchCpuWide(_) => types::SWITCH_CPU_WIDE,
            Record::Namespaces(_) => types::NAMESPACES,
            Record::Ksymbol(_) => types::KSYMBOL,
            Record::BpfEvent(_) => types::BPF_EVENT,
            Record::Cgroup(_) => types::CGROUP,
            Record::TextPoke(_) => types::TEXT_POKE,
            Record::AuxOutputHwId(_) => types::AUX_OUTPUT_HW_ID,
            Record::CallchainDeferred(_) => types::CALLCHAIN_DEFERRED,
            Record::Unknown { header, .. } => header.type_,
        }
    }

    /// The uapi name of the type (`"PERF_RECORD_MMAP2"`), or `"unknown"`.
    pub fn name(&self) -> &'static str {
        type_name(self.type_())
    }

    /// `header.misc` as the encoder writes it.
    pub fn misc(&self) -> u16 {
        dispatch!(self, b => Body::misc(b), s => s.misc(), h, _body => h.misc)
    }

    /// The `sample_id` trailer (`None` for SAMPLE, Unknown, and without `sample_id_all`). Any
    /// record's time, id, cpu, pid and tid, a SAMPLE's fields or a trailer's alike, are its
    /// view's ([`EventRecord::view`](super::EventRecord::view)).
    pub fn sample_id(&self) -> Option<&SampleId> {
        dispatch!(self, b => Body::sample_id(b), _s => None, _h, _body => None)
    }
}
