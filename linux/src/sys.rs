//! Every system call of the crate, and so all of its `unsafe`: `perf_event_open`, the perf
//! ioctls, `read`, `mmap`/`munmap` and `poll`, through `libc`. Each returns `io::Result`; the
//! callers type the errors.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC)`. `attr` is the attr's
/// bytes, at least `attr.size` long; on E2BIG the kernel writes its own size into them.
pub(crate) fn perf_event_open(
    attr: &mut [u8],
    pid: i32,
    cpu: i32,
    group: Option<BorrowedFd<'_>>,
    flags: u64,
) -> io::Result<OwnedFd> {
    let group_fd = group.map_or(-1, |g| g.as_raw_fd());
    // The kernel reads `attr.size` bytes (the first u32s say how many) and may write the size
    // back on E2BIG; refuse a buffer shorter than the size it claims.
    let size = u32::from_ne_bytes([attr[4], attr[5], attr[6], attr[7]]) as usize;
    if attr.len() < size.max(64) {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: `attr` is a writable buffer of at least `attr.size` bytes (checked above), which
    // is all the kernel reads or writes; the other arguments are plain integers.
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

/// A shared mapping of `len` bytes of `fd` at `offset`, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mmap {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; every access goes through perfring's atomics.
unsafe impl Send for Mmap {}
// SAFETY: as for `Send`.
unsafe impl Sync for Mmap {}

impl Mmap {
    pub(crate) fn map(fd: BorrowedFd<'_>, len: usize, offset: u64, writable: bool) -> io::Result<Mmap> {
        let prot = libc::PROT_READ | if writable { libc::PROT_WRITE } else { 0 };
        // SAFETY: a new shared mapping chosen by the kernel; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), offset as libc::off_t)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        Ok(Mmap { ptr, len })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Store `v` into the 8-byte field at `offset` of the control page (the `aux_offset` and
    /// `aux_size` fields user space owns). `None` if the field is not inside the mapping or the
    /// mapping is not writable (a store would fault).
    pub(crate) fn store_u64(&self, offset: usize, v: u64, writable: bool) -> Option<()> {
        if !writable || offset % 8 != 0 || offset.checked_add(8)? > self.len {
            return None;
        }
        // SAFETY: the field is inside the live, writable mapping (checked above) and 8-aligned
        // (the mapping is page aligned); the kernel reads it only when the AUX area is mapped,
        // and every access is atomic. No ordering of its own (perfring's `LOCAL`): the `mmap`
        // system call that makes the kernel read the field comes after it in program order.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.ptr.as_ptr().add(offset).cast()) }
            .store(v, perfring::fences::LOCAL);
        Some(())
    }

    /// Load the 8-byte field at `offset` of the control page (`None` if outside the mapping).
    pub(crate) fn load_u64(&self, offset: usize) -> Option<u64> {
        if offset % 8 != 0 || offset.checked_add(8)? > self.len {
            return None;
        }
        // SAFETY: the field is inside the live mapping (checked above) and 8-aligned; the
        // access is atomic, as the kernel's are.
        Some(
            unsafe { std::sync::atomic::AtomicU64::from_ptr(self.ptr.as_ptr().add(offset).cast()) }
                .load(perfring::fences::LOCAL),
        )
    }

    /// A relaxed atomic load of the `usize` at byte `offset` of the mapping (`None` if it is
    /// not inside the mapping or not aligned). Defined on a read-only mapping too: Rust
    /// guarantees relaxed atomic loads up to the pointer's width on read-only memory (the
    /// "Atomic accesses to read-only memory" section of `core::sync::atomic`), and this is the
    /// only operation the reference made here is used for.
    pub(crate) fn load_relaxed_usize(&self, offset: usize) -> Option<usize> {
        const W: usize = std::mem::size_of::<usize>();
        if offset % W != 0 || offset.checked_add(W)? > self.len {
            return None;
        }
        // SAFETY: inside the live mapping (checked above), aligned (the mapping is page aligned
        // and `offset` a multiple of the width); only a relaxed load of at most the pointer
        // width is made through the reference, which is defined on read-only memory, and the
        // kernel's concurrent stores are atomic.
        let word = unsafe { &*self.ptr.as_ptr().add(offset).cast::<std::sync::atomic::AtomicUsize>() };
        Some(word.load(perfring::fences::LOCAL))
    }

    /// As [`Mmap::load_relaxed_usize`], for the `u32` at byte `offset`.
    pub(crate) fn load_relaxed_u32(&self, offset: usize) -> Option<u32> {
        if offset % 4 != 0 || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: as in `load_relaxed_usize`, for a 4-byte aligned word inside the mapping.
        let word = unsafe { &*self.ptr.as_ptr().add(offset).cast::<std::sync::atomic::AtomicU32>() };
        Some(word.load(perfring::fences::LOCAL))
    }

    /// perfring's view of a ring's mapping with `self` (a second mapping of the fd at
    /// `aux_offset`) attached as its AUX area.
    pub(crate) fn attach_as_aux<'a>(
        &'a self,
        ring: perfring::Mapping<'a>,
    ) -> Result<perfring::Mapping<'a>, perfring::LayoutError> {
        // SAFETY: the AUX mapping lives as long as the borrow of `self`; the kernel (the PMU
        // driver) writes it only below `aux_head`, and perfring reads it by the AUX protocol
        // (atomic word loads where it may be overwritten); its contents are not trusted.
        unsafe { ring.attach_aux(self.ptr.as_ptr(), self.len) }
    }

    /// perfring's view of a perf mapping: control page (and data area) of the kernel's layout.
    pub(crate) fn attach(&self) -> Result<perfring::Mapping<'_>, perfring::LayoutError> {
        // SAFETY: the mapping lives as long as the borrow of `self`; the kernel writes it only
        // through the ring protocol, and perfring reads it with atomic loads (its contents are
        // validated, never trusted for memory safety).
        unsafe { perfring::Mapping::attach(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region `map` created; nothing borrowed from it outlives
        // `self` (views borrow `&self`).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
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

/// A child forked to run a command, held between `fork` and `exec` until
/// [`HeldChild::release_and_exec`] (so that events can be opened on its pid, with
/// `enable_on_exec`, before it runs), and reaped with `waitpid`. (`std::process::Command`
/// cannot do this: its `spawn` waits for the `exec`.) Only `release_and_exec` releases it:
/// waiting for a held child never lets it run.
pub(crate) struct HeldChild {
    pid: i32,
    /// The write end of the gate the child waits on before `exec`: `None` once released.
    gate: Option<OwnedFd>,
    /// The read end of the pipe the child reports a failed `exec` on (its errno; closed by a
    /// successful `exec`, which the close-on-exec flag does).
    report: Option<OwnedFd>,
    /// The errno of a failed `exec`, once read from `report`: every later release reports it.
    exec_errno: Option<i32>,
    /// SIGKILL sent by [`HeldChild::kill`]: a held child then ends without running.
    killed: bool,
    status: Option<i32>,
}

impl HeldChild {
    /// Fork; the child waits for the gate, then (its stdout made its stderr if
    /// `stdout_to_stderr`) `execvp(argv[0], argv)`; if that fails it reports the errno and
    /// exits with status 127.
    pub(crate) fn spawn(argv: &[std::ffi::CString], stdout_to_stderr: bool) -> io::Result<HeldChild> {
        if argv.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // Everything the child uses is prepared before the fork: it must not allocate.
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        // From the pipes' creation until this process has closed the child's ends, no other
        // launch forks: a child held before `exec` keeps whatever it inherited, and one holding
        // the write end of this child's report pipe would keep `release_and_exec` from ever
        // seeing it close.
        static SPAWN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _spawning = SPAWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut fds = [0i32; 2];
        let mut rep = [0i32; 2];
        // SAFETY: `fds` and `rep` each have room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above; on failure the gate's descriptors are closed (they are ours alone).
        if unsafe { libc::pipe2(rep.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing the two descriptors pipe2 just gave us.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            return Err(e);
        }
        // SAFETY: fork has no preconditions; the child below only calls async-signal-safe
        // functions (close, read, dup2, execvp, write, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the child side of the fork: see above. `ptrs` is a NULL-terminated array of
            // pointers into `argv`, which the fork copied; `errno` is read from this thread's own
            // location.
            unsafe {
                libc::close(fds[1]);
                libc::close(rep[0]);
                let mut b = 0u8;
                while libc::read(fds[0], (&mut b as *mut u8).cast(), 1) < 0 && *libc::__errno_location() == libc::EINTR
                {
                }
                if stdout_to_stderr {
                    libc::dup2(2, 1);
                }
                libc::execvp(ptrs[0], ptrs.as_ptr());
                let errno = (*libc::__errno_location()).to_ne_bytes();
                libc::write(rep[1], errno.as_ptr().cast(), errno.len());
                libc::_exit(127);
            }
        }
        // SAFETY: closing the ends this process no longer needs; adopting the gate's write end
        // and the report's read end, which nothing else owns.
        let (gate, report) = unsafe {
            libc::close(fds[0]);
            libc::close(rep[1]);
            (OwnedFd::from_raw_fd(fds[1]), OwnedFd::from_raw_fd(rep[0]))
        };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(HeldChild { pid, gate: Some(gate), report: Some(report), exec_errno: None, killed: false, status: None })
    }

    /// Let the child exec, and wait until it has: the error `execvp` gave, if it failed (again
    /// on every later call). A child killed (or ended by a signal) while held never execs:
    /// ESRCH.
    pub(crate) fn release_and_exec(&mut self) -> io::Result<()> {
        if self.gate.is_some() && !self.held()? {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        if let Some(gate) = self.gate.take() {
            // One byte opens the gate. Not the close alone: a child another thread forked
            // while this one was held inherited a copy of the gate's write end, and the
            // read would wait for that child too before it saw the end of the pipe.
            // SAFETY: writing one byte from a valid buffer to our own pipe's write end.
            let wrote = unsafe { libc::write(gate.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
            if wrote != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(errno) = self.exec_errno {
            return Err(io::Error::from_raw_os_error(errno));
        }
        let Some(report) = self.report.take() else { return Ok(()) };
        let mut errno = [0u8; 4];
        let mut got = 0;
        while got < errno.len() {
            // SAFETY: reading into the rest of `errno` from a descriptor we own.
            let n = unsafe { libc::read(report.as_raw_fd(), errno[got..].as_mut_ptr().cast(), errno.len() - got) };
            match n {
                0 => return Ok(()), // closed by a successful exec
                n if n > 0 => got += n as usize,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => return Err(io::Error::last_os_error()),
            }
        }
        let errno = i32::from_ne_bytes(errno);
        self.exec_errno = Some(errno);
        Err(io::Error::from_raw_os_error(errno))
    }

    /// Send `signal` to the child unless it has been reaped.
    pub(crate) fn signal(&mut self, signal: i32) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: kill has no memory preconditions; `pid` is our own child, not yet reaped (so
        // the pid cannot have been reused).
        check(unsafe { libc::kill(self.pid, signal) } as libc::c_long).map(drop)
    }

    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGKILL the child (held or running) unless it has been reaped already.
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        self.signal(libc::SIGKILL)?;
        self.killed = true;
        Ok(())
    }

    /// Whether the child is still held before `exec`: not released, not killed, not ended (a
    /// signal from elsewhere may end a held child; it is reaped here if one did).
    pub(crate) fn held(&mut self) -> io::Result<bool> {
        if self.gate.is_none() || self.killed || self.status.is_some() {
            return Ok(false);
        }
        Ok(self.wait(false)?.is_none())
    }

    /// The exit status if the child has ended (`waitpid` with `WNOHANG`, or blocking). Never
    /// releases a held child; nor blocks on one (it would never end): a held child that has
    /// not ended is `Ok(None)` even when `block` (see [`HeldChild::held`]).
    pub(crate) fn wait(&mut self, block: bool) -> io::Result<Option<i32>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let block = block && (self.gate.is_none() || self.killed);
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child; `status` is a valid out-parameter.
            let r = unsafe { libc::waitpid(self.pid, &mut status, if block { 0 } else { libc::WNOHANG }) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Ok(None);
            }
            let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
            self.status = Some(code);
            return Ok(self.status);
        }
    }
}

impl Drop for HeldChild {
    fn drop(&mut self) {
        // A child never released never runs (it was held so that nothing of it runs
        // unobserved); a released one runs on. Either way it is reaped: no zombie.
        if self.gate.is_some() {
            let _ = self.kill();
        }
        let _ = self.wait(true);
    }
}

/// `kill(pid, signal)`; `pid` must be positive (no process groups, no "every process").
pub(crate) fn kill(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 0 {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    // SAFETY: kill has no memory preconditions.
    check(unsafe { libc::kill(pid, signal) } as libc::c_long).map(drop)
}

/// `pidfd_open(pid, 0)`: a descriptor readable once process `pid` has exited.
pub(crate) fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open has no memory preconditions.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: the call returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Install `handler` for `signal` (`signal(2)`). Each handler given here does nothing but
/// store to an atomic, which is async-signal-safe.
fn install(signal: libc::c_int, handler: extern "C" fn(libc::c_int)) -> io::Result<()> {
    // SAFETY: the handlers passed in (below) only store to atomics or do nothing.
    let prev = unsafe { libc::signal(signal, handler as libc::sighandler_t) };
    if prev == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

extern "C" fn on_sigchld(_: libc::c_int) {}

/// Catch SIGCHLD with a handler that does nothing: a child's exit then interrupts a wait in
/// progress (EINTR), where the default disposition (ignore) lets the wait sleep on.
pub(crate) fn wake_on_sigchld() -> io::Result<()> {
    install(libc::SIGCHLD, on_sigchld)
}

static SIGUSR2_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_sigusr2(_: libc::c_int) {
    SIGUSR2_SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Catch SIGUSR2 from now on; [`sigusr2_taken`] says whether one came.
pub(crate) fn catch_sigusr2() -> io::Result<()> {
    install(libc::SIGUSR2, on_sigusr2)
}

/// Whether SIGUSR2 arrived since the last call (or since [`catch_sigusr2`]); clears it.
pub(crate) fn sigusr2_taken() -> bool {
    SIGUSR2_SEEN.swap(false, std::sync::atomic::Ordering::Relaxed)
}

/// The first SIGINT or SIGTERM caught (0: none).
static SIGINT_SEEN: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn on_sigint(signal: libc::c_int) {
    let _ = SIGINT_SEEN.compare_exchange(
        0,
        signal,
        std::sync::atomic::Ordering::Relaxed,
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Catch SIGINT (and SIGTERM) from now on; [`sigint_seen`] says whether one came.
pub(crate) fn catch_sigint() -> io::Result<()> {
    install(libc::SIGINT, on_sigint)?;
    install(libc::SIGTERM, on_sigint)
}

/// Whether SIGINT or SIGTERM arrived since [`catch_sigint`].
pub(crate) fn sigint_seen() -> bool {
    sigint_signal().is_some()
}

/// Which of SIGINT and SIGTERM came first since [`catch_sigint`], if one did.
pub(crate) fn sigint_signal() -> Option<i32> {
    Some(SIGINT_SEEN.load(std::sync::atomic::Ordering::Relaxed)).filter(|&s| s != 0)
}

/// perfring's [`Mapping`](perfring::Mapping) of a [`Ring`](crate::Ring) (its control page and
/// data area, and its AUX area when from an [`AuxArea`](crate::AuxArea)), lent out so that it
/// cannot be [`split`](perfring::split): it dereferences to `&Mapping` and is
/// [`RingMemory`](perfring::RingMemory) by forwarding to it, but it is not
/// [`ExclusiveMemory`](perfring::ExclusiveMemory). The kernel produces into this ring: a second
/// producer would fault (the kernel maps the data pages read-only to user space) or race it.
///
/// The one consumer of an event's ring ([`Ring::consumer`](crate::Ring::consumer)) reads
/// through one that holds the ring's claim, given back when it is dropped.
#[derive(Debug)]
pub struct RingMapping<'r> {
    mapping: perfring::Mapping<'r>,
    claim: Option<std::sync::Arc<crate::ring::RingClaims>>,
}

impl<'r> RingMapping<'r> {
    /// `mapping`, holding the consumer claim of `claim` (taken by the caller) until dropped.
    pub(crate) fn new(mapping: perfring::Mapping<'r>, claim: Option<std::sync::Arc<crate::ring::RingClaims>>) -> Self {
        RingMapping { mapping, claim }
    }
}

impl<'r> std::ops::Deref for RingMapping<'r> {
    type Target = perfring::Mapping<'r>;
    fn deref(&self) -> &perfring::Mapping<'r> {
        &self.mapping
    }
}

impl Drop for RingMapping<'_> {
    fn drop(&mut self) {
        if let Some(claim) = &self.claim {
            claim.release_consumer();
        }
    }
}

// SAFETY: forwards every call to the `Mapping`, which upholds the contract for the same bytes.
unsafe impl perfring::RingMemory for RingMapping<'_> {
    #[inline(always)]
    fn size(&self, area: perfring::memory::Area) -> usize {
        self.mapping.size(area)
    }
    #[inline(always)]
    fn position(&self, p: perfring::memory::Position) -> &perfring::loom::AtomicUsize {
        self.mapping.position(p)
    }
    #[inline(always)]
    fn page_word(&self, offset: usize) -> &perfring::loom::AtomicU32 {
        self.mapping.page_word(offset)
    }
    #[inline(always)]
    fn paused(&self) -> &perfring::loom::AtomicBool {
        self.mapping.paused()
    }
    #[inline(always)]
    fn write_gen(&self) -> &perfring::loom::AtomicUsize {
        self.mapping.write_gen()
    }
    #[inline(always)]
    unsafe fn write(&self, area: perfring::memory::Area, offset: usize, src: &[u8]) {
        // SAFETY: the caller upholds `write`'s contract, which is the Mapping's.
        unsafe { self.mapping.write(area, offset, src) }
    }
    #[inline(always)]
    unsafe fn read(&self, area: perfring::memory::Area, offset: usize, dst: &mut [u8]) {
        // SAFETY: the caller upholds `read`'s contract, which is the Mapping's.
        unsafe { self.mapping.read(area, offset, dst) }
    }
    #[inline(always)]
    fn load_words(&self, area: perfring::memory::Area, offset: usize, dst: &mut [u8]) -> bool {
        self.mapping.load_words(area, offset, dst)
    }
    #[inline(always)]
    unsafe fn view(&self, area: perfring::memory::Area, offset: usize, len: usize) -> Option<&[u8]> {
        // SAFETY: the caller upholds `view`'s contract, which is the Mapping's.
        unsafe { self.mapping.view(area, offset, len) }
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

/// A loaded BPF program, as `BPF_OBJ_GET_INFO_BY_FD` describes it: what perf's
/// `perf_event__synthesize_bpf_events` turns into KSYMBOL and BPF_EVENT records.
#[cfg(feature = "perf-data")] // used by perf_data::bpf only
#[derive(Debug, Clone, Default)]
pub(crate) struct BpfProg {
    pub(crate) id: u32,
    pub(crate) tag: [u8; 8],
    pub(crate) name: String,
    /// Each (sub)program's JIT address, length and tag.
    pub(crate) funcs: Vec<(u64, u32, [u8; 8])>,
}

/// `bpf(cmd, attr, size)`.
#[cfg(feature = "perf-data")]
fn bpf(cmd: i32, attr: &mut [u64; 4]) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is 32 valid, zero-padded bytes of a `union bpf_attr` prefix that the
    // kernel reads (and for some commands writes) within its size.
    check(unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), std::mem::size_of_val(attr)) })
}

/// The loaded BPF programs (root, or CAP_SYS_ADMIN: an error otherwise), in id order, each
/// read with `BPF_PROG_GET_NEXT_ID`, `BPF_PROG_GET_FD_BY_ID` and two `BPF_OBJ_GET_INFO_BY_FD`
/// (the counts, then the arrays). A program unloaded meanwhile is passed over.
#[cfg(feature = "perf-data")] // used by perf_data::bpf only
pub(crate) fn bpf_programs() -> io::Result<Vec<BpfProg>> {
    const PROG_GET_NEXT_ID: i32 = 11;
    const PROG_GET_FD_BY_ID: i32 = 13;
    const OBJ_GET_INFO_BY_FD: i32 = 15;
    let mut out = Vec::new();
    let mut id = 0u32;
    loop {
        let mut attr = [u64::from(id), 0, 0, 0];
        match bpf(PROG_GET_NEXT_ID, &mut attr) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(out),
            Err(e) => return Err(e),
        }
        id = (attr[0] >> 32) as u32; // next_id
        let mut attr = [u64::from(id), 0, 0, 0];
        let Ok(fd) = bpf(PROG_GET_FD_BY_ID, &mut attr) else { continue };
        // SAFETY: the call returned a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        // struct bpf_prog_info up to prog_tags (offset 184) and beyond: 256 bytes.
        let mut info = [0u8; 256];
        let get = |info: &mut [u8; 256]| {
            let mut attr =
                [(fd.as_raw_fd() as u32 as u64) | ((info.len() as u64) << 32), info.as_mut_ptr() as u64, 0, 0];
            bpf(OBJ_GET_INFO_BY_FD, &mut attr).map(drop)
        };
        if get(&mut info).is_err() {
            continue;
        }
        let u32_at = |b: &[u8; 256], at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let (nsyms, nlens, ntags) =
            (u32_at(&info, 104) as usize, u32_at(&info, 108) as usize, u32_at(&info, 180) as usize);
        if nsyms == 0 || nsyms != nlens || nsyms != ntags || nsyms > 4096 {
            continue; // not JIT-compiled, or counts that do not agree (perf passes over it too)
        }
        let mut prog = BpfProg { id: u32_at(&info, 4), ..BpfProg::default() };
        prog.tag.copy_from_slice(&info[8..16]);
        let name = &info[64..80];
        prog.name = String::from_utf8_lossy(&name[..name.iter().position(|&c| c == 0).unwrap_or(16)]).into_owned();
        let mut addrs = vec![0u64; nsyms];
        let mut lens = vec![0u32; nsyms];
        let mut tags = vec![[0u8; 8]; nsyms];
        // Second call: only the three arrays asked for; every other array's count zeroed (a
        // count with no buffer would make the kernel write to address 0).
        let mut second = [0u8; 256];
        let put32 = |b: &mut [u8; 256], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        let put64 = |b: &mut [u8; 256], at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        put32(&mut second, 104, nsyms as u32);
        put32(&mut second, 108, nsyms as u32);
        put64(&mut second, 112, addrs.as_mut_ptr() as u64);
        put64(&mut second, 120, lens.as_mut_ptr() as u64);
        put32(&mut second, 180, nsyms as u32);
        put64(&mut second, 184, tags.as_mut_ptr() as u64);
        if get(&mut second).is_err() {
            continue;
        }
        prog.funcs = addrs.into_iter().zip(lens).zip(tags).map(|((a, l), t)| (a, l, t)).collect();
        out.push(prog);
    }
}
