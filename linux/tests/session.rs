//! [`Session`] against the real kernel: a command's records attributed to two events in one
//! ring per CPU, a running process followed until its threads exit, every CPU, readiness of
//! the session's own descriptor through epoll, and the typed refusals of `open`. A kernel that
//! refuses perf events makes each test skip (`perfring_test_support::skip`: a failure in CI).

use perfring::record::attr_flags;
use perfring::record::EventRecord;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use perfring::record::{sample_type as st, types, DecodeError};
use perfring_linux::software;
use perfring_linux::{EventAttr, LinuxError, Session};

use crate::common;

use common::open_session as open;

const WORK: &str = "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done";

#[test]
fn a_commands_records_are_attributed_to_their_event_on_their_cpu() {
    let ids = st::IDENTIFIER | st::TID | st::CPU | st::PERIOD;
    let clock = EventAttr::software(software::TASK_CLOCK)
        .sample_period(200_000)
        .sample_type(ids)
        .flag(attr_flags::SAMPLE_ID_ALL, true);
    let faults = EventAttr::software(software::PAGE_FAULTS)
        .sample_period(1)
        .sample_type(ids)
        .flag(attr_flags::SAMPLE_ID_ALL, true);
    let Some(mut session) = open(
        Session::command(["sh", "-c", WORK])
            .event(clock.flag(attr_flags::COMM, true).flag(attr_flags::TASK, true))
            .event(faults),
    ) else {
        return;
    };
    assert_eq!(session.rings().len(), session.cpus().len(), "one ring per CPU");
    assert_eq!(session.event_set().id_count(), 2 * session.cpus().len(), "an id per event per CPU");
    let pid = session.pid().unwrap() as u32;
    let mut samples = [0u64; 2];
    let mut exits = 0;
    let status = session
        .run(|r| {
            let event = r.event().unwrap_or_else(|e| panic!("unattributed {:?}: {e}", r.raw().header));
            if let Ok(s) = r.sample() {
                // The compile-time layout of the sample_type the events were opened with reads
                // the same fields; another sample_type is refused.
                const IDS: u64 = st::IDENTIFIER | st::TID | st::CPU | st::PERIOD;
                let f = r.fixed::<IDS>().unwrap();
                assert_eq!(
                    (f.identifier(), f.tid(), f.cpu(), f.period()),
                    (s.identifier(), s.tid(), s.cpu(), s.period())
                );
                assert!(matches!(r.fixed::<{ IDS | st::IP }>(), Err(DecodeError::SampleTypeDiffers { .. })));
                assert_eq!(s.tid().map(|t| t.pid), Some(pid));
                assert_eq!(s.cpu().map(|c| c.cpu), Some(r.cpu()), "a ring holds its own CPU's samples");
                // The periods tell the two events apart: a wrong attribution shows here.
                assert_eq!(s.period(), Some([200_000, 1][event]), "sample of event {event}");
                samples[event] += 1;
            } else if r.raw().header.type_ == types::EXIT {
                assert_eq!(event, 0, "side band comes from the event that asked for it");
                exits += 1;
            }
        })
        .unwrap();
    println!("samples by event {samples:?}, {exits} EXIT records, lost {:?}", session.lost());
    assert_eq!(status, Some(0));
    assert!(samples[0] > 10 && samples[1] > 10, "{samples:?}");
    assert!(exits >= 1, "the command's exit was recorded");
    assert_eq!(session.lost_total(), 0);
}

#[test]
fn a_running_process_is_followed_until_its_threads_exit() {
    let mut child = Command::new("sh").args(["-c", &format!("sleep 0.2; {WORK}")]).spawn().unwrap();
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(200_000).sample_type(st::TID);
    let Some(mut session) = open(Session::process(child.id() as i32).event(attr)) else {
        child.wait().unwrap();
        return;
    };
    assert_eq!(session.pid(), None);
    let mut tids = std::collections::BTreeSet::new();
    let t = Instant::now();
    session.start().unwrap();
    // The session ends on its own when every followed thread has exited (hang-up), not by a
    // timeout; reaping the child is this test's business.
    let mut ended = false;
    while !ended && t.elapsed() < Duration::from_secs(30) {
        ended = session.wait(Some(Duration::from_millis(100))).unwrap();
        session.drain(|r| tids.extend(r.sample().ok().and_then(|s| s.tid()).map(|t| t.tid))).unwrap();
        if !ended {
            let _ = child.try_wait();
        }
    }
    child.wait().unwrap();
    println!("ended after {:?}; sampled tids {tids:?}", t.elapsed());
    assert!(ended, "no end within 30 s");
    assert!(tids.contains(&child.id()), "{tids:?}");
    assert_eq!(session.exit_status().unwrap(), None);
}

