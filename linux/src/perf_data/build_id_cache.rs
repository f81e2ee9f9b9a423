//! perf's build-id cache (`~/.debug`, tools/perf/util/build-id.c `build_id_cache__add`): a
//! copy of each file samples hit, kept under its path and build id, so that `perf report`
//! names its functions after the file is rebuilt or removed, and `perf archive` finds it:
//!
//! ```text
//! ~/.debug/usr/bin/sleep/<build id>/elf              the file (a hard link, else a copy)
//! ~/.debug/usr/bin/sleep/<build id>/debug            its separate debug file, if installed
//! ~/.debug/[kernel.kallsyms]/<build id>/kallsyms     a copy of /proc/kallsyms
//! ~/.debug/[vdso]/<build id>/vdso                    the vDSO's image
//! ~/.debug/.build-id/<2 hex>/<38 hex> -> ../../usr/bin/sleep/<build id>
//! ```
//!
//! The cache is `$PERF_BUILDID_DIR` if set, else `$HOME/.debug` (perf's defaults; its
//! `buildid.dir` setting is not read). An entry already there is left as it is.

use std::io;
use std::path::{Path, PathBuf};

/// Which kind of DSO an entry is for (its file's name in the entry's folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsoKind {
    /// A file on disk (`elf`).
    File,
    /// The kernel (`kallsyms`, copied from /proc/kallsyms).
    Kernel,
    /// The vDSO (`vdso`, its image).
    Vdso,
}

/// The cache's folder: `$PERF_BUILDID_DIR`, else `$HOME/.debug`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PERF_BUILDID_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    Some(PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?).join(".debug"))
}

/// The build id as perf spells it: lower-case hex.
pub fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// Add `name` (a file's path, `[kernel.kallsyms]` or `[vdso]`) with build id `id` to the
/// cache at `cache`, as perf does; `image` is the vDSO's bytes for [`DsoKind::Vdso`].
pub fn add(cache: &Path, id: &[u8], name: &str, kind: DsoKind, image: Option<&[u8]>) -> io::Result<()> {
    let bid = hex(id);
    if bid.len() < 3 {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // The entry's folder, under the cache: the file's real path, or [kernel.kallsyms], [vdso].
    let relative: PathBuf = match kind {
        DsoKind::File => {
            let real = std::fs::canonicalize(name)?;
            real.strip_prefix("/").map(Path::to_path_buf).unwrap_or(real)
        }
        DsoKind::Kernel => PathBuf::from("[kernel.kallsyms]"),
        DsoKind::Vdso => PathBuf::from("[vdso]"),
    };
    let dir = cache.join(&relative).join(&bid);
    // A file where a folder goes: perf's old layout, replaced as perf replaces it.
    if dir.is_file() {
        std::fs::remove_file(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(match kind {
        DsoKind::File => "elf",
        DsoKind::Kernel => "kallsyms",
        DsoKind::Vdso => "vdso",
    });
    if !file.exists() {
        match kind {
            DsoKind::File => {
                if std::fs::hard_link(name, &file).is_err() {
                    std::fs::copy(name, &file)?;
                }
            }
            DsoKind::Kernel => {
                std::fs::copy("/proc/kallsyms", &file)?;
            }
            DsoKind::Vdso => std::fs::write(&file, image.ok_or(io::ErrorKind::InvalidInput)?)?,
        }
    }
    if kind == DsoKind::File {
        // A separate debug file (a distribution's -dbg package), as perf links it.
        let debug = PathBuf::from(format!("/usr/lib/debug/.build-id/{}/{}.debug", &bid[..2], &bid[2..]));
        let target = dir.join("debug");
        if debug.is_file() && !target.exists() && std::fs::hard_link(&debug, &target).is_err() {
            std::fs::copy(&debug, &target)?;
        }
    }
    let links = cache.join(".build-id").join(&bid[..2]);
    std::fs::create_dir_all(&links)?;
    let link = links.join(&bid[2..]);
    let to = Path::new("../..").join(&relative).join(&bid);
    match std::os::unix::fs::symlink(&to, &link) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_laid_out_as_perf_lays_it_out() {
        let cache = std::env::temp_dir().join(format!("perfring-bid-cache-{}", std::process::id()));
        let file = std::env::temp_dir().join(format!("perfring-bid-file-{}", std::process::id()));
        std::fs::write(&file, b"\x7fELF not really").unwrap();
        let id = [0xab, 0xcd, 0xef, 1, 2, 3];
        add(&cache, &id, file.to_str().unwrap(), DsoKind::File, None).unwrap();
        add(&cache, &id, file.to_str().unwrap(), DsoKind::File, None).unwrap(); // again: left as it is
        let real = std::fs::canonicalize(&file).unwrap();
        let entry = cache.join(real.strip_prefix("/").unwrap()).join("abcdef010203");
        assert_eq!(std::fs::read(entry.join("elf")).unwrap(), b"\x7fELF not really");
        let link = cache.join(".build-id/ab/cdef010203");
        let to = std::fs::read_link(&link).unwrap();
        assert!(to.starts_with("../..") && to.ends_with("abcdef010203"), "{}", to.display());
        assert_eq!(std::fs::read(link.join("elf")).unwrap(), b"\x7fELF not really", "the link resolves");
        add(&cache, &[1, 2, 3], "[vdso]", DsoKind::Vdso, Some(b"image")).unwrap();
        assert_eq!(std::fs::read(cache.join("[vdso]/010203/vdso")).unwrap(), b"image");
        std::fs::remove_dir_all(&cache).ok();
        std::fs::remove_file(&file).ok();
    }
}
