//! [`Ring`]: the kernel's mapping of an event's ring (`1 + 2^n` pages), read through
//! perfring's [`Consumer`] (forward) or [`BackwardReader`] (backward, over a writable mapping or
//! a [`ReadOnlyMapping`]); its [`AuxArea`], read through perfring's [`AuxConsumer`].

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;

use perfring::aux::AuxConsumer;
use perfring::consumer::Trusted;
use perfring::fences::LOCAL;
use perfring::memory::{Position, RingMemory};
use perfring::page::MmapPage;
use perfring::record::attr_flags;
use perfring::{backward::BackwardReader, consumer::Consumer};
use std::mem::offset_of;

use crate::claims::RingClaims;
use crate::error::{io as io_err, LinuxError};
use crate::event::Event;
use crate::read_only::ReadOnlyMapping;
use crate::ring_kind::RingKind;
use crate::sys;
use crate::sys::RingMapping;

/// An event's ring, mapped. Four kinds, as the kernel accepts them: forward or backward (the
/// event's `write_backward`), writable or read-only. A **writable** mapping tells the kernel to
/// respect `data_tail`: unread records are never overwritten and a full ring drops (and counts)
/// new ones. A **read-only** one is an overwrite ring (a flight recorder): the kernel never
/// reads `data_tail` and overwrites the oldest records.
///
/// Each kind has its reader, and asking a ring for another kind's reader is a typed
/// [`LinuxError::RingKind`], never a crash:
///
/// | ring | reader |
/// |---|---|
/// | forward, writable | [`Ring::consumer`]: records in order, zero-copy, `data_tail` stored after each batch |
/// | backward, writable | [`Ring::backward_reader`]: newest first, `data_tail` stored after each read |
/// | backward, read-only | [`Ring::overwrite_reader`]: newest first, under [`Ring::pause_output`], as perf reads `--overwrite` rings |
/// | forward, read-only | none: the kernel overwrites the oldest records with no mark of where one starts (perf never maps this kind) |
///
/// [`Ring::mapping`] (perfring's [`Mapping`](perfring::memory::Mapping), which stores into the control
/// page, lent as a [`RingMapping`]) is for writable rings; [`Ring::read_only`] reads any ring
/// with loads alone (self-monitoring of a control page mapped read-only, for one).
///
/// An event's ring has one [`Ring::consumer`] at a time, however many times it is mapped (a
/// second is [`LinuxError::ConsumerTaken`] until the first is dropped), and no perfring producer:
/// the kernel is its producer.
///
/// The ring holds its own duplicate of the event's descriptor, so it can be waited on
/// ([`AsFd`]) and paused, and outlives nothing it needs; the views it hands out borrow it, so
/// none outlives the mapping.
#[derive(Debug)]
pub struct Ring {
    mmap: sys::Mmap,
    claims: Arc<RingClaims>,
    fd: OwnedFd,
    writable: bool,
    backward: bool,
}

impl Ring {
    /// Map `event`'s ring with `data_pages` pages of data (a power of two) after the control
    /// page. 0 maps the control page alone: no records (no reader), but its self-monitoring
    /// fields (`time_enabled`, `index`, …), read through [`Ring::read_only`] (or
    /// [`Ring::mapping`], writable) and [`perfring::selfmon`].
    ///
    /// An event whose records go to another event's ring ([`Event::set_output`]) is
    /// [`LinuxError::RingRedirected`]: map that event's ring.
    pub fn map(event: &Event, data_pages: usize, writable: bool) -> Result<Ring, LinuxError> {
        if data_pages != 0 && !data_pages.is_power_of_two() {
            return Err(LinuxError::RingSize { data_pages });
        }
        let claims = event.ring_claims();
        if claims.redirected() {
            return Err(LinuxError::RingRedirected);
        }
        let page = sys::page_size();
        let len = (1 + data_pages).checked_mul(page).ok_or(LinuxError::RingSize { data_pages })?;
        let mmap = sys::Mmap::map(event.as_fd(), len, 0, writable).map_err(io_err("mmap of the ring"))?;
        let fd = event.as_fd().try_clone_to_owned().map_err(io_err("dup of the event fd"))?;
        let ring = Ring { mmap, claims, fd, writable, backward: event.attr().has(attr_flags::WRITE_BACKWARD) };
        if writable {
            ring.mapping()?;
        }
        Ok(ring)
    }

