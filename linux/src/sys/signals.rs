//! The signals the crate catches (SIGCHLD to wake a wait, SIGUSR2, SIGINT and SIGTERM), each
//! handler a store to an atomic.

use std::io;

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
