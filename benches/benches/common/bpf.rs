//! What `make bench-bpf`'s two benchmarks (`bpf`: the perf event array's readers; `bpf_ringbuf`:
//! the BPF ring buffer's) measure the same way: the reader thread's CPU time, the median of a
//! row's runs, the first word of a payload, an epoll set for the peers that have none.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

/// The calling thread's CPU time (user + system), in seconds.
pub fn thread_cpu() -> f64 {
    // SAFETY: an all-zero rusage is a valid value for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a live, writable rusage; RUSAGE_THREAD is this thread.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The median of `v` (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The first 8 bytes of a payload given as two parts.
#[inline(always)]
pub fn first_word(a: &[u8], b: &[u8]) -> u64 {
    if let Some(&[b0, b1, b2, b3, b4, b5, b6, b7]) = a.get(..8) {
        return u64::from_ne_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
    }
    let mut w = [0u8; 8];
    let n = a.len().min(8);
    w[..n].copy_from_slice(&a[..n]);
    let m = (8 - n).min(b.len());
    w[n..n + m].copy_from_slice(&b[..m]);
    u64::from_ne_bytes(w)
}

/// An epoll set of `fds`, token = index.
pub fn epoll_of<'a>(fds: impl Iterator<Item = BorrowedFd<'a>>) -> OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: epoll_create1 has no memory preconditions; the fd is checked and owned below.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(ep >= 0, "epoll_create1");
    // SAFETY: a new descriptor nothing else owns.
    let ep = unsafe { OwnedFd::from_raw_fd(ep) };
    for (i, fd) in fds.enumerate() {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        // SAFETY: both descriptors are open; `ev` is a valid epoll_event.
        assert_eq!(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd.as_raw_fd(), &mut ev) }, 0);
    }
    ep
}

/// The tokens ready within `timeout_ms`.
pub fn epoll_wait(ep: &OwnedFd, timeout_ms: i32) -> Vec<usize> {
    let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 8];
    // SAFETY: `evs` has room for 8 events.
    let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), evs.as_mut_ptr(), 8, timeout_ms) };
    evs[..n.max(0) as usize].iter().map(|e| e.u64 as usize).collect()
}
