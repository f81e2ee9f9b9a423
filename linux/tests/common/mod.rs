//! Helpers shared by the real-kernel tests (each test crate uses some of them).
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Keep every CPU of `cpus` busy for `d`: a thread pinned to each spins, so that a CPU-wide
/// clock event samples every CPU. (An idle CPU's cpu-clock hrtimer does not reliably fire on
/// this VM: a session over both CPUs once saw 202 samples on one and none on the other.)
pub fn busy_on_every_cpu(cpus: &[u32], d: Duration) {
    std::thread::scope(|s| {
        for &cpu in cpus {
            s.spawn(move || {
                // SAFETY: `set` is a valid cpu_set_t for the calls; sched_setaffinity(0, …)
                // pins the calling thread only. If pinning fails, the thread spins unpinned.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu as usize, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
                let end = Instant::now() + d;
                while Instant::now() < end {
                    std::hint::spin_loop();
                }
            });
        }
    });
}

/// Open `builder`'s session, or skip saying why not (a kernel that refuses perf events:
/// `perfring_test_support::skip`, a failure in CI).
/// The skip line names the calling test's line.
#[track_caller]
pub fn open_session(builder: perfring_linux::SessionBuilder) -> Option<perfring_linux::Session> {
    match builder.open() {
        Ok(session) => Some(session),
        Err(e) => {
            perfring_test_support::skip(e);
            None
        }
    }
}
