//! `RingBuffer` and `UserRingBuffer` against the kernel: BPF programs (assembled by hand in
//! `perfring_test_support::bpf_ringbuf`) emit through `bpf_ringbuf_output` and
//! `bpf_ringbuf_reserve` then `_submit` or `_discard`, once per `BPF_PROG_TEST_RUN` repetition
//! on a pinned thread, counting their runs, failed reservations and discards in an array map;
//! another drains a user ring buffer with `bpf_user_ringbuf_drain`, counting what its callback
//! got. Every record must be read once, in order, with its payload, discards never; what the
//! kernel refused must be what the program counted. A kernel (or user) that refuses BPF makes
//! each test skip (a failure in CI).

use std::cell::RefCell;
use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use perfring_linux::{LinuxError, RingBuffer, UserRingBuffer};
use perfring_test_support::bpf::{self, pin_to_cpu};
use perfring_test_support::bpf_ringbuf::{self as rb, DrainProgram, Emit, RingbufProgram};

/// What a callback saw: (ring, payload bytes).
type Seen = RefCell<Vec<(usize, Vec<u8>)>>;

fn record(seen: &Seen) -> impl FnMut(usize, &[u8]) + '_ {
    |ring, sample| seen.borrow_mut().push((ring, sample.to_vec()))
}

/// `made`, or a visible skip where this machine refuses BPF maps or their mappings.
#[track_caller]
fn made<T>(what: &str, made: Result<T, LinuxError>) -> Option<T> {
    match made {
        Ok(v) => Some(v),
        Err(e) if e.errno().is_some_and(perfring_test_support::unavailable_here) => {
            perfring_test_support::skip(format!("{what}: {e}"));
            None
        }
        Err(e) => panic!("{what}: {e} ({e:?})"),
    }
}

/// `loaded`, or a visible skip where this machine refuses BPF programs (or these helpers).
#[track_caller]
fn loaded<T>(what: &str, loaded: io::Result<T>) -> Option<T> {
    match loaded {
        Ok(p) => Some(p),
        Err(e) if bpf::refused(&e) => {
            perfring_test_support::skip(format!("{what}: {e}"));
            None
        }
        Err(e) => panic!("loading {what}: {e}"),
    }
}

/// The CPU the programs run on.
fn first_cpu() -> u32 {
    perfring_linux::online_cpus().unwrap()[0]
}

/// Run `run` on a thread pinned to `cpu`.
fn on_cpu(cpu: u32, run: impl FnOnce() + Send) {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_to_cpu(cpu).expect("pinning to an online CPU");
            run();
        });
    });
}

/// The first u64 word of a payload: its run's sequence number.
fn seq_of(bytes: &[u8]) -> u64 {
    u64::from_ne_bytes(bytes[..8].try_into().unwrap())
}

