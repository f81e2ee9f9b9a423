//! [`Cgroup`]: a cgroup whose tasks alone an event counts and samples, per CPU
//! (`perf_event_open` with the cgroup directory's descriptor as `pid` and
//! `PERF_FLAG_PID_CGROUP`), found by name in the hierarchy perf uses.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use crate::LinuxError;

/// A cgroup, for [`SessionBuilder::cgroup`](crate::SessionBuilder::cgroup): its directory, open
/// (`O_RDONLY | O_CLOEXEC`), and its name. An event given a cgroup counts and samples only the
/// tasks in it (not those of its descendants on a cgroup v2 hierarchy unless they are in it
/// themselves: the kernel matches the cgroup or, on v2, its descendants), and only where it is
/// opened per CPU, for every task (`perf record -a -G NAME`).
#[derive(Debug)]
pub struct Cgroup {
    dir: OwnedFd,
    name: String,
}

impl Cgroup {
    /// The cgroup `name` of the hierarchy perf samples (perf's `cgroupfs_find_mountpoint`:
    /// a cgroup v1 mount with the `perf_event` controller, else the cgroup2 mount, from
    /// /proc/self/mounts), as `perf record -G NAME` finds it: `name` relative to that mount
    /// (`"a/b"`, or `"/a/b"`; `"/"` is the root, every task).
    ///
    /// [`LinuxError::NoSuchCgroup`] if no such hierarchy is mounted, or the directory cannot
    /// be opened (it does not exist, or is not a directory).
    pub fn open(name: &str) -> Result<Cgroup, LinuxError> {
        let no_such =
            |path: Option<PathBuf>, error: io::Error| LinuxError::NoSuchCgroup { name: name.to_string(), path, error };
        let Some(mount) = mountpoint() else {
            return Err(no_such(None, io::ErrorKind::NotFound.into()));
        };
        // perf joins "MOUNT/NAME" as given (a leading '/' makes a harmless "//").
        let path = PathBuf::from(format!("{}/{name}", mount.display()));
        match std::fs::File::open(&path) {
            Ok(dir) if dir.metadata().is_ok_and(|m| m.is_dir()) => Ok(Cgroup { dir: dir.into(), name: name.into() }),
            Ok(_) => Err(no_such(Some(path), io::Error::from_raw_os_error(libc::ENOTDIR))),
            Err(error) => Err(no_such(Some(path), error)),
        }
    }

    /// The name it was opened by.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The directory's descriptor: `perf_event_open`'s `pid` with `PERF_FLAG_PID_CGROUP`.
    pub(crate) fn dir(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

/// Where perf's `cgroupfs_find_mountpoint(…, "perf_event")` finds the hierarchy: a `cgroup`
/// mount with the `perf_event` option, else a `cgroup2` mount (from /proc/self/mounts).
pub(crate) fn mountpoint() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mountpoint_in(&mounts)
}

/// [`mountpoint`] of a mount table (/proc/self/mounts' lines).
fn mountpoint_in(mounts: &str) -> Option<PathBuf> {
    let fields = |l: &str| -> Option<(String, String, String)> {
        let f: Vec<&str> = l.split_whitespace().collect();
        Some((f.get(1)?.to_string(), f.get(2)?.to_string(), f.get(3)?.to_string()))
    };
    let all: Vec<_> = mounts.lines().filter_map(fields).collect();
    let v1 = all.iter().find(|(_, fs, opts)| fs == "cgroup" && opts.split(',').any(|o| o == "perf_event"));
    let found = v1.or_else(|| all.iter().find(|(_, fs, _)| fs == "cgroup2"))?;
    // /proc/self/mounts escapes a space in a path as \040.
    Some(PathBuf::from(found.0.replace("\\040", " ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf's order: a v1 hierarchy with the perf_event controller first, wherever it is
    /// listed; else the cgroup2 mount; a v1 hierarchy of other controllers never.
    #[test]
    fn the_perf_event_hierarchy_is_found_as_perf_finds_it() {
        let hybrid = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n\
                      cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        assert_eq!(mountpoint_in(hybrid), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        let v1 = format!("{hybrid}cgroup /sys/fs/cgroup/perf\\040event cgroup rw,perf_event,freezer 0 0\n");
        assert_eq!(mountpoint_in(&v1), Some(PathBuf::from("/sys/fs/cgroup/perf event")));
        assert_eq!(mountpoint_in("cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"), None);
    }

    /// A name that is no cgroup: the error names it, its path, and what went wrong.
    #[test]
    fn a_cgroup_that_does_not_exist_is_named_in_the_error() {
        let name = format!("perfring-absent-{}", std::process::id());
        match Cgroup::open(&name) {
            Err(LinuxError::NoSuchCgroup { name: n, path: Some(path), error }) => {
                assert_eq!(n, name);
                assert!(path.ends_with(&name), "{}", path.display());
                assert_eq!(error.kind(), io::ErrorKind::NotFound);
            }
            Err(LinuxError::NoSuchCgroup { path: None, .. }) => {
                perfring_test_support::skip("no cgroup hierarchy mounted here")
            }
            other => panic!("{other:?}"),
        }
    }
}
