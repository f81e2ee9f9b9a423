//! `PerfEventArray` against the kernel: a BPF program (assembled by hand in
//! `perfring_test_support::bpf`) calls `bpf_perf_event_output` once per `BPF_PROG_TEST_RUN`
//! repetition on a pinned thread, and counts its runs and failed outputs per CPU in an array
//! map; the reader must deliver every record once, in order, with the payload the program
//! wrote, and count as lost exactly what the program saw fail. A kernel (or user) that refuses
//! BPF or the CPU-wide BPF_OUTPUT event makes each test skip (a failure in CI).

use std::cell::RefCell;
use std::os::fd::AsFd;
use std::time::Duration;

use perfring::consumer::ReadError;
use perfring::memory::{Position, RingMemory};
use perfring_linux::{LinuxError, PerfEventArray, PerfEventArrayBuilder, RawSample, Wakeup};
use perfring_test_support::bpf::{self, OutputProgram};

/// What a callback saw: (cpu, payload bytes, whether it came in two parts).
type Seen = RefCell<Vec<(u32, Vec<u8>, bool)>>;

fn record(seen: &Seen) -> impl FnMut(&RawSample<'_>) + '_ {
    |s| {
        let (a, b) = s.parts();
        seen.borrow_mut().push((s.cpu(), [a, b].concat(), !b.is_empty()));
    }
}

/// Build the reader, or skip where this machine refuses BPF maps or the CPU-wide event.
#[track_caller]
fn open<F: FnMut(&RawSample<'_>)>(builder: PerfEventArrayBuilder, f: F) -> Option<PerfEventArray<F>> {
    match builder.build(f) {
        Ok(reader) => Some(reader),
        Err(e) if e.errno().is_some_and(perfring_test_support::unavailable_here) => {
            perfring_test_support::skip(format!("PerfEventArray: {e}"));
            None
        }
        Err(LinuxError::OpenEvent { error, .. }) if crate::common::refusal(&error).is_some() => {
            perfring_test_support::skip(format!("BPF_OUTPUT event: {error}"));
            None
        }
        Err(e) => panic!("PerfEventArray: {e} ({e:?})"),
    }
}

/// Load the output program over the reader's map, or skip where BPF programs are refused.
#[track_caller]
fn load<F: FnMut(&RawSample<'_>)>(reader: &PerfEventArray<F>, payload: usize) -> Option<OutputProgram> {
    match OutputProgram::load(reader.map_fd(), payload) {
        Ok(p) => Some(p),
        Err(e) if bpf::refused(&e) => {
            perfring_test_support::skip(format!("BPF program: {e}"));
            None
        }
        Err(e) => panic!("loading the output program: {e}"),
    }
}

/// Run `prog` `repeat` times on a thread pinned to `cpu`.
fn run_on(cpu: u32, prog: &OutputProgram, repeat: u32) {
    std::thread::scope(|s| {
        s.spawn(|| {
            bpf::pin_to_cpu(cpu).expect("pinning to an online CPU");
            prog.run(repeat).expect("BPF_PROG_TEST_RUN");
        });
    });
}

/// The RAW size the kernel writes for a payload: 4 + size rounded up to 8, less the 4.
fn raw_len(payload: usize) -> usize {
    (payload + 4).div_ceil(8) * 8 - 4
}

#[test]
fn every_record_is_read_once_in_order_per_cpu_with_its_payload() {
    let seen = Seen::default();
    let Some(mut reader) = open(PerfEventArray::builder().data_pages(16), record(&seen)) else { return };
    let Some(prog) = load(&reader, 32) else { return };
    let cpus = reader.cpus().to_vec();
    // 4 rounds of 500 per CPU (24 KiB a round: the 64 KiB rings never fill), read between.
    for _ in 0..4 {
        for &cpu in &cpus {
            run_on(cpu, &prog, 500);
        }
        reader.poll(Some(Duration::from_millis(10))).unwrap();
    }
    reader.flush().unwrap();
    let seen = seen.borrow();
    for &cpu in &cpus {
        let mine: Vec<_> = seen.iter().filter(|s| s.0 == cpu).collect();
        assert_eq!(prog.counts(cpu).unwrap(), (2000, 0), "CPU {cpu}: runs and failed outputs");
        assert_eq!(mine.len(), 2000, "CPU {cpu}: every record once");
        for (seq, (_, bytes, _)) in mine.iter().enumerate() {
            assert_eq!(bytes.len(), raw_len(32), "CPU {cpu}, record {seq}: the kernel's RAW size");
            assert_eq!(bytes[..32], prog.expected(seq as u64, cpu)[..], "CPU {cpu}, record {seq}: in order");
        }
    }
    assert_eq!(reader.lost_total(), 0);
}

#[test]
fn a_stream_read_under_the_wait_policy_is_read_once_in_order_with_nothing_stranded() {
    // One wakeup per record, the default batch interval: while the program streams, `poll`
    // pauses and drains instead of waiting for wakeups; when it stops, the pauses end with
    // every record read. 20,000 records of 40 bytes fit the 4 MiB ring: nothing can be lost.
    let seen = Seen::default();
    let builder = PerfEventArray::builder().data_pages(1024).wakeup(Wakeup::Events(1));
    let Some(mut reader) = open(builder, record(&seen)) else { return };
    let Some(prog) = load(&reader, 24) else { return };
    let cpu = reader.cpus()[0];
    let produce = || {
        for _ in 0..20 {
            prog.run(1000).expect("BPF_PROG_TEST_RUN");
        }
    };
    let (_, polls) = crate::common::poll_while_streaming(cpu, produce, || {
        reader.poll(Some(Duration::from_millis(10))).unwrap().samples
    });
    assert_eq!(reader.flush().unwrap().samples, 0, "every record was read by poll ({polls} calls)");
    let seen = seen.borrow();
    assert_eq!(prog.counts(cpu).unwrap(), (20_000, 0), "runs and failed outputs");
    assert_eq!(seen.len(), 20_000, "every record once");
    for (seq, (c, bytes, _)) in seen.iter().enumerate() {
        assert_eq!(*c, cpu);
        assert_eq!(bytes[..24], prog.expected(seq as u64, cpu)[..], "record {seq}: in order, its payload");
    }
    assert_eq!(reader.lost_total(), 0);
}

#[test]
fn records_below_the_watermark_are_read_by_flush_and_by_drop() {
    let seen = Seen::default();
    let cpu = {
        // A watermark of half the 64 KiB ring: 20 records of 48 bytes never reach it.
        let builder = PerfEventArray::builder().data_pages(16).wakeup(Wakeup::Watermark(32 << 10));
        let Some(mut reader) = open(builder, record(&seen)) else { return };
        let Some(prog) = load(&reader, 32) else { return };
        let cpu = reader.cpus()[0];
        run_on(cpu, &prog, 10);
        let ready = perfring_linux::wait(&[reader.as_fd()], Some(Duration::ZERO)).unwrap();
        assert!(!ready[0].readable, "10 records below the watermark: no wakeup");
        assert_eq!(reader.flush().unwrap().samples, 10, "flush reads what no wakeup announced");
        run_on(cpu, &prog, 10);
        assert_eq!(seen.borrow().len(), 10);
        cpu
        // Dropped here: the last 10, below the watermark, are read by the drop.
    };
    let seen = seen.borrow();
    assert_eq!(seen.len(), 20, "the drop read the 10 records after the flush");
    for (seq, s) in seen.iter().enumerate() {
        assert_eq!(s.0, cpu);
        assert_eq!(&s.1[..8], &(seq as u64).to_ne_bytes(), "record {seq}");
    }
}

#[test]
fn a_wakeups_worth_already_there_is_read_without_waiting_and_its_wakeup_ends_one_later_wait() {
    let seen = Seen::default();
    let builder = PerfEventArray::builder().data_pages(16).wakeup(Wakeup::Events(4));
    let Some(mut reader) = open(builder, record(&seen)) else { return };
    let Some(prog) = load(&reader, 8) else { return };
    let cpu = reader.cpus()[0];
    let readable =
        |reader: &PerfEventArray<_>| perfring_linux::wait(&[reader.as_fd()], Some(Duration::ZERO)).unwrap()[0].readable;
    // No record read yet, so no mean size: the first poll waits on epoll, which the kernel's
    // two wakeups (8 records, one per 4) made readable, and takes the wakeups.
    run_on(cpu, &prog, 8);
    assert_eq!(reader.poll(Some(Duration::from_secs(5))).unwrap().samples, 8);
    assert!(!readable(&reader), "the wait took the wakeups");
    // Now 8 records (two wakeups' worth at the mean size) are there before the call: read
    // without waiting, so the kernel's wakeups are still pending on the epoll set. (Looking
    // would take them: a perf event reports each wakeup to one poller.)
    run_on(cpu, &prog, 8);
    assert_eq!(reader.poll(Some(Duration::from_secs(5))).unwrap().samples, 8);
    // The next poll finds nothing unread and waits: the pending wakeup ends the wait at once
    // (had the read above waited on epoll, it would have taken it, and this wait lasted 5 s).
    let t = std::time::Instant::now();
    assert_eq!(reader.poll(Some(Duration::from_secs(5))).unwrap().samples, 0);
    assert!(t.elapsed() < Duration::from_secs(4), "the pending wakeup ended the wait");
    assert!(!readable(&reader), "and it was taken");
    // One record, less than a wakeup's worth: not read until its wakeup (or the timeout).
    run_on(cpu, &prog, 1);
    let t = std::time::Instant::now();
    assert_eq!(reader.poll(Some(Duration::from_millis(50))).unwrap().samples, 1);
    assert!(t.elapsed() >= Duration::from_millis(50), "below a wakeup's worth, poll waited");
    let seen = seen.borrow();
    assert_eq!(seen.len(), 17);
    for (seq, s) in seen.iter().enumerate() {
        assert_eq!(&s.1[..8], &(seq as u64).to_ne_bytes(), "record {seq}: once, in order");
    }
}

#[test]
fn lost_equals_the_programs_own_count_of_failed_outputs() {
    let seen = Seen::default();
    // One page (4 KiB) of 80-byte records: 51 fit, the rest of 500 fail.
    let Some(mut reader) = open(PerfEventArray::builder().data_pages(1), record(&seen)) else { return };
    let Some(prog) = load(&reader, 64) else { return };
    let cpu = reader.cpus()[0];
    run_on(cpu, &prog, 500);
    let (runs, failed) = prog.counts(cpu).unwrap();
    assert!(failed > 400, "the ring filled: {failed} of {runs} outputs failed");
    let first = reader.consume().unwrap();
    assert_eq!(first.samples, runs - failed, "every output that succeeded is read");
    assert_eq!(first.lost, 0, "no LOST record yet: the kernel reports the drops at its next output");
    // One more output: the kernel writes LOST (the drops it holds) before it.
    run_on(cpu, &prog, 1);
    let second = reader.consume().unwrap();
    assert_eq!((second.samples, second.lost), (1, failed), "LOST carries exactly the program's failures");
    assert_eq!(reader.lost(), reader.cpus().iter().map(|&c| if c == cpu { failed } else { 0 }).collect::<Vec<_>>());
    // The kernel's own count agrees, and a flush does not count the same drops twice.
    assert_eq!(reader.flush().unwrap().lost, 0);
    assert_eq!(reader.lost_total(), failed);

    // Drops the kernel never reports (no output after them): taken by flush.
    run_on(cpu, &prog, 500);
    let (_, failed_now) = prog.counts(cpu).unwrap();
    let flushed = reader.flush().unwrap();
    assert_eq!(flushed.lost, failed_now - failed, "flush takes the kernel's pending count");
    assert_eq!(reader.lost_total(), failed_now);
    assert_eq!(seen.borrow().len() as u64, 1001 - failed_now, "every record that got in was read");
}

#[test]
fn a_payload_that_wraps_the_rings_end_arrives_in_two_parts_equal_to_what_was_sent() {
    let seen = Seen::default();
    // 216-byte records in a 4 KiB ring: they cross its end at various points.
    let Some(mut reader) = open(PerfEventArray::builder().data_pages(1), record(&seen)) else { return };
    let Some(prog) = load(&reader, 200) else { return };
    let cpu = reader.cpus()[0];
    let mut wrapped = 0;
    for seq in 0..120u64 {
        run_on(cpu, &prog, 1);
        reader.consume().unwrap();
        let (_, bytes, two) = seen.borrow_mut().pop().expect("the record just written");
        assert_eq!(bytes[..200], prog.expected(seq, cpu)[..], "record {seq}");
        wrapped += usize::from(two);
    }
    assert!(wrapped >= 5, "{wrapped} of 120 records wrapped the ring's end");
    // The copy into one slice, at the caller's choice, and its refusal of a short buffer.
    let copied = RefCell::new(Vec::new());
    drop(reader);
    let Some(mut reader) = open(PerfEventArray::builder().data_pages(1), |s: &RawSample<'_>| {
        let mut buf = [0u8; 256];
        let one = s.contiguous(&mut buf).unwrap().to_vec();
        let short = s.contiguous(&mut [0u8; 16]).map(<[u8]>::len);
        copied.borrow_mut().push((one, s.parts().1.is_empty(), short.map_err(|e| e.to_string())));
    }) else {
        return;
    };
    let Some(prog) = load(&reader, 200) else { return };
    for _ in 0..40 {
        run_on(cpu, &prog, 1);
        reader.consume().unwrap();
    }
    drop(reader);
    let copied = copied.into_inner();
    assert_eq!(copied.len(), 40);
    for (seq, (one, whole, short)) in copied.iter().enumerate() {
        assert_eq!(one[..200], prog.expected(seq as u64, cpu)[..], "record {seq}, as one slice");
        match (whole, short) {
            (true, Ok(len)) => assert_eq!(*len, raw_len(200), "a view needs no buffer"),
            (false, Err(e)) => assert!(e.contains("needs a buffer of 204 bytes"), "{e}"),
            other => panic!("record {seq}: {other:?}"),
        }
    }
    assert!(copied.iter().any(|c| !c.1), "a wrapped record was copied");
}

