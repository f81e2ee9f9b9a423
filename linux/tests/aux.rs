//! The AUX area of perfring-linux against the real kernel: the layout written into the control
//! page, the typed errors, and the kernel's refusal for an event whose PMU has no AUX area.
//! This machine has no AUX-capable PMU (intel_pt, arm_spe, cs_etm …), so reading AUX data from
//! the kernel is not tested here: perfring's `AuxConsumer` is tested in core against the
//! simulated driver (`AuxProducer`).

use perfring_linux::software;
use perfring_linux::{Event, EventAttr, LinuxError, Ring, Target};

const DATA_PAGES: usize = 8;

fn page() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

/// A sampling software event on this thread, or a skip saying why it cannot be opened.
fn software_event() -> Option<Event> {
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(1_000_000);
    crate::common::open_event(&attr, Target::ThisThread, None)
}

#[test]
fn aux_pages_not_a_power_of_two_are_refused_before_the_kernel_is_asked() {
    let Some(event) = software_event() else { return };
    let ring = Ring::map(&event, DATA_PAGES, true).unwrap();
    for aux_pages in [0, 3, 6] {
        match ring.map_aux(aux_pages, true) {
            Err(LinuxError::AuxSize { aux_pages: n }) => assert_eq!(n, aux_pages),
            other => panic!("{aux_pages} AUX pages: expected LinuxError::AuxSize, got {other:?}"),
        }
    }
    // Nothing was written into the control page.
    assert_eq!(ring.aux_layout(), (0, 0));
    assert!(LinuxError::AuxSize { aux_pages: 3 }.to_string().contains("power of two"));
}

#[test]
fn aux_on_a_read_only_ring_is_a_typed_error() {
    let Some(event) = software_event() else { return };
    let ring = Ring::map(&event, DATA_PAGES, false).unwrap();
    for writable_aux in [true, false] {
        match ring.map_aux(4, writable_aux) {
            Err(LinuxError::AuxNeedsWritableRing) => {}
            other => panic!("read-only ring: expected LinuxError::AuxNeedsWritableRing, got {other:?}"),
        }
    }
    assert_eq!(ring.aux_layout(), (0, 0), "a read-only control page must not be written");
    assert!(LinuxError::AuxNeedsWritableRing.to_string().contains("writable ring"));
}

#[test]
fn aux_layout_is_written_after_the_data_area_and_a_software_pmu_refuses_it() {
    let Some(event) = software_event() else { return };
    let ring = Ring::map(&event, DATA_PAGES, true).unwrap();
    let data_end = ring.mapping().unwrap().data_offset() + ring.data_size() as u64;
    for (aux_pages, writable_aux) in [(4usize, true), (1, false), (16, true)] {
        let err = ring.map_aux(aux_pages, writable_aux).expect_err("a software event has no AUX area");
        match err {
            // EOPNOTSUPP comes from `rb_alloc_aux` (no AUX in the PMU), after every layout
            // check of `perf_mmap` passed; a wrong layout would be EINVAL.
            LinuxError::AuxNotSupported { errno } => {
                assert_eq!(errno, libc::EOPNOTSUPP, "the kernel refused the layout")
            }
            other => panic!("expected LinuxError::AuxNotSupported, got {other:?}"),
        }
        assert!(err.to_string().contains("PMU has no AUX area"), "{err}");
        println!("{aux_pages} AUX pages, writable {writable_aux}: {err}");
        // The layout the kernel was given: right after the data area, page aligned, the size asked.
        let (offset, size) = ring.aux_layout();
        assert_eq!(offset, data_end, "aux_offset is the end of the data area");
        assert_eq!(offset, (1 + DATA_PAGES as u64) * page());
        assert_eq!(offset % page(), 0);
        assert_eq!(size, aux_pages as u64 * page());
    }
    // The refusal left the data ring usable.
    let mut consumer = ring.consumer().unwrap();
    let mut scratch = vec![0u8; 1 << 16];
    consumer.for_each(&mut scratch, |_| {}).unwrap();
}
