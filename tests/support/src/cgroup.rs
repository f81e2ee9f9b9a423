//! [`TestCgroup`]: a cgroup made for one test under the hierarchy perf samples, removed after it
//! (the cgroup tests of perfring-linux and of perfring-record's `-G`).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Held while a test's cgroup exists, and by a test whose recording lists every cgroup (perf
/// record's `--all-cgroups` synthesizes a CGROUP record for each): the two would race
/// otherwise, a cgroup made between perf's recording and ours showing in one file only.
static CGROUPS: Mutex<()> = Mutex::new(());

/// The machine's cgroups held unchanged by this process's tests until the guard drops (see
/// [`TestCgroup`]).
pub fn hold() -> MutexGuard<'static, ()> {
    CGROUPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The hierarchy perf samples, as perf's `cgroupfs_find_mountpoint` finds it: a cgroup v1
/// mount with the `perf_event` controller, else the cgroup2 mount (from /proc/self/mounts).
pub fn hierarchy() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let rows: Vec<Vec<&str>> = mounts.lines().map(|l| l.split_whitespace().collect()).collect();
    let v1 = rows.iter().find(|f| f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "perf_event"));
    let found = v1.or_else(|| rows.iter().find(|f| f.len() > 2 && f[2] == "cgroup2"))?;
    Some(PathBuf::from(found[1].replace("\\040", " ")))
}

/// A cgroup made for one test and removed when dropped: its tasks moved back to the root
/// first (a cgroup with tasks cannot be removed), then `rmdir`, retried while the kernel still
/// counts a task that just exited; a test that did not panic fails if it is left behind.
/// It holds [`hold`]'s lock while it exists, so the tests of one process make one at a time
/// (a second in the same thread would wait for the first forever).
pub struct TestCgroup {
    root: PathBuf,
    /// Its name under the hierarchy (what `Cgroup::open` and `perf record -G` take).
    pub name: String,
    /// [`hold`] until the cgroup is removed (a field drops after `Drop::drop`).
    _held: MutexGuard<'static, ()>,
}

impl TestCgroup {
    /// A new cgroup `{prefix}-{pid}-{tag}`, or `None` after a visible skip: not root, or no
    /// hierarchy mounted.
    pub fn new(prefix: &str, tag: &str) -> Option<TestCgroup> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            crate::skip("making a cgroup needs root");
            return None;
        }
        let Some(root) = hierarchy() else {
            crate::skip("no cgroup2 or perf_event cgroup hierarchy mounted");
            return None;
        };
        let held = hold();
        let name = format!("{prefix}-{}-{tag}", std::process::id());
        std::fs::create_dir(root.join(&name)).unwrap_or_else(|e| panic!("mkdir {name}: {e}"));
        Some(TestCgroup { root, name, _held: held })
    }

    /// Its directory.
    pub fn dir(&self) -> PathBuf {
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
