//! Every system call of the crate, and so all of its `unsafe`, through `libc`: here
//! `perf_event_open`, the perf ioctls, `read`, `poll` and epoll, clocks and scheduling; the
//! mappings (`mapping.rs`), a command's process (`child.rs`), the signals the crate catches
//! (`signals.rs`), `bpf(2)` (`bpf.rs`) and the BPF ring buffers' mappings (`ringbuf.rs`) beside it. Each returns `io::Result`; the callers
//! type the errors.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

mod bpf;
mod child;
mod mapping;
mod ringbuf;
mod signals;

#[cfg(feature = "perf-data")]
pub(crate) use bpf::{bpf_programs, BpfProg};
pub(crate) use bpf::{
    create_perf_event_array, create_ring_map, map_delete, map_info, map_set_event, MapInfo, MAP_TYPE_PERF_EVENT_ARRAY,
    MAP_TYPE_RINGBUF, MAP_TYPE_USER_RINGBUF,
};
pub(crate) use child::{kill, pidfd_open, HeldChild};
pub(crate) use mapping::Mmap;
pub use mapping::RingMapping;
pub(crate) use ringbuf::{KernelRingbuf, UserRingbufMaps};
pub(crate) use signals::{catch_sigint, catch_sigusr2, sigint_seen, sigint_signal, sigusr2_taken, wake_on_sigchld};

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Whom `perf_event_open` measures: its `pid` argument.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Who<'a> {
    /// A task by id (0: the caller; -1: every task, with a CPU).
    Task(i32),
    /// The tasks of a cgroup, by its directory's descriptor (`PERF_FLAG_PID_CGROUP`; a CPU
    /// must be given).
    Cgroup(BorrowedFd<'a>),
}

/// `PERF_FLAG_PID_CGROUP`: `pid` is a cgroup directory's descriptor.
const FLAG_PID_CGROUP: u64 = 1 << 2;

/// `perf_event_open(attr, pid, cpu, group_fd, flags)`, `pid` from `who` (with
/// `PERF_FLAG_PID_CGROUP` added for a cgroup). `attr` is the attr's bytes, at least
/// `attr.size` long; on E2BIG the kernel writes its own size into them.
pub(crate) fn perf_event_open(
    attr: &mut [u8],
    who: Who<'_>,
    cpu: i32,
    group: Option<BorrowedFd<'_>>,
    flags: u64,
) -> io::Result<OwnedFd> {
    let group_fd = group.map_or(-1, |g| g.as_raw_fd());
    let (pid, flags) = match who {
        Who::Task(pid) => (pid, flags),
        Who::Cgroup(dir) => (dir.as_raw_fd(), flags | FLAG_PID_CGROUP),
    };
    // The kernel reads `attr.size` bytes (the first u32s say how many) and may write the size
    // back on E2BIG; refuse a buffer shorter than the size it claims.
    let size = u32::from_ne_bytes([attr[4], attr[5], attr[6], attr[7]]) as usize;
    if attr.len() < size.max(64) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: `attr` is a writable buffer of at least `attr.size` bytes (checked above), which
    // is all the kernel reads or writes; the other arguments are plain integers (a cgroup's
    // descriptor is borrowed for the call, so it stays open through it).
    let fd = check(unsafe {
        libc::syscall(libc::SYS_perf_event_open, attr.as_mut_ptr(), pid, cpu, group_fd, flags as libc::c_ulong)
    })?;
    // SAFETY: the syscall returned a new file descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

// The perf ioctls: _IO('$', n), _IOW('$', n, T), _IOR('$', n, T) (asm-generic encoding,
// include/uapi/linux/perf_event.h). Each request has one function below whose argument type is
// the one the kernel reads or writes for it, so no caller can pair a request with the wrong
// argument: that pairing is what makes each `ioctl` call sound.
const fn io_nr(nr: u64) -> u64 {
    (b'$' as u64) << 8 | nr
}
const fn iow(nr: u64, size: u64) -> u64 {
    1 << 30 | size << 16 | io_nr(nr)
}
const fn ior(nr: u64, size: u64) -> u64 {
    2 << 30 | size << 16 | io_nr(nr)
}
const IOC_ENABLE: u64 = io_nr(0);
const IOC_DISABLE: u64 = io_nr(1);
const IOC_REFRESH: u64 = io_nr(2);
const IOC_RESET: u64 = io_nr(3);
const IOC_PERIOD: u64 = iow(4, 8);
const IOC_SET_OUTPUT: u64 = io_nr(5);
const IOC_SET_FILTER: u64 = iow(6, 8);
const IOC_ID: u64 = ior(7, 8);
const IOC_PAUSE_OUTPUT: u64 = iow(9, 4);
const IOC_MODIFY_ATTRIBUTES: u64 = iow(11, 8);
/// `PERF_IOC_FLAG_GROUP`: apply to the whole group.
const IOC_FLAG_GROUP: libc::c_ulong = 1;
const _: () = assert!(IOC_ENABLE == 0x2400 && IOC_PAUSE_OUTPUT == 0x4004_2409 && IOC_ID == 0x8008_2407);

/// An ioctl whose argument is an integer (or unused), for the requests that take one.
fn ioctl_value(fd: BorrowedFd<'_>, request: IntRequest, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: every `IntRequest` names a perf ioctl whose argument the kernel uses as an
    // integer, never as a pointer; the fd is open for the call (borrowed).
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request.0 as _, arg) } as libc::c_long).map(drop)
}

