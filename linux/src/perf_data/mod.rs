//! perf.data from a [`Session`] (feature `perf-data`): what `perf record` writes around the
//! records, done once — the events' attrs with every id, COMM and MMAP2 of what already runs
//! (from /proc), the tracing data of tracepoint events, and the feature sections `perf report
//! --header-only` lists (the machine's, EVENT_DESC, SAMPLE_TIME, BUILD_ID of every file a
//! sample hit, so `perf buildid-list` and `perf archive` work, and CLOCKID and CLOCK_DATA
//! where the events take their times from a clock of their own, `use_clockid`). File mode or pipe mode
//! (`perf record -o -`; there the features go out first as HEADER_FEATURE records and the
//! tracing data as a HEADER_TRACING_DATA record, as perf writes them).
//!
//! ```
//! # fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use perfring::record::{attr_flags as flag, sample_type as st};
//! use perfring_linux::perf_data::PerfData;
//! use perfring_linux::{software, EventAttr, Session};
//! let path = std::env::temp_dir().join(format!("perf-data-doc-{}.data", std::process::id()));
//! let out = PerfData::create_file(&path)?; // before the session: a bad path stops here
//! let attr = EventAttr::software(software::PAGE_FAULTS).sample_period(1).sample_type(st::IP | st::TID | st::TIME);
//! let mut session = Session::command(["true"]).event(attr.flag(flag::COMM | flag::MMAP | flag::MMAP2, true)).open()?;
//! let mut perf_data = PerfData::new(out, &session, &["page-faults".to_string()])?;
//! session.start()?;
//! while !session.wait(Some(std::time::Duration::from_millis(50)))? {
//!     perf_data.drain(&mut session)?;
//! }
//! perf_data.drain(&mut session)?;
//! perf_data.finish()?; // perf report -i PATH reads it
//! # std::fs::remove_file(&path)?;
//! # Ok(()) }
//! # // Refused here (not permitted, no such event): a visible skip, not a failure.
//! # fn main() { perfring_test_support::doc_example!(example()) }
//! ```

mod bpf;
mod build_id;
pub(crate) mod build_id_cache;
mod cgroups;
mod procfs;
pub(crate) mod synthetic;
mod system;
mod tracing;

use perfring::record::EventRecord;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use perfring::record::{types, CpuMode, Endian, Header, Record};
use perfring_data::features::{self as feature, EventDesc};
use perfring_data::{features::Feature, FileAttr, Writer};

pub use build_id::{
    build_id_of_elf, build_id_of_file, kernel_build_id, vdso_build_id, vdso_image, Dsos, KERNEL_DSO, VDSO_DSO,
};
pub use procfs::{all_pids, Synthesis, MISC_PROC_MAP_PARSE_TIMEOUT};
pub(crate) use system::system_features;
pub(crate) use tracing::tracing_data;
pub use tracing::{tracefs_root, tracepoint_name};

use crate::attr::event_type;
use crate::{LinuxError, Session, SessionRecord};
use build_id_cache::DsoKind;

/// The name perf gives an event (`cpu-clock`, `page-faults`, `sched:sched_switch`, …), or
/// `type:config` for one it has no name for.
pub fn event_name(attr: &perfring::record::Attr) -> String {
    const SOFTWARE: [&str; 12] = [
        "cpu-clock",
        "task-clock",
        "page-faults",
        "context-switches",
        "cpu-migrations",
        "minor-faults",
        "major-faults",
        "alignment-faults",
        "emulation-faults",
        "dummy",
        "bpf-output",
        "cgroup-switches",
    ];
    const HARDWARE: [&str; 10] = [
        "cycles",
        "instructions",
        "cache-references",
        "cache-misses",
        "branches",
        "branch-misses",
        "bus-cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "ref-cycles",
    ];
    let known = match attr.type_ {
        event_type::SOFTWARE => SOFTWARE.get(attr.config as usize).map(|s| s.to_string()),
        event_type::HARDWARE => HARDWARE.get(attr.config as usize).map(|s| s.to_string()),
        event_type::TRACEPOINT => tracepoint_name(attr.config),
        _ => None,
    };
    known.unwrap_or_else(|| format!("{}:{}", attr.type_, attr.config))
}

