//! [`PerfEventArray`]: the reader of `bpf_perf_event_output` — a BPF_MAP_TYPE_PERF_EVENT_ARRAY
//! whose entries are BPF_OUTPUT events, one per CPU, each with its [`Ring`].

use perfring::record::attr_flags;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use perfring::backward::BackwardReader;
use perfring::consumer::{Scratch, SplitRecord};
use perfring::record::{read_format as rf, sample_type as st, ReadValues};

use crate::attr::{software, EventAttr};
use crate::error::{io as io_err, LinuxError};
use crate::event::{online_cpus, Event, Target};
use crate::raw_sample::{BpfRecord, RawSample};
use crate::ring::Ring;
use crate::sys;
use crate::wait::{timeout_ms, BATCH_INTERVAL};

/// When the kernel wakes the reader ([`PerfEventArrayBuilder::wakeup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wakeup {
    /// After every `n` records of a CPU (`wakeup_events`; libbpf's and aya's setting is 1: a
    /// wakeup, an interrupt and a reader's poll per record). 0 leaves the kernel's own
    /// watermark alone: half the ring.
    Events(u32),
    /// Once `bytes` are unread in a CPU's ring (`wakeup_watermark`): a burst costs one wakeup
    /// per `bytes`, whatever its records' number.
    Watermark(u32),
}

/// What one read of the rings delivered ([`PerfEventArray::consume`], [`PerfEventArray::poll`],
/// [`PerfEventArray::flush`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Drained {
    /// Samples handed to the callback.
    pub samples: u64,
    /// Outputs the kernel reported lost (PERF_RECORD_LOST) in what was read; after
    /// [`flush`](PerfEventArray::flush), also those it dropped and has not reported yet.
    pub lost: u64,
    /// Overwrite mode: bytes written since the previous read that were overwritten before this
    /// one (the ring holds the newest `data_size` bytes). 0 otherwise.
    pub overwritten_bytes: u64,
}

/// How to open a [`PerfEventArray`]: made by [`PerfEventArray::builder`].
#[derive(Debug)]
pub struct PerfEventArrayBuilder {
    map: Option<OwnedFd>,
    cpus: Option<Vec<u32>>,
    data_pages: usize,
    wakeup: Option<Wakeup>,
    overwrite: bool,
}