/// The perf ioctl requests whose argument is an integer: only this module makes one.
#[derive(Clone, Copy)]
struct IntRequest(u64);

/// `PERF_EVENT_IOC_ENABLE`, of the event or (`group`) of the group it leads.
pub(crate) fn ioc_enable(fd: BorrowedFd<'_>, group: bool) -> io::Result<()> {
    ioctl_value(fd, IntRequest(IOC_ENABLE), if group { IOC_FLAG_GROUP } else { 0 })
}

/// `PERF_EVENT_IOC_DISABLE`, of the event or (`group`) of the group it leads.
pub(crate) fn ioc_disable(fd: BorrowedFd<'_>, group: bool) -> io::Result<()> {
    ioctl_value(fd, IntRequest(IOC_DISABLE), if group { IOC_FLAG_GROUP } else { 0 })
}

/// `PERF_EVENT_IOC_RESET`.
pub(crate) fn ioc_reset(fd: BorrowedFd<'_>) -> io::Result<()> {
    ioctl_value(fd, IntRequest(IOC_RESET), 0)
}

/// `PERF_EVENT_IOC_REFRESH`: `n` more overflows, then disable.
pub(crate) fn ioc_refresh(fd: BorrowedFd<'_>, n: u32) -> io::Result<()> {
    ioctl_value(fd, IntRequest(IOC_REFRESH), libc::c_ulong::from(n))
}

/// `PERF_EVENT_IOC_SET_OUTPUT`: the records of `fd`'s event go to `target`'s ring (`None`:
/// stop redirecting; the kernel takes -1).
pub(crate) fn ioc_set_output(fd: BorrowedFd<'_>, target: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let target = target.map_or(-1, |t| t.as_raw_fd());
    ioctl_value(fd, IntRequest(IOC_SET_OUTPUT), target as libc::c_ulong)
}

/// `PERF_EVENT_IOC_PAUSE_OUTPUT`: 1 pauses the ring, 0 resumes.
pub(crate) fn ioc_pause_output(fd: BorrowedFd<'_>, paused: bool) -> io::Result<()> {
    ioctl_value(fd, IntRequest(IOC_PAUSE_OUTPUT), libc::c_ulong::from(paused))
}

/// `PERF_EVENT_IOC_PERIOD`: the kernel reads a u64 through the pointer.
pub(crate) fn ioc_period(fd: BorrowedFd<'_>, period: u64) -> io::Result<()> {
    // SAFETY: the request reads one u64 through its pointer argument, which points at a live
    // u64 for the whole call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), IOC_PERIOD as _, &period as *const u64) } as libc::c_long).map(drop)
}

