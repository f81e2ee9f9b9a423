//! `--threads`: perf record's parallel streaming (builtin-record.c, `record__init_thread_masks`,
//! `record__thread`). The output is a directory (tools/perf/util/data.c `perf_data__create_dir`):
//! `data`, a perf.data file whose data section holds what the recorder synthesizes and whose
//! DIR_FORMAT feature says so, and `data.N`, the records of ring N (the N-th CPU) as the ring held
//! them, no header, no FINISHED_ROUND (each ring's records are in time order; perf report sorts
//! them all). Reader threads each take the rings of a mask — a CPU, a core, a package, a NUMA
//! node, or the user's — and write them to their files; the main thread waits for the end.
//!
//! Each reader maps its rings again (a second mapping of the ring owner's buffer, whose one
//! consumer it holds while it runs), so the session stays with the main thread. What the
//! features need (samples, their times, the files they hit) is noted by each reader and given
//! to the `data` file's writer at the end: the mappings seen, then the pages samples hit.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use perfring::consumer::Scratch;
use perfring::record::{types, CpuMode, EventRecord, RawRecord, Record};
use perfring_linux::perf_data::{PerfData, OUTPUT_BUFFER};
use perfring_linux::{Ring, Session};

use crate::cli::Threads;
use crate::failure::Error;

/// The rings of each reader thread (indices into the session's rings), from `spec` over the
/// CPUs of the rings; perf's words where a user's spec is wrong.
pub fn groups(spec: &Threads, cpus: &[u32]) -> Result<Vec<Vec<usize>>, String> {
    let masks: Vec<Vec<u32>> = match spec {
        Threads::Cpu => cpus.iter().map(|&c| vec![c]).collect(),
        Threads::Core => topology(cpus, "topology/core_cpus_list", "topology/thread_siblings_list"),
        Threads::Package => topology(cpus, "topology/package_cpus_list", "topology/core_siblings_list"),
        Threads::Numa => numa(cpus),
        Threads::User(spec) => user_masks(spec)?,
    };
    let mut taken: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for mask in masks {
        let rings: Vec<usize> = (0..cpus.len()).filter(|&r| mask.contains(&cpus[r])).collect();
        if rings.is_empty() {
            return Err(format!("Empty maps mask: {}", list(&mask)));
        }
        if mask.iter().any(|c| taken.contains(c)) {
            return Err(format!("Intersecting maps mask: {}", list(&mask)));
        }
        taken.extend(&mask);
        out.push(rings);
    }
    if out.is_empty() {
        return Err("Invalid thread maps or affinity specs".into());
    }
    Ok(out)
}

fn list(cpus: &[u32]) -> String {
    cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}

/// A CPU list as the kernel writes them (`0-3,6`).
fn cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.trim().parse::<u32>().ok()?..=b.trim().parse::<u32>().ok()?),
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// The distinct sibling lists of `cpus` (sysfs `file`, or `fallback` on older kernels).
fn topology(cpus: &[u32], file: &str, fallback: &str) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    for &c in cpus {
        let dir = format!("/sys/devices/system/cpu/cpu{c}");
        let text = std::fs::read_to_string(format!("{dir}/{file}"))
            .or_else(|_| std::fs::read_to_string(format!("{dir}/{fallback}")))
            .unwrap_or_else(|_| c.to_string());
        let siblings = cpu_list(&text).unwrap_or_else(|| vec![c]);
        if !out.contains(&siblings) {
            out.push(siblings);
        }
    }
    out
}

/// The CPUs of each NUMA node (`/sys/devices/system/node/nodeN/cpulist`), or one node of all.
fn numa(cpus: &[u32]) -> Vec<Vec<u32>> {
    let mut nodes: Vec<(u32, Vec<u32>)> = std::fs::read_dir("/sys/devices/system/node")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.strip_prefix("node")?.parse().ok()?;
            Some((n, cpu_list(&std::fs::read_to_string(e.path().join("cpulist")).ok()?)?))
        })
        .filter(|(_, cpus)| !cpus.is_empty())
        .collect();
    nodes.sort();
    if nodes.is_empty() {
        return vec![cpus.to_vec()];
    }
    nodes.into_iter().map(|(_, c)| c).collect()
}

