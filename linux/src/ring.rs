//! [`Ring`]: the kernel's mapping of an event's ring (`1 + 2^n` pages), read through
//! perfring's [`Consumer`] (forward) or [`BackwardReader`] (backward); its [`AuxArea`], read
//! through perfring's [`AuxConsumer`].

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use perfring::aux::AuxConsumer;
use perfring::consumer::Trusted;
use perfring::page::offsets;
use perfring::record::attr_flags;
use perfring::{BackwardReader, Consumer, Mapping};

use crate::error::{io as io_err, Error};
use crate::event::Event;
use crate::sys;

/// An event's ring, mapped. Four kinds, as the kernel accepts them: forward or backward (the
/// event's `write_backward`), writable or read-only. A **writable** mapping tells the kernel to
/// respect `data_tail`: unread records are never overwritten and a full ring drops (and counts)
/// new ones. A **read-only** one is an overwrite ring (a flight recorder): the kernel never
/// reads `data_tail` and overwrites the oldest records; read it backward, under
/// [`Event::pause_output`].
///
/// The ring holds its own duplicate of the event's descriptor, so it can be waited on
/// ([`AsFd`]) and outlives nothing it needs; the views it hands out borrow it, so none
/// outlives the mapping.
#[derive(Debug)]
pub struct Ring {
    mmap: sys::Mmap,
    fd: OwnedFd,
    writable: bool,
    backward: bool,
}

impl Ring {
    /// Map `event`'s ring with `data_pages` pages of data (a power of two) after the control
    /// page. 0 maps the control page alone: no records (no consumer), but its self-monitoring
    /// fields (`time_enabled`, `index`, …), read through [`Ring::mapping`] and
    /// [`perfring::selfmon`].
    pub fn map(event: &Event, data_pages: usize, writable: bool) -> Result<Ring, Error> {
        if data_pages != 0 && !data_pages.is_power_of_two() {
            return Err(Error::RingSize { data_pages });
        }
        let page = sys::page_size();
        let len = (1 + data_pages).checked_mul(page).ok_or(Error::RingSize { data_pages })?;
        let mmap = sys::Mmap::map(event.as_fd(), len, 0, writable).map_err(io_err("mmap of the ring"))?;
        let fd = event.as_fd().try_clone_to_owned().map_err(io_err("dup of the event fd"))?;
        let ring = Ring { mmap, fd, writable, backward: event.attr().has(attr_flags::WRITE_BACKWARD) };
        ring.mapping()?;
        Ok(ring)
    }

    /// perfring's view of the mapping (control page and data area).
    pub fn mapping(&self) -> Result<Mapping<'_>, Error> {
        Ok(self.mmap.attach()?)
    }

    /// Bytes of the data area.
    pub fn data_size(&self) -> usize {
        self.mmap.len() - sys::page_size()
    }

    /// Whether the kernel respects `data_tail` (a writable mapping).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Whether the ring is written backward.
    pub fn backward(&self) -> bool {
        self.backward
    }

    /// A consumer of a forward ring: it starts at the `data_tail` the page holds and, for a
    /// writable mapping, stores the tail after each batch (so the kernel can reuse the space).
    /// Records are zero-copy views into the kernel's mapping when contiguous.
    pub fn consumer(&self) -> Result<Consumer<Mapping<'_>, Trusted>, Error> {
        // SAFETY: the producer of this ring is the kernel, which follows the protocol: it never
        // writes between data_tail and data_head (writable mapping), and zero-copy views are
        // only handed out for the duration of a batch.
        Ok(unsafe { Consumer::trusted(self.mapping()?) }?)
    }

    /// A newest-first reader of a backward ring. For an overwrite (read-only) ring, pause the
    /// event's output around each read, as perf does.
    pub fn backward_reader(&self) -> Result<BackwardReader<Mapping<'_>>, Error> {
        Ok(BackwardReader::new(self.mapping()?, self.writable)?)
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
    /// Errors: [`Error::AuxSize`], [`Error::AuxNeedsWritableRing`] (the ring was mapped
    /// read-only, so its control page cannot take the layout), [`Error::AuxNotSupported`] (the
    /// event's PMU has no AUX area: software and tracepoint events never do), [`Error::Io`] for
    /// other refusals (EPERM/ENOMEM: over `perf_event_mlock_kb` without CAP_IPC_LOCK).
    pub fn map_aux(&self, aux_pages: usize, writable: bool) -> Result<AuxArea<'_>, Error> {
        if !aux_pages.is_power_of_two() {
            return Err(Error::AuxSize { aux_pages });
        }
        if !self.writable {
            return Err(Error::AuxNeedsWritableRing);
        }
        let size = aux_pages.checked_mul(sys::page_size()).ok_or(Error::AuxSize { aux_pages })?;
        // The data area ends at a page boundary: the mapping is `1 + 2^n` pages.
        let offset = self.mmap.len() as u64;
        self.mmap
            .store_u64(offsets::AUX_OFFSET, offset, self.writable)
            .and_then(|()| self.mmap.store_u64(offsets::AUX_SIZE, size as u64, self.writable))
            .ok_or(Error::AuxNeedsWritableRing)?;
        let mmap =
            sys::Mmap::map(self.fd.as_fd(), size, offset, writable).map_err(|error| match error.raw_os_error() {
                Some(errno @ (libc::EOPNOTSUPP | libc::EINVAL)) => Error::AuxNotSupported { errno },
                _ => Error::Io { what: "mmap of the AUX area", error },
            })?;
        let aux = AuxArea { ring: self, mmap, offset, writable };
        aux.mapping()?;
        Ok(aux)
    }

    /// The AUX layout the control page holds: (`aux_offset`, `aux_size`), as written by
    /// [`Ring::map_aux`] (both 0 before).
    pub fn aux_layout(&self) -> (u64, u64) {
        let load = |off| self.mmap.load_u64(off).unwrap_or(0);
        (load(offsets::AUX_OFFSET), load(offsets::AUX_SIZE))
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
    /// perfring's view of the ring (control page and data area) with this AUX area attached.
    pub fn mapping(&self) -> Result<Mapping<'_>, Error> {
        Ok(self.mmap.attach_as_aux(self.ring.mapping()?)?)
    }

    /// The consumer of the AUX area: [`AuxConsumer::read`] in a writable AUX mapping (it
    /// stores `aux_tail`), [`AuxConsumer::snapshot`] in a read-only one.
    pub fn consumer(&self) -> Result<AuxConsumer<Mapping<'_>>, Error> {
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
