//! perfring-linux against the real kernel (root here; software events, so any Linux with perf
//! events runs them, and one hardware breakpoint, skipped with a line where the machine gives
//! perf no debug register). A kernel that refuses `perf_event_open` altogether makes each test
//! skip (`perfring_test_support::skip`: counted by `make test`, a failure in CI).

use perfring::record::attr_flags;
use std::os::fd::AsFd;
use std::process::Command;
use std::time::{Duration, Instant};

use perfring::record::{
    read_format as rf, sample_type as st, types, Attributed, Endian, EventLayout, EventRecord, EventSet, IdEntry,
    ReadValues, Record, Walker,
};
use perfring_linux::software;
use perfring_linux::{wait, Event, EventAttr, LinuxError, Readiness, Ring, Target};

use crate::common;

/// Open, or skip where this machine refuses it (not permitted, or no such event here); any
/// other error (EINVAL: a wrong attr) fails the test.
#[track_caller]
fn open(attr: &EventAttr, target: Target, group: Option<&Event>) -> Option<Event> {
    common::open_event(attr, target, group)
}

/// This thread's CPU time.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Burn `d` of this thread's CPU time (not wall time: the machine may be shared), within 30 s.
fn spin(d: Duration) {
    let (start, wall) = (thread_cpu(), Instant::now());
    while thread_cpu() - start < d && wall.elapsed() < Duration::from_secs(30) {
        std::hint::black_box(wall.elapsed());
    }
}

fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// The record `bytes` (one whole record, as [`drain`] copies them out) attributed by `set`.
fn attributed<'a, E, I>(set: &'a EventSet<E, I>, bytes: &'a [u8]) -> Attributed<'a>
where
    E: AsRef<[EventLayout]> + AsMut<[EventLayout]>,
    I: AsRef<[IdEntry]> + AsMut<[IdEntry]>,
{
    set.attribute(&Walker::new(bytes, Endian::NATIVE).next().unwrap().unwrap())
}

/// Every record of a forward ring, copied out.
fn drain(ring: &Ring) -> Vec<Vec<u8>> {
    let mut consumer = ring.consumer().unwrap();
    let mut scratch = vec![0u8; 1 << 16];
    let mut out = Vec::new();
    consumer.for_each(&mut scratch, |r| out.push(r.bytes.to_vec())).unwrap();
    out
}

#[test]
fn a_group_read_returns_every_member_by_id() {
    let fmt = rf::GROUP | rf::ID | rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING | rf::LOST;
    let attr = EventAttr::software(software::TASK_CLOCK).read_format(fmt);
    let Some(leader) = open(&attr, Target::ThisThread, None) else { return };
    let member = open(
        &EventAttr::software(software::CPU_CLOCK).read_format(fmt).flag(attr_flags::DISABLED, false),
        Target::ThisThread,
        Some(&leader),
    )
    .unwrap();
    leader.enable_group().unwrap();
    spin(Duration::from_millis(20));
    leader.disable_group().unwrap();
    let counts = leader.read().unwrap();
    let ReadValues::Group(g) = counts.values() else { panic!("not a group read: {:?}", counts.values()) };
    let entries: Vec<_> = g.entries.iter().collect();
    assert_eq!(entries.len(), 2);
    assert_eq!((entries[0].id, entries[1].id), (Some(leader.id()), Some(member.id())));
    assert!(entries.iter().all(|e| e.value >= 18_000_000), "20 ms of CPU counted by both: {entries:?}");
    assert!(g.time_enabled.unwrap() >= g.time_running.unwrap());
    assert_eq!(entries[0].lost, Some(0));
}