/// The reader of `bpf_perf_event_output`: a BPF_MAP_TYPE_PERF_EVENT_ARRAY (made here, or the
/// caller's: [`PerfEventArrayBuilder::map`]) whose entry `cpu` is a BPF_OUTPUT software event
/// on that CPU (`PERF_SAMPLE_RAW`), one per online CPU, each with its [`Ring`] of a size the
/// caller picks. A program's `bpf_perf_event_output(ctx, &map, BPF_F_CURRENT_CPU, data, size)`
/// lands in the ring of the CPU it runs on, and reaches the callback given to
/// [`build`](PerfEventArrayBuilder::build) as a [`RawSample`]: zero-copy, one slice or two
/// where it wraps the ring's end, no allocation per record.
///
/// Reading: [`poll`](PerfEventArray::poll) waits for a wakeup (or a timeout) and then drains
/// every CPU's ring, or drains them at once if one holds a wakeup's worth already;
/// [`consume`](PerfEventArray::consume) drains them now;
/// [`flush`](PerfEventArray::flush) drains them and takes the kernel's count of what it dropped
/// and has not reported yet; dropping the reader takes its events out of the map and flushes,
/// so no record is left below the watermark. Each ring's `data_head` is read once per drain
/// (perfring's acquire, (C)) and its `data_tail` stored once per drain (release, (D)). Lost
/// outputs are counted per CPU from the kernel's PERF_RECORD_LOST records: [`lost`](PerfEventArray::lost).
///
/// # Wait policy
///
/// With [`Wakeup::Events`]`(n)` the kernel wakes a reader waiting in `epoll_wait` after every
/// `n` records of a CPU: an interrupt and a wakeup of the sleeping thread, paid by the
/// program's CPU, and a context switch paid by the reader. At `n = 1` (aya's only setting,
/// libbpf's default) a busy stream costs both per record. [`poll`](PerfEventArray::poll)
/// therefore weighs each read: if the samples it delivered came in faster than `n` per
/// [batch interval](PerfEventArray::batch_interval) (50 µs) — the kernel would wake the
/// reader more than once per interval — the next `poll` does not wait for a wakeup: it
/// pauses for the interval and drains again, so that while the stream is busy nobody sleeps
/// in `epoll_wait` to be woken, and the records of an interval are read in one batch. A
/// slower stream goes back to waiting for the kernel's wakeup. A record then waits at most
/// about one interval (plus the timer's slack) longer than with a wakeup per `n` records;
/// `batch_interval(None)` waits for a wakeup every time. With [`Wakeup::Watermark`] (the
/// default) the kernel already wakes once per watermark, and `poll` does not pause.
///
/// Either way, a `poll` that finds a wakeup's worth of unread bytes in a ring already (the
/// watermark, or `n` records at the mean size of those read so far) drains without the
/// `epoll_wait` system call: a reader that cannot keep pace, or one that reads after its own
/// work as in `bench_ringbufs`' back-to-back mode, saves a system call per read.
///
/// Readiness: the reader is [`AsFd`] (an epoll set of every ring: readable when one has a
/// wakeup), for epoll, `tokio::io::unix::AsyncFd` or smol; a caller with its own loop may
/// register each of [`rings`](PerfEventArray::rings) (each [`AsFd`]) instead and call
/// [`consume_ring`](PerfEventArray::consume_ring) on its wakeups — then not
/// [`poll`](PerfEventArray::poll) too, since a perf event reports each wakeup to one poller.
///
/// Overwrite mode ([`PerfEventArrayBuilder::overwrite`]): each ring is written backward over a
/// read-only mapping (a flight recorder: the kernel keeps the newest `data_size` bytes and
/// never drops for lack of room); a read pauses a ring's output
/// (`PERF_EVENT_IOC_PAUSE_OUTPUT`), delivers what was written since the previous read, newest
/// first, and resumes it. What the kernel drops while a ring is paused is counted (a LOST
/// record at its next output; [`flush`](PerfEventArray::flush) takes it at once).
///
/// ```no_run
/// // `program_map_fd`: the map the BPF program outputs to (from aya, libbpf, or your loader).
/// fn read_events(program_map_fd: std::os::fd::OwnedFd) -> Result<(), perfring_linux::LinuxError> {
///     use std::time::Duration;
///     use perfring_linux::{PerfEventArray, Wakeup};
///     let (mut events, mut bytes) = (0u64, 0usize);
///     let mut reader = PerfEventArray::builder()
///         .map(program_map_fd) // the map the BPF program writes to (e.g. from aya or libbpf)
///         .data_pages(64) // 256 KiB per CPU
///         .wakeup(Wakeup::Watermark(64 << 10))
///         .build(|sample| {
///             let (head, tail) = sample.parts(); // `tail` is empty unless the payload wraps
///             events += 1;
///             bytes += head.len() + tail.len();
///         })?;
///     for _ in 0..10 {
///         reader.poll(Some(Duration::from_millis(100)))?; // on a wakeup or a timeout: every ring
///     }
///     let lost = reader.lost_total();
///     drop(reader); // what came after the last wakeup, below the watermark: read here
///     println!("{events} events ({bytes} bytes), {lost} lost");
///     Ok(())
/// }
/// ```
pub struct PerfEventArray<F: FnMut(&RawSample<'_>)> {
    map: OwnedFd,
    cpus: Vec<u32>,
    events: Vec<Event>,
    rings: Vec<Ring>,
    /// Σ of the LOST records read, per CPU.
    reported: Vec<u64>,
    /// Per CPU, the larger of `reported` and the kernel's own count at the last flush
    /// (`PERF_FORMAT_LOST`): both count the same drops. What `lost` returns.
    lost: Vec<u64>,
    /// Overwrite mode: each ring's head at its previous read (the backward reader's `prev`).
    overwrite: Option<Vec<usize>>,
    epoll: sys::Epoll,
    ready: Vec<(u64, bool, bool)>,
    /// Where a backward ring's records are copied (they may be overwritten while read), and
    /// where a memory without views would copy (none here: the kernel's mappings lend views).
    scratch: Box<Scratch>,
    /// The wait policy's pause ([`PerfEventArray::batch_interval`]).
    interval: Option<Duration>,
    /// When the last read of `poll` ended: the samples of the next one came in since.
    last_read: Instant,
    /// The rings' wakeup setting: what the wait policy weighs the rate against, and with
    /// `record_bytes` (the mean bytes a sample took in the last read that found one, 0 before)
    /// what [`wakeup_bytes`] estimates a wakeup's worth from.
    wakeup: Wakeup,
    record_bytes: usize,
    /// The stream is fast enough that the kernel would wake the reader more than once per
    /// interval: the next `poll` pauses instead of waiting.
    busy: bool,
    on_sample: F,
}