#[test]
fn output_and_reserved_records_are_read_once_in_order_and_discards_never() {
    let seen = Seen::default();
    let Some(mut reader) = made("RingBuffer", RingBuffer::create(16, record(&seen))) else { return };
    let map = reader.map_fd(0).unwrap();
    let Some(output) = loaded("ringbuf_output program", RingbufProgram::load(map, 32, Emit::Output, 0)) else {
        return;
    };
    let Some(reserve) =
        loaded("ringbuf_reserve program", RingbufProgram::load(map, 48, Emit::Reserve { discard_every: 3 }, 0))
    else {
        return;
    };
    let cpu = first_cpu();
    // 6 rounds of 200 outputs and 300 reservations (9.6 + 11.2 KiB: the 64 KiB ring never
    // fills), read between rounds and within them.
    let mut read = 0;
    for _ in 0..6 {
        on_cpu(cpu, || {
            output.run(100).unwrap();
            reserve.run(150).unwrap();
            output.run(100).unwrap();
            reserve.run(150).unwrap();
        });
        read += reader.poll(Some(Duration::from_secs(1))).unwrap();
        read += reader.consume().unwrap();
    }
    assert_eq!(output.counts(cpu).unwrap(), (1200, 0, 0), "output: runs, failed, discards");
    assert_eq!(reserve.counts(cpu).unwrap(), (1800, 0, 600), "reserve: runs, failed, discards");
    assert_eq!(reader.discarded(), 600, "the reader skipped every discard");
    let seen = seen.borrow();
    assert_eq!(read, seen.len() as u64);
    assert_eq!(seen.len(), 1200 + 1200, "every output and every submitted reservation once");
    let outputs: Vec<_> = seen.iter().filter(|s| s.1.len() == 32).collect();
    let reserved: Vec<_> = seen.iter().filter(|s| s.1.len() == 48).collect();
    assert_eq!((outputs.len(), reserved.len()), (1200, 1200), "payload sizes are the programs'");
    for (seq, (ring, bytes)) in outputs.iter().enumerate() {
        assert_eq!(*ring, 0);
        assert_eq!(bytes[..], output.expected(seq as u64, cpu)[..], "output {seq}: in order, as written");
    }
    let submitted = (0..1800u64).filter(|seq| seq % 3 != 2);
    for (i, (seq, (_, bytes))) in submitted.zip(&reserved).enumerate() {
        assert_eq!(bytes[..], reserve.expected(seq, cpu)[..], "submitted record {i} (run {seq}): in order");
    }
    // The two programs' records interleave in the order they ran: 100 outputs, 150 reservations…
    assert_eq!(seen[100].1.len(), 48, "the first reservation follows the first 100 outputs");
    assert_eq!(seq_of(&seen[100].1), 0);
}

#[test]
fn a_stream_read_under_the_wait_policy_is_read_once_in_order_with_nothing_stranded() {
    // The default batch interval: while the program streams, `poll` pauses and reads instead
    // of waiting for a wakeup; when it stops, the pauses end with every record read. 20,000
    // records of 40 bytes fit the 4 MiB ring: no output can fail.
    let seen = Seen::default();
    let Some(mut reader) = made("RingBuffer", RingBuffer::create(1024, record(&seen))) else { return };
    let map = reader.map_fd(0).unwrap();
    let Some(output) = loaded("ringbuf_output program", RingbufProgram::load(map, 32, Emit::Output, 0)) else {
        return;
    };
    let cpu = first_cpu();
    let produce = || {
        for _ in 0..20 {
            output.run(1000).unwrap();
        }
    };
    let (read, polls) =
        crate::common::poll_while_streaming(cpu, produce, || reader.poll(Some(Duration::from_millis(10))).unwrap());
    assert_eq!(reader.consume().unwrap(), 0, "every record was read by poll ({polls} calls)");
    assert_eq!(output.counts(cpu).unwrap(), (20_000, 0, 0), "runs, failed, discards");
    let seen = seen.borrow();
    assert_eq!((read, seen.len()), (20_000, 20_000), "every record once");
    for (seq, (ring, bytes)) in seen.iter().enumerate() {
        assert_eq!(*ring, 0);
        assert_eq!(bytes[..], output.expected(seq as u64, cpu)[..], "record {seq}: in order, as written");
    }
}

