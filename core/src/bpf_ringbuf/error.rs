//! [`RingbufError`]: everything a BPF ring buffer refuses, from laying it out to draining it.
//!
//! A leaf of the module: the other files return it, and it names their constants only in its
//! docs (its messages spell out their values), so that no two files import each other.

/// Why a BPF ring buffer refused: its layout, a reservation or a write, a read, a drain, or
/// wakeup flags. Never a panic; after a consumer's or a drain's error nothing past the fault
/// was consumed.
///
/// One type for the module, as a caller never holds two of these calls' errors at once; each
/// call returns only its own variants:
///
/// | call | variants | what a caller does |
/// |---|---|---|
/// | the constructors, [`split_ringbuf`](super::split_ringbuf) | `Ring*`, `Misaligned`, `BadPageSize`, `MisalignedConsumerPos` | fix the sizes or the map |
/// | `reserve`, `try_reserve`, `output` | `SampleTooLarge`, `NoSpace`, `Contended`, `ConsumerPosInvalid` | match `NoSpace` and `Contended`: reserve again later |
/// | a reservation's `write` | `PastReservation` | write within the sample |
/// | the consumer's `batch`, `next`, `for_each`, `available`, `prepare_to_sleep` | `MisalignedProducerPos` … `BusyTooLong` | match `BusyTooLong` and `LoadFailed`: wait, or [`skip_to_producer`](super::RingbufConsumer::skip_to_producer) |
/// | [`Drain::drain`](super::Drain::drain) | `DrainBusy`, `DrainSampleTooLarge`, `MisalignedConsumerPos`, and the consumer's but `ProducerPosBackwards`, `BadPageOffset` and `BusyTooLong` | match `DrainBusy`: drain later |
/// | [`Notify::from_flags`](super::Notify::from_flags) | `UnknownFlags` | pass 0, 1 or 2 |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingbufError {
    /// The data area's size (the map's `max_entries`) is not a power of two (the kernel refuses
    /// such a map with `-EINVAL`).
    RingNotPowerOfTwo {
        /// The size given.
        size: usize,
    },
    /// The data area is smaller than [`MIN_SIZE`](super::MIN_SIZE).
    RingTooSmall {
        /// The size given.
        size: usize,
    },
    /// The data area is larger than [`MAX_SIZE`](super::MAX_SIZE).
    RingTooLarge {
        /// The size given.
        size: usize,
    },
    /// Ring memory that is not 8-byte aligned (positions are `unsigned long`, headers 8-aligned).
    Misaligned {
        /// The address given.
        addr: usize,
    },
    /// A page size that is not a power of two of at least 16: the producer page holds
    /// `producer_pos` and `pending_pos`, and headers count pages in `pg_off`.
    BadPageSize {
        /// The page size given.
        page_size: usize,
    },
    /// `consumer_pos` is not a multiple of 8 (when a consumer attaches, or when a drain loads
    /// it): every record position is, and only the consumer stores it, so the consumer page was
    /// written by something that does not follow the protocol.
    MisalignedConsumerPos {
        /// The value found.
        consumer_pos: usize,
    },
    /// A reservation's sample can never fit: above [`MAX_SAMPLE_SIZE`](super::MAX_SAMPLE_SIZE),
    /// or its record (header and sample, rounded up to 8) larger than the ring. The kernel
    /// returns `NULL`; the producer counts it ([`RingbufProducer::failed_reservations`](super::RingbufProducer::failed_reservations)).
    SampleTooLarge {
        /// The sample size asked for.
        size: usize,
        /// The largest sample this ring takes.
        max: usize,
    },
    /// Not enough free space for a reservation now: the consumer has not freed it yet, or
    /// (with `pending_pos`) an older record is still being written and the new one would lap it.
    NoSpace {
        /// Bytes the record needs (header included, rounded up to 8).
        needed: usize,
        /// Bytes that could be reserved now.
        available: usize,
    },
    /// The reservation lock was held and the reservation only tried it (`try_reserve`: the
    /// kernel's NMI path, which gives up rather than deadlock on the holder it interrupted).
    Contended,
    /// A producer found `consumer_pos` ahead of `producer_pos`, or more than the ring's size
    /// behind it: the consumer page was written by something that does not follow the protocol.
    /// Nothing is written while it says so (the kernel would compute free space from it).
    ConsumerPosInvalid {
        /// `consumer_pos` as loaded.
        consumer_pos: usize,
        /// `producer_pos` at the time.
        producer_pos: usize,
    },
    /// A write past the end of a reservation: nothing was written.
    PastReservation {
        /// Offset in the sample the write started at.
        at: usize,
        /// Bytes to write.
        len: usize,
        /// The sample's size.
        size: usize,
    },
    /// Wakeup flags with bits other than [`BPF_RB_NO_WAKEUP`](super::BPF_RB_NO_WAKEUP) and
    /// [`BPF_RB_FORCE_WAKEUP`](super::BPF_RB_FORCE_WAKEUP): the kernel refuses them with
    /// `-EINVAL` (`bpf_ringbuf_output`, `bpf_user_ringbuf_drain`).
    UnknownFlags {
        /// The flags given.
        flags: u64,
    },
    /// `producer_pos` is not a multiple of 8: every record is 8-aligned, so no producer
    /// publishes such a position (a drain: `-EINVAL`).
    MisalignedProducerPos {
        /// `producer_pos` as loaded.
        producer_pos: usize,
    },
    /// `producer_pos` is behind the value this consumer saw before (or behind its own
    /// position): it went backwards.
    ProducerPosBackwards {
        /// `producer_pos` as loaded.
        producer_pos: usize,
        /// The last value seen.
        last_seen: usize,
    },
    /// `producer_pos` is more than the ring's size ahead of `consumer_pos`: records would have
    /// been overwritten unread, or no producer can have reserved that much. (A drain: the kernel
    /// checks only each sample against it, and would drain the ring's bytes over and over, up
    /// to `BPF_MAX_USER_RINGBUF_SAMPLES` per call; [`Drain`](super::Drain) refuses, deliberately
    /// stricter.)
    ProducerPosTooFarAhead {
        /// `producer_pos` as loaded.
        producer_pos: usize,
        /// The reader's position (`consumer_pos`).
        consumer_pos: usize,
        /// The ring's size.
        size: usize,
    },
    /// A header's length puts the record's end past `producer_pos` (or past the ring; a drain:
    /// `-EINVAL`).
    RecordPastProducer {
        /// The record's position.
        position: usize,
        /// The sample size in its header.
        size: u32,
        /// Bytes published from the record's position.
        available: usize,
    },
    /// A header's `pg_off` is not what the kernel writes at that offset
    /// ([`Config::check_pg_off`](super::Config::check_pg_off)).
    BadPageOffset {
        /// The record's position.
        position: usize,
        /// The `pg_off` found.
        pg_off: u32,
        /// The `pg_off` expected.
        expected: u32,
    },
    /// The sample must be copied and `scratch` is too small: pass a larger scratch. (A
    /// consumer copies when it is untrusted, when the sample wraps a singly mapped area and
    /// [`Wrapped::Copy`](super::Wrapped::Copy) is set, or when the memory lends no area; a
    /// drain always copies, where the kernel hands a BPF program a pointer into the ring.)
    ScratchTooSmall {
        /// Bytes needed.
        needed: usize,
        /// The scratch's length.
        scratch: usize,
    },
    /// The memory could not load the sample's bytes ([`RingbufMemory::load_words`](super::RingbufMemory::load_words)
    /// returned `false`). Nothing was consumed: read or drain again, or
    /// [`RingbufConsumer::skip_to_producer`](super::RingbufConsumer::skip_to_producer).
    LoadFailed {
        /// The record's position.
        position: usize,
    },
    /// The record at the consumer's position was BUSY at [`Config::busy_limit`](super::Config::busy_limit)
    /// polls in a row: its producer may have died. Keep waiting, or give up what is reserved
    /// with [`RingbufConsumer::skip_to_producer`](super::RingbufConsumer::skip_to_producer) (a
    /// producer that follows the kernel's protocol never writes over a BUSY record, so nothing
    /// it is still writing gets overwritten).
    BusyTooLong {
        /// The record's position.
        position: usize,
        /// Polls that found it BUSY.
        polls: u32,
    },
    /// Another drain holds the ring (`-EBUSY`): drain again later.
    DrainBusy,
    /// A drained sample is larger than a BPF dynptr can hold,
    /// [`MAX_DRAIN_SAMPLE_SIZE`](super::MAX_DRAIN_SAMPLE_SIZE) (`-E2BIG`).
    DrainSampleTooLarge {
        /// The record's position.
        position: usize,
        /// The sample size in its header.
        size: u32,
    },
}