impl<F: FnMut(&RawSample<'_>)> std::fmt::Debug for PerfEventArray<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfEventArray")
            .field("map", &self.map)
            .field("cpus", &self.cpus)
            .field("rings", &self.rings)
            .field("lost", &self.lost())
            .field("overwrite", &self.overwrite.is_some())
            .finish_non_exhaustive()
    }
}

impl PerfEventArray<fn(&RawSample<'_>)> {
    /// A builder: a new map, every online CPU, 64 data pages per ring, a watermark of a quarter
    /// of the ring, forward rings.
    pub fn builder() -> PerfEventArrayBuilder {
        PerfEventArrayBuilder { map: None, cpus: None, data_pages: 64, wakeup: None, overwrite: false }
    }
}

impl PerfEventArrayBuilder {
    /// Use the caller's BPF_MAP_TYPE_PERF_EVENT_ARRAY (the map its program writes to, loaded
    /// by aya, libbpf or by hand) instead of creating one: entry `cpu` is set to that CPU's
    /// event, and deleted when the reader is dropped. A map of another type, or one with fewer
    /// entries than a CPU's number needs, is [`LinuxError::NotAPerfEventArray`].
    pub fn map(mut self, map: OwnedFd) -> Self {
        self.map = Some(map);
        self
    }

    /// Open rings on these CPUs only (default: every online CPU); a program that runs on
    /// another CPU finds no entry there, and its output fails (`-ENOENT`).
    pub fn cpus(mut self, cpus: &[u32]) -> Self {
        self.cpus = Some(cpus.to_vec());
        self
    }

    /// Data pages per CPU's ring, a power of two (default 64: 256 KiB with 4 KiB pages). Each
    /// record of an `n`-byte payload takes `12 + n` bytes rounded up to 8.
    pub fn data_pages(mut self, pages: usize) -> Self {
        self.data_pages = pages;
        self
    }

    /// When the kernel wakes the reader (default: [`Wakeup::Watermark`] of a quarter of the
    /// ring, so that a burst costs one wakeup per quarter ring and three quarters are still
    /// free when it comes). Records below the watermark are read by every
    /// [`poll`](PerfEventArray::poll) (its timeout too), [`consume`](PerfEventArray::consume),
    /// [`flush`](PerfEventArray::flush) and the drop.
    pub fn wakeup(mut self, wakeup: Wakeup) -> Self {
        self.wakeup = Some(wakeup);
        self
    }