#[test]
fn a_full_rings_failed_reservations_are_the_programs_own_count() {
    let seen = Seen::default();
    // One page of 72-byte records (64-byte payloads): as many as leave a byte free fit (the
    // kernel refuses a reservation that would fill the ring: 56 in 4 KiB).
    let Some(mut reader) = made("RingBuffer", RingBuffer::create(1, record(&seen))) else { return };
    let map = reader.map_fd(0).unwrap();
    let Some(reserve) = loaded("reserve program", RingbufProgram::load(map, 64, Emit::Reserve { discard_every: 0 }, 0))
    else {
        return;
    };
    let Some(output) = loaded("output program", RingbufProgram::load(map, 64, Emit::Output, 0)) else { return };
    let cpu = first_cpu();
    // SAFETY: sysconf has no memory preconditions.
    let fit = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64 - 1) / 72;
    on_cpu(cpu, || reserve.run(500).unwrap());
    let (runs, failed, _) = reserve.counts(cpu).unwrap();
    assert_eq!((runs, failed), (500, 500 - fit), "{fit} records of 72 bytes fit a page");
    on_cpu(cpu, || output.run(20).unwrap());
    assert_eq!(output.counts(cpu).unwrap(), (20, 20, 0), "the full ring refuses every output too");
    assert_eq!(reader.consume().unwrap(), fit, "every reservation that succeeded is read");
    // Room again: both programs succeed, and what the reader got adds up to what got in.
    on_cpu(cpu, || {
        output.run(20).unwrap();
        reserve.run(20).unwrap();
    });
    assert_eq!(reader.consume().unwrap(), 40);
    let (out, res) = (output.counts(cpu).unwrap(), reserve.counts(cpu).unwrap());
    assert_eq!((out.1, res.1), (20, 500 - fit), "no further failure");
    assert_eq!(seen.borrow().len() as u64, (out.0 - out.1) + (res.0 - res.1), "read = runs - failed reservations");
    // The reservations read: runs 0..fit, then (the failed runs fit..500 missing) 500..520.
    let seen = seen.borrow();
    let fit = fit as usize;
    let first: Vec<u64> = seen[..fit].iter().map(|s| seq_of(&s.1)).collect();
    assert_eq!(first, (0..fit as u64).collect::<Vec<_>>());
    let last: Vec<u64> = seen[fit + 20..].iter().map(|s| seq_of(&s.1)).collect();
    assert_eq!(last, (500..520).collect::<Vec<_>>());
}

#[test]
fn a_user_ring_buffers_samples_are_all_drained_by_a_program_none_lost() {
    // 16 KiB of 32-byte records (24-byte samples): 512 fit; 20,000 are written while a thread
    // drains, the writer waiting for room when the ring is full. Every 7th is discarded.
    let Some(ring) = made("UserRingBuffer", UserRingBuffer::create(4)) else { return };
    let Some(drain) = loaded("user ringbuf drain program", DrainProgram::load(ring.map_fd())) else { return };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut submitted, mut sum, mut discarded) = (0u64, 0u64, 0u64);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Acquire) {
                drain.run(1).unwrap();
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        for seq in 0..20_000u64 {
            let mut sample = ring.reserve_wait(24, Some(Duration::from_secs(10))).expect("room within 10 s");
            let bytes = sample.bytes();
            assert_eq!(bytes.len(), 24);
            bytes[..8].copy_from_slice(&seq.to_ne_bytes());
            bytes[8..].fill(0xa5);
            if seq % 7 == 6 {
                sample.discard();
                discarded += 1;
            } else {
                sample.submit();
                submitted += 1;
                sum = sum.wrapping_add(seq);
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Release);
    });
    drain.run(1).unwrap(); // what the last drain left
    let counts = drain.counts().unwrap();
    assert_eq!(counts.samples, submitted, "every submitted sample reached the program's callback once");
    assert_eq!(counts.sum, sum, "with its payload");
    assert_eq!((counts.unreadable, counts.failed_drains), (0, 0));
    // The drains' return values count the samples handed to the callback, not the discards.
    assert_eq!(counts.drained, submitted, "the drains' own count");
    assert_eq!(submitted + discarded, 20_000);
    // A sample larger than the ring: refused at once, typed.
    match ring.reserve(32 << 10) {
        Err(LinuxError::Reserve { error: perfring::bpf_ringbuf::RingbufError::SampleTooLarge { .. } }) => {}
        other => panic!("{other:?}"),
    }
    // A full ring with no drain: reserve says so, reserve_wait after its timeout.
    while let Ok(sample) = ring.reserve(24) {
        sample.submit();
    }
    let e = ring.reserve_wait(24, Some(Duration::from_millis(20))).unwrap_err();
    assert!(matches!(e, LinuxError::Reserve { error: perfring::bpf_ringbuf::RingbufError::NoSpace { .. } }), "{e}");
    drain.run(1).unwrap();
    assert!(ring.reserve_wait(24, Some(Duration::from_secs(1))).is_ok(), "room again after a drain");
}