    /// perfring's view of a writable mapping (control page and data area), for reading: a
    /// [`RingMapping`] dereferences to the [`Mapping`](perfring::memory::Mapping) and can be read with
    /// perfring's readers ([`Consumer::untrusted`], [`BackwardReader`], [`perfring::selfmon`]),
    /// but not [`split`](perfring::split): the kernel is this ring's producer. A read-only
    /// ring is [`LinuxError::ReadOnlyRing`]: a `Mapping` may store into the control page
    /// (`data_tail`, the self-monitoring fields), which faults on a read-only page; read it
    /// with [`Ring::read_only`].
    ///
    /// ```compile_fail
    /// # fn f(ring: &perfring_linux::Ring) -> Result<(), Box<dyn std::error::Error>> {
    /// use perfring_linux::perfring::{producer::Config, split};
    /// let mut mapping = ring.mapping()?;
    /// let ends = split(&mut mapping, Config::default()); // refused: the kernel is the producer
    /// # Ok(()) }
    /// ```
    pub fn mapping(&self) -> Result<RingMapping<'_>, LinuxError> {
        Ok(RingMapping::new(self.attach()?, None))
    }

    /// perfring's `Mapping` of a writable ring, for this crate to lend out unsplittable
    /// ([`RingMapping`]); a read-only ring is [`LinuxError::ReadOnlyRing`].
    fn attach(&self) -> Result<perfring::memory::Mapping<'_>, LinuxError> {
        if !self.writable {
            return Err(LinuxError::ReadOnlyRing);
        }
        Ok(self.mmap.attach()?)
    }

    /// A view of the ring that only loads (see [`ReadOnlyMapping`]), for a ring of any kind.
    pub fn read_only(&self) -> ReadOnlyMapping<'_> {
        ReadOnlyMapping::new(&self.mmap, sys::page_size())
    }

    /// Bytes written and not yet read, as the control page says now (`data_head - data_tail`,
    /// loaded through [`read_only`](Ring::read_only)): a hint for a reader choosing whether to
    /// wait. A consumer loads the head again before it reads a byte, and checks it.
    pub(crate) fn unread(&self) -> usize {
        let page = self.read_only();
        let load = |p: Position| page.position(p).load(LOCAL);
        load(Position::DataHead).wrapping_sub(load(Position::DataTail))
    }

    /// Bytes of the data area.
    pub fn data_size(&self) -> usize {
        self.mmap.len() - sys::page_size()
    }

    /// The ring's kind (see [`Ring`]).
    pub fn kind(&self) -> RingKind {
        RingKind { backward: self.backward, writable: self.writable }
    }

    fn expect_kind(&self, backward: bool, writable: bool, reader: &'static str) -> Result<(), LinuxError> {
        if self.kind() == (RingKind { backward, writable }) {
            Ok(())
        } else {
            Err(LinuxError::RingKind { reader, needs: RingKind { backward, writable }, ring: self.kind() })
        }
    }

    /// The consumer of a forward, writable ring: it starts at the `data_tail` the page holds
    /// and stores the tail after each batch (so the kernel can reuse the space:
    /// [`perfring::consumer::ConsumerConfig::EVERY_BATCH`], since the kernel drops what does not fit
    /// by `data_tail`, and readiness already paces the reads; [`Consumer::configure`] changes
    /// it). Records are
    /// zero-copy views into the kernel's mapping when contiguous. Another kind of ring is
    /// [`LinuxError::RingKind`]: a backward ring's records do not follow one another forward, and
    /// an overwrite ring's page is read-only and its bytes are overwritten while read.
    ///
    /// One consumer per event's ring: while it is alive, another (from this ring or another
    /// mapping of the event) is [`LinuxError::ConsumerTaken`]. Pass a scratch of
    /// [`perfring::consumer::Scratch`] (64 KiB: any record fits) to its readers: a record that
    /// wraps the end of the ring is copied there, and a smaller one can refuse it.
    pub fn consumer(&self) -> Result<Consumer<RingMapping<'_>, Trusted>, LinuxError> {
        self.expect_kind(false, true, "Ring::consumer")?;
        let mapping = self.attach()?;
        if !self.claims.take_consumer() {
            return Err(LinuxError::ConsumerTaken);
        }
        // From here the claim is the mapping's: given back when it (the consumer) is dropped.
        let mapping = RingMapping::new(mapping, Some(Arc::clone(&self.claims)));
        // SAFETY: the producer of this ring is the kernel, which follows the protocol over a
        // writable mapping (checked above): it never writes between data_tail and data_head,
        // and zero-copy views are only handed out for the duration of a batch. This is the
        // ring's one consumer (the claim, held by the mapping until the consumer is dropped),
        // and the mapping is lent out only where it cannot be split into a producer.
        let mut consumer = unsafe { Consumer::trusted(mapping) }?;
        consumer.configure(perfring::consumer::ConsumerConfig::EVERY_BATCH);
        Ok(consumer)
    }

    /// A newest-first reader of a backward, writable ring: after each read it stores
    /// `data_tail`, so the kernel reuses the space (and drops, counted, when the ring is full).
    /// Another kind of ring is [`LinuxError::RingKind`] (a backward overwrite ring:
    /// [`Ring::overwrite_reader`]).
    pub fn backward_reader(&self) -> Result<BackwardReader<RingMapping<'_>>, LinuxError> {
        self.expect_kind(true, true, "Ring::backward_reader")?;
        Ok(BackwardReader::new(self.mapping()?, true)?)
    }

    /// A newest-first reader of a backward overwrite (read-only) ring, perf's `--overwrite`
    /// flight recorder. Pause the output around each read ([`Ring::pause_output`]), as perf
    /// does. What holds then: every record returned lies within `data_size` bytes of the head
    /// read after its copy, so none was overwritten by a write the kernel published meanwhile;
    /// a kernel writer that had already reserved its space when the pause came may still be
    /// filling it (the pause is not a synchronous barrier, and the kernel keeps no write
    /// generation to tell), and such a record can be returned torn. Without the pause, records
    /// overwritten during the read are refused ([`perfring::consumer::ReadError::Overrun`]). Another
    /// kind of ring is [`LinuxError::RingKind`].
    pub fn overwrite_reader(&self) -> Result<BackwardReader<ReadOnlyMapping<'_>>, LinuxError> {
        self.expect_kind(true, false, "Ring::overwrite_reader")?;
        Ok(BackwardReader::new(self.read_only(), false)?)
    }

    /// Pause (`true`) or resume the kernel's output into this ring
    /// (`PERF_EVENT_IOC_PAUSE_OUTPUT` on the ring's event): while paused every record is
    /// dropped and counted, and reported by a LOST record when output resumes. Writers already
    /// past the check finish their record.
    pub fn pause_output(&self, paused: bool) -> Result<(), LinuxError> {
        sys::ioc_pause_output(self.fd.as_fd(), paused).map_err(io_err("PERF_EVENT_IOC_PAUSE_OUTPUT"))
    }

    /// The address of the mapping (for diagnostics).
    pub fn as_ptr(&self) -> *const u8 {
        self.mmap.ptr()
    }
}

