//! Real-kernel helpers for `kernel_ring.rs` and `selfmon_kernel.rs`: the events, rings,
//! ioctls and `read(2)` of the counter through perfring-linux (opened on this thread, refusals
//! turned into one visible skip line), and a small decoder of the records these tests ask the
//! kernel for.
//!
//! The decoder is this file's own, independent of `perfring::record`: it is the oracle the
//! kernel's records are checked against. It decodes exactly the SAMPLE fields IDENTIFIER, IP,
//! TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD and CALLCHAIN (in the kernel's output order,
//! kernel/events/core.c:perf_output_sample), PERF_RECORD_LOST, THROTTLE/UNTHROTTLE, and the `sample_id` trailer of
//! every other record, and refuses any byte it cannot account for: a record decodes only if its
//! fields end exactly at `header.size`.

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, Instant};

use perfring::consumer::Trusted;
pub use perfring::record::Attr;
use perfring::record::{attr_flags, read_format as rf, sample_type as st, types, Endian, Header, ReadValues, SampleId};
use perfring::{consumer::Consumer, memory::RingMemory};
pub use perfring_linux::software::{
    CONTEXT_SWITCHES as SW_CONTEXT_SWITCHES, CPU_CLOCK as SW_CPU_CLOCK, TASK_CLOCK as SW_TASK_CLOCK,
};
pub use perfring_linux::Ring;
use perfring_linux::{EventAttr, LinuxError, Target};

/// `read_format` of every event here: the four fields [`Event::counts`] parses.
pub const READ_FORMAT: u64 = rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING | rf::ID | rf::LOST;

/// The sample layout the issue asks for.
pub const SAMPLE_TYPE: u64 = st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::CALLCHAIN;

/// A sampling software event with a fixed period: the sample layout, `sample_id_all`
/// (so LOST records carry a trailer to decode), TIME on `CLOCK_MONOTONIC` (comparable with
/// `clock_gettime`), kernel samples included, opened disabled (`exclude_hv` and the 128-byte
/// attr are `EventAttr`'s defaults), and the four `read_format` fields.
pub fn software(config: perfring_linux::SoftwareEvent, period: u64) -> EventAttr {
    EventAttr::software(config)
        .sample_period(period)
        .sample_type(SAMPLE_TYPE)
        .read_format(READ_FORMAT)
        .flag(attr_flags::SAMPLE_ID_ALL, true)
        .clockid(libc::CLOCK_MONOTONIC)
        .flag(attr_flags::EXCLUDE_KERNEL, false)
}

/// How the records of an event are laid out, for this file's decoder.
pub trait LayoutOf {
    /// The parts of the attr the decoder needs.
    fn layout(&self) -> Layout;
}

impl LayoutOf for Attr {
    fn layout(&self) -> Layout {
        Layout { sample_type: self.sample_type, sample_id_all: self.has(attr_flags::SAMPLE_ID_ALL) }
    }
}

/// A test body's verdict when the kernel refuses perf events: the errno, reported as a skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip(pub i32);

/// Why a test skipped: the kernel refused `perf_event_open`.
pub fn skip_reason(errno: i32) -> String {
    format!("perf_event_open refused (errno {errno})")
}

/// Run a test body; if the kernel refused perf_event_open, print the one skip line.
pub fn run_or_skip(body: impl FnOnce() -> Result<(), Skip>) {
    if let Err(Skip(errno)) = body() {
        perfring_test_support::skip(skip_reason(errno));
    }
}

/// The errno of a refusal by the environment: not privileged enough for
/// `perf_event_paranoid` (EACCES, EPERM), the syscall filtered (ENOSYS, EPERM under seccomp),
/// or software events not provided (ENOENT, ENODEV, EOPNOTSUPP, as in some sandboxes). `None`
/// for anything else: a bug of ours (an invalid attr).
fn refusal(e: &LinuxError) -> Option<i32> {
    match e {
        LinuxError::PermissionDenied { errno, .. } | LinuxError::NotSupported { errno } => Some(*errno),
        LinuxError::Io { error, .. } if error.raw_os_error() == Some(libc::ENOSYS) => Some(libc::ENOSYS),
        _ => None,
    }
}

