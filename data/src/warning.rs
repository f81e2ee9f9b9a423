//! [`Warning`]: what perf only warns about or silently repairs. The library never prints
//! them; the reader collects them for the caller ([`crate::Reader::warnings`]).

use perfring::record::{DecodeError, EventSetError};

/// Something perf reads past with a warning or a silent repair; the data is returned as perf
/// would use it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// An event's ids section is not a whole number of u64s; perf rounds it down, so does
    /// this reader.
    IdsNotMultipleOf8 {
        /// Index of the event.
        event: usize,
        /// File offset of the ids section.
        offset: u64,
        /// Its size in bytes.
        size: u64,
    },
    /// The data section is empty (perf: "zero-sized data, nothing to do").
    EmptyDataSection,
    /// `data.size` is 0 although records follow: the writer did not finish ("Was the 'perf
    /// record' command properly terminated?"). The records up to the end of the file are read.
    DataSizeZero {
        /// Bytes from `data.offset` to the end of the file, read as the data section.
        assumed_size: u64,
    },
    /// Ids listed under more than one event; as perf, the last event listing an id gets it.
    /// One warning for them all, the first described.
    DuplicateId {
        /// How many times an id was listed again under another event.
        count: u64,
        /// The first such id.
        id: u64,
        /// The event that listed it before.
        previous: usize,
        /// The event that gets it.
        event: usize,
    },
    /// In pipe mode, events that perf refuses in file mode ([`EventSetError`]).
    Inconsistent(EventSetError),
    /// Records perf cannot attribute to an event (an id no event has, or no room for the id
    /// in the record); perf skips them ("samples with id not present in the header"), this
    /// reader yields them with no event.
    Unattributed {
        /// How many records so far.
        count: u64,
        /// Why the first one could not be attributed.
        first: DecodeError,
        /// Offset of the first one, as a record's `raw().offset` gives it ([`crate::FileRecord`]).
        first_offset: u64,
    },
    /// The header's `attr_size` is not an attr's `size` plus its 16-byte ids section. perf
    /// counts the attrs with the first (`attrs.size / attr_size`) and reads each by the second,
    /// as this reader does; attrs past that count are not read.
    AttrSizeDiffers {
        /// The first event whose entry size differs.
        event: usize,
        /// `perf_file_header.attr_size`.
        attr_size: u64,
        /// That event's `attr.size` + 16.
        entry_size: u64,
        /// Attrs counted (and read).
        events: u64,
    },
    /// The file has no events (an empty attrs section): no record can be attributed or
    /// decoded by an event's layout.
    NoEvents,
    /// The file's byte order is not this host's and its feature bitmap lacks HOSTNAME, which
    /// perf always sets. perf (`header.c:perf_file_header__read`) cannot tell then how wide the
    /// writer's `unsigned long` was: it takes the bitmap as a 32-bit host's (each u64's halves
    /// exchanged) if that one has HOSTNAME, and otherwise ignores it and assumes BUILD_ID alone
    /// (the first feature section). This reader reads the features as perf does: those the
    /// file's bitmap names but `used` does not are not read (COMPRESSED among them: perf then
    /// cannot decompress the records; this reader still does).
    ForeignFeatureBitmap {
        /// The bitmap as the file has it.
        file: [u64; 4],
        /// The bitmap as perf reads it, and this reader.
        used: [u64; 4],
    },
    /// A feature's `{offset, size}` points outside the file; the feature is skipped.
    FeatureOutsideFile {
        /// Feature bit.
        feature: u32,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::IdsNotMultipleOf8 { event, offset, size } => write!(
                f,
                "event {event}'s ids section (offset {offset}) is {size} bytes, not a whole number of u64 ids: \
                 the last {} bytes are ignored, as perf ignores them",
                size % 8
            ),
            Warning::EmptyDataSection => {
                f.write_str("the data section is empty (perf: zero-sized data, nothing to do)")
            }
            Warning::DataSizeZero { assumed_size } => write!(
                f,
                "data.size is 0 although records follow (was the recording properly terminated?): the \
                 {assumed_size} bytes to the end of the file are read as the data section"
            ),
            Warning::DuplicateId { count: 1, id, previous, event } => {
                write!(f, "id {id} is listed under events {previous} and {event}: event {event} gets it, as in perf")
            }
            Warning::DuplicateId { count, id, previous, event } => write!(
                f,
                "{count} times an id is listed again under another event (the first: id {id}, under events \
                 {previous} and {event}): each goes to the last event listing it, as in perf"
            ),
            Warning::Inconsistent(i) => write!(f, "pipe mode: {i} (perf refuses this in file mode)"),
            Warning::Unattributed { count, first, first_offset } => write!(
                f,
                "{count} records cannot be attributed to an event (the first at offset {first_offset}: {first}); \
                 perf skips them, this reader yields them with no event"
            ),
            Warning::AttrSizeDiffers { event, attr_size, entry_size, events } => write!(
                f,
                "the header's attr_size is {attr_size} but event {event}'s attr and ids take {entry_size} bytes: \
                 {events} attrs counted with the first and read with the second, as perf does"
            ),
            Warning::NoEvents => f.write_str("the file has no events: its records cannot be attributed"),
            Warning::ForeignFeatureBitmap { file, used } => {
                let bits = |b: &[u64; 4]| {
                    let set: Vec<String> =
                        (0..256).filter(|&i| b[i / 64] & (1 << (i % 64)) != 0).map(|i| i.to_string()).collect();
                    set.join(", ")
                };
                write!(
                    f,
                    "the file's byte order is not this host's and its feature bitmap (bits {}) lacks HOSTNAME: \
                     features are read as perf reads them, bits {} (",
                    bits(file),
                    bits(used)
                )?;
                if used == &[1 << crate::features::BUILD_ID, 0, 0, 0] {
                    f.write_str("the bitmap ignored, the first section taken for BUILD_ID)")
                } else {
                    f.write_str("the bitmap of a 32-bit host)")
                }
            }
            Warning::FeatureOutsideFile { feature, offset, size } => write!(
                f,
                "feature {feature}'s section {{offset {offset}, size {size}}} lies outside the file: the feature \
                 is skipped"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warning_says_what_happened_and_what_was_done() {
        let warnings = [
            (Warning::IdsNotMultipleOf8 { event: 1, offset: 200, size: 12 }, "last 4 bytes are ignored"),
            (Warning::EmptyDataSection, "zero-sized data"),
            (Warning::DataSizeZero { assumed_size: 96 }, "the 96 bytes"),
            (Warning::DuplicateId { count: 1, id: 7, previous: 0, event: 1 }, "event 1 gets it"),
            (Warning::DuplicateId { count: 5, id: 7, previous: 0, event: 1 }, "5 times an id is listed again"),
            (Warning::Inconsistent(EventSetError::SampleIdAllDiffers { event: 1 }), "perf refuses this in file mode"),
            (
                Warning::Unattributed { count: 3, first: DecodeError::UnknownId { id: 9 }, first_offset: 120 },
                "3 records cannot be attributed",
            ),
            (Warning::AttrSizeDiffers { event: 0, attr_size: 136, entry_size: 144, events: 2 }, "2 attrs counted"),
            (Warning::NoEvents, "no events"),
            (Warning::FeatureOutsideFile { feature: 5, offset: 9000, size: 16 }, "feature 5"),
            (
                Warning::ForeignFeatureBitmap { file: [0x810, 0, 0, 0], used: [4, 0, 0, 0] },
                "(bits 4, 11) lacks HOSTNAME: features are read as perf reads them, bits 2 (the bitmap ignored",
            ),
        ];
        for (w, says) in warnings {
            let text = w.to_string();
            assert!(text.contains(says), "{w:?}: {text}");
        }
    }
}
