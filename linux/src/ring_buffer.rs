//! [`RingBuffer`]: the reader of `BPF_MAP_TYPE_RINGBUF` — one ring shared by every CPU, read
//! zero-copy by perfring's [`RingbufConsumer`](perfring::bpf_ringbuf::RingbufConsumer), several
//! rings in one epoll set.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use perfring::bpf_ringbuf::{Config, Publish};

use crate::claims::MapClaim;
use crate::error::{io as io_err, LinuxError};
use crate::sys;

use crate::wait::{timeout_ms, BATCH_INTERVAL};

/// A ring of a [`RingBuffer`] (or of a [`UserRingBuffer`](crate::UserRingBuffer)): its map,
/// checked and claimed.
#[derive(Debug)]
pub(crate) struct RingMap {
    pub(crate) fd: OwnedFd,
    pub(crate) size: usize,
    _claim: MapClaim,
}

impl RingMap {
    /// A new map of `map_type` (ringbuf or user ringbuf) with a data area of `data_pages`
    /// pages (its `max_entries` in bytes).
    pub(crate) fn create(map_type: u32, data_pages: usize) -> Result<RingMap, LinuxError> {
        let bytes = data_pages.checked_mul(sys::page_size()).and_then(|b| u32::try_from(b).ok());
        let Some(entries) = bytes.filter(|_| data_pages.is_power_of_two()) else {
            return Err(LinuxError::RingSize { data_pages });
        };
        let fd = sys::create_ring_map(map_type, entries).map_err(io_err("BPF_MAP_CREATE (ring buffer)"))?;
        RingMap::adopt(fd, map_type)
    }

    /// The caller's map, if it is of `map_type` and not already claimed in this process.
    pub(crate) fn adopt(fd: OwnedFd, map_type: u32) -> Result<RingMap, LinuxError> {
        let info = sys::map_info(fd.as_fd()).map_err(io_err("BPF_OBJ_GET_INFO_BY_FD of the map"))?;
        if info.map_type != map_type {
            return Err(LinuxError::NotARingbuf { map_type: info.map_type, expected: map_type });
        }
        let claim = MapClaim::take(info.id).ok_or(LinuxError::RingbufTaken { map_id: info.id })?;
        Ok(RingMap { fd, size: info.max_entries as usize, _claim: claim })
    }
}

/// One ring of the reader: its map and perfring's consumer over its mappings.
#[derive(Debug)]
struct Ring {
    /// Declared before the map: unmapped before the descriptor (and the claim) go.
    maps: sys::KernelRingbuf,
    map: RingMap,
}

