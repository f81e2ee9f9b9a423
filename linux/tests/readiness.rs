//! Readiness without a baked-in runtime: a ring is `AsFd`, which plain epoll and tokio's
//! `AsyncFd` both take, and so is a `Session` (one descriptor for all its events). Each test
//! waits for a wakeup (`wakeup_events`), drains, and checks the samples arrived. A kernel that refuses `perf_event_open` makes each skip (a failure in CI).

use perfring::record::EventRecord;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, Instant};

use perfring::record::sample_type as st;
use perfring_linux::software;
use perfring_linux::{Event, EventAttr, Ring, Target};

fn sampling_ring() -> Option<(Event, Ring)> {
    let attr =
        EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP | st::TID).wakeup_events(8);
    let event = crate::common::open_event(&attr, Target::ThisThread, None)?;
    let ring = Ring::map(&event, 4, true).unwrap();
    Some((event, ring))
}

/// Burn CPU on this thread until `done` says so (or 10 s pass).
fn work_until(mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() && t.elapsed() < Duration::from_secs(10) {
        for _ in 0..10_000 {
            std::hint::black_box(t.elapsed());
        }
    }
}

fn drain(ring: &Ring) -> usize {
    ring.consumer().unwrap().for_each(&mut vec![0u8; 1 << 16], |_| {}).unwrap()
}

#[test]
fn plain_epoll_wakes_on_the_rings_wakeup() {
    let Some((event, ring)) = sampling_ring() else { return };
    // SAFETY: epoll_create1 has no preconditions; the fd is closed below.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(ep >= 0);
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 7 };
    // SAFETY: `ep` and the ring's fd are open; `ev` is a valid epoll_event.
    assert_eq!(unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, ring.as_fd().as_raw_fd(), &mut ev) }, 0);
    event.enable().unwrap();
    let mut out = [libc::epoll_event { events: 0, u64: 0 }; 1];
    let mut woke = 0;
    work_until(|| {
        // SAFETY: `out` has room for one event; timeout 0 never blocks.
        woke = unsafe { libc::epoll_wait(ep, out.as_mut_ptr(), 1, 0) };
        woke > 0
    });
    event.disable().unwrap();
    // SAFETY: closing the epoll fd this test opened.
    unsafe { libc::close(ep) };
    assert_eq!(woke, 1, "epoll reported the ring readable");
    assert_eq!({ out[0].u64 }, 7);
    assert!(drain(&ring) >= 8, "at least wakeup_events samples behind the wakeup");
}

#[test]
fn tokio_asyncfd_wakes_on_the_rings_wakeup() {
    use tokio::io::unix::AsyncFd;
    let Some((event, ring)) = sampling_ring() else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let samples = rt.block_on(async {
        // SAFETY: the ring owns its descriptor (a dup of the event's) and keeps it open, with the
        // same number, for as long as the AsyncFd owns the ring.
        let fd = unsafe { AsyncFd::register(ring) }.map_err(|e| e.to_string()).unwrap();
        event.enable().unwrap();
        // The work runs on a plain thread: the event follows *this* thread, so spin here
        // between polls instead.
        let mut total = 0;
        let deadline = Instant::now() + Duration::from_secs(10);
        while total < 8 && Instant::now() < deadline {
            work_until(|| true);
            let ready = tokio::time::timeout(Duration::from_millis(1), fd.readable()).await;
            if let Ok(guard) = ready {
                let mut guard = guard.unwrap();
                total += drain(fd.get_ref());
                guard.clear_ready();
            }
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(2) {
                std::hint::black_box(t.elapsed());
            }
        }
        event.disable().unwrap();
        total
    });
    assert!(samples >= 8, "AsyncFd reported the ring readable and {samples} samples were drained");
}

#[test]
fn a_sessions_one_fd_drives_tokio_asyncfd_to_the_commands_end() {
    use perfring_linux::Session;
    use tokio::io::unix::AsyncFd;
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::TID).wakeup_events(4);
    let work = "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done";
    let Some(session) = crate::common::open_session(Session::command(["sh", "-c", work]).event(attr)) else { return };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (wakeups, samples, status) = rt.block_on(async move {
        // The session's descriptor is an epoll set of all its events, on every CPU.
        // SAFETY: the session owns its epoll descriptor and keeps it open, with the same
        // number, for as long as the AsyncFd owns the session.
        let mut fd = unsafe { AsyncFd::register(session) }.map_err(|e| e.to_string()).unwrap();
        fd.get_mut().start().unwrap();
        let (mut wakeups, mut samples) = (0, 0);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // A timeout as well: the end is checked even without a last wakeup.
            if let Ok(guard) = tokio::time::timeout(Duration::from_millis(100), fd.readable_mut()).await {
                let mut guard = guard.unwrap();
                wakeups += 1;
                samples += guard.get_inner_mut().drain(|r| assert!(r.sample().is_ok())).unwrap();
                guard.clear_ready();
            }
            let session = fd.get_mut();
            if session.wait(Some(Duration::ZERO)).unwrap() || Instant::now() > deadline {
                samples += session.drain(|_| {}).unwrap();
                break;
            }
        }
        let mut session = fd.into_inner();
        (wakeups, samples, session.exit_status().unwrap())
    });
    println!("{wakeups} wakeups through AsyncFd, {samples} samples");
    assert_eq!(status, Some(0), "the command ended within 30 s");
    assert!(wakeups >= 1 && samples >= 4, "{wakeups} wakeups, {samples} samples");
}