    /// Overwrite mode (default off): backward rings mapped read-only, read newest-first under
    /// `PERF_EVENT_IOC_PAUSE_OUTPUT` (see [`PerfEventArray`]).
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }

    /// Open the events, map their rings, store them in the map; `on_sample` gets every sample
    /// read, by every read call and at the drop.
    ///
    /// Errors: [`LinuxError::RingSize`] for `data_pages`, [`LinuxError::NotAPerfEventArray`]
    /// for the caller's map, [`LinuxError::OpenEvent`] where a CPU's BPF_OUTPUT event cannot be
    /// opened (CPU-wide: root or CAP_PERFMON), [`LinuxError::Io`] naming the system call
    /// refused (`BPF_MAP_CREATE` and `BPF_MAP_UPDATE_ELEM` need CAP_BPF or root).
    pub fn build<F: FnMut(&RawSample<'_>)>(self, on_sample: F) -> Result<PerfEventArray<F>, LinuxError> {
        if self.data_pages == 0 || !self.data_pages.is_power_of_two() {
            return Err(LinuxError::RingSize { data_pages: self.data_pages });
        }
        let cpus = match self.cpus {
            Some(cpus) => cpus,
            None => online_cpus()?,
        };
        let entries = cpus.iter().max().map_or(1, |&c| c + 1);
        let map = match self.map {
            Some(map) => check_map(map, entries)?,
            None => sys::create_perf_event_array(entries).map_err(io_err("BPF_MAP_CREATE (perf event array)"))?,
        };
        let data_bytes = self.data_pages.saturating_mul(sys::page_size());
        let wakeup = self.wakeup.unwrap_or(Wakeup::Watermark(u32::try_from(data_bytes / 4).unwrap_or(u32::MAX)));
        let epoll = sys::Epoll::new().map_err(io_err("epoll_create1"))?;
        let mut reader = PerfEventArray {
            map,
            cpus: Vec::new(),
            events: Vec::new(),
            rings: Vec::new(),
            reported: Vec::new(),
            lost: Vec::new(),
            overwrite: self.overwrite.then(Vec::new),
            epoll,
            ready: Vec::new(),
            scratch: Box::new(Scratch::new()),
            interval: matches!(wakeup, Wakeup::Events(1..)).then_some(BATCH_INTERVAL),
            last_read: Instant::now(),
            wakeup,
            record_bytes: 0,
            busy: false,
            on_sample,
        };
        for cpu in cpus {
            reader.open_cpu(cpu, self.data_pages, wakeup)?;
        }
        Ok(reader)
    }
}

/// The unread bytes at which the kernel wakes a reader of a `data_size`-byte ring (at least
/// one): a watermark's bytes (at most the ring's; none given, half the ring), or for
/// `wakeup_events = n`, `n` records of `record_bytes` (the mean so far; 0: none read yet) and
/// at most half the ring, where the kernel's own watermark wakes the reader whatever `n`.
fn wakeup_bytes(wakeup: Wakeup, data_size: usize, record_bytes: usize) -> usize {
    let half = data_size / 2;
    let bytes = match wakeup {
        Wakeup::Watermark(0) | Wakeup::Events(0) => half,
        Wakeup::Watermark(bytes) => (bytes as usize).min(data_size),
        Wakeup::Events(_) if record_bytes == 0 => half,
        Wakeup::Events(n) => (n as usize).saturating_mul(record_bytes).min(half),
    };
    bytes.max(1)
}

/// Whether `samples` read after `span_ns` came faster than `per_wakeup` samples an `interval`:
/// at that rate the kernel would wake a waiting reader more than once per interval.
fn faster_than_wakeups(samples: u64, span_ns: u128, per_wakeup: u32, interval: Duration) -> bool {
    u128::from(samples).saturating_mul(interval.as_nanos()) > u128::from(per_wakeup).saturating_mul(span_ns)
}

/// The caller's map, if it is a perf event array with an entry for every CPU up to `entries`.
fn check_map(map: OwnedFd, entries: u32) -> Result<OwnedFd, LinuxError> {
    let sys::MapInfo { map_type, key_size, value_size, max_entries, .. } =
        sys::map_info(map.as_fd()).map_err(io_err("BPF_OBJ_GET_INFO_BY_FD of the map"))?;
    if map_type != sys::MAP_TYPE_PERF_EVENT_ARRAY || key_size != 4 || value_size != 4 || max_entries < entries {
        return Err(LinuxError::NotAPerfEventArray { map_type, max_entries, needs_entries: entries });
    }
    Ok(map)
}

