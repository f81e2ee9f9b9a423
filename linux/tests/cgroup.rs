//! [`Cgroup`] against the real kernel: a CPU-wide event given a cgroup samples the task inside
//! it and not a busy task outside, while an event without one samples both; and the typed
//! refusals of a cgroup that does not exist, of a session that is not CPU-wide, of an event
//! index the builder lacks. The cgroups are made for the test (unique names, under the
//! hierarchy perf uses) and removed after it; without root or such a hierarchy the tests skip.

use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use perfring::record::{attr_flags, sample_type as st, EventRecord};
use perfring_linux::{software, Cgroup, EventAttr, LinuxError, Session};
use perfring_test_support::cgroup::TestCgroup;

use crate::common::open_session as open;

/// `sh` spinning for about 0.3 s of CPU, moved first into the cgroup at `dir` if given.
fn busy(dir: Option<&Path>) -> Child {
    let enter = dir.map_or(String::new(), |d| format!("echo $$ > {}/cgroup.procs || exit 9; ", d.display()));
    let script = format!("{enter}i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done");
    Command::new("sh").args(["-c", &script]).spawn().unwrap()
}

/// cpu-clock every millisecond of CPU, user and kernel, each sample with its task and event.
fn clock() -> EventAttr {
    EventAttr::software(software::CPU_CLOCK)
        .sample_period(1_000_000)
        .sample_type(st::IDENTIFIER | st::TID)
        .flag(attr_flags::EXCLUDE_KERNEL, false)
}

#[test]
fn an_event_in_a_cgroup_samples_its_tasks_alone() {
    let Some(cg) = TestCgroup::new("perfring-test", "in") else { return };
    let cgroup = Cgroup::open(&cg.name).unwrap();
    // Event 0 in the cgroup, event 1 everywhere.
    let Some(mut session) = open(Session::all_cpus().event(clock()).event(clock()).cgroup(0, cgroup)) else {
        return;
    };
    session.start().unwrap();
    let (mut inside, mut outside) = (busy(Some(&cg.dir())), busy(None));
    let (pin, pout) = (inside.id(), outside.id());
    // Per event: samples of the task inside, of the task outside, of any other task.
    let mut seen = [[0u64; 3]; 2];
    let mut count = |session: &mut Session| {
        session
            .drain(|r| {
                let (Ok(event), Ok(s)) = (r.event(), r.sample()) else { return };
                let who = match s.tid().map(|t| t.pid) {
                    Some(p) if p == pin => 0,
                    Some(p) if p == pout => 1,
                    _ => 2,
                };
                seen[event][who] += 1;
            })
            .unwrap()
    };
    let end = Instant::now() + Duration::from_secs(30);
    let mut statuses = [None, None];
    while statuses.iter().any(Option::is_none) && Instant::now() < end {
        count(&mut session);
        for (status, child) in statuses.iter_mut().zip([&mut inside, &mut outside]) {
            if status.is_none() {
                *status = child.try_wait().unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    session.stop().unwrap();
    count(&mut session);
    assert!(statuses.iter().all(|s| s.is_some_and(|s| s.success())), "the two tasks ran: {statuses:?}");
    let [in_cgroup, everywhere] = seen;
    assert!(in_cgroup[0] > 0, "the task in the cgroup sampled: {seen:?}");
    assert_eq!([in_cgroup[1], in_cgroup[2]], [0, 0], "only the cgroup's task sampled by event 0: {seen:?}");
    assert!(everywhere[0] > 0 && everywhere[1] > 0, "event 1 samples both tasks: {seen:?}");
}

#[test]
fn a_cgroup_that_does_not_exist_is_refused_with_its_path() {
    let Some(cg) = TestCgroup::new("perfring-test", "absent") else { return };
    let name = format!("{}/none", cg.name);
    match Cgroup::open(&name) {
        Err(e @ LinuxError::NoSuchCgroup { .. }) => {
            let said = e.to_string();
            assert!(said.contains(&format!("no access to cgroup {}", cg.dir().join("none").display())), "{said}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_cgroup_needs_a_cpu_wide_session_and_an_event() {
    let cgroup = || match Cgroup::open("/") {
        Ok(c) => Some(c),
        Err(e) => {
            perfring_test_support::skip(e);
            None
        }
    };
    let Some(root) = cgroup() else { return };
    let refused = Session::command(["true"]).event(clock()).cgroup(0, root).open().unwrap_err();
    assert!(
        matches!(&refused, LinuxError::CgroupMisplaced { cgroup, event: 0, cpu_wide: false, .. } if cgroup == "/"),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("Scope::AllCpus"), "{refused}");
    let Some(root) = cgroup() else { return };
    let refused = Session::all_cpus().event(clock()).cgroup(1, root).open().unwrap_err();
    assert!(matches!(refused, LinuxError::CgroupMisplaced { event: 1, events: 1, cpu_wide: true, .. }), "{refused:?}");
}
