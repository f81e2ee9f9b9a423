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

/// An ioctl taking an integer argument (or none).
pub(crate) fn ioctl_int(fd: BorrowedFd<'_>, request: u64, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: `request` is one of the perf ioctls whose argument is an integer, not a pointer
    // (ENABLE, DISABLE, RESET, REFRESH, SET_OUTPUT, PAUSE_OUTPUT); the fd is open.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) } as libc::c_long).map(drop)
}

/// An ioctl whose argument points to `arg` (PERIOD: a u64 read; ID: a u64 written;
/// SET_FILTER: a C string read; MODIFY_ATTRIBUTES: an attr read).
pub(crate) fn ioctl_ptr(fd: BorrowedFd<'_>, request: u64, arg: &mut [u8]) -> io::Result<()> {
    // SAFETY: `arg` is a live, writable buffer of the size the request reads or writes (the
    // callers pass 8 bytes for PERIOD and ID, a NUL-terminated string for SET_FILTER, the
    // attr's bytes for MODIFY_ATTRIBUTES).
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg.as_mut_ptr()) } as libc::c_long).map(drop)
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

    /// Watch `fd` for input and hang-up. The kernel drops it from the set when its last
    /// descriptor closes.
    pub(crate) fn add(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLHUP) as u32, u64: 0 };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event the kernel only reads.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) }
            as libc::c_long)
        .map(drop)
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
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

/// A child forked to run a command, held between `fork` and `exec` until [`HeldChild::release`]
/// (so that events can be opened on its pid, with `enable_on_exec`, before it runs), and reaped
/// with `waitpid`. (`std::process::Command` cannot do this: its `spawn` waits for the `exec`.)
pub(crate) struct HeldChild {
    pid: i32,
    gate: Option<OwnedFd>,
    status: Option<i32>,
}

impl HeldChild {
    /// Fork; the child waits for the gate, then `execvp(argv[0], argv)` (exit status 127 if
    /// that fails).
    pub(crate) fn spawn(argv: &[std::ffi::CString]) -> io::Result<HeldChild> {
        if argv.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // Everything the child uses is prepared before the fork: it must not allocate.
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fork has no preconditions; the child below only calls async-signal-safe
        // functions (close, read, execvp, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the child side of the fork: see above. `ptrs` is a NULL-terminated array of
            // pointers into `argv`, which the fork copied.
            unsafe {
                libc::close(fds[1]);
                let mut b = 0u8;
                while libc::read(fds[0], (&mut b as *mut u8).cast(), 1) < 0 && *libc::__errno_location() == libc::EINTR
                {
                }
                libc::execvp(ptrs[0], ptrs.as_ptr());
                libc::_exit(127);
            }
        }
        // SAFETY: closing the read end this process no longer needs; adopting the write end,
        // which nothing else owns.
        let gate = unsafe {
            libc::close(fds[0]);
            OwnedFd::from_raw_fd(fds[1])
        };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(HeldChild { pid, gate: Some(gate), status: None })
    }

    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGKILL the child (held or running) unless it has been reaped already.
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: kill has no memory preconditions; `pid` is our own child, not yet reaped (so
        // the pid cannot have been reused).
        check(unsafe { libc::kill(self.pid, libc::SIGKILL) } as libc::c_long).map(drop)
    }

    /// Let the child exec (closing the gate ends its read).
    pub(crate) fn release(&mut self) {
        self.gate = None;
    }

    /// The exit status if the child has ended (`waitpid` with `WNOHANG`, or blocking).
    pub(crate) fn wait(&mut self, block: bool) -> io::Result<Option<i32>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        self.release();
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
        // Never leave a zombie: let it run and reap it.
        let _ = self.wait(true);
    }
}

static SIGINT_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    SIGINT_SEEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Catch SIGINT (and SIGTERM) from now on; [`sigint_seen`] says whether one came.
pub(crate) fn catch_sigint() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installing a handler that only stores to an atomic (async-signal-safe).
        let prev = unsafe { libc::signal(sig, on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t) };
        if prev == libc::SIG_ERR {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether SIGINT or SIGTERM arrived since [`catch_sigint`].
pub(crate) fn sigint_seen() -> bool {
    SIGINT_SEEN.load(std::sync::atomic::Ordering::Relaxed)
}