#[test]
fn overwrite_mode_reads_the_newest_records_and_counts_the_rest() {
    let seen = Seen::default();
    let builder = PerfEventArray::builder().data_pages(1).overwrite(true);
    let Some(mut reader) = open(builder, record(&seen)) else { return };
    let Some(prog) = load(&reader, 32) else { return };
    let (cpu, index) = (reader.cpus()[0], 0);
    // 300 records of 48 bytes into 4 KiB: the newest 85 are kept, none is refused.
    run_on(cpu, &prog, 300);
    assert_eq!(prog.counts(cpu).unwrap(), (300, 0), "an overwrite ring never refuses an output");
    let read = reader.consume().unwrap();
    let kept = read.samples;
    assert!((80..=85).contains(&kept), "{kept} records kept");
    assert_eq!(read.overwritten_bytes, (300 - kept) * 48, "the rest counted, in bytes");
    for (i, s) in seen.borrow().iter().enumerate() {
        assert_eq!(s.1[..32], prog.expected(299 - i as u64, cpu)[..], "newest first: record {i}");
    }
    // What the kernel drops while the ring is paused is counted: reported with the next output.
    seen.borrow_mut().clear();
    reader.rings()[index].pause_output(true).unwrap();
    run_on(cpu, &prog, 7);
    reader.rings()[index].pause_output(false).unwrap();
    assert_eq!(prog.counts(cpu).unwrap(), (307, 7), "paused: every output failed");
    run_on(cpu, &prog, 1);
    let read = reader.consume().unwrap();
    assert_eq!((read.samples, read.lost, read.overwritten_bytes), (1, 7, 0));
    assert_eq!(seen.borrow()[0].1[..32], prog.expected(307, cpu)[..]);
    // And taken by flush where no output follows.
    reader.rings()[index].pause_output(true).unwrap();
    run_on(cpu, &prog, 5);
    reader.rings()[index].pause_output(false).unwrap();
    assert_eq!(reader.flush().unwrap().lost, 5);
    assert_eq!(reader.lost_total(), 12);
}