#[test]
fn two_ring_buffers_in_one_poll_set() {
    let seen = Seen::default();
    let Some(mut reader) = made("RingBuffer", RingBuffer::create(4, record(&seen))) else { return };
    let second = match rb::create_ring(rb::RINGBUF, 16 << 10) {
        Ok(fd) => fd,
        Err(e) if bpf::refused(&e) => return perfring_test_support::skip(format!("ringbuf map: {e}")),
        Err(e) => panic!("BPF_MAP_CREATE: {e}"),
    };
    let second_dup = second.try_clone().unwrap();
    assert_eq!(reader.add(second).unwrap(), 1);
    // The same map again, through another descriptor: refused, its consumer_pos has one writer.
    match reader.add(second_dup) {
        Err(LinuxError::RingbufTaken { .. }) => {}
        other => panic!("{other:?}"),
    }
    // A size the kernel refuses (not a power of two of pages), and a map of another type.
    assert!(matches!(RingBuffer::create(3, |_, _: &[u8]| {}), Err(LinuxError::RingSize { data_pages: 3 })));
    let array = bpf::create_map(2, 4, 8, 1).unwrap();
    assert!(matches!(reader.add(array), Err(LinuxError::NotARingbuf { map_type: 2, expected: 27 })));
    let Some(a) = loaded("program", RingbufProgram::load(reader.map_fd(0).unwrap(), 8, Emit::Output, 0)) else {
        return;
    };
    let Some(b) = loaded("program", RingbufProgram::load(reader.map_fd(1).unwrap(), 16, Emit::Output, 0)) else {
        return;
    };
    let cpu = first_cpu();
    let ready =
        |reader: &RingBuffer<_>| perfring_linux::wait(&[reader.as_fd()], Some(Duration::ZERO)).unwrap()[0].readable;
    assert!(!ready(&reader), "nothing written: not readable");
    on_cpu(cpu, || b.run(10).unwrap());
    assert!(ready(&reader), "the second ring's records make the set readable");
    assert_eq!(reader.poll(Some(Duration::from_secs(1))).unwrap(), 10);
    assert!(seen.borrow().iter().all(|s| s.0 == 1 && s.1.len() == 16), "all from ring 1");
    // A busy read holds its last record (the wait policy reads again without a wakeup): the
    // kernel counts it unread until `consume` (or the next `poll`) releases it.
    assert!(ready(&reader), "the record `poll` holds");
    assert_eq!(reader.consume().unwrap(), 0, "held, not delivered twice");
    assert!(!ready(&reader), "read and released: not readable");
    on_cpu(cpu, || a.run(5).unwrap());
    // A poll that waits: the first ring's wakeup ends it.
    let n = reader.poll(Some(Duration::from_secs(1))).unwrap();
    let n = n + reader.poll(Some(Duration::from_millis(50))).unwrap();
    assert_eq!(n, 5);
    assert!(seen.borrow()[10..].iter().all(|s| s.0 == 0 && s.1.len() == 8), "then from ring 0");
    // A poll that finds nothing waits its timeout and reads nothing.
    assert_eq!(reader.poll(Some(Duration::from_millis(20))).unwrap(), 0);
    // Wakeups from a thread while the reader waits in poll (no batch interval: a wakeup each).
    reader.batch_interval(None);
    let got = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            on_cpu(cpu, || a.run(3).unwrap());
        });
        reader.poll(Some(Duration::from_secs(5))).unwrap()
    });
    assert!(got >= 1, "woken by the commit");
    assert_eq!(got + reader.consume().unwrap(), 3);
    // Without the wait policy a busy read publishes everything it read: nothing is held, the
    // set is not readable once read (with the policy, the record held makes it so: above).
    on_cpu(cpu, || b.run(10).unwrap());
    assert_eq!(reader.poll(Some(Duration::from_secs(1))).unwrap(), 10);
    assert!(!ready(&reader), "no batch interval: nothing held after a busy poll");
}

