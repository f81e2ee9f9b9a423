//! A new user's mistakes, each a typed error (or a documented result) rather than a command
//! that runs unasked, a hang, a misleading message or a stuck reader: waiting before `start`,
//! a failed `exec`, tracepoint names and tracefs permissions, an empty or impossible scope,
//! a ring of no data pages, waiting on nothing, records larger than a page wrapping around a
//! ring's end. A kernel that refuses perf events makes the tests that open one skip
//! (`perfring_test_support::skip`: a failure in CI).

use perfring::record::EventRecord;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use perfring::record::sample_type as st;
use perfring_linux::launch::Launch;
use perfring_linux::software;
use perfring_linux::{wait, EventAttr, LinuxError, Session};

use crate::common;

use common::open_session as open;

fn clock() -> EventAttr {
    EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::TID)
}

/// A path no one has made yet: a command that runs creates it.
fn marker(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("perfring-misuse-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn touch(path: &std::path::Path) -> Vec<String> {
    vec!["sh".into(), "-c".into(), format!("touch '{}'", path.display())]
}

#[test]
fn a_sessions_command_runs_only_at_start_not_when_waited_for() {
    let path = marker("session");
    let Some(mut session) = open(Session::command(touch(&path)).event(clock())) else { return };
    assert!(matches!(session.wait(Some(Duration::from_millis(50))), Err(LinuxError::NotStarted)));
    assert!(matches!(session.wait(Some(Duration::ZERO)), Err(LinuxError::NotStarted)));
    assert!(matches!(session.exit_status(), Err(LinuxError::NotStarted)));
    assert_eq!(session.drain(|r| panic!("a record before start: {:?}", r.raw().header)).unwrap(), 0);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!path.exists(), "the command ran before start()");
    let message = LinuxError::NotStarted.to_string();
    assert!(message.contains("start()"), "{message}");

    assert_eq!(session.run(|_| {}).unwrap(), Some(0));
    assert!(path.exists(), "the command ran at start()");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_launched_command_runs_only_at_start_not_when_waited_for() {
    let path = marker("launch");
    let mut child = Launch::spawn(&touch(&path)).unwrap();
    assert!(matches!(child.try_wait(), Err(LinuxError::NotStarted)));
    assert!(matches!(child.wait(), Err(LinuxError::NotStarted)));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!path.exists(), "the command ran before start()");
    child.start().unwrap();
    child.start().unwrap(); // started once; a second call changes nothing
    assert_eq!(child.wait().unwrap(), 0);
    assert_eq!(child.try_wait().unwrap(), Some(0));
    assert!(path.exists());
    let _ = std::fs::remove_file(&path);

    // Killed while held: it never runs, and cannot be started after.
    let path = marker("killed");
    let mut child = Launch::spawn(&touch(&path)).unwrap();
    assert_eq!(child.kill().unwrap(), 128 + libc::SIGKILL);
    assert_eq!(child.try_wait().unwrap(), Some(128 + libc::SIGKILL));
    assert!(matches!(child.start(), Err(LinuxError::Exec { .. })));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!path.exists(), "a command killed while held ran");

    // Ended by a signal from elsewhere while held: its status, not "not started".
    let mut child = Launch::spawn(&touch(&path)).unwrap();
    perfring_linux::launch::signal_process(child.pid(), libc::SIGKILL).unwrap();
    let t = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Err(LinuxError::NotStarted) if t.elapsed() < Duration::from_secs(10) => std::thread::yield_now(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(status, 128 + libc::SIGKILL);
    assert!(matches!(child.start(), Err(LinuxError::Exec { .. })), "started a command that had ended");
    assert!(!path.exists());
}

#[test]
fn a_failed_exec_is_error_exec_on_every_path() {
    const NOWHERE: &str = "/nonexistent/perfring-no-such-program";
    let exec_failed = |r: Result<(), LinuxError>| match r {
        Err(LinuxError::Exec { command, error }) => {
            assert_eq!(command, NOWHERE);
            assert_eq!(error.raw_os_error(), Some(libc::ENOENT), "{error}");
        }
        other => panic!("not LinuxError::Exec: {other:?}"),
    };
    let Some(mut session) = open(Session::command([NOWHERE]).event(clock())) else { return };
    assert!(matches!(session.wait(Some(Duration::ZERO)), Err(LinuxError::NotStarted)), "waiting does not exec it");
    exec_failed(session.start());
    exec_failed(session.start()); // and again: not a silent Ok
    let t = Instant::now();
    while !session.wait(Some(Duration::from_millis(20))).unwrap() {
        assert!(t.elapsed() < Duration::from_secs(10), "the failed command never ended");
    }
    assert_eq!(session.exit_status().unwrap(), Some(127));

    let Some(mut session) = open(Session::command([NOWHERE]).event(clock())) else { return };
    match session.run(|_| {}) {
        Err(LinuxError::Exec { command, .. }) => assert_eq!(command, NOWHERE),
        other => panic!("run: not LinuxError::Exec: {other:?}"),
    }

    let mut child = Launch::spawn(&[NOWHERE.to_string()]).unwrap();
    assert!(matches!(child.try_wait(), Err(LinuxError::NotStarted)));
    exec_failed(child.start());
    exec_failed(child.start());
    assert_eq!(child.wait().unwrap(), 127);
}