impl Ring {
    /// Map the event's AUX area: `aux_pages` pages (a power of two) placed right after the data
    /// area. Writes `aux_offset` (the end of the data area, page aligned) and `aux_size` into
    /// the control page, then maps the event's fd at `aux_offset`, as the kernel requires
    /// (`core.c:perf_mmap`). A `writable` AUX mapping makes the kernel respect `aux_tail`
    /// (read it with [`AuxConsumer::read`]); a read-only one is snapshot (overwrite) mode (read
    /// it with [`AuxConsumer::snapshot`]).
    ///
    /// Errors: [`LinuxError::AuxSize`], [`LinuxError::AuxNeedsWritableRing`] (the ring was mapped
    /// read-only, so its control page cannot take the layout), [`LinuxError::AuxNotSupported`] (the
    /// event's PMU has no AUX area: software and tracepoint events never do), [`LinuxError::Io`] for
    /// other refusals (EPERM/ENOMEM: over `perf_event_mlock_kb` without CAP_IPC_LOCK).
    pub fn map_aux(&self, aux_pages: usize, writable: bool) -> Result<AuxArea<'_>, LinuxError> {
        if !aux_pages.is_power_of_two() {
            return Err(LinuxError::AuxSize { aux_pages });
        }
        if !self.writable {
            return Err(LinuxError::AuxNeedsWritableRing);
        }
        let size = aux_pages.checked_mul(sys::page_size()).ok_or(LinuxError::AuxSize { aux_pages })?;
        // The data area ends at a page boundary: the mapping is `1 + 2^n` pages.
        let offset = self.mmap.len() as u64;
        self.mmap
            .store_u64(offset_of!(MmapPage, aux_offset), offset, self.writable)
            .and_then(|()| self.mmap.store_u64(offset_of!(MmapPage, aux_size), size as u64, self.writable))
            .ok_or(LinuxError::AuxNeedsWritableRing)?;
        let mmap =
            sys::Mmap::map(self.fd.as_fd(), size, offset, writable).map_err(|error| match error.raw_os_error() {
                Some(errno @ (libc::EOPNOTSUPP | libc::EINVAL)) => LinuxError::AuxNotSupported { errno },
                _ => LinuxError::Io { what: "mmap of the AUX area", error },
            })?;
        let aux = AuxArea { ring: self, mmap, offset, writable };
        aux.mapping()?;
        Ok(aux)
    }

    /// The AUX layout the control page holds: (`aux_offset`, `aux_size`), as written by
    /// [`Ring::map_aux`] (both 0 before).
    pub fn aux_layout(&self) -> (u64, u64) {
        let load = |off| self.mmap.load_u64(off).unwrap_or(0);
        (load(offset_of!(MmapPage, aux_offset)), load(offset_of!(MmapPage, aux_size)))
    }
}