#[test]
fn two_events_in_one_ring_are_attributed_to_their_event() {
    // Different layouts behind the same IDENTIFIER position: only the right attribution decodes
    // each sample into its own event's fields.
    let a = EventAttr::software(software::TASK_CLOCK)
        .sample_period(100_000)
        .sample_type(st::IDENTIFIER | st::IP | st::TID | st::TIME)
        .flag(attr_flags::SAMPLE_ID_ALL, true);
    let b = EventAttr::software(software::CPU_CLOCK)
        .sample_period(150_000)
        .sample_type(st::IDENTIFIER | st::TID | st::TIME | st::PERIOD)
        .flag(attr_flags::SAMPLE_ID_ALL, true);
    let Some(ea) = open(&a, Target::ThisThread, None) else { return };
    let eb = open(&b, Target::ThisThread, None).unwrap();
    let ring = Ring::map(&ea, 16, true).unwrap();
    eb.set_output(Some(&ea)).unwrap();
    let mut set = EventSet::new(vec![EventLayout::EMPTY; 2], vec![IdEntry::EMPTY; 2]);
    for e in [&ea, &eb] {
        let i = set.add_event(e.attr(), Endian::NATIVE).unwrap();
        set.add_id(i, e.id()).unwrap();
    }
    assert_eq!(set.consistency(), Ok(()));
    ea.enable().unwrap();
    eb.enable().unwrap();
    spin(Duration::from_millis(30));
    ea.disable().unwrap();
    eb.disable().unwrap();
    let mut per_event = [0usize; 2];
    for r in drain(&ring) {
        let rec = attributed(&set, &r);
        let i = rec.event().unwrap();
        let Ok(Record::Sample(s)) = rec.decode() else { continue };
        per_event[i] += 1;
        assert_eq!(s.identifier(), Some([ea.id(), eb.id()][i]));
        assert_eq!(s.tid().map(|t| t.tid), Some(gettid()));
        match i {
            0 => assert!(s.ip().is_some() && s.period().is_none()),
            _ => assert!(s.ip().is_none() && s.period() == Some(150_000)),
        }
    }
    assert!(per_event[0] > 20 && per_event[1] > 20, "samples per event: {per_event:?}");
}

#[test]
fn a_backward_overwrite_ring_reads_newest_first_under_pause() {
    let attr = EventAttr::software(software::TASK_CLOCK)
        .sample_period(100_000)
        .sample_type(st::IP | st::TID | st::TIME)
        .flag(attr_flags::WRITE_BACKWARD, true);
    let Some(event) = open(&attr, Target::ThisThread, None) else { return };
    let ring = Ring::map(&event, 1, false).unwrap(); // 4 KiB, overwritten many times
    assert!(ring.kind().backward && !ring.kind().writable);
    event.enable().unwrap();
    // Until the kernel has written three ring sizes (read from the page's data_head, which a
    // backward ring decrements), so the ring has surely wrapped.
    let written = || {
        use perfring::memory::{Position, RingMemory};
        let map = ring.read_only();
        0usize.wrapping_sub(map.position(Position::DataHead).load(perfring::fences::C_HEAD_LOAD))
    };
    for _ in 0..100 {
        if written() > 3 * ring.data_size() {
            break;
        }
        spin(Duration::from_millis(10));
    }
    ring.pause_output(true).unwrap();
    let mut reader = ring.overwrite_reader().unwrap();
    let set = EventSet::single(event.attr(), Endian::NATIVE);
    let mut times = Vec::new();
    let summary = reader
        .read(&mut vec![0u8; 1 << 16], |r| {
            if let Ok(Record::Sample(s)) = set.attribute(r).decode() {
                times.push(s.time().unwrap());
            }
        })
        .unwrap();
    ring.pause_output(false).unwrap();
    event.disable().unwrap();
    assert!(written() > 3 * ring.data_size(), "the kernel wrote {} bytes", written());
    assert!(summary.wrapped, "the ring wrapped: {summary:?}, {} samples read", times.len());
    assert!(times.len() > 20, "{} records", times.len());
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");
}

