//! The encoder: [`Encode`], for a [`Record`] and for a [`Sample`] built from values, the
//! inverse of [`decode`](super::decode).

use super::body;
use super::cursor::Writer;
use super::decode::dispatch;
use super::{DecodeContext, EncodeError, EventLayout, Header, Record, Sample};

/// What the encoder writes: a [`Record`] (any type; a SAMPLE's view is written as its
/// [`Sample`]) or a [`Sample`] built from values. One pair of methods for both, so that a
/// writer (a perf.data file's, a ring's) takes either.
pub trait Encode {
    /// Size of the record encoded for the event of `layout`, header included, after checking
    /// that every field agrees with its attr (optional fields present exactly when its
    /// `sample_type` and `read_format` have them, array lengths matching the masks, the trailer
    /// present exactly with `sample_id_all`). A SAMPLE's view is decoded to its [`Sample`]
    /// first ([`EncodeError::Unreadable`] if it does not decode).
    fn encoded_size(&self, layout: &EventLayout) -> Result<usize, EncodeError>;

    /// Encode into the start of `out` (which must hold [`encoded_size`](Encode::encoded_size)
    /// bytes) in the byte order of `layout`, with `header.size` set; returns the size. Strings
    /// are NUL-terminated and zero-padded to 8, RAW/STACK_USER/AUX data and TEXT_POKE bytes
    /// zero-padded as the kernel pads them. Nothing is written when the fields disagree with
    /// the event's attr or `out` is too short.
    fn encode(&self, layout: &EventLayout, out: &mut [u8]) -> Result<usize, EncodeError>;
}

impl Encode for Record<'_> {
    fn encoded_size(&self, layout: &EventLayout) -> Result<usize, EncodeError> {
        self.encoded_size_in(layout.context())
    }

    fn encode(&self, layout: &EventLayout, out: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_in(layout.context(), out)
    }
}

impl Record<'_> {
    /// [`Encode::encoded_size`] with the layout's context.
    pub(crate) fn encoded_size_in(&self, ctx: &DecodeContext) -> Result<usize, EncodeError> {
        let size = dispatch!(
            self,
            b => body::size(b, ctx)?,
            s => return s.to_sample().map_err(EncodeError::Unreadable)?.encoded_size_in(ctx),
            _h, body => body.len().saturating_add(Header::SIZE)
        );
        fits(size)
    }

    /// [`Encode::encode`] with the layout's context.
    pub(crate) fn encode_in(&self, ctx: &DecodeContext, out: &mut [u8]) -> Result<usize, EncodeError> {
        if let Record::Sample(view) = self {
            return view.to_sample().map_err(EncodeError::Unreadable)?.encode_in(ctx, out);
        }
        let size = self.encoded_size_in(ctx)?;
        let header = Header { type_: self.type_(), misc: self.misc(), size: size as u16 };
        write(
            header,
            ctx,
            out,
            |w| dispatch!(self, b => body::encode_rest(b, ctx, w), _s => {}, _h, body => w.put(body)),
        )
    }
}

impl Encode for Sample<'_> {
    fn encoded_size(&self, layout: &EventLayout) -> Result<usize, EncodeError> {
        self.encoded_size_in(layout.context())
    }

    fn encode(&self, layout: &EventLayout, out: &mut [u8]) -> Result<usize, EncodeError> {
        self.encode_in(layout.context(), out)
    }
}

impl Sample<'_> {
    /// [`Encode::encoded_size`] with the layout's context.
    pub(crate) fn encoded_size_in(&self, ctx: &DecodeContext) -> Result<usize, EncodeError> {
        fits(self.body_size(ctx)?.saturating_add(Header::SIZE))
    }

    /// [`Encode::encode`] with the layout's context.
    pub(crate) fn encode_in(&self, ctx: &DecodeContext, out: &mut [u8]) -> Result<usize, EncodeError> {
        let size = self.encoded_size_in(ctx)?;
        let header = Header { type_: super::header::types::SAMPLE, misc: self.misc, size: size as u16 };
        write(header, ctx, out, |w| self.encode_body(w))
    }
}

/// Encode one non-SAMPLE body type without going through [`Record`]: what the producer's LOST
/// and AUX records use, so that a firmware image links this body's code only, not the whole
/// encoder's dispatch over every record type.
pub(crate) fn encode_body<'a, T: body::Body<'a>>(
    type_: u32,
    rec: &T,
    ctx: &DecodeContext,
    out: &mut [u8],
) -> Result<usize, EncodeError> {
    let size = fits(body::size(rec, ctx)?)?;
    let header = Header { type_, misc: rec.misc(), size: size as u16 };
    write(header, ctx, out, |w| body::encode_rest(rec, ctx, w))
}

/// `size` (header included), if `header.size` can say it; else [`EncodeError::TooLarge`].
fn fits(size: usize) -> Result<usize, EncodeError> {
    if size > usize::from(u16::MAX) {
        return Err(EncodeError::TooLarge { size });
    }
    Ok(size)
}

/// Write `header` then `rest` into the first `header.size` bytes of `out`.
fn write(
    header: Header,
    ctx: &DecodeContext,
    out: &mut [u8],
    rest: impl FnOnce(&mut Writer<'_>),
) -> Result<usize, EncodeError> {
    let size = usize::from(header.size);
    let have = out.len();
    let out = out.get_mut(..size).ok_or(EncodeError::BufferTooSmall { need: size, have })?;
    let mut w = Writer::new(out, ctx.endian);
    w.put(&header.to_bytes(ctx.endian));
    rest(&mut w);
    match w.finish() {
        Some(n) if n == size => Ok(size),
        // The size computation and the writes disagree: a bug in this module.
        other => {
            debug_assert!(false, "encoder wrote {other:?} bytes of {size}");
            Err(EncodeError::BufferTooSmall { need: other.unwrap_or(usize::MAX), have: size })
        }
    }
}