#[test]
fn every_cpu_has_its_ring_and_the_session_fd_wakes_epoll() {
    // Kernel samples kept: an idle CPU's samples are in the idle task, in the kernel.
    let attr = EventAttr::software(software::CPU_CLOCK)
        .sample_period(1_000_000)
        .sample_type(st::CPU)
        .wakeup_events(1)
        .flag(attr_flags::EXCLUDE_KERNEL, false);
    let Some(mut session) = open(Session::all_cpus().event(attr)) else { return };
    // The session's one descriptor in an epoll set of our own.
    // SAFETY: epoll_create1 has no memory preconditions; the fd is closed below.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(ep >= 0);
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: 7 };
    // SAFETY: both fds are open; `ev` is valid for the call.
    assert_eq!(unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, session.as_raw_fd(), &mut ev) }, 0);
    session.start().unwrap();
    common::busy_on_every_cpu(session.cpus(), Duration::from_millis(100));
    let mut out = [libc::epoll_event { events: 0, u64: 0 }; 4];
    // SAFETY: `out` has room for 4 events.
    let n = unsafe { libc::epoll_wait(ep, out.as_mut_ptr(), 4, 5000) };
    // SAFETY: closing the epoll fd created above.
    unsafe { libc::close(ep) };
    assert_eq!(n, 1, "the session's descriptor became readable within 5 s");
    assert_eq!({ out[0].u64 }, 7);
    let mut per_ring = vec![0u64; session.rings().len()];
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(10));
        session
            .drain(|r| {
                if let Some(cpu) = r.sample().ok().and_then(|s| s.cpu()) {
                    assert_eq!(cpu.cpu, r.cpu(), "ring {} holds CPU {}'s samples", r.ring(), r.cpu());
                    per_ring[r.ring()] += 1;
                }
            })
            .unwrap();
    }
    session.stop().unwrap();
    assert!(!session.wait(Some(Duration::ZERO)).unwrap(), "a session over all CPUs ends only when stopped");
    println!("samples per CPU {:?}: {per_ring:?}", session.cpus());
    // Every CPU ran a pinned spinner for 100 ms under cpu-clock every 1 ms.
    assert!(per_ring.iter().all(|&n| n > 0), "{per_ring:?}");
}

#[test]
fn open_refuses_no_events_ambiguous_events_and_a_missing_process() {
    assert!(matches!(Session::command(["true"]).open(), Err(LinuxError::NoEvents)));
    // Two events without an id to tell them apart in a shared ring.
    let a = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP);
    let e = Session::command(["true"]).event(a).event(a).open();
    assert!(matches!(e, Err(LinuxError::EventSet(_))), "{e:?}");
    assert!(e.unwrap_err().to_string().contains("PERF_SAMPLE_IDENTIFIER"));
    // A command whose events cannot open never runs: it is killed held before exec.
    let marker = std::env::temp_dir().join(format!("perfring-session-{}-ran", std::process::id()));
    let bad = EventAttr::software(software::TASK_CLOCK).sample_type(1 << 40);
    let e = Session::command(["touch".into(), marker.display().to_string()]).event(bad).open();
    assert!(
        matches!(&e, Err(LinuxError::OpenEvent { event: 0, error, .. }) if matches!(**error, LinuxError::InvalidArgument { .. })),
        "{e:?}"
    );
    assert!(!marker.exists(), "the command ran although its events did not open");
    // No process: said of the pid, before any event is opened (not "event 0 on CPU 0").
    let e = Session::process(i32::MAX).event(a).open();
    assert!(matches!(e, Err(LinuxError::NoSuchProcess { pid: i32::MAX })), "{e:?}");
}

/// An overwrite session (perf's `--overwrite`): nothing to drain while it runs, then, after
/// `stop`, one read of each ring — its newest records, newest first, none twice — and nothing
/// on a later drain. The command faults far more pages than a one-page ring holds, so the
/// ring has wrapped: what is delivered is the end of the run.
#[test]
fn an_overwrite_session_is_read_once_after_stop_newest_first() {
    let faults = EventAttr::software(software::PAGE_FAULTS)
        .sample_period(1)
        .sample_type(st::TID | st::TIME)
        .flag(attr_flags::SAMPLE_ID_ALL, true);
    let work = "i=0; while [ $i -lt 300 ]; do i=$((i+1)); x=$(true); done";
    let Some(mut session) = open(Session::command(["sh", "-c", work]).event(faults).data_pages(1).overwrite(true))
    else {
        return;
    };
    session.start().unwrap();
    while !session.wait(Some(Duration::from_millis(50))).unwrap() {
        assert_eq!(session.drain(|_| panic!("an overwrite ring is read only after stop")).unwrap(), 0);
    }
    session.stop().unwrap();
    let mut by_ring: Vec<Vec<u64>> = vec![Vec::new(); session.rings().len()];
    let n = session
        .drain(|r| {
            if let Some(t) = r.sample().ok().and_then(|s| s.time()) {
                by_ring[r.ring()].push(t);
            }
        })
        .unwrap();
    let samples: usize = by_ring.iter().map(Vec::len).sum();
    println!("{n} records, {samples} samples by ring {:?}", by_ring.iter().map(Vec::len).collect::<Vec<_>>());
    assert!(samples > 0, "the rings hold the end of the run");
    // A page of 24-byte samples (header, TID, TIME) holds at most 170: what is delivered fits
    // the ring, and the ring of the CPU the shell ran on was full (it wrapped).
    assert!(by_ring.iter().all(|t| t.len() <= 4096 / 24), "{by_ring:?}");
    assert!(by_ring.iter().any(|t| t.len() > 4096 / 24 - 4), "a full ring: {by_ring:?}");
    for times in &by_ring {
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first within a ring: {times:?}");
    }
    assert_eq!(session.drain(|_| panic!("read twice")).unwrap(), 0, "each ring is read once");
    assert_eq!(session.exit_status().unwrap(), Some(0));
}