/// Each of the four kinds of ring gives its own reader and refuses the others with a typed
/// error; a read-only ring gives no `Mapping` (whose stores would fault on its page), and what
/// it gives instead takes a store without crashing and without reaching the kernel's page.
/// (Before: `Ring::map(&ev, 1, false)` then `ring.consumer()?.for_each(..)` was a SIGSEGV, the
/// batch storing `data_tail` into the read-only page.)
#[test]
fn every_kind_of_ring_gives_its_reader_and_refuses_the_others_with_a_typed_error() {
    use perfring::memory::{Position, RingMemory};
    use perfring_linux::{LinuxError, RingKind};
    let base = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP | st::TID);
    for (backward, writable) in [(false, true), (true, true), (true, false), (false, false)] {
        let Some(event) = open(&base.flag(attr_flags::WRITE_BACKWARD, backward), Target::ThisThread, None) else {
            return;
        };
        let ring = Ring::map(&event, 1, writable).unwrap();
        let kind = RingKind { backward, writable };
        assert_eq!(ring.kind(), kind);
        event.enable().unwrap();
        spin(Duration::from_millis(5));
        event.disable().unwrap();
        let refused = |r: Result<(), LinuxError>, reader: &str| match r {
            Err(LinuxError::RingKind { reader: r, ring, .. }) => assert_eq!((r, ring), (reader, kind)),
            other => panic!("{reader} of a {kind} ring: {other:?}"),
        };
        let scratch = &mut vec![0u8; 1 << 16];
        let mut records = 0;
        match ring.consumer() {
            Ok(mut c) => records += c.for_each(scratch, |_| {}).unwrap(),
            Err(e) => refused(Err(e), "Ring::consumer"),
        }
        match ring.backward_reader() {
            Ok(mut r) => records += r.read(scratch, |_| {}).unwrap().records,
            Err(e) => refused(Err(e), "Ring::backward_reader"),
        }
        match ring.overwrite_reader() {
            Ok(mut r) => {
                ring.pause_output(true).unwrap();
                records += r.read(scratch, |_| {}).unwrap().records;
                ring.pause_output(false).unwrap();
            }
            Err(e) => refused(Err(e), "Ring::overwrite_reader"),
        }
        // One reader for each kind but the forward overwrite ring, and it read the samples.
        assert_eq!(records > 0, (backward, writable) != (false, false), "{kind}: {records} records");
        if !writable {
            assert!(matches!(ring.mapping(), Err(LinuxError::ReadOnlyRing)), "{kind}");
            // A store through the read-only view lands in its own word, not the kernel's page.
            let view = ring.read_only();
            let tail = view.position(Position::DataTail).load(perfring::fences::LOCAL);
            view.position(Position::DataTail).store(tail + 4096, perfring::fences::LOCAL);
            assert_eq!(view.position(Position::DataTail).load(perfring::fences::LOCAL), tail, "{kind}");
        }
    }
}

/// `Ring::pause_output` acts on the kernel's ring (the ioctl): what the kernel wanted to write
/// while paused is dropped, counted, and reported by one LOST record after the resume. (Before,
/// the consumer's `pause` set a flag inside the Rust struct that no kernel reads.)
#[test]
fn pausing_a_kernel_ring_drops_and_reports_what_was_written_meanwhile() {
    let attr =
        EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::TID).read_format(rf::LOST);
    let Some(event) = open(&attr, Target::ThisThread, None) else { return };
    let ring = Ring::map(&event, 8, true).unwrap();
    let dropped = || match event.read().unwrap().values() {
        ReadValues::Single(c) => c.lost.unwrap_or(0),
        _ => panic!("not a single read"),
    };
    event.enable().unwrap();
    ring.pause_output(true).unwrap();
    // Up to 200 periods of 100 µs (a busy VM's hrtimer folds some), and on until the kernel has
    // dropped a sample (PERF_FORMAT_LOST): now and then no sample falls in the first 20 ms.
    spin(Duration::from_millis(20));
    for _ in 0..50 {
        if dropped() > 0 {
            break;
        }
        spin(Duration::from_millis(20));
    }
    ring.pause_output(false).unwrap();
    // On until the kernel's first write after the resume, which reports the drops.
    for _ in 0..100 {
        spin(Duration::from_millis(2));
        if ring.consumer().unwrap().available().unwrap() > 0 {
            break;
        }
    }
    event.disable().unwrap();
    let records = drain(&ring);
    let lost: u64 = records
        .iter()
        .filter(|r| u32::from_ne_bytes(r[0..4].try_into().unwrap()) == types::LOST)
        .map(|r| u64::from_ne_bytes(r[16..24].try_into().unwrap()))
        .sum();
    let samples = records.iter().filter(|r| u32::from_ne_bytes(r[0..4].try_into().unwrap()) == types::SAMPLE).count();
    assert!(lost > 0, "the paused window's samples are reported lost: {samples} samples, {} records", records.len());
    assert!(samples < 60, "only the samples after the resume were written: {samples} (lost {lost})");
    assert_eq!(lost, dropped(), "PERF_RECORD_LOST reports what PERF_FORMAT_LOST counted");
}