/// The reader of a BPF ring buffer (`BPF_MAP_TYPE_RINGBUF`, Linux 5.8), or of several in one
/// epoll set (libbpf's `ring_buffer__add`): a program's `bpf_ringbuf_output`, or its
/// `bpf_ringbuf_reserve` then `bpf_ringbuf_submit`, reaches the callback as a `&[u8]` borrowed
/// from the ring — zero-copy (the kernel maps the data area twice, so no record wraps), no
/// allocation per record — with the index of its ring (the order of [`add`](RingBuffer::add),
/// 0 the first). Records of one ring come in the order they were reserved, each once;
/// discarded ones (`bpf_ringbuf_discard`) are skipped and counted
/// ([`discarded`](RingBuffer::discarded)).
///
/// Each ring is mapped as libbpf maps it: the consumer page writable, the producer page and
/// the data area (twice) read-only. Per read of a ring, `producer_pos` is loaded once
/// (acquire, perfring's (R5)), each header once (acquire, (R6)), and `consumer_pos` stored once
/// (release, (R7)) — libbpf stores it after every record; lengths and positions are checked, not
/// the headers' `pg_off` (the data pages are the kernel's alone). What the kernel could not reserve is
/// not counted by the ring (the program sees the failure); what the ring holds that the kernel
/// never writes is [`LinuxError::BadRingbuf`], never a panic or an endless loop.
///
/// One reader per ring: `consumer_pos` has one writer. A map read already in this process
/// (through any descriptor) is refused ([`LinuxError::RingbufTaken`]); a reader of the same
/// map in another process would free records under this one's borrowed slices, as it would
/// under libbpf's.
///
/// # Wait policy
///
/// The kernel wakes the reader when a record is committed at the position the reader has
/// published as `consumer_pos` — that is, when the reader had caught up. A reader that waits
/// for a wakeup after every read of a fast stream is caught up each time, and costs the
/// producers a wakeup (an irq_work and a wake-up of the waiting thread) per record or two: the
/// kernel's own benchmark shows such a reader losing to libbpf's in parallel-producer mode.
/// [`poll`](RingBuffer::poll) does not wait for a wakeup after a read that found more than one
/// record: it pauses for the [batch interval](RingBuffer::batch_interval) (50 µs) and reads
/// again, and the records of the interval are read in one batch. Each read publishes its
/// position up to the start of the last record it read, not past it
/// ([`Publish::HoldLast`](perfring::bpf_ringbuf::Publish::HoldLast)): the next commit finds
/// the reader behind and sends no wakeup, so a busy stream costs its producers none (a wakeup
/// is an irq_work on the producing CPU even when nobody sleeps). Only when a read finds at
/// most one record does the next `poll` publish everything, fence and check again (perfring's
/// (R8), what aya's reader lacked), and wait in `epoll_wait` for the kernel's wakeup. A record
/// then waits at most about one interval (plus the timer's slack) longer than with a wakeup
/// per record; `batch_interval(None)` waits for a wakeup every time.
///
/// Readiness: the reader is [`AsFd`] (its epoll set: readable when a ring holds unread data),
/// for epoll, `tokio::io::unix::AsyncFd` or smol; call [`consume`](RingBuffer::consume) when
/// it is readable. (Such a caller chooses its own pause between reads.) `consume` publishes
/// everything it read and looks again before it returns, so that an edge-triggered waiter
/// (tokio's) is woken for every record it has not read; after a `poll` that read a busy
/// stream, the descriptor stays readable until the next `poll` or `consume` (the record the
/// wait policy holds).
///
/// ```no_run
/// // `program_map_fd`: the map the BPF program outputs to (from aya, libbpf, or your loader).
/// fn read_events(program_map_fd: std::os::fd::OwnedFd) -> Result<(), perfring_linux::LinuxError> {
///     use std::time::Duration;
///     use perfring_linux::RingBuffer;
///     let (mut events, mut bytes) = (0u64, 0usize);
///     let mut reader = RingBuffer::from_map(program_map_fd, |_ring, sample: &[u8]| {
///         events += 1;
///         bytes += sample.len();
///     })?;
///     for _ in 0..10 {
///         reader.poll(Some(Duration::from_millis(100)))?;
///     }
///     let discarded = reader.discarded();
///     drop(reader);
///     println!("{events} events ({bytes} bytes), {discarded} discarded");
///     Ok(())
/// }
/// ```
///
/// The same map read in tokio (`AsyncFd` takes the reader itself):
///
/// ```no_run
/// async fn read_events(program_map_fd: std::os::fd::OwnedFd) -> Result<(), Box<dyn std::error::Error>> {
///     use tokio::io::unix::AsyncFd;
///     let mut events = 0u64;
///     let reader = perfring_linux::RingBuffer::from_map(program_map_fd, |_ring, _sample: &[u8]| events += 1)?;
///     // SAFETY: the reader keeps its epoll descriptor open, with the same number, for as long
///     // as the AsyncFd holds it.
///     let mut fd = unsafe { AsyncFd::register(reader) }.map_err(|e| e.to_string())?;
///     loop {
///         let mut guard = fd.readable_mut().await?;
///         guard.get_inner_mut().consume()?; // every record, or the descriptor readable again
///         guard.clear_ready();
///     }
/// }
/// ```
pub struct RingBuffer<F: FnMut(usize, &[u8])> {
    rings: Vec<Ring>,
    epoll: sys::Epoll,
    ready: Vec<(u64, bool, bool)>,
    /// In the epoll set (token [`AGAIN`]): made readable by a `consume` that returned with
    /// records left, which no wakeup of the kernel may announce.
    again: sys::EventFd,
    /// `again` is readable.
    signaled: bool,
    /// The pause between reads of a busy stream; `None`: wait for a wakeup every time.
    interval: Option<Duration>,
    /// The last read found more than one record: read again after the interval.
    busy: bool,
    on_sample: F,
}

impl<F: FnMut(usize, &[u8])> std::fmt::Debug for RingBuffer<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingBuffer")
            .field("rings", &self.rings)
            .field("interval", &self.interval)
            .field("busy", &self.busy)
            .finish_non_exhaustive()
    }
}

impl<F: FnMut(usize, &[u8])> RingBuffer<F> {
    /// A reader of a new BPF_MAP_TYPE_RINGBUF of `data_pages` pages (a power of two: the map's
    /// `max_entries` is `data_pages` × the page size), for a program to output to
    /// ([`map_fd`](RingBuffer::map_fd)).
    ///
    /// Errors: [`LinuxError::RingSize`], and [`LinuxError::Io`] naming the system call
    /// refused (`BPF_MAP_CREATE` needs CAP_BPF or root; `mmap`).
    pub fn create(data_pages: usize, on_sample: F) -> Result<RingBuffer<F>, LinuxError> {
        let map = RingMap::create(sys::MAP_TYPE_RINGBUF, data_pages)?;
        Self::with_first(map, on_sample)
    }

