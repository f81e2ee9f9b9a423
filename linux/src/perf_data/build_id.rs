//! Build ids: the `NT_GNU_BUILD_ID` note of an ELF file (read from its `PT_NOTE` segments, as
//! `perf`'s `filename__read_build_id` does) or of the running kernel (`/sys/kernel/notes`), and
//! [`Dsos`]: which mapped files the samples hit, so that the BUILD_ID feature lists those (as
//! `perf record` does: `perf_session__write_buildid_table` writes the DSOs with hits).
//!
//! Files are untrusted input: every offset and size is bounded by the bytes read; a file that
//! is not ELF, or has no note, has no build id (`None`), never an error or a panic.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{Read, Seek, SeekFrom};

/// The most bytes of notes read from one segment (build-id notes are tens of bytes; a note
/// segment larger than this is not searched past it).
const MAX_NOTES: u64 = 1 << 16;
/// `NT_GNU_BUILD_ID`.
const NT_GNU_BUILD_ID: u32 = 3;
/// `PT_NOTE`.
const PT_NOTE: u32 = 4;
/// The longest build id perf stores (`BUILD_ID_SIZE`).
pub const MAX_BUILD_ID: usize = 20;

/// The GNU build id in a block of ELF notes (`{u32 namesz, descsz, type; name; desc}`, each
/// padded to 4), in byte order `big`.
pub fn build_id_in_notes(notes: &[u8], big: bool) -> Option<Vec<u8>> {
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = notes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(if big { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
    };
    let mut at = 0usize;
    while at.checked_add(12)? <= notes.len() {
        let (namesz, descsz, type_) = (u32_at(at)? as usize, u32_at(at + 4)? as usize, u32_at(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at.checked_add(namesz.checked_next_multiple_of(4)?)?;
        let next = desc_at.checked_add(descsz.checked_next_multiple_of(4)?)?;
        if type_ == NT_GNU_BUILD_ID && notes.get(name_at..name_at + namesz)? == b"GNU\0" {
            let id = notes.get(desc_at..desc_at + descsz)?;
            return (!id.is_empty()).then(|| id[..id.len().min(MAX_BUILD_ID)].to_vec());
        }
        at = next;
    }
    None
}

/// The build id of the ELF file at `path` (32- or 64-bit, either byte order), if it has one.
pub fn build_id_of_file(path: &std::path::Path) -> Option<Vec<u8>> {
    build_id_of_elf(std::fs::File::open(path).ok()?)
}

/// The build id of an ELF image read from `f` (a file, or bytes in a `Cursor`).
pub fn build_id_of_elf(mut f: impl Read + Seek) -> Option<Vec<u8>> {
    let mut ident = [0u8; 64];
    f.read_exact(&mut ident).ok()?;
    if ident[..4] != *b"\x7fELF" {
        return None;
    }
    let (wide, big) = (ident[4] == 2, ident[5] == 2);
    let u16_at = |b: &[u8], at: usize| {
        let v: [u8; 2] = b[at..at + 2].try_into().unwrap_or_default();
        u64::from(if big { u16::from_be_bytes(v) } else { u16::from_le_bytes(v) })
    };
    let u32_at = |b: &[u8], at: usize| {
        let v: [u8; 4] = b[at..at + 4].try_into().unwrap_or_default();
        u64::from(if big { u32::from_be_bytes(v) } else { u32::from_le_bytes(v) })
    };
    let u64_at = |b: &[u8], at: usize| {
        let v: [u8; 8] = b[at..at + 8].try_into().unwrap_or_default();
        if big {
            u64::from_be_bytes(v)
        } else {
            u64::from_le_bytes(v)
        }
    };
    // e_phoff, e_phentsize, e_phnum.
    let (phoff, phentsize, phnum) = if wide {
        (u64_at(&ident, 32), u16_at(&ident, 54), u16_at(&ident, 56))
    } else {
        (u32_at(&ident, 28), u16_at(&ident, 42), u16_at(&ident, 44))
    };
    let min_entry = if wide { 56 } else { 32 };
    if phentsize < min_entry || phnum == 0 {
        return None;
    }
    let mut table = vec![0u8; (phentsize * phnum).min(MAX_NOTES) as usize];
    f.seek(SeekFrom::Start(phoff)).ok()?;
    f.read_exact(&mut table).ok()?;
    for entry in table.chunks_exact(phentsize as usize) {
        if u32_at(entry, 0) != u64::from(PT_NOTE) {
            continue;
        }
        let (offset, size) =
            if wide { (u64_at(entry, 8), u64_at(entry, 32)) } else { (u32_at(entry, 4), u32_at(entry, 16)) };
        let mut notes = vec![0u8; size.min(MAX_NOTES) as usize];
        if f.seek(SeekFrom::Start(offset)).is_err() || f.read_exact(&mut notes).is_err() {
            continue;
        }
        if let Some(id) = build_id_in_notes(&notes, big) {
            return Some(id);
        }
    }
    None
}

/// The running kernel's build id (`/sys/kernel/notes`).
pub fn kernel_build_id() -> Option<Vec<u8>> {
    build_id_in_notes(&std::fs::read("/sys/kernel/notes").ok()?, cfg!(target_endian = "big"))
}

/// This process's vDSO, as the kernel maps it into every process of its kind (perf reads its
/// own the same way, `vdso.c`): its bytes, from the `[vdso]` line of /proc/self/maps and
/// /proc/self/mem. `None` where there is none or it cannot be read.
pub fn vdso_image() -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let (start, end) = (u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?);
    let len = usize::try_from(end.checked_sub(start)?).ok().filter(|&l| l <= 1 << 20)?;
    let mut image = vec![0u8; len];
    std::fs::File::open("/proc/self/mem").ok()?.read_exact_at(&mut image, start).ok()?;
    Some(image)
}

/// The vDSO's build id ([`vdso_image`]'s), what perf lists for `[vdso]`.
pub fn vdso_build_id() -> Option<Vec<u8>> {
    build_id_of_elf(std::io::Cursor::new(vdso_image()?))
}

/// A sample waits for its mapping by page (4 KiB: the smallest page; mappings start on one).
const PAGE_MASK: u64 = 0xfff;

/// What perf names the vDSO's DSO.
pub const VDSO_DSO: &str = "[vdso]";

/// What perf names the kernel's DSO.
pub const KERNEL_DSO: &str = "[kernel.kallsyms]";

/// The most pages of samples [`Dsos`] holds while their mapping is not known yet (beyond it a
/// sample with no mapping is passed over, and its file may miss the build-id table).
const MAX_PENDING: usize = 1 << 14;

/// The file index of a mapping with no file (`[heap]`, `[stack]`, `[anon:..]`): samples in it
/// hit nothing, and are not waited on.
const NO_FILE: usize = usize::MAX;

/// The files mapped into each process (from MMAP/MMAP2 records, followed through FORK), and
/// the ones samples hit.
///
/// Records come in ring by ring, not in time order: a process's MMAP2 can be in one CPU's ring
/// and its samples in another's, drained first (a command exec'd on one CPU and run on the
/// other). perf orders the records by time before it looks for hits; here a sample whose
/// process has no mapping at its address waits (by page, up to 16,384 pages) for the
/// mapping or FORK that covers it.
#[derive(Debug, Default)]
pub struct Dsos {
    /// pid → start → (end, file or [`NO_FILE`]).
    maps: HashMap<u32, BTreeMap<u64, (u64, usize)>>,
    files: Vec<String>,
    file_index: HashMap<String, usize>,
    hit: BTreeSet<usize>,
    kernel_hit: bool,
    /// The mapping the last hit fell in (pid, start, end): already marked.
    last: Option<(u32, u64, u64)>,
    /// (pid, page) of samples no known mapping covered yet.
    pending: BTreeSet<(u32, u64)>,
}

impl Dsos {
    /// A file mapped at `[start, start + len)` in process `pid`.
    pub fn map(&mut self, pid: u32, start: u64, len: u64, file: &str) {
        let index = if !file.starts_with('/') && file != VDSO_DSO {
            NO_FILE // [anon], [heap], [stack]: no file to read a build id from
        } else {
            let next = self.files.len();
            let index = *self.file_index.entry(file.to_string()).or_insert(next);
            if index == next {
                self.files.push(file.to_string());
            }
            index
        };
        self.last = None;
        let maps = self.maps.entry(pid).or_default();
        let end = start.saturating_add(len);
        // A new mapping replaces what it overlaps (as the kernel's would).
        let stale: Vec<u64> = maps.range(..end).filter(|(_, &(e, _))| e > start).map(|(&s, _)| s).collect();
        for s in stale {
            maps.remove(&s);
        }
        maps.insert(start, (end, index));
        // Samples drained before this record, in its range.
        let waiting: Vec<(u32, u64)> = self.pending.range((pid, start & !PAGE_MASK)..(pid, end)).copied().collect();
        for (pid, page) in waiting {
            self.settle(pid, page);
        }
    }

    /// Mark the file mapped at `page` of `pid` (if a mapping covers it now) as hit, and stop
    /// waiting for it.
    fn settle(&mut self, pid: u32, page: u64) {
        // Mappings start and end on page boundaries: one covering the sample covers its page.
        let file = self
            .maps
            .get(&pid)
            .and_then(|m| m.range(..=page).next_back().filter(|(_, &(end, _))| page < end).map(|(_, &(_, file))| file));
        if let Some(file) = file {
            if file != NO_FILE {
                self.hit.insert(file);
            }
            self.pending.remove(&(pid, page));
        }
    }

    /// Process `child` forked from `parent`: it starts with the parent's mappings.
    pub fn fork(&mut self, parent: u32, child: u32) {
        if parent != child {
            self.last = None;
            if let Some(m) = self.maps.get(&parent).cloned() {
                self.maps.insert(child, m);
            }
            // The child's samples drained before this record.
            let waiting: Vec<(u32, u64)> = self.pending.range((child, 0)..=(child, u64::MAX)).copied().collect();
            for (pid, page) in waiting {
                self.settle(pid, page);
            }
        }
    }

    /// A user-space sample at `ip` in process `pid`.
    #[inline]
    pub fn hit(&mut self, pid: u32, ip: u64) {
        // Most samples fall in the mapping the last one hit.
        if let Some((p, start, end)) = self.last {
            if p == pid && start <= ip && ip < end {
                return;
            }
        }
        self.hit_slow(pid, ip);
    }

    #[cold]
    fn hit_slow(&mut self, pid: u32, ip: u64) {
        if let Some((&start, &(end, file))) = self.maps.get(&pid).and_then(|m| m.range(..=ip).next_back()) {
            if ip < end {
                if file != NO_FILE {
                    self.hit.insert(file);
                }
                self.last = Some((pid, start, end));
                return;
            }
        }
        // No mapping known here yet: its record may be in a ring not drained yet.
        if self.pending.len() < MAX_PENDING {
            self.pending.insert((pid, ip & !PAGE_MASK));
        }
    }

    /// A kernel sample.
    pub fn hit_kernel(&mut self) {
        self.kernel_hit = true;
    }

    /// Count every file mapped so far, and the kernel, as hit (perf record's `--buildid-all`,
    /// `dsos__hit_all`): through [`PerfData::dsos_mut`](super::PerfData::dsos_mut), before
    /// [`finish`](super::PerfData::finish), after the last drain.
    pub fn hit_all(&mut self) {
        self.kernel_hit = true;
        self.hit.extend(0..self.files.len());
    }

    /// `(path, kernel?)` of every DSO a sample hit, and the vDSO wherever it was mapped (perf
    /// writes its build id hit or not: `machine__write_buildid_table`, util/build-id.c).
    pub fn hits(&self) -> impl Iterator<Item = (&str, bool)> + '_ {
        let kernel = self.kernel_hit.then_some((KERNEL_DSO, true));
        let vdso = self.file_index.get(VDSO_DSO).copied().filter(|i| !self.hit.contains(i));
        kernel.into_iter().chain(self.hit.iter().copied().chain(vdso).map(|i| (self.files[i].as_str(), false)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_block_yields_the_gnu_build_id_and_garbage_yields_none() {
        let mut notes = Vec::new();
        // A non-GNU note first, then the build id.
        for (name, type_, desc) in [(&b"Go\0\0"[..], 4u32, &[9u8; 8][..]), (b"GNU\0", 3, &[0xab; 20])] {
            notes.extend_from_slice(&4u32.to_le_bytes());
            notes.extend_from_slice(&(desc.len() as u32).to_le_bytes());
            notes.extend_from_slice(&type_.to_le_bytes());
            notes.extend_from_slice(name);
            notes.extend_from_slice(desc);
        }
        assert_eq!(build_id_in_notes(&notes, false), Some(vec![0xab; 20]));
        for cut in 0..notes.len() {
            assert!(build_id_in_notes(&notes[..cut], false).is_none(), "cut at {cut}");
        }
        let huge = [0xffu8; 12];
        assert_eq!(build_id_in_notes(&huge, false), None);
    }

    #[test]
    fn this_test_binary_has_the_build_id_readelf_prints() {
        let exe = std::env::current_exe().unwrap();
        let ours = build_id_of_file(&exe);
        let out = std::process::Command::new("readelf").arg("-n").arg(&exe).output();
        let Ok(out) = out else { return perfring_test_support::skip("readelf is not installed") };
        let text = String::from_utf8_lossy(&out.stdout);
        let theirs = text.lines().find_map(|l| l.trim().strip_prefix("Build ID: ")).map(str::to_string);
        let hex = ours.map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>());
        assert_eq!(hex, theirs);
        assert_eq!(build_id_of_file(std::path::Path::new("/proc/self/status")), None);
    }

    #[test]
    fn samples_hit_the_file_mapped_at_their_ip_also_after_a_fork() {
        let mut d = Dsos::default();
        d.map(10, 0x1000, 0x1000, "/bin/a");
        d.map(10, 0x4000, 0x1000, "[vdso]");
        d.fork(10, 11);
        d.map(10, 0x1000, 0x800, "/bin/b"); // replaces /bin/a in 10 only
        d.hit(11, 0x1800);
        d.hit(10, 0x2800); // past every mapping
        d.hit(12, 0x1800); // unknown process
                           // The vDSO, mapped, is listed hit or not (as perf lists it).
        assert_eq!(d.hits().collect::<Vec<_>>(), vec![("/bin/a", false), (VDSO_DSO, false)]);
        d.hit(10, 0x1100);
        d.hit_kernel();
        let all = vec![(KERNEL_DSO, true), ("/bin/a", false), ("/bin/b", false), (VDSO_DSO, false)];
        assert_eq!(d.hits().collect::<Vec<_>>(), all);
        d.hit(10, 0x4010); // hit: listed once (in the files' order)
        let mut hits: Vec<_> = d.hits().collect();
        hits.sort();
        let mut all = all;
        all.sort();
        assert_eq!(hits, all);
    }

    #[test]
    fn hit_all_counts_every_mapped_file_and_the_kernel() {
        let mut d = Dsos::default();
        d.map(1, 0x1000, 0x1000, "/bin/a");
        d.map(1, 0x3000, 0x1000, "[anon]");
        d.map(2, 0x1000, 0x1000, "/lib/b.so");
        assert_eq!(d.hits().count(), 0);
        d.hit_all();
        assert_eq!(d.hits().collect::<Vec<_>>(), vec![(KERNEL_DSO, true), ("/bin/a", false), ("/lib/b.so", false)]);
    }

    #[test]
    fn a_sample_drained_before_its_mapping_or_fork_hits_the_file_once_that_comes() {
        let mut d = Dsos::default();
        // Another CPU's ring, drained first: the command's samples before its exec's MMAP2.
        d.hit(20, 0x1_2345);
        d.hit(20, 0x9_0000); // in [heap], mapped below
        d.hit(21, 0x1_2000); // a child whose FORK comes later
        d.hit(22, 0x5_0000); // never mapped
        assert_eq!(d.hits().count(), 0);
        d.map(20, 0x9_0000, 0x1000, "[heap]");
        d.map(20, 0x3_0000, 0x1000, "/bin/other"); // not where the samples are
        assert_eq!(d.hits().count(), 0);
        d.map(20, 0x1_0000, 0x1_0000, "/bin/cmd");
        assert_eq!(d.hits().collect::<Vec<_>>(), vec![("/bin/cmd", false)]);
        d.map(20, 0x7_0000, 0x1000, "/lib/libc.so");
        d.fork(20, 21);
        d.hit(21, 0x7_0010);
        assert_eq!(d.hits().collect::<Vec<_>>(), vec![("/bin/cmd", false), ("/lib/libc.so", false)]);
        // What is still waited for: the never-mapped page only.
        assert_eq!(d.pending.iter().copied().collect::<Vec<_>>(), vec![(22, 0x5_0000)]);
        // The wait is bounded.
        for page in 0..2 * MAX_PENDING as u64 {
            d.hit(23, page << 12);
        }
        assert_eq!(d.pending.len(), MAX_PENDING);
    }
}
