//! The cgroups that exist when a recording begins, as perf record `--all-cgroups` synthesizes
//! them (tools/perf/util/synthetic-events.c `perf_event__synthesize_cgroups`): a CGROUP record
//! for each directory of the cgroup hierarchy perf samples — the cgroup v1 mount of the
//! `perf_event` controller, else the cgroup v2 mount — its id and its path from the root, so
//! that `perf report --sort cgroup` names the ids samples carry (PERF_SAMPLE_CGROUP).

use std::ffi::CString;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use perfring::record::{Cgroup, Record, SampleId};
use perfring_data::Writer;

use crate::cgroup::mountpoint;
use crate::LinuxError;

/// A CGROUP record for each cgroup under the hierarchy perf samples, the root first, each
/// directory before its children (in the order the directory lists them, as perf's
/// `readdir`): its id (the kernfs node's, which is its inode number: what perf's
/// `name_to_handle_at` reads and what a SAMPLE's CGROUP field carries) and its path from the
/// root (`/`, `/a`, `/a/b`). Nothing where no such hierarchy is mounted; a cgroup removed
/// meanwhile is skipped.
pub fn synthesize_cgroups<W: Write>(w: &mut Writer<W>) -> Result<(), LinuxError> {
    let (Some(attr), Some(root)) = (w.attrs().first().map(|a| a.attr), mountpoint()) else { return Ok(()) };
    let sample_id = Some(SampleId::default().masked(attr.sample_type));
    let mut stack: Vec<(PathBuf, String)> = vec![(root, "/".to_string())];
    while let Some((dir, path)) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&dir) else { continue };
        let Ok(name) = CString::new(path.as_str()) else { continue };
        let rec = Record::Cgroup(Cgroup { misc: 0, id: meta.ino(), path: &name, sample_id });
        w.write_record(&rec, 0)?;
        // Children pushed in reverse, so that they are written in the directory's order.
        let mut children: Vec<(PathBuf, String)> = subdirectories(&dir)
            .into_iter()
            .map(|n| (dir.join(&n), if path == "/" { format!("/{n}") } else { format!("{path}/{n}") }))
            .collect();
        children.reverse();
        stack.extend(children);
    }
    Ok(())
}

/// The names of `dir`'s subdirectories, in its listing's order (symbolic links left out, as
/// perf's `d_type` test leaves them).
fn subdirectories(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect()
}