#[test]
fn loss_is_reported_by_lost_records_and_the_events_lost_count_alike() {
    let attr = EventAttr::software(software::TASK_CLOCK)
        .sample_period(20_000)
        .sample_type(st::IP | st::TID)
        .read_format(rf::LOST);
    let Some(event) = open(&attr, Target::ThisThread, None) else { return };
    let ring = Ring::map(&event, 1, true).unwrap();
    event.enable().unwrap();
    spin(Duration::from_millis(100)); // ~5000 samples into room for ~170
    event.disable().unwrap();
    let set = EventSet::single(event.attr(), Endian::NATIVE);
    let first = drain(&ring).len();
    // More bursts into the freed ring: the first write reports the pending losses. (Bursts of
    // 2 ms, each drained, until one has: on a loaded machine a single burst once wrote no LOST
    // record — "0 reported lost, the event counted Some(294)" — so the test waits for the
    // write, bounded; the losses counted must still all be reported, once.)
    let mut lost_reported = 0;
    for _ in 0..100 {
        event.enable().unwrap();
        spin(Duration::from_millis(2));
        event.disable().unwrap();
        let records = drain(&ring);
        for r in &records {
            if let Ok(Record::Lost(l)) = attributed(&set, r).decode() {
                lost_reported += l.lost;
            }
        }
        if lost_reported > 0 {
            break;
        }
    }
    let ReadValues::Single(counts) = event.read().unwrap().values() else { panic!("not a single read") };
    println!("{first} records read, {lost_reported} reported lost, the event counted {:?}", counts.lost);
    assert!(lost_reported > 0, "a 4 KiB ring took thousands of samples undrained: {lost_reported} lost");
    assert_eq!(Some(lost_reported), counts.lost, "PERF_RECORD_LOST and PERF_FORMAT_LOST agree");
}

#[test]
fn wakeups_make_the_ring_readable_and_a_tasks_exit_hangs_up() {
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP).wakeup_events(5);
    let Some(event) = open(&attr, Target::ThisThread, None) else { return };
    let ring = Ring::map(&event, 4, true).unwrap();
    let before = wait(&[ring.as_fd()], Some(Duration::ZERO)).unwrap();
    assert_eq!(before, vec![Readiness::default()], "nothing written yet");
    event.enable().unwrap();
    spin(Duration::from_millis(20));
    event.disable().unwrap();
    let after = wait(&[ring.as_fd()], Some(Duration::from_secs(1))).unwrap();
    assert!(after[0].readable && !after[0].hangup, "{after:?}");

    // A child's event hangs up when the child exits (the end of a recording, not an error).
    let mut child = Command::new("sleep").arg("0.2").spawn().unwrap();
    let watched = Event::open(
        &EventAttr::software(software::TASK_CLOCK).flag(attr_flags::DISABLED, false),
        Target::Task(child.id() as i32),
        None,
    )
    .unwrap();
    let t = Instant::now();
    let mut hung = false;
    while t.elapsed() < Duration::from_secs(10) && !hung {
        hung = wait(&[watched.as_fd()], Some(Duration::from_millis(100))).unwrap()[0].hangup;
    }
    child.wait().unwrap();
    assert!(hung, "no POLLHUP within 10 s of the task's exit");
}