impl<F: FnMut(&RawSample<'_>)> PerfEventArray<F> {
    /// Open `cpu`'s BPF_OUTPUT event (disabled), map its ring, enable it and store it in the map.
    fn open_cpu(&mut self, cpu: u32, data_pages: usize, wakeup: Wakeup) -> Result<(), LinuxError> {
        let attr = EventAttr::software(software::BPF_OUTPUT)
            .sample_period(1)
            .sample_type(st::RAW)
            .flag(attr_flags::DISABLED, true);
        let attr = match wakeup {
            Wakeup::Events(n) => attr.wakeup_events(n),
            Wakeup::Watermark(bytes) => attr.wakeup_watermark(bytes),
        };
        let backward = self.overwrite.is_some();
        let attr = attr.flag(attr_flags::WRITE_BACKWARD, backward);
        // The kernel's own lost count (PERF_FORMAT_LOST, Linux 6.0): read by `flush`.
        let event = match Event::open(&attr.read_format(rf::LOST), Target::Cpu(cpu), None) {
            Err(LinuxError::InvalidArgument { .. }) => Event::open(&attr, Target::Cpu(cpu), None),
            opened => opened,
        }
        .map_err(|error| LinuxError::OpenEvent { event: 0, cpu, error: Box::new(error) })?;
        let ring = Ring::map(&event, data_pages, !backward)?;
        event.enable()?;
        self.epoll.add(ring.as_fd(), self.rings.len() as u64).map_err(io_err("epoll_ctl"))?;
        sys::map_set_event(self.map.as_fd(), cpu, event.as_fd()).map_err(io_err("BPF_MAP_UPDATE_ELEM"))?;
        self.cpus.push(cpu);
        self.events.push(event);
        self.rings.push(ring);
        self.reported.push(0);
        self.lost.push(0);
        if let Some(prev) = &mut self.overwrite {
            prev.push(0);
        }
        Ok(())
    }

    /// Wait until a ring has a wakeup or `timeout` passes (`None`: forever), then drain every
    /// CPU's ring (a wakeup of one is a sign that the others may hold records below their
    /// watermark too). A signal ends the wait early (and the drain follows). If a ring holds a
    /// wakeup's worth already, drain at once, without waiting; the kernel's wakeup for those
    /// records may then end the next call's wait at once, with what is there (perhaps
    /// nothing).
    ///
    /// With [`Wakeup::Events`], while the samples come in faster than one wakeup's worth per
    /// [batch interval](PerfEventArray::batch_interval), the next call pauses for the interval
    /// and drains instead of waiting for a wakeup: see [`PerfEventArray`], "Wait policy".
    pub fn poll(&mut self, timeout: Option<Duration>) -> Result<Drained, LinuxError> {
        let start = Instant::now();
        if let (true, Some(interval)) = (self.busy, self.interval) {
            std::thread::sleep(timeout.map_or(interval, |t| t.min(interval)));
            let drained = self.consume()?;
            self.weigh(drained.samples);
            if drained.samples > 0 || drained.lost > 0 {
                return Ok(drained);
            }
        }
        if !self.wakeup_due() {
            let ms = timeout_ms(timeout.map(|t| t.saturating_sub(start.elapsed())));
            self.epoll.wait(&mut self.ready, ms).map_err(io_err("epoll_wait"))?;
        }
        let drained = self.consume()?;
        self.weigh(drained.samples);
        Ok(drained)
    }

    /// Whether a forward ring holds a wakeup's worth of unread bytes already ([`wakeup_bytes`]):
    /// `poll` then reads without the system call. The kernel's wakeup for those bytes, if it
    /// came, leaves the epoll set readable, so a later `poll` returns at once (having read what
    /// was there, perhaps nothing): each wakeup still ends one wait, as it would have.
    fn wakeup_due(&self) -> bool {
        let Some(ring) = self.rings.first() else { return false };
        if self.overwrite.is_some() {
            return false; // backward rings: the head runs down, and the tail is not read
        }
        let due = wakeup_bytes(self.wakeup, ring.data_size(), self.record_bytes);
        self.rings.iter().any(|ring| ring.unread() >= due)
    }

    /// The wait policy's decision after a read of `samples`: pause next time if, at the rate
    /// they came in since the previous read, the kernel would wake the reader more than once
    /// per interval (more than `n` samples an interval for [`Wakeup::Events`]`(n)`, more than
    /// one for a watermark).
    fn weigh(&mut self, samples: u64) {
        let now = Instant::now();
        let span = now.saturating_duration_since(self.last_read).as_nanos();
        self.last_read = now;
        self.busy = self.interval.is_some_and(|interval| {
            let per_wakeup = match self.wakeup {
                Wakeup::Events(n) => n.max(1),
                Wakeup::Watermark(_) => 1,
            };
            faster_than_wakeups(samples, span, per_wakeup, interval)
        });
    }

    /// The wait policy of [`poll`](PerfEventArray::poll): while samples come in faster than
    /// one wakeup's worth (`n` of [`Wakeup::Events`]`(n)`) per `interval`, pause `interval` and
    /// drain again instead of waiting for a wakeup. Default: 50 µs with
    /// [`Wakeup::Events`]`(n ≥ 1)` (a busy stream then costs the reader one pause per
    /// interval, not a wakeup per `n` records, and its producers no wakeup of a sleeping
    /// thread), `None` with [`Wakeup::Watermark`] (the kernel already wakes once per
    /// watermark; a caller's interval then pauses while more than one sample comes per
    /// interval). `None`: wait for a wakeup after every read, as libbpf's `perf_buffer__poll`
    /// and aya do. The rings must hold what the program writes in one interval.
    pub fn batch_interval(&mut self, interval: Option<Duration>) {
        self.interval = interval;
        self.busy &= interval.is_some();
    }

    /// Drain every CPU's ring now (libbpf's `perf_buffer__consume`).
    pub fn consume(&mut self) -> Result<Drained, LinuxError> {
        let mut all = Drained::default();
        for index in 0..self.rings.len() {
            let one = self.consume_ring(index)?;
            all.samples += one.samples;
            all.lost += one.lost;
            all.overwritten_bytes += one.overwritten_bytes;
        }
        Ok(all)
    }

    /// Drain ring `index` (of [`rings`](PerfEventArray::rings) and [`cpus`](PerfEventArray::cpus))
    /// now, for a caller that waits on each ring's descriptor itself; an index past the rings
    /// delivers nothing.
    ///
    /// A record that cannot be the kernel's (a size past what was published, a RAW payload past
    /// its record) is [`LinuxError::BadBpfRing`] or [`LinuxError::BadBpfRecord`], never a
    /// panic: the records before it were delivered, and the ring is skipped to its head so the
    /// next read goes on.
    pub fn consume_ring(&mut self, index: usize) -> Result<Drained, LinuxError> {
        if index >= self.rings.len() {
            return Ok(Drained::default());
        }
        if self.overwrite.is_some() {
            return self.read_backward(index);
        }
        let (ring, cpu) = (&self.rings[index], self.cpus[index]);
        let (scratch, on_sample) = (&mut self.scratch, &mut self.on_sample);
        let mut consumer = ring.consumer()?;
        let from = consumer.tail();
        let mut drained = Drained::default();
        let mut failed = None;
        match consumer.batch() {
            Err(error) => failed = Some(LinuxError::BadBpfRing { cpu, error, skipped: 0 }),
            Ok(mut batch) => {
                while let Some(record) = batch.next_split(&mut scratch[..]) {
                    let record = match record {
                        Ok(record) => record,
                        Err(error) => {
                            failed = Some(LinuxError::BadBpfRing { cpu, error, skipped: 0 });
                            break;
                        }
                    };
                    if let Some(payload) = BpfRecord::whole_payload(&record) {
                        on_sample(&RawSample::whole(cpu, payload));
                        drained.samples += 1;
                        continue;
                    }
                    let SplitRecord { header, first, second, offset } = record;
                    let parts = (first, second, offset);
                    if let Err(error) = deliver(header, parts, cpu, &mut drained, on_sample) {
                        failed = Some(error);
                        break;
                    }
                }
            }
        }
        if let Some(per_sample) = consumer.tail().wrapping_sub(from).checked_div(drained.samples as usize) {
            self.record_bytes = per_sample;
        }
        self.reported[index] += drained.lost;
        self.lost[index] = self.lost[index].max(self.reported[index]);
        match failed {
            None => Ok(drained),
            Some(error) => Err(with_skipped(error, consumer.skip_to_head())),
        }
    }

    /// Overwrite mode: ring `index` paused, what was written since its previous read delivered
    /// newest first, the ring resumed.
    fn read_backward(&mut self, index: usize) -> Result<Drained, LinuxError> {
        let (ring, cpu) = (&self.rings[index], self.cpus[index]);
        let Some(prev) = self.overwrite.as_mut().and_then(|p| p.get_mut(index)) else {
            return Ok(Drained::default());
        };
        let (scratch, on_sample) = (&mut self.scratch, &mut self.on_sample);
        // The reader first: a refusal of the layout must not leave the ring paused.
        let mut reader = BackwardReader::resume(ring.read_only(), false, *prev)?;
        ring.pause_output(true)?;
        let mut drained = Drained::default();
        let mut failed = None;
        let read = reader.read(&mut scratch[..], |raw| {
            if failed.is_some() {
                return;
            }
            let parts = (raw.bytes, &[][..], raw.offset);
            failed = deliver(raw.header, parts, cpu, &mut drained, on_sample).err();
        });
        let written = prev.wrapping_sub(reader.prev()) as u64;
        *prev = reader.prev();
        ring.pause_output(false)?;
        self.reported[index] += drained.lost;
        self.lost[index] = self.lost[index].max(self.reported[index]);
        let summary = read.map_err(|error| LinuxError::BadBpfRing { cpu, error, skipped: 0 })?;
        if let Some(error) = failed {
            return Err(error);
        }
        drained.overwritten_bytes = written.saturating_sub(summary.bytes as u64);
        Ok(drained)
    }

    /// Drain every CPU's ring ([`consume`](PerfEventArray::consume)), then take each event's
    /// own count of dropped outputs (`PERF_FORMAT_LOST`): the kernel reports a drop in a LOST
    /// record only at the ring's next successful output, so a count it holds when the program
    /// stops would otherwise never arrive. After a flush, [`lost`](PerfEventArray::lost) is
    /// exact; a LOST record read later that reports what was already taken is not counted
    /// twice. (A kernel before 6.0 has no `PERF_FORMAT_LOST`: there the LOST records alone.)
    pub fn flush(&mut self) -> Result<Drained, LinuxError> {
        let before = self.lost_total();
        let mut drained = self.consume()?;
        for (index, event) in self.events.iter().enumerate() {
            if event.attr().read_format & rf::LOST == 0 {
                continue;
            }
            if let ReadValues::Single(value) = event.read()?.values() {
                self.lost[index] = self.lost[index].max(value.lost.unwrap_or(0));
            }
        }
        drained.lost = self.lost_total() - before;
        Ok(drained)
    }

    /// Outputs lost on each CPU (in [`cpus`](PerfEventArray::cpus) order): the PERF_RECORD_LOST
    /// records read, or the kernel's count at the last [`flush`](PerfEventArray::flush) if
    /// higher (it is the total of the same drops).
    pub fn lost(&self) -> &[u64] {
        &self.lost
    }

    /// Σ [`lost`](PerfEventArray::lost).
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().sum()
    }

    /// The CPUs with a ring, in the order of [`rings`](PerfEventArray::rings).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// Each CPU's ring ([`AsFd`]: for a caller's own epoll loop).
    pub fn rings(&self) -> &[Ring] {
        &self.rings
    }

    /// The BPF_MAP_TYPE_PERF_EVENT_ARRAY (for a program to reference: the `BPF_LD_IMM64`
    /// map fd of its `bpf_perf_event_output` call).
    pub fn map_fd(&self) -> BorrowedFd<'_> {
        self.map.as_fd()
    }
}