    /// A reader of the caller's BPF_MAP_TYPE_RINGBUF (the map its program outputs to, loaded
    /// by aya, libbpf or by hand); `on_sample(ring, sample)` gets every record of it (ring 0)
    /// and of the rings [added](RingBuffer::add) later.
    ///
    /// Errors: [`LinuxError::NotARingbuf`] for a map of another type,
    /// [`LinuxError::RingbufTaken`] if this process reads it already, [`LinuxError::Io`]
    /// naming the system call refused.
    pub fn from_map(map: OwnedFd, on_sample: F) -> Result<RingBuffer<F>, LinuxError> {
        let map = RingMap::adopt(map, sys::MAP_TYPE_RINGBUF)?;
        Self::with_first(map, on_sample)
    }

    fn with_first(map: RingMap, on_sample: F) -> Result<RingBuffer<F>, LinuxError> {
        let epoll = sys::Epoll::new().map_err(io_err("epoll_create1"))?;
        let again = sys::EventFd::new().map_err(io_err("eventfd"))?;
        epoll.add(again.fd(), AGAIN).map_err(io_err("epoll_ctl"))?;
        let mut reader = RingBuffer {
            rings: Vec::new(),
            epoll,
            ready: Vec::new(),
            again,
            signaled: false,
            interval: Some(BATCH_INTERVAL),
            busy: false,
            on_sample,
        };
        reader.push(map)?;
        Ok(reader)
    }

    /// Read another BPF_MAP_TYPE_RINGBUF in the same epoll set and callback (libbpf's
    /// `ring_buffer__add`); returns its index, which the callback is given with its records.
    /// Errors as for [`from_map`](RingBuffer::from_map).
    pub fn add(&mut self, map: OwnedFd) -> Result<usize, LinuxError> {
        let map = RingMap::adopt(map, sys::MAP_TYPE_RINGBUF)?;
        self.push(map)
    }

    fn push(&mut self, map: RingMap) -> Result<usize, LinuxError> {
        let mut maps = sys::KernelRingbuf::map(map.fd.as_fd(), map.size).map_err(io_err("mmap of the ring buffer"))?;
        maps.configure(read_config(self.interval));
        let index = self.rings.len();
        self.epoll.add(map.fd.as_fd(), index as u64).map_err(io_err("epoll_ctl"))?;
        self.rings.push(Ring { maps, map });
        Ok(index)
    }

    /// The wait policy of [`poll`](RingBuffer::poll) (see [`RingBuffer`]): after a read that
    /// found more than one record, pause `interval` and read again instead of waiting for a
    /// wakeup (default 50 µs: the ring must hold what the producers write in that time, a
    /// little more with the timer's slack). `None`: wait for the kernel's wakeup after every
    /// read, as libbpf's `ring_buffer__poll` does.
    pub fn batch_interval(&mut self, interval: Option<Duration>) {
        self.interval = interval;
        self.busy &= interval.is_some();
        for ring in &mut self.rings {
            ring.maps.release();
            ring.maps.configure(read_config(interval));
        }
    }

    /// Read the records there, or else wait until a ring has one (its wakeup) or `timeout`
    /// passes (`None`: forever), and read them; returns how many the callback got. A signal
    /// ends the wait early. After a read that found more than one record, the next call pauses
    /// for the batch interval before it reads (see [`RingBuffer`]).
    pub fn poll(&mut self, timeout: Option<Duration>) -> Result<u64, LinuxError> {
        let start = Instant::now();
        self.take_again()?;
        if let (true, Some(interval)) = (self.busy, self.interval) {
            std::thread::sleep(timeout.map_or(interval, |t| t.min(interval)));
            let n = self.read_all()?;
            if n > 0 {
                self.busy = n > 1;
                return Ok(n);
            }
            self.busy = false;
        }
        let n = if !self.all_asleep() {
            self.read_all()?
        } else {
            let ms = timeout_ms(timeout.map(|t| t.saturating_sub(start.elapsed())));
            self.epoll.wait(&mut self.ready, ms).map_err(io_err("epoll_wait"))?;
            // `again` is not among them: `take_again` above left it unreadable.
            let mut n = 0;
            for i in 0..self.ready.len() {
                n += self.consume_ring(self.ready[i].0 as usize)?;
            }
            n
        };
        self.busy = self.interval.is_some() && n > 1;
        Ok(n)
    }