/// An open perf event on this thread, any CPU. Closed on drop.
#[derive(Debug)]
pub struct Event {
    inner: perfring_linux::Event,
    /// The attr the kernel accepted.
    pub attr: Attr,
    /// Its kernel id (`PERF_EVENT_IOC_ID`; also `id` of the LOST records it writes).
    pub id: u64,
}

/// Open `attr` on this thread. A refusal is a [`Skip`]; any other error panics (it is a bug
/// in the attr).
pub fn open(attr: &EventAttr) -> Result<Event, Skip> {
    open_in(attr, None)
}

/// [`open`], as a member of `leader`'s group.
pub fn open_in(attr: &EventAttr, leader: Option<&Event>) -> Result<Event, Skip> {
    match perfring_linux::Event::open(attr, Target::ThisThread, leader.map(|l| &l.inner)) {
        Ok(inner) => Ok(Event { attr: *inner.attr(), id: inner.id(), inner }),
        Err(e) => Err(Skip(refusal(&e).unwrap_or_else(|| panic!("perf_event_open: {e} (invalid attr?): {attr:?}")))),
    }
}

impl Event {
    /// `PERF_EVENT_IOC_ENABLE`.
    pub fn enable(&self) {
        self.inner.enable().expect("PERF_EVENT_IOC_ENABLE")
    }

    /// `PERF_EVENT_IOC_DISABLE`.
    pub fn disable(&self) {
        self.inner.disable().expect("PERF_EVENT_IOC_DISABLE")
    }

    /// Start this leader's group at one instant: the `members` first — while their leader is
    /// off, enabling a member only marks it ready (`__perf_event_enable`: "don't put it on unless
    /// the group is on") — then the leader, whose enable schedules it and every ready member in
    /// one `group_sched_in` under the context lock. (`PERF_IOC_FLAG_GROUP` does not give that:
    /// it enables the leader, then each member in turn, under a mutex the task can be preempted
    /// holding, and a context switch in between reaches only some of them.)
    pub fn start_group(&self, members: &[&Event]) {
        members.iter().for_each(|m| m.enable());
        self.enable();
    }

    /// Stop this leader's group at one instant: disabling the leader takes it and its members
    /// off in one `group_sched_out`; the members stay ready, so [`Event::restart_group`] brings
    /// them all back at once.
    pub fn stop_group(&self) {
        self.disable();
    }

    /// Restart a group stopped by [`Event::stop_group`], all members at one instant.
    pub fn restart_group(&self) {
        self.enable();
    }

    /// `PERF_EVENT_IOC_PAUSE_OUTPUT`: `true` pauses the ring (writes are dropped and counted as
    /// lost), `false` resumes.
    pub fn pause_output(&self, paused: bool) {
        self.inner.pause_output(paused).expect("PERF_EVENT_IOC_PAUSE_OUTPUT")
    }

    /// `read(2)` of the counter with `read_format` = [`READ_FORMAT`].
    pub fn counts(&self) -> Counts {
        assert_eq!(self.attr.read_format, READ_FORMAT, "counts() parses the four-field read_format");
        match self.inner.read().expect("read(2) of the counter").values() {
            ReadValues::Single(c) => Counts {
                value: c.value,
                time_enabled: c.time_enabled.expect("TOTAL_TIME_ENABLED"),
                time_running: c.time_running.expect("TOTAL_TIME_RUNNING"),
                id: c.id.expect("ID"),
                lost: c.lost.expect("LOST"),
            },
            other => panic!("not a single read: {other:?}"),
        }
    }

    /// Map the control page and `data_pages` (a power of two, or 0 for the control page alone)
    /// data pages; `writable`: the kernel respects `data_tail`, or not (overwrite mode;
    /// include/uapi/linux/perf_event.h).
    pub fn map(&self, data_pages: usize, writable: bool) -> Ring {
        Ring::map(&self.inner, data_pages, writable).unwrap_or_else(|e| panic!("mmap of {} pages: {e}", 1 + data_pages))
    }
}

/// What `read(2)` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// The count: ns for the clocks, switches for context-switches.
    pub value: u64,
    /// ns enabled.
    pub time_enabled: u64,
    /// ns running.
    pub time_running: u64,
    /// The event id.
    pub id: u64,
    /// `event->lost_samples`: records this event could not write (ring full or paused).
    pub lost: u64,
}

/// This thread's id.
pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