/// One record delivered: a SAMPLE's RAW payload to the callback, a LOST record's count added, any
/// other type skipped, a record too short for its fields the error. Every record of
/// [`PerfEventArray::read_backward`], and those of [`PerfEventArray::consume_ring`]'s loop other
/// than a whole SAMPLE (a payload the ring's end cuts, LOST, another type): cold and out of line
/// for that loop, and given the record's parts as values, so that its common case keeps the
/// record in registers (given a reference, the compiler stored all six of its words on every
/// record).
#[cold]
#[inline(never)]
fn deliver<F: FnMut(&RawSample<'_>)>(
    header: perfring::record::Header,
    (first, second, offset): (&[u8], &[u8], u64),
    cpu: u32,
    drained: &mut Drained,
    on_sample: &mut F,
) -> Result<(), LinuxError> {
    match BpfRecord::parse(&SplitRecord { header, first, second, offset }, cpu)? {
        BpfRecord::Sample(sample) => {
            on_sample(&sample);
            drained.samples += 1;
        }
        BpfRecord::Lost(n) => drained.lost += n,
        BpfRecord::Other { .. } => {}
    }
    Ok(())
}

/// `error` with the bytes the reader skipped from the faulty record on (`bytes` after it were
/// skipped to the head).
fn with_skipped(error: LinuxError, bytes: usize) -> LinuxError {
    match error {
        LinuxError::BadBpfRing { cpu, error, .. } => LinuxError::BadBpfRing { cpu, error, skipped: bytes },
        LinuxError::BadBpfRecord { cpu, record_type, needs, size, .. } => {
            // The record itself was read past: it counts among the skipped bytes.
            LinuxError::BadBpfRecord { cpu, record_type, needs, size, skipped: usize::from(size) + bytes }
        }
        other => other,
    }
}