impl core::fmt::Display for RingbufError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use RingbufError as E;
        match *self {
            E::RingNotPowerOfTwo { size } => {
                write!(f, "ring size {size} (max_entries) is not a power of two: the kernel refuses it too")
            }
            E::RingTooSmall { size } => {
                write!(f, "ring size {size} (max_entries) is below the minimum, 16 bytes (MIN_SIZE)")
            }
            E::RingTooLarge { size } => {
                write!(f, "ring size {size} (max_entries) is more than half the position range (MAX_SIZE)")
            }
            E::Misaligned { addr } => write!(f, "memory at {addr:#x} is not 8-byte aligned"),
            E::BadPageSize { page_size } => {
                write!(f, "page size {page_size} is not a power of two of at least 16 (pass the system's page size)")
            }
            E::MisalignedConsumerPos { consumer_pos } => write!(
                f,
                "consumer_pos {consumer_pos:#x} is not a multiple of 8: the consumer page was corrupted; recreate the \
                 map"
            ),
            E::SampleTooLarge { size, max } => {
                write!(f, "a {size}-byte sample cannot fit this ring (at most {max} bytes): use a larger ring")
            }
            E::NoSpace { needed, available } => write!(
                f,
                "ring full: the record needs {needed} bytes and {available} are free; the consumer must read \
                 faster, or the ring be larger"
            ),
            E::Contended => write!(f, "the reservation lock was held and this reservation only tried it (NMI context)"),
            E::ConsumerPosInvalid { consumer_pos, producer_pos } => write!(
                f,
                "consumer_pos {consumer_pos:#x} is ahead of producer_pos {producer_pos:#x} or a whole ring behind \
                 it: the consumer page is corrupt; the consumer must store a position it read up to"
            ),
            E::PastReservation { at, len, size } => {
                write!(f, "{len} bytes at {at} do not fit a {size}-byte reservation: write within the sample")
            }
            E::UnknownFlags { flags } => write!(
                f,
                "wakeup flags {flags:#x} have bits other than BPF_RB_NO_WAKEUP (1) and BPF_RB_FORCE_WAKEUP \
                 (2): pass 0, 1 or 2"
            ),
            E::MisalignedProducerPos { producer_pos } => write!(
                f,
                "producer_pos {producer_pos:#x} is not a multiple of 8: the producer page is corrupt (skip_to_producer \
                 rounds it down)"
            ),
            E::ProducerPosBackwards { producer_pos, last_seen } => write!(
                f,
                "producer_pos {producer_pos:#x} went back from {last_seen:#x}: the producer page is corrupt or belongs \
                 to another ring"
            ),
            E::ProducerPosTooFarAhead { producer_pos, consumer_pos, size } => write!(
                f,
                "producer_pos {producer_pos:#x} is more than the ring's {size:#x} bytes ahead of consumer_pos \
                 {consumer_pos:#x}: records were overwritten unread, or the producer page is corrupt"
            ),
            E::RecordPastProducer { position, size, available } => write!(
                f,
                "the header at {position:#x} says {size} bytes, past producer_pos ({available} bytes published): the \
                 header's len is corrupt"
            ),
            E::BadPageOffset { position, pg_off, expected } => write!(
                f,
                "the header at {position:#x} has pg_off {pg_off}, not the kernel's {expected}: the ring is corrupt, \
                 or its page size is not the one configured"
            ),
            E::ScratchTooSmall { needed, scratch } => {
                write!(f, "the sample needs {needed} bytes of scratch and {scratch} were given: pass a larger scratch")
            }
            E::LoadFailed { position } => write!(
                f,
                "the ring's memory could not load the record at {position:#x}: read or drain again, or \
                 skip_to_producer"
            ),
            E::BusyTooLong { position, polls } => write!(
                f,
                "the record at {position:#x} was still BUSY after {polls} polls: its producer may be gone; keep \
                 waiting, or skip_to_producer"
            ),
            E::DrainBusy => write!(f, "another drain holds the ring (EBUSY): drain again later"),
            E::DrainSampleTooLarge { position, size } => write!(
                f,
                "the sample at {position:#x} has {size} bytes, more than a BPF dynptr holds (E2BIG): the producer must \
                 send smaller samples"
            ),
        }
    }
}

impl core::error::Error for RingbufError {}
