//! Every system call of the crate, and so all of its `unsafe`: `perf_event_open`, the perf
//! ioctls, `read`, `mmap`/`munmap` and `poll`, through `libc`. Each returns `io::Result`; the
//! callers type the errors.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
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