/// `clock_gettime(CLOCK_MONOTONIC)` in ns: the clock of the events' TIME field.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec.
    let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(ret, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The number of configured CPUs.
pub fn cpus() -> u32 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    u32::try_from(n).expect("cpu count")
}

pub use perfring_linux::paranoid;

/// Keep a CPU busy in user space for `d`.
pub fn spin(d: Duration) {
    let end = Instant::now() + d;
    let mut x = 1u64;
    while Instant::now() < end {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

/// Cause about `n` context switches of this thread: a 1 µs sleep usually switches it out (not
/// always: the sleep's timer can expire before the thread reaches `schedule()`). Sleep 1 ms
/// for a switch that must happen.
pub fn switch_out(n: usize) {
    for _ in 0..n {
        std::thread::sleep(Duration::from_micros(1));
    }
}

// ------------------------------------------------------------------------------------------
// Decoding

/// How the records of one event are laid out (the parts of its attr a decoder needs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// `attr.sample_type`.
    pub sample_type: u64,
    /// `attr.sample_id_all`.
    pub sample_id_all: bool,
}

/// A decoded PERF_RECORD_SAMPLE (absent fields are 0 / empty).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sample {
    pub misc: u16,
    pub identifier: u64,
    pub ip: u64,
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub addr: u64,
    pub id: u64,
    pub stream_id: u64,
    pub cpu: u32,
    pub period: u64,
    /// `ips[nr]`, context markers included.
    pub callchain: Vec<u64>,
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// PERF_RECORD_SAMPLE.
    Sample(Sample),
    /// PERF_RECORD_LOST: `id` of the event writing now, `lost` records dropped before it.
    Lost { id: u64, lost: u64, sample_id: SampleId },
    /// PERF_RECORD_THROTTLE (`throttle = true`) or UNTHROTTLE.
    Throttle { throttle: bool, time: u64, id: u64, stream_id: u64, sample_id: SampleId },
    /// Any other type: its trailer (if `sample_id_all`) decoded, the body before it not.
    Other { type_: u32, sample_id: SampleId },
}

/// Why a record did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Shorter than its header says, or than its fields need.
    Truncated { type_: u32, need: usize, have: usize },
    /// The fields end before `header.size`: bytes nothing accounts for.
    Trailing { type_: u32, used: usize, size: usize },
    /// `header.size` differs from the length of the bytes given.
    SizeMismatch { size: u16, len: usize },
    /// A sample_type bit this decoder does not know.
    Unsupported { bits: u64 },
}

/// The SAMPLE bits [`decode`] handles.
pub const DECODABLE: u64 = SAMPLE_TYPE | st::IDENTIFIER | st::ADDR | st::ID | st::STREAM_ID;

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    type_: u32,
}

impl Cursor<'_> {
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.bytes.get(self.at..self.at + 8).ok_or(DecodeError::Truncated {
            type_: self.type_,
            need: self.at + 8,
            have: self.bytes.len(),
        })?;
        self.at += 8;
        Ok(Endian::NATIVE.u64(b.try_into().unwrap()))
    }
    fn pair(&mut self) -> Result<(u32, u32), DecodeError> {
        let w = self.u64()?.to_ne_bytes();
        Ok((u32::from_ne_bytes(w[..4].try_into().unwrap()), u32::from_ne_bytes(w[4..].try_into().unwrap())))
    }
    /// The `sample_id` trailer at the end of a non-SAMPLE record (kernel/events/core.c:__perf_event_header__init_id). With
    /// `fixed_body`, the trailer must start exactly where the fields read so far end.
    fn trailer(&mut self, layout: &Layout, fixed_body: bool) -> Result<SampleId, DecodeError> {
        let mut sid = SampleId::default();
        if !layout.sample_id_all {
            return Ok(sid);
        }
        let t = layout.sample_type;
        let start = self.bytes.len().checked_sub(SampleId::size(t)).ok_or(DecodeError::Truncated {
            type_: self.type_,
            need: SampleId::size(t) + 8,
            have: self.bytes.len(),
        })?;
        if start < self.at {
            return Err(DecodeError::Truncated { type_: self.type_, need: self.at + SampleId::size(t), have: start });
        }
        if fixed_body && start != self.at {
            return Err(DecodeError::Trailing { type_: self.type_, used: self.at, size: start });
        }
        self.at = start;
        if t & st::TID != 0 {
            let (pid, tid) = self.pair()?;
            sid.tid = Some(perfring::record::PidTid { pid, tid });
        }
        if t & st::TIME != 0 {
            sid.time = Some(self.u64()?);
        }
        if t & st::ID != 0 {
            sid.id = Some(self.u64()?);
        }
        if t & st::STREAM_ID != 0 {
            sid.stream_id = Some(self.u64()?);
        }
        if t & st::CPU != 0 {
            let (cpu, res) = self.pair()?;
            sid.cpu = Some(perfring::record::SampleCpu { cpu, res });
        }
        if t & st::IDENTIFIER != 0 {
            sid.identifier = Some(self.u64()?);
        }
        Ok(sid)
    }
    fn end(&self) -> Result<(), DecodeError> {
        if self.at != self.bytes.len() {
            return Err(DecodeError::Trailing { type_: self.type_, used: self.at, size: self.bytes.len() });
        }
        Ok(())
    }
}