#[test]
fn a_head_published_past_the_records_is_a_typed_error_and_the_reader_goes_on() {
    // The kernel maps a ring's data pages read-only (a store there is SIGBUS), but its control
    // page is writable: a hostile writer of it can publish a `data_head` that cuts a record.
    // (A RAW size past its record cannot be planted in a kernel ring: `BpfRecord::parse`'s
    // unit tests and the `bpf_output` fuzz target cover it.)
    let seen = Seen::default();
    let Some(mut reader) = open(PerfEventArray::builder().data_pages(1), record(&seen)) else { return };
    let Some(prog) = load(&reader, 16) else { return };
    let cpu = reader.cpus()[0];
    // Three 32-byte records; the head published 8 bytes into the second.
    run_on(cpu, &prog, 3);
    let tail = {
        let mapping = reader.rings()[0].mapping().unwrap();
        let tail = mapping.position(Position::DataTail).load(perfring::fences::LOCAL);
        mapping.position(Position::DataHead).store(tail + 40, perfring::fences::LOCAL);
        tail
    };
    match reader.consume() {
        Err(LinuxError::BadBpfRing {
            cpu: c,
            error: ReadError::SizeBeyondHead { position, size: 32, available: 8 },
            skipped: 8,
        }) => {
            assert_eq!((c, position), (cpu, tail + 32));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.borrow().len(), 1, "the record before it was delivered");
    // The reader's tail is now inside the second record: the next read meets the middle of a
    // record (a header of size 0 there), an error again, and skips to the kernel's real head.
    run_on(cpu, &prog, 2);
    let e = reader.consume().unwrap_err();
    assert!(matches!(e, LinuxError::BadBpfRing { error: ReadError::ZeroSize { .. }, skipped: 120, .. }), "{e:?}");
    run_on(cpu, &prog, 2);
    assert_eq!(reader.consume().unwrap().samples, 2, "read on after the skips");
    let seen = seen.borrow();
    assert_eq!(seen.iter().map(|s| s.1[0]).collect::<Vec<_>>(), [0, 5, 6], "records 0, 5 and 6 read");
    assert_eq!(prog.counts(cpu).unwrap(), (7, 0));
}

#[test]
fn tokio_asyncfd_wakes_on_the_readers_epoll_set() {
    use tokio::io::unix::AsyncFd;
    let seen = Seen::default();
    let builder = PerfEventArray::builder().data_pages(4).wakeup(Wakeup::Events(16));
    let Some(reader) = open(builder, record(&seen)) else { return };
    let Some(prog) = load(&reader, 8) else { return };
    let cpu = reader.cpus()[0];
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let wakeups = rt.block_on(async {
        // SAFETY: the reader owns its epoll descriptor and keeps it open, with the same
        // number, for as long as the AsyncFd owns the reader.
        let mut fd = unsafe { AsyncFd::register(reader) }.map_err(|e| e.to_string()).unwrap();
        let mut wakeups = 0;
        for _ in 0..10 {
            run_on(cpu, &prog, 16); // one wakeup's worth
            let mut guard = tokio::time::timeout(Duration::from_secs(5), fd.readable_mut()).await.unwrap().unwrap();
            wakeups += 1;
            guard.get_inner_mut().consume().unwrap();
            guard.clear_ready();
        }
        wakeups
    });
    assert_eq!(wakeups, 10);
    assert_eq!(seen.borrow().len(), 160, "every record read on the wakeups");
}
