//! Real-kernel plumbing for `kernel_ring.rs`: `perf_event_attr` written by hand, the
//! `perf_event_open` syscall, the `mmap` of `1 + 2^n` pages, the ioctls, `read(2)` of the counter,
//! and a small decoder of the records these tests ask the kernel for.
//!
//! The decoder is local because `perfring::record` has no full record decoder yet; it decodes
//! exactly the SAMPLE fields IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD and
//! CALLCHAIN (in the kernel's output order, KERNEL-NOTES §6.2), PERF_RECORD_LOST,
//! THROTTLE/UNTHROTTLE, and the `sample_id` trailer of every other record, and refuses any byte
//! it cannot account for: a record decodes only if its fields end exactly at `header.size`.

use std::collections::BTreeMap;
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use perfring::consumer::Trusted;
use perfring::record::{sample_type as st, types, Endian, Header, SampleId};
use perfring::{Consumer, Mapping, RingMemory};

/// `PERF_TYPE_SOFTWARE`.
pub const TYPE_SOFTWARE: u32 = 1;
/// `PERF_COUNT_SW_CPU_CLOCK`: an hrtimer per event; counts ns.
pub const SW_CPU_CLOCK: u64 = 0;
/// `PERF_COUNT_SW_TASK_CLOCK`: an hrtimer per event; counts the task's ns.
pub const SW_TASK_CLOCK: u64 = 1;
/// `PERF_COUNT_SW_CONTEXT_SWITCHES`: counted when the task is switched out.
pub const SW_CONTEXT_SWITCHES: u64 = 3;

/// `PERF_ATTR_SIZE_VER7`: the attr up to and including `sig_data`.
pub const ATTR_SIZE_VER7: u32 = 128;

/// Bits of the flags word at offset 40 (KERNEL-NOTES §6.7).
pub mod flag {
    /// `disabled`: open stopped, start with `PERF_EVENT_IOC_ENABLE`.
    pub const DISABLED: u64 = 1 << 0;
    /// `exclude_hv`.
    pub const EXCLUDE_HV: u64 = 1 << 6;
    /// `sample_id_all`: non-SAMPLE records carry the `sample_id` trailer.
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    /// `use_clockid`: TIME uses `attr.clockid` instead of `local_clock()`.
    pub const USE_CLOCKID: u64 = 1 << 25;
    /// `write_backward`.
    pub const WRITE_BACKWARD: u64 = 1 << 27;
}

/// `read_format` bits (KERNEL-NOTES §6.3).
pub mod read_format {
    /// `PERF_FORMAT_TOTAL_TIME_ENABLED`
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    /// `PERF_FORMAT_TOTAL_TIME_RUNNING`
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    /// `PERF_FORMAT_ID`
    pub const ID: u64 = 1 << 2;
    /// `PERF_FORMAT_LOST` (v6.0+): the event's `lost_samples`.
    pub const LOST: u64 = 1 << 4;
    /// What [`super::Event::counts`] parses.
    pub const ALL: u64 = TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID | LOST;
}

/// The sample layout the issue asks for.
pub const SAMPLE_TYPE: u64 = st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::CALLCHAIN;

/// `_IO('$', n)`.
const fn io(nr: u64) -> u64 {
    (b'$' as u64) << 8 | nr
}
/// `_IOW('$', n, u32)`: direction write (1) in bits 30-31, size in bits 16-29.
const fn iow_u32(nr: u64) -> u64 {
    1 << 30 | (size_of::<u32>() as u64) << 16 | io(nr)
}
/// `PERF_EVENT_IOC_ENABLE`
pub const IOC_ENABLE: u64 = io(0);
/// `PERF_EVENT_IOC_DISABLE`
pub const IOC_DISABLE: u64 = io(1);
/// `PERF_EVENT_IOC_PAUSE_OUTPUT` = `_IOW('$', 9, __u32)`
pub const IOC_PAUSE_OUTPUT: u64 = iow_u32(9);
const _: () = assert!(IOC_ENABLE == 0x2400 && IOC_DISABLE == 0x2401 && IOC_PAUSE_OUTPUT == 0x4004_2409);