/// perf's user spec: `maps/affinity:maps/affinity...`, each a CPU list (the affinity checked,
/// not applied: readers run where the scheduler puts them).
fn user_masks(spec: &str) -> Result<Vec<Vec<u32>>, String> {
    let invalid = || "Invalid thread maps or affinity specs".to_string();
    let mut out = Vec::new();
    for part in spec.split(':').filter(|p| !p.is_empty()) {
        let (maps, affinity) = part.split_once('/').ok_or_else(invalid)?;
        let (maps, _) = (cpu_list(maps).ok_or_else(invalid)?, cpu_list(affinity).ok_or_else(invalid)?);
        out.push(maps);
    }
    Ok(out)
}

/// What a reader saw, for the `data` file's features and the summary.
#[derive(Default)]
pub struct Notes {
    /// Samples by event.
    pub samples: Vec<u64>,
    /// The first and last sample times.
    pub times: Option<(u64, u64)>,
    /// MMAP, MMAP2 and FORK records, decoded: (pid, start, len, file) or (parent, child).
    maps: Vec<Mapped>,
    /// User-space samples: (pid, page of the IP).
    hits: HashSet<(u32, u64)>,
    /// The hits inserted last, direct-mapped by page and pid: a sampled loop hits a few pages
    /// sample after sample, and the set's hashing was 30 % of a reader's CPU (`make
    /// bench-record` case (B), profiled); a hit found here is not hashed again.
    recent: Recent,
    kernel: bool,
    /// Records written, and LOST records.
    pub records: u64,
    /// Records the rings reported lost (in LOST records), and those records.
    pub lost: u64,
    /// LOST records.
    pub lost_records: u64,
    /// Bytes written (to the data.N files).
    pub bytes: u64,
    /// Passes that found records.
    pub wakeups: u64,
}

/// [`Notes::recent`]: 64 slots, each the last (pid, page) that mapped to it.
struct Recent([Option<(u32, u64)>; 64]);

impl Default for Recent {
    fn default() -> Self {
        Recent([None; 64])
    }
}

impl Recent {
    /// Whether `hit` is new here (and now remembered).
    fn fresh(&mut self, hit: (u32, u64)) -> bool {
        let slot = &mut self.0[((hit.1 >> 12) ^ u64::from(hit.0)) as usize % 64];
        let fresh = *slot != Some(hit);
        *slot = Some(hit);
        fresh
    }
}

enum Mapped {
    Map(u32, u64, u64, String),
    Fork(u32, u32),
}

impl Notes {
    /// Add `other`'s notes to these.
    fn merge(&mut self, other: Notes) {
        if self.samples.len() < other.samples.len() {
            self.samples.resize(other.samples.len(), 0);
        }
        self.samples.iter_mut().zip(&other.samples).for_each(|(a, b)| *a += b);
        if let Some((a, b)) = other.times {
            let (x, y) = self.times.unwrap_or((a, b));
            self.times = Some((x.min(a), y.max(b)));
        }
        self.maps.extend(other.maps);
        self.hits.extend(other.hits);
        self.kernel |= other.kernel;
        self.records += other.records;
        self.lost += other.lost;
        self.lost_records += other.lost_records;
        self.wakeups += other.wakeups;
    }

    /// Give `data` what the features need: the mappings, then each page samples hit.
    pub fn tell<W: Write>(&self, data: &mut PerfData<W>) {
        if let Some((first, last)) = self.times {
            data.note_sample_times(first, last);
        }
        let dsos = data.dsos_mut();
        for m in &self.maps {
            match m {
                Mapped::Map(pid, start, len, file) => dsos.map(*pid, *start, *len, file),
                Mapped::Fork(parent, child) => dsos.fork(*parent, *child),
            }
        }
        for &(pid, page) in &self.hits {
            dsos.hit(pid, page);
        }
        if self.kernel {
            dsos.hit_kernel();
        }
    }
}

