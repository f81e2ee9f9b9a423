//! [`UserRingBuffer`]: the writer of `BPF_MAP_TYPE_USER_RINGBUF` — user space produces, a BPF
//! program drains with `bpf_user_ringbuf_drain`.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use perfring::bpf_ringbuf::{RingbufError, RingbufMapping, SpinLock, UserReservation};

use crate::error::{io as io_err, LinuxError};
use crate::ring_buffer::RingMap;
use crate::sys;
use crate::wait::timeout_ms;

/// The pause between tries of [`UserRingBuffer::reserve_wait`] while the ring has room, but
/// not enough.
const ROOM_PAUSE: Duration = Duration::from_micros(50);

/// The writer of a user ring buffer (`BPF_MAP_TYPE_USER_RINGBUF`, Linux 6.1): samples
/// reserved in the ring, written in place, then submitted (or discarded), for a BPF program to
/// drain with `bpf_user_ringbuf_drain` in the order they were reserved (libbpf's
/// `user_ring_buffer__reserve`, `__submit`, `__discard`), on perfring's
/// [`UserProducer`](perfring::bpf_ringbuf::UserProducer).
///
/// The ring is mapped as the kernel allows: the consumer page read-only, the producer page and
/// the data area (twice, so that a sample never wraps) writable. Reservations take a spin lock
/// (libbpf leaves that to the caller); a [`UserSample`] is written in place and submitted or
/// discarded in any order. The program drains up to the first sample still reserved.
///
/// Waiting for room: [`reserve_wait`](UserRingBuffer::reserve_wait) polls the map's
/// descriptor, which the kernel makes writable when the ring has room (a drain that took
/// samples wakes it); a caller's own loop polls [`map_fd`](UserRingBuffer::map_fd) the same way.
///
/// ```no_run
/// # fn example() -> Result<(), perfring_linux::LinuxError> {
/// use std::time::Duration;
/// use perfring_linux::UserRingBuffer;
/// let ring = UserRingBuffer::create(16)?; // 64 KiB; the program drains ring.map_fd()
/// let mut sample = ring.reserve_wait(16, Some(Duration::from_millis(100)))?;
/// sample.bytes().copy_from_slice(b"0123456789abcdef");
/// sample.submit();
/// ring.reserve(8)?.discard(); // the drain skips it
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct UserRingBuffer {
    /// Declared before the map: unmapped before the descriptor (and the claim) go.
    maps: sys::UserRingbufMaps,
    map: RingMap,
}

impl UserRingBuffer {
    /// A writer of a new BPF_MAP_TYPE_USER_RINGBUF of `data_pages` pages (a power of two: the
    /// map's `max_entries` is `data_pages` × the page size), for a program to drain
    /// ([`map_fd`](UserRingBuffer::map_fd)).
    ///
    /// Errors: [`LinuxError::RingSize`], and [`LinuxError::Io`] naming the system call
    /// refused (`BPF_MAP_CREATE` needs CAP_BPF or root, and Linux 6.1; `mmap`).
    pub fn create(data_pages: usize) -> Result<UserRingBuffer, LinuxError> {
        Self::new(RingMap::create(sys::MAP_TYPE_USER_RINGBUF, data_pages)?)
    }

    /// A writer of the caller's BPF_MAP_TYPE_USER_RINGBUF (the map its program drains).
    ///
    /// Errors: [`LinuxError::NotARingbuf`] for a map of another type,
    /// [`LinuxError::RingbufTaken`] if this process writes it already, [`LinuxError::Io`]
    /// naming the system call refused.
    pub fn from_map(map: OwnedFd) -> Result<UserRingBuffer, LinuxError> {
        Self::new(RingMap::adopt(map, sys::MAP_TYPE_USER_RINGBUF)?)
    }

    fn new(map: RingMap) -> Result<UserRingBuffer, LinuxError> {
        let maps =
            sys::UserRingbufMaps::map(map.fd.as_fd(), map.size).map_err(io_err("mmap of the user ring buffer"))?;
        Ok(UserRingBuffer { maps, map })
    }

    /// Reserve a sample of `size` bytes now. Errors: [`LinuxError::Reserve`] — the ring has no room for it now
    /// ([`RingbufError::NoSpace`]), or ever ([`RingbufError::SampleTooLarge`]).
    pub fn reserve(&self, size: usize) -> Result<UserSample<'_>, LinuxError> {
        match self.maps.producer().reserve(size) {
            Ok(reservation) => Ok(UserSample { reservation }),
            Err(error) => Err(LinuxError::Reserve { error }),
        }
    }

    /// Reserve a sample of `size` bytes, waiting up to `timeout` (`None`: forever) for the
    /// program to drain room for it (libbpf's `user_ring_buffer__reserve_blocking`): between
    /// tries, the map's descriptor is polled for `POLLOUT`, which the kernel reports while the
    /// ring is not full and signals when a drain takes samples. Errors as for
    /// [`reserve`](UserRingBuffer::reserve), the last try's, once `timeout` has passed.
    pub fn reserve_wait(&self, size: usize, timeout: Option<Duration>) -> Result<UserSample<'_>, LinuxError> {
        let start = Instant::now();
        loop {
            let error = match self.reserve(size) {
                Err(LinuxError::Reserve { error: error @ RingbufError::NoSpace { .. } }) => error,
                other => return other,
            };
            let left = match timeout {
                None => None,
                Some(t) => match t.checked_sub(start.elapsed()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(LinuxError::Reserve { error }),
                },
            };
            // A full ring is not writable: sleep until a drain makes room. POLLOUT means "some
            // room", maybe less than this sample needs: then pause a little before the next
            // try, so that a ring with a little room is not a busy loop.
            let ms = timeout_ms(left); // at least 1: `left` is not zero
            if sys::wait_writable(self.map.fd.as_fd(), ms).map_err(io_err("poll of the user ring buffer"))? {
                std::thread::sleep(ROOM_PAUSE);
            }
        }
    }

    /// The BPF_MAP_TYPE_USER_RINGBUF (for a program to reference: the `BPF_LD_IMM64` map fd
    /// of its `bpf_user_ringbuf_drain`). For a caller's own loop: the kernel reports it
    /// writable (`POLLOUT`, `EPOLLOUT`) while the ring has room.
    pub fn map_fd(&self) -> BorrowedFd<'_> {
        self.map.fd.as_fd()
    }
}

/// A sample reserved in a [`UserRingBuffer`]: write it ([`bytes`](UserSample::bytes)), then
/// [`submit`](UserSample::submit) or [`discard`](UserSample::discard) it. Dropped without
/// either, it is discarded (the drain must not stop at it forever).
#[must_use = "a sample is discarded when dropped"]
#[derive(Debug)]
pub struct UserSample<'r> {
    reservation: UserReservation<'r, RingbufMapping<'r>, SpinLock>,
}

impl UserSample<'_> {
    /// The sample's bytes in the ring, to write (their contents are whatever the ring held
    /// there: write them all).
    pub fn bytes(&mut self) -> &mut [u8] {
        // The kernel's double mapping: the sample is always one slice.
        self.reservation.as_mut_slices().map_or(&mut [], |(sample, _)| sample)
    }

    /// Submit the sample: the program's drain hands it to its callback.
    pub fn submit(self) {
        self.reservation.submit();
    }

    /// Discard the sample: the program's drain skips it.
    pub fn discard(self) {
        self.reservation.discard();
    }
}