#[test]
fn tracepoint_names_are_validated_part_by_part() {
    let part = |name: &str| match EventAttr::tracepoint(name) {
        Err(LinuxError::BadTracepointName { name: given, part }) => {
            assert_eq!(given, name);
            let message = LinuxError::BadTracepointName { name: given, part }.to_string();
            assert!(!message.contains('\0'), "a raw NUL in {message:?}");
            part
        }
        other => panic!("{name:?}: {other:?}"),
    };
    assert_eq!(part("sched:sched_switch/../sched_wakeup"), "event");
    assert_eq!(part("sched:.."), "event");
    assert_eq!(part("sched:sched_switch\0"), "event");
    assert_eq!(part("sched:"), "event");
    assert_eq!(part("sched:a:b"), "event");
    assert_eq!(part("../sched:sched_switch"), "subsystem");
    assert_eq!(part("sch\0ed:sched_switch"), "subsystem");
    assert_eq!(part(":sched_switch"), "subsystem");
    assert_eq!(part("sched/sched_switch"), "separator");
    assert_eq!(part(""), "separator");
    assert_eq!(part("sched_switch\0"), "separator");
    assert!(matches!(EventAttr::tracepoint("sched_switch"), Err(LinuxError::NoSuchTracepoint { .. })));
    let message = EventAttr::tracepoint("sched:x/y").unwrap_err().to_string();
    assert!(message.contains("event") && message.contains("subsystem:event"), "{message}");

    // Good names reach tracefs.
    match EventAttr::tracepoint("sched:sched_switch") {
        Ok(attr) => assert_eq!(attr.attr().type_, perfring_linux::event_type::TRACEPOINT),
        Err(e @ (LinuxError::TracefsNotMounted | LinuxError::TracefsPermissionDenied { .. })) => {
            perfring_test_support::skip(e)
        }
        Err(e) => panic!("{e}"),
    }
    assert!(matches!(
        EventAttr::tracepoint("sched:perfring_no_such_event"),
        Err(LinuxError::NoSuchTracepoint { .. }
            | LinuxError::TracefsNotMounted
            | LinuxError::TracefsPermissionDenied { .. })
    ));
}

/// Set by the parent of [`tracefs_unreadable_to_this_user_is_permission_denied`] in the copy
/// of this test binary it runs as `nobody`.
const AS_NOBODY: &str = "PERFRING_MISUSE_AS_NOBODY";