/// `struct perf_event_attr` up to `sig_data` (`PERF_ATTR_SIZE_VER7`, 128 bytes), field for
/// field as the uapi lays it out; the bitfield is the one u64 at offset 40.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Attr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// `sample_period` (or `sample_freq` with the `freq` flag; not used here).
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// The bitfield word: see [`flag`].
    pub flags: u64,
    /// `wakeup_events` / `wakeup_watermark`.
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub aux_action: u32,
    pub sig_data: u64,
}

// The offsets of KERNEL-NOTES §6.7, checked at compile time.
const _: () = {
    assert!(size_of::<Attr>() == ATTR_SIZE_VER7 as usize);
    assert!(offset_of!(Attr, config) == 8);
    assert!(offset_of!(Attr, sample_period) == 16);
    assert!(offset_of!(Attr, sample_type) == 24);
    assert!(offset_of!(Attr, read_format) == 32);
    assert!(offset_of!(Attr, flags) == 40);
    assert!(offset_of!(Attr, wakeup_events) == 48);
    assert!(offset_of!(Attr, bp_type) == 52);
    assert!(offset_of!(Attr, config1) == 56);
    assert!(offset_of!(Attr, config2) == 64);
    assert!(offset_of!(Attr, branch_sample_type) == 72);
    assert!(offset_of!(Attr, sample_regs_user) == 80);
    assert!(offset_of!(Attr, sample_stack_user) == 88);
    assert!(offset_of!(Attr, clockid) == 92);
    assert!(offset_of!(Attr, sample_regs_intr) == 96);
    assert!(offset_of!(Attr, aux_watermark) == 104);
    assert!(offset_of!(Attr, sample_max_stack) == 108);
    assert!(offset_of!(Attr, aux_sample_size) == 112);
    assert!(offset_of!(Attr, aux_action) == 116);
    assert!(offset_of!(Attr, sig_data) == 120);
};

impl Attr {
    /// A sampling software event with a fixed period: the sample layout, `sample_id_all`
    /// (so LOST records carry a trailer to decode), TIME on `CLOCK_MONOTONIC` (comparable with
    /// `clock_gettime`), opened disabled, and the four `read_format` fields.
    pub fn software(config: u64, period: u64) -> Attr {
        Attr {
            type_: TYPE_SOFTWARE,
            size: ATTR_SIZE_VER7,
            config,
            sample_period: period,
            sample_type: SAMPLE_TYPE,
            read_format: read_format::ALL,
            flags: flag::DISABLED | flag::SAMPLE_ID_ALL | flag::USE_CLOCKID | flag::EXCLUDE_HV,
            clockid: libc::CLOCK_MONOTONIC,
            ..Attr::default()
        }
    }

    /// The same event writing backward.
    pub fn backward(mut self) -> Attr {
        self.flags |= flag::WRITE_BACKWARD;
        self
    }

    /// How records of this event are laid out.
    pub fn layout(&self) -> Layout {
        Layout { sample_type: self.sample_type, sample_id_all: self.flags & flag::SAMPLE_ID_ALL != 0 }
    }
}

/// `perf_event_open` said no. `refused()` tells a permission/availability refusal (a visible
/// skip) from a bug of ours (an invalid attr: the test fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenError {
    /// The errno.
    pub errno: i32,
}

impl OpenError {
    /// The environment refuses perf events: not privileged enough for `perf_event_paranoid`
    /// (EACCES, EPERM), the syscall filtered (ENOSYS, EPERM under seccomp), or software events
    /// not provided (ENOENT, ENODEV, EOPNOTSUPP, as in some sandboxes).
    pub fn refused(self) -> bool {
        [libc::EACCES, libc::EPERM, libc::ENOSYS, libc::ENOENT, libc::ENODEV, libc::EOPNOTSUPP].contains(&self.errno)
    }
}