/// A ring's AUX area, mapped (see [`Ring::map_aux`]). It borrows its [`Ring`], so neither the
/// ring nor the fd can go before it, and the consumers it hands out borrow it in turn.
#[derive(Debug)]
pub struct AuxArea<'r> {
    ring: &'r Ring,
    mmap: sys::Mmap,
    offset: u64,
    writable: bool,
}

impl AuxArea<'_> {
    /// perfring's view of the ring (control page and data area) with this AUX area attached,
    /// lent as a [`RingMapping`] (see [`Ring::mapping`]).
    pub fn mapping(&self) -> Result<RingMapping<'_>, LinuxError> {
        Ok(RingMapping::new(self.mmap.attach_as_aux(self.ring.attach()?)?, None))
    }

    /// The consumer of the AUX area: [`AuxConsumer::read`] in a writable AUX mapping (it
    /// stores `aux_tail`), [`AuxConsumer::snapshot`] in a read-only one.
    pub fn consumer(&self) -> Result<AuxConsumer<RingMapping<'_>>, LinuxError> {
        Ok(AuxConsumer::new(self.mapping()?)?)
    }

    /// The AUX area's offset in the event's mapping (`aux_offset`).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes of the AUX area (`aux_size`).
    pub fn size(&self) -> usize {
        self.mmap.len()
    }

    /// Whether the kernel respects `aux_tail` (a writable AUX mapping), or overwrites
    /// (snapshot mode).
    pub fn writable(&self) -> bool {
        self.writable
    }
}

impl AsFd for Ring {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Ring {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