    /// Read every ring now (libbpf's `ring_buffer__consume`); returns how many records the
    /// callback got. A ring that holds what the kernel never writes is
    /// [`LinuxError::BadRingbuf`]: the records before the fault were delivered, and that ring is
    /// skipped to its `producer_pos`, so that the next read goes on.
    ///
    /// When it returns, the descriptor ([`AsFd`]) will be readable if a ring holds a record
    /// this call did not read. A record committed while it read, before it published its
    /// position, sends no wakeup, nor does any record after it; so it publishes everything it
    /// read, fences and looks again, and reads on (perfring's (R7), (R8)); after eight such
    /// reads with records still coming, it makes the descriptor readable itself and returns,
    /// so that the caller's event loop runs its other work and calls it again.
    pub fn consume(&mut self) -> Result<u64, LinuxError> {
        self.take_again()?;
        let mut n = 0;
        for _ in 0..CONSUME_ROUNDS {
            n += self.read_all()?;
            if self.all_asleep() {
                return Ok(n);
            }
        }
        self.again.signal().map_err(io_err("write to the reader's eventfd"))?;
        self.signaled = true;
        Ok(n)
    }

    /// Publish every ring's position, fence and look again (R7, R8): whether every ring is
    /// empty (or its next record BUSY), so that a commit at its position wakes the epoll set.
    /// A record committed before the publication sent no wakeup: it is found here.
    fn all_asleep(&mut self) -> bool {
        let mut asleep = true;
        for ring in &mut self.rings {
            asleep &= ring.maps.prepare_to_sleep().unwrap_or(false);
        }
        asleep
    }

    /// Make the "read again" descriptor unreadable, if a `consume` made it readable.
    fn take_again(&mut self) -> Result<(), LinuxError> {
        if std::mem::take(&mut self.signaled) {
            self.again.clear().map_err(io_err("read of the reader's eventfd"))?;
        }
        Ok(())
    }

    /// Read every ring, holding each one's last record under the wait policy (`poll` reads
    /// again, or publishes everything before it waits).
    fn read_all(&mut self) -> Result<u64, LinuxError> {
        let mut n = 0;
        for index in 0..self.rings.len() {
            n += self.consume_ring(index)?;
        }
        Ok(n)
    }

    /// Read ring `index` now; an index past the rings reads nothing. A ring that holds what the
    /// kernel never writes is [`LinuxError::BadRingbuf`]: the records before the fault were
    /// delivered, and the ring is skipped to `producer_pos` so that the next read goes on.
    fn consume_ring(&mut self, index: usize) -> Result<u64, LinuxError> {
        let Some(ring) = self.rings.get_mut(index) else { return Ok(0) };
        let on_sample = &mut self.on_sample;
        match ring.maps.for_each(|record| on_sample(index, record.payload.parts().0)) {
            Ok(n) => Ok(n as u64),
            Err(error) => Err(LinuxError::BadRingbuf { ring: index, error, skipped: ring.maps.skip_to_producer() }),
        }
    }

    /// Discarded records skipped (`bpf_ringbuf_discard`), over every ring.
    pub fn discarded(&self) -> u64 {
        self.rings.iter().map(|r| r.maps.discarded()).sum()
    }

    /// Ring `index`'s map (for a program to reference: the `BPF_LD_IMM64` map fd of its
    /// `bpf_ringbuf_output` or `bpf_ringbuf_reserve`), `None` past the rings.
    pub fn map_fd(&self, index: usize) -> Option<BorrowedFd<'_>> {
        self.rings.get(index).map(|r| r.map.fd.as_fd())
    }
}

/// The epoll token of a [`RingBuffer`]'s "read again" eventfd (ring indices count from 0).
const AGAIN: u64 = u64::MAX;

/// The reads of every ring [`RingBuffer::consume`] makes, each after finding records that came
/// during the one before, before it leaves the rest to the caller's next call.
const CONSUME_ROUNDS: usize = 8;

/// How the reader's consumers publish. Headers are the kernel's alone (it refuses a writable
/// mapping of the data pages, to this process and any other): their `pg_off` is not checked,
/// which would cost a load and a division per record; lengths and positions are, as ever.
/// Under the wait policy each batch holds its last record ([`Publish::HoldLast`]): `poll`
/// reads again after the interval, or publishes everything before it waits, so the kernel's
/// commits need not wake it (an irq_work on the producer's CPU per batch, caught up).
fn read_config(interval: Option<Duration>) -> Config {
    let publish = if interval.is_some() { Publish::HoldLast } else { Publish::PerBatch };
    Config { check_pg_off: false, publish, ..Config::default() }
}

impl<F: FnMut(usize, &[u8])> AsFd for RingBuffer<F> {
    /// The epoll set of every ring: readable when one holds unread data.
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.epoll.fd()
    }
}

impl<F: FnMut(usize, &[u8])> AsRawFd for RingBuffer<F> {
    /// The epoll set's number (what `tokio::io::unix::AsyncFd` takes), as for
    /// [`PerfEventArray`](crate::PerfEventArray).
    fn as_raw_fd(&self) -> RawFd {
        self.epoll.fd().as_raw_fd()
    }
}
