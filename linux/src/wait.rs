//! Readiness without a runtime: every [`Event`](crate::Event) and [`Ring`](crate::Ring) is
//! [`AsFd`](std::os::fd::AsFd), which is all epoll, `tokio::io::unix::AsyncFd` or smol's
//! `Async` need; and [`wait`] blocks on several at once with `poll(2)`.
//!
//! The kernel reports a ring readable once per wakeup (the watermark or `wakeup_events`
//! crossed), not whenever data is present: drain every ring after a wakeup and once more at the
//! end. When the monitored task exits, its event reports a hang-up ([`Readiness::hangup`]):
//! the end of the recording, not an error to retry.

use std::os::fd::BorrowedFd;
use std::time::Duration;

use crate::error::{io as io_err, LinuxError};
use crate::sys;

/// How long the BPF readers' `poll` pauses between reads of a busy stream instead of waiting
/// for a wakeup, unless told otherwise ([`RingBuffer::batch_interval`](crate::RingBuffer::batch_interval),
/// [`PerfEventArray::batch_interval`](crate::PerfEventArray::batch_interval)).
pub(crate) const BATCH_INTERVAL: Duration = Duration::from_micros(50);

/// What `poll(2)` said of one descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Readiness {
    /// A wakeup: records to drain (`POLLIN`).
    pub readable: bool,
    /// The monitored task exited and has no children left (`POLLHUP`): drain, then stop.
    pub hangup: bool,
    /// The event is in error (`POLLERR`), e.g. a pinned event that lost its PMU.
    pub error: bool,
}

/// `timeout` as the milliseconds of `poll(2)` and `epoll_wait(2)`: `None` is -1 (forever), a
/// duration is rounded up (a wait lasts at least what was asked) and capped at `i32::MAX`.
pub(crate) fn timeout_ms(timeout: Option<Duration>) -> i32 {
    timeout.map_or(-1, |t| t.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32)
}

/// Wait until one of `fds` is ready or `timeout` passes (`None`: forever); returns each one's
/// readiness, in order (all not-ready on a timeout). With no `fds` there is nothing to wait
/// for: an empty `Vec` at once, whatever the `timeout` (it neither blocks forever nor sleeps).
///
/// The kernel reports a ring readable once per wakeup (the watermark or `wakeup_events`
/// crossed), not whenever data is present: drain every ring after a wakeup and once more at the
/// end. When the monitored task exits, its event reports a hang-up ([`Readiness::hangup`]):
/// the end of the recording, not an error to retry.
pub fn wait(fds: &[BorrowedFd<'_>], timeout: Option<Duration>) -> Result<Vec<Readiness>, LinuxError> {
    if fds.is_empty() {
        return Ok(Vec::new());
    }
    let ms = timeout_ms(timeout);
    let mut revents = vec![0i16; fds.len()];
    sys::poll(fds, &mut revents, ms).map_err(io_err("poll(2)"))?;
    Ok(revents
        .iter()
        .map(|&r| Readiness {
            readable: r & libc::POLLIN != 0,
            hangup: r & libc::POLLHUP != 0,
            error: r & (libc::POLLERR | libc::POLLNVAL) != 0,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_in_milliseconds_is_rounded_up_so_that_no_wait_ends_early() {
        assert_eq!(timeout_ms(None), -1, "forever");
        assert_eq!(timeout_ms(Some(Duration::ZERO)), 0, "no wait");
        assert_eq!(timeout_ms(Some(Duration::from_nanos(1))), 1);
        assert_eq!(timeout_ms(Some(Duration::from_micros(49_500))), 50);
        assert_eq!(timeout_ms(Some(Duration::from_millis(50))), 50);
        assert_eq!(timeout_ms(Some(Duration::MAX)), i32::MAX);
    }
}