/// The events of `session` as perf.data attrs: each attr as the kernel took it, with every id
/// it was given (one per CPU and task it was opened on).
pub(crate) fn file_attrs(session: &Session) -> Vec<FileAttr> {
    let set = session.event_set();
    (0..set.events().len())
        .map(|i| {
            let mut ids: Vec<u64> = set.ids().filter(|e| e.event() == i).map(|e| e.id()).collect();
            ids.sort_unstable();
            FileAttr { attr: *set.events()[i].attr(), ids }
        })
        .collect()
}

/// A perf.data file (or pipe-mode stream) being written from a [`Session`]: see the
/// [module docs](self).
#[derive(Debug)]
pub struct PerfData<W: Write> {
    writer: Writer<W>,
    pipe: bool,
    /// `Writer::finish` (file mode, which needs `Seek`) or `Writer::finish_pipe`.
    end: fn(Writer<W>) -> Result<W, perfring_data::PerfDataError>,
    dsos: Dsos,
    times: Option<(u64, u64)>,
    samples: Vec<u64>,
    /// Records by type (the kernel's types are below 64; perf's own are not drained).
    records: [u64; 64],
    bytes: u64,
    /// Where each event's SAMPLE has its IP, TID and TIME (the fixed prefix of the body).
    fields: Vec<SampleFields>,
    /// When the header's `data.size` was last brought up to date (file mode).
    checkpointed: std::time::Instant,
    /// Where a SAMPLE has its id (IDENTIFIER, or ID at the one place every event has it).
    id_at: Option<usize>,
    /// The last SAMPLE id attributed, and its event.
    last_id: Option<(u64, usize)>,
    /// What [`synthesize`](PerfData::synthesize) writes besides COMM and MMAP2.
    synthesis: Synthesis,
    /// The processes whose maps were cut short by the synthesis's timeout.
    timed_out: Vec<i32>,
}

/// The output's buffer: records are copied into it as they are drained and written out a
/// buffer at a time (a write system call per 256 KiB, not per wakeup).
pub const OUTPUT_BUFFER: usize = 256 << 10;

/// How long a file-mode recording goes at most without its header's `data.size` brought up
/// to date: what a recording killed (SIGKILL) leaves perf to read is the data up to then.
/// (Each update seeks, which empties the output's buffer: done per drain, it cost a write
/// system call and two seeks per wakeup.)
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// A file samples hit: its path (or `[kernel.kallsyms]`, `[vdso]`), build id and kind.
type HitDso = (String, Vec<u8>, DsoKind);

/// perf 6.1's `HEADER_LAST_FEATURE`: in pipe mode, a HEADER_FEATURE record of this number
/// ends the features.
const LAST_FEATURE: u32 = 32;

/// The byte offsets, in a SAMPLE record, of the fields the recording notes (the first fields
/// of the body, each a u64, present by `sample_type`: IDENTIFIER, IP, TID (pid, tid), TIME).
#[derive(Debug, Clone, Copy, Default)]
struct SampleFields {
    ip: Option<usize>,
    tid: Option<usize>,
    time: Option<usize>,
}

impl SampleFields {
    fn of(sample_type: u64) -> SampleFields {
        use perfring::record::sample_type as st;
        let mut at = Header::SIZE;
        let mut next = |bit: u64| {
            (sample_type & bit != 0).then(|| {
                at += 8;
                at - 8
            })
        };
        next(st::IDENTIFIER);
        let ip = next(st::IP);
        let tid = next(st::TID);
        let time = next(st::TIME);
        SampleFields { ip, tid, time }
    }
}