/// Decode one whole record (`bytes.len() == header.size`).
pub fn decode(bytes: &[u8], layout: &Layout) -> Result<Record, DecodeError> {
    let header =
        Header::parse(bytes, Endian::NATIVE).ok_or(DecodeError::Truncated { type_: 0, need: 8, have: bytes.len() })?;
    if usize::from(header.size) != bytes.len() {
        return Err(DecodeError::SizeMismatch { size: header.size, len: bytes.len() });
    }
    let mut c = Cursor { bytes, at: Header::SIZE, type_: header.type_ };
    let record = match header.type_ {
        types::SAMPLE => {
            let t = layout.sample_type;
            if t & !DECODABLE != 0 {
                return Err(DecodeError::Unsupported { bits: t & !DECODABLE });
            }
            // The kernel's output order (core.c:perf_output_sample), not the bit order.
            let mut s = Sample { misc: header.misc, ..Sample::default() };
            if t & st::IDENTIFIER != 0 {
                s.identifier = c.u64()?;
            }
            if t & st::IP != 0 {
                s.ip = c.u64()?;
            }
            if t & st::TID != 0 {
                (s.pid, s.tid) = c.pair()?;
            }
            if t & st::TIME != 0 {
                s.time = c.u64()?;
            }
            if t & st::ADDR != 0 {
                s.addr = c.u64()?;
            }
            if t & st::ID != 0 {
                s.id = c.u64()?;
            }
            if t & st::STREAM_ID != 0 {
                s.stream_id = c.u64()?;
            }
            if t & st::CPU != 0 {
                (s.cpu, _) = c.pair()?;
            }
            if t & st::PERIOD != 0 {
                s.period = c.u64()?;
            }
            if t & st::CALLCHAIN != 0 {
                let nr = c.u64()?;
                let room = (bytes.len() - c.at) / 8;
                if nr > room as u64 {
                    return Err(DecodeError::Truncated {
                        type_: header.type_,
                        need: c.at + 8 * nr as usize,
                        have: bytes.len(),
                    });
                }
                s.callchain = (0..nr).map(|_| c.u64()).collect::<Result<_, _>>()?;
            }
            Record::Sample(s)
        }
        types::LOST => {
            let id = c.u64()?;
            let lost = c.u64()?;
            let sample_id = c.trailer(layout, true)?;
            Record::Lost { id, lost, sample_id }
        }
        types::THROTTLE | types::UNTHROTTLE => {
            let time = c.u64()?;
            let id = c.u64()?;
            let stream_id = c.u64()?;
            let sample_id = c.trailer(layout, true)?;
            Record::Throttle { throttle: header.type_ == types::THROTTLE, time, id, stream_id, sample_id }
        }
        type_ => {
            // The body is not decoded here; only its trailer, which ends the record.
            let sample_id = c.trailer(layout, false)?;
            c.at = bytes.len();
            Record::Other { type_, sample_id }
        }
    };
    c.end()?;
    Ok(record)
}

/// Callchain context markers are `>= (u64)-4095` (include/uapi/linux/perf_event.h, enum perf_callchain_context).
pub fn is_context_marker(ip: u64) -> bool {
    ip >= (-4095i64) as u64
}

/// Everything read from one ring.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Samples, in the order read.
    pub samples: Vec<Sample>,
    /// Number of PERF_RECORD_LOST records.
    pub lost_records: u64,
    /// Σ of their `lost` fields.
    pub lost_sum: u64,
    /// Records by type (all types, LOST and SAMPLE included).
    pub by_type: BTreeMap<u32, u64>,
    /// All records read.
    pub records: u64,
    /// `id`s the LOST records carried.
    pub lost_ids: Vec<u64>,
}