#[test]
fn tracefs_unreadable_to_this_user_is_permission_denied() {
    if std::env::var_os(AS_NOBODY).is_some() {
        // The child, as nobody: report what the lookup said.
        let result = match EventAttr::tracepoint("sched:sched_switch") {
            Ok(_) => "ok".to_string(),
            Err(LinuxError::TracefsPermissionDenied { path }) => format!("denied {path}"),
            Err(e) => format!("other {e:?}"),
        };
        println!("CHILD-RESULT: {result}");
        return;
    }
    // As this user (root here), the tracepoint is there.
    if let Err(e) = EventAttr::tracepoint("sched:sched_switch") {
        return perfring_test_support::skip(format!("no sched:sched_switch as this user: {e}"));
    }
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        return perfring_test_support::skip("not root: cannot run the lookup as another user");
    }
    // nobody runs a copy of this binary in a folder it can reach: the build's own folder may
    // be private (a clone under `mktemp -d` or /root is mode 0700).
    let copy = common::ExeCopy::for_other_users().unwrap();
    let name = perfring_test_support::test_name(module_path!(), "tracefs_unreadable_to_this_user_is_permission_denied");
    let out = std::process::Command::new(copy.path())
        .args(["--exact", &name, "--nocapture", "--test-threads=1"])
        .current_dir("/")
        .env(AS_NOBODY, "1")
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    drop(copy);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // libtest prints the test's name on the line the child's own line starts on.
    let Some(result) = stdout.lines().find_map(|l| l.split_once("CHILD-RESULT: ").map(|(_, r)| r)) else {
        return perfring_test_support::skip(format!(
            "the test binary did not run as nobody: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    };
    // Readable by all (a tracefs mounted 0755 with 0444 ids), or permission denied: never
    // "tracefs is not mounted", nor "no such tracepoint".
    assert!(result == "ok" || result.starts_with("denied /sys/kernel/"), "as nobody: {result}");
}

#[test]
fn a_session_needs_a_power_of_two_of_data_pages_at_open() {
    for pages in [0, 3, 6] {
        match Session::command(["true"]).event(clock()).data_pages(pages).open() {
            Err(LinuxError::RingSize { data_pages }) => assert_eq!(data_pages, pages),
            other => panic!("data_pages({pages}): {other:?}"),
        }
        match Session::all_cpus().event(clock()).data_pages(pages).open() {
            Err(e @ LinuxError::RingSize { .. }) => {
                let message = e.to_string();
                assert!(message.contains("at least one data page") && message.contains("power of two"), "{message}");
            }
            other => panic!("data_pages({pages}): {other:?}"),
        }
    }
}

#[test]
fn a_process_session_of_no_process_names_the_pid_and_no_event() {
    for pid in [0, -1, i32::MIN] {
        match Session::process(pid).event(clock()).open() {
            Err(e @ LinuxError::InvalidPid { .. }) => {
                let message = e.to_string();
                assert!(message.contains(&pid.to_string()) && !message.contains("event 0"), "{message}");
            }
            other => panic!("process({pid}): {other:?}"),
        }
    }
    // pid_max is one past the largest pid: no process has it.
    let pid_max: i32 = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
    match Session::process(pid_max).event(clock()).open() {
        Err(e @ LinuxError::NoSuchProcess { .. }) => {
            let message = e.to_string();
            assert!(message.contains(&pid_max.to_string()) && !message.contains("CPU"), "{message}");
        }
        other => panic!("process({pid_max}): {other:?}"),
    }
}

#[test]
fn an_empty_command_is_refused_before_any_fork() {
    match Session::command(Vec::<String>::new()).event(clock()).open() {
        Err(e @ LinuxError::EmptyCommand) => assert!(e.to_string().contains("program"), "{e}"),
        other => panic!("{other:?}"),
    }
    match Launch::spawn(&[]) {
        Err(e @ LinuxError::EmptyCommand) => assert!(e.to_string().contains("argv[0]"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn waiting_on_nothing_returns_at_once() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let none = wait(&[], None).map(|r| r.len());
        let some = wait(&[], Some(Duration::from_secs(60))).map(|r| r.len());
        let _ = tx.send((none.unwrap(), some.unwrap()));
    });
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("wait(&[], …) blocked");
    assert_eq!(got, (0, 0));
}

/// Records of 8 KiB of user stack in a 32 KiB ring: some wrap around its end and are copied
/// whole into the session's scratch, which takes any record; no drain fails on one.
#[test]
fn records_larger_than_a_page_that_wrap_are_drained() {
    let attr = EventAttr::software(software::TASK_CLOCK)
        .sample_period(200_000)
        .sample_type(st::IDENTIFIER | st::TID | st::STACK_USER)
        .sample_stack_user(8192)
        .wakeup_events(1);
    let work = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done";
    let Some(mut session) = open(Session::command(["sh", "-c", work]).event(attr).data_pages(8)) else { return };
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let rings: Vec<(usize, usize)> =
        session.rings().iter().map(|r| (r.as_ptr() as usize, r.as_ptr() as usize + page + r.data_size())).collect();
    let (mut large, mut copied, mut samples) = (0, 0, 0);
    let status = session
        .run(|r| {
            let at = r.raw().bytes.as_ptr() as usize;
            let (start, end) = rings[r.ring()];
            if !(start..end).contains(&at) {
                copied += 1; // not a view into the ring: it wrapped, and was copied whole
            }
            if r.raw().bytes.len() > page {
                large += 1;
            }
            if r.sample().is_ok() {
                samples += 1;
            }
        })
        .unwrap();
    println!("{samples} samples, {large} larger than a page, {copied} copied, {} lost", session.lost_total());
    assert_eq!(status, Some(0));
    assert!(large > 0, "no record larger than a page");
    assert!(copied > 0, "no record wrapped: the copy path was not taken");
}

#[test]
fn a_held_command_starts_while_another_launch_is_still_held() {
    // `second` is forked while `first` is held, so it inherits `first`'s gate. Releasing
    // `first` must not wait for `second` to run (it once waited for the gate to close in
    // every process holding it: a hang while `second` stayed held).
    let (a, b) = (marker("held-first"), marker("held-second"));
    let mut first = Launch::spawn(&touch(&a)).unwrap();
    let second = Launch::spawn(&touch(&b)).unwrap();
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let started = first.start().and_then(|()| first.wait());
        let _ = done.send(started.map_err(|e| e.to_string()));
    });
    let status =
        result.recv_timeout(Duration::from_secs(20)).expect("start() of the first hung while the second was held");
    assert_eq!(status, Ok(0));
    assert!(a.exists() && !b.exists(), "the first ran, the second is still held");
    drop(second); // killed, never run
    std::thread::sleep(Duration::from_millis(100));
    assert!(!b.exists());
    let _ = std::fs::remove_file(&a);
}