/// Where a SAMPLE of `sample_type` has its id: IDENTIFIER first in the body, else ID after
/// IP, TID, TIME and ADDR; `None` without either.
fn sample_id_at(sample_type: u64) -> Option<usize> {
    use perfring::record::sample_type as st;
    if sample_type & st::IDENTIFIER != 0 {
        return Some(Header::SIZE);
    }
    if sample_type & st::ID == 0 {
        return None;
    }
    let before = [st::IP, st::TID, st::TIME, st::ADDR].iter().filter(|&&b| sample_type & b != 0).count();
    Some(Header::SIZE + 8 * before)
}

/// The u64 at `at` in `bytes`, if there.
#[inline]
fn u64_at(bytes: &[u8], at: Option<usize>) -> Option<u64> {
    let b = bytes.get(at?..at? + 8)?;
    Some(u64::from_ne_bytes(b.try_into().ok()?))
}

impl PerfData<BufWriter<File>> {
    /// Create (truncate) the output file, buffered: the step to take before opening a session,
    /// so that a path that cannot be written stops the recording before anything runs.
    pub fn create_file(path: impl AsRef<Path>) -> Result<BufWriter<File>, LinuxError> {
        let path = path.as_ref();
        File::create(path).map(|f| BufWriter::with_capacity(OUTPUT_BUFFER, f)).map_err(|error| LinuxError::File {
            what: "creating the output",
            path: path.into(),
            error,
        })
    }
}

/// The suffix perf record gives a file it dumps (`--switch-output`, `--timestamp-filename`:
/// `perf.data.2026112707184761`): the local time now as year, month, day, hour, minute,
/// second and hundredths (perf's `fetch_current_timestamp`); `None` where the C library
/// cannot give the local time (perf then fails the switch: "Failed to get current timestamp").
pub fn timestamp_suffix() -> Option<String> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?;
    let [y, mo, d, h, mi, s] = crate::sys::local_time(i64::try_from(now.as_secs()).ok()?)?;
    Some(format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}{:02}", now.subsec_millis() / 10))
}

/// CLOCKID and CLOCK_DATA, as perf record writes them where the events' times come from a
/// clock of their own (`use_clockid`, `-k`): the clock's resolution, and a reference reading
/// of it beside the time of day (microseconds, `gettimeofday`'s), taken now, so that `perf
/// script --tod`-style conversions have a point to start from. Nothing otherwise.
fn clock_features(attr: Option<&perfring::record::Attr>) -> Vec<(u32, Feature)> {
    let Some(a) = attr.filter(|a| a.flags & perfring::record::attr_flags::USE_CLOCKID != 0) else { return Vec::new() };
    let tod = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let Some((res_ns, clock_ns)) = crate::sys::clock_ns(a.clockid) else { return Vec::new() };
    let tod_ns = tod.as_secs() * 1_000_000_000 + u64::from(tod.subsec_micros()) * 1000;
    let mut out = Vec::new();
    if res_ns != 0 {
        out.push((feature::CLOCKID, Feature::ClockId(res_ns)));
    }
    out.push((
        feature::CLOCK_DATA,
        Feature::ClockData { version: 1, clockid: a.clockid as u32, tod_ns, clockid_ns: clock_ns },
    ));
    out
}

impl<W: Write + Seek> PerfData<W> {
    /// A file-mode perf.data at `out` for `session`'s events, called `names` (perf's names;
    /// [`event_name`] for those missing). The features are written by
    /// [`finish`](PerfData::finish).
    pub fn new(out: W, session: &Session, names: &[String]) -> Result<PerfData<W>, LinuxError> {
        let writer = Writer::new(out, Endian::NATIVE, file_attrs(session))?;
        PerfData::start(writer, false, Writer::finish, session, names)
    }
}

impl<W: Write> PerfData<W> {
    /// A pipe-mode stream (`perf record -o -`) at `out`: the attrs, the features and the
    /// tracing data go out now, the records as they are drained.
    pub fn pipe(out: W, session: &Session, names: &[String]) -> Result<PerfData<W>, LinuxError> {
        let writer = Writer::pipe(out, Endian::NATIVE, file_attrs(session))?;
        PerfData::start(writer, true, Writer::finish_pipe, session, names)
    }