#[test]
fn bad_attrs_are_typed_errors_naming_the_field() {
    let attr = EventAttr::software(software::TASK_CLOCK).sample_type(1 << 40);
    match Event::open(&attr, Target::ThisThread, None) {
        Err(LinuxError::InvalidArgument { suspects }) => assert!(suspects.contains("sample_type"), "{suspects}"),
        other => panic!("expected EINVAL about sample_type, got {other:?}"),
    }
    // A period the kernel refuses (bit 63 set), and a frequency above its maximum.
    for (attr, field) in [
        (EventAttr::software(software::TASK_CLOCK).sample_period(u64::MAX), "sample_period"),
        (EventAttr::software(software::TASK_CLOCK).sample_freq(u64::MAX / 2), "sample_freq"),
    ] {
        match Event::open(&attr, Target::ThisThread, None) {
            Err(LinuxError::InvalidArgument { suspects }) => assert!(suspects.starts_with(field), "{suspects}"),
            other => panic!("expected EINVAL about {field}, got {other:?}"),
        }
    }
    let bad_size = EventAttr::software(software::TASK_CLOCK).size(72);
    let e = Event::open(&bad_size, Target::ThisThread, None);
    assert!(e.is_ok() || matches!(e, Err(LinuxError::InvalidArgument { .. })), "{e:?}");
    assert!(matches!(
        perfring_linux::Ring::map(
            &Event::open(&EventAttr::software(software::TASK_CLOCK), Target::ThisThread, None).unwrap(),
            3,
            true
        ),
        Err(perfring_linux::LinuxError::RingSize { data_pages: 3 })
    ));
}

/// Run in a child process by `a_refused_open_says_what_to_change` (env PERFRING_REFUSED_CHILD):
/// drop to uid 65534 and ask for a CPU-wide event.
#[test]
fn refused_open_child() {
    if std::env::var_os("PERFRING_REFUSED_CHILD").is_none() {
        return; // only meaningful as the child below
    }
    // SAFETY: plain syscalls; this process is a throwaway child that exits after the test.
    unsafe {
        assert_eq!(libc::setgid(65534), 0);
        assert_eq!(libc::setuid(65534), 0);
    }
    match Event::open(&EventAttr::software(software::CPU_CLOCK), Target::Cpu(0), None) {
        Err(e @ LinuxError::PermissionDenied { .. }) => println!("REFUSED: {e}"),
        other => println!("NOT REFUSED: {other:?}"),
    }
}