/// How the streams are written: `-z`'s level, `--mmap-flush`'s bytes, `--overwrite`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Writing {
    /// `-z`: each pass's records of a ring as COMPRESSED records of its own (perf's
    /// per-stream compression; the `data` file's COMPRESSED feature tells perf report).
    pub compress: Option<i32>,
    /// `--mmap-flush`: a ring read once it holds so many bytes, except at the end.
    pub flush: usize,
    /// `--overwrite`: the rings are read once, backward, after the events stop (as perf reads
    /// a flight recorder), each into its `data.N`; no reader thread runs meanwhile.
    pub overwrite: bool,
}

/// The reader threads of a recording: see the [module docs](self).
pub struct Streams {
    stop: Option<UnixStream>,
    stopping: Arc<AtomicBool>,
    handles: Vec<JoinHandle<Result<Notes, String>>>,
    bytes: Arc<AtomicU64>,
    /// `--overwrite`: each ring's file (by ring index), written by [`Streams::finish`].
    backward: Vec<(usize, BufWriter<File>)>,
    writing: Writing,
}

/// One ring of a reader: its own mapping, its file, and (`-z`) the records of a pass.
struct Stream {
    ring: Ring,
    out: BufWriter<File>,
    batch: Vec<u8>,
}

impl Streams {
    /// Map each ring of `session` again, create `dir/data.N` for it, and start a reader thread
    /// per group of rings ([`groups`]); with `--overwrite`, only the files.
    pub fn start(session: &Session, dir: &Path, groups: Vec<Vec<usize>>, writing: Writing) -> Result<Streams, Error> {
        let (keep, wake) = UnixStream::pair()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let bytes = Arc::new(AtomicU64::new(0));
        let mut streams = Streams { stop: None, stopping, handles: Vec::new(), bytes, backward: Vec::new(), writing };
        for group in groups {
            let files = group.iter().map(|&r| Ok((r, stream_file(dir, r)?))).collect::<Result<Vec<_>, Error>>()?;
            if writing.overwrite {
                streams.backward.extend(files);
                continue;
            }
            let reader = Reader {
                streams: mapped(session, files)?,
                set: session.event_set().clone(),
                wake: wake.try_clone()?,
                stopping: Arc::clone(&streams.stopping),
                bytes: Arc::clone(&streams.bytes),
                notes: Notes { samples: vec![0; session.event_set().events().len()], ..Notes::default() },
                writing,
            };
            let spawned = std::thread::Builder::new().name("perfring-reader".into()).spawn(move || reader.run())?;
            streams.handles.push(spawned);
        }
        drop(wake);
        streams.stop = Some(keep);
        Ok(streams)
    }

    /// Bytes the readers wrote so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Stop the readers (each drains its rings once more: stop the events first), and merge
    /// their notes; with `--overwrite`, read each ring of `session` (stopped) into its file.
    pub fn finish(mut self, session: &mut Session) -> Result<Notes, Error> {
        self.stopping.store(true, Ordering::Release);
        // The other end of each reader's wake socket: closing it wakes their waits.
        drop(self.stop.take());
        let mut all = Notes::default();
        for h in self.handles.drain(..) {
            let notes = h.join().map_err(|_| "a reader thread panicked")??;
            all.merge(notes);
        }
        if !self.backward.is_empty() {
            all.merge(self.read_backward(session)?);
        }
        all.bytes = self.bytes.load(Ordering::Acquire);
        Ok(all)
    }

    /// `--overwrite`: what each ring holds (newest first, as the session reads an overwrite
    /// ring), written to its `data.N` (compressed with `-z`), noted as the readers note.
    fn read_backward(&mut self, session: &mut Session) -> Result<Notes, Error> {
        let set = session.event_set().clone();
        let mut notes = Notes { samples: vec![0; set.events().len()], ..Notes::default() };
        let mut batches: Vec<Vec<u8>> = vec![Vec::new(); session.rings().len()];
        session.drain(|r| {
            if let Some(b) = batches.get_mut(r.ring()) {
                b.extend_from_slice(r.raw().bytes);
            }
            note(&mut notes, &set, r.raw());
        })?;
        for (ring, out) in &mut self.backward {
            let batch = batches.get(*ring).map_or(&[][..], |b| &b[..]);
            self.bytes.fetch_add(batch.len() as u64, Ordering::Relaxed);
            write_batch(out, batch, self.writing.compress)?;
            out.flush().map_err(|e| format!("writing a data.N file: {e}"))?;
        }
        notes.wakeups += 1;
        Ok(notes)
    }
}