    fn start(
        writer: Writer<W>,
        pipe: bool,
        end: fn(Writer<W>) -> Result<W, perfring_data::PerfDataError>,
        session: &Session,
        names: &[String],
    ) -> Result<PerfData<W>, LinuxError> {
        let mut d = PerfData {
            // (Read of the writer before it moves in.)
            samples: vec![0; writer.attrs().len()],
            fields: writer.attrs().iter().map(|a| SampleFields::of(a.attr.sample_type)).collect(),
            id_at: writer.attrs().first().and_then(|a| sample_id_at(a.attr.sample_type)),
            writer,
            pipe,
            end,
            dsos: Dsos::default(),
            times: None,
            records: [0; 64],
            bytes: 0,
            checkpointed: std::time::Instant::now(),
            last_id: None,
            synthesis: Synthesis::default(),
            timed_out: Vec::new(),
        };
        let cmdline: Vec<String> = std::env::args().collect();
        // Every feature in bit order, as perf writes them (pipe mode: one record each, now).
        let mut typed: Vec<(u32, Feature)> = system_features(Endian::NATIVE, &cmdline);
        let descs: Vec<EventDesc> = d
            .writer
            .attrs()
            .iter()
            .enumerate()
            .map(|(i, a)| EventDesc {
                attr: a.attr,
                name: names.get(i).cloned().unwrap_or_else(|| event_name(&a.attr)),
                ids: a.ids.clone(),
            })
            .collect();
        typed.push((feature::EVENT_DESC, Feature::EventDesc(descs)));
        typed.extend(clock_features(d.writer.attrs().first().map(|a| &a.attr)));
        if pipe {
            // perf's pipe mode sends SAMPLE_TIME at the start, zero (its file mode, at the end).
            typed.push((feature::SAMPLE_TIME, Feature::SampleTime { first: 0, last: 0 }));
        }
        let mut all: Vec<(u32, Vec<u8>)> =
            typed.into_iter().map(|(bit, v)| v.encode(Endian::NATIVE).map(|b| (bit, b))).collect::<Result<_, _>>()?;
        all.extend(system::raw_features(Endian::NATIVE));
        all.sort_by_key(|(bit, _)| *bit);
        for (bit, payload) in all {
            d.writer.set_feature_bytes(bit, payload)?;
        }
        if pipe {
            // The end of the features (perf's HEADER_LAST_FEATURE mark, an empty one).
            d.writer.set_feature_bytes(LAST_FEATURE, Vec::new())?;
        }
        // What perf record writes before the data, in its order (record__synthesize): the ids,
        // the kernel's map, the names (pipe mode), whom and where, the BPF programs.
        let placements: Vec<_> = session.placements().collect();
        for r in synthetic::id_index(&placements, session.cpus()) {
            d.writer.write_raw(&r, &[])?;
        }
        let kernel = d.writer.attrs().iter().any(|a| a.attr.flags & perfring::record::attr_flags::EXCLUDE_KERNEL == 0);
        if kernel {
            procfs::synthesize_kernel(&mut d.writer)?;
        }
        if pipe {
            for (i, name) in names.iter().enumerate() {
                if let Some(p) = placements.iter().find(|p| p.event == i) {
                    d.writer.write_raw(&synthetic::event_update_name(p.id, name), &[])?;
                }
            }
        }
        d.writer.write_raw(&synthetic::thread_map(&session.tasks()), &[])?;
        d.writer.write_raw(&synthetic::cpu_map(session.cpus()), &[])?;
        let bpf_events = d.writer.attrs().iter().any(|a| a.attr.flags & perfring::record::attr_flags::BPF_EVENT != 0);
        bpf::synthesize(&mut d.writer, bpf_events)?;
        let tracepoints: Vec<u64> =
            d.writer.attrs().iter().filter(|a| a.attr.type_ == event_type::TRACEPOINT).map(|a| a.attr.config).collect();
        if !tracepoints.is_empty() {
            d.writer.set_feature_bytes(feature::TRACING_DATA, tracing_data(&tracepoints)?)?;
        }
        // An output that cannot be written fails now, before the session starts anything.
        d.writer.flush()?;
        Ok(d)
    }