#[test]
fn a_refused_open_says_what_to_change() {
    let paranoid = perfring_linux::paranoid();
    if paranoid.is_none_or(|p| p < 1) {
        return perfring_test_support::skip(format!(
            "perf_event_paranoid is {paranoid:?}: an unprivileged CPU-wide open is allowed here"
        ));
    }
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        return perfring_test_support::skip("not root, cannot drop to uid 65534 in a child");
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &perfring_test_support::test_name(module_path!(), "refused_open_child"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PERFRING_REFUSED_CHILD", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let line =
        text.lines().find_map(|l| l.find("REFUSED").map(|i| &l[i..])).unwrap_or_else(|| panic!("no verdict: {text}"));
    println!("{line}");
    assert!(line.starts_with("REFUSED: "), "{line}");
    assert!(line.contains(&format!("perf_event_paranoid is {}", paranoid.unwrap())), "{line}");
    assert!(line.contains("CPU-wide") && line.contains("CAP_PERFMON"), "{line}");
}

#[test]
fn counts_and_side_band_records_of_a_child_process() {
    // MMAP/COMM/EXIT side band of a child, attributed with sample_id_all trailers.
    let attr = EventAttr::software(software::TASK_CLOCK)
        .sample_period(1_000_000)
        .sample_type(st::TID | st::TIME | st::IDENTIFIER)
        .flag(attr_flags::SAMPLE_ID_ALL, true)
        .flag(attr_flags::COMM, true)
        .flag(attr_flags::TASK, true)
        .flag(attr_flags::MMAP2, true)
        .flag(attr_flags::MMAP, true)
        .flag(attr_flags::ENABLE_ON_EXEC, true);
    let mut child =
        Command::new("sh").args(["-c", "read x; exec /bin/true"]).stdin(std::process::Stdio::piped()).spawn().unwrap();
    let Some(event) = open(&attr, Target::Task(child.id() as i32), None) else {
        child.kill().ok();
        child.wait().ok();
        return;
    };
    let ring = Ring::map(&event, 8, true).unwrap();
    drop(child.stdin.take()); // `read` returns: the shell execs /bin/true, enabling the event
    child.wait().unwrap();
    let set = EventSet::single(event.attr(), Endian::NATIVE);
    let mut kinds = std::collections::BTreeSet::new();
    for r in drain(&ring) {
        let attributed = attributed(&set, &r);
        let rec = attributed.decode().unwrap();
        if rec.type_() == types::COMM || rec.type_() == types::EXIT || rec.type_() == types::MMAP2 {
            let view = attributed.view().unwrap();
            assert_eq!(view.id(), Some(event.id()), "{rec:?}");
            assert_eq!(view.tid().map(|t| t.pid), Some(child.id()), "{rec:?}");
            assert_eq!(
                rec.sample_id().and_then(|t| t.tid).map(|t| t.pid),
                Some(child.id()),
                "the decode's trailer: {rec:?}"
            );
        }
        kinds.insert(rec.name());
    }
    assert!(kinds.contains("PERF_RECORD_COMM") && kinds.contains("PERF_RECORD_EXIT"), "{kinds:?}");
}

#[test]
fn tracepoints_open_by_name_or_say_how_to_mount_tracefs() {
    assert!(matches!(EventAttr::tracepoint("no-colon"), Err(perfring_linux::LinuxError::NoSuchTracepoint { .. })));
    // Not mounted: the typed error names the mount command. Then (as root) the test set-up
    // mounts it, as `perf record -e sched:...` would, and the tracepoint opens by name.
    if perfring_test_support::tracefs().is_none() {
        match EventAttr::tracepoint("sched:sched_switch") {
            Err(e @ perfring_linux::LinuxError::TracefsNotMounted) => {
                assert!(e.to_string().contains("mount -t tracefs"), "{e}")
            }
            // Mounted, but not readable by this user (tracefs is 0700 by default): not
            // permitted here, a visible skip.
            Err(e @ perfring_linux::LinuxError::TracefsPermissionDenied { .. }) => {
                return perfring_test_support::skip(e)
            }
            other => panic!("tracefs is not mounted, yet: {other:?}"),
        }
        if let Err(why) = perfring_test_support::mount_tracefs() {
            return perfring_test_support::skip(why);
        }
    }
    match EventAttr::tracepoint("sched:sched_switch") {
        Err(e @ perfring_linux::LinuxError::TracefsPermissionDenied { .. }) => perfring_test_support::skip(e),
        Err(e) => panic!("sched:sched_switch: {e}"),
        Ok(attr) => {
            // Count this thread's context switches through the tracepoint.
            let Some(event) = open(&attr.flag(attr_flags::EXCLUDE_KERNEL, false), Target::ThisThread, None) else {
                return;
            };
            event.enable().unwrap();
            for _ in 0..20 {
                std::thread::sleep(Duration::from_micros(200));
            }
            event.disable().unwrap();
            let ReadValues::Single(c) = event.read().unwrap().values() else { panic!("not a single read") };
            assert!(c.value >= 20, "20 sleeps switched out at least 20 times: {}", c.value);
            assert!(matches!(
                EventAttr::tracepoint("sched:no_such_tracepoint"),
                Err(perfring_linux::LinuxError::NoSuchTracepoint { .. })
            ));
        }
    }
}

#[test]
fn the_ioctls_reset_period_refresh_and_filter_do_what_they_say() {
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP);
    let Some(event) = open(&attr, Target::ThisThread, None) else { return };
    let ring = Ring::map(&event, 8, true).unwrap();
    let count = |e: &Event| match e.read().unwrap().values() {
        ReadValues::Single(s) => s.value,
        other => panic!("{other:?}"),
    };
    event.enable().unwrap();
    spin(Duration::from_millis(5));
    event.disable().unwrap();
    assert!(count(&event) >= 4_000_000);
    event.reset().unwrap();
    assert!(count(&event) < 1_000_000, "RESET zeroes the count");
    drain(&ring);

    // PERIOD: the kernel reads the u64 we point it at — 0 is refused (EINVAL), 1 ms accepted.
    // (Sample counts are not asserted: under load this VM's task-clock timer fires irregularly.)
    assert!(matches!(event.set_period(0), Err(perfring_linux::LinuxError::Io { what: "PERF_EVENT_IOC_PERIOD", .. })));
    event.set_period(1_000_000).unwrap();
    event.set_period(100_000).unwrap();

    // REFRESH(2): exactly two more overflows, then the event disables itself.
    event.refresh(2).unwrap();
    let (mut got, t) = (0, Instant::now());
    while got < 2 && t.elapsed() < Duration::from_secs(10) {
        spin(Duration::from_millis(5));
        got += drain(&ring).len();
    }
    assert_eq!(got, 2, "REFRESH 2 allowed {got} samples");
    spin(Duration::from_millis(20));
    assert_eq!(drain(&ring).len(), 0, "the event disabled itself after its two overflows");

    // SET_FILTER applies to tracepoints only: a typed error here, naming the ioctl.
    match event.set_filter("common_pid == 1") {
        Err(perfring_linux::LinuxError::Io { what, .. }) => assert_eq!(what, "PERF_EVENT_IOC_SET_FILTER"),
        other => panic!("a filter on a software event: {other:?}"),
    }
}

