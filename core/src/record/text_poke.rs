//! `PERF_RECORD_TEXT_POKE` (20): kernel text was modified (`perf_event_text_poke_output`).

use super::body::{common_fields, Body};
use super::cursor::{pad8, Reader, Writer};
use super::{DecodeContext, DecodeError, EncodeError, SampleId};

/// `{u64 addr; u16 old_len; u16 new_len; u8 bytes[old_len + new_len]; zero padding}` +
/// `sample_id`, padded so that `4 + old_len + new_len + padding` is a multiple of 8. The decoder
/// requires exactly that padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPoke<'a> {
    /// `header.misc` (the kernel writes `KERNEL`).
    pub misc: u16,
    /// Address of the change.
    pub addr: u64,
    /// The bytes before.
    pub old_bytes: &'a [u8],
    /// The bytes after.
    pub new_bytes: &'a [u8],
    /// The trailer (with `sample_id_all`).
    pub sample_id: Option<SampleId>,
}

impl<'a> Body<'a> for TextPoke<'a> {
    const NAME: &'static str = "PERF_RECORD_TEXT_POKE";
    fn decode(
        r: &mut Reader<'a>,
        misc: u16,
        sample_id: Option<SampleId>,
        _: &DecodeContext,
    ) -> Result<Self, DecodeError> {
        let addr = r.u64("text_poke.addr")?;
        let old_len = r.u16("text_poke.old_len")?;
        let new_len = r.u16("text_poke.new_len")?;
        let old_bytes = r.take_counted(u64::from(old_len), "text_poke.old_len")?;
        let new_bytes = r.take_counted(u64::from(new_len), "text_poke.new_len")?;
        r.take(pad8(4 + old_bytes.len() + new_bytes.len()), "text_poke.padding")?;
        Ok(TextPoke { misc, addr, old_bytes, new_bytes, sample_id })
    }
    fn body_size(&self, _: &DecodeContext) -> Result<usize, EncodeError> {
        for (field, b) in [("text_poke.old_bytes", self.old_bytes), ("text_poke.new_bytes", self.new_bytes)] {
            if u16::try_from(b.len()).is_err() {
                return Err(EncodeError::InvalidValue { field, value: b.len() as u64 });
            }
        }
        let tot = 4 + self.old_bytes.len() + self.new_bytes.len();
        Ok(8 + tot + pad8(tot))
    }
    fn encode_body(&self, w: &mut Writer<'_>) {
        w.u64(self.addr);
        w.u16(self.old_bytes.len() as u16);
        w.u16(self.new_bytes.len() as u16);
        w.put(self.old_bytes);
        w.padded(self.new_bytes, 4 + self.old_bytes.len());
    }
    common_fields!();
}
