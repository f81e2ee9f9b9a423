//! [`OutputError`]: why the producer did not write a record.

use crate::record::MAX_RECORD_SIZE;

/// Why a record was not written: `output_begin` returned no handle (the record was dropped
/// and counted as lost, or refused before counting), or a [`Handle`](super::Handle) write went
/// past its reservation; and why the AUX area's driver side
/// ([`AuxProducer`](crate::aux::AuxProducer)) refused: the same questions of the AUX area, and
/// its `output_end` returns the data ring's refusal of the `PERF_RECORD_AUX` it emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputError {
    /// The size is not a multiple of 8 or smaller than a header; nothing was counted (the
    /// kernel WARNs on such sizes: it is a caller bug).
    BadSize {
        /// The size asked for.
        size: usize,
    },
    /// The size is above [`MAX_RECORD_SIZE`] (65528, the largest 8-aligned u16); nothing was
    /// counted.
    TooLarge {
        /// The size asked for.
        size: usize,
    },
    /// No room (non-overwrite mode): the record was dropped and counted in `lost`.
    NoSpace,
    /// The ring is paused: the record was dropped and counted in `lost`.
    Paused,
    /// The record given to [`Producer::output`](super::Producer::output) or [`BatchWriter::output`](super::BatchWriter::output) is not one record:
    /// its header's `size` is not its length. Nothing was written or counted (written, it
    /// would make the consumer read the following bytes as the next record): build the header
    /// with `size` = the record's length.
    HeaderSize {
        /// `size` in the record's header (native byte order).
        header: u16,
        /// The record's length in bytes.
        len: usize,
    },
    /// A [`Handle`](super::Handle) write or skip past the reservation, an
    /// [`AuxHandle`](crate::aux::AuxHandle) write past the space it offers, or an AUX
    /// `output_end` of more bytes than the stretch wrote: nothing was written or published.
    /// Write exactly the size reserved.
    PastReservation {
        /// Bytes the write (or the `output_end`) asked for.
        requested: usize,
        /// Bytes left in the reservation (an AUX `output_end`: bytes the stretch wrote).
        remaining: usize,
    },
    /// Non-overwrite AUX area and the consumer has not freed any space
    /// ([`AuxProducer::output_begin`](crate::aux::AuxProducer::output_begin)): the kernel
    /// disables the event here until user space re-enables it.
    AuxNoSpace,
    /// The driver tried to set `OVERWRITE` itself ([`AuxHandle::flag`](crate::aux::AuxHandle::flag);
    /// "OVERWRITE is determined by perf_aux_output_end()").
    AuxOverwriteFlag,
}

impl core::fmt::Display for OutputError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            OutputError::BadSize { size } => write!(f, "record size {size} is not a positive multiple of 8"),
            OutputError::TooLarge { size } => write!(f, "record size {size} exceeds {MAX_RECORD_SIZE}"),
            OutputError::NoSpace => f.write_str("no space in the ring: record dropped and counted as lost"),
            OutputError::Paused => f.write_str("ring paused: record dropped and counted as lost"),
            OutputError::HeaderSize { header, len } => write!(
                f,
                "the record's header says {header} bytes but the record has {len}: set header.size to its length"
            ),
            OutputError::PastReservation { requested, remaining } => {
                write!(f, "write of {requested} bytes does not fit: {remaining} left in the reservation")
            }
            OutputError::AuxNoSpace => {
                f.write_str("no space in the AUX area: the consumer must free some (the kernel disables the event)")
            }
            OutputError::AuxOverwriteFlag => {
                f.write_str("OVERWRITE is set by the core, not by drivers: leave it out of the flags")
            }
        }
    }
}

impl core::error::Error for OutputError {}