    /// What [`synthesize`](PerfData::synthesize) and
    /// [`synthesize_command`](PerfData::synthesize_command) write besides COMM and MMAP2, and
    /// how long a process's maps are read (perf record's `--namespaces`, `--proc-map-timeout`).
    pub fn set_synthesis(&mut self, synthesis: Synthesis) {
        self.synthesis = synthesis;
    }

    /// A CGROUP record for each cgroup that exists now (perf record's `--all-cgroups`, before
    /// it synthesizes the threads): the root and every directory below it in the hierarchy
    /// perf samples (a v1 `perf_event` mount, else the v2 mount), each with its id and path.
    /// Nothing where none is mounted.
    pub fn synthesize_cgroups(&mut self) -> Result<(), LinuxError> {
        cgroups::synthesize_cgroups(&mut self.writer)
    }

    /// The processes whose maps [`synthesize`](PerfData::synthesize) stopped reading at the
    /// [`Synthesis::proc_map_timeout`] (their last MMAP2 record marked
    /// [`MISC_PROC_MAP_PARSE_TIMEOUT`]), in the order it met them.
    pub fn map_timeouts(&self) -> &[i32] {
        &self.timed_out
    }

    /// COMM and MMAP2 records of process `pid`'s threads and executable mappings, from /proc
    /// (for what ran before the session: a process followed with `-p`, every process with
    /// `-a`), and what [`set_synthesis`](PerfData::set_synthesis) adds. A process that exits
    /// meanwhile is skipped.
    pub fn synthesize(&mut self, pid: i32) -> Result<(), LinuxError> {
        let dsos = &mut self.dsos;
        let mut mapped = |pid, start, len, path: &str| dsos.map(pid, start, len, path);
        if procfs::synthesize(&mut self.writer, pid, &self.synthesis, &mut mapped)? {
            self.timed_out.push(pid);
        }
        Ok(())
    }

