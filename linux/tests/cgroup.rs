//! [`Cgroup`] against the real kernel: a CPU-wide event given a cgroup samples the task inside
//! it and not a busy task outside, while an event without one samples both; and the typed
//! refusals of a cgroup that does not exist, of a session that is not CPU-wide, of an event
//! index the builder lacks. The cgroups are made for the test (unique names, under the
//! hierarchy perf uses) and removed after it; without root or such a hierarchy the tests skip.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use perfring::record::{attr_flags, sample_type as st, EventRecord};
use perfring_linux::{software, Cgroup, EventAttr, LinuxError, Session};

use crate::common::open_session as open;

/// The hierarchy perf samples (a v1 mount with `perf_event`, else the cgroup2 mount), read
/// from /proc/self/mounts as the crate reads it.
fn hierarchy() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let rows: Vec<Vec<&str>> = mounts.lines().map(|l| l.split_whitespace().collect()).collect();
    let v1 = rows.iter().find(|f| f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "perf_event"));
    let found = v1.or_else(|| rows.iter().find(|f| f.len() > 2 && f[2] == "cgroup2"))?;
    Some(PathBuf::from(found[1].replace("\\040", " ")))
}

/// A cgroup made for one test and removed when dropped: its tasks moved back to the root
/// first (a cgroup with tasks cannot be removed), then `rmdir`, retried while the kernel
/// still counts a task that just exited.
struct TestCgroup {
    root: PathBuf,
    name: String,
}

impl TestCgroup {
    /// A new cgroup, or why not (a visible skip): not root, no hierarchy.
    fn new(tag: &str) -> Option<TestCgroup> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            perfring_test_support::skip("making a cgroup needs root");
            return None;
        }
        let Some(root) = hierarchy() else {
            perfring_test_support::skip("no cgroup2 or perf_event cgroup hierarchy mounted");
            return None;
        };
        let name = format!("perfring-test-{}-{tag}", std::process::id());
        std::fs::create_dir(root.join(&name)).unwrap_or_else(|e| panic!("mkdir {name}: {e}"));
        Some(TestCgroup { root, name })
    }

    fn dir(&self) -> PathBuf {
        self.root.join(&self.name)
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        let procs = std::fs::read_to_string(self.dir().join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines() {
            std::fs::write(self.root.join("cgroup.procs"), pid).ok();
        }
        let end = Instant::now() + Duration::from_secs(5);
        while std::fs::remove_dir(self.dir()).is_err() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !std::thread::panicking() {
            assert!(!self.dir().exists(), "test cgroup {} left behind", self.dir().display());
        }
    }
}

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
    let Some(cg) = TestCgroup::new("in") else { return };
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
                let who = match s.pid() {
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
    let Some(cg) = TestCgroup::new("absent") else { return };
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
