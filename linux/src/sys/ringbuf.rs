//! A BPF ring buffer's two mappings (`BPF_MAP_TYPE_RINGBUF` and `BPF_MAP_TYPE_USER_RINGBUF`), as
//! libbpf's `ring_buffer__add` and `user_ring_buffer__new` make them, and perfring's consumer or
//! producer over them, which lives exactly as long as they do.

use std::io;
use std::os::fd::BorrowedFd;

use perfring::bpf_ringbuf::{
    Config, RingbufConsumer, RingbufError, RingbufMapping, RingbufRecord, SpinLock, UserProducer,
};

use super::Mmap;

/// Which side of the ring user space is: the kernel's ring is read (consumer page writable,
/// producer page and data read-only), the user ring is written (the reverse). The kernel
/// refuses any other protection (`-EPERM`, `ringbuf_map_mmap_kern` and `_user`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Consumer,
    Producer,
}

/// Map the ring of `fd` (data area `size` bytes): the consumer page at offset 0, then one page
/// later the producer page followed by the data area twice (the kernel maps its pages twice
/// back to back, so no record wraps for user space), and lay perfring's view over them.
fn map(fd: BorrowedFd<'_>, size: usize, side: Side) -> io::Result<(Mmap, Mmap, RingbufMapping<'static>)> {
    let page = super::page_size();
    let len = size
        .checked_mul(2)
        .and_then(|data| data.checked_add(page))
        .ok_or_else(|| io::Error::from_raw_os_error(libc::E2BIG))?;
    let consumer = Mmap::map(fd, page, 0, side == Side::Consumer)?;
    let producer = Mmap::map(fd, len, page as u64, side == Side::Producer)?;
    // SAFETY: both mappings are live, page-aligned and of the lengths asked for (one page;
    // one page and twice `size`), and the kernel maps the data pages twice back to back, so the
    // second `size` bytes are the first again. The 'static lifetime is never relied on: the
    // values below keep the view (inside their consumer or producer) in a field declared
    // before the mappings (dropped first), never move it out or lend it by `&mut`, and every
    // view, record or reservation they hand out borrows them. The kernel is the only other
    // party, and follows the ring's protocol; hostile contents are the consumer's typed errors.
    let mapping =
        unsafe { RingbufMapping::attach(consumer.ptr(), producer.ptr(), size, page, true) }.map_err(setup_to_io)?;
    Ok((consumer, producer, mapping))
}

fn setup_to_io(e: RingbufError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

/// The reading side of a `BPF_MAP_TYPE_RINGBUF`: perfring's zero-copy consumer over its mappings.
#[derive(Debug)]
pub(crate) struct KernelRingbuf {
    /// Declared before the mappings: dropped before they are unmapped.
    consumer: RingbufConsumer<RingbufMapping<'static>>,
    _consumer_page: Mmap,
    _producer: Mmap,
}

impl KernelRingbuf {
    /// Map the ringbuf `fd` whose data area is `size` bytes. The caller makes sure no other
    /// consumer of this map runs in this process (`consumer_pos` has one writer).
    pub(crate) fn map(fd: BorrowedFd<'_>, size: usize) -> io::Result<KernelRingbuf> {
        let (consumer_page, producer, mapping) = map(fd, size, Side::Consumer)?;
        // SAFETY: the producer is the kernel, which writes no byte of a committed record
        // before `consumer_pos` passes it; this consumer is the only writer of `consumer_pos`
        // in this process (the caller's promise, kept by the readers' map claims), and the
        // views it lends are borrows of it, so none outlives the mappings.
        let consumer = unsafe { RingbufConsumer::trusted(mapping) }.map_err(setup_to_io)?;
        Ok(KernelRingbuf { consumer, _consumer_page: consumer_page, _producer: producer })
    }

    /// [`RingbufConsumer::for_each`]: the records up to `producer_pos`, each sample handed to
    /// `f` (its view borrows this value, and so the mappings, for the call).
    pub(crate) fn for_each(&mut self, f: impl FnMut(&RingbufRecord<'_>)) -> Result<usize, RingbufError> {
        // The kernel's double mapping: every sample is one view, no scratch is used.
        self.consumer.for_each(&mut [], f)
    }

    /// [`RingbufConsumer::prepare_to_sleep`]: publish, fence, look again.
    pub(crate) fn prepare_to_sleep(&mut self) -> Result<bool, RingbufError> {
        self.consumer.prepare_to_sleep()
    }

    /// [`RingbufConsumer::release`]: everything read published, the held record included.
    pub(crate) fn release(&mut self) {
        self.consumer.release();
    }

    /// [`RingbufConsumer::skip_to_producer`]: past a fault; the bytes skipped.
    pub(crate) fn skip_to_producer(&mut self) -> usize {
        self.consumer.skip_to_producer()
    }

    /// [`RingbufConsumer::configure`].
    pub(crate) fn configure(&mut self, config: Config) {
        self.consumer.configure(config);
    }

    /// Discarded records the consumer skipped.
    pub(crate) fn discarded(&self) -> u64 {
        self.consumer.discarded()
    }
}

/// The writing side of a `BPF_MAP_TYPE_USER_RINGBUF`: perfring's producer over its mappings.
#[derive(Debug)]
pub(crate) struct UserRingbufMaps {
    /// Declared before the mappings: dropped before they are unmapped.
    producer: UserProducer<RingbufMapping<'static>, SpinLock>,
    _consumer_page: Mmap,
    _producer: Mmap,
}

impl UserRingbufMaps {
    /// Map the user ringbuf `fd` whose data area is `size` bytes. The caller makes sure no
    /// other producer of this map runs in this process.
    pub(crate) fn map(fd: BorrowedFd<'_>, size: usize) -> io::Result<UserRingbufMaps> {
        let (consumer_page, producer_map, mapping) = map(fd, size, Side::Producer)?;
        // SAFETY: the only producer in this process (the caller's promise, kept by the map
        // claims); the consumer is the kernel's `bpf_user_ringbuf_drain`, which stores in
        // `consumer_pos` only positions it has finished reading.
        let producer = unsafe { UserProducer::new(mapping, SpinLock::new()) }.map_err(setup_to_io)?;
        Ok(UserRingbufMaps { producer, _consumer_page: consumer_page, _producer: producer_map })
    }

    /// The producer (its reservations borrow it, and so the mappings).
    pub(crate) fn producer(&self) -> &UserProducer<RingbufMapping<'_>, SpinLock> {
        &self.producer
    }
}
