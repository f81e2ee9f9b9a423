//! The BPF ring buffer over the kernel's layout in real mappings: a memfd mapped as the kernel
//! maps a ringbuf map fd (the consumer page alone; the producer page followed by the data area
//! mapped twice back to back), so that [`RingbufMapping::attach`]'s `double_mapped` promise holds and
//! a record that wraps the end of the area is read in one piece, zero-copy.
#![cfg(not(loom))]

use perfring::bpf_ringbuf::{split_ringbuf, Notify, Payload, RingbufMapping, RingbufMemory};

/// Mappings of a memfd laid out as the kernel's ringbuf: `consumer` (one page), and `producer`
/// (one page, then the `size` data bytes twice). Unmapped on drop.
struct DoubleMap {
    consumer: *mut u8,
    producer: *mut u8,
    page: usize,
    size: usize,
}

impl DoubleMap {
    fn new(size: usize) -> DoubleMap {
        // SAFETY: plain libc calls with checked results; the mappings are only used through
        // the returned value, which unmaps them once.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let fd = libc::memfd_create(c"perfring-bpf-ringbuf".as_ptr(), 0);
            assert!(fd >= 0, "memfd_create");
            assert_eq!(libc::ftruncate(fd, (2 * page + size) as libc::off_t), 0);
            let shared = libc::MAP_SHARED;
            let rw = libc::PROT_READ | libc::PROT_WRITE;
            let consumer = libc::mmap(std::ptr::null_mut(), page, rw, shared, fd, 0);
            assert_ne!(consumer, libc::MAP_FAILED);
            // Reserve the producer page and twice the data, then map the memfd over it twice.
            let area = libc::mmap(
                std::ptr::null_mut(),
                page + 2 * size,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(area, libc::MAP_FAILED);
            let first = libc::mmap(area, page + size, rw, shared | libc::MAP_FIXED, fd, page as libc::off_t);
            assert_eq!(first, area);
            let second_at = area.cast::<u8>().add(page + size).cast();
            let second = libc::mmap(second_at, size, rw, shared | libc::MAP_FIXED, fd, 2 * page as libc::off_t);
            assert_eq!(second, second_at);
            libc::close(fd);
            DoubleMap { consumer: consumer.cast(), producer: area.cast(), page, size }
        }
    }
}

impl Drop for DoubleMap {
    fn drop(&mut self) {
        // SAFETY: the mappings made by `new`, unused after this.
        unsafe {
            libc::munmap(self.consumer.cast(), self.page);
            libc::munmap(self.producer.cast(), self.page + 2 * self.size);
        }
    }
}

#[test]
fn a_record_wrapping_a_double_mapped_area_is_read_in_one_piece() {
    let size = 4096;
    let maps = DoubleMap::new(size);
    // SAFETY: the mappings live as long as `maps`, outliving `map`; nothing else uses them; the
    // data is mapped twice back to back, as `double_mapped` promises.
    let mut map = unsafe { RingbufMapping::attach(maps.consumer, maps.producer, size, maps.page, true) }.unwrap();
    assert!(map.double_mapped());
    let (producer, mut consumer) = split_ringbuf(&mut map).unwrap();
    let mut scratch = vec![0u8; size];
    // One record of size - 16 bytes, read: the next header is at size - 16.
    producer.output(&vec![1; size - 16 - 8], Notify::Never).unwrap();
    assert_eq!(consumer.for_each(&mut scratch, |_| ()), Ok(1));
    // Its sample starts 8 bytes before the end of the area and goes on past it: in the second
    // mapping, the same bytes as the area's start.
    let sample: Vec<u8> = (0..100u8).collect();
    producer.output(&sample, Notify::Never).unwrap();
    let data_start = maps.producer.wrapping_add(maps.page);
    let mut batch = consumer.batch().unwrap();
    let r = batch.next(&mut scratch).unwrap().unwrap();
    match r.payload {
        Payload::One(bytes) => {
            assert_eq!(bytes, &sample[..]);
            assert_eq!(bytes.as_ptr(), data_start.wrapping_add(size - 8), "one view across both mappings, not a copy");
            // SAFETY: the area's first 92 bytes, in the first mapping: the sample's tail there.
            let start = unsafe { std::slice::from_raw_parts(data_start, 92) };
            assert_eq!(start, &sample[8..], "the second mapping is the first one again");
        }
        other => panic!("a double-mapped ring hands out one slice, not {other:?}"),
    }
}