/// `dir/data.N` of ring `ring`, buffered.
fn stream_file(dir: &Path, ring: usize) -> Result<BufWriter<File>, Error> {
    Ok(BufWriter::with_capacity(OUTPUT_BUFFER, private_file(&dir.join(format!("data.{ring}")))?))
}

/// Each ring of `files` mapped again, from its owner event in `session`.
fn mapped(session: &Session, files: Vec<(usize, BufWriter<File>)>) -> Result<Vec<Stream>, Error> {
    let pages = session.rings().first().map_or(1, |r| r.data_size() / 4096);
    let mut streams = Vec::new();
    for (r, out) in files {
        let cpu = session.cpus()[r];
        let owner = session.events().zip(session.placements()).find(|(_, p)| p.cpu == cpu);
        let (event, _) = owner.ok_or("a ring without its event")?;
        streams.push(Stream { ring: Ring::map(event, pages, true)?, out, batch: Vec::new() });
    }
    Ok(streams)
}

/// Write `batch` (whole records) to `out`: as it is, or (`-z`) as COMPRESSED records.
fn write_batch(out: &mut BufWriter<File>, batch: &[u8], compress: Option<i32>) -> Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("writing a data.N file: {e}");
    match compress {
        _ if batch.is_empty() => Ok(()),
        None => out.write_all(batch).map_err(|e| failed(&e)),
        Some(level) => {
            let records = perfring_data::compressed_records(batch, level, perfring::record::Endian::NATIVE)
                .map_err(|e| failed(&e))?;
            out.write_all(&records).map_err(|e| failed(&e))
        }
    }
}

/// A reader thread's state.
struct Reader {
    streams: Vec<Stream>,
    set: perfring::record::EventSet<Vec<perfring::record::EventLayout>, Vec<perfring::record::IdEntry>>,
    wake: UnixStream,
    stopping: Arc<AtomicBool>,
    bytes: Arc<AtomicU64>,
    notes: Notes,
    writing: Writing,
}

impl Reader {
    /// Read the rings until stopped: a pass over them, again while one finds records (as
    /// perf's `record__thread`), then sleep until a ring's wakeup or the stop.
    fn run(mut self) -> Result<Notes, String> {
        let mut scratch = Box::<Scratch>::default();
        loop {
            let stopping = self.stopping.load(Ordering::Acquire);
            let n = self.pass(&mut scratch[..], stopping)?;
            if n > 0 {
                self.notes.wakeups += 1;
                continue;
            }
            if stopping {
                break;
            }
            let mut fds: Vec<_> = self.streams.iter().map(|s| s.ring.as_fd()).collect();
            fds.push(self.wake.as_fd());
            perfring_linux::wait(&fds, Some(Duration::from_secs(1))).map_err(|e| e.to_string())?;
        }
        for s in &mut self.streams {
            s.out.flush().map_err(|e| format!("writing a data.N file: {e}"))?;
        }
        Ok(self.notes)
    }

    /// One pass over the rings; how many records. A ring holding less than `--mmap-flush` is
    /// left for a later pass, except the last (`last`).
    fn pass(&mut self, scratch: &mut [u8], last: bool) -> Result<usize, String> {
        let mut n = 0;
        let (set, notes, bytes, writing) = (&self.set, &mut self.notes, &self.bytes, self.writing);
        for s in &mut self.streams {
            let mut consumer = s.ring.consumer().map_err(|e| e.to_string())?;
            if writing.flush > 1 && !last && consumer.available().map_err(|e| e.to_string())? < writing.flush {
                continue;
            }
            let batch = &mut s.batch;
            n += consumer
                .for_each(scratch, |raw| {
                    batch.extend_from_slice(raw.bytes);
                    bytes.fetch_add(raw.bytes.len() as u64, Ordering::Relaxed);
                    note(notes, set, raw);
                })
                .map_err(|e| e.to_string())?;
            // A pass's records of the ring go out together (one compressed frame with -z).
            write_batch(&mut s.out, batch, writing.compress)?;
            batch.clear();
        }
        Ok(n)
    }
}