#[test]
fn a_reader_woken_by_tokio_is_woken_for_every_record_it_has_not_read() {
    // The kernel wakes a ring's reader when a record is committed at the `consumer_pos` the
    // reader has published. A record committed while `consume` reads, before it publishes,
    // sends no wakeup (the reader was behind), and neither does any record after it (the
    // reader then sits at that record): unless `consume` looks again after publishing, a
    // caller that waits on the descriptor (tokio's `AsyncFd`, edge-triggered) sleeps with it
    // unread. Here the program's thread emits its next burst the moment the callback has
    // seen the last one, that is, while `consume` is still reading: every round is that race.
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use tokio::io::unix::AsyncFd;
    const ROUNDS: u64 = 1000;
    let read = Arc::new(AtomicU64::new(0));
    let count = read.clone();
    let on_sample = move |_ring: usize, _sample: &[u8]| {
        count.fetch_add(1, Ordering::Release);
        // The caller's work on the record: the program's next burst lands meanwhile.
        let until = std::time::Instant::now() + Duration::from_micros(50);
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
    };
    let Some(reader) = made("RingBuffer", RingBuffer::create(64, on_sample)) else { return };
    let map = reader.map_fd(0).unwrap();
    let Some(output) = loaded("ringbuf_output program", RingbufProgram::load(map, 16, Emit::Output, 0)) else {
        return;
    };
    let cpu = first_cpu();
    let done = AtomicBool::new(false);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let (stranded, emitted, mut reader) = std::thread::scope(|s| {
        let producer = s.spawn(|| {
            pin_to_cpu(cpu).expect("pinning to an online CPU");
            let mut emitted = 0;
            for round in 0..ROUNDS {
                let burst = 1 + round % 7;
                output.run(burst as u32).unwrap();
                emitted += burst;
                let deadline = std::time::Instant::now() + Duration::from_secs(2);
                while read.load(Ordering::Acquire) < emitted {
                    if std::time::Instant::now() > deadline {
                        done.store(true, Ordering::Release);
                        return (Some((round, read.load(Ordering::Acquire))), emitted);
                    }
                    std::hint::spin_loop();
                }
            }
            done.store(true, Ordering::Release);
            (None, emitted)
        });
        let reader = rt.block_on(async {
            // SAFETY: the reader owns its epoll descriptor and keeps it open, with the same
            // number, for as long as the AsyncFd owns the reader.
            let mut fd = unsafe { AsyncFd::register(reader) }.map_err(|e| e.to_string()).unwrap();
            while !done.load(Ordering::Acquire) {
                let Ok(guard) = tokio::time::timeout(Duration::from_millis(50), fd.readable_mut()).await else {
                    continue;
                };
                let mut guard = guard.unwrap();
                guard.get_inner_mut().consume().unwrap();
                guard.clear_ready();
            }
            fd.into_inner()
        });
        let (stranded, emitted) = producer.join().unwrap();
        (stranded, emitted, reader)
    });
    if let Some((round, seen)) = stranded {
        panic!("round {round}: {seen} of {emitted} records read; the rest waited 2 s with no wakeup");
    }
    assert_eq!(output.counts(cpu).unwrap(), (emitted, 0, 0), "runs, failed, discards");
    // Every record read: a last `consume` finds nothing, and leaves the descriptor unreadable
    // (a "read again" that `consume` set while the program wrote is taken back).
    assert_eq!(reader.consume().unwrap(), 0);
    let ready = perfring_linux::wait(&[reader.as_fd()], Some(Duration::ZERO)).unwrap();
    assert!(!ready[0].readable, "everything read: the reader's descriptor is not readable");
}
