//! cgroups as perf finds them (tools/perf/util/cgroup.c): the mount of the v1 hierarchy with
//! the perf_event controller, or else the v2 (unified) one; a cgroup is a directory under it.

use std::path::PathBuf;

/// The cgroup file system perf uses: a v1 mount with `perf_event` among its options, or else
/// the first cgroup2 mount (`/proc/mounts`).
pub fn mount_point() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    let mut v2 = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, dir, fs, opts, ..] = f[..] else { continue };
        match fs {
            "cgroup" if opts.split(',').any(|o| o == "perf_event") => return Some(PathBuf::from(dir)),
            "cgroup2" if v2.is_none() => v2 = Some(PathBuf::from(dir)),
            _ => {}
        }
    }
    v2
}

/// The directory of cgroup `name` (relative to the mount, as perf takes it), or perf's words
/// when it cannot be opened.
pub fn path_of(name: &str) -> Result<PathBuf, String> {
    let root = mount_point().ok_or_else(|| format!("no access to cgroup {name}: no cgroup file system mounted"))?;
    let path = format!("{}/{name}", root.display());
    match std::fs::read_dir(&path) {
        Ok(_) => Ok(PathBuf::from(path)),
        Err(_) => Err(format!("no access to cgroup {path}")),
    }
}