#[test]
fn an_event_on_each_online_cpu_fills_that_cpus_ring() {
    // cpu-clock on every task of each CPU (kernel samples kept: idle is kernel code, and
    // CPU-wide events need root here anyway).
    let attr = EventAttr::software(software::CPU_CLOCK)
        .sample_period(1_000_000)
        .sample_type(st::IDENTIFIER | st::TID | st::CPU)
        .flag(attr_flags::EXCLUDE_KERNEL, false);
    let cpus = perfring_linux::online_cpus().unwrap();
    let mut per_cpu = Vec::new();
    for &cpu in &cpus {
        let Some(event) = open(&attr, Target::Cpu(cpu), None) else { return };
        let ring = Ring::map(&event, 16, true).unwrap();
        per_cpu.push((cpu, event, ring));
    }
    per_cpu.iter().for_each(|(_, e, _)| e.enable().unwrap());
    // Each CPU in turn runs this thread for a while too (where the scheduler lets it), and a
    // thread pinned to each CPU spins (an idle CPU's hrtimer is not reliable on this VM).
    std::thread::sleep(Duration::from_millis(100));
    spin(Duration::from_millis(20));
    common::busy_on_every_cpu(&cpus, Duration::from_millis(60));
    per_cpu.iter().for_each(|(_, e, _)| e.disable().unwrap());
    let mut counts = Vec::new();
    for (cpu, event, ring) in &per_cpu {
        let set = EventSet::single(event.attr(), Endian::NATIVE);
        let mut samples = 0;
        for r in drain(ring) {
            let Ok(Record::Sample(s)) = attributed(&set, &r).decode() else { continue };
            assert_eq!(s.cpu().map(|c| c.cpu), Some(*cpu), "a sample of CPU {cpu}'s event names its CPU");
            assert_eq!(s.identifier(), Some(event.id()), "written by that CPU's event");
            samples += 1;
        }
        counts.push((*cpu, samples));
    }
    println!("samples by CPU (each from its own ring): {counts:?}");
    assert_eq!(counts.len(), cpus.len());
    assert!(counts.iter().all(|&(_, n)| n >= 20), "at least the 60 ms of a pinned spinner per CPU: {counts:?}");
}

