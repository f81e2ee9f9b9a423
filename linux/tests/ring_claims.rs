//! One consumer per kernel ring, and no perfring producer over one: what keeps the zero-copy
//! views that `Ring::consumer` lends out from being freed or written under the reader (real
//! kernel; software events; skipped, with a line, where `perf_event_open` is refused).

use perfring::record::sample_type as st;
use perfring_linux::software;
use perfring_linux::{Event, EventAttr, LinuxError, Ring, Target};

/// A sampling task-clock event on this thread, or a skip line.
fn sampling_event() -> Option<Event> {
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP | st::TID);
    crate::common::open_event(&attr, Target::ThisThread, None)
}

#[test]
fn a_ring_has_one_consumer_at_a_time() {
    let Some(event) = sampling_event() else { return };
    let ring = Ring::map(&event, 4, true).unwrap();
    let first = ring.consumer().unwrap();
    assert!(matches!(ring.consumer(), Err(LinuxError::ConsumerTaken)), "a second consumer while the first lives");
    drop(first);
    let again = ring.consumer().expect("the claim is given back when the consumer is dropped");
    drop(again);
}

#[test]
fn a_second_mapping_of_the_same_event_shares_the_claim() {
    let Some(event) = sampling_event() else { return };
    let (a, b) = (Ring::map(&event, 4, true).unwrap(), Ring::map(&event, 4, true).unwrap());
    let first = a.consumer().unwrap();
    // Both mappings are the same kernel ring: a consumer of `b` would store data_tail while
    // `first` lends out views of the same bytes.
    assert!(matches!(b.consumer(), Err(LinuxError::ConsumerTaken)));
    drop(first);
    assert!(b.consumer().is_ok());
}

#[test]
fn a_redirected_event_is_not_mapped() {
    let Some(owner) = sampling_event() else { return };
    let member = sampling_event().unwrap();
    let _ring = Ring::map(&owner, 4, true).unwrap();
    member.set_output(Some(&owner)).unwrap();
    // The kernel would map the owner's ring again under the member's name.
    assert!(matches!(Ring::map(&member, 4, true), Err(LinuxError::RingRedirected)));
    member.set_output(None).unwrap();
    assert!(Ring::map(&member, 4, true).is_ok(), "no longer redirected: its own ring");
}

#[test]
fn a_ring_mapping_still_reads() {
    // What `Ring::mapping` lends (not splittable) reads like the Mapping it derefs to.
    let Some(event) = sampling_event() else { return };
    let ring = Ring::map(&event, 4, true).unwrap();
    let mapping = ring.mapping().unwrap();
    assert_eq!(mapping.data_offset(), 4096);
    let mut reader = perfring::consumer::Consumer::untrusted(mapping).unwrap();
    assert!(reader.for_each(&mut [0u8; 256], |_| {}).is_ok());
}