/// A test body's verdict when the kernel refuses perf events: the errno, reported as a skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip(pub i32);

/// The one line a skipped test prints.
pub fn skip_line(errno: i32) -> String {
    format!("skipped: perf_event_open refused (errno {errno})")
}

/// Run a test body; if the kernel refused perf_event_open, print the one skip line.
pub fn run_or_skip(body: impl FnOnce() -> Result<(), Skip>) {
    if let Err(Skip(errno)) = body() {
        println!("{}", skip_line(errno));
    }
}

/// An open perf event. Closed on drop.
#[derive(Debug)]
pub struct Event {
    fd: OwnedFd,
    /// The attr it was opened with.
    pub attr: Attr,
    /// Its kernel id (`PERF_FORMAT_ID`; also `id` of the LOST records it writes).
    pub id: u64,
}

/// Open `attr` for `pid`/`cpu` (`0, -1`: this thread, any CPU). A refusal is a [`Skip`];
/// any other error panics (it is a bug in the attr).
pub fn open(attr: &Attr, pid: i32, cpu: i32) -> Result<Event, Skip> {
    open_in(attr, pid, cpu, None)
}

/// [`open`], as a member of `leader`'s group (same `pid`/`cpu` as the leader).
pub fn open_in(attr: &Attr, pid: i32, cpu: i32, leader: Option<&Event>) -> Result<Event, Skip> {
    Event::open(attr, pid, cpu, leader).map_err(|e| {
        assert!(e.refused(), "perf_event_open failed with errno {} (invalid attr?): {attr:?}", e.errno);
        Skip(e.errno)
    })
}

impl Event {
    /// `perf_event_open(attr, pid, cpu, group_fd or -1, PERF_FLAG_FD_CLOEXEC)`.
    pub fn open(attr: &Attr, pid: i32, cpu: i32, group: Option<&Event>) -> Result<Event, OpenError> {
        const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
        let group_fd = group.map_or(-1, |g| g.fd.as_raw_fd());
        // The kernel may write `size` back (on E2BIG), so it gets a copy it may write.
        let mut copy = *attr;
        // SAFETY: `copy` is a valid, writable 128-byte perf_event_attr whose `size` says 128; the
        // kernel reads it and at most writes its `size` field; the other arguments are integers.
        let ret = unsafe {
            libc::syscall(libc::SYS_perf_event_open, &mut copy as *mut Attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC)
        };
        if ret < 0 {
            return Err(OpenError { errno: io::Error::last_os_error().raw_os_error().unwrap_or(0) });
        }
        // SAFETY: the syscall returned a new file descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(ret as i32) };
        let mut event = Event { fd, attr: *attr, id: 0 };
        event.id = event.counts().id;
        Ok(event)
    }

    fn ioctl(&self, request: u64, arg: libc::c_ulong) {
        // SAFETY: `request` is one of the perf ioctls taking an integer argument (ENABLE,
        // DISABLE, RESET take 0 or a flag, PAUSE_OUTPUT a u32 by value), on a perf event fd we own.
        let ret = unsafe { libc::ioctl(self.fd.as_raw_fd(), request as _, arg) };
        assert!(ret == 0, "ioctl {request:#x}: {}", io::Error::last_os_error());
    }

    /// `PERF_EVENT_IOC_ENABLE`.
    pub fn enable(&self) {
        self.ioctl(IOC_ENABLE, 0)
    }

    /// `PERF_EVENT_IOC_DISABLE`.
    pub fn disable(&self) {
        self.ioctl(IOC_DISABLE, 0)
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
        self.ioctl(IOC_PAUSE_OUTPUT, paused as libc::c_ulong)
    }