/// `collect_overwrite` reads an overwrite session while it runs (perf's `--switch-output` of a
/// flight recorder): the drain after it delivers records, and the drain after `stop` only
/// newer ones — each ring read from where the last read stopped.
#[test]
fn an_overwrite_session_collected_while_it_runs_reads_each_record_once() {
    let faults = EventAttr::software(software::PAGE_FAULTS)
        .sample_period(1)
        .sample_type(st::TID | st::TIME)
        .flag(attr_flags::SAMPLE_ID_ALL, true);
    // Forks for 0.6 s at least (a `true` each), whatever the machine's speed.
    let work = "s=$(date +%s%N); while [ $(( $(date +%s%N) - s )) -lt 600000000 ]; do x=$(true); done";
    let Some(mut session) = open(Session::command(["sh", "-c", work]).event(faults).data_pages(4).overwrite(true))
    else {
        return;
    };
    session.start().unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let times = |session: &mut Session| {
        let mut t = Vec::new();
        session.drain(|r| t.extend(r.sample().ok().and_then(|s| s.time()))).unwrap();
        t
    };
    session.collect_overwrite();
    let first = times(&mut session);
    assert_eq!(times(&mut session), Vec::<u64>::new(), "one drain per collect");
    while !session.wait(Some(Duration::from_millis(50))).unwrap() {}
    session.stop().unwrap();
    let second = times(&mut session);
    println!("{} samples collected while running, {} after", first.len(), second.len());
    assert!(!first.is_empty() && !second.is_empty(), "the command faults before and after the collect");
    let newest_first = first.iter().max().unwrap();
    assert!(second.iter().all(|t| t > newest_first), "the second read holds only records newer than the first's");
}

/// `per_thread`: a ring per task of the process, on any CPU (`ANY_CPU`), the task's samples in
/// its own ring; `flush_at` holds a running session's drain back until a ring has so many
/// bytes and reads everything after `stop`; `set_affinity(Cpu)` moves the draining thread to
/// each ring's CPU (here, the last ring's, of a per-CPU session).
#[test]
fn per_thread_rings_a_flush_threshold_and_reading_on_the_rings_cpu() {
    let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::TID);
    let Some(mut session) = open(Session::command(["sh", "-c", WORK]).event(attr).per_thread(true)) else { return };
    assert_eq!(session.cpus(), [perfring_linux::ANY_CPU], "one ring, of the command's one task, on any CPU");
    let pid = session.pid().unwrap() as u32;
    session.flush_at(usize::MAX);
    session.start().unwrap();
    let mut held_back = 0;
    while !session.wait(Some(Duration::from_millis(20))).unwrap() {
        held_back += session.drain(|_| {}).unwrap();
    }
    assert_eq!(held_back, 0, "no ring reached the threshold while the session ran");
    session.stop().unwrap();
    let mut samples = 0;
    session
        .drain(|r| {
            assert_eq!(r.cpu(), perfring_linux::ANY_CPU);
            if let Ok(s) = r.sample() {
                assert_eq!(s.tid().map(|t| t.pid), Some(pid));
                samples += 1;
            }
        })
        .unwrap();
    assert!(samples > 0, "after stop, the ring is read whole");

    let Some(mut session) = open(Session::all_cpus().event(attr)) else { return };
    session.set_affinity(perfring_linux::Affinity::Cpu).unwrap();
    session.start().unwrap();
    session.drain(|_| {}).unwrap();
    let last = *session.cpus().last().unwrap();
    let allowed = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let line = allowed.lines().find(|l| l.starts_with("Cpus_allowed_list:")).unwrap();
    assert_eq!(line.split_whitespace().nth(1), Some(last.to_string().as_str()), "on the last ring's CPU");
}