/// `PERF_EVENT_IOC_ID`: the kernel writes the event's id, a u64, through the pointer.
pub(crate) fn ioc_id(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: the request writes one u64 through its pointer argument, which points at a live,
    // writable u64 for the whole call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), IOC_ID as _, &mut id as *mut u64) } as libc::c_long)?;
    Ok(id)
}

/// `PERF_EVENT_IOC_SET_FILTER`: the kernel reads a NUL-terminated string (up to a page).
pub(crate) fn ioc_set_filter(fd: BorrowedFd<'_>, filter: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: the request reads a C string through its pointer argument; `filter` is
    // NUL-terminated and live for the whole call, so the kernel's read stops inside it.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), IOC_SET_FILTER as _, filter.as_ptr()) } as libc::c_long).map(drop)
}

/// `PERF_EVENT_IOC_MODIFY_ATTRIBUTES`: the kernel reads a `perf_event_attr` of the size its
/// `size` field (bytes 4..8) gives. A buffer shorter than that size (or than the 64 bytes of
/// the first attr version) is refused with EINVAL before the call, as the kernel would read past it.
pub(crate) fn ioc_modify_attributes(fd: BorrowedFd<'_>, attr: &[u8]) -> io::Result<()> {
    let size = attr.get(4..8).map_or(usize::MAX, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize);
    if attr.len() < size.max(64) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: the request reads `size` bytes (at least 64) of an attr through its pointer
    // argument, and `attr` holds that many (checked above) for the whole call; it only reads.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), IOC_MODIFY_ATTRIBUTES as _, attr.as_ptr()) } as libc::c_long).map(drop)
}

/// `read(2)` into `buf`; returns the bytes read.
pub(crate) fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is writable for its length.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    check(n as libc::c_long).map(|n| n as usize)
}