    /// `read(2)` of the counter with `read_format` = [`read_format::ALL`].
    pub fn counts(&self) -> Counts {
        assert_eq!(self.attr.read_format, read_format::ALL, "counts() parses the four-field read_format");
        let mut words = [0u64; 5];
        // SAFETY: `words` is 40 writable bytes, exactly the read_format block of a non-group
        // event with TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING|ID|LOST (value + four u64).
        let n = unsafe { libc::read(self.fd.as_raw_fd(), words.as_mut_ptr().cast(), size_of::<[u64; 5]>()) };
        assert_eq!(n, 40, "read(2) of the counter: {}", io::Error::last_os_error());
        Counts { value: words[0], time_enabled: words[1], time_running: words[2], id: words[3], lost: words[4] }
    }

    /// `mmap` the control page and `data_pages` (a power of two) data pages, `MAP_SHARED`;
    /// `writable` picks PROT_READ|PROT_WRITE (the kernel respects `data_tail`) or PROT_READ
    /// (overwrite mode; KERNEL-NOTES §1.1).
    pub fn map(&self, data_pages: usize, writable: bool) -> Ring {
        let page = page_size();
        let len = (1 + data_pages) * page;
        let prot = if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
        // SAFETY: a fresh shared mapping of our perf fd at offset 0; no existing memory is touched.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, self.fd.as_raw_fd(), 0) };
        assert!(ptr != libc::MAP_FAILED, "mmap of {} pages: {}", 1 + data_pages, io::Error::last_os_error());
        Ring { ptr: NonNull::new(ptr.cast()).expect("mmap returned a non-null address"), len }
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

/// The kernel's mapping of an event: control page + data pages. Unmapped on drop.
#[derive(Debug)]
pub struct Ring {
    ptr: NonNull<u8>,
    len: usize,
}

impl Ring {
    /// perfring's view of the kernel's own mapping: no copy, the control page is the kernel's.
    /// Over a read-only ring, use only readers that never store `data_tail` (`BackwardReader`
    /// with `release_tail = false`).
    pub fn mapping(&self) -> Mapping<'_> {
        // SAFETY: ptr .. ptr + len is our live MAP_SHARED mapping of the event, which only `Drop`
        // unmaps, and `Drop` cannot run while the returned `Mapping<'_>` borrows `self`. The
        // only other party is the kernel, which follows the perf protocol. The control page is
        // writable only if `Event::map` was asked for it; over read-only rings callers never store.
        unsafe { Mapping::attach(self.ptr.as_ptr(), self.len) }.expect("the kernel's layout is valid")
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping `Event::map` created; no `Mapping` borrows it any more.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).expect("page size")
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

/// `/proc/sys/kernel/perf_event_paranoid`, if readable.
pub fn paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok()?.trim().parse().ok()
}

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
    /// The `sample_id` trailer at the end of a non-SAMPLE record (KERNEL-NOTES §6.4). With
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
            (sid.pid, sid.tid) = self.pair()?;
        }
        if t & st::TIME != 0 {
            sid.time = self.u64()?;
        }
        if t & st::ID != 0 {
            sid.id = self.u64()?;
        }
        if t & st::STREAM_ID != 0 {
            sid.stream_id = self.u64()?;
        }
        if t & st::CPU != 0 {
            (sid.cpu, sid.res) = self.pair()?;
        }
        if t & st::IDENTIFIER != 0 {
            sid.identifier = self.u64()?;
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

/// Callchain context markers are `>= (u64)-4095` (KERNEL-NOTES §6.6).
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
    use super::{decode, flag, Layout, Record, Sample};

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
        for a in r.attrs() {
            let layout =
                Layout { sample_type: a.attr.sample_type, sample_id_all: a.attr.flags & flag::SAMPLE_ID_ALL != 0 };
            if out.layout.is_some_and(|l| l != layout) {
                return Err("attrs with different layouts (needs the id → attr mapping)".into());
            }
            out.layout = Some(layout);
        }
        let layout = out.layout.ok_or("no attrs")?;
        while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
            if rec.header.type_ >= 64 {
                out.perf_records += 1;
            } else {
                match decode(rec.bytes, &layout).map_err(|e| format!("record at {}: {e:?}", rec.offset))? {
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