    /// The COMM of a command held before `exec` (perf's "perf-exec" record; ours carries
    /// the forked recorder's name, which the command's own COMM replaces at `exec`), and its
    /// NAMESPACES with [`Synthesis::namespaces`].
    pub fn synthesize_command(&mut self, pid: i32) -> Result<(), LinuxError> {
        let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) else { return Ok(()) };
        self.synthesize_comm(pid, comm.trim_end())?;
        if self.synthesis.namespaces {
            procfs::synthesize_namespaces(&mut self.writer, pid as u32, pid as u32)?;
        }
        Ok(())
    }

    /// A COMM naming process `pid` (its main thread) `comm`, as perf synthesizes one: for a
    /// name known otherwise than from /proc (a command already reaped, named as the kernel
    /// names it at `exec`: the program file's base name, 15 bytes at most). A name with a NUL
    /// byte inside is not written.
    pub fn synthesize_comm(&mut self, pid: i32, comm: &str) -> Result<(), LinuxError> {
        let Some(attr) = self.writer.attrs().first().map(|a| a.attr) else { return Ok(()) };
        let Ok(comm) = std::ffi::CString::new(comm) else { return Ok(()) };
        let sid = perfring::record::SampleId {
            tid: Some(perfring::record::PidTid { pid: pid as u32, tid: pid as u32 }),
            ..Default::default()
        };
        let rec = Record::Comm(perfring::record::Comm {
            misc: 0,
            pid: pid as u32,
            tid: pid as u32,
            comm: &comm,
            sample_id: Some(sid.masked(attr.sample_type)),
        });
        Ok(self.writer.write_record(&rec, 0)?)
    }

    /// FINISHED_INIT: the records written so far describe what existed before the
    /// recording (perf writes it after its synthesized records).
    pub fn finish_init(&mut self) -> Result<(), LinuxError> {
        Ok(self.writer.write_raw(&synthetic::finished_init(), &[])?)
    }

    /// [`synthesize`](PerfData::synthesize) every process.
    pub fn synthesize_all(&mut self) -> Result<(), LinuxError> {
        all_pids().into_iter().try_for_each(|pid| self.synthesize(pid))
    }

    /// Write every record now in the session's rings, then a FINISHED_ROUND; returns how many.
    /// The records are written as the rings hold them; only what the file's features need is
    /// read of them (each SAMPLE's event, time, pid and IP; MMAP, MMAP2 and FORK records).
    /// File mode: the header's `data.size` is brought up to date at most every 250 ms (and by
    /// [`finish`](PerfData::finish)), so a recording killed meanwhile leaves a file perf reads.
    pub fn drain(&mut self, session: &mut Session) -> Result<usize, LinuxError> {
        self.drain_with(session, |_| {})
    }

    /// [`drain`](PerfData::drain), handing each record to `f` as well.
    pub fn drain_with(
        &mut self,
        session: &mut Session,
        mut f: impl FnMut(&SessionRecord<'_>),
    ) -> Result<usize, LinuxError> {
        let mut failed = None;
        let single = self.samples.len() == 1;
        let n = session.drain(|r| {
            if failed.is_none() {
                self.note(r, single);
                if let Err(e) = self.writer.write_raw(r.raw().bytes, &[]) {
                    failed = Some(e);
                }
                f(r);
            }
        })?;
        if let Some(e) = failed {
            return Err(e.into());
        }
        if n > 0 {
            self.writer.finished_round()?;
            if !self.pipe && self.checkpointed.elapsed() >= CHECKPOINT_EVERY {
                self.writer.checkpoint()?;
                self.checkpointed = std::time::Instant::now();
            }
        }
        Ok(n)
    }

    /// The event of a SAMPLE of a session with several events: by its id at the place every
    /// event has it, the last id's event remembered (runs of samples share an event).
    #[inline]
    fn event_of(&mut self, r: &SessionRecord<'_>) -> usize {
        let id = u64_at(r.raw().bytes, self.id_at);
        if let (Some(id), Some((last, event))) = (id, self.last_id) {
            if id == last {
                return event;
            }
        }
        let event = r.event().unwrap_or(usize::MAX);
        if let Some(id) = id {
            self.last_id = Some((id, event));
        }
        event
    }

    /// What a record tells the features: sample times, the files samples hit.
    #[inline]
    fn note(&mut self, r: &SessionRecord<'_>, single: bool) {
        let type_ = r.raw().header.type_;
        if let Some(n) = self.records.get_mut(type_ as usize) {
            *n += 1;
        }
        self.bytes += r.raw().bytes.len() as u64;
        match type_ {
            types::SAMPLE => {
                let event = if single { 0 } else { self.event_of(r) };
                let Some(fields) = self.fields.get(event) else { return };
                self.samples[event] += 1;
                if let Some(t) = u64_at(r.raw().bytes, fields.time) {
                    let (a, b) = self.times.unwrap_or((t, t));
                    self.times = Some((a.min(t), b.max(t)));
                }
                match CpuMode::from_misc(r.raw().header.misc) {
                    CpuMode::Kernel => self.dsos.hit_kernel(),
                    CpuMode::User => {
                        if let (Some(pid_tid), Some(ip)) =
                            (u64_at(r.raw().bytes, fields.tid), u64_at(r.raw().bytes, fields.ip))
                        {
                            // `{u32 pid, u32 tid}` in the kernel's byte order.
                            let pid = u32::from_ne_bytes(pid_tid.to_ne_bytes()[..4].try_into().unwrap_or_default());
                            self.dsos.hit(pid, ip);
                        }
                    }
                    _ => {}
                }
            }
            types::MMAP | types::MMAP2 | types::FORK => match r.decode() {
                Ok(Record::Mmap(m)) => self.dsos.map(m.pid, m.addr, m.len, &m.filename.to_string_lossy()),
                Ok(Record::Mmap2(m)) => self.dsos.map(m.pid, m.addr, m.len, &m.filename.to_string_lossy()),
                Ok(Record::Fork(t)) => self.dsos.fork(t.ppid, t.pid),
                _ => {}
            },
            _ => {}
        }
    }

    /// What perf record writes at the end (`record__read_lost_samples`): for each event on
    /// each CPU and task whose `PERF_FORMAT_LOST` count is not 0, a LOST_SAMPLES record of
    /// that count, its trailer carrying the event's id, so that perf report says "Total Lost
    /// Samples" and the share lost. Events opened without `PERF_FORMAT_LOST` in their
    /// `read_format` are passed over. Returns the samples lost, by event (the counts the
    /// kernel kept: every record an event could not write to its ring, since it was opened).
    pub fn write_lost_samples(&mut self, session: &Session) -> Result<Vec<u64>, LinuxError> {
        use perfring::record::{read_format as rf, LostSamples, ReadValues, SampleId};
        let set = session.event_set();
        let mut lost = vec![0u64; self.samples.len()];
        for event in session.events() {
            if event.attr().read_format & rf::LOST == 0 {
                continue;
            }
            let Some(index) = set.event_of_id(event.id()) else { continue };
            let counts = event.read()?;
            let n = match counts.values() {
                ReadValues::Single(v) => v.lost.unwrap_or(0),
                ReadValues::Group(_) => 0,
            };
            if n == 0 {
                continue;
            }
            lost[index] += n;
            let Some(attr) = self.writer.attrs().get(index).map(|a| a.attr) else { continue };
            let sample_id = SampleId { id: Some(event.id()), identifier: Some(event.id()), ..SampleId::default() };
            let record = Record::LostSamples(LostSamples {
                misc: 0,
                lost: n,
                sample_id: Some(sample_id.masked(attr.sample_type)),
            });
            self.writer.write_record(&record, index)?;
        }
        Ok(lost)
    }

    /// Samples written so far, by event.
    pub fn samples(&self) -> &[u64] {
        &self.samples
    }

    /// Records written so far, by `PERF_RECORD_*` type (those drained from the rings).
    pub fn records(&self) -> BTreeMap<u32, u64> {
        (0u32..).zip(self.records).filter(|&(_, n)| n > 0).collect()
    }

    /// Bytes of records written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The files samples hit so far.
    pub fn dsos(&self) -> &Dsos {
        &self.dsos
    }

    /// The files samples hit, for records this writer does not drain itself (perf record
    /// --threads: reader threads write the rings to files of their own, and tell what they saw
    /// here before [`finish`](PerfData::finish)).
    pub fn dsos_mut(&mut self) -> &mut Dsos {
        &mut self.dsos
    }

    /// Widen the SAMPLE_TIME feature to `first ..= last`, sample times of records this writer
    /// did not drain (see [`dsos_mut`](PerfData::dsos_mut)).
    pub fn note_sample_times(&mut self, first: u64, last: u64) {
        let (a, b) = self.times.unwrap_or((first, last));
        self.times = Some((a.min(first), b.max(last)));
    }

    /// The writer, for records of the caller's own.
    pub fn writer(&mut self) -> &mut Writer<W> {
        &mut self.writer
    }

    /// The files samples hit that have a build id: (path, build id, kind), the vDSO's image
    /// read once if it is among them.
    fn hit_build_ids(&self) -> (Vec<HitDso>, Option<Vec<u8>>) {
        let mut vdso = None;
        let ids = self
            .dsos
            .hits()
            .filter_map(|(path, kernel)| {
                let (id, kind) = if kernel {
                    (kernel_build_id()?, DsoKind::Kernel)
                } else if path == VDSO_DSO {
                    let image = vdso.get_or_insert_with(vdso_image).as_ref()?;
                    (build_id_of_elf(std::io::Cursor::new(image))?, DsoKind::Vdso)
                } else {
                    (build_id_of_file(Path::new(path))?, DsoKind::File)
                };
                Some((path.to_string(), id, kind))
            })
            .collect();
        (ids, vdso.flatten())
    }

    /// Write the features known only at the end (SAMPLE_TIME and BUILD_ID, file mode) and
    /// finish the file or stream; returns the output. The build-id cache is filled too
    /// ([`finish_with`](PerfData::finish_with) chooses).
    pub fn finish(self) -> Result<W, LinuxError> {
        Ok(self.finish_with(true, true)?.0)
    }

    /// [`finish`](PerfData::finish), choosing what is done with build ids: `table` writes
    /// the BUILD_ID feature (`perf record -B` does not), `cache` also copies the files
    /// samples hit into the build-id cache (perf's `~/.debug`: `<path>/<build id>/elf` and the
    /// `.build-id/` links; `perf record -N` does not). A file that cannot be cached is passed
    /// over (perf warns at most). Returns the output and the bytes of the data section.
    pub fn finish_with(mut self, table: bool, cache: bool) -> Result<(W, u64), LinuxError> {
        if self.pipe {
            let size = self.writer.data_size();
            let out = (self.end)(self.writer)?;
            return Ok((out, size));
        }
        if let Some((first, last)) = self.times {
            self.writer.set_feature(feature::SAMPLE_TIME, &Feature::SampleTime { first, last })?;
        }
        if table {
            let (ids, vdso) = self.hit_build_ids();
            if cache {
                if let Some(dir) = build_id_cache::cache_dir() {
                    for (path, id, kind) in &ids {
                        let _ = build_id_cache::add(&dir, id, path, *kind, vdso.as_deref());
                    }
                }
            }
            let records: Vec<Vec<u8>> =
                ids.iter().map(|(path, id, kind)| build_id_record(id, path, *kind == DsoKind::Kernel)).collect();
            if !records.is_empty() {
                self.writer.set_feature(feature::BUILD_ID, &Feature::BuildIds(records))?;
            }
        }
        // A last round: what a compressing writer still holds goes out, and the data
        // section's size is final.
        self.writer.finished_round()?;
        let size = self.writer.data_size();
        Ok(((self.end)(self.writer)?, size))
    }
}

