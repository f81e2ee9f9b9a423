//! [`Ring`]: the kernel's mapping of an event's ring (`1 + 2^n` pages), read through
//! perfring's [`Consumer`] (forward) or [`BackwardReader`] (backward).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use perfring::consumer::Trusted;
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
    /// page.
    pub fn map(event: &Event, data_pages: usize, writable: bool) -> Result<Ring, Error> {
        if !data_pages.is_power_of_two() {
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
