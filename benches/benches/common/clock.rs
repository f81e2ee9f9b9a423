//! The calling thread's CPU clock, for the benchmarks that time a reader thread (`bpf`,
//! `bpf_ringbuf` through `common/bpf.rs`, and `drain`).

/// The calling thread's CPU time (user + system), in seconds: `CLOCK_THREAD_CPUTIME_ID`, the
/// scheduler's own count (`getrusage`'s split into user and system is scaled from ticks and
/// kept monotonic, so that differences over short calls drift).
pub fn thread_cpu() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live, writable timespec; the clock exists on every Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}