/// `poll(2)` over `fds` for readability; `events[i]` receives `revents`. Returns how many are
/// ready (0 on timeout). `timeout_ms` < 0 waits forever.
pub(crate) fn poll(fds: &[BorrowedFd<'_>], revents: &mut [i16], timeout_ms: i32) -> io::Result<usize> {
    let mut p: Vec<libc::pollfd> =
        fds.iter().map(|fd| libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 }).collect();
    let n = loop {
        // SAFETY: `p` is a valid array of `p.len()` pollfd structs for the call's duration.
        let ret = unsafe { libc::poll(p.as_mut_ptr(), p.len() as libc::nfds_t, timeout_ms) };
        match check(ret as libc::c_long) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    for (r, q) in revents.iter_mut().zip(&p) {
        *r = q.revents;
    }
    Ok(n as usize)
}

/// Wait until `fd` is writable (`POLLOUT`) or `timeout_ms` passes (< 0: forever); whether it
/// is. A signal ends the wait early (not writable).
pub(crate) fn wait_writable(fd: BorrowedFd<'_>, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: `p` is one valid pollfd for the call's duration.
    match check(unsafe { libc::poll(&mut p, 1, timeout_ms) } as libc::c_long) {
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
        Ok(_) => Ok(p.revents & libc::POLLOUT != 0),
    }
}

/// What an epoll entry watches for: input and hang-up (`on`), or nothing but what epoll
/// always reports (hang-up, error).
fn interest(on: bool) -> u32 {
    if on {
        (libc::EPOLLIN | libc::EPOLLHUP) as u32
    } else {
        0
    }
}

/// An epoll instance (level-triggered), for one descriptor that is readable when any of the
/// descriptors added to it is: what a [`Session`](crate::Session) hands to a reactor.
#[derive(Debug)]
pub(crate) struct Epoll(OwnedFd);

impl Epoll {
    pub(crate) fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 has no memory preconditions.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) } as libc::c_long)?;
        // SAFETY: the call returned a new file descriptor that nothing else owns.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd as i32) }))
    }

    /// Watch `fd` for input and hang-up, reported with `token`. The kernel drops it from the
    /// set when its last descriptor closes.
    pub(crate) fn add(&self, fd: BorrowedFd<'_>, token: u64) -> io::Result<()> {
        self.add_watching(fd, token, true)
    }

    /// [`add`](Epoll::add), watching for input (`on`) or for nothing but what epoll always
    /// reports (hang-up, error).
    pub(crate) fn add_watching(&self, fd: BorrowedFd<'_>, token: u64, on: bool) -> io::Result<()> {
        let events = interest(on);
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event the kernel only reads.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) }
            as libc::c_long)
        .map(drop)
    }

    /// Change what `fd` (already added) is watched for: input and hang-up (`on`), or nothing
    /// (a descriptor the caller will not be woken by for now).
    pub(crate) fn modify(&self, fd: BorrowedFd<'_>, token: u64, on: bool) -> io::Result<()> {
        let events = interest(on);
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event the kernel only reads.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_MOD, fd.as_raw_fd(), &mut ev) }
            as libc::c_long)
        .map(drop)
    }

    /// Stop watching `fd` (one that hung up: level-triggered, it would be reported again on
    /// every wait).
    pub(crate) fn delete(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: both descriptors are open; `ev` is ignored by EPOLL_CTL_DEL (older kernels
        // want it non-null).
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_DEL, fd.as_raw_fd(), &mut ev) }
            as libc::c_long)
        .map(drop)
    }

    /// `epoll_wait` into `ready` (token, `EPOLLIN`, `EPOLLHUP | EPOLLERR`) for at most
    /// `timeout_ms` (< 0: forever). A signal ends the wait early with nothing ready (EINTR
    /// is not an error here: the caller looks at why it was woken).
    pub(crate) fn wait(&self, ready: &mut Vec<(u64, bool, bool)>, timeout_ms: i32) -> io::Result<()> {
        const MAX: usize = 64;
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; MAX];
        ready.clear();
        // SAFETY: `evs` has room for MAX events, which the kernel writes at most.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), MAX as i32, timeout_ms) };
        match check(n as libc::c_long) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        for ev in &evs[..n as usize] {
            let (events, token) = (ev.events, ev.u64);
            let hangup = events & (libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0;
            ready.push((token, events & libc::EPOLLIN as u32 != 0, hangup));
        }
        Ok(())
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// An eventfd: a descriptor this process makes readable itself (a reader's "read again",
/// in its epoll set beside the rings).
#[derive(Debug)]
pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    pub(crate) fn new() -> io::Result<EventFd> {
        // SAFETY: eventfd has no memory preconditions.
        let fd = check(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) } as libc::c_long)?;
        // SAFETY: the call returned a new file descriptor that nothing else owns.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd as i32) }))
    }

    /// Make it readable (add 1 to its count).
    pub(crate) fn signal(&self) -> io::Result<()> {
        let one = 1u64.to_ne_bytes();
        // SAFETY: `one` is 8 readable bytes, the size an eventfd takes; the descriptor is open.
        check(unsafe { libc::write(self.0.as_raw_fd(), one.as_ptr().cast(), one.len()) } as libc::c_long).map(drop)
    }

    /// Make it unreadable again (take its count); a count of 0 is no error.
    pub(crate) fn clear(&self) -> io::Result<()> {
        let mut count = [0u8; 8];
        // SAFETY: `count` is 8 writable bytes, the size an eventfd gives; the descriptor is open.
        match check(unsafe { libc::read(self.0.as_raw_fd(), count.as_mut_ptr().cast(), count.len()) } as libc::c_long) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            r => r.map(drop),
        }
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Clock `clockid`'s resolution (`clock_getres`) and reading (`clock_gettime`), in ns; `None`
/// for a clock this kernel does not have.
#[cfg(feature = "perf-data")]
pub(crate) fn clock_ns(clockid: i32) -> Option<(u64, u64)> {
    let mut res = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: both pointers are to live, writable timespecs; an unknown clock is EINVAL.
    let ok = unsafe { libc::clock_getres(clockid, &mut res) == 0 && libc::clock_gettime(clockid, &mut now) == 0 };
    let ns = |t: libc::timespec| (t.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec as u64);
    ok.then(|| (ns(res), ns(now)))
}

