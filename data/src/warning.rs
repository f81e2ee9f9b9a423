//! [`Warning`]: what perf only warns about or silently repairs. The library never prints
//! them; the reader collects them for the caller ([`crate::Reader::warnings`]).

use perfring::record::{AttributeError, Inconsistency};

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
    /// An id is listed under two events; as perf, the last event listing it gets it.
    DuplicateId {
        /// The id.
        id: u64,
        /// The event that listed it before.
        previous: usize,
        /// The event that gets it.
        event: usize,
    },
    /// In pipe mode, events that perf refuses in file mode ([`Inconsistency`]).
    Inconsistent(Inconsistency),
    /// Records perf cannot attribute to an event (an id no event has, or no room for the id
    /// in the record); perf skips them ("samples with id not present in the header"), this
    /// reader yields them with no event.
    Unattributed {
        /// How many records so far.
        count: u64,
        /// Why the first one could not be attributed.
        first: AttributeError,
        /// File offset of the first one.
        first_offset: u64,
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