impl<F: FnMut(&RawSample<'_>)> Drop for PerfEventArray<F> {
    /// The map's entries are deleted first (the program's outputs then fail with `-ENOENT`
    /// instead of going to rings nobody reads), then every ring is flushed into the callback.
    fn drop(&mut self) {
        for &cpu in &self.cpus {
            let _ = sys::map_delete(self.map.as_fd(), cpu);
        }
        let _ = self.flush();
    }
}

impl<F: FnMut(&RawSample<'_>)> AsFd for PerfEventArray<F> {
    /// The epoll set of every ring: readable when one of them has a wakeup.
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.epoll.fd()
    }
}

impl<F: FnMut(&RawSample<'_>)> AsRawFd for PerfEventArray<F> {
    fn as_raw_fd(&self) -> RawFd {
        self.epoll.fd().as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u128 = 1_000;

    #[test]
    fn a_wakeups_worth_is_the_watermark_or_n_records_at_their_mean_size_and_at_most_the_kernels_bound() {
        let ring = 256 << 10;
        assert_eq!(wakeup_bytes(Wakeup::Watermark(64 << 10), ring, 24), 64 << 10);
        assert_eq!(wakeup_bytes(Wakeup::Watermark(1 << 20), ring, 24), ring, "the kernel caps it at the ring");
        assert_eq!(wakeup_bytes(Wakeup::Watermark(0), ring, 24), ring / 2, "none given: half the ring");
        assert_eq!(wakeup_bytes(Wakeup::Events(500), ring, 24), 12_000);
        assert_eq!(wakeup_bytes(Wakeup::Events(500), ring, 272), ring / 2, "the kernel's own watermark");
        assert_eq!(wakeup_bytes(Wakeup::Events(500), ring, 0), ring / 2, "no record read yet");
        assert_eq!(wakeup_bytes(Wakeup::Events(0), ring, 24), ring / 2);
        assert_eq!(wakeup_bytes(Wakeup::Events(1), ring, 16), 16);
        assert_eq!(wakeup_bytes(Wakeup::Events(u32::MAX), usize::MAX, usize::MAX), usize::MAX / 2);
        assert_eq!(wakeup_bytes(Wakeup::Watermark(8), 0, 0), 1, "never 0: an empty ring waits");
    }

    #[test]
    fn the_wait_policy_pauses_only_when_wakeups_would_come_more_often_than_the_interval() {
        let i = BATCH_INTERVAL;
        // One wakeup per record: two records in 10 µs would be two wakeups in 10 µs.
        assert!(faster_than_wakeups(2, 10 * US, 1, i));
        assert!(faster_than_wakeups(9, 55 * US, 1, i));
        // One record a millisecond: a wakeup a millisecond is fewer than one per interval.
        assert!(!faster_than_wakeups(1, 1_000 * US, 1, i));
        assert!(!faster_than_wakeups(0, 0, 1, i));
        // One wakeup per 500 records: 4 M records/s is a wakeup per 125 µs (wait for it);
        // 20 M/s, one per 25 µs (pause instead).
        assert!(!faster_than_wakeups(580, 145 * US, 500, i));
        assert!(faster_than_wakeups(1_000, 50 * US, 500, i));
        // The edge: exactly one wakeup's worth per interval waits.
        assert!(!faster_than_wakeups(500, 50 * US, 500, i));
        assert!(!faster_than_wakeups(u64::MAX, u128::MAX / 2, u32::MAX, Duration::ZERO));
    }
}
