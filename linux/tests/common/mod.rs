//! Helpers shared by the real-kernel tests (each test crate uses some of them).
#![allow(dead_code)]

use std::time::{Duration, Instant};

use perfring_linux::{Event, EventAttr, LinuxError, Session, SessionBuilder, Target};

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

/// The errno of a refusal by this machine (not permitted, or not available here: see
/// `perfring_test_support::unavailable_here`), or `None` for any other error — an invalid
/// request (EINVAL, E2BIG) or a broken test, which must fail the test, not skip it.
pub fn refusal(e: &LinuxError) -> Option<i32> {
    let errno = match e {
        LinuxError::PermissionDenied { errno, .. } | LinuxError::NotSupported { errno } => *errno,
        LinuxError::Io { error, .. } => error.raw_os_error()?,
        _ => return None,
    };
    perfring_test_support::unavailable_here(errno).then_some(errno)
}

/// [`refusal`] of a session's error: an event's open, or the mapping of its ring (EPERM past
/// the locked-memory limit of an unprivileged user).
pub fn session_refusal(e: &LinuxError) -> Option<i32> {
    match e {
        LinuxError::OpenEvent { error, .. } => refusal(error),
        LinuxError::Io { error, .. } => {
            error.raw_os_error().filter(|&errno| perfring_test_support::unavailable_here(errno))
        }
        _ => None,
    }
}

/// Open `attr` on `target`, or skip where this machine refuses it ([`refusal`]: a visible,
/// counted skip, a failure in CI). Any other error fails the calling test: an EINVAL means
/// the attr is wrong, not that the machine cannot do it.
#[track_caller]
pub fn open_event(attr: &EventAttr, target: Target, group: Option<&Event>) -> Option<Event> {
    match Event::open(attr, target, group) {
        Ok(event) => Some(event),
        Err(e) if refusal(&e).is_some() => {
            perfring_test_support::skip(e);
            None
        }
        Err(e) => panic!("perf_event_open: {e} ({e:?}): {attr:?}"),
    }
}

/// Open `builder`'s session, or skip where this machine refuses it ([`session_refusal`]); any
/// other error fails the calling test. The skip line names the calling test's line.
#[track_caller]
pub fn open_session(builder: SessionBuilder) -> Option<Session> {
    match builder.open() {
        Ok(session) => Some(session),
        Err(e) if session_refusal(&e).is_some() => {
            perfring_test_support::skip(e);
            None
        }
        Err(e) => panic!("opening the session: {e} ({e:?})"),
    }
}

/// A copy of the running test binary in a folder of its own that every user can reach and
/// run (mode 0755), for a test that re-runs its binary as another user: the build's folder
/// may be private (a clone under `mktemp -d` or /root is mode 0700). Removed on drop.
pub struct ExeCopy {
    dir: std::path::PathBuf,
    exe: std::path::PathBuf,
}

impl ExeCopy {
    /// Copy the running binary into a new folder of the temporary directory.
    pub fn for_other_users() -> std::io::Result<ExeCopy> {
        use std::os::unix::fs::PermissionsExt;
        let me = std::env::current_exe()?;
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("perfring-exe-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        let exe = dir.join(me.file_name().unwrap_or("test".as_ref()));
        std::fs::copy(&me, &exe)?;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))?;
        Ok(ExeCopy { dir, exe })
    }

    /// The copy.
    pub fn path(&self) -> &std::path::Path {
        &self.exe
    }
}

impl Drop for ExeCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run `produce` on a thread pinned to `cpu` while this thread calls `poll` (which returns
/// what it read) until the producer has finished and a poll after that read nothing; returns
/// (records read, polls made). A reader whose wait policy strands records below its pause
/// would end the loop with records unread: the caller checks that nothing is left.
pub fn poll_while_streaming(cpu: u32, produce: impl FnOnce() + Send, mut poll: impl FnMut() -> u64) -> (u64, u64) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            perfring_test_support::bpf::pin_to_cpu(cpu).expect("pinning to an online CPU");
            produce();
            done.store(true, Ordering::Release);
        });
        let (mut read, mut polls) = (0, 0);
        loop {
            let finished = done.load(Ordering::Acquire);
            let got = poll();
            (read, polls) = (read + got, polls + 1);
            if finished && got == 0 {
                break (read, polls);
            }
        }
    })
}