impl Tally {
    /// Decode and count one record; panics with the bytes if it does not decode.
    pub fn add(&mut self, bytes: &[u8], layout: &Layout) {
        let record = decode(bytes, layout).unwrap_or_else(|e| panic!("record does not decode: {e:?}: {bytes:02x?}"));
        *self.by_type.entry(Header::parse(bytes, Endian::NATIVE).unwrap().type_).or_default() += 1;
        self.records += 1;
        match record {
            Record::Sample(s) => self.samples.push(s),
            Record::Lost { id, lost, .. } => {
                self.lost_records += 1;
                self.lost_sum += lost;
                self.lost_ids.push(id);
            }
            Record::Throttle { .. } | Record::Other { .. } => {}
        }
    }
}

/// Drain a forward ring with perfring's consumer: every available record decoded into `tally`,
/// then `data_tail` released. Returns the records read.
pub fn drain<M: RingMemory>(
    consumer: &mut Consumer<M, Trusted>,
    layout: &Layout,
    scratch: &mut [u8],
    tally: &mut Tally,
) -> usize {
    consumer.for_each(scratch, |r| tally.add(r.bytes, layout)).expect("the kernel's ring reads without error")
}

/// Clear this thread's effective capabilities (the permitted set stays; Linux credentials are
/// per thread, so other threads keep theirs). Afterwards perf_event_open treats this thread as
/// unprivileged: `perf_event_paranoid` applies, as for a non-root user.
pub fn drop_effective_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct CapHeader {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct CapData {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [CapData::default(); 2];
    // SAFETY: version 3 takes one header and two data structs, both valid and writable here.
    if unsafe { libc::syscall(libc::SYS_capget, &mut header as *mut CapHeader, data.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    for d in &mut data {
        d.effective = 0;
    }
    // SAFETY: as above; capset only reads them, and pid 0 means the calling thread.
    if unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut CapHeader, data.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// perf.data

/// perf.data through `perfring_data` (the container: header, attrs, data section), each kernel
/// record decoded with this module's own [`decode`].
pub mod perf_data {
    use perfring::record::EventRecord;

    use super::{decode, Layout, LayoutOf, Record, Sample};

    /// What the data section held.
    #[derive(Debug, Default)]
    pub struct Contents {
        /// The attrs' layout (all attrs must agree: these tests record one event).
        pub layout: Option<Layout>,
        /// SAMPLE records, in file order.
        pub samples: Vec<Sample>,
        /// Kernel records (type < 64) of other types.
        pub other_kernel_records: u64,
        /// perf's own records (type ≥ 64), not decoded.
        pub perf_records: u64,
    }

    /// Parse a whole perf.data file written on this machine.
    pub fn read(b: &[u8]) -> Result<Contents, String> {
        let mut r = perfring_data::Reader::from_bytes(b).map_err(|e| e.to_string())?;
        let mut out = Contents::default();
        for a in r.metadata().attrs() {
            let layout = a.attr.layout();
            if out.layout.is_some_and(|l| l != layout) {
                return Err("attrs with different layouts (needs the id → attr mapping)".into());
            }
            out.layout = Some(layout);
        }
        let layout = out.layout.ok_or("no attrs")?;
        while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
            if rec.raw().header.type_ >= 64 {
                out.perf_records += 1;
            } else {
                match decode(rec.raw().bytes, &layout).map_err(|e| format!("record at {}: {e:?}", rec.raw().offset))? {
                    Record::Sample(s) => out.samples.push(s),
                    _ => out.other_kernel_records += 1,
                }
            }
        }
        Ok(out)
    }
}

/// Drain a forward ring, returning its records decoded, in ring order.
pub fn drain_records<M: RingMemory>(
    consumer: &mut Consumer<M, Trusted>,
    layout: &Layout,
    scratch: &mut [u8],
) -> Vec<Record> {
    let mut out = Vec::new();
    consumer
        .for_each(scratch, |r| out.push(decode(r.bytes, layout).unwrap_or_else(|e| panic!("{e:?}: {:02x?}", r.bytes))))
        .expect("the kernel's ring reads without error");
    out
}