/// What one record tells the features.
fn note(
    notes: &mut Notes,
    set: &perfring::record::EventSet<Vec<perfring::record::EventLayout>, Vec<perfring::record::IdEntry>>,
    raw: &RawRecord<'_>,
) {
    notes.records += 1;
    let rec = set.attribute(raw);
    match raw.header.type_ {
        types::SAMPLE => {
            let (Ok(event), Ok(sample)) = (rec.event(), rec.sample()) else { return };
            if let Some(n) = notes.samples.get_mut(event) {
                *n += 1;
            }
            if let Some(t) = sample.time() {
                let (a, b) = notes.times.unwrap_or((t, t));
                notes.times = Some((a.min(t), b.max(t)));
            }
            match CpuMode::from_misc(raw.header.misc) {
                CpuMode::Kernel => notes.kernel = true,
                CpuMode::User => {
                    if let (Some(pid), Some(ip)) = (sample.tid().map(|t| t.pid), sample.ip()) {
                        let hit = (pid, ip & !0xfff);
                        if notes.recent.fresh(hit) {
                            notes.hits.insert(hit);
                        }
                    }
                }
                _ => {}
            }
        }
        types::LOST => {
            notes.lost += perfring::record::Endian::NATIVE.u64_at(raw.bytes, 16).unwrap_or(0);
            notes.lost_records += 1;
        }
        types::MMAP | types::MMAP2 | types::FORK => match rec.decode() {
            Ok(Record::Mmap(m)) => {
                notes.maps.push(Mapped::Map(m.pid, m.addr, m.len, m.filename.to_string_lossy().into()))
            }
            Ok(Record::Mmap2(m)) => {
                notes.maps.push(Mapped::Map(m.pid, m.addr, m.len, m.filename.to_string_lossy().into()))
            }
            Ok(Record::Fork(t)) => notes.maps.push(Mapped::Fork(t.ppid, t.pid)),
            _ => {}
        },
        _ => {}
    }
}

/// perf's `perf_data__create_dir` for `path`: a previous recording there (file or directory)
/// kept as `path.old`, the directory made (0700).
pub fn create_dir(path: &str) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt;
    let p = Path::new(path);
    if p.exists() {
        let old = format!("{path}.old");
        let _ = std::fs::remove_dir_all(&old);
        let _ = std::fs::remove_file(&old);
        std::fs::rename(p, &old).map_err(|e| format!("keeping the previous recording as {old}: {e}"))?;
    }
    std::fs::DirBuilder::new().mode(0o700).create(p).map_err(|e| format!("creating the directory {path}: {e}"))?;
    Ok(())
}

/// The DIR_FORMAT feature perf writes for a directory (`write_dir_format`): its version, 1.
pub fn dir_format<W: Write>(data: &mut PerfData<W>) -> Result<(), Error> {
    let bit = perfring_data::features::DIR_FORMAT;
    data.writer().set_feature_bytes(bit, 1u64.to_ne_bytes().to_vec()).map_err(|e| e.to_string())?;
    Ok(())
}

/// The `data` file of a directory at `path`.
pub fn header_file(path: &str) -> Result<BufWriter<File>, Error> {
    Ok(BufWriter::with_capacity(OUTPUT_BUFFER, private_file(&Path::new(path).join("data"))?))
}

/// A new file of the directory, 0600 as perf's.
fn private_file(path: &Path) -> Result<File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(true).mode(0o600);
    Ok(o.open(path).map_err(|e| format!("creating {}: {e}", path.display()))?)
}