/// One build-id entry as perf's `write_buildid` writes it: `{header (type 0, misc: the CPU
/// mode | PERF_RECORD_MISC_BUILD_ID_SIZE, size); i32 pid (-1: the host); u8 data[20]; u8
/// size; u8 pad[3]; filename NUL-padded to 64}`.
fn build_id_record(id: &[u8], path: &str, kernel: bool) -> Vec<u8> {
    let name_len = (path.len() + 1).next_multiple_of(64);
    let size = 36 + name_len;
    let misc: u16 = if kernel { 1 } else { 2 } | 1 << 15;
    let mut r = Vec::with_capacity(size);
    r.extend_from_slice(&0u32.to_ne_bytes());
    r.extend_from_slice(&misc.to_ne_bytes());
    r.extend_from_slice(&(size as u16).to_ne_bytes());
    r.extend_from_slice(&(-1i32).to_ne_bytes());
    let mut data = [0u8; 24];
    let n = id.len().min(20);
    data[..n].copy_from_slice(&id[..n]);
    data[20] = n as u8;
    r.extend_from_slice(&data);
    r.extend_from_slice(path.as_bytes());
    r.resize(size, 0);
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_timestamp_suffix_is_perfs_sixteen_digits_of_local_time() {
        let t = super::timestamp_suffix().expect("the local time");
        assert_eq!(t.len(), 16, "{t}");
        assert!(t.bytes().all(|b| b.is_ascii_digit()), "{t}");
        let (year, month, day): (u32, u32, u32) =
            (t[..4].parse().unwrap(), t[4..6].parse().unwrap(), t[6..8].parse().unwrap());
        assert!(year >= 2024 && (1..=12).contains(&month) && (1..=31).contains(&day), "{t}");
    }
}