/// Two words far apart, so that a breakpoint on one never sees writes to the other.
#[repr(C, align(64))]
struct Watched {
    a: u64,
    _pad: [u64; 7],
    b: u64,
}

/// Write `x` `times` times through volatile stores (each one a write the breakpoint sees).
fn poke(x: &mut u64, times: u64) {
    for i in 0..times {
        // SAFETY: `x` is a valid, exclusive reference.
        unsafe { std::ptr::write_volatile(x, i) };
    }
}

fn hits(e: &Event) -> u64 {
    match e.read().unwrap().values() {
        ReadValues::Single(s) => s.value,
        other => panic!("{other:?}"),
    }
}

#[test]
fn modify_attributes_moves_a_breakpoint_to_another_address() {
    use perfring_linux::breakpoint;
    let mut w = Box::new(Watched { a: 0, _pad: [0; 7], b: 0 });
    let (a, b) = (&w.a as *const u64 as u64, &w.b as *const u64 as u64);
    let on = |addr| EventAttr::breakpoint(breakpoint::W, addr, 8);
    let event = match Event::open(&on(a), Target::ThisThread, None) {
        Ok(e) => e,
        // No debug registers for perf here (a VM without them: ENODEV/EOPNOTSUPP; all in use:
        // ENOSPC), or not permitted: a visible skip. Anything else (EINVAL) fails.
        Err(e)
            if common::refusal(&e).is_some()
                || matches!(&e, LinuxError::Io { error: io, .. } if io.raw_os_error() == Some(libc::ENOSPC)) =>
        {
            return perfring_test_support::skip(format!("a hardware breakpoint cannot be opened here: {e}"));
        }
        Err(e) => panic!("a hardware breakpoint: {e} ({e:?})"),
    };
    event.enable().unwrap();
    poke(&mut w.a, 10);
    poke(&mut w.b, 5);
    assert_eq!(hits(&event), 10, "the breakpoint on a counts a's writes only");

    // `disabled` of the new attr applies (EventAttr opens disabled): clear it to keep counting.
    event.modify_attributes(&on(b).flag(attr_flags::DISABLED, false)).unwrap();
    poke(&mut w.a, 10);
    poke(&mut w.b, 7);
    assert_eq!(hits(&event), 17, "moved to b: b's 7 writes counted, a's no longer");

    // Only the address (len, type) may change: another field is refused, typed.
    match event.modify_attributes(&on(a).flag(attr_flags::DISABLED, false).sample_period(3)) {
        Err(e @ perfring_linux::LinuxError::ModifyRefused { errno: libc::EINVAL, breakpoint: true }) => println!("{e}"),
        other => panic!("a changed sample_period: {other:?}"),
    }
    event.disable().unwrap();
}

#[test]
fn modify_attributes_of_a_non_breakpoint_is_a_typed_refusal() {
    let attr = EventAttr::software(software::TASK_CLOCK);
    let Some(event) = open(&attr, Target::ThisThread, None) else { return };
    match event.modify_attributes(&attr) {
        Err(e @ perfring_linux::LinuxError::ModifyRefused { breakpoint: false, .. }) => {
            assert!(e.to_string().contains("breakpoint events only"), "{e}");
            println!("{e}");
        }
        other => panic!("the kernel modifies breakpoints only: {other:?}"),
    }
}