/// `secs` since the epoch as local time (`localtime_r`): year, month (1-12), day, hour,
/// minute, second; `None` if the C library cannot convert it.
#[cfg(feature = "perf-data")]
pub(crate) fn local_time(secs: i64) -> Option<[u32; 6]> {
    let t: libc::time_t = secs;
    // SAFETY: an all-zero `tm` is a valid value of the plain C struct it is.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live values; localtime_r writes only `tm` and is thread-safe.
    let ok = !unsafe { libc::localtime_r(&t, &mut tm) }.is_null();
    let field = |v: libc::c_int| u32::try_from(v).ok();
    ok.then(|| {
        Some([
            field(tm.tm_year)? + 1900,
            field(tm.tm_mon)? + 1,
            field(tm.tm_mday)?,
            field(tm.tm_hour)?,
            field(tm.tm_min)?,
            field(tm.tm_sec)?,
        ])
    })
    .flatten()
}

/// `sched_setscheduler(0, SCHED_FIFO, priority)`: this thread (and the threads it starts)
/// real-time.
pub(crate) fn set_fifo(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: `param` is a live sched_param the kernel only reads; pid 0 is this thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } as libc::c_long).map(drop)
}

/// `sched_setaffinity(0, cpus)`: this thread runs on `cpus` only from now on. CPUs past
/// `CPU_SETSIZE` (1024) are left out.
pub(crate) fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: cpu_set_t is a plain bit array, all zeros a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus.iter().filter(|&&c| (c as usize) < libc::CPU_SETSIZE as usize) {
        // SAFETY: `cpu` is below CPU_SETSIZE (checked), so CPU_SET writes inside `set`.
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: `set` is a live cpu_set_t of the size passed, which the kernel only reads; pid 0
    // is this thread.
    check(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } as libc::c_long).map(drop)
}

/// The page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attr-reading request never lets the kernel read past the buffer it is given: a
    /// buffer shorter than its own `size` field, or than the first attr version, is refused
    /// before the call (any fd will do: the refusal comes first).
    #[test]
    fn modify_attributes_refuses_a_buffer_shorter_than_the_attr_it_claims() {
        let null = std::fs::File::open("/dev/null").unwrap();
        let mut attr = [0u8; 64];
        attr[4..8].copy_from_slice(&128u32.to_ne_bytes()); // claims 128 bytes, holds 64
        for short in [&attr[..], &attr[..8], &attr[..3], &[][..]] {
            let e = ioc_modify_attributes(null.as_fd(), short).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{} bytes", short.len());
        }
        // A well-formed buffer reaches the kernel: /dev/null answers ENOTTY.
        attr[4..8].copy_from_slice(&64u32.to_ne_bytes());
        assert_eq!(ioc_modify_attributes(null.as_fd(), &attr).unwrap_err().raw_os_error(), Some(libc::ENOTTY));
    }

    /// The request codes are the uapi's (`_IOW('$', 9, __u32)` and so on).
    #[test]
    fn request_codes_are_the_uapi_ones() {
        assert_eq!(
            [IOC_ENABLE, IOC_DISABLE, IOC_REFRESH, IOC_RESET, IOC_PERIOD, IOC_SET_OUTPUT],
            [0x2400, 0x2401, 0x2402, 0x2403, 0x4008_2404, 0x2405]
        );
        assert_eq!(
            [IOC_SET_FILTER, IOC_ID, IOC_PAUSE_OUTPUT, IOC_MODIFY_ATTRIBUTES],
            [0x4008_2406, 0x8008_2407, 0x4004_2409, 0x4008_240b]
        );
    }
}
