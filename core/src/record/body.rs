//! The codec shared by every non-SAMPLE record: body fields from the start, the `sample_id`
//! trailer from the end (its position is fixed relative to `header.size`, as perf reads it).

use super::cursor::{Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, Endian, SampleId};

/// A non-SAMPLE record body. `decode` reads the fields after the header from a reader that stops
/// where the trailer starts; the caller then checks that nothing is left.
pub(crate) trait Body<'a>: Sized {
    /// The uapi name, for errors.
    const NAME: &'static str;
    /// Decode the body; `misc` and the already-decoded trailer go into the value.
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        ctx: &DecodeContext,
    ) -> Result<Self, DecodeError>;
    /// Body size (between header and trailer), after checking the fields.
    fn body_size(&self, ctx: &DecodeContext) -> Result<usize, EncodeError>;
    /// Write the body.
    fn encode_body(&self, w: &mut Writer<'_>);
    /// `header.misc` to write.
    fn misc(&self) -> u16;
    /// The trailer.
    fn sample_id(&self) -> Option<&SampleId>;
}

/// Decode a non-SAMPLE record: trailer (if `sample_id_all`) from the end, body from offset 8,
/// and nothing left over.
pub(crate) fn decode<'a, T: Body<'a>>(
    bytes: &'a [u8],
    misc: u16,
    ctx: &DecodeContext,
    endian: Endian,
) -> Result<T, DecodeError> {
    let len = bytes.len();
    let body_len = len.saturating_sub(8);
    let (end, sample_id) = match ctx.trailer_type() {
        Some(st) => {
            let n = SampleId::size(st);
            if n > body_len {
                let e = DecodeError::Truncated { field: "sample_id", offset: 8, need: n, have: body_len };
                return Err(missing_trailer_or::<T>(e, n, bytes, misc, ctx, endian));
            }
            let start = len - n;
            let sid = SampleId::from_trailer(bytes.get(start..).unwrap_or_default(), st, endian);
            (start, Some(sid))
        }
        None => (len, None),
    };
    let mut r = Reader::new(bytes, 8, end, endian);
    let rec = T::decode(&mut r, misc, sample_id, ctx)
        .map_err(|e| missing_trailer_or::<T>(e, len - end, bytes, misc, ctx, endian))?;
    if r.remaining() != 0 {
        return Err(DecodeError::TrailingBytes { record: T::NAME, offset: r.offset(), extra: r.remaining() });
    }
    Ok(rec)
}

/// The error of a decode that took a `trailer`-byte `sample_id` trailer from the end: `error`,
/// or [`DecodeError::MissingSampleId`] if `bytes` are exactly a `T` without one (its writer
/// wrote none). Out of line: only a failed decode asks.
#[cold]
#[inline(never)]
fn missing_trailer_or<'a, T: Body<'a>>(
    error: DecodeError,
    trailer: usize,
    bytes: &'a [u8],
    misc: u16,
    ctx: &DecodeContext,
    endian: Endian,
) -> DecodeError {
    let mut r = Reader::new(bytes, 8, bytes.len(), endian);
    if trailer != 0 && T::decode(&mut r, misc, None, ctx).is_ok() && r.remaining() == 0 {
        DecodeError::MissingSampleId { record: T::NAME, trailer }
    } else {
        error
    }
}

/// Whole-record size: header, body, trailer; checks the trailer against the context.
pub(crate) fn size<'a, T: Body<'a>>(rec: &T, ctx: &DecodeContext) -> Result<usize, EncodeError> {
    let trailer = match (ctx.trailer_type(), rec.sample_id()) {
        (Some(st), Some(_)) => SampleId::size(st),
        (None, None) => 0,
        (want, _) => return Err(EncodeError::FieldMismatch { field: "sample_id", expected: want.is_some() }),
    };
    rec.body_size(ctx)?.checked_add(8 + trailer).ok_or(EncodeError::TooLarge { size: usize::MAX })
}

/// Write body and trailer after the header.
pub(crate) fn encode_rest<'a, T: Body<'a>>(rec: &T, ctx: &DecodeContext, w: &mut Writer<'_>) {
    rec.encode_body(w);
    if let (Some(st), Some(sid)) = (ctx.trailer_type(), rec.sample_id()) {
        let mut buf = [0u8; 48];
        let n = sid.encode(st, ctx.endian, &mut buf).unwrap_or(0);
        w.put(buf.get(..n).unwrap_or_default());
    }
}

/// Implements the `misc` and `sample_id` accessors of [`Body`] for a struct with fields of
/// those names.
macro_rules! common_fields {
    () => {
        fn misc(&self) -> u16 {
            self.misc
        }
        fn sample_id(&self) -> Option<&$crate::record::SampleId> {
            self.sample_id.as_ref()
        }
    };
}
pub(crate) use common_fields;
